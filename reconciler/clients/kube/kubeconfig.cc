#include "reconciler/clients/kube/kubeconfig.h"

#include "core/base64.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::kube {
namespace {

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError("kubeconfig: " + std::string(what));
}

absl::StatusOr<std::string> Base64(const std::string& text, std::string_view key) {
  std::optional<std::string> out = core::DecodeBase64(text);
  if (!out) return Bad(std::string(key) + " is not valid base64");
  return *std::move(out);
}

YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (!list.IsSequence()) return YAML::Node();
  for (const YAML::Node& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item;
  }
  return YAML::Node();
}

absl::StatusOr<std::string> Decoded(const YAML::Node& parent, const char* key) {
  if (!parent[key]) return std::string();
  return Base64(parent[key].as<std::string>(), key);
}

absl::StatusOr<KubeCredentials> Read(const YAML::Node& root) {
  if (!root.IsMap() || !root["current-context"]) return Bad("no current-context");
  const std::string context_name = root["current-context"].as<std::string>();
  const YAML::Node context = Named(root["contexts"], context_name)["context"];
  if (!context || !context["cluster"]) return Bad("context " + context_name + " not found");
  const YAML::Node cluster =
      Named(root["clusters"], context["cluster"].as<std::string>())["cluster"];
  if (!cluster || !cluster["server"]) return Bad("cluster of the current context not found");
  KubeCredentials c;
  c.server = cluster["server"].as<std::string>();
  absl::StatusOr<std::string> ca = Decoded(cluster, "certificate-authority-data");
  if (!ca.ok()) return ca.status();
  c.ca_pem = *ca;
  if (context["user"]) {
    const YAML::Node user = Named(root["users"], context["user"].as<std::string>())["user"];
    if (user && user["token"]) c.token = user["token"].as<std::string>();
    absl::StatusOr<std::string> crt = Decoded(user, "client-certificate-data");
    absl::StatusOr<std::string> key = Decoded(user, "client-key-data");
    if (!crt.ok()) return crt.status();
    if (!key.ok()) return key.status();
    c.client_cert_pem = *crt;
    c.client_key_pem = *key;
  }
  if (c.token.empty() && (c.client_cert_pem.empty() || c.client_key_pem.empty())) {
    return Bad("the user has neither a token nor a client certificate and key");
  }
  return c;
}

}  // namespace

absl::StatusOr<KubeCredentials> ParseKubeconfig(std::string_view yaml) {
  try {
    return Read(YAML::Load(std::string(yaml)));
  } catch (const YAML::Exception&) {
    return Bad("not valid YAML");
  }
}

}  // namespace tr::reconciler::kube
