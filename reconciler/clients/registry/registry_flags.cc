#include "reconciler/clients/registry/registry_flags.h"

#include "reconciler/runtime/flags.h"

namespace tr::reconciler::registry {

using flags::Flag;
using flags::Invalid;

void InstallerRegistryFlags::AddFlags(CLI::App& cmd) {
  Flag(cmd, "installer-registry", url,
       "http(s)://host[:port]/<name> of the installer repository whose release tags are "
       "listed (OCI distribution API) into the release catalog (default: none)");
  Flag(cmd, "installer-registry-credentials-file", credentials_file,
       "File holding one line username:password for the registry");
  Flag(cmd, "installer-registry-ca-file", ca_file,
       "PEM bundle trusted for the registry instead of the system's");
  flags::Switch(cmd, "installer-registry-allow-insecure-http", allow_insecure_http,
                "Allow credentials to an http:// --installer-registry (tests only)");
  flags::MillisFlag(cmd, "installer-registry-timeout", timeout,
                    "Deadline of one registry request (default 10s)");
  flags::DurationFlag(cmd, "installer-registry-ttl", ttl, "How often the tags are listed again");
}

absl::StatusOr<std::optional<InstallerRegistryOptions>> InstallerRegistryFlags::Finish() const {
  if (url.empty()) return std::nullopt;
  auto options = ParseInstallerRegistry(url, credentials_file, ca_file);
  if (!options.ok()) return Invalid("installer-registry", std::string(options.status().message()));
  if (!options->username.empty() && options->origin.starts_with("http://") &&
      !allow_insecure_http) {
    return Invalid("installer-registry-credentials-file",
                   "refusing to send credentials over plain http:// (use https://, or "
                   "--installer-registry-allow-insecure-http)");
  }
  using std::chrono::milliseconds, std::chrono::minutes, std::chrono::hours, std::chrono::seconds;
  if (timeout < milliseconds(100) || timeout > minutes(5)) {
    return Invalid("installer-registry-timeout", "100ms to 5m");
  }
  if (ttl < seconds(1) || ttl > hours(24 * 7))
    return Invalid("installer-registry-ttl", "1s to 168h");
  options->timeout = timeout;
  options->ttl = ttl;
  return std::optional<InstallerRegistryOptions>(*std::move(options));
}

}  // namespace tr::reconciler::registry
