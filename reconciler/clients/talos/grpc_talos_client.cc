#include "reconciler/clients/talos/grpc_talos_client.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <thread>

#include "base/env.h"
#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "reconciler/clients/talos/grpc_talos_client_impl.h"
#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/clients/talos/talos_convert.h"

namespace tr::reconciler::talos {
namespace {

// How long one connection wait may block before the stop token is looked at again.
constexpr auto kConnectSlice = std::chrono::milliseconds(100);

std::string Trim(std::string text) {
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && space(text.back())) text.pop_back();
  const auto first = std::find_if_not(text.begin(), text.end(), space);
  return std::string(first, text.end());
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

}  // namespace

grpc::ChannelArguments TalosChannelArguments(const GrpcTalosClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  const int backoff_ms = static_cast<int>(options.max_reconnect_backoff.count());
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, backoff_ms);
  // gRPC takes this one as the minimum time a connection attempt (TCP and TLS handshake) may
  // last, not as a backoff: keep it at the connect timeout, or a slow handshake fails every
  // attempt ("connection attempt timed out before receiving SETTINGS frame").
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              static_cast<int>(std::min<int64_t>(options.timeouts.connect.count(), INT32_MAX)));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(backoff_ms, 1000));
  args.SetInt(GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS,
              static_cast<int>(std::clamp<int64_t>(options.idle_timeout.count(), 1000, INT32_MAX)));
  // gRPC's BDP probe sends a PING after data arrives on a connection, to size its receive
  // window: with answers of a few hundred bytes on thousands of connections that is a PING and
  // its ack every few calls (about 5% of the daemon's CPU in a fleet rollout; docs/benchmarks.md).
  // A fixed window of 4 MiB keeps a large answer (an etcd snapshot) from waiting for window
  // updates over a slow link, as 64 KiB would.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kStreamWindowBytes);
  if (!options.tls_server_name.empty()) args.SetSslTargetNameOverride(options.tls_server_name);
  return args;
}

absl::StatusOr<std::unique_ptr<TalosClient>> NewGrpcTalosClient(const TalosContext& context,
                                                                Env& env,
                                                                GrpcTalosClientOptions options) {
  if (context.endpoints.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("talosconfig context \"{}\" has no endpoints", context.name));
  }
  if (context.ca_pem.empty() || context.crt_pem.empty() || context.key_pem.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "talosconfig context \"{}\" lacks ca, crt or key for mutual TLS", context.name));
  }
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = context.ca_pem;
  tls.pem_cert_chain = context.crt_pem;
  tls.pem_private_key = NormalizeKeyPem(context.key_pem);
  const auto credentials = grpc::SslCredentials(tls);

  const grpc::ChannelArguments args = TalosChannelArguments(options);
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const auto& endpoint : context.endpoints) {
    channels.push_back(grpc::CreateCustomChannel(endpoint.Target(), credentials, args));
  }
  return std::make_unique<GrpcTalosClient>(context.endpoints, std::move(channels),
                                           std::move(options), env);
}

GrpcTalosClient::GrpcTalosClient(std::vector<Endpoint> endpoints,
                                 std::vector<std::shared_ptr<grpc::Channel>> channels,
                                 GrpcTalosClientOptions options, Env& env)
    : endpoints_(std::move(endpoints)),
      channels_(std::move(channels)),
      stubs_(channels_.begin(), channels_.end()),
      options_(std::move(options)),
      env_(env) {}

std::vector<size_t> GrpcTalosClient::Candidates(const std::string& node, bool node_first) const {
  const size_t count = endpoints_.size();
  size_t first = preferred_.load();
  {
    MutexLock lock(moved_mu_);
    if (auto it = moved_.find(node); it != moved_.end()) first = it->second;
  }
  first %= count;
  std::vector<size_t> others;
  std::vector<size_t> self;
  for (size_t i = 0; i < count; ++i) {
    const size_t index = (first + i) % count;
    (endpoints_[index].host == node ? self : others).push_back(index);
  }
  if (!node_first) return others.empty() ? self : others;
  self.insert(self.end(), others.begin(), others.end());
  return self;
}

