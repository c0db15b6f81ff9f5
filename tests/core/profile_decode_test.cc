#include "core/profile_decode.h"
#include "core/shards.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::HasSubstr;

constexpr std::string_view kProfilePath = "clusters/prod-eu-1.yaml";

// The profile example of the original design, with the two control planes its endpoints name
// added to spec.nodes and a real schematic id in place of the "<schematic-id>" placeholder.
constexpr std::string_view kProfile = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod-eu-1                 # DNS-1123 label; must match the file name
spec:
  endpoints: [10.0.0.11, 10.0.0.12, 10.0.0.13]   # control-plane apid endpoints (port 50000 default)
  credentials: prod-eu-1          # names a talosconfig under --credentials-dir; never the secret itself
  talos:
    version: 1.12.0
    image: factory.talos.dev/metal-installer/376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba
  kubernetes:
    version: 1.35.0
  nodes:
    - {name: cp-0, address: 10.0.0.11, role: controlplane}
    - {name: cp-1, address: 10.0.0.12, role: controlplane}
    - {name: cp-2, address: 10.0.0.13, role: controlplane}
    - {name: w-0,  address: 10.0.1.21, role: worker}
  policy:
    maxParallelWorkers: 1         # workers upgraded at once (control planes: always one)
    nodeTimeout: 30m              # per node, from upgrade call to healthy
    settle: 30s                   # wait after a node is healthy before the next
    windows:                      # optional maintenance windows; new nodes start only inside one
      - {days: [Sat, Sun], start: "02:00", duration: 4h, timezone: Europe/Oslo}
    healthChecks: []              # extra gates, e.g. http, prometheus query
    etcdSnapshot: true            # snapshot etcd before the first control-plane node
    onFailure: halt               # halt | rollback
    paused: false
    allowDowngrade: false
)";

Decoded<ClusterProfile> DecodeProfile(std::string_view text, const PolicyOverrides& defaults = {},
                               const ValidationOptions& options = {}) {
  return DecodeClusterProfile(kProfilePath, text, defaults, options);
}

TEST(ProfileDecodeTest, DecodesTheDesignExample) {
  Decoded<ClusterProfile> decoded = DecodeProfile(kProfile);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_TRUE(decoded.diagnostics.empty());
  const ClusterProfile& p = *decoded.value;
  EXPECT_EQ(p.file, kProfilePath);
  EXPECT_EQ(p.name, "prod-eu-1");
  EXPECT_THAT(p.endpoints, ElementsAre("10.0.0.11", "10.0.0.12", "10.0.0.13"));
  EXPECT_EQ(p.credentials, "prod-eu-1");
  EXPECT_EQ(p.talos_version.ToString(), "1.12.0");
  EXPECT_EQ(p.kubernetes_version.ToString(), "1.35.0");
  EXPECT_EQ(p.InstallerImage(),
            "factory.talos.dev/metal-installer/"
            "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:v1.12.0");
  ASSERT_EQ(p.nodes.size(), 4u);
  EXPECT_EQ(p.nodes[0].name, "cp-0");
  EXPECT_EQ(p.nodes[0].address, "10.0.0.11");
  EXPECT_EQ(p.nodes[0].role, NodeRole::kControlPlane);
  EXPECT_EQ(p.nodes[3].name, "w-0");
  EXPECT_EQ(p.nodes[3].role, NodeRole::kWorker);
  const Policy& policy = p.policy;
  EXPECT_EQ(policy.max_parallel_workers, 1);
  EXPECT_EQ(policy.node_timeout, minutes(30));
  EXPECT_EQ(policy.settle, seconds(30));
  ASSERT_EQ(policy.windows.size(), 1u);
  EXPECT_THAT(policy.windows[0].days, ElementsAre(0, 6));
  EXPECT_EQ(policy.windows[0].start, minutes(120));
  EXPECT_EQ(policy.windows[0].duration, minutes(240));
  EXPECT_EQ(policy.windows[0].timezone, "Europe/Oslo");
  EXPECT_TRUE(policy.health_checks.empty());
  EXPECT_TRUE(policy.etcd_snapshot);
  EXPECT_EQ(policy.on_failure, FailureAction::kHalt);
  EXPECT_FALSE(policy.paused);
  EXPECT_FALSE(policy.allow_downgrade);
  EXPECT_EQ(policy.upgrade_order, UpgradeOrder::kTalosFirst);
  EXPECT_TRUE(p.policy_overrides.windows.has_value());
  EXPECT_FALSE(p.policy_overrides.upgrade_order.has_value());
}

