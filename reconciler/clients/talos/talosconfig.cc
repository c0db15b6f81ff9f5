#include "reconciler/clients/talos/talosconfig.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/base64.h"
#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

constexpr std::string_view kEd25519Label = "ED25519 PRIVATE KEY";
constexpr std::string_view kPkcs8Label = "PRIVATE KEY";

absl::Status ConfigError(std::string_view source, std::string_view context,
                         std::string_view message) {
  if (context.empty()) return absl::InvalidArgumentError(fmt::format("{}: {}", source, message));
  return absl::InvalidArgumentError(fmt::format("{}: contexts.{}: {}", source, context, message));
}

// Reads a scalar string; empty when absent or null. InvalidArgument when it is not a scalar.
absl::StatusOr<std::string> ScalarField(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return std::string();
  if (!value.IsScalar())
    return absl::InvalidArgumentError(fmt::format("{}: must be a string", key));
  return value.Scalar();
}

// A list of strings; a single scalar is accepted as a one-element list.
absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node, const char* key) {
  std::vector<std::string> out;
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return out;
  if (value.IsScalar()) {
    out.push_back(value.Scalar());
    return out;
  }
  if (!value.IsSequence()) {
    return absl::InvalidArgumentError(fmt::format("{}: must be a list of strings", key));
  }
  for (const auto& item : value) {
    if (!item.IsScalar()) {
      return absl::InvalidArgumentError(fmt::format("{}: must be a list of strings", key));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

// Decodes base64 PEM and checks it holds a PEM block whose label ends in `label_suffix`.
// Messages name the field only, never the material.
absl::StatusOr<std::string> DecodePem(const std::string& base64, const char* field,
                                      std::string_view label_suffix) {
  if (base64.empty()) return absl::InvalidArgumentError(fmt::format("{}: missing", field));
  std::optional<std::string> decoded = core::DecodeBase64(base64);
  if (!decoded) return absl::InvalidArgumentError(fmt::format("{}: not valid base64", field));
  const std::string pem = *std::move(decoded);
  const std::string begin = "-----BEGIN ";
  const size_t at = pem.find(begin);
  const size_t label_end = at == std::string::npos ? at : pem.find("-----", at + begin.size());
  if (at == std::string::npos || label_end == std::string::npos) {
    return absl::InvalidArgumentError(fmt::format("{}: decoded value is not PEM", field));
  }
  const std::string_view label(pem.data() + at + begin.size(), label_end - at - begin.size());
  if (label.size() < label_suffix.size() ||
      label.substr(label.size() - label_suffix.size()) != label_suffix) {
    return absl::InvalidArgumentError(
        fmt::format("{}: PEM block is \"{}\", expected \"{}\"", field, label, label_suffix));
  }
  return pem;
}

absl::StatusOr<TalosContext> ParseContext(const std::string& name, const YAML::Node& node) {
  if (!node.IsMap()) return absl::InvalidArgumentError("must be a mapping");
  TalosContext context;
  context.name = name;
  auto endpoints = StringList(node, "endpoints");
  if (!endpoints.ok()) return endpoints.status();
  auto target = ScalarField(node, "target");
  if (!target.ok()) return target.status();
  if (!target->empty()) endpoints->push_back(*target);
  for (const auto& text : *endpoints) {
    auto endpoint = ParseEndpoint(text);
    if (!endpoint.ok()) return endpoint.status();
    bool seen = false;
    for (const auto& e : context.endpoints) seen = seen || e == *endpoint;
    if (!seen) context.endpoints.push_back(*endpoint);
  }
  if (context.endpoints.empty()) {
    return absl::InvalidArgumentError("endpoints: at least one endpoint is required");
  }
  auto nodes = StringList(node, "nodes");
  if (!nodes.ok()) return nodes.status();
  context.nodes = *std::move(nodes);

  auto ca = ScalarField(node, "ca");
  auto crt = ScalarField(node, "crt");
  auto key = ScalarField(node, "key");
  for (const auto* field : {&ca, &crt, &key}) {
    if (!field->ok()) return field->status();
  }
  auto ca_pem = DecodePem(*ca, "ca", "CERTIFICATE");
  if (!ca_pem.ok()) return ca_pem.status();
  auto crt_pem = DecodePem(*crt, "crt", "CERTIFICATE");
  if (!crt_pem.ok()) return crt_pem.status();
  auto key_pem = DecodePem(*key, "key", "PRIVATE KEY");
  if (!key_pem.ok()) return key_pem.status();
  context.ca_pem = *std::move(ca_pem);
  context.crt_pem = *std::move(crt_pem);
  context.key_pem = NormalizeKeyPem(*key_pem);
  return context;
}

}  // namespace

std::string Endpoint::Target() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

absl::StatusOr<Endpoint> ParseEndpoint(std::string_view text) {
  auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("endpoint \"{}\": {}", text, why));
  };
  std::string_view rest = text;
  if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest.remove_prefix(scheme + 3);
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    rest = rest.substr(0, slash);
  }
  Endpoint endpoint;
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return invalid("unterminated '['");
    endpoint.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return invalid("unexpected text after ']'");
      port_text = after.substr(1);
    }
  } else if (const size_t colon = rest.find(':');
             colon != std::string_view::npos &&
             rest.find(':', colon + 1) == std::string_view::npos) {
    endpoint.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  } else {
    endpoint.host = std::string(rest);  // a name, an IPv4 address or a bare IPv6 address
  }
  if (endpoint.host.empty()) return invalid("no host");
  if (!port_text.empty()) {
    unsigned value = 0;
    const auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (error != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
        value > 65535) {
      return invalid("port must be a number from 1 to 65535");
    }
    endpoint.port = static_cast<uint16_t>(value);
  }
  return endpoint;
}

