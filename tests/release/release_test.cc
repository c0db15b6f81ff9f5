// scripts/release.d on the test build's talos-reconciler: the image's file tree runs the binary
// with the libraries it carries, the OCI layout is reproducible, is pushed to Debian's
// docker-registry and read back digest for digest, and the SBOM names the Debian packages linked
// with the versions dpkg has installed.
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/reconciler/real_registry.h"
#include "tests/support/process.h"

namespace tr::release {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::MustRun;
using gitsource::testing::ProcessResult;
using gitsource::testing::ReadFile;
using gitsource::testing::RunCommand;
using gitsource::testing::RunOptions;
using ::testing::HasSubstr;

const fs::path kSource = TR_SOURCE_DIR;
const fs::path kBinary = fs::path(TR_BINARY_DIR) / "reconciler/talos-reconciler";

RunOptions Release() {
  RunOptions options;
  options.working_dir = kSource;
  options.extra_env = {"SOURCE_DATE_EPOCH=1764644400", "TR_RELEASE_COMMIT=0123abcd"};
  options.timeout = std::chrono::minutes(5);
  return options;
}

nlohmann::json Blob(const fs::path& layout, const std::string& digest) {
  return nlohmann::json::parse(ReadFile(layout / "blobs/sha256" / digest.substr(7)));
}

class ReleasePiecesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new gitsource::testing::TempDir();
    MustRun({"scripts/release.d/rootfs", kBinary.string(), Rootfs().string()}, Release());
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  static fs::path Rootfs() { return *tmp_ / "rootfs"; }
  // An OCI layout of the tree in `dir`: the manifest's descriptor.
  static nlohmann::json Image(const fs::path& layout) {
    const std::string descriptor = MustRun(
        {"scripts/release.d/oci-image", Rootfs().string(), "amd64", "0.1.0", layout.string()},
        Release());
    return nlohmann::json::parse(descriptor);
  }
  static gitsource::testing::TempDir* tmp_;
};
gitsource::testing::TempDir* ReleasePiecesTest::tmp_ = nullptr;

