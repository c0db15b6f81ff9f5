// A real registry for tests: Debian's docker-registry serving 127.0.0.1:<port> from a temporary
// directory (its service stays off), optionally with an `auth:` block, and a push of a tiny OCI
// image through its HTTP API.
//
// Thread-compatible.
#pragma once

#include <openssl/sha.h>

#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gitsource/subprocess.h"
#include "httplib.h"
#include "tests/support/loopback_http.h"
#include "tests/support/process.h"

namespace tr::reconciler::registry {

inline std::string Sha256Digest(const std::string& data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  std::string hex = "sha256:";
  for (unsigned char c : md) hex += fmt::format("{:02x}", c);
  return hex;
}

// docker-registry serving 127.0.0.1:<port> from a temporary directory, for the whole suite;
// `auth` is an `auth:` block of its configuration (flow style), empty for none.
class RealRegistry {
 public:
  explicit RealRegistry(std::string auth = "") : auth_(std::move(auth)) {
    for (int attempt = 0; attempt < 5 && !process_; ++attempt) Start();
  }
  bool running() const { return process_.has_value(); }
  std::string origin() const { return fmt::format("http://127.0.0.1:{}", port_); }
  void Stop() { process_.reset(); }

  // Pushes a one-blob OCI image to `repository` under each tag (with `token` as the bearer
  // when not empty); false when the registry refused.
  bool Push(const std::string& repository, const std::vector<std::string>& tags,
            const std::string& token = "") {
    httplib::Client client("127.0.0.1", port_);
    if (!token.empty()) client.set_bearer_token_auth(token);
    const std::string config = "{}";
    const std::string digest = Sha256Digest(config);
    auto started = client.Post(fmt::format("/v2/{}/blobs/uploads/", repository), "", "");
    if (!started || started->status != 202) return false;
    std::string location = started->get_header_value("Location");
    if (location.starts_with("http")) location = location.substr(location.find('/', 8));
    location += (location.find('?') == std::string::npos ? "?" : "&") + ("digest=" + digest);
    auto blob = client.Put(location, config, "application/octet-stream");
    if (!blob || blob->status != 201) return false;
    const std::string manifest = fmt::format(
        R"({{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
        R"("config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{}",)"
        R"("size":{}}},"layers":[]}})",
        digest, config.size());
    for (const std::string& tag : tags) {
      auto put = client.Put(fmt::format("/v2/{}/manifests/{}", repository, tag), manifest,
                            "application/vnd.oci.image.manifest.v1+json");
      if (!put || put->status != 201) return false;
    }
    return true;
  }

 private:
  void Start() {
    port_ = test_support::FreePort();
    gitsource::testing::WriteFile(dir_ / "config.yml",
                                  fmt::format("version: 0.1\nlog: {{level: error}}\n"
                                              "storage: {{filesystem: {{rootdirectory: {}}}}}\n"
                                              "http: {{addr: 127.0.0.1:{}, secret: test-only}}\n{}",
                                              (dir_ / "data").string(), port_,
                                              auth_.empty() ? "" : "auth: " + auth_ + "\n"));
    // "/" answers 200 with or without auth (the registry's liveness route).
    process_ = test_support::StartServerProcess(
        {"docker-registry", "serve", (dir_ / "config.yml").string()}, port_, "/",
        std::chrono::seconds(30));
  }

  const std::string auth_;
  gitsource::testing::TempDir dir_;
  int port_ = 0;
  std::optional<gitsource::Subprocess> process_;
};

}  // namespace tr::reconciler::registry
