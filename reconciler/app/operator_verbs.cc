#include "reconciler/app/operator_verbs.h"

#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include "core/profile_edit.h"
#include "fmt/format.h"
#include "gitsource/subprocess.h"
#include "reconciler/runtime/cli_error.h"

namespace tr::reconciler {
namespace {

// Runs git in `dir` with our stdout and stderr; OK when it exits 0.
absl::Status Git(const std::filesystem::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir.string()});
  absl::StatusOr<gitsource::Subprocess> git =
      gitsource::Subprocess::Spawn({.argv = args, .env = std::nullopt, .stdin_fd = -1,
                                    .stdout_fd = 1, .stderr_fd = 2, .working_dir = {}});
  if (!git.ok()) return git.status();
  const int status = git->Wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(fmt::format("{} failed", fmt::join(args, " ")));
}

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("no profile {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status Run(const OperatorVerbOptions& o, std::ostream& out) {
  if (o.reason.empty()) return absl::InvalidArgumentError("--reason is empty: say why");
  const std::string file = fmt::format("clusters/{}.yaml", o.cluster);
  absl::StatusOr<std::string> before = ReadFile(o.dir / file);
  if (!before.ok()) return before.status();
  const bool paused = o.verb == "pause";
  absl::StatusOr<std::string> after = o.verb == "retry"
                                          ? core::SetProfileRetry(*before, o.retry_token)
                                          : core::SetProfilePaused(*before, paused);
  if (!after.ok()) return after.status();
  if (*after == *before) {
    out << fmt::format("{} already {}; nothing committed\n", o.cluster,
                       o.verb == "retry" ? "asks for this retry"
                       : paused          ? "is paused"
                                         : "is not paused");
    return absl::OkStatus();
  }
  std::ofstream(o.dir / file, std::ios::binary | std::ios::trunc) << *after;
  const std::string subject = fmt::format("{} {}: {}", o.verb, o.cluster, o.reason);
  if (absl::Status s = Git(o.dir, {"commit", "-q", "-m", subject, "-m",
                                   fmt::format("Talos-Reconciler-Verb: {}", o.verb), "--", file});
      !s.ok()) {
    return s;
  }
  out << fmt::format("committed \"{}\"\n", subject);
  if (o.push) return Git(o.dir, {"push", "-q"});
  return absl::OkStatus();
}

}  // namespace

int RunOperatorVerb(const OperatorVerbOptions& options, std::ostream& out, std::ostream& err) {
  if (absl::Status s = Run(options, out); !s.ok()) {
    err << ErrorLine(std::string(s.message()));
    return 1;
  }
  return 0;
}

}  // namespace tr::reconciler
