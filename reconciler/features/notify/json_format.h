// The JSON notification body (format=json), signed as Standard Webhooks specify
// (standard_webhooks.h):
//   {"id", "event", "cluster", "phase", "message", "node", "talos": {"current", "target"},
//    "kubernetes": {...}, "progress", "commit", "labels": {...}, "time"}; empty fields are left
//    out.
//
// Thread-safe.
#pragma once

#include "reconciler/features/notify/message_format.h"

namespace tr::reconciler::notify {

class JsonFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "json"; }
  bool NeedsSecret() const override { return true; }
  std::string Render(const Notification& n, const std::string& delivery_id) const override;
};

}  // namespace tr::reconciler::notify
