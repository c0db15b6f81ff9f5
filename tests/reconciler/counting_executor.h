// An executor that only counts its calls: what a fenced executor lets through.
#pragma once

#include "reconciler/operations/executor.h"

namespace tr::reconciler::lease {

class CountingExecutor final : public RolloutExecutor {
 public:
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile&, const core::RolloutDecision&,
                                       std::stop_token) override {
    ++calls;
    return ActionResult{};
  }
  int calls = 0;
};

}  // namespace tr::reconciler::lease
