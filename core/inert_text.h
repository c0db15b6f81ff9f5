// Text from outside the reconciler — a status message quoting a health check's answer or a
// node's error — made inert for where people read it: it mentions nobody, opens no masked link
// and adds no markup of its own. The reconciler's own markup goes around it.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tr::core {

// For Markdown (CommonMark: GitHub, GitLab and Gitea comments; Discord, Mattermost, Teams):
// what opens emphasis, code, a link or image, an HTML tag, a heading or a table cell
// (\ ` * _ ~ | [ ] ( ) < > ! #) is backslash-escaped,
// `@` is followed by a zero-width space (no mention of a user, team, @here or @everyone), and a
// line break becomes a space (one table cell, one line).
std::string InertMarkdown(std::string_view text);

// For Slack mrkdwn and Google Chat text, whose links and mentions are <…>: `&`, `<` and `>` as
// the entities both read, and `@` as for Markdown; a line break is kept.
std::string InertAngleMarkup(std::string_view text);

}  // namespace tr::core
