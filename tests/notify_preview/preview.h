// Text previews of notifications for the manual: for each format, how its receiver would show
// the message, drawn with text characters from the payload JSON the format renders (not from
// the notification), so a change of a payload changes its preview. A new format gets one
// function and one line in the table of preview.cc.
//
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace tr::notify_preview {

using PreviewFunction = std::string (*)(const nlohmann::json& payload);

struct FormatPreview {
  std::string_view format;  // the name in `format=`
  std::string_view tool;    // "Microsoft Teams", for the heading
  PreviewFunction preview;
};

// Every format with a preview, in the manual's order.
std::span<const FormatPreview> Previews();

// The manual's generated section: for each format of Previews(), the preview of the sample
// notification (sample_notification.h) as rendered by that format, and the payload itself.
std::string PreviewSection();

}  // namespace tr::notify_preview
