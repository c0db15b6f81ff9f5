// Internal to gitsource: the SSH wire encoding (RFC 4251 §5) that SSHSIG blobs, keys and
// signatures use, and base64 as OpenSSH writes it.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tr::gitsource {

// Reads big-endian uint32 and length-prefixed strings from a byte view.
class SshReader {
 public:
  explicit SshReader(std::string_view data) : data_(data) {}
  bool ReadU32(std::uint32_t& out);
  bool ReadString(std::string_view& out);
  bool ReadBytes(std::size_t count, std::string_view& out);
  bool empty() const { return data_.empty(); }

 private:
  std::string_view data_;
};

void AppendSshString(std::string& out, std::string_view value);

// Encodes standard base64 without line breaks; `pad` adds trailing '='.
std::string EncodeBase64(std::string_view bytes, bool pad);

}  // namespace tr::gitsource
