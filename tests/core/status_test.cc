#include "core/status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <set>

#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "tests/core/diagnostic_strings.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::HasSubstr;
using ::testing::Not;

const TimePoint kT0 = *ParseTimestamp("2026-11-22T02:00:00Z");

struct Scene {
  std::vector<NodeDef> nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = MakeProfile(nodes, "1.12.0", "1.34.1");
  ObservedCluster observed = MakeObserved(nodes);
  ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();

  ClusterStatus Build(const ClusterStatus* previous, const RolloutMemory& memory, TimePoint now,
                      std::vector<std::string> events = {}) {
    ClusterPlan plan = PlanCluster(profile, observed, SupportMatrix::BuiltIn(), catalog);
    RolloutDecision decision = DecideNextAction({profile, plan, observed, memory, {}, {}, now});
    StatusInput in;
    in.cluster = "prod";
    in.previous = previous;
    in.profile = &profile;
    in.plan = &plan;
    in.observed = &observed;
    in.decision = &decision;
    in.memory = memory;
    in.catalog = &catalog;
    in.desired_commit = "c0ffee";
    in.events = std::move(events);
    in.now = now;
    return BuildClusterStatus(in);
  }
};

TEST(TimestampTest, RoundTripsAndRejectsJunk) {
  EXPECT_EQ(FormatTimestamp(kT0), "2026-11-22T02:00:00Z");
  EXPECT_EQ(*ParseTimestamp("2026-11-22T03:00:00+01:00"), kT0);
  EXPECT_EQ(*ParseTimestamp("2026-11-22T02:00:00.123Z"), kT0);
  for (const char* bad : {"", "2026-11-22", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2026-11-22T02:00:00", "2026-11-22T25:00:00Z",
                          // scripts/fuzz (status_fuzz): years a nanosecond clock cannot hold
                          // overflowed on conversion.
                          "4574-11-22T02:00:00Z", "9999-12-31T23:59:59Z", "1600-01-01T00:00:00Z",
                          "1969-12-31T23:59:59Z"}) {
    EXPECT_EQ(ParseTimestamp(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(StatusTest, InProgressRolloutReadsLikeTheVocabulary) {
  Scene scene;
  ClusterStatus s = scene.Build(nullptr, {}, kT0);
  EXPECT_EQ(s.phase, ClusterPhase::kUpgradingTalos);
  EXPECT_EQ(s.talos.current, "1.11.6");
  EXPECT_EQ(s.talos.target, "1.12.0");
  EXPECT_EQ(s.talos.available, "1.13.9");
  EXPECT_EQ(s.talos.state, ComponentState::kInProgress);
  EXPECT_EQ(s.talos.progress, "0/5");
  EXPECT_EQ(s.kubernetes.state, ComponentState::kIdle);
  ASSERT_EQ(s.conditions.size(), 3u);
  EXPECT_EQ(s.conditions[0].type, "TalosUpgrade");
  EXPECT_TRUE(s.conditions[0].status);
  EXPECT_EQ(s.conditions[0].reason, "InProgress");
  EXPECT_FALSE(s.conditions[2].status);
  EXPECT_EQ(s.nodes.size(), 5u);
  EXPECT_EQ(s.desired_commit_attempted, "c0ffee");
  EXPECT_EQ(s.desired_commit_applied, "");
}

// A node's boot and since when it is seen: the clock starts with a new boot id, stays while the
// same boot answers, and a node that does not say (rebooting, unreachable) keeps what was
// recorded.
TEST(StatusTest, ABootIsRecordedWithWhenItWasFirstSeen) {
  Scene scene;
  scene.observed.nodes[0].boot_id.clear();
  scene.observed.nodes[3].boot_id = "boot-1";
  const ClusterStatus first = scene.Build(nullptr, {}, kT0);
  EXPECT_EQ(first.nodes[3].boot_id, "boot-1");
  EXPECT_EQ(first.nodes[3].boot_seen, kT0);
  EXPECT_FALSE(first.nodes[0].boot_seen.has_value());  // never said

  const ClusterStatus same = scene.Build(&first, {}, kT0 + std::chrono::hours(1));
  EXPECT_EQ(same.nodes[3].boot_seen, kT0);
  scene.observed.nodes[3].boot_id.clear();
  scene.observed.nodes[3].reachable = false;
  const ClusterStatus down = scene.Build(&same, {}, kT0 + std::chrono::hours(2));
  EXPECT_EQ(down.nodes[3].boot_id, "boot-1");
  EXPECT_EQ(down.nodes[3].boot_seen, kT0);
  scene.observed.nodes[3].boot_id = "boot-2";
  scene.observed.nodes[3].reachable = true;
  const ClusterStatus rebooted = scene.Build(&down, {}, kT0 + std::chrono::hours(3));
  EXPECT_EQ(rebooted.nodes[3].boot_id, "boot-2");
  EXPECT_EQ(rebooted.nodes[3].boot_seen, kT0 + std::chrono::hours(3));
}

TEST(StatusTest, FinishedNodeAndCompletionAreRecorded) {
  Scene scene;
  RolloutMemory busy;
  busy.in_flight.push_back({"w-0", V("1.12.0"), "img:v1.12.0", false, "boot-w-0", "a",
                            OperationPhase::kUpgradeCalled, kT0, kT0 + std::chrono::minutes(30)});
  ClusterStatus first = scene.Build(nullptr, busy, kT0);
  const TimePoint later = kT0 + std::chrono::seconds(372);
  scene.observed.nodes[3].talos = V("1.12.0");
  scene.observed.nodes[3].boot_id = "new";
  ClusterStatus second = scene.Build(&first, {}, later);
  EXPECT_EQ(second.nodes[3].last_upgrade_duration, std::chrono::seconds(372));
  EXPECT_THAT(second.nodes[3].last_operation, HasSubstr("upgraded to Talos 1.12.0 in 6m12s"));
  // The TalosUpgrade condition held True: its transition time stays.
  EXPECT_EQ(second.conditions[0].last_transition, kT0);

  for (NodeObservation& n : scene.observed.nodes) n.talos = V("1.12.0");
  ClusterStatus done = scene.Build(&second, {}, later + std::chrono::minutes(1));
  EXPECT_EQ(done.phase, ClusterPhase::kReady);
  EXPECT_EQ(done.talos.state, ComponentState::kCompleted);
  EXPECT_EQ(done.conditions[0].reason, "Succeeded");
  EXPECT_FALSE(done.conditions[0].status);
  EXPECT_EQ(done.conditions[0].last_transition, later + std::chrono::minutes(1));
  EXPECT_TRUE(done.conditions[2].status);
  EXPECT_EQ(done.desired_commit_applied, "c0ffee");
  EXPECT_EQ(done.nodes[3].last_upgrade_duration, std::chrono::seconds(372));
}

TEST(StatusTest, InvalidProfileKeepsTheRolloutMemory) {
  Scene scene;
  RolloutMemory busy;
  busy.prepulled_image = "img:v1.12.0";
  ClusterStatus before = scene.Build(nullptr, busy, kT0);
  Diagnostics problems = {{"clusters/prod.yaml", 3, 5, "spec.talos", "broken"}};
  StatusInput in;
  in.cluster = "prod";
  in.previous = &before;
  in.invalid = &problems;
  in.now = kT0;
  ClusterStatus s = BuildClusterStatus(in);
  EXPECT_EQ(s.phase, ClusterPhase::kBlocked);
  EXPECT_EQ(s.message, "invalid profile: clusters/prod.yaml:3:5: spec.talos: broken");
  EXPECT_EQ(s.rollout.prepulled_image, "img:v1.12.0");
  EXPECT_EQ(s.talos.state, ComponentState::kBlocked);
}

// Notifications are filtered by labels: a broken profile must not change who hears about it.
TEST(StatusTest, LabelsComeFromTheProfileAndOutliveAnInvalidOne) {
  Scene scene;
  const std::map<std::string, std::string> prod = {{"env", "prod"}, {"example.com/team", "db"}};
  scene.profile.labels = prod;
  const ClusterStatus first = scene.Build(nullptr, {}, kT0);
  EXPECT_EQ(first.labels, prod);

  Diagnostics problems = {{"clusters/prod.yaml", 5, 10, "metadata.labels.env", "broken"}};
  StatusInput broken;
  broken.cluster = "prod";
  broken.previous = &first;
  broken.invalid = &problems;
  broken.now = kT0 + std::chrono::minutes(1);
  const ClusterStatus blocked = BuildClusterStatus(broken);
  EXPECT_EQ(blocked.phase, ClusterPhase::kBlocked);
  EXPECT_EQ(blocked.labels, prod);

  // Fixed, with other labels: those count from now on.
  scene.profile.labels = {{"env", "staging"}};
  const ClusterStatus fixed = scene.Build(&blocked, {}, kT0 + std::chrono::minutes(2));
  EXPECT_EQ(fixed.labels, (std::map<std::string, std::string>{{"env", "staging"}}));
  // Labels removed from the profile are gone from the status too.
  scene.profile.labels.clear();
  EXPECT_TRUE(scene.Build(&fixed, {}, kT0 + std::chrono::minutes(3)).labels.empty());

  // Invalid from the start: there is nothing to keep.
  broken.previous = nullptr;
  EXPECT_TRUE(BuildClusterStatus(broken).labels.empty());
}

TEST(StatusTest, HistoryIsCapped) {
  Scene scene;
  ClusterStatus s = scene.Build(nullptr, {}, kT0);
  for (int i = 0; i < 30; ++i) {
    s = scene.Build(&s, {}, kT0 + std::chrono::seconds(i), {"event " + std::to_string(i)});
  }
  EXPECT_EQ(s.history.size(), kMaxHistory);
  EXPECT_EQ(s.history.back().event, "event 29");
}

TEST(StatusTest, NodesThatDoNotAnswerKeepTheirLastVersionsAndWhenTheyWereSeen) {
  Scene scene;
  const ClusterStatus seen = scene.Build(nullptr, {}, kT0);
  for (NodeObservation& n : scene.observed.nodes) {
    if (n.name != "cp-1") continue;
    n.reachable = false;
    n.talos.reset();
    n.kubelet.reset();
  }
  scene.observed = WithLastKnownVersions(scene.observed, &seen);
  const ClusterStatus down = scene.Build(&seen, {}, kT0 + std::chrono::minutes(1));
  const ClusterStatus later = scene.Build(&down, {}, kT0 + std::chrono::minutes(2));
  for (const ClusterStatus* s : {&down, &later}) {
    EXPECT_EQ(s->talos.current, "1.11.6");
    for (const NodeStatus& n : s->nodes) {
      SCOPED_TRACE(n.name);
      EXPECT_EQ(n.talos, "1.11.6");
      EXPECT_EQ(n.kubelet, "1.34.1");
      EXPECT_EQ(n.reachable, n.name != "cp-1");
      if (n.name == "cp-1") {
        EXPECT_FALSE(n.ready);
        EXPECT_EQ(n.last_seen, std::optional<TimePoint>(kT0));  // still the first sighting
      }
    }
  }
  const std::string yaml = RenderStatusYaml(later);
  EXPECT_THAT(yaml, HasSubstr("reachable: false"));
  EXPECT_THAT(yaml, HasSubstr("lastSeen: \"2026-11-22T02:00:00Z\""));
  Decoded<ClusterStatus> decoded = DecodeClusterStatus("status/prod.yaml", yaml);
  ASSERT_TRUE(decoded.ok()) << yaml;
  EXPECT_FALSE(StatusChanged(*decoded.value, later)) << yaml;
}

// News — a node seen rebooting, a new message, later time — may go out without waiting; any
// change a restart resumes from may not.
TEST(StatusTest, OnlyReportDiffersTellsNewsFromWhatARestartResumesFrom) {
  Scene scene;
  RolloutMemory memory;
  OperationInFlight op;
  op.node = "w-0";
  op.target = *ParseTalosVersion("1.12.0");
  op.phase = OperationPhase::kUpgradeCalled;
  op.started = kT0;
  op.deadline = kT0 + std::chrono::minutes(30);
  memory.in_flight = {op};
  const ClusterStatus recorded = scene.Build(nullptr, memory, kT0);

  scene.observed.nodes[0].reachable = false;
  ClusterStatus news = scene.Build(&recorded, memory, kT0 + std::chrono::seconds(7));
  news.message = "w-0 rebooting into 1.12.0 (0/5)";
  EXPECT_TRUE(OnlyReportDiffers(recorded, news));

  ClusterStatus called = news;
  called.rollout.in_flight[0].phase = OperationPhase::kRecorded;
  EXPECT_FALSE(OnlyReportDiffers(recorded, called));
  ClusterStatus actor = news;
  actor.rollout.in_flight[0].actor_id = "actor-1";
  EXPECT_FALSE(OnlyReportDiffers(recorded, actor));
  ClusterStatus done = news;
  done.rollout.in_flight.clear();
  EXPECT_FALSE(OnlyReportDiffers(recorded, done));
  ClusterStatus halted = news;
  halted.phase = ClusterPhase::kUpgradeFailed;
  EXPECT_FALSE(OnlyReportDiffers(recorded, halted));
  ClusterStatus pulled = news;
  pulled.rollout.prepulled_image = "installer:v1.12.0";
  EXPECT_FALSE(OnlyReportDiffers(recorded, pulled));
  ClusterStatus applied = news;
  applied.desired_commit_applied = "c0ffee";
  EXPECT_FALSE(OnlyReportDiffers(recorded, applied));
  ClusterStatus gated = news;
  gated.gates.failing_since = kT0;
  EXPECT_FALSE(OnlyReportDiffers(recorded, gated));
  ClusterStatus event = news;
  event.history.push_back({kT0, "w-0 healthy on 1.12.0"});
  EXPECT_FALSE(OnlyReportDiffers(recorded, event));
  ClusterStatus other = news;
  other.cluster = "staging";
  EXPECT_FALSE(OnlyReportDiffers(recorded, other));
  ClusterStatus labelled = news;
  labelled.labels = {{"env", "prod"}};
  EXPECT_FALSE(OnlyReportDiffers(recorded, labelled));
}

// A Ready cluster moved to a commit that asks nothing of it differs only in that commit: its
// record need not wait. Any other change, or any phase but Ready, still does.
TEST(StatusTest, OnlyTheCommitOfAReadyClusterMovingIsToldApart) {
  Scene scene;
  scene.observed = MakeObserved(FiveNodes("1.12.0", "1.34.1"));
  const ClusterStatus recorded = scene.Build(nullptr, {}, kT0);
  ASSERT_EQ(recorded.phase, ClusterPhase::kReady) << recorded.message;
  ClusterStatus moved = scene.Build(&recorded, {}, kT0 + std::chrono::seconds(3));
  moved.desired_commit_attempted = "d00d";
  moved.desired_commit_applied = "d00d";
  EXPECT_FALSE(OnlyReportDiffers(recorded, moved));
  EXPECT_TRUE(OnlyCommitOfReadyClusterDiffers(recorded, moved));

  ClusterStatus remembered = moved;
  remembered.rollout.prepulled_image = "installer:v1.12.0";
  EXPECT_FALSE(OnlyCommitOfReadyClusterDiffers(recorded, remembered));
  ClusterStatus labelled = moved;
  labelled.labels = {{"env", "prod"}};
  EXPECT_FALSE(OnlyCommitOfReadyClusterDiffers(recorded, labelled));
  ClusterStatus upgrading = moved;
  upgrading.phase = ClusterPhase::kUpgradingTalos;
  EXPECT_FALSE(OnlyCommitOfReadyClusterDiffers(recorded, upgrading));
  ClusterStatus was_upgrading = recorded;
  was_upgrading.phase = ClusterPhase::kUpgradingTalos;
  ClusterStatus still_upgrading = moved;
  still_upgrading.phase = ClusterPhase::kUpgradingTalos;
  EXPECT_FALSE(OnlyCommitOfReadyClusterDiffers(was_upgrading, still_upgrading));
}

// A status with every part of the rollout's memory set: an operation in flight, a pre-pull, a
// snapshot, a settle time and a failure (its message `failure`).
ClusterStatus EveryFieldSet(const std::string& failure) {
  Scene scene;
  RolloutMemory memory;
  memory.in_flight.push_back({"cp-0", V("1.12.0"), "img:v1.12.0", true, "b1", "actor",
                              OperationPhase::kDrained, kT0, kT0 + std::chrono::minutes(30),
                              std::string(64, 'b')});
  // A profile with a schematic, whose nodes run another.
  scene.profile.talos_factory = FactoryInstaller{};
  scene.profile.talos_schematic_id = std::string(64, 'b');
  for (NodeObservation& node : scene.observed.nodes) node.schematic = std::string(64, 'a');
  memory.prepulled_image = "img:v1.12.0";
  memory.prepulled_node_images = {"gpu-img:v1.12.0"};
  memory.etcd_snapshot_image = "img:v1.12.0";
  memory.settle_until = kT0 + std::chrono::seconds(30);
  memory.failure = RolloutFailure{"w-0", V("1.12.0"), failure, kT0, std::string(64, 'b'),
                                  "2026-12-02T10:15:00Z"};
  scene.profile.labels = {{"env", "prod"}};
  ClusterStatus status = scene.Build(nullptr, memory, kT0, {"something: happened"});
  status.fence = Fence{4, "talos-reconciler-0"};
  status.proposal = ProposalRef{.branch = "talos-reconciler/update/lab",
                                .talos = "1.12.3",
                                .kubernetes = "1.34.3",
                                .pull_request = 12,
                                .url = "https://github.example/acme/fleet/pull/12"};
  return status;
}

TEST(StatusYamlTest, RoundTripsEveryField) {
  ClusterStatus s = EveryFieldSet("it: \"broke\"\nbadly");
  std::string yaml = RenderStatusYaml(s);
  Decoded<ClusterStatus> back = DecodeClusterStatus("status/prod.yaml", yaml);
  ASSERT_TRUE(back.ok()) << (back.diagnostics.empty() ? "" : back.diagnostics[0].ToString()) << "\n"
                         << yaml;
  EXPECT_FALSE(StatusChanged(s, *back.value)) << yaml << "\n---\n" << RenderStatusYaml(*back.value);
  EXPECT_EQ(back.value->rollout.failure->message, "it: \"broke\"\nbadly");
  EXPECT_EQ(back.value->rollout.failure->retry, "2026-12-02T10:15:00Z");
  EXPECT_EQ(back.value->rollout.in_flight[0].phase, OperationPhase::kDrained);
  EXPECT_TRUE(back.value->rollout.in_flight[0].lifecycle);
  EXPECT_EQ(back.value->labels, (std::map<std::string, std::string>{{"env", "prod"}}));
  EXPECT_EQ(back.value->fence, s.fence);
  EXPECT_EQ(back.value->rollout.prepulled_node_images, std::vector<std::string>{"gpu-img:v1.12.0"});
  EXPECT_EQ(back.value->proposal, s.proposal);
}

// A status file written by a newer build, with fields this build does not know at the top, in
// a node, in the rollout and in a failure: read with everything this build knows (a helm
// rollback keeps the cluster's memory: the failure, the node in flight, the fence).
TEST(StatusYamlTest, FieldsOfANewerBuildAreIgnoredNotFatal) {
  const ClusterStatus s = EveryFieldSet("broke");
  std::string yaml = RenderStatusYaml(s);
  auto insert_after = [&yaml](const std::string& line, const std::string& added) {
    const size_t at = yaml.find(line);
    ASSERT_NE(at, std::string::npos) << line << "\n" << yaml;
    yaml.insert(yaml.find('\n', at) + 1, added);
  };
  insert_after("kind: ClusterStatus", "futureTopLevel: {anything: [1, 2]}\n");
  insert_after("rollout:", "  futureRolloutField: yes\n");
  const size_t node = yaml.find("  - name: ");
  ASSERT_NE(node, std::string::npos) << yaml;
  yaml.insert(yaml.find('\n', node) + 1, "    futureNodeField: 3\n");
  Decoded<ClusterStatus> back = DecodeClusterStatus("status/prod.yaml", yaml);
  ASSERT_TRUE(back.ok()) << (back.diagnostics.empty() ? "" : back.diagnostics[0].ToString())
                         << "\n" << yaml;
  EXPECT_FALSE(StatusChanged(s, *back.value)) << yaml;
  EXPECT_EQ(back.value->fence, s.fence);
  ASSERT_TRUE(back.value->rollout.failure.has_value());
  // What this build knows is still checked: a wrong value is an error as before.
  std::string wrong = RenderStatusYaml(s);
  wrong.replace(wrong.find("phase: "), 7, "phase: NotAPhase\n_was: ");
  EXPECT_FALSE(DecodeClusterStatus("status/prod.yaml", wrong).ok()) << wrong;
}

// The status file with its fence generation replaced by `generation`.
std::string WithFenceGeneration(const std::string& generation) {
  std::string yaml = RenderStatusYaml(EveryFieldSet("broke"));
  const std::string from = "fence: {generation: 4,";
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << yaml;
  return at == std::string::npos ? yaml : yaml.replace(at, from.size(), "fence: {generation: " + generation + ",");
}

// Every generation up to 2^53 - 1 is read (a claim past 999,999,999,999,999 made the file
// unreadable to its own writer); one beyond is no fence, and the rest of the file — the
// operation in flight above all — is still read.
TEST(StatusYamlTest, FenceGenerationsAreReadOverTheWholeRangeAndBeyondItTheFenceIsIgnored) {
  for (const std::string generation : {"999999999999999", "1000000000000000", "9007199254740991"}) {
    Decoded<ClusterStatus> read = DecodeClusterStatus("status/prod.yaml", WithFenceGeneration(generation));
    ASSERT_TRUE(read.ok()) << generation << ": " << read.diagnostics[0].ToString();
    ASSERT_TRUE(read.value->fence.has_value()) << generation;
    EXPECT_EQ(std::to_string(read.value->fence->generation), generation);
  }
  for (const std::string generation : {"9007199254740992", "99999999999999999999999"}) {
    Decoded<ClusterStatus> read = DecodeClusterStatus("status/prod.yaml", WithFenceGeneration(generation));
    ASSERT_TRUE(read.ok()) << generation << ": " << read.diagnostics[0].ToString();
    EXPECT_EQ(read.value->fence, std::nullopt) << generation;
    ASSERT_EQ(read.value->rollout.in_flight.size(), 1u) << generation;
    EXPECT_EQ(NextFenceGeneration(read.value->fence), 1u);
  }
  // A claim over the last generation stays at it, and the file it writes is read back.
  const uint64_t claimed = NextFenceGeneration(Fence{kMaxFenceGeneration - 1, "a"});
  EXPECT_EQ(claimed, kMaxFenceGeneration);
  EXPECT_TRUE(DecodeClusterStatus("s", WithFenceGeneration(std::to_string(claimed))).ok());
}

// Without per-node schematics the file keeps the shape it had before them.
TEST(StatusYamlTest, NodeImagesAreLeftOutWhenThereAreNone) {
  ClusterStatus s = EveryFieldSet("broke");
  s.rollout.prepulled_node_images.clear();
  const std::string yaml = RenderStatusYaml(s);
  EXPECT_THAT(yaml, Not(HasSubstr("prepulledNodeImages")));
  Decoded<ClusterStatus> back = DecodeClusterStatus("status/prod.yaml", yaml);
  ASSERT_TRUE(back.ok()) << yaml;
  EXPECT_TRUE(back.value->rollout.prepulled_node_images.empty());
}

// A node with a schematic of its own has moved once it runs that one: the cluster's current
// schematic is then the profile's.
TEST(StatusTest, ANodeOnItsOwnSchematicCountsAsMoved) {
  Scene scene;
  for (NodeObservation& node : scene.observed.nodes) node.talos = V("1.12.0");
  scene.profile.talos_factory = FactoryInstaller{};
  scene.profile.talos_image = "f/metal-installer/" + std::string(64, 'b');
  scene.profile.talos_schematic_id = std::string(64, 'b');
  NodeSpec& gpu = scene.profile.nodes[4];
  gpu.schematic = Schematic{};
  gpu.talos_image = "f/metal-installer/" + std::string(64, 'd');
  gpu.talos_schematic_id = std::string(64, 'd');
  for (NodeObservation& node : scene.observed.nodes) node.schematic = std::string(64, 'b');
  scene.observed.nodes[4].schematic = std::string(64, 'a');  // not yet on its own

  ClusterStatus moving = scene.Build(nullptr, {}, kT0);
  EXPECT_EQ(moving.talos.schematic_current, std::string(64, 'a'));
  EXPECT_EQ(moving.phase, ClusterPhase::kUpgradingTalos) << moving.message;

  scene.observed.nodes[4].schematic = std::string(64, 'd');
  ClusterStatus done = scene.Build(&moving, {}, kT0);
  EXPECT_EQ(done.talos.schematic_current, std::string(64, 'b'));
  EXPECT_EQ(done.talos.schematic_target, std::string(64, 'b'));
  EXPECT_EQ(done.phase, ClusterPhase::kReady) << done.message;
  EXPECT_EQ(done.talos.progress, "5/5");
  EXPECT_EQ(done.nodes[4].schematic, std::string(64, 'd'));
}

TEST(StatusYamlTest, LabelsRoundTripAndAreLeftOutWhenThereAreNone) {
  Scene scene;
  scene.profile.labels = {{"app.kubernetes.io/part-of", "payments"}, {"canary", ""}, {"tier", "3"}};
  const ClusterStatus labelled = scene.Build(nullptr, {}, kT0);
  const std::string yaml = RenderStatusYaml(labelled);
  EXPECT_THAT(yaml, HasSubstr("labels:\n  app.kubernetes.io/part-of: \"payments\"\n  canary: "
                              "\"\"\n  tier: \"3\"\n"));
  Decoded<ClusterStatus> back = DecodeClusterStatus("status/prod.yaml", yaml);
  ASSERT_TRUE(back.ok()) << yaml;
  EXPECT_EQ(back.value->labels, labelled.labels);
  EXPECT_FALSE(StatusChanged(labelled, *back.value));

  // Keys a YAML reader would take for null or a boolean are valid labels (quoted in a profile),
  // and must come back as the same text.
  scene.profile.labels = {{"null", "NULL"}, {"true", "yes"}, {"Off", ""}};
  const ClusterStatus tricky = scene.Build(nullptr, {}, kT0);
  Decoded<ClusterStatus> tricky_back =
      DecodeClusterStatus("status/prod.yaml", RenderStatusYaml(tricky));
  ASSERT_TRUE(tricky_back.ok()) << RenderStatusYaml(tricky);
  EXPECT_EQ(tricky_back.value->labels, tricky.labels);

  scene.profile.labels.clear();
  const std::string plain = RenderStatusYaml(scene.Build(nullptr, {}, kT0));
  EXPECT_THAT(plain, Not(HasSubstr("labels")));
  Decoded<ClusterStatus> plain_back = DecodeClusterStatus("status/prod.yaml", plain);
  ASSERT_TRUE(plain_back.ok()) << plain;
  EXPECT_TRUE(plain_back.value->labels.empty());
}

// A file as the reconciler wrote it before labels existed still loads, without labels.
TEST(StatusYamlTest, AFileFromBeforeLabelsLoads) {
  constexpr std::string_view kOld = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterStatus
cluster: "prod"
phase: Ready
message: ""
updated: "2026-11-22T02:00:00Z"
desiredCommit:
  attempted: "c0ffee"
  applied: "c0ffee"
talos:
  current: "1.12.0"
  target: "1.12.0"
  available: "1.12.0"
  status: idle
  message: ""
  progress: "5/5"
kubernetes:
  current: "1.34.1"
  target: "1.34.1"
  available: "1.35.0"
  status: idle
  message: ""
  progress: "5/5"
conditions: []
history: []
nodes: []
inFlight: []
rollout:
  prepulledImage: ""
  etcdSnapshotImage: ""
)";
  Decoded<ClusterStatus> old = DecodeClusterStatus("status/prod.yaml", kOld);
  ASSERT_TRUE(old.ok()) << old.diagnostics[0].ToString();
  EXPECT_EQ(old.value->cluster, "prod");
  EXPECT_EQ(old.value->desired_commit_applied, "c0ffee");
  EXPECT_TRUE(old.value->labels.empty());
}

// The status branch is written by whoever can push to it; labels that no profile could hold are
// refused as the profile decoder refuses them.
TEST(StatusYamlTest, LabelsAreCheckedAsAProfilesAre) {
  Scene scene;
  scene.profile.labels = {{"env", "prod"}};
  const std::string yaml = RenderStatusYaml(scene.Build(nullptr, {}, kT0));
  const std::string bad_key = ReplaceOnce(yaml, "  env: \"prod\"", "  -env: \"prod\"");
  ASSERT_FALSE(bad_key.empty()) << yaml;
  Decoded<ClusterStatus> refused = DecodeClusterStatus("status/prod.yaml", bad_key);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics[0].ToString(),
            "status/prod.yaml:5:3: labels.-env: label key name \"-env\" must be letters, digits, "
            "'-', '_' or '.', starting and ending with a letter or digit");
  const std::string bad_value = ReplaceOnce(yaml, "  env: \"prod\"", "  env: \"<b>prod</b>\"");
  ASSERT_FALSE(bad_value.empty()) << yaml;
  refused = DecodeClusterStatus("status/prod.yaml", bad_value);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.diagnostics[0].ToString(),
            "status/prod.yaml:5:8: labels.env: label value must be empty or letters, digits, "
            "'-', '_' or '.', starting and ending with a letter or digit");
}

// Every key path of a YAML document ("rollout.failure.node", "nodes[].name").
void KeyPaths(const YAML::Node& node, const std::string& prefix, std::set<std::string>& out) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      const std::string path = prefix + entry.first.as<std::string>();
      out.insert(path);
      KeyPaths(entry.second, path + ".", out);
    }
  } else if (node.IsSequence() && node.size() > 0) {
    KeyPaths(node[0], prefix.substr(0, prefix.size() - 1) + "[].", out);
  }
}

