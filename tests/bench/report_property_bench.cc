// The rollout reports' property (tests/forge/report_property.h) on random seeds and longer
// sequences than forge_tests runs: prints how many sequences, merges and restarts held, and
// the first violation with its seed (run forge_tests' property with that seed to replay it).
// Usage: report_property_bench [sequences] [steps]
#include <cstdio>
#include <cstdlib>
#include <random>

#include "tests/forge/report_property.h"

int main(int argc, char** argv) {
  using tr::reconciler::pull_requests::report_property::PropertyResult;
  using tr::reconciler::pull_requests::report_property::RunReportProperty;
  const int sequences = argc > 1 ? std::atoi(argv[1]) : 20;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 80;
  std::random_device entropy;
  int merges = 0, restarts = 0, held = 0;
  for (int i = 0; i < sequences; ++i) {
    const uint64_t seed = (uint64_t{entropy()} << 32) | entropy();
    const PropertyResult result = RunReportProperty({.seed = seed, .steps = steps});
    merges += result.merges;
    restarts += result.restarts;
    if (!result.violations.empty()) {
      std::printf("violation (seed %llu):\n%s\n", static_cast<unsigned long long>(seed),
                  result.violations.front().c_str());
      continue;
    }
    ++held;
  }
  std::printf("%d of %d sequences of %d steps held (%d merges, %d reporter restarts)\n", held,
              sequences, steps, merges, restarts);
  std::printf(
      "ROW {\"measure\": \"rollout reports true to the history (random sequences)\", \"goal\": "
      "\"every sequence\", \"figure\": \"%d of %d\", \"met\": %s, \"note\": \"%d steps each\"}\n",
      held, sequences, held == sequences ? "true" : "false", steps);
  return held == sequences ? 0 : 1;
}
