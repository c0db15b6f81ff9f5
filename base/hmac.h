// HMAC-SHA256 and constant-time comparison, for checking webhook signatures and signing
// outbound notifications, and a plain SHA-256 (an Image Factory schematic's ID is the digest of
// its YAML). OpenSSL is hidden behind these functions.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tr {

// HMAC-SHA256(key, message): the 32 bytes.
std::string HmacSha256(std::string_view key, std::string_view message);
// Lower-case hex of HMAC-SHA256(key, message).
std::string HmacSha256Hex(std::string_view key, std::string_view message);

// Lower-case hex of SHA-256(message).
std::string Sha256Hex(std::string_view message);

// Whether `a` equals `b`, taking the same time for every `a` of a given length (the length
// itself is not secret: a signature's length is public).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tr
