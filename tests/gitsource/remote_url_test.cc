// Remote URL forms accepted and refused, table-driven.
#include "gitsource/remote_url.h"

#include <gtest/gtest.h>

namespace tr::gitsource {
namespace {

struct Accepted {
  std::string url;
  Transport transport;
  std::string user, host, port, path;
};

TEST(RemoteUrlTest, AcceptedForms) {
  const Accepted cases[] = {
      {"https://github.com/org/fleet.git", Transport::kHttps, "", "github.com", "",
       "/org/fleet.git"},
      {"HTTPS://git.example.com:8443/fleet", Transport::kHttps, "", "git.example.com", "8443",
       "/fleet"},
      {"http://127.0.0.1:8080/x.git", Transport::kHttp, "", "127.0.0.1", "8080", "/x.git"},
      {"https://bot@gitlab.example.com/x.git", Transport::kHttps, "bot", "gitlab.example.com", "",
       "/x.git"},
      {"ssh://git@github.com/org/fleet.git", Transport::kSsh, "git", "github.com", "",
       "/org/fleet.git"},
      {"ssh://git@[::1]:2222/srv/x.git", Transport::kSsh, "git", "::1", "2222", "/srv/x.git"},
      {"ssh://host/~user/x.git", Transport::kSsh, "", "host", "", "~user/x.git"},
      {"git+ssh://host/x.git", Transport::kSsh, "", "host", "", "/x.git"},
      {"git@github.com:org/fleet.git", Transport::kSsh, "git", "github.com", "", "org/fleet.git"},
      {"host:/abs/x.git", Transport::kSsh, "", "host", "", "/abs/x.git"},
      {"git://127.0.0.1:9418/x.git", Transport::kGit, "", "127.0.0.1", "9418", "/x.git"},
      {"file:///srv/git/x.git", Transport::kFile, "", "", "", "/srv/git/x.git"},
      {"/srv/git/x.git", Transport::kFile, "", "", "", "/srv/git/x.git"},
  };
  for (const Accepted& c : cases) {
    SCOPED_TRACE(c.url);
    absl::StatusOr<RemoteUrl> url = ParseRemoteUrl(c.url);
    ASSERT_TRUE(url.ok()) << url.status();
    EXPECT_EQ(url->transport, c.transport);
    EXPECT_EQ(url->user, c.user);
    EXPECT_EQ(url->host, c.host);
    EXPECT_EQ(url->port, c.port);
    EXPECT_EQ(url->path, c.path);
  }
}

TEST(RemoteUrlTest, RefusedForms) {
  for (const std::string url :
       {"", "https://user:hunter2@github.com/x.git", "ssh://git:pw@host/x.git", "ftp://host/x.git",
        "https://github.com", "https://github.com/", "relative/path",
        "ssh://-oProxyCommand=evil/x.git", "-oProxyCommand=evil:x.git", "https://host:99999x/x",
        "git://user@host/x.git", "https://host/x\n.git", "file://relative", "host:"}) {
    SCOPED_TRACE(url);
    absl::StatusOr<RemoteUrl> parsed = ParseRemoteUrl(url);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().ToString().find("hunter2"), std::string::npos);
  }
}

TEST(RemoteUrlTest, DisplayDropsUserInfo) {
  EXPECT_EQ(UrlForDisplay("https://bot@host/x.git"), "https://host/x.git");
  EXPECT_EQ(UrlForDisplay("ssh://git@host:22/x.git"), "ssh://host:22/x.git");
  EXPECT_EQ(UrlForDisplay("https://host/a@b.git"), "https://host/a@b.git");
  EXPECT_EQ(UrlForDisplay("git@host:x.git"), "host:x.git");
}

}  // namespace
}  // namespace tr::gitsource
