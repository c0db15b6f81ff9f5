// What several dialects share to read a delivery: picking a header among the names senders
// use, checking an HMAC-SHA256 signature header in constant time, and reading payload fields
// strictly (a missing or mistyped field is named in the error).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/forge/webhook_event.h"

namespace tr::reconciler::forge {

// The first of `names` that was sent, as sent; "" when none was.
std::string FirstHeader(const HeaderLookup& header, const std::vector<const char*>& names);

// OK when `given` is the hex HMAC-SHA256 of `body` under `secret`, as "sha256=<hex>" (required
// when `prefix_required`, else optional) or bare "<hex>". Unauthenticated otherwise.
absl::Status CheckHmacSignature(std::string_view secret, std::string_view given,
                                bool prefix_required, std::string_view body);

// The string at `path` ("pull_request", "head", "sha") in `doc`; "" for null. InvalidArgument
// naming the path when it is absent or not a string.
absl::StatusOr<std::string> StringAt(const nlohmann::json& doc,
                                     std::initializer_list<const char*> path);
// The integer `key` of `doc` (of `doc[outer]` when `outer` is set). InvalidArgument naming it.
absl::StatusOr<int64_t> NumberAt(const nlohmann::json& doc, const char* outer, const char* key);

// A push's `ref` and `after`, named alike by GitHub, GitLab and Gitea.
absl::Status ReadPushFields(const nlohmann::json& doc, WebhookEvent& event);

}  // namespace tr::reconciler::forge
