#include "reconciler/clients/factory/schematic_ids.h"

#include <openssl/evp.h>

#include <fstream>
#include <system_error>
#include <utility>

#include "core/names.h"
#include "fmt/format.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::factory {
std::string SchematicKey(std::string_view origin, std::string_view yaml) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx, origin.data(), origin.size());
  EVP_DigestUpdate(ctx, "\n", 1);
  EVP_DigestUpdate(ctx, yaml.data(), yaml.size());
  EVP_DigestFinal_ex(ctx, digest, &size);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

SchematicIds::SchematicIds(std::filesystem::path dir, Creator create)
    : dir_(std::move(dir)), create_(std::move(create)) {}

std::optional<std::string> SchematicIds::Known(std::string_view origin, std::string_view yaml) {
  const std::string key = SchematicKey(origin, yaml);
  MutexLock lock(mu_);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  std::optional<std::string> id = Load(key);
  if (id) ids_[key] = *id;
  return id;
}

absl::StatusOr<std::string> SchematicIds::Resolve(std::string_view origin, std::string_view yaml) {
  if (std::optional<std::string> id = Known(origin, yaml)) return *id;
  // Not under the lock: a factory that hangs must not hold up the schematics already known.
  absl::StatusOr<std::string> id = create_(origin, yaml);
  if (!id.ok()) return id.status();
  const std::string key = SchematicKey(origin, yaml);
  MutexLock lock(mu_);
  ids_[key] = *id;
  Store(key, *id);
  return id;
}

std::optional<std::string> SchematicIds::Load(const std::string& key) {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(dir_ / key);
  std::string id;
  if (!in || !std::getline(in, id) || !core::CheckSchematicId(id).ok()) return std::nullopt;
  return id;
}

void SchematicIds::Store(const std::string& key, const std::string& id) {
  if (dir_.empty()) return;
  // A file that cannot be written costs one more request after a restart, nothing else.
  const auto warn = [&](std::string_view what) {
    ModuleLogger("factory")->warn("step=keep-schematic-id error={} dir={}", LogValue(what),
                                  LogValue(dir_.string()));
  };
  if (absl::Status s = MakePrivateDirectory(dir_); !s.ok()) return warn(s.ToString());
  const std::filesystem::path tmp = dir_ / (key + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << id << "\n";
    if (!out.flush()) return warn("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, dir_ / key, ec);
  if (ec) warn(ec.message());
}

}  // namespace tr::reconciler::factory