// The status file's shape, pinned: a reconciler of the next version must read the files this one
// wrote, so a change here needs an entry in CHANGELOG.md (and a decoder that reads both).
TEST(StatusYamlTest, TheFilesShapeIsPinned) {
  const ClusterStatus s = EveryFieldSet("broke");
  std::set<std::string> paths;
  KeyPaths(YAML::Load(RenderStatusYaml(s)), "", paths);
  std::string listed;
  for (const std::string& p : paths) listed += p + "\n";
  EXPECT_EQ(listed, R"(apiVersion
cluster
conditions
conditions[].lastTransitionTime
conditions[].message
conditions[].reason
conditions[].status
conditions[].type
desiredCommit
desiredCommit.applied
desiredCommit.attempted
fence
fence.generation
fence.holder
history
history[].at
history[].event
inFlight
inFlight[].actorId
inFlight[].bootIdBefore
inFlight[].deadline
inFlight[].image
inFlight[].node
inFlight[].path
inFlight[].phase
inFlight[].schematic
inFlight[].started
inFlight[].target
kind
kubernetes
kubernetes.available
kubernetes.current
kubernetes.message
kubernetes.progress
kubernetes.status
kubernetes.target
labels
labels.env
message
nodes
nodes[].bootId
nodes[].bootSeen
nodes[].kubelet
nodes[].lastOperation
nodes[].name
nodes[].ready
nodes[].role
nodes[].schematic
nodes[].talos
phase
proposal
proposal.branch
proposal.kubernetes
proposal.pullRequest
proposal.talos
proposal.url
rollout
rollout.etcdSnapshotImage
rollout.failure
rollout.failure.at
rollout.failure.message
rollout.failure.node
rollout.failure.retry
rollout.failure.schematic
rollout.failure.talosTarget
rollout.prepulledImage
rollout.prepulledNodeImages
rollout.settleUntil
talos
talos.available
talos.current
talos.message
talos.progress
talos.schematic
talos.schematic.current
talos.schematic.target
talos.status
talos.target
updated
)");
}

