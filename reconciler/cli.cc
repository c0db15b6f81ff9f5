#include "reconciler/cli.h"

#include "CLI/CLI.hpp"

namespace tr::reconciler {

int RunCli(int argc, char** argv) {
  CLI::App app{"talos-reconciler: keeps Talos clusters at the versions written in Git"};
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace tr::reconciler
