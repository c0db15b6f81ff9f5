// Syntax checks for the names, addresses and references a profile holds.
//
// Each Check* function returns OK, or InvalidArgument whose message completes the sentence
// "<field>: ..." for a person ("must be a DNS-1123 label: ...").
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tr::core {

inline constexpr int kDefaultTalosApiPort = 50000;

// 1-63 of [a-z0-9-], starting and ending with a letter or digit (cluster names).
absl::Status CheckDns1123Label(std::string_view name);
// Dot-separated DNS-1123 labels, at most 253 characters (Kubernetes node names).
absl::Status CheckDns1123Subdomain(std::string_view name);

// Dotted-quad IPv4 without leading zeros: "10.0.0.11".
bool IsIpv4Address(std::string_view text);
// IPv6 in text form without brackets or zone: "fd00::11", "::ffff:10.0.0.1".
bool IsIpv6Address(std::string_view text);

// A node address: IPv4, IPv6 (no brackets) or a lowercase DNS name; never a port.
absl::Status CheckNodeAddress(std::string_view address);

struct Endpoint {
  std::string host;  // without brackets
  int port = kDefaultTalosApiPort;
};
// "host", "host:port", "[ipv6]:port" or a bare IPv6 address; port 1..65535.
absl::StatusOr<Endpoint> ParseEndpoint(std::string_view text);

// A credentials name: [A-Za-z0-9._-], no slashes, no "..", not starting with '.'.
absl::Status CheckCredentialsName(std::string_view name);

// A plain image repository: a registry host[:port] (required: Talos 1.13+ would not find a
// short name such as "siderolabs/installer" after pulling it as docker.io/...), then lowercase
// path components
// (`[a-z0-9]` separated by '.', '_', '__' or dashes); no tag, no digest, no whitespace or shell
// metacharacters, at most 255 characters. e.g. "factory.talos.dev/metal-installer/abc123".
absl::Status CheckImageRepository(std::string_view repository);

// An Image Factory schematic ID: 64 lowercase hex digits (a SHA-256).
absl::Status CheckSchematicId(std::string_view id);

// An Image Factory URL: "http://" or "https://", then a registry host[:port] (a DNS name or
// IPv4 address; the factory is also the registry its installers are pulled from), with no
// path, query, fragment or user; e.g. "https://factory.talos.dev".
absl::Status CheckImageFactoryUrl(std::string_view url);

// An IANA-looking time-zone name: '/'-separated parts that start with a letter and hold only
// letters, digits, '_', '+' and '-': "UTC", "Europe/Oslo", "Etc/GMT+2". Syntax only.
absl::Status CheckTimezoneName(std::string_view name);

// A Kubernetes label key: a name, or prefix/name. The prefix is a DNS-1123 subdomain; the name
// 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit: "env",
// "app.kubernetes.io/name". The messages name the part at fault ("prefix \"X\" must ...").
absl::Status CheckLabelKey(std::string_view key);
// A Kubernetes label value: empty, or what a label key's name may be.
absl::Status CheckLabelValue(std::string_view value);

}  // namespace tr::core