bool GrpcTalosClient::NodeBehindUnreachable(const absl::Status& status, size_t endpoint) const {
  const std::optional<std::string> host = HostApidCouldNotDial(status);
  return host && *host != endpoints_[endpoint].host;
}

void GrpcTalosClient::StartNextAt(const std::string& node, const std::vector<size_t>& candidates,
                                  size_t position) {
  MutexLock lock(moved_mu_);
  moved_[node] = candidates[(position + 1) % candidates.size()];
}

void GrpcTalosClient::PreferLeader(const std::string& leader) {
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    if (!leader.empty() && endpoints_[i].host == leader) preferred_.store(i);
  }
}

void GrpcTalosClient::Answered(const std::string& node, size_t endpoint) {
  {
    MutexLock lock(moved_mu_);
    if (moved_.erase(node) > 0) return;
  }
  preferred_.store(endpoint);
}

size_t GrpcTalosClient::ConnectedEndpoints() const {
  return static_cast<size_t>(std::count_if(channels_.begin(), channels_.end(), [](const auto& c) {
    return c->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY;
  }));
}

GrpcTalosClient::Connection GrpcTalosClient::Connect(grpc::Channel& channel,
                                                     Env::TimePoint deadline,
                                                     const std::stop_token& stop) {
  // A refused connection or a failed handshake puts the channel in TRANSIENT_FAILURE at once:
  // move on to the next endpoint then. Only an endpoint that does not answer at all (a machine
  // that is off) costs the whole connect timeout.
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (!stop.stop_requested()) {
    if (state == GRPC_CHANNEL_READY) return Connection::kReady;
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      return Connection::kRefused;
    }
    const auto slice_end = std::min(deadline, env_.Now() + kConnectSlice);
    if (!channel.WaitForStateChange(state, slice_end) && slice_end >= deadline) {
      return Connection::kNoAnswer;
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return Connection::kNoAnswer;
}

absl::Status GrpcTalosClient::Call(const std::string& method, const std::string& node,
                                   std::chrono::milliseconds timeout, Failover failover,
                                   const Attempt& attempt, std::stop_token caller_stop,
                                   const std::vector<std::string>& fanout) {
  // The caller's token or the process's shutdown, whichever comes first.
  std::stop_source either;
  std::stop_callback on_caller(caller_stop, [&either] { either.request_stop(); });
  std::stop_callback on_shutdown(options_.shutdown, [&either] { either.request_stop(); });
  const std::stop_token stop = either.get_token();
  const auto deadline = env_.Now() + timeout;
  const std::vector<size_t> candidates = Candidates(node);
  std::vector<std::string> failed;
  bool every_refused = true;  // no endpoint tried merely failed to answer
  for (size_t n = 0; n < candidates.size(); ++n) {
    const size_t index = candidates[n];
    grpc::Channel& channel = *channels_[index];
    const std::string endpoint = endpoints_[index].Target();
    const Connection connection =
        Connect(channel, std::min(deadline, env_.Now() + options_.timeouts.connect), stop);
    if (connection != Connection::kReady) {
      if (stop.stop_requested()) break;
      every_refused = every_refused && connection == Connection::kRefused;
      failed.push_back(endpoint);
      if (env_.Now() >= deadline) break;
      continue;
    }
    CallAttempt call{{}, channels_[index], CallInfo{method, node, endpoint}, &stubs_[index]};
    call.context.set_deadline(deadline);
    if (fanout.empty()) {
      call.context.AddMetadata("node", node);
    } else {
      for (const std::string& target : fanout) call.context.AddMetadata("nodes", target);
    }
    std::stop_callback cancel(stop, [&call] { call.context.TryCancel(); });
    absl::Status status = attempt(call);
    if (status.ok()) {
      // A call to several nodes leaves the endpoint the nodes' own calls prefer as it was: it
      // goes through any endpoint, which may be the control plane upgraded next, and would
      // take the workers' watches started after it there (cut by its reboot).
      if (fanout.empty()) Answered(node, index);
      return status;
    }
    // The endpoint could not dial the node behind it (down, coming up): every endpoint would
    // say so. The node's next call starts at the next endpoint, whose own connection to the
    // node (and its reconnect backoff, backend/apid.go) may differ.
    if (NodeBehindUnreachable(status, index)) {
      StartNextAt(node, candidates, n);
      return status;
    }
    // Unavailable may be the endpoint's own apid (restarting, going down) rather than the node
    // behind it: a read-only call may safely try the next endpoint.
    if (failover == Failover::kReadOnly && status.code() == absl::StatusCode::kUnavailable &&
        n + 1 < candidates.size() && !stop.stop_requested()) {
      failed.push_back(endpoint);
      every_refused = false;  // it connected
      continue;
    }
    return status;
  }
  const CallInfo info{method, node, ""};
  if (stop.stop_requested()) return CallError(absl::StatusCode::kCancelled, info, "cancelled");
  const auto code =
      env_.Now() >= deadline ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable;
  absl::Status error =
      CallError(code, info, fmt::format("no endpoint reachable (tried {})", Join(failed)));
  if (every_refused && code == absl::StatusCode::kUnavailable) {
    error = MarkEveryEndpointRefused(std::move(error));
  }
  return error;
}

absl::StatusOr<NodeVersion> GrpcTalosClient::Version(const std::string& node) {
  NodeVersion result;
  absl::Status status =
      Call("Version", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        machine::VersionResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->Version(&a.context, {}, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        auto version = ToNodeVersion(**message);
        if (!version.ok())
          return a.Error(absl::StatusCode::kInternal, std::string(version.status().message()));
        result = *std::move(version);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<std::string> GrpcTalosClient::BootId(const std::string& node) {
  constexpr char kBootIdFile[] = "/proc/sys/kernel/random/boot_id";
  if (!boot_id_as_stream_.load()) {
    absl::StatusOr<std::string> first = ReadFirstChunk(node, kBootIdFile);
    // A node that sends the file in more than one message times the read out (or a node that
    // hangs does): this call is not repeated, which would double a hanging node's wait, but the
    // next ones read the stream.
    if (absl::IsDeadlineExceeded(first.status())) boot_id_as_stream_.store(true);
    if (!first.ok()) return first.status();
    if (std::optional<std::string> whole = WholeBootIdLine(*first)) return *std::move(whole);
  }
  // Not the whole file in one message (Talos sends it so; pkg/chunker/stream/stream.go @
  // v1.14.0-rc.1 sends 1 KiB chunks): the whole stream.
  auto content = ReadFile(node, kBootIdFile);
  if (!content.ok()) return content.status();
  return Trim(*std::move(content));
}

absl::StatusOr<MachineStatus> GrpcTalosClient::GetMachineStatus(const std::string& node) {
  auto resource = CosiGet(node, kMachineStatusNamespace, kMachineStatusType, kMachineStatusId);
  if (!resource.ok()) return resource.status();
  auto status = MachineStatusFromSpec(resource->proto_spec);
  if (!status.ok()) {
    return CallError(absl::StatusCode::kInternal, CallInfo{"MachineStatus", node, ""},
                     std::string(status.status().message()));
  }
  status->created = resource->created;
  return status;
}

absl::StatusOr<std::vector<ServiceState>> GrpcTalosClient::ServiceList(const std::string& node) {
  std::vector<ServiceState> result;
  absl::Status status =
      Call("ServiceList", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        machine::ServiceListResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->ServiceList(&a.context, {}, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        result.clear();
        for (const auto& info : (*message)->services()) result.push_back(ToServiceState(info));
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<std::vector<EtcdMember>> GrpcTalosClient::EtcdMemberList(const std::string& node) {
  std::vector<EtcdMember> result;
  absl::Status status = Call(
      "EtcdMemberList", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        machine::EtcdMemberListResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->EtcdMemberList(&a.context, {}, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        result.clear();
        for (const auto& member : (*message)->members()) result.push_back(ToEtcdMember(member));
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<EtcdMemberStatus> GrpcTalosClient::EtcdStatus(const std::string& node) {
  EtcdMemberStatus result;
  absl::Status status =
      Call("EtcdStatus", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        machine::EtcdStatusResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->EtcdStatus(&a.context, {}, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        result = ToEtcdMemberStatus((*message)->member_status());
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<TalosClient::EtcdStatusOfEach> GrpcTalosClient::EtcdStatuses(
    const std::vector<std::string>& nodes) {
  if (nodes.size() < 2) return TalosClient::EtcdStatuses(nodes);
  EtcdStatusOfEach each;
  std::string leader;  // the node whose member leads, as the reply says
  const auto read = [&](CallAttempt& a) {
    machine::EtcdStatusResponse reply;
    if (auto s = a.Check(a.stubs->machine->EtcdStatus(&a.context, {}, &reply)); !s.ok()) return s;
    each.clear();
    // apid names each message's node as the call named it (metadata.hostname).
    for (const auto& message : reply.messages()) {
      const std::string& node = message.metadata().hostname();
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
      const CallInfo info{a.info.method, node, a.info.endpoint};
      absl::Status error = CheckReplyMetadata(message.metadata(), info);
      if (error.ok() && !message.has_member_status()) {
        error = CallError(absl::StatusCode::kInternal, info, "reply holds no member status");
      }
      each.insert_or_assign(node, error.ok() ? absl::StatusOr<EtcdMemberStatus>(
                                                   ToEtcdMemberStatus(message.member_status()))
                                             : absl::StatusOr<EtcdMemberStatus>(error));
      const auto& member = message.member_status();
      if (error.ok() && member.member_id() != 0 && member.leader() == member.member_id()) {
        leader = node;
      }
    }
    for (const std::string& node : nodes) {
      each.try_emplace(node, CallError(absl::StatusCode::kInternal,
                                       CallInfo{a.info.method, node, a.info.endpoint},
                                       "the reply holds no message for the node"));
    }
    return absl::OkStatus();
  };
  // Named by all its nodes: the call's own errors say which, and no node's endpoint is avoided.
  absl::Status status =
      Call("EtcdStatus", Join(nodes), options_.timeouts.read, Failover::kReadOnly, read, {}, nodes);
  if (!status.ok()) return status;
  PreferLeader(leader);
  return each;
}

absl::StatusOr<UpgradeAck> GrpcTalosClient::Upgrade(const std::string& node,
                                                    const LegacyUpgradeRequest& request) {
  machine::UpgradeRequest proto;
  proto.set_image(request.image);
  proto.set_preserve(request.preserve);
  proto.set_stage(request.stage);
  proto.set_force(request.force);
  proto.set_reboot_mode(request.powercycle ? machine::UpgradeRequest::POWERCYCLE
                                           : machine::UpgradeRequest::DEFAULT);
  UpgradeAck result;
  absl::Status status =
      Call("Upgrade", node, options_.timeouts.image, Failover::kConnectOnly, [&](CallAttempt& a) {
        machine::UpgradeResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->Upgrade(&a.context, proto, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        result = UpgradeAck{(*message)->ack(), (*message)->actor_id()};
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::Status GrpcTalosClient::PullImageLegacy(const std::string& node, ContainerdNamespace ns,
                                              const std::string& image) {
  machine::ImagePullRequest proto;
  proto.set_namespace_(static_cast<common::ContainerdNamespace>(ns));
  proto.set_reference(image);
  return Call("ImagePull", node, options_.timeouts.image, Failover::kConnectOnly,
              [&](CallAttempt& a) {
                machine::ImagePullResponse reply;
                auto& stub = a.stubs->machine;
                if (auto s = a.Check(stub->ImagePull(&a.context, proto, &reply)); !s.ok()) {
                  return s;
                }
                return a.Single(reply).status();
              });
}

absl::StatusOr<std::string> GrpcTalosClient::Reboot(const std::string& node, RebootMode mode) {
  machine::RebootRequest proto;
  proto.set_mode(static_cast<machine::RebootRequest::Mode>(mode));
  std::string actor_id;
  absl::Status status =
      Call("Reboot", node, options_.timeouts.mutate, Failover::kConnectOnly, [&](CallAttempt& a) {
        machine::RebootResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->Reboot(&a.context, proto, &reply)); !s.ok()) return s;
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        actor_id = (*message)->actor_id();
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return actor_id;
}

absl::StatusOr<std::string> GrpcTalosClient::EtcdForfeitLeadership(const std::string& node) {
  std::string new_leader;
  absl::Status status = Call(
      "EtcdForfeitLeadership", node, options_.timeouts.mutate, Failover::kConnectOnly,
      [&](CallAttempt& a) {
        machine::EtcdForfeitLeadershipResponse reply;
        auto& stub = a.stubs->machine;
        if (auto s = a.Check(stub->EtcdForfeitLeadership(&a.context, {}, &reply)); !s.ok()) {
          return s;
        }
        auto message = a.Single(reply);
        if (!message.ok()) return message.status();
        new_leader = (*message)->member();
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return new_leader;
}

absl::Status GrpcTalosClient::Rollback(const std::string& node) {
  return Call("Rollback", node, options_.timeouts.mutate, Failover::kConnectOnly,
              [&](CallAttempt& a) {
                machine::RollbackResponse reply;
                auto& stub = a.stubs->machine;
                if (auto s = a.Check(stub->Rollback(&a.context, {}, &reply)); !s.ok()) return s;
                return a.Single(reply).status();
              });
}

absl::StatusOr<ApplyConfigurationResult> GrpcTalosClient::ApplyConfiguration(
    const std::string& node, const ApplyConfigurationRequest& request) {
  machine::ApplyConfigurationRequest proto;
  proto.set_data(request.config_yaml);
  proto.set_mode(static_cast<machine::ApplyConfigurationRequest::Mode>(request.mode));
  proto.set_dry_run(request.dry_run);
  if (request.try_timeout.count() > 0) {
    const auto ms = request.try_timeout.count();
    proto.mutable_try_mode_timeout()->set_seconds(ms / 1000);
    proto.mutable_try_mode_timeout()->set_nanos(static_cast<int32_t>(ms % 1000) * 1000000);
  }
  ApplyConfigurationResult result;
  absl::Status status =
      Call("ApplyConfiguration", node, options_.timeouts.mutate, Failover::kConnectOnly,
           [&](CallAttempt& a) {
             machine::ApplyConfigurationResponse reply;
             auto& stub = a.stubs->machine;
             if (auto s = a.Check(stub->ApplyConfiguration(&a.context, proto, &reply)); !s.ok()) {
               return s;
             }
             auto message = a.Single(reply);
             if (!message.ok()) return message.status();
             result.mode = static_cast<ApplyMode>((*message)->mode());
             result.mode_details = (*message)->mode_details();
             result.warnings.assign((*message)->warnings().begin(), (*message)->warnings().end());
             return absl::OkStatus();
           });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<CosiResource> GrpcTalosClient::CosiGet(const std::string& node,
                                                      const std::string& namespace_name,
                                                      const std::string& type,
                                                      const std::string& id) {
  cosi::resource::GetRequest proto;
  proto.set_namespace_(namespace_name);
  proto.set_type(type);
  proto.set_id(id);
  CosiResource result;
  absl::Status status = Call("cosi.State/Get", node, options_.timeouts.read, Failover::kReadOnly,
                             [&](CallAttempt& a) {
                               cosi::resource::GetResponse reply;
                               auto& stub = a.stubs->cosi;
                               if (auto s = a.Check(stub->Get(&a.context, proto, &reply)); !s.ok())
                                 return s;
                               result = ToCosiResource(reply.resource());
                               return absl::OkStatus();
                             });
  if (!status.ok()) return status;
  return result;
}

}  // namespace tr::reconciler::talos
