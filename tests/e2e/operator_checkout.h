// The operator's side of an end-to-end test: the checkout of the profile repository the fixture
// pushes from, and `talos-reconciler pause|resume|retry` run in it as a person would.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/e2e_fixture.h"
#include "tests/support/process.h"

namespace tr::e2e {

// The checkout of the profile repository the fixture pushes from, tracking origin/main, and
// the verbs run in it as a person would.
class OperatorCheckout {
 public:
  explicit OperatorCheckout(E2eWorld& world)
      : dir_(world.repo().bare().parent_path() / "fleet-work") {
    Git({"branch", "--quiet", "--set-upstream-to=origin/main", "main"});
  }
  const std::filesystem::path& dir() const { return dir_; }

  std::string Git(std::vector<std::string> args) const {
    args.insert(args.begin(), {"git", "-C", dir_.string()});
    const auto r = gitsource::testing::RunCommand(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.out;
  }
  // Whoever runs the verbs, as Git knows them (the test environment sets an identity).
  std::string Who() const {
    const std::string ident = Git({"var", "GIT_AUTHOR_IDENT"});
    return ident.substr(0, ident.find('>') + 1);
  }
  std::string Head() const { return Git({"rev-parse", "HEAD"}).substr(0, 40); }
  void Verb(const std::string& verb, const std::string& cluster, const std::string& reason) const {
    const auto r = gitsource::testing::RunCommand(
        {std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler", verb, cluster, "--reason",
         reason, "--dir", dir_.string(), "--push"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace tr::e2e
