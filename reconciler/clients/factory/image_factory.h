// The Image Factory's HTTP API, as the reconciler uses it (docs/talos-api.md, "Image Factory"):
//  - `POST /schematics` with a schematic's YAML answers `{"id": "<64 hex>"}`: the ID an
//    installer reference names (`<factory>/<platform>-installer/<id>:v<version>`);
//  - `GET /versions` answers the Talos releases it builds, `["v1.12.0", …]`;
//  - `GET /versions?broken=true` answers the releases its operator marked broken (hidden from
//    `/versions`; an installer of one is NotFound "version … is not available"), same shape
//    (image-factory `internal/frontend/http/meta.go`, v1.3.3 on). A factory before that ignores
//    the query and answers `/versions`: a release in both lists is not broken (FactoryReleaseSource);
//  - `GET /version/<v>/extensions/official` answers the official extensions of a release,
//    `[{"name": "siderolabs/iscsi-tools", …}, …]`.
//
// Every request has the options' timeout (connect, read, write) and reads at most
// `max_answer_bytes` of the answer: a factory's answer is untrusted input. A factory that
// answers nothing, or 5xx, is Unavailable or DeadlineExceeded, with the URL in the message, so
// that a plan blocked on it says where to look.
//
// Thread-safety: the functions are reentrant.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/version.h"
#include "reconciler/clients/releases/release_source.h"

namespace tr::reconciler::factory {

struct ImageFactoryOptions {
  std::string origin;             // "https://factory.example.com" or "http://127.0.0.1:8080"
  std::filesystem::path ca_file;  // PEM bundle trusted instead of the system's; empty: system
  std::chrono::milliseconds timeout{10'000};
  size_t max_answer_bytes = size_t{4} << 20;
};

// `options`, asking the factory at `origin` instead.
inline ImageFactoryOptions AskingAt(ImageFactoryOptions options, std::string_view origin) {
  options.origin = std::string(origin);
  return options;
}

// The ID the factory gives the schematic `yaml`.
absl::StatusOr<std::string> CreateSchematic(const ImageFactoryOptions& options,
                                            std::string_view yaml);
// The Talos releases the factory builds: exact vX.Y.Z only, sorted, oldest first.
absl::StatusOr<std::vector<core::Version>> FactoryVersions(const ImageFactoryOptions& options);
// The Talos releases the factory lists as broken, as FactoryVersions reads them.
absl::StatusOr<std::vector<core::Version>> FactoryBrokenVersions(
    const ImageFactoryOptions& options);

// The release source of a factory (reconciler/clients/releases/release_source.h): its
// FactoryVersions, and as broken those of FactoryBrokenVersions that FactoryVersions does not
// list (a factory that ignores `?broken=true` answers its release list).
class FactoryReleaseSource final : public releases::ReleaseSource {
 public:
  explicit FactoryReleaseSource(ImageFactoryOptions options) : options_(std::move(options)) {}
  absl::StatusOr<releases::ReleaseList> List(std::stop_token stop) override;

 private:
  const ImageFactoryOptions options_;
};
// The names of the official extensions the factory has for `version` (NotFound: it has no
// such release).
absl::StatusOr<std::vector<std::string>> OfficialExtensions(const ImageFactoryOptions& options,
                                                            const core::Version& version);

// The parts that read an answer's body, for the tests. Internal naming what is wrong.
absl::StatusOr<std::string> SchematicIdOfAnswer(std::string_view body);
absl::StatusOr<std::vector<core::Version>> VersionsOfAnswer(std::string_view body);
absl::StatusOr<std::vector<std::string>> ExtensionNamesOfAnswer(std::string_view body);

}  // namespace tr::reconciler::factory
