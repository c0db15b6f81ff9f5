#include "reconciler/clients/forge/webhook_reading.h"

#include "base/hmac.h"

namespace tr::reconciler::forge {

using nlohmann::json;

std::string FirstHeader(const HeaderLookup& header, const std::vector<const char*>& names) {
  for (const char* name : names) {
    if (std::optional<std::string> value = header(name)) return *std::move(value);
  }
  return "";
}

absl::Status CheckHmacSignature(std::string_view secret, std::string_view given,
                                bool prefix_required, std::string_view body) {
  if (given.empty()) return absl::UnauthenticatedError("no signature header");
  if (prefix_required || given.starts_with("sha256=")) {
    if (!given.starts_with("sha256=")) {
      return absl::UnauthenticatedError("signature is not sha256=<hex>");
    }
    given.remove_prefix(7);
  }
  if (!ConstantTimeEquals(given, HmacSha256Hex(secret, body))) {
    return absl::UnauthenticatedError("signature does not match the body");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringAt(const json& doc, std::initializer_list<const char*> path) {
  const json* node = &doc;
  std::string name;
  for (const char* key : path) {
    name += name.empty() ? key : std::string(".") + key;
    if (!node->is_object() || !node->contains(key)) {
      return absl::InvalidArgumentError("payload has no " + name);
    }
    node = &(*node)[key];
  }
  if (node->is_null()) return std::string();
  if (!node->is_string()) return absl::InvalidArgumentError(name + " is not a string");
  return node->get<std::string>();
}

absl::StatusOr<int64_t> NumberAt(const json& doc, const char* outer, const char* key) {
  const json* node = outer == nullptr ? &doc : (doc.contains(outer) ? &doc[outer] : nullptr);
  if (node == nullptr || !node->is_object() || !node->contains(key) ||
      !(*node)[key].is_number_integer()) {
    return absl::InvalidArgumentError(std::string("payload has no integer ") +
                                      (outer ? std::string(outer) + "." : "") + key);
  }
  return (*node)[key].get<int64_t>();
}

absl::Status ReadPushFields(const json& doc, WebhookEvent& event) {
  absl::StatusOr<std::string> ref = StringAt(doc, {"ref"});
  if (!ref.ok()) return ref.status();
  absl::StatusOr<std::string> after = StringAt(doc, {"after"});
  if (!after.ok()) return after.status();
  event.ref = *ref;
  event.after = *after;
  return absl::OkStatus();
}

}  // namespace tr::reconciler::forge
