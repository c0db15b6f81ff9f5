// MachineService of a simulated node (facts §3): unary calls answer with one element in
// `messages` and metadata unset, as a direct or one-to-one call to real Talos does.
#include "core/version.h"
#include "fmt/format.h"
#include "tests/sim/api/node_services.h"
#include "tests/sim/common/tarball.h"

namespace tr::sim {
namespace {

constexpr auto kStreamPoll = std::chrono::milliseconds(50);

grpc::Status ControlPlaneOnly(const SimNode& node, const char* api) {
  if (node.is_control_plane()) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      fmt::format("{} is only available on control plane nodes", api));
}

grpc::Status NotInContainer(const SimNode& node) {
  if (node.spec.platform != "container") return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "method is not supported in container mode");
}

grpc::Status Gone() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
}

// The target's etcd member status, as its machined answers.
grpc::Status ServeEtcdStatus(const Route& r, machine::EtcdStatusResponse* response) {
  if (auto st = ControlPlaneOnly(*r.target, "etcd status"); !st.ok()) return st;
  std::lock_guard lock(r.cluster->mu());
  if (!r.cluster->EtcdStartedLocked(*r.target)) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        "failed to get etcd status: context deadline exceeded");
  }
  auto* s = response->add_messages()->mutable_member_status();
  s->set_protocol_version("3.5.0");
  s->set_db_size(20'971'520);
  s->set_db_size_in_use(12'582'912);
  s->set_leader(r.cluster->EtcdLeaderLocked());
  s->set_raft_index(r.cluster->EtcdRaftIndexLocked());
  s->set_raft_term(r.cluster->raft_term());
  s->set_raft_applied_index(r.cluster->EtcdRaftIndexLocked());
  s->set_member_id(r.target->etcd_member_id);
  s->set_is_learner(false);
  if (TalosMinor(*r.target) >= 11) s->set_storage_version("3.5.0");
  if (!r.cluster->EtcdHealthyLocked(*r.target)) s->add_errors("etcdserver: request timed out");
  if (r.cluster->EtcdLeaderLocked() == 0) s->add_errors("etcdserver: no leader");
  return grpc::Status::OK;
}

}  // namespace

bool CallAbandoned(grpc::ServerContext* context, const SimCluster& cluster) {
  return context->IsCancelled() || cluster.stopping();
}

grpc::Status MachineServiceImpl::Version(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                                         machine::VersionResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/Version", [&](const Route& r) {
    std::lock_guard lock(r.cluster->mu());
    auto* v = response->add_messages();
    v->mutable_version()->set_tag(r.target->tag);
    v->mutable_version()->set_sha(
        fmt::format("{:08x}", std::hash<std::string>{}(r.target->tag) & 0xffffffffu));
    v->mutable_version()->set_go_version("go1.24.6");
    v->mutable_version()->set_os("linux");
    v->mutable_version()->set_arch("amd64");
    v->mutable_platform()->set_name(r.target->spec.platform);
    v->mutable_platform()->set_mode(r.target->spec.platform == "container" ? "container" : "metal");
    v->mutable_features()->set_rbac(true);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Hostname(grpc::ServerContext* ctx, const google::protobuf::Empty*,
                                          machine::HostnameResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/Hostname", [&](const Route& r) {
    std::lock_guard lock(r.cluster->mu());
    response->add_messages()->set_hostname(r.target->spec.name);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Upgrade(grpc::ServerContext* ctx,
                                         const machine::UpgradeRequest* request,
                                         machine::UpgradeResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/Upgrade", [&](const Route& r) {
    if (auto st = NotInContainer(*r.target); !st.ok()) return st;
    LegacyUpgradeParams p;
    p.image = request->image();
    p.preserve = request->preserve();
    p.stage = request->stage();
    p.force = request->force();
    p.powercycle = request->reboot_mode() == machine::UpgradeRequest::POWERCYCLE;
    auto box = r.cluster->LegacyUpgrade(*r.target, p);
    while (true) {
      if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
      auto result = box->Pop(kStreamPoll);
      if (!result) continue;
      if (!result->ok()) return ToGrpc(result->status());
      auto* m = response->add_messages();
      m->set_ack("Upgrade request received");
      m->set_actor_id(**result);
      return grpc::Status::OK;
    }
  });
}

