// What the chat formats (slack, slack-bot, teams, discord, mattermost, googlechat) say about a
// notification, before each lays it out in its own payload: a one-line summary, a title, the
// facts shown as label/value pairs, a tone with the colour a card's bar or edge gets, and for
// the formats that keep one message per rollout, its versions and where it stands (every
// notification carries the rollout's whole state, so the latest one says it all).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {

// How the event reads at a glance: a card's colour.
enum class Tone { kInfo, kGood, kWarning, kBad };
Tone ToneOf(NotificationEvent event);
// "#RRGGBB" for a card's colour bar: blue, green, amber, red.
std::string_view ToneColour(Tone tone);
// The same colour as a number, 0xRRGGBB (Discord's embeds take one).
uint32_t ToneRgb(Tone tone);

struct Fact {
  std::string label;  // "Talos"
  std::string value;  // "1.11.6 → 1.12.0"
};

// `*prod-eu-1* node.upgraded `cp-0` (Talos 1.12.0) 2/5: upgraded in 6m12s`: bold and code
// marks as Slack and Google Chat read them, or without them (`markup` false) where plain text
// is asked for (Mattermost's fallback).
std::string SummaryLine(const Notification& n, bool markup = true);
// "prod-eu-1: node.upgraded".
std::string Title(const Notification& n);
// Event, phase, node, Talos and Kubernetes versions (current → target), progress and commit,
// each only when known. The message is not a fact: each format shows it as text.
std::vector<Fact> FactsOf(const Notification& n);

// "Talos 1.11.6 → 1.12.0, Kubernetes 1.35.0": each component known, both versions when they
// differ.
std::string VersionsLine(const Notification& n);
// Where the rollout stands: "in progress (2/5 nodes)", "completed", "failed", "blocked",
// "waiting for a health gate".
std::string StateLine(const Notification& n);
// The first 12 characters of a commit id.
std::string ShortCommit(const std::string& commit);

// `body` as compact JSON; invalid UTF-8 in a status message is replaced, not thrown on.
std::string DumpPayload(const nlohmann::json& body);

}  // namespace tr::reconciler::notify
