// A Slack incoming-webhook body (format=slack): {"text": "<one line>"}, such as
// `*prod-eu-1* node.upgraded `cp-0` (Talos 1.12.0) 2/5: upgraded in 6m12s`. Slack's URL is the
// credential and Slack checks no signature, so it takes no secret.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class SlackFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "slack"; }
  bool NeedsSecret() const override { return false; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
};

}  // namespace tr::reconciler::notify
