// `validate` on a checkout of a profile repository, without a fleet: the command people run
// locally and in CI before merging. `plan` and the plan engine are in
// reconciler/features/plan/plan_engine.h.
//
// It reads the directory once and writes only to the given streams. Thread-compatible.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>

#include "reconciler/features/plan/plan_engine.h"

namespace tr::reconciler {

enum class ValidateFormat { kText, kGithub };

struct ValidateOptions {
  std::filesystem::path dir = ".";
  ValidateFormat format = ValidateFormat::kText;
  int shards = 0;  // as `run --shards`: spec.shard must be below it (0: not checked)
};

// Prints every problem as `file:line:column: field.path: message` (or as GitHub Actions
// `::error` annotations) and a summary. kExitOk when every profile is valid, else kExitInvalid.
int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err);

// A GitHub Actions workflow command's data or property, escaped as the runner expects.
std::string EscapeGithubData(std::string_view text);
std::string EscapeGithubProperty(std::string_view text);

}  // namespace tr::reconciler
