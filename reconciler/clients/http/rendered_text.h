// A text handed to every reader as one immutable buffer: /metrics read slowly on a thousand
// connections holds one copy of the text, not one a connection (issue 49, finding 6). The text
// is rendered again once nobody is still reading it or it is older than `max_age`, so a reader
// who comes after the last one has finished sees what is current, and readers who overlap
// share one rendering.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::reconciler::http {

class RenderedText {
 public:
  RenderedText(std::function<std::string()> render, std::chrono::milliseconds max_age, Env& env);

  // The text: the one being read when there is one younger than max_age, else a new one.
  std::shared_ptr<const std::string> Get();

  // Renderings so far, and how many holders the current text has besides this object (the
  // connections still writing it): what the tests look at.
  std::size_t renders() const;
  long readers() const;

 private:
  const std::function<std::string()> render_;
  const std::chrono::milliseconds max_age_;
  Env& env_;
  mutable Mutex mu_;
  std::shared_ptr<const std::string> text_ ABSL_GUARDED_BY(mu_);
  Env::TimePoint rendered_at_ ABSL_GUARDED_BY(mu_);
  std::size_t renders_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tr::reconciler::http
