#include "base/secret_file.h"

#include <fstream>
#include <sstream>

namespace tr {

absl::StatusOr<std::string> ReadSecretFile(const std::filesystem::path& path, size_t min_bytes) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError("cannot read secret file " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  std::string secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty())
    return absl::InvalidArgumentError("secret file " + path.string() + " is empty");
  if (secret.size() < min_bytes) {
    return absl::InvalidArgumentError("secret file " + path.string() + " holds fewer than " +
                                      std::to_string(min_bytes) +
                                      " bytes: use a random secret at least that long");
  }
  return secret;
}

}  // namespace tr
