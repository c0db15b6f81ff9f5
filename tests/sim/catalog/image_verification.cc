#include "tests/sim/catalog/image_verification.h"

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {

std::string ImageVerificationDocument(const std::vector<ImageVerificationRuleSpec>& rules) {
  if (rules.empty()) return "";
  std::string out = "---\napiVersion: v1alpha1\nkind: ImageVerificationConfig\nrules:\n";
  for (const auto& r : rules) {
    out += fmt::format("  - image: {}\n", r.image);
    if (r.deny) out += "    deny: true\n";
    if (r.skip) out += "    skip: true\n";
  }
  return out;
}

std::vector<ImageVerificationRuleSpec> ReadImageVerificationRules(const std::string& config) {
  std::vector<ImageVerificationRuleSpec> rules;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(config)) {
      if (!doc.IsMap() || !doc["kind"] ||
          doc["kind"].as<std::string>("") != "ImageVerificationConfig") {
        continue;
      }
      for (const YAML::Node& r : doc["rules"]) {
        ImageVerificationRuleSpec rule;
        rule.image = r["image"].as<std::string>("");
        rule.deny = r["deny"].as<bool>(false);
        rule.skip = r["skip"].as<bool>(false);
        rules.push_back(std::move(rule));
      }
      break;
    }
  } catch (const YAML::Exception&) {
    return {};
  }
  return rules;
}

std::string RetriedErrorText(std::string_view text) {
  return fmt::format("1 error(s) occurred:\n\t{}", text);
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == text;
  if (!text.starts_with(pattern.substr(0, star))) return false;
  // Try every split point for the rest after the star (patterns are short).
  const std::string_view rest = pattern.substr(star + 1);
  for (size_t i = star; i <= text.size(); ++i) {
    if (GlobMatch(rest, text.substr(i))) return true;
  }
  return false;
}

absl::Status VerifyImage(const std::vector<ImageVerificationRuleSpec>& rules,
                         const std::string& repository) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].image.empty() || !GlobMatch(rules[i].image, repository)) continue;
    if (rules[i].deny) {
      return absl::UnknownError(fmt::format("verification denied by matched rule ({:04d})", i));
    }
    return absl::OkStatus();  // skip (a verifier rule is not modelled: allowed too)
  }
  return absl::OkStatus();
}

}  // namespace tr::sim