TEST(StatusYamlTest, ChangeDetectionIgnoresOnlyTheUpdateTime) {
  Scene scene;
  ClusterStatus a = scene.Build(nullptr, {}, kT0);
  ClusterStatus b = a;
  b.updated = kT0 + std::chrono::hours(1);
  EXPECT_FALSE(StatusChanged(a, b));
  b.message = "other";
  EXPECT_TRUE(StatusChanged(a, b));
}

// SameContent is the cheap test before rendering: where it says equal, the content texts must
// be equal; any other field that differs must make it say unequal.
TEST(StatusYamlTest, SameContentIgnoresOnlyTheUpdateTimeAndTheFence) {
  Scene scene;
  ClusterStatus a = scene.Build(nullptr, {}, kT0, {"planned"});
  ASSERT_FALSE(a.nodes.empty());
  ASSERT_FALSE(a.conditions.empty());
  ClusterStatus b = a;
  b.updated = kT0 + std::chrono::hours(1);
  b.fence = Fence{7, "replica-b"};
  EXPECT_TRUE(SameContent(a, b));
  EXPECT_EQ(StatusContentYaml(a), StatusContentYaml(b));
  EXPECT_EQ(a.fence, std::nullopt);  // compared, not changed

  const auto differs = [&](const std::function<void(ClusterStatus&)>& change) {
    ClusterStatus c = a;
    change(c);
    return !SameContent(a, c) && !SameContent(c, a) && StatusChanged(a, c);
  };
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.message += "!"; }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.nodes[0].ready = !c.nodes[0].ready; }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.talos.progress = "9/9"; }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.conditions[0].reason = "Other"; }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.history.push_back({kT0, "more"}); }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.rollout.in_flight.push_back({}); }));
  EXPECT_TRUE(differs([](ClusterStatus& c) { c.labels["team"] = "a"; }));

  // Below the second a time renders the same: not the same fields, yet the same content.
  ClusterStatus finer = a;
  finer.conditions[0].last_transition += std::chrono::milliseconds(300);
  EXPECT_FALSE(SameContent(a, finer));
  EXPECT_FALSE(StatusChanged(a, finer));
}

TEST(StatusYamlTest, RejectsForeignFiles) {
  EXPECT_FALSE(DecodeClusterStatus("status/x.yaml", "kind: Nope\n").ok());
  EXPECT_FALSE(DecodeClusterStatus("status/x.yaml", "").ok());
}

}  // namespace
}  // namespace tr::core