// kProfile with `labels` (the lines given, each indented under it) after metadata.name.
std::string WithLabels(std::string_view lines) {
  return ReplaceOnce(kProfile, "match the file name\n",
                     fmt::format("match the file name\n  labels:\n{}", lines));
}

TEST(ProfileDecodeTest, LabelsAreReadAsWritten) {
  EXPECT_TRUE(DecodeProfile(kProfile).value->labels.empty());
  Decoded<ClusterProfile> decoded =
      DecodeProfile(WithLabels("    env: prod\n"
                        "    app.kubernetes.io/part-of: Payments_v2\n"
                        "    tier: \"3\"\n"
                        "    canary: \"\"\n"
                        "    \"true\": \"on\"\n"));
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_EQ(decoded.value->labels,
            (std::map<std::string, std::string>{{"app.kubernetes.io/part-of", "Payments_v2"},
                                                {"canary", ""},
                                                {"env", "prod"},
                                                {"tier", "3"},
                                                {"true", "on"}}));
  EXPECT_TRUE(DecodeProfile(ReplaceOnce(WithLabels(""), "  labels:\n", "  labels: {}\n")).ok());
}

// metadata.annotations: anyone's keys are kept out of the way; in the project's own prefix only
// the retry token is read, and a misspelt key is an error rather than a retry that never comes.
TEST(ProfileDecodeTest, AnnotationsCarryTheRetryTokenAndRefuseUnknownKeysOfOurs) {
  EXPECT_EQ(DecodeProfile(kProfile).value->retry_token, "");
  const auto with = [](std::string_view lines) {
    return ReplaceOnce(kProfile, "match the file name\n",
                       fmt::format("match the file name\n  annotations:\n{}", lines));
  };
  Decoded<ClusterProfile> decoded = DecodeProfile(
      with("    talos-reconciler.dev/retry: \"2026-12-02T10:15:00Z\"\n"
           "    example.com/owner: platform team\n"));
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_EQ(decoded.value->retry_token, "2026-12-02T10:15:00Z");
  EXPECT_THAT(DiagnosticStrings(DecodeProfile(with("    talos-reconciler.dev/rety: \"1\"\n")).diagnostics),
              ElementsAre(HasSubstr("is not an annotation the reconciler reads (it reads "
                                    "talos-reconciler.dev/retry)")));
  EXPECT_FALSE(DecodeProfile(with("    talos-reconciler.dev/retry: \"" + std::string(300, 'x') +
                                  "\"\n"))
                   .ok());
}

TEST(ProfileDecodeTest, InstallerStoreIsSystemUnlessInmemIsAsked) {
  EXPECT_EQ(DecodeProfile(kProfile).value->talos_installer_store, InstallerStore::kSystem);
  const auto with = [](std::string_view store) {
    return ReplaceOnce(kProfile, "  kubernetes:\n",
                       "    installerStore: " + std::string(store) + "\n  kubernetes:\n");
  };
  Decoded<ClusterProfile> inmem = DecodeProfile(with("inmem"));
  ASSERT_TRUE(inmem.ok()) << testing::PrintToString(DiagnosticStrings(inmem.diagnostics));
  EXPECT_EQ(inmem.value->talos_installer_store, InstallerStore::kInMemory);
  EXPECT_EQ(DecodeProfile(with("system")).value->talos_installer_store, InstallerStore::kSystem);
  EXPECT_THAT(DiagnosticStrings(DecodeProfile(with("cri")).diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:11:21: spec.talos.installerStore: must be "
                          "system or inmem"));
}

