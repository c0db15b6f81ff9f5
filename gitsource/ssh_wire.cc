#include "gitsource/ssh_wire.h"

#include <openssl/evp.h>

#include <cctype>

namespace tr::gitsource {

bool SshReader::ReadU32(std::uint32_t& out) {
  if (data_.size() < 4) return false;
  out = 0;
  for (int i = 0; i < 4; ++i) out = (out << 8) | static_cast<unsigned char>(data_[i]);
  data_.remove_prefix(4);
  return true;
}

bool SshReader::ReadBytes(std::size_t count, std::string_view& out) {
  if (data_.size() < count) return false;
  out = data_.substr(0, count);
  data_.remove_prefix(count);
  return true;
}

bool SshReader::ReadString(std::string_view& out) {
  std::uint32_t length = 0;
  return ReadU32(length) && ReadBytes(length, out);
}

void AppendSshString(std::string& out, std::string_view value) {
  const auto length = static_cast<std::uint32_t>(value.size());
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((length >> shift) & 0xff));
  }
  out.append(value);
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  std::string compact;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact.push_back(c);
  }
  if (compact.size() % 4 != 0) return std::nullopt;
  if (compact.empty()) return std::string();
  std::string out(compact.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(compact.data()),
                                static_cast<int>(compact.size()));
  if (n < 0) return std::nullopt;
  std::size_t padding = 0;
  if (compact.back() == '=') ++padding;
  if (compact[compact.size() - 2] == '=') ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

std::string EncodeBase64(std::string_view bytes, bool pad) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  if (!pad) {
    while (!out.empty() && out.back() == '=') out.pop_back();
  }
  return out;
}

}  // namespace tr::gitsource
