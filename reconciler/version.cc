#include "reconciler/version.h"

namespace tr::reconciler {

std::string_view ReconcilerVersion() { return TR_VERSION; }

}  // namespace tr::reconciler
