#include "reconciler/runtime/version.h"

#include <gnu/libc-version.h>
#include <openssl/crypto.h>
#include <zlib.h>

#include "absl/strings/str_split.h"
#include "core/api_version.h"
#include "fmt/format.h"

namespace tr::reconciler {
namespace {

// Written once by main() before any thread starts, read afterwards.
BuildStamp& Stamp() {
  static BuildStamp stamp;
  return stamp;
}

std::string ShortCommit(std::string_view commit) {
  const size_t dirty = commit.find("-dirty");
  if (commit.size() < 12 || commit == "unknown") return std::string(commit);
  std::string text(commit.substr(0, 12));
  if (dirty != std::string_view::npos) text += "-dirty";
  return text;
}

}  // namespace

std::string_view ReconcilerVersion() { return TR_VERSION; }

void SetBuildStamp(BuildStamp stamp) { Stamp() = stamp; }
BuildStamp GetBuildStamp() { return Stamp(); }

std::string CompilerVersion() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::vector<std::pair<std::string, std::string>> LinkedLibraryVersions() {
  std::vector<std::pair<std::string, std::string>> libraries;
  // "name=version,..." from reconciler/CMakeLists.txt.
  const std::vector<std::string> entries = absl::StrSplit(TR_LINKED_LIBRARIES, ',');
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq + 1 == entry.size()) continue;
    libraries.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  libraries.emplace_back("openssl", OpenSSL_version(OPENSSL_VERSION_STRING));
  libraries.emplace_back("zlib", zlibVersion());
  libraries.emplace_back("glibc", gnu_get_libc_version());
  return libraries;
}

std::string VersionLine() {
  const BuildStamp stamp = GetBuildStamp();
  return fmt::format("{} (commit {}, built {})", ReconcilerVersion(), ShortCommit(stamp.commit),
                     stamp.date);
}

std::string VersionText() {
  const BuildStamp stamp = GetBuildStamp();
  std::string text = fmt::format("talos-reconciler {}\ncommit: {}\nbuilt: {}\ncompiler: {}\n",
                                 ReconcilerVersion(), stamp.commit, stamp.date, CompilerVersion());
  std::string libraries;
  for (const auto& [name, version] : LinkedLibraryVersions()) {
    libraries += fmt::format("{}{} {}", libraries.empty() ? "" : ", ", name, version);
  }
  return text + "libraries: " + libraries + "\n";
}

nlohmann::json VersionJson() {
  const BuildStamp stamp = GetBuildStamp();
  nlohmann::json libraries = nlohmann::json::object();
  for (const auto& [name, version] : LinkedLibraryVersions()) libraries[name] = version;
  return nlohmann::json{{"apiVersion", std::string(core::kApiVersion)},
                        {"kind", "Version"},
                        {"version", ReconcilerVersion()},
                        {"commit", stamp.commit},
                        {"buildDate", stamp.date},
                        {"compiler", CompilerVersion()},
                        {"libraries", libraries}};
}

}  // namespace tr::reconciler
