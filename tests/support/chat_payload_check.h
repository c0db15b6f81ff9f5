// Runs tests/forge/check_chat_payload.mjs (the chat tools' own packages, installed by
// tests/forge/setup) on notification bodies of one chat format: teams, mattermost or
// googlechat. For tests/forge and tests/e2e.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace tr::test_support {

struct PayloadCheck {
  bool passed = false;
  std::string output;  // the checker's reasons when not
};

// Writes `bodies` into `dir` and has the checker read them, in one run (TypeScript takes
// seconds to start).
inline PayloadCheck CheckChatPayloads(const std::string& format,
                                      const std::vector<std::string>& bodies,
                                      const std::filesystem::path& dir) {
  const std::string source = TR_SOURCE_DIR;
  std::string command = "node '" + source + "/tests/forge/check_chat_payload.mjs' '" + source +
                        "/.cache/forge-npm/node_modules' " + format;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::filesystem::path file = dir / (format + "-body-" + std::to_string(i) + ".json");
    std::ofstream(file, std::ios::binary) << bodies[i];
    command += " '" + file.string() + "'";
  }
  command += " 2>&1";
  PayloadCheck check;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return {false, "cannot run node"};
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) {
    check.output.append(buffer, n);
  }
  check.passed = ::pclose(pipe.release()) == 0;
  return check;
}

}  // namespace tr::test_support
