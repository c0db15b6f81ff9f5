// demo-helper: what scripts/demo needs beside talos-reconciler and talos-sim, built from the
// demo's packages alone.
//   demo-helper forge --dir DIR --repository OWNER/NAME --token-file F --notify-secret-file F
//       a stand-in GitHub and notification receiver on loopback (demo_forge.h)
//   demo-helper webhook --url URL --secret-file F --event EVENT PAYLOAD_FILE
//       sends one signed GitHub webhook delivery, prints the HTTP status
//   demo-helper fleet STATUS_FILE...      one progress line per cluster (fleet_view.h)
//   demo-helper recap BEFORE AFTER        what changed between two status files of a cluster
#include <fstream>
#include <iostream>
#include <sstream>

#include "CLI/CLI.hpp"
#include "tests/demo/demo_forge.h"
#include "tests/demo/fleet_view.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A secret file's first line.
std::string ReadSecret(const std::string& path) {
  std::string line;
  std::ifstream in(path);
  std::getline(in, line);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"demo-helper: the forge, webhooks and fleet view of scripts/demo"};
  app.require_subcommand(1);
  tr::demo::DemoForgeOptions forge;
  std::string dir, token_file, notify_secret_file, url, secret_file, event, payload, before, after;
  std::vector<std::string> files;
  CLI::App* serve = app.add_subcommand("forge", "Serve the stand-in GitHub and receiver");
  serve->add_option("--dir", dir, "Where to write what it receives")->required();
  serve->add_option("--repository", forge.repository, "owner/name")->required();
  serve->add_option("--token-file", token_file, "The forge token")->required();
  serve->add_option("--notify-secret-file", notify_secret_file, "The receiver's key")->required();
  CLI::App* webhook = app.add_subcommand("webhook", "Send one signed GitHub webhook");
  webhook->add_option("--url", url, "http://host:port/hooks/github")->required();
  webhook->add_option("--secret-file", secret_file, "The webhook secret")->required();
  webhook->add_option("--event", event, "X-GitHub-Event")->required();
  webhook->add_option("payload", payload, "JSON file")->required();
  CLI::App* fleet = app.add_subcommand("fleet", "One line per status file");
  fleet->add_option("files", files, "status/<cluster>.yaml files")->required();
  CLI::App* recap = app.add_subcommand("recap", "What changed between two status files");
  recap->add_option("before", before)->required();
  recap->add_option("after", after)->required();
  CLI11_PARSE(app, argc, argv);

  if (serve->parsed()) {
    forge.dir = dir;
    forge.token = ReadSecret(token_file);
    forge.notify_secret = ReadSecret(notify_secret_file);
    return tr::demo::RunDemoForge(forge);
  }
  if (webhook->parsed()) {
    return tr::demo::SendGithubWebhook(url, ReadSecret(secret_file), event, ReadFile(payload));
  }
  if (fleet->parsed()) {
    for (const std::string& file : files) std::cout << tr::demo::FleetLine(ReadFile(file)) << "\n";
    return 0;
  }
  std::cout << tr::demo::RecapLine(ReadFile(before), ReadFile(after)) << "\n";
  return 0;
}
