#include "reconciler/clients/http/rendered_text.h"

#include <utility>

namespace tr::reconciler::http {

RenderedText::RenderedText(std::function<std::string()> render, std::chrono::milliseconds max_age,
                           Env& env)
    : render_(std::move(render)), max_age_(max_age), env_(env) {}

std::shared_ptr<const std::string> RenderedText::Get() {
  const Env::TimePoint now = env_.Now();
  MutexLock lock(mu_);
  const bool shared = text_ && text_.use_count() > 1;
  if (!shared || now - rendered_at_ >= max_age_ || now < rendered_at_) {
    text_ = std::make_shared<const std::string>(render_());
    rendered_at_ = now;
    ++renders_;
  }
  return text_;
}

std::size_t RenderedText::renders() const {
  MutexLock lock(mu_);
  return renders_;
}

long RenderedText::readers() const {
  MutexLock lock(mu_);
  return text_ ? text_.use_count() - 1 : 0;
}

}  // namespace tr::reconciler::http
