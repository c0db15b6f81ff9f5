#include "tests/sim/control_server.h"

#include <httplib.h>

#include <charconv>

#include "core/version.h"
#include "fmt/format.h"
#include "tests/sim/common/http_listener.h"
#include "tests/sim/common/json_reply.h"

namespace tr::sim {
namespace {

using nlohmann::json;

void ReplyStatus(httplib::Response& res, const absl::Status& status) {
  const int code = status.code() == absl::StatusCode::kNotFound          ? 404
                   : status.code() == absl::StatusCode::kInvalidArgument ? 400
                                                                         : 500;
  SendJson(res, code, {{"error", std::string(status.message())}}, 2);
}

absl::StatusOr<Fault> FaultFromJson(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("body is not JSON");
  auto spec = FleetSpec::Parse(fmt::format(
      "clusters: [{{name: x, nodes: [{{name: x, role: controlplane, talos: v1.0.0, kubernetes: "
      "1.0.0, faults: [{}]}}]}}]",
      j.dump()));
  if (!spec.ok()) return spec.status();
  return spec->clusters[0].nodes[0].faults[0];
}

// A fleet-file duration ("5s", "250ms") through the fleet-file parser.
absl::StatusOr<std::chrono::milliseconds> DurationFromJson(const json& value) {
  auto spec = FleetSpec::Parse(fmt::format(
      "clusters: [{{name: x, nodes: [{{name: x, role: controlplane, talos: v1.0.0, kubernetes: "
      "1.0.0, faults: [{{kind: slow_reboot, delay: {}}}]}}]}}]",
      value.dump()));
  if (!spec.ok()) return spec.status();
  return spec->clusters[0].nodes[0].faults[0].delay;
}

json FactoryToJson(const Fleet& fleet) {
  const FactoryFaults f = fleet.factory_faults();
  return {
      {"url", fleet.factory_url()},
      {"versions", fleet.factory().Versions()},
      {"broken", fleet.factory().BrokenVersions()},
      {"broken_reads", fleet.factory().broken_reads()},
      {"faults",
       {{"internal_error", f.internal_error}, {"hang", f.hang}, {"delay_ms", f.delay.count()}}}};
}

// Adds (set) or clears one factory fault by its control-API name.
absl::Status ChangeFactoryFault(Fleet& fleet, const std::string& kind, bool set,
                                std::chrono::milliseconds delay) {
  FactoryFaults f = fleet.factory_faults();
  if (kind == "internal_error")
    f.internal_error = set;
  else if (kind == "hang")
    f.hang = set;
  else if (kind == "slow")
    f.delay = set ? delay : std::chrono::milliseconds(0);
  else
    return absl::InvalidArgumentError(fmt::format("unknown factory fault \"{}\"", kind));
  fleet.SetFactoryFaults(f);
  return absl::OkStatus();
}

}  // namespace

json SnapshotToJson(const NodeSnapshot& n) {
  json faults = json::array();
  for (const auto& f : n.faults) {
    faults.push_back({{"kind", FaultKindName(f.kind)},
                      {"count", f.count},
                      {"delay_ms", f.delay.count()},
                      {"image", f.image}});
  }
  json j = {{"cluster", n.cluster},
            {"name", n.name},
            {"address", n.address},
            {"role", NodeRoleName(n.role)},
            {"up", n.up},
            {"api_reachable", n.api_reachable},
            {"stage", MachineStageName(n.stage)},
            {"ready", n.ready},
            {"unmet_conditions", n.unmet_conditions},
            {"sequence", n.sequence},
            {"talos_tag", n.talos_tag},
            {"kubernetes_version", n.kubernetes_version},
            {"boot_id", n.boot_id},
            {"boots", n.boots},
            {"active_slot", std::string(1, n.active_slot)},
            {"slot_a", n.slot_a},
            {"slot_b", n.slot_b},
            {"next_boot_slot", n.next_boot_slot},
            {"fallback_slot", n.fallback_slot},
            {"kube_ready", n.kube_ready},
            {"unschedulable", n.unschedulable},
            {"hanging_calls", n.hanging_calls},
            {"faults", faults}};
  if (n.etcd_member_id) {
    j["etcd"] = {{"member_id", fmt::format("{:016x}", *n.etcd_member_id)},
                 {"started", n.etcd_started},
                 {"healthy", n.etcd_healthy},
                 {"leader", n.etcd_leader}};
  }
  return j;
}

json AccessToJson(const ClusterAccess& a) {
  json roles = json::object();
  for (const auto& [role, path] : a.talosconfig_by_role) roles[role] = path.string();
  return {{"name", a.name},
          {"talosconfig", a.talosconfig.string()},
          {"talosconfigs", roles},
          {"kubeconfig", a.kubeconfig.string()},
          {"kube_api_url", a.kube_api_url},
          {"control_plane_addresses", a.control_plane_addresses},
          {"worker_addresses", a.worker_addresses}};
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(Fleet* fleet) {
  std::unique_ptr<ControlServer> control(new ControlServer());
  control->fleet_ = fleet;
  control->server_ = std::make_unique<httplib::Server>();
  control->server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  control->server_->set_tcp_nodelay(true);  // no answer held by Nagle's algorithm (40 ms)
  control->Routes();
  const int port = control->server_->bind_to_any_port("127.0.0.1");
  if (port <= 0) return absl::UnavailableError("control endpoint: cannot bind 127.0.0.1");
  control->url_ = fmt::format("http://127.0.0.1:{}", port);
  control->thread_ = ListenInBackground(control->server_.get());
  return control;
}

ControlServer::~ControlServer() { Stop(); }

void ControlServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void ControlServer::Routes() {
  httplib::Server& s = *server_;
  s.Get("/v1/nodes", [this](const httplib::Request&, httplib::Response& res) {
    json nodes = json::array();
    for (const auto& n : fleet_->Nodes()) nodes.push_back(SnapshotToJson(n));
    SendJson(res, 200, nodes, 2);
  });
  s.Get("/v1/nodes/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    auto node = fleet_->Node(req.matches[1].str());
    if (!node.ok()) return ReplyStatus(res, node.status());
    SendJson(res, 200, SnapshotToJson(*node), 2);
  });
  s.Post("/v1/nodes/([^/]+)/faults", [this](const httplib::Request& req, httplib::Response& res) {
    auto fault = FaultFromJson(req.body);
    if (!fault.ok()) return ReplyStatus(res, fault.status());
    if (auto st = fleet_->InjectFault(req.matches[1].str(), *fault); !st.ok()) {
      return ReplyStatus(res, st);
    }
    SendJson(res, 200, SnapshotToJson(*fleet_->Node(req.matches[1].str())), 2);
  });
  s.Delete("/v1/nodes/([^/]+)/faults", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<FaultKind> kind;
    if (req.has_param("kind")) {
      auto parsed = ParseFaultKind(req.get_param_value("kind"));
      if (!parsed.ok()) return ReplyStatus(res, parsed.status());
      kind = *parsed;
    }
    if (auto st = fleet_->ClearFaults(req.matches[1].str(), kind); !st.ok()) {
      return ReplyStatus(res, st);
    }
    SendJson(res, 200, SnapshotToJson(*fleet_->Node(req.matches[1].str())), 2);
  });
  s.Get("/v1/journal", [this](const httplib::Request& req, httplib::Response& res) {
    uint64_t since = 0;
    const std::string text = req.get_param_value("since");
    std::from_chars(text.data(), text.data() + text.size(), since);
    json entries = json::array();
    for (const auto& e : fleet_->journal().Entries()) {
      if (e.seq > since) entries.push_back(e.ToJson());
    }
    SendJson(res, 200, entries, 2);
  });
  FactoryRoutes();
  s.Get("/v1/clusters", [this](const httplib::Request&, httplib::Response& res) {
    json clusters = json::array();
    for (const auto& name : fleet_->ClusterNames()) {
      clusters.push_back(AccessToJson(*fleet_->Cluster(name)));
    }
    SendJson(res, 200, clusters, 2);
  });
}