TEST(ProfileDecodeTest, ShardPinsTheClusterWithinTheShardCount) {
  EXPECT_FALSE(DecodeProfile(kProfile).value->shard.has_value());
  const std::string pinned = ReplaceOnce(kProfile, "  policy:\n", "  shard: 3\n  policy:\n");
  ValidationOptions four;
  four.shards = 4;
  Decoded<ClusterProfile> decoded = DecodeProfile(pinned, {}, four);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  EXPECT_EQ(decoded.value->shard, 3);
  EXPECT_EQ(ShardOf(decoded.value->name, decoded.value->shard, 4), 3);
  EXPECT_EQ(ShardOf("prod-eu-1", std::nullopt, 4), ShardOf("prod-eu-1", 4));
  // No shard count known (validate without --shards): any shard 0..1023 passes.
  EXPECT_EQ(DecodeProfile(pinned).value->shard, 3);
  ValidationOptions three;
  three.shards = 3;
  EXPECT_THAT(DiagnosticStrings(DecodeProfile(pinned, {}, three).diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:18:10: spec.shard: must be below the number "
                          "of shards, 3 (--shards)"));
  EXPECT_FALSE(DecodeProfile(pinned, {}, three).ok());
  for (const char* bad : {"-1", "two", "\"1\""}) {
    const std::string text = ReplaceOnce(kProfile, "  policy:\n",
                                         std::string("  shard: ") + bad + "\n  policy:\n");
    EXPECT_FALSE(DecodeProfile(text).ok()) << bad;
  }
}

TEST(ProfileDecodeTest, TheLiteralDesignExampleNamesItsTwoGaps) {
  // The example as first designed lists endpoints .12 and .13 without their nodes and an image with a
  // "<schematic-id>" placeholder; both are reported.
  std::string text = ReplaceOnce(kProfile,
                                 "    - {name: cp-1, address: 10.0.0.12, role: controlplane}\n"
                                 "    - {name: cp-2, address: 10.0.0.13, role: controlplane}\n",
                                 "");
  text = ReplaceOnce(text, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba",
                     "<schematic-id>");
  EXPECT_THAT(
      DiagnosticStrings(DecodeProfile(text).diagnostics),
      ElementsAre("clusters/prod-eu-1.yaml:6:26: spec.endpoints[1]: 10.0.0.12 is not the address "
                  "of a controlplane node in spec.nodes",
                  "clusters/prod-eu-1.yaml:6:37: spec.endpoints[2]: 10.0.0.13 is not the address "
                  "of a controlplane node in spec.nodes",
                  "clusters/prod-eu-1.yaml:10:12: spec.talos.image: must not contain whitespace or "
                  "shell metacharacters"));
}

TEST(ProfileDecodeTest, MinimalProfileGetsTheDefaultsMergedInOrder) {
  const std::string minimal = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {name: prod-eu-1}
spec:
  endpoints: ["[fd00::1]:50000"]
  credentials: prod-eu-1
  talos: {version: v1.11.6, image: ghcr.io/siderolabs/installer}
  kubernetes: {version: "1.34.1"}
  nodes:
    - {name: cp-0, address: "fd00::1", role: controlplane}
  policy: {settle: 0s, onFailure: rollback}
)";
  PolicyOverrides defaults;
  defaults.settle = seconds(99);
  defaults.max_parallel_workers = 3;
  defaults.paused = true;
  Decoded<ClusterProfile> decoded = DecodeProfile(minimal, defaults);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const Policy& policy = decoded.value->policy;
  EXPECT_EQ(policy.settle, seconds(0));         // the profile's own key wins
  EXPECT_EQ(policy.max_parallel_workers, 3);    // reconciler.yaml's default
  EXPECT_TRUE(policy.paused);                   // reconciler.yaml's default
  EXPECT_EQ(policy.node_timeout, minutes(30));  // built in
  EXPECT_EQ(policy.on_failure, FailureAction::kRollback);
  EXPECT_EQ(decoded.value->talos_version.Tag(), "v1.11.6");
}

