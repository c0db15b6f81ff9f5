#include "reconciler/runtime/flags.h"

#include <cctype>

#include "core/duration.h"
#include "core/text.h"
#include "fmt/format.h"

namespace tr::reconciler::flags {

std::string EnvName(std::string_view flag) {
  std::string env = "TALOS_RECONCILER_";
  for (char c : flag) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

CLI::Option* Switch(CLI::App& cmd, const std::string& name, bool& value, const std::string& help) {
  return cmd.add_flag("--" + name, value, help)->envname(EnvName(name));
}

namespace {

// `--name` whose text `parse` turns into `value`; a parse error is CLI11's validation error.
template <typename T, typename Parse>
CLI::Option* ParsedFlag(CLI::App& cmd, const std::string& name, T& value, Parse parse,
                        const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          "--" + name,
          [&value, name, parse](const std::string& text) {
            absl::StatusOr<T> parsed = parse(text);
            if (!parsed.ok()) {
              throw CLI::ValidationError("--" + name, std::string(parsed.status().message()));
            }
            value = *parsed;
          },
          help)
      ->envname(EnvName(name));
}

}  // namespace

CLI::Option* DurationFlag(CLI::App& cmd, const std::string& name, std::chrono::seconds& value,
                          const std::string& help) {
  return ParsedFlag(cmd, name, value, core::ParseDuration,
                    help + " (default " + core::FormatDuration(value) + ")");
}

absl::StatusOr<std::chrono::milliseconds> ParseMillis(const std::string& text) {
  if (text.size() > 2 && text.ends_with("ms")) {
    const std::string digits = text.substr(0, text.size() - 2);
    if (digits.size() <= 9 && core::IsDigits(digits)) {
      return std::chrono::milliseconds(std::stoll(digits));
    }
    return absl::InvalidArgumentError("invalid duration \"" + text + "\"");
  }
  absl::StatusOr<std::chrono::seconds> s = core::ParseDuration(text);
  if (!s.ok()) return s.status();
  return std::chrono::milliseconds(*s);
}

CLI::Option* MillisFlag(CLI::App& cmd, const std::string& name, std::chrono::milliseconds& value,
                        const std::string& help) {
  return ParsedFlag(cmd, name, value, ParseMillis, help);
}

absl::Status Invalid(std::string_view setting, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("--{}: {}", setting, why));
}

}  // namespace tr::reconciler::flags
