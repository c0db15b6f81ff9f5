#include "gitsource/ssh_wire.h"

#include <openssl/evp.h>


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