struct EditCase {
  std::string name;
  std::string from;  // replaced once in kProfile
  std::string to;
  std::vector<std::string> diagnostics;
};

class ProfileEditTest : public testing::TestWithParam<EditCase> {};

TEST_P(ProfileEditTest, ReportsExactly) {
  const EditCase& c = GetParam();
  const std::string text = ReplaceOnce(kProfile, c.from, c.to);
  ASSERT_FALSE(text.empty()) << "\"" << c.from << "\" must occur once in the base profile";
  Decoded<ClusterProfile> decoded = DecodeProfile(text);
  EXPECT_EQ(decoded.ok(), c.diagnostics.empty());
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics), ElementsAreArray(c.diagnostics));
}

std::string ProfileAt(int line, int column, std::string_view path, std::string_view message) {
  return fmt::format("clusters/prod-eu-1.yaml:{}:{}: {}: {}", line, column, path, message);
}

const EditCase kEditCases[] = {
    {"WrongApiVersion",
     "talos-reconciler.dev/v1alpha1",
     "talos-reconciler.dev/v1",
     {ProfileAt(1, 13, "apiVersion", "must be talos-reconciler.dev/v1alpha1")}},
    {"WrongKind",
     "kind: ClusterProfile",
     "kind: Cluster",
     {ProfileAt(2, 7, "kind", "must be ClusterProfile")}},
    {"MissingKind", "kind: ClusterProfile\n", "", {ProfileAt(1, 1, "kind", "is required")}},
    {"UnknownTopLevelKey",
     "kind: ClusterProfile\n",
     "kind: ClusterProfile\nstatus: {}\n",
     {ProfileAt(3, 1, "status", "unknown key \"status\"")}},
    {"UnknownKeyWithSuggestion",
     "    settle: 30s",
     "    setle: 30s",
     {ProfileAt(21, 5, "spec.policy.setle", "unknown key \"setle\" (did you mean \"settle\"?)")}},
    {"UnknownNodeKey",
     "{name: w-0,  address: 10.0.1.21, role: worker}",
     "{name: w-0,  address: 10.0.1.21, role: worker, labels: x}",
     {ProfileAt(17, 54, "spec.nodes[3].labels", "unknown key \"labels\"")}},
    {"NameNotDns",
     "  name: prod-eu-1 ",
     "  name: Prod_EU ",
     {ProfileAt(4, 9, "metadata.name",
         "must be a DNS-1123 label: 1-63 lowercase letters, digits or '-', starting and ending "
         "with a letter or digit")}},
    {"NameNotFileName",
     "  name: prod-eu-1 ",
     "  name: prod-eu-2 ",
     {ProfileAt(4, 9, "metadata.name",
         "must match the file name: \"prod-eu-1\" (clusters/prod-eu-1.yaml)")}},
    {"MetadataNotMapping",
     "metadata:\n  name: prod-eu-1                 # DNS-1123 label; must "
     "match the file name\n",
     "metadata: prod-eu-1\n",
     {ProfileAt(3, 11, "metadata", "must be a mapping, not a string")}},
    {"LabelKeyName",
     "match the file name\n",
     "match the file name\n  labels:\n    -env: prod\n",
     {ProfileAt(6, 5, "metadata.labels.-env",
         "label key name \"-env\" must be letters, digits, '-', '_' or '.', starting and ending "
         "with a letter or digit")}},
    {"LabelKeyNameTooLong",
     "match the file name\n",
     "match the file name\n  labels:\n    " + std::string(64, 'k') + ": prod\n",
     {ProfileAt(6, 5, "metadata.labels." + std::string(64, 'k'),
         "label key name must be at most 63 characters, not 64")}},
    {"LabelKeyPrefix",
     "match the file name\n",
     "match the file name\n  labels:\n    Example.com/env: prod\n",
     {ProfileAt(6, 5, "metadata.labels[\"Example.com/env\"]",
         "label key prefix \"Example.com\" must be a DNS-1123 name: lowercase letters, digits, "
         "'-' and '.', each dot-separated part starting and ending with a letter or digit, at "
         "most 253 characters")}},
    {"LabelKeyTwoSlashes",
     "match the file name\n",
     "match the file name\n  labels:\n    a/b/c: prod\n",
     {ProfileAt(6, 5, "metadata.labels[\"a/b/c\"]",
         "label key must be name or prefix/name, with one '/' at most")}},
    {"LabelKeyEmptyPrefix",
     "match the file name\n",
     "match the file name\n  labels:\n    /env: prod\n",
     {ProfileAt(6, 5, "metadata.labels[\"/env\"]", "label key prefix before '/' must not be empty")}},
    {"LabelValue",
     "match the file name\n",
     "match the file name\n  labels:\n    env: prod eu\n",
     {ProfileAt(6, 10, "metadata.labels.env",
         "label value must be empty or letters, digits, '-', '_' or '.', starting and ending "
         "with a letter or digit")}},
    {"LabelValueTooLong",
     "match the file name\n",
     "match the file name\n  labels:\n    env: " + std::string(64, 'v') + "\n",
     {ProfileAt(6, 10, "metadata.labels.env", "label value must be at most 63 characters, not 64")}},
    {"LabelValueBoolean",
     "match the file name\n",
     "match the file name\n  labels:\n    canary: true\n",
     {ProfileAt(6, 13, "metadata.labels.canary",
         "must be a string; write \"true\" in quotes if you mean the text")}},
    {"LabelValueList",
     "match the file name\n",
     "match the file name\n  labels:\n    env: [prod]\n",
     {ProfileAt(6, 10, "metadata.labels.env", "must be a string, not a list")}},
    {"LabelKeyAndValueBothReported",
     "match the file name\n",
     "match the file name\n  labels:\n    env_: -prod\n    team: a\n",
     {ProfileAt(6, 5, "metadata.labels.env_",
         "label key name \"env_\" must be letters, digits, '-', '_' or '.', starting and ending "
         "with a letter or digit"),
      ProfileAt(6, 11, "metadata.labels.env_",
         "label value must be empty or letters, digits, '-', '_' or '.', starting and ending "
         "with a letter or digit")}},
    {"LabelsNotMapping",
     "match the file name\n",
     "match the file name\n  labels: [env]\n",
     {ProfileAt(5, 11, "metadata.labels", "must be a mapping, not a list")}},
    {"UnknownMetadataKey",
     "match the file name\n",
     "match the file name\n  lables: {env: prod}\n",
     {ProfileAt(5, 3, "metadata.lables", "unknown key \"lables\" (did you mean \"labels\"?)")}},
    {"BadRole",
     "{name: cp-2, address: 10.0.0.13, role: controlplane}",
     "{name: cp-2, address: 10.0.0.13, role: master}",
     {ProfileAt(16, 46, "spec.nodes[2].role", "must be controlplane or worker")}},
    {"DuplicateNodeName",
     "{name: cp-2, address",
     "{name: cp-1, address",
     {ProfileAt(16, 14, "spec.nodes[2].name", "\"cp-1\" is already used by spec.nodes[1]")}},
    {"DuplicateNodeAddress",
     "address: 10.0.1.21",
     "address: 10.0.0.12",
     {ProfileAt(17, 29, "spec.nodes[3].address", "\"10.0.0.12\" is already used by spec.nodes[1]")}},
    {"NodeAddressWithPort",
     "address: 10.0.1.21",
     "address: \"10.0.1.21:50000\"",
     {ProfileAt(17, 29, "spec.nodes[3].address",
         "must be an IPv4 address, an IPv6 address or a lowercase DNS name, without a port")}},
    {"NodeMissingRole",
     "{name: w-0,  address: 10.0.1.21, role: worker}",
     "{name: w-0,  address: 10.0.1.21}",
     {ProfileAt(17, 7, "spec.nodes[3].role", "is required")}},
    {"NodeNotMapping",
     "    - {name: w-0,  address: 10.0.1.21, role: worker}\n",
     "    - w-0\n",
     {ProfileAt(17, 7, "spec.nodes[3]", "must be a mapping, not a string")}},
    {"NoControlPlane",
     "    - {name: cp-0, address: 10.0.0.11, role: controlplane}\n"
     "    - {name: cp-1, address: 10.0.0.12, role: controlplane}\n"
     "    - {name: cp-2, address: 10.0.0.13, role: controlplane}\n",
     "",
     {ProfileAt(14, 5, "spec.nodes", "must include at least one controlplane node")}},
    {"NoNodes",
     "  nodes:\n",
     "  nodes: []\n  unused:\n",
     {ProfileAt(13, 10, "spec.nodes", "must list at least one node"),
      ProfileAt(14, 3, "spec.unused", "unknown key \"unused\"")}},
    {"EndpointIsWorker",
     "10.0.0.13]",
     "10.0.1.21]",
     {ProfileAt(6, 37, "spec.endpoints[2]",
         "10.0.1.21 is the address of worker \"w-0\"; endpoints must be controlplane nodes")}},
    {"EndpointUnknown",
     "10.0.0.13]",
     "10.9.9.9]",
     {ProfileAt(6, 37, "spec.endpoints[2]",
         "10.9.9.9 is not the address of a controlplane node in spec.nodes")}},
    {"EndpointWithPort", "10.0.0.13]", "\"10.0.0.13:50001\"]", {}},
    {"EndpointBadPort",
     "10.0.0.13]",
     "\"10.0.0.13:70000\"]",
     {ProfileAt(6, 37, "spec.endpoints[2]",
         "endpoint \"10.0.0.13:70000\" must be host or host:port with a port from 1 to 65535")}},
    {"EndpointTwice",
     "10.0.0.13]",
     "10.0.0.12]",
     {ProfileAt(6, 37, "spec.endpoints[2]", "\"10.0.0.12\" is already listed at spec.endpoints[1]")}},
    {"EndpointsEmpty",
     "[10.0.0.11, 10.0.0.12, 10.0.0.13]",
     "[]",
     {ProfileAt(6, 14, "spec.endpoints", "must list at least one control-plane endpoint")}},
    {"EndpointsScalar",
     "[10.0.0.11, 10.0.0.12, 10.0.0.13]",
     "10.0.0.11",
     {ProfileAt(6, 14, "spec.endpoints", "must be a list, not a string")}},
    {"CredentialsPath",
     "credentials: prod-eu-1",
     "credentials: ../../etc/talosconfig",
     {ProfileAt(7, 16, "spec.credentials",
         "must be a simple name (letters, digits, '.', '_', '-'; no slashes, no \"..\", not "
         "starting with '.'), naming a talosconfig in the credentials directory")}},
    {"CredentialsMissing",
     "  credentials: prod-eu-1          # names a talosconfig under --credentials-dir; never the "
     "secret itself\n",
     "",
     {ProfileAt(6, 3, "spec.credentials", "is required")}},
    {"TalosVersionTwoParts",
     "version: 1.12.0",
     "version: 1.12",
     {ProfileAt(9, 14, "spec.talos.version", "invalid Talos version \"1.12\": want MAJOR.MINOR.PATCH")}},
    {"TalosVersionNumberish",
     "version: 1.12.0",
     "version: 1.120",
     {ProfileAt(9, 14, "spec.talos.version", "invalid Talos version \"1.120\": want MAJOR.MINOR.PATCH")}},
    {"TalosVersionMapping",
     "version: 1.12.0",
     "version: {major: 1}",
     {ProfileAt(9, 14, "spec.talos.version", "must be a Talos version such as 1.12.0, not a mapping")}},
    {"TalosVersionQuoted", "version: 1.12.0", "version: \"v1.12.0\"", {}},
    {"KubernetesVersionBad",
     "version: 1.35.0",
     "version: 1.35.x",
     {ProfileAt(12, 14, "spec.kubernetes.version",
         "invalid Kubernetes version \"1.35.x\": MAJOR, MINOR and PATCH must be numbers without "
         "leading zeros")}},
    {"KubernetesMissing",
     "  kubernetes:\n    version: 1.35.0\n",
     "",
     {ProfileAt(6, 3, "spec.kubernetes", "is required")}},
    {"ImageWithTag",
     "b4ba\n",
     "b4ba:v1.12.0\n",
     {ProfileAt(10, 12, "spec.talos.image",
         "must not have a tag; the reconciler adds :v<talos.version> itself")}},
    {"ImageWithDigest",
     "b4ba\n",
     "b4ba@sha256:0000\n",
     {ProfileAt(10, 12, "spec.talos.image",
         "must not have a digest (@sha256:...); write the repository only")}},
    {"ImageUppercase",
     "metal-installer",
     "Metal-Installer",
     {ProfileAt(10, 12, "spec.talos.image", "repository path must be lowercase")}},
    {"ImageShell",
     "b4ba\n",
     "b4ba;reboot\n",
     {ProfileAt(10, 12, "spec.talos.image", "must not contain whitespace or shell metacharacters")}},
    {"MaxParallelZero",
     "maxParallelWorkers: 1 ",
     "maxParallelWorkers: 0 ",
     {ProfileAt(19, 25, "spec.policy.maxParallelWorkers", "must be at least 1")}},
    {"MaxParallelQuoted",
     "maxParallelWorkers: 1 ",
     "maxParallelWorkers: \"2\" ",
     {ProfileAt(19, 25, "spec.policy.maxParallelWorkers", "must be a whole number, without quotes")}},
    {"NodeTimeoutZero",
     "nodeTimeout: 30m",
     "nodeTimeout: 0s",
     {ProfileAt(20, 18, "spec.policy.nodeTimeout", "must be longer than zero")}},
    {"NodeTimeoutNoUnit",
     "nodeTimeout: 30m",
     "nodeTimeout: 30",
     {ProfileAt(20, 18, "spec.policy.nodeTimeout",
         "invalid duration \"30\": missing unit: write s, m or h after the number, e.g. 30s")}},
    {"SettleNegative",
     "settle: 30s",
     "settle: -30s",
     {ProfileAt(21, 13, "spec.policy.settle", "invalid duration \"-30s\": must not be negative")}},
    {"OnFailureBad",
     "onFailure: halt",
     "onFailure: stop",
     {ProfileAt(26, 16, "spec.policy.onFailure", "must be halt or rollback")}},
    {"PausedString",
     "paused: false",
     "paused: \"false\"",
     {ProfileAt(27, 13, "spec.policy.paused", "must be true or false, without quotes")}},
    {"PausedYes",
     "paused: false",
     "paused: yes",
     {ProfileAt(27, 13, "spec.policy.paused", "must be true or false")}},
    {"UpgradeOrderBad",
     "    allowDowngrade: false\n",
     "    allowDowngrade: false\n    upgradeOrder: k8s-first\n",
     {ProfileAt(29, 19, "spec.policy.upgradeOrder", "must be talos-first or kubernetes-first")}},
    {"DrainOnTimeoutBad",
     "    allowDowngrade: false\n",
     "    allowDowngrade: false\n    drain:\n      timeout: 10m\n      onTimeout: evict\n",
     {ProfileAt(31, 18, "spec.policy.drain.onTimeout", "must be halt or force")}},
    {"DrainTimeoutBad",
     "    allowDowngrade: false\n",
     "    allowDowngrade: false\n    drain: {timeout: 10 minutes}\n",
     {ProfileAt(29, 22, "spec.policy.drain.timeout",
         "invalid duration \"10 minutes\": unknown unit; use h, m or s (e.g. 1h30m)")}},
    {"HealthChecksNotList",
     "healthChecks: []",
     "healthChecks: {}",
     {ProfileAt(24, 19, "spec.policy.healthChecks", "must be a list, not a mapping")}},
    {"PolicyNull",
     "  policy:\n",
     "  policy:\n  other:\n",
     {ProfileAt(18, 3, "spec.policy", "must be a mapping, not nothing"),
      ProfileAt(19, 3, "spec.other", "unknown key \"other\"")}},
    {"SpecList",
     "spec:\n",
     "spec: []\nx:\n",
     {ProfileAt(5, 7, "spec", "must be a mapping, not a list"), ProfileAt(6, 1, "x", "unknown key \"x\"")}},
};

