#include "tests/sim/api/node_server.h"

#include "fmt/format.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace tr::sim {

absl::StatusOr<std::unique_ptr<NodeServer>> NodeServer::Start(SimCluster* cluster, SimNode* node,
                                                              NodeDirectory directory,
                                                              const CertifiedKey& server_cert,
                                                              const std::string& ca_pem,
                                                              std::shared_ptr<StreamPump> pump,
                                                              int port) {
  std::unique_ptr<NodeServer> server(
      new NodeServer(ApidRouter(cluster, node, std::move(directory)), pump));
  grpc::SslServerCredentialsOptions tls(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  tls.pem_root_certs = ca_pem;
  tls.pem_key_cert_pairs.push_back({server_cert.key_pem, server_cert.cert_pem});
  grpc::ServerBuilder builder;
  int selected = 0;
  const std::string address = fmt::format("{}:{}", node->address, port);
  builder.AddListeningPort(address, grpc::SslServerCredentials(tls), &selected);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, 32 * 1024 * 1024);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  builder.RegisterService(&server->machine_);
  builder.RegisterService(&server->lifecycle_);
  builder.RegisterService(&server->image_);
  builder.RegisterService(&server->cosi_);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || selected == 0) {
    if (server->server_) server->server_->Shutdown();
    server->server_.reset();
    return absl::UnavailableError(fmt::format("cannot listen on {}", address));
  }
  return server;
}

NodeServer::~NodeServer() { Shutdown(); }

void NodeServer::Shutdown() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
}

}  // namespace tr::sim
