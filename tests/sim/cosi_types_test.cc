// Which COSI types a node of each Talos minor defines (tests/sim/api/cosi_types.cc), pinned to what
// siderolabs/talos pkg/machinery/resources defines at each release.
#include "tests/sim/api/cosi_types.h"

#include <gtest/gtest.h>

namespace tr::sim {
namespace {

struct TypeCase {
  const char* type;
  int first_minor;  // the first minor that defines it; 0: none
  int last_minor;   // the last one (99: still defined)
};

class CosiTypesTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CosiTypesTest, DefinedExactlyFromItsFirstToItsLastMinor) {
  const TypeCase& c = GetParam();
  for (int minor = 5; minor <= 15; ++minor) {
    const bool defined = c.first_minor != 0 && minor >= c.first_minor && minor <= c.last_minor;
    EXPECT_EQ(KnownCosiType(c.type, minor), defined) << c.type << " on 1." << minor;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, CosiTypesTest,
    ::testing::Values(TypeCase{"MachineStatuses.runtime.talos.dev", 5, 99},
                    // talos commit bb2ac7546, v1.14.0-alpha.2
                    TypeCase{"ImageFactorySchematics.runtime.talos.dev", 14, 99},
                    TypeCase{"ImageVerificationRules.security.talos.dev", 13, 99},
                    TypeCase{"Versions.runtime.talos.dev", 10, 99},
                    TypeCase{"ContainerImageStatuses.containers.talos.dev", 15, 99},
                    TypeCase{"MaintenanceServiceCertificates.secrets.talos.dev", 5, 12},
                    TypeCase{"MachineStatus.runtime.talos.dev", 0, 0},
                    // apid lower-cases the type to find its definition
                    TypeCase{"imagefactoryschematics.RUNTIME.talos.dev", 14, 99}));

}  // namespace
}  // namespace tr::sim
