#include "core/names.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

TEST(Dns1123Test, Labels) {
  for (const std::string& good :
       std::vector<std::string>{"a", "prod-eu-1", "0", "a-b-c", std::string(63, 'a')}) {
    EXPECT_TRUE(CheckDns1123Label(good).ok()) << good;
  }
  for (const std::string& bad : std::vector<std::string>{"", "-a", "a-", "Prod", "a.b", "a_b",
                                                         "a b", "\xC3\xA9", std::string(64, 'a')}) {
    absl::Status s = CheckDns1123Label(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              "must be a DNS-1123 label: 1-63 lowercase letters, digits or '-', starting and "
              "ending with a letter or digit");
  }
}

TEST(Dns1123Test, Subdomains) {
  for (std::string_view good : {"cp-0", "cp-0.example.com", "w.1"}) {
    EXPECT_TRUE(CheckDns1123Subdomain(good).ok()) << good;
  }
  for (std::string_view bad : {"", ".a", "a.", "a..b", "A.b", "a_b"}) {
    EXPECT_EQ(CheckDns1123Subdomain(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(CheckDns1123Subdomain(std::string(254, 'a')).ok());
}

TEST(AddressTest, Ipv4) {
  for (std::string_view good : {"10.0.0.11", "0.0.0.0", "255.255.255.255", "127.0.0.1"}) {
    EXPECT_TRUE(IsIpv4Address(good)) << good;
  }
  for (std::string_view bad :
       {"10.0.0", "10.0.0.256", "10.0.0.011", "10.0.0.1.", "a.b.c.d", "10.0.0.-1", "", "1..2.3"}) {
    EXPECT_FALSE(IsIpv4Address(bad)) << bad;
  }
}

TEST(AddressTest, Ipv6) {
  for (std::string_view good : {"::", "::1", "fd00::11", "2001:db8:0:0:0:0:0:1", "::ffff:10.0.0.1",
                                "fe80::1:2:3:4:5:6", "FD00::A"}) {
    EXPECT_TRUE(IsIpv6Address(good)) << good;
  }
  for (std::string_view bad :
       {":", ":::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "fd00::1::2", "fd00::g",
        "12345::", "[fd00::1]", "fe80::1%eth0", "1::2:3:4:5:6:7:8", "10.0.0.1::"}) {
    EXPECT_FALSE(IsIpv6Address(bad)) << bad;
  }
}

TEST(AddressTest, NodeAddresses) {
  for (std::string_view good : {"10.0.0.11", "fd00::11", "cp-0.example.com", "node1"}) {
    EXPECT_TRUE(CheckNodeAddress(good).ok()) << good;
  }
  for (std::string_view bad :
       {"10.0.0.256", "10.0.0.11:50000", "[fd00::1]", "Node1", "", "1.2.3", "a b"}) {
    absl::Status s = CheckNodeAddress(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              "must be an IPv4 address, an IPv6 address or a lowercase DNS name, without a port");
  }
}

struct EndpointCase {
  std::string text;
  std::string host;  // empty: invalid
  int port;
};

class EndpointTest : public testing::TestWithParam<EndpointCase> {};

TEST_P(EndpointTest, ParsesHostAndPort) {
  const EndpointCase& c = GetParam();
  absl::StatusOr<Endpoint> e = ParseEndpoint(c.text);
  if (c.host.empty()) {
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_EQ(e.status().message(),
              "endpoint \"" + c.text + "\" must be host or host:port with a port from 1 to 65535");
    return;
  }
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->host, c.host);
  EXPECT_EQ(e->port, c.port);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EndpointTest,
    testing::Values(EndpointCase{"10.0.0.11", "10.0.0.11", 50000},
                    EndpointCase{"10.0.0.11:50001", "10.0.0.11", 50001},
                    EndpointCase{"10.0.0.11:1", "10.0.0.11", 1},
                    EndpointCase{"10.0.0.11:65535", "10.0.0.11", 65535},
                    EndpointCase{"cp.example.com:443", "cp.example.com", 443},
                    EndpointCase{"fd00::11", "fd00::11", 50000},
                    EndpointCase{"[fd00::11]", "fd00::11", 50000},
                    EndpointCase{"[fd00::11]:6443", "fd00::11", 6443},
                    EndpointCase{"10.0.0.11:0", "", 0}, EndpointCase{"10.0.0.11:65536", "", 0},
                    EndpointCase{"10.0.0.11:", "", 0}, EndpointCase{"10.0.0.11:-1", "", 0},
                    EndpointCase{"10.0.0.11:080", "", 0}, EndpointCase{"10.0.0.11:http", "", 0},
                    EndpointCase{"[fd00::11]:", "", 0}, EndpointCase{"[fd00::11", "", 0},
                    EndpointCase{"[10.0.0.1]:80", "", 0}, EndpointCase{"https://10.0.0.1", "", 0},
                    EndpointCase{"", "", 0}, EndpointCase{":50000", "", 0}));

TEST(CredentialsTest, SimpleNamesOnly) {
  for (std::string_view good : {"prod-eu-1", "Prod_EU.1", "a"}) {
    EXPECT_TRUE(CheckCredentialsName(good).ok()) << good;
  }
  for (std::string_view bad :
       {"", ".", "..", ".hidden", "a/b", "../x", "a..b", "/etc/passwd", "a b", "a\\b", "$HOME"}) {
    absl::Status s = CheckCredentialsName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              "must be a simple name (letters, digits, '.', '_', '-'; no slashes, no \"..\", not "
              "starting with '.'), naming a talosconfig in the credentials directory");
  }
}

struct ImageCase {
  std::string repository;
  std::string error;  // empty: valid
};

class ImageRepositoryTest : public testing::TestWithParam<ImageCase> {};

TEST_P(ImageRepositoryTest, AcceptsPlainRepositoriesOnly) {
  const ImageCase& c = GetParam();
  absl::Status s = CheckImageRepository(c.repository);
  if (c.error.empty()) {
    EXPECT_TRUE(s.ok()) << c.repository << ": " << s;
  } else {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.repository;
    EXPECT_EQ(s.message(), c.error) << c.repository;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ImageRepositoryTest,
    testing::Values(
        ImageCase{"ghcr.io/siderolabs/installer", ""},
        ImageCase{"factory.talos.dev/metal-installer/"
                  "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba",
                  ""},
        ImageCase{"docker.io/siderolabs/installer", ""},
        ImageCase{"siderolabs/installer",
                  "must start with its registry host, e.g. \"docker.io/siderolabs/installer\": "
                  "Talos 1.13+ installs an image by the name as written but stores pulls under "
                  "the full name"},
        ImageCase{"installer",
                  "must start with its registry host, e.g. \"docker.io/library/installer\": "
                  "Talos 1.13+ installs an image by the name as written but stores pulls under "
                  "the full name"},
        ImageCase{"localhost:5000/talos/installer", ""},
        ImageCase{"Registry.Example.com:443/a/b", ""}, ImageCase{"reg.local/a__b/c-d/e.f/g--h", ""},
        ImageCase{"", "must not be empty"},
        ImageCase{"ghcr.io/siderolabs/installer:v1.12.0",
                  "must not have a tag; the reconciler adds :v<talos.version> itself"},
        ImageCase{"installer:latest",
                  "must not have a tag; the reconciler adds :v<talos.version> itself"},
        ImageCase{"ghcr.io/siderolabs/installer@sha256:abcd",
                  "must not have a digest (@sha256:...); write the repository only"},
        ImageCase{"ghcr.io/siderolabs/installer v1",
                  "must not contain whitespace or shell metacharacters"},
        ImageCase{"ghcr.io/siderolabs/installer;rm -rf /",
                  "must not contain whitespace or shell metacharacters"},
        ImageCase{"ghcr.io/$(id)/installer", "must not contain whitespace or shell metacharacters"},
        ImageCase{"ghcr.io/`id`", "must not contain whitespace or shell metacharacters"},
        ImageCase{"factory.talos.dev/metal-installer/<schematic-id>",
                  "must not contain whitespace or shell metacharacters"},
        ImageCase{"ghcr.io/SideroLabs/installer", "repository path must be lowercase"},
        ImageCase{"ghcr.io:99999/a",
                  "registry must be host or host:port with a port from 1 to 65535"},
        ImageCase{"-bad.io/a", "registry must be host or host:port with a port from 1 to 65535"},
        ImageCase{"ghcr.io//installer",
                  "path component \"\" must be lowercase letters and digits joined by '.', '_', "
                  "'__' or '-'"},
        ImageCase{"ghcr.io/a/",
                  "path component \"\" must be lowercase letters and digits joined "
                  "by '.', '_', '__' or '-'"},
        ImageCase{"ghcr.io/a___b",
                  "path component \"a___b\" must be lowercase letters and digits "
                  "joined by '.', '_', '__' or '-'"},
        ImageCase{"ghcr.io/a..b",
                  "path component \"a..b\" must be lowercase letters and digits "
                  "joined by '.', '_', '__' or '-'"},
        ImageCase{"ghcr.io/-a",
                  "path component \"-a\" must be lowercase letters and digits joined "
                  "by '.', '_', '__' or '-'"},
        ImageCase{"ghcr.io/" + std::string(250, 'a'), "must be at most 255 characters"}));

TEST(TimezoneTest, IanaLookingNames) {
  for (std::string_view good : {"UTC", "Europe/Oslo", "America/Argentina/Buenos_Aires", "Etc/GMT+2",
                                "Etc/GMT-14", "EST5EDT"}) {
    EXPECT_TRUE(CheckTimezoneName(good).ok()) << good;
  }
  for (std::string_view bad :
       {"", "/UTC", "Europe/", "Europe//Oslo", "../etc/passwd", "Europe/Oslo ", "1Europe", "+02:00",
        "Europe\\Oslo", "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    absl::Status s = CheckTimezoneName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(), "must be an IANA time-zone name such as UTC or Europe/Oslo");
  }
}

TEST(LabelTest, KeysAsKubernetesTakesThem) {
  for (const std::string& good :
       std::vector<std::string>{"env", "Env", "a", "team_1", "tier.v2", "app.kubernetes.io/name",
                                "example.com/Cost-Center", std::string(63, 'k'),
                                std::string(63, 'p') + "." + std::string(63, 'q') + "/x"}) {
    EXPECT_TRUE(CheckLabelKey(good).ok()) << good;
  }
  const std::string rule =
      "letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "must not be empty"},
      {"a/b/c", "must be name or prefix/name, with one '/' at most"},
      {"/env", "prefix before '/' must not be empty"},
      {"example.com/", "name after '/' must not be empty"},
      {"Example.com/env",
       "prefix \"Example.com\" must be a DNS-1123 name: lowercase letters, digits, '-' and '.', "
       "each dot-separated part starting and ending with a letter or digit, at most 253 "
       "characters"},
      {std::string(64, 'k'), "name must be at most 63 characters, not 64"},
      {"example.com/" + std::string(64, 'k'), "name must be at most 63 characters, not 64"},
      {"-env", "name \"-env\" must be " + rule},
      {"env_", "name \"env_\" must be " + rule},
      {"my env", "name \"my env\" must be " + rule},
      {"example.com/.x", "name \".x\" must be " + rule},
      {"caf\xC3\xA9", "name \"caf\xC3\xA9\" must be " + rule},
  };
  for (const auto& [key, message] : bad) {
    absl::Status s = CheckLabelKey(key);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(s.message(), message) << key;
  }
}

TEST(LabelTest, ValuesMayBeEmpty) {
  for (const std::string& good :
       std::vector<std::string>{"", "prod", "Prod", "3", "v1.2_x-y", std::string(63, 'v')}) {
    EXPECT_TRUE(CheckLabelValue(good).ok()) << good;
  }
  EXPECT_EQ(CheckLabelValue(std::string(64, 'v')).message(),
            "must be at most 63 characters, not 64");
  for (const std::string& bad : std::vector<std::string>{"-prod", "prod.", "a b", "a/b", "a:b"}) {
    absl::Status s = CheckLabelValue(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(),
              "must be empty or letters, digits, '-', '_' or '.', starting and ending with a "
              "letter or digit")
        << bad;
  }
}

}  // namespace
}  // namespace tr::core