INSTANTIATE_TEST_SUITE_P(Cases, ProfileEditTest, testing::ValuesIn(kEditCases),
                         [](const testing::TestParamInfo<EditCase>& param_info) {
                           return param_info.param.name;
                         });

TEST(ProfileDecodeTest, ReportsIndependentErrorsTogether) {
  std::string text = ReplaceOnce(kProfile, "kind: ClusterProfile", "kind: Profile");
  text = ReplaceOnce(text, "address: 10.0.1.21, role: worker", "address: 10.0.1.21, role: boss");
  text = ReplaceOnce(text, "version: 1.35.0", "version: latest");
  text = ReplaceOnce(text, "onFailure: halt", "onFailure: panic");
  EXPECT_THAT(DiagnosticStrings(DecodeProfile(text).diagnostics),
              ElementsAre(ProfileAt(2, 7, "kind", "must be ClusterProfile"),
                          ProfileAt(12, 14, "spec.kubernetes.version",
                             "invalid Kubernetes version \"latest\": want MAJOR.MINOR.PATCH"),
                          ProfileAt(17, 46, "spec.nodes[3].role", "must be controlplane or worker"),
                          ProfileAt(26, 16, "spec.policy.onFailure", "must be halt or rollback")));
}

TEST(ProfileDecodeTest, EmptyAndNonMappingDocuments) {
  EXPECT_THAT(DiagnosticStrings(DecodeProfile("").diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:1:1: file is empty"));
  EXPECT_THAT(DiagnosticStrings(DecodeProfile("# just a comment\n").diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:1:1: file is empty"));
  EXPECT_THAT(DiagnosticStrings(DecodeProfile("- a\n- b\n").diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:1:1: must be a mapping, not a list"));
  EXPECT_THAT(DiagnosticStrings(DecodeProfile("hello\n").diagnostics),
              ElementsAre("clusters/prod-eu-1.yaml:1:1: must be a mapping, not a string"));
  EXPECT_THAT(DiagnosticStrings(DecodeProfile("apiVersion: talos-reconciler.dev/v1alpha1\n").diagnostics),
              ElementsAre(ProfileAt(1, 1, "kind", "is required"), ProfileAt(1, 1, "metadata", "is required"),
                          ProfileAt(1, 1, "spec", "is required")));
}

TEST(ProfileDecodeTest, ClusterNameFromPath) {
  EXPECT_EQ(ClusterNameFromPath("clusters/prod.yaml"), "prod");
  EXPECT_EQ(ClusterNameFromPath("clusters/prod.yml"), "prod");
  EXPECT_EQ(ClusterNameFromPath("prod.yaml"), "prod");
  EXPECT_EQ(ClusterNameFromPath("clusters/prod"), "prod");
}

}  // namespace
}  // namespace tr::core