TEST_F(ReleasePiecesTest, TheImagesTreeRunsTheBinaryWithTheLibrariesItCarries) {
  const fs::path root = Rootfs();
  const std::string libs = (root / "lib/x86_64-linux-gnu").string() + ":" +
                           (root / "usr/lib/x86_64-linux-gnu").string();
  // The tree's own loader and libraries, none of the host's.
  const ProcessResult version =
      RunCommand({(root / "lib64/ld-linux-x86-64.so.2").string(), "--inhibit-cache",
                  "--library-path", libs, (root / "usr/local/bin/talos-reconciler").string(),
                  "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("(commit "));
  for (const char* file : {"usr/bin/ssh", "etc/ssl/certs/ca-certificates.crt",
                           "usr/share/zoneinfo/Europe/Berlin", "etc/passwd"}) {
    EXPECT_TRUE(fs::exists(root / file)) << file;
  }
  EXPECT_THAT(ReadFile(root / "etc/passwd"), HasSubstr("reconciler:x:65532:65532:"));
}

TEST_F(ReleasePiecesTest, TheImageIsReproducibleNonRootAndLabelled) {
  const fs::path a = *tmp_ / "layout-a";
  const fs::path b = *tmp_ / "layout-b";
  const nlohmann::json first = Image(a);
  EXPECT_EQ(first, Image(b)) << "two runs on the same tree and date differ";
  EXPECT_EQ(first["platform"]["architecture"], "amd64");
  const nlohmann::json manifest = Blob(a, first["digest"]);
  EXPECT_EQ(manifest["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  const nlohmann::json config = Blob(a, manifest["config"]["digest"]);
  EXPECT_EQ(config["config"]["User"], "65532:65532");
  EXPECT_EQ(config["config"]["Entrypoint"][0], "/usr/local/bin/talos-reconciler");
  EXPECT_EQ(config["created"], "2025-12-02T03:00:00Z");
  const nlohmann::json& labels = config["config"]["Labels"];
  EXPECT_EQ(labels["org.opencontainers.image.version"], "0.1.0");
  EXPECT_EQ(labels["org.opencontainers.image.revision"], "0123abcd");
  EXPECT_EQ(labels["org.opencontainers.image.licenses"], "Apache-2.0");
  // The layer: the binary, and the state directory owned by the image's user.
  const std::string layer = (a / "blobs/sha256" /
                             manifest["layers"][0]["digest"].get<std::string>().substr(7))
                                .string();
  const std::string listing = MustRun({"tar", "-tvzf", layer});
  EXPECT_THAT(listing, ::testing::ContainsRegex("-rwxr-xr-x 0/0 +[0-9]+ [-0-9: ]+ "
                                                "\\./usr/local/bin/talos-reconciler\n"));
  EXPECT_THAT(listing, ::testing::ContainsRegex("drwxr-x--- 65532/65532 .* \\./var/lib/talos-reconciler/"));
  EXPECT_THAT(listing, ::testing::ContainsRegex("drwxrwxrwt 0/0 .* \\./tmp/"));
}

TEST_F(ReleasePiecesTest, TheIndexIsPushedToARegistryAndReadBack) {
  const fs::path layout = *tmp_ / "layout-push";
  const nlohmann::json manifest = Image(layout);
  const std::string index = MustRun(
      {"scripts/release.d/oci-index", layout.string(), "0.1.0", manifest.dump()}, Release());
  const nlohmann::json layout_index = nlohmann::json::parse(ReadFile(layout / "index.json"));
  EXPECT_EQ(layout_index["manifests"][0]["digest"], index);
  EXPECT_EQ(layout_index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
            "0.1.0");

  reconciler::registry::RealRegistry registry;
  ASSERT_TRUE(registry.running());
  const std::string pushed = MustRun({"scripts/release.d/oci-push", layout.string(),
                                      registry.origin(), "talos-reconciler", "0.1.0"},
                                     Release());
  EXPECT_EQ(pushed, "talos-reconciler:0.1.0@" + index);
  // Read independently of the script: the tag names the index, which names the manifest.
  const ProcessResult served =
      RunCommand({"curl", "-fsS", "-H", "Accept: application/vnd.oci.image.index.v1+json",
                  registry.origin() + "/v2/talos-reconciler/manifests/0.1.0"});
  ASSERT_EQ(served.exit_code, 0) << served.err;
  EXPECT_EQ(reconciler::registry::Sha256Digest(served.out), index);
  EXPECT_EQ(nlohmann::json::parse(served.out)["manifests"][0]["digest"], manifest["digest"]);

  // A blob damaged in the layout fails the push (the registry checks what it is sent).
  const std::string layer = Blob(layout, manifest["digest"])["layers"][0]["digest"];
  const fs::path other = *tmp_ / "layout-push-damaged";
  fs::copy(layout, other, fs::copy_options::recursive);
  fs::permissions(other / "blobs/sha256" / layer.substr(7), fs::perms::owner_write,
                  fs::perm_options::add);
  gitsource::testing::WriteFile(other / "blobs/sha256" / layer.substr(7), "not the layer");
  const ProcessResult refused =
      RunCommand({"scripts/release.d/oci-push", other.string(), registry.origin(),
                  "talos-reconciler-damaged", "0.1.0"},
                 Release());
  EXPECT_NE(refused.exit_code, 0) << refused.out;
}

TEST_F(ReleasePiecesTest, TheSbomNamesWhatIsLinkedWithItsDebianVersion) {
  const std::string text =
      MustRun({"scripts/release.d/sbom", TR_BINARY_DIR, kBinary.string(), Rootfs().string(),
               "amd64", "0.1.0"},
              Release());
  const nlohmann::json sbom = nlohmann::json::parse(text);
  EXPECT_EQ(sbom["spdxVersion"], "SPDX-2.3");
  EXPECT_EQ(sbom["creationInfo"]["created"], "2025-12-02T03:00:00Z");
  std::map<std::string, std::string> versions;
  for (const auto& p : sbom["packages"]) versions[p["name"]] = p["versionInfo"];
  std::map<std::string, std::set<std::string>> related;
  for (const auto& r : sbom["relationships"]) {
    related[r["relationshipType"]].insert(r["relatedSpdxElement"].get<std::string>());
  }
  // What cmake/static_deps.cmake links statically, what the binary loads, what the image ships.
  for (const auto& [package, relation] :
       std::vector<std::pair<std::string, std::string>>{{"libgrpc++-dev", "STATIC_LINK"},
                                                        {"libgit2-dev", "STATIC_LINK"},
                                                        {"libyaml-cpp-dev", "STATIC_LINK"},
                                                        {"libssl3", "DYNAMIC_LINK"},
                                                        {"libc6", "DYNAMIC_LINK"},
                                                        {"openssh-client", "CONTAINS"},
                                                        {"tzdata", "CONTAINS"}}) {
    ASSERT_TRUE(versions.contains(package)) << package;
    const std::string installed =
        MustRun({"dpkg-query", "-W", "-f", "${Version}", package});
    EXPECT_EQ(versions[package], installed) << package;
    std::string id = "SPDXRef-deb-" + package;
    for (char& c : id) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '-';
    }
    EXPECT_TRUE(related[relation].contains(id)) << package << " " << relation;
  }
  // Header-only libraries compiled in are there too; the test libraries are not.
  EXPECT_TRUE(versions.contains("nlohmann-json3-dev"));
  EXPECT_FALSE(versions.contains("libgtest-dev"));
}

}  // namespace
}  // namespace tr::release
