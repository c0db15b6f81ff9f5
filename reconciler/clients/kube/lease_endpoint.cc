#include "reconciler/clients/kube/lease_endpoint.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/mutex.h"
#include "fmt/format.h"
#include "reconciler/clients/kube/kubeconfig.h"

namespace tr::reconciler::lease {
namespace {

absl::StatusOr<std::string> ReadAll(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot read {} {}", what, path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The in-cluster credentials as the files say now.
absl::StatusOr<kube::KubeCredentials> ServiceAccount(const std::filesystem::path& dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0') {
    return absl::InvalidArgumentError(
        "--leader-elect / --kubernetes-upgrade-mode job: not in a pod (no "
        "KUBERNETES_SERVICE_HOST); give --kubeconfig");
  }
  kube::KubeCredentials c;
  const std::string h(host);
  c.server = fmt::format("https://{}:{}", h.find(':') != std::string::npos ? "[" + h + "]" : h,
                         port != nullptr && *port != '\0' ? port : "443");
  absl::StatusOr<std::string> token = ReadAll(dir / "token", "the service account token");
  if (!token.ok()) return token.status();
  absl::StatusOr<std::string> ca = ReadAll(dir / "ca.crt", "the service account CA");
  if (!ca.ok()) return ca.status();
  c.token = Trim(*token);
  c.ca_pem = *ca;
  return c;
}

// A client whose credentials are read again from the service account's files once a minute at
// most; when the token changed, the next call goes through a new connection with it.
class ServiceAccountClient final : public kube::KubeClient {
 public:
  ServiceAccountClient(std::filesystem::path dir, kube::HttpKubeClientOptions options, Env& env,
                       kube::KubeCredentials credentials, std::unique_ptr<kube::KubeClient> client)
      : dir_(std::move(dir)),
        options_(std::move(options)),
        env_(env),
        credentials_(std::move(credentials)),
        client_(std::move(client)),
        read_at_(env_.Now()) {}

  absl::StatusOr<std::vector<kube::KubeNode>> ListNodes() override {
    return Current()->ListNodes();
  }
  absl::Status SetUnschedulable(const std::string& node, bool unschedulable) override {
    return Current()->SetUnschedulable(node, unschedulable);
  }
  absl::Status SetPendingInstall(const std::string& node,
                                 const std::optional<std::string>& annotation) override {
    return Current()->SetPendingInstall(node, annotation);
  }
  absl::StatusOr<std::vector<kube::KubePod>> ListPodsOnNode(const std::string& node) override {
    return Current()->ListPodsOnNode(node);
  }
  absl::Status EvictPod(const std::string& ns, const std::string& name) override {
    return Current()->EvictPod(ns, name);
  }
  absl::StatusOr<std::string> GetObject(const std::string& path) override {
    return Current()->GetObject(path);
  }
  absl::StatusOr<std::string> GetText(const std::string& path) override {
    return Current()->GetText(path);
  }
  absl::StatusOr<std::string> CreateObject(const std::string& path,
                                           const std::string& object) override {
    return Current()->CreateObject(path, object);
  }
  absl::StatusOr<std::string> ReplaceObject(const std::string& path,
                                            const std::string& object) override {
    return Current()->ReplaceObject(path, object);
  }
  absl::Status DeleteObject(const std::string& path, const std::string& options) override {
    return Current()->DeleteObject(path, options);
  }

 private:
  std::shared_ptr<kube::KubeClient> Current() {
    MutexLock lock(mu_);
    if (env_.Now() - read_at_ >= std::chrono::minutes(1)) {
      read_at_ = env_.Now();
      absl::StatusOr<kube::KubeCredentials> now = ServiceAccount(dir_);
      if (now.ok() && (now->token != credentials_.token || now->ca_pem != credentials_.ca_pem)) {
        auto fresh = kube::NewHttpKubeClient(*now, env_, options_);
        if (fresh.ok()) {
          client_ = std::move(*fresh);
          credentials_ = *std::move(now);
        }
      }
    }
    return client_;
  }

  const std::filesystem::path dir_;
  const kube::HttpKubeClientOptions options_;
  Env& env_;
  Mutex mu_;
  kube::KubeCredentials credentials_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<kube::KubeClient> client_ ABSL_GUARDED_BY(mu_);
  Env::TimePoint read_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<LeaseEndpoint> OpenLeaseEndpoint(const std::filesystem::path& kubeconfig,
                                                kube::HttpKubeClientOptions options, Env& env,
                                                const std::filesystem::path& account_dir) {
  if (!kubeconfig.empty()) {
    absl::StatusOr<std::string> text = ReadAll(kubeconfig, "--kubeconfig");
    if (!text.ok()) return text.status();
    absl::StatusOr<kube::KubeCredentials> credentials = kube::ParseKubeconfig(*text);
    if (!credentials.ok()) return credentials.status();
    auto client = kube::NewHttpKubeClient(*credentials, env, options);
    if (!client.ok()) return client.status();
    return LeaseEndpoint{*std::move(client), "default"};
  }
  absl::StatusOr<kube::KubeCredentials> credentials = ServiceAccount(account_dir);
  if (!credentials.ok()) return credentials.status();
  absl::StatusOr<std::string> ns = ReadAll(account_dir / "namespace", "the pod's namespace");
  if (!ns.ok()) return ns.status();
  auto client = kube::NewHttpKubeClient(*credentials, env, options);
  if (!client.ok()) return client.status();
  return LeaseEndpoint{std::make_unique<ServiceAccountClient>(account_dir, options, env,
                                                              *credentials, *std::move(client)),
                       Trim(*ns)};
}

}  // namespace tr::reconciler::lease