void ControlServer::FactoryRoutes() {
  httplib::Server& s = *server_;
  s.Get("/v1/factory", [this](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, FactoryToJson(*fleet_), 2);
  });
  s.Post("/v1/factory/faults", [this](const httplib::Request& req, httplib::Response& res) {
    json j = json::parse(req.body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("kind") || !j["kind"].is_string()) {
      return ReplyStatus(res, absl::InvalidArgumentError("body must be {\"kind\": ...}"));
    }
    absl::StatusOr<std::chrono::milliseconds> delay = std::chrono::milliseconds(0);
    if (j.contains("delay")) delay = DurationFromJson(j["delay"]);
    if (!delay.ok()) return ReplyStatus(res, delay.status());
    if (auto st = ChangeFactoryFault(*fleet_, j["kind"], true, *delay); !st.ok()) {
      return ReplyStatus(res, st);
    }
    SendJson(res, 200, FactoryToJson(*fleet_), 2);
  });
  s.Delete("/v1/factory/faults", [this](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("kind")) {
      fleet_->SetFactoryFaults({});
    } else if (auto st = ChangeFactoryFault(*fleet_, req.get_param_value("kind"), false, {});
               !st.ok()) {
      return ReplyStatus(res, st);
    }
    SendJson(res, 200, FactoryToJson(*fleet_), 2);
  });
  s.Post("/v1/factory/versions", [this](const httplib::Request& req, httplib::Response& res) {
    json j = json::parse(req.body, nullptr, false);
    std::string tag = j.is_object() ? j.value("version", "") : "";
    if (!tag.empty() && !tag.starts_with("v")) tag = "v" + tag;
    if (!core::ParseTalosVersion(tag).ok()) {
      return ReplyStatus(res, absl::InvalidArgumentError("body must be {\"version\": \"v1.x.y\"}"));
    }
    fleet_->factory().AddVersion(tag);
    SendJson(res, 200, FactoryToJson(*fleet_), 2);
  });
  s.Post("/v1/factory/broken", [this](const httplib::Request& req, httplib::Response& res) {
    json j = json::parse(req.body, nullptr, false);
    std::string tag = j.is_object() ? j.value("version", "") : "";
    if (!tag.empty() && !tag.starts_with("v")) tag = "v" + tag;
    if (!core::ParseTalosVersion(tag).ok()) {
      return ReplyStatus(res,
                         absl::InvalidArgumentError("body must be {\"version\": \"v1.x.y\"}"));
    }
    fleet_->factory().MarkBroken(tag);
    SendJson(res, 200, FactoryToJson(*fleet_), 2);
  });
}

}  // namespace tr::sim
