// The schematic IDs an Image Factory gave, kept by content: (the factory's origin, the
// schematic's YAML) -> ID. In memory, and one file per schematic under a directory of the state
// directory, so that a restart does not ask the factory again and a factory that is down does
// not stop a cluster whose schematic it already named. A schematic's ID never changes (it is a
// hash of its content), so nothing here expires.
//
// Thread-safe.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/mutex.h"

namespace tr::reconciler::factory {

class SchematicIds {
 public:
  // Asks the factory at `origin` for the ID of `yaml` (CreateSchematic, in the daemon).
  using Creator =
      std::function<absl::StatusOr<std::string>(std::string_view origin, std::string_view yaml)>;

  // `dir` empty: memory only (the offline commands).
  SchematicIds(std::filesystem::path dir, Creator create);

  // The known ID, else the factory's answer, which is then kept. The factory's error as it came
  // when it gives none.
  absl::StatusOr<std::string> Resolve(std::string_view origin, std::string_view yaml);
  // The known ID only.
  std::optional<std::string> Known(std::string_view origin, std::string_view yaml);

 private:
  std::optional<std::string> Load(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Store(const std::string& key, const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::filesystem::path dir_;
  const Creator create_;
  Mutex mu_;
  std::map<std::string, std::string> ids_ ABSL_GUARDED_BY(mu_);  // key -> id
};

// The key of a schematic: the lowercase hex SHA-256 of the origin, a newline and the YAML.
std::string SchematicKey(std::string_view origin, std::string_view yaml);

}  // namespace tr::reconciler::factory
