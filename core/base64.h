// Standard base64 (RFC 4648 §4, alphabet A-Z a-z 0-9 + /, '=' padding), as talosconfig and
// kubeconfig store key material and OpenSSH armours keys and signatures. The one decoder of the
// project: gitsource, the reconciler and the simulator's tests all use it.
//
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tr::core {

// Decodes `text`, ignoring ASCII whitespace (line breaks of armoured or wrapped input).
// nullopt when malformed: a character outside the alphabet, a length (without whitespace) that
// is not a multiple of four, or '=' anywhere but in the last two places.
std::optional<std::string> DecodeBase64(std::string_view text);

// `bytes` in standard base64, padded, on one line.
std::string EncodeBase64(std::string_view bytes);

}  // namespace tr::core
