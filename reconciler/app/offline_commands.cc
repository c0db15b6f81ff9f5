#include "reconciler/app/offline_commands.h"

#include <optional>

#include "core/diagnostic.h"
#include "core/profile_set.h"
#include "fmt/format.h"

namespace tr::reconciler {
namespace {

core::Diagnostics AllDiagnostics(const core::ProfileSet& set) {
  core::Diagnostics all = set.defaults_diagnostics;
  for (const core::InvalidProfile& invalid : set.invalid) {
    all.insert(all.end(), invalid.diagnostics.begin(), invalid.diagnostics.end());
  }
  return all;
}

void PrintGithubAnnotation(const core::Diagnostic& d, std::ostream& out) {
  out << "::error file=" << EscapeGithubProperty(d.file);
  if (d.line > 0) out << ",line=" << d.line << ",col=" << d.column;
  if (!d.path.empty()) out << ",title=" << EscapeGithubProperty(d.path);
  out << "::" << EscapeGithubData(d.message) << "\n";
}

}  // namespace

std::string EscapeGithubData(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string EscapeGithubProperty(std::string_view text) {
  std::string out;
  for (char c : EscapeGithubData(text)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  std::optional<core::ProfileSet> set = LoadCheckout(options.dir, options.shards, err);
  if (!set) return kExitInvalid;
  const core::Diagnostics problems = AllDiagnostics(*set);
  for (const core::Diagnostic& d : problems) {
    if (options.format == ValidateFormat::kGithub) {
      PrintGithubAnnotation(d, out);
    } else {
      out << d.ToString() << "\n";
    }
  }
  const size_t total = set->profiles.size() + set->invalid.size();
  err << fmt::format("{} of {} profile{} valid", set->profiles.size(), total,
                     total == 1 ? "" : "s");
  if (!set->defaults_diagnostics.empty()) err << "; reconciler.yaml is invalid";
  err << "\n";
  return problems.empty() ? kExitOk : kExitInvalid;
}

}  // namespace tr::reconciler
