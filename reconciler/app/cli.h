// The `talos-reconciler` command line: one binary with subcommands
// (run | validate | plan | status | upgrade-k8s). main() only calls RunCli.
#pragma once

namespace tr::reconciler {

// Parses argv, runs the chosen subcommand and returns the process exit code.
int RunCli(int argc, char** argv);

}  // namespace tr::reconciler
