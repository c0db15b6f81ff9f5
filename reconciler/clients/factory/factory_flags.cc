#include "reconciler/clients/factory/factory_flags.h"

#include "core/names.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::factory {

using flags::Flag;
using flags::Invalid;

void ImageFactoryFlags::AddFlags(CLI::App& cmd) {
  AddClientFlags(cmd,
                 "http(s)://host[:port] of the Image Factory of profiles whose "
                 "spec.talos.schematic names none (and reconciler.yaml no imageFactory); its "
                 "releases join the release catalog unless --installer-registry is given "
                 "(default: none)");
  flags::DurationFlag(cmd, "image-factory-ttl", ttl,
                      "How often --image-factory's releases are listed again");
}

void ImageFactoryFlags::AddClientFlags(CLI::App& cmd, const std::string& url_help) {
  Flag(cmd, "image-factory", url, url_help);
  Flag(cmd, "image-factory-ca-file", ca_file,
       "PEM bundle trusted for Image Factories instead of the system's");
  flags::MillisFlag(cmd, "image-factory-timeout", timeout,
                    "Deadline of one Image Factory request (default 10s)");
}

absl::StatusOr<ImageFactoryOptions> ImageFactoryFlags::Finish() const {
  if (!url.empty()) {
    if (absl::Status s = core::CheckImageFactoryUrl(url); !s.ok()) {
      return Invalid("image-factory", std::string(s.message()));
    }
  }
  using std::chrono::milliseconds, std::chrono::minutes, std::chrono::hours, std::chrono::seconds;
  if (timeout < milliseconds(100) || timeout > minutes(5)) {
    return Invalid("image-factory-timeout", "100ms to 5m");
  }
  if (ttl < seconds(1) || ttl > hours(24 * 7)) return Invalid("image-factory-ttl", "1s to 168h");
  return ImageFactoryOptions{.origin = url, .ca_file = ca_file, .timeout = timeout};
}

}  // namespace tr::reconciler::factory