grpc::Status MachineServiceImpl::Reboot(grpc::ServerContext* ctx,
                                        const machine::RebootRequest* request,
                                        machine::RebootResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/Reboot", [&](const Route& r) {
    auto actor = r.cluster->Reboot(*r.target, static_cast<SimRebootMode>(request->mode()));
    if (!actor.ok()) return ToGrpc(actor.status());
    response->add_messages()->set_actor_id(*actor);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Rollback(grpc::ServerContext* ctx, const machine::RollbackRequest*,
                                          machine::RollbackResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/Rollback", [&](const Route& r) {
    if (auto st = NotInContainer(*r.target); !st.ok()) return st;
    if (auto st = r.cluster->Rollback(*r.target); !st.ok()) return ToGrpc(st);
    response->add_messages();
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::ApplyConfiguration(
    grpc::ServerContext* ctx, const machine::ApplyConfigurationRequest* request,
    machine::ApplyConfigurationResponse* response) {
  return HandleCall(
      router_, ctx, "/machine.MachineService/ApplyConfiguration", [&](const Route& r) {
        auto timeout = std::chrono::milliseconds(60'000);
        if (request->has_try_mode_timeout()) {
          timeout = std::chrono::milliseconds(request->try_mode_timeout().seconds() * 1000 +
                                              request->try_mode_timeout().nanos() / 1'000'000);
        }
        auto result = r.cluster->ApplyConfiguration(*r.target, request->data(), request->mode(),
                                                    request->dry_run(), timeout);
        if (!result.ok()) return ToGrpc(result.status());
        auto* m = response->add_messages();
        m->set_mode(static_cast<machine::ApplyConfigurationRequest::Mode>(result->mode));
        m->set_mode_details(result->details);
        for (const auto& w : result->warnings) m->add_warnings(w);
        return grpc::Status::OK;
      });
}

grpc::Status MachineServiceImpl::ServiceList(grpc::ServerContext* ctx,
                                             const google::protobuf::Empty*,
                                             machine::ServiceListResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/ServiceList", [&](const Route& r) {
    std::lock_guard lock(r.cluster->mu());
    auto* list = response->add_messages();
    for (const auto& [id, rec] : r.target->services) {
      auto* s = list->add_services();
      s->set_id(id);
      s->set_state(rec.state);
      const auto secs =
          std::chrono::duration_cast<std::chrono::seconds>(rec.since.time_since_epoch()).count();
      auto* ev = s->mutable_events()->add_events();
      ev->set_msg(rec.state == "Running" ? "Health check successful" : "Starting");
      ev->set_state(rec.state);
      ev->mutable_ts()->set_seconds(secs);
      s->mutable_health()->set_unknown(rec.unknown);
      s->mutable_health()->set_healthy(rec.healthy);
      s->mutable_health()->set_last_message(rec.message);
      s->mutable_health()->mutable_last_change()->set_seconds(secs);
    }
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::EtcdMemberList(grpc::ServerContext* ctx,
                                                const machine::EtcdMemberListRequest*,
                                                machine::EtcdMemberListResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/EtcdMemberList", [&](const Route& r) {
    if (auto st = ControlPlaneOnly(*r.target, "member list"); !st.ok()) return st;
    std::lock_guard lock(r.cluster->mu());
    if (!r.cluster->EtcdStartedLocked(*r.target) || r.cluster->EtcdLeaderLocked() == 0) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "failed to get etcd member list: context deadline exceeded");
    }
    auto* members = response->add_messages();
    for (const SimNode* m : r.cluster->EtcdMembersLocked()) {
      auto* member = members->add_members();
      member->set_id(m->etcd_member_id);
      member->set_hostname(m->spec.name);
      member->add_peer_urls(fmt::format("https://{}:2380", m->address));
      member->add_client_urls(fmt::format("https://{}:2379", m->address));
      member->set_is_learner(false);
      members->add_legacy_members(m->spec.name);  // the member names, as Talos fills them
    }
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::EtcdStatus(grpc::ServerContext* ctx,
                                            const google::protobuf::Empty*,
                                            machine::EtcdStatusResponse* response) {
  const char* method = "/machine.MachineService/EtcdStatus";
  if (ApidRouter::OneToMany(*ctx)) {
    return HandleOneToMany(router_, ctx, method, response, ServeEtcdStatus);
  }
  return HandleCall(router_, ctx, method,
                    [&](const Route& r) { return ServeEtcdStatus(r, response); });
}

grpc::Status MachineServiceImpl::EtcdForfeitLeadership(
    grpc::ServerContext* ctx, const machine::EtcdForfeitLeadershipRequest*,
    machine::EtcdForfeitLeadershipResponse* response) {
  const char* method = "/machine.MachineService/EtcdForfeitLeadership";
  return HandleCall(router_, ctx, method, [&](const Route& r) {
    if (auto st = ControlPlaneOnly(*r.target, "etcd forfeit leadership"); !st.ok()) return st;
    std::lock_guard lock(r.cluster->mu());
    absl::StatusOr<std::string> leader = r.cluster->ForfeitEtcdLeadershipLocked(*r.target);
    if (!leader.ok()) return ToGrpc(leader.status());
    response->add_messages()->set_member(*leader);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::EtcdSnapshot(grpc::ServerContext* ctx,
                                              const machine::EtcdSnapshotRequest*,
                                              grpc::ServerWriter<common::Data>* writer) {
  return HandleCall(router_, ctx, "/machine.MachineService/EtcdSnapshot", [&](const Route& r) {
    if (auto st = ControlPlaneOnly(*r.target, "etcd snapshot"); !st.ok()) return st;
    std::string snapshot;
    {
      std::lock_guard lock(r.cluster->mu());
      if (r.cluster->EtcdLeaderLocked() == 0) {
        return grpc::Status(grpc::StatusCode::UNKNOWN, "failed reading etcd snapshot: no leader");
      }
      snapshot = fmt::format("talos-sim etcd snapshot cluster={} member={:016x} revision={}\n",
                             r.cluster->name(), r.target->etcd_member_id,
                             r.cluster->EtcdRaftIndexLocked());
    }
    snapshot.resize(256 * 1024, '\0');
    for (size_t off = 0; off < snapshot.size(); off += 64 * 1024) {
      common::Data chunk;
      chunk.set_bytes(snapshot.substr(off, 64 * 1024));
      if (!writer->Write(chunk)) return grpc::Status::CANCELLED;
    }
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Read(grpc::ServerContext* ctx, const machine::ReadRequest* request,
                                      grpc::ServerWriter<common::Data>* writer) {
  return HandleCall(router_, ctx, "/machine.MachineService/Read", [&](const Route& r) {
    std::string content;
    {
      std::lock_guard lock(r.cluster->mu());
      if (request->path() == "/proc/sys/kernel/random/boot_id") {
        content = r.target->boot_id + "\n";
      } else if (request->path() == "/etc/os-release") {
        content = fmt::format("NAME=\"Talos\"\nID=talos\nVERSION_ID={}\n", r.target->tag);
      } else {
        // os.Stat fails; from Talos 1.8 the server maps a missing file to NotFound.
        return grpc::Status(
            TalosMinor(*r.target) >= 8 ? grpc::StatusCode::NOT_FOUND : grpc::StatusCode::UNKNOWN,
            fmt::format("stat {}: no such file or directory", request->path()));
      }
    }
    common::Data data;
    data.set_bytes(content);
    writer->Write(data);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Kubeconfig(grpc::ServerContext* ctx,
                                            const google::protobuf::Empty*,
                                            grpc::ServerWriter<common::Data>* writer) {
  return HandleCall(router_, ctx, "/machine.MachineService/Kubeconfig", [&](const Route& r) {
    if (auto st = ControlPlaneOnly(*r.target, "kubeconfig"); !st.ok()) return st;
    common::Data data;
    data.set_bytes(
        TarGzSingleFile("kubeconfig", r.cluster->kubeconfig(), r.cluster->scheduler().WallNow()));
    writer->Write(data);
    return grpc::Status::OK;
  });
}

grpc::Status MachineServiceImpl::Logs(grpc::ServerContext* ctx, const machine::LogsRequest* request,
                                      grpc::ServerWriter<common::Data>* writer) {
  return HandleCall(router_, ctx, "/machine.MachineService/Logs", [&](const Route& r) {
    uint64_t generation = 0;
    std::string lines;
    {
      std::lock_guard lock(r.cluster->mu());
      if (!r.target->services.contains(request->id()) && request->namespace_() == "system") {
        return grpc::Status(grpc::StatusCode::UNKNOWN,
                            fmt::format("log \"{}\" was not registered", request->id()));
      }
      generation = r.target->generation;
      lines = fmt::format("{} [talos-sim] {} started on {} ({})\n", r.target->boot_id,
                          request->id(), r.target->spec.name, r.target->tag);
    }
    common::Data data;
    data.set_bytes(lines);
    writer->Write(data);
    if (!request->follow()) return grpc::Status::OK;
    std::unique_lock lock(r.cluster->mu());
    while (true) {
      if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
      if (r.target->generation != generation || !r.target->api_reachable()) return Gone();
      r.cluster->cv().wait_for(lock, kStreamPoll);
    }
  });
}

grpc::Status MachineServiceImpl::ImagePull(grpc::ServerContext* ctx,
                                           const machine::ImagePullRequest* request,
                                           machine::ImagePullResponse* response) {
  return HandleCall(router_, ctx, "/machine.MachineService/ImagePull", [&](const Route& r) {
    // The legacy call pulls into the CRI containerd (v1alpha1_images.go), not the system one
    // that the legacy Upgrade pulls into.
    auto store = LegacyImagePullStore(request->namespace_());
    if (!store.ok()) return ToGrpc(store.status());
    auto box = r.cluster->PullImage(*r.target, request->reference(), *store);
    while (true) {
      if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
      auto item = box->Pop(kStreamPoll);
      if (!item) {
        if (box->Done()) return Gone();
        continue;
      }
      if (!item->error.ok()) return ToGrpc(item->error);
      if (item->final) {
        response->add_messages();
        return grpc::Status::OK;
      }
    }
  });
}

}  // namespace tr::sim
