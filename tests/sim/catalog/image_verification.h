// Image verification as a Talos node applies it to its pulls: the `ImageVerificationConfig`
// document of its machine configuration (Talos 1.13+), whose first rule matching an image's
// repository decides. Only `deny` and `skip` rules are modelled (signature verifiers are not).
//
// Facts (siderolabs/talos v1.14.0-rc.1 and v1.13.9):
//  - pkg/machinery/config/types/security/image_verification.go: the document `rules` list, each
//    `image` (a glob), `skip`, `deny`, `keyless`, `publicKey`.
//  - internal/app/machined/pkg/controllers/security/image_verification_config.go: rule N becomes
//    the ImageVerificationRule resource with id fmt "%04d" of its index.
//  - pkg/machinery/resources/security/image_verification_rule.go: the first rule (by id) whose
//    pattern matches the repository (registry/path, no tag or digest) with
//    github.com/ryanuber/go-glob (`*` matches any run of characters, '/' included).
//  - internal/pkg/containers/image/verify/verify.go: a deny rule is PermissionDenied
//    "verification denied by matched rule (<id>)"; no rule or skip allows the pull.
//  - internal/pkg/containers/image/pull.go (image.go in 1.13): a pull keeps only that text, as a
//    plain error, so ImageService/Pull and ImagePull answer Unknown with it and the legacy
//    Upgrade "error validating installer image ...: " + it; an image already pulled is not
//    verified again. A pull inside siderolabs/go-retry's loop (1.13's image.Pull, 1.14's
//    PullWithRetriesAndTimeout that the legacy Upgrade uses: internal/pkg/install/pull.go) ends
//    with its ErrorSet, whose text is "1 error(s) occurred:\n\t" + that text (go-retry
//    retry/retry.go); 1.14's ImageService/Pull and ImagePull call the pull once, plainly.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tests/sim/catalog/fleet_spec.h"

namespace tr::sim {

// The document for `rules`, opened with "---"; empty when there are none.
std::string ImageVerificationDocument(const std::vector<ImageVerificationRuleSpec>& rules);

// The rules of the first ImageVerificationConfig document in `config`; none when absent or
// unreadable (ApplyConfiguration validated it before).
std::vector<ImageVerificationRuleSpec> ReadImageVerificationRules(const std::string& config);

// OK when `repository` ("factory.talos.dev/metal-installer/<id>") may be pulled under `rules`;
// else Unknown "verification denied by matched rule (<id>)".
absl::Status VerifyImage(const std::vector<ImageVerificationRuleSpec>& rules,
                         const std::string& repository);

// `text` as siderolabs/go-retry's ErrorSet of that one error prints it.
std::string RetriedErrorText(std::string_view text);

// go-glob's match: `*` stands for any run of characters; everything else matches itself.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace tr::sim