absl::StatusOr<TalosContext> TalosConfig::Context(std::string_view name) const {
  const std::string wanted(name.empty() ? std::string_view(current_context) : name);
  if (wanted.empty()) {
    return absl::FailedPreconditionError("talosconfig names no current context");
  }
  const auto it = contexts.find(wanted);
  if (it == contexts.end()) {
    return absl::NotFoundError(fmt::format("talosconfig has no context \"{}\"", wanted));
  }
  return it->second;
}

absl::StatusOr<TalosConfig> ParseTalosConfig(std::string_view yaml, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return ConfigError(source, {},
                       fmt::format("invalid YAML at line {}, column {}: {}", e.mark.line + 1,
                                   e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) return ConfigError(source, {}, "must be a YAML mapping");
  TalosConfig config;
  auto current = ScalarField(root, "context");
  if (!current.ok()) return ConfigError(source, {}, std::string(current.status().message()));
  config.current_context = *current;
  const YAML::Node contexts = root["contexts"];
  if (!contexts || !contexts.IsMap() || contexts.size() == 0) {
    return ConfigError(source, {}, "contexts: at least one context is required");
  }
  for (const auto& entry : contexts) {
    if (!entry.first.IsScalar()) return ConfigError(source, {}, "contexts: names must be strings");
    const std::string name = entry.first.Scalar();
    auto context = ParseContext(name, entry.second);
    if (!context.ok()) return ConfigError(source, name, std::string(context.status().message()));
    config.contexts.emplace(name, *std::move(context));
  }
  if (!config.current_context.empty() && !config.contexts.contains(config.current_context)) {
    return ConfigError(
        source, {}, fmt::format("context: \"{}\" is not one of contexts", config.current_context));
  }
  return config;
}

std::filesystem::path DefaultTalosconfigPath() {
  if (const char* env = std::getenv("TALOSCONFIG"); env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  std::filesystem::path path = std::filesystem::path(home) / ".talos" / "config";
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) ? path : std::filesystem::path();
}

absl::StatusOr<TalosConfig> LoadTalosConfig(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot read talosconfig {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseTalosConfig(text.str(), path.string());
}

std::string NormalizeKeyPem(std::string_view pem) {
  std::string out(pem);
  for (const std::string_view marker : {"-----BEGIN ", "-----END "}) {
    const std::string from = std::string(marker) + std::string(kEd25519Label) + "-----";
    const std::string to = std::string(marker) + std::string(kPkcs8Label) + "-----";
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at)) {
      out.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return out;
}

}  // namespace tr::reconciler::talos
