// `talos-reconciler completion bash|zsh|fish`: a shell completion script made from the command
// line's own definition, so it cannot drift from the flags.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"

namespace tr::reconciler {

// The script for `shell` (bash, zsh or fish) completing `app`'s commands and their flags;
// nullopt for another shell.
std::optional<std::string> CompletionScript(const CLI::App& app, std::string_view shell);

}  // namespace tr::reconciler
