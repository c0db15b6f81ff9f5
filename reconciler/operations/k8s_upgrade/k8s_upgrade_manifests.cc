// The last step of KubernetesUpgrade: the bootstrap manifests. Talos renders them from the
// machine configuration (Manifests resources in the controlplane namespace: kube-proxy, CoreDNS,
// RBAC, ...) but machined creates only what is missing, so after the kube-proxy image changed
// the kube-proxy DaemonSet in the cluster still runs the old one. Like `talosctl upgrade-k8s`,
// the step reads the manifests from the first control plane and syncs them as Talos does
// (manifest_sync.h): field manager `talos`, Talos's inventory, prune, then the rollout wait.
#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "reconciler/operations/k8s_upgrade/manifest_sync.h"
#include "reconciler/operations/k8s_upgrade/wait.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

using nlohmann::json;

constexpr const char* kManifests = "manifests";

std::string InventoryConfigMapPath() {
  return fmt::format("/api/v1/namespaces/{}/configmaps/{}", kInventoryNamespace, kInventoryName);
}

absl::Status ManifestError(const absl::Status& s, const std::string& what) {
  return absl::Status(s.code(), fmt::format("{}: {}", what, std::string(s.message())));
}

std::string RolloutSeconds(std::chrono::milliseconds d) {
  if (d < std::chrono::seconds(1)) return fmt::format("{}ms", d.count());
  return fmt::format("{}s", std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

}  // namespace

absl::Status ManifestSync::Fence() {
  return options_.before_change ? options_.before_change() : absl::OkStatus();
}

void ManifestSync::Report(int done, int total, const std::string& line) {
  if (options_.report) options_.report(done, total, line);
}

absl::StatusOr<std::set<std::string>> ManifestSync::ReadInventory() {
  absl::StatusOr<std::string> text = kube_.GetObject(InventoryConfigMapPath());
  if (absl::IsNotFound(text.status())) {
    if (absl::Status held = Fence(); !held.ok()) return held;  // creating it is a change too
    const json empty = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", kInventoryName}, {"namespace", kInventoryNamespace}}}};
    text = kube_.CreateObject(fmt::format("/api/v1/namespaces/{}/configmaps", kInventoryNamespace),
                              empty.dump());
  }
  if (!text.ok()) return ManifestError(text.status(), "reading the inventory");
  const json configmap = json::parse(*text, nullptr, false);
  resource_version_ = configmap.is_object() && configmap.contains("metadata")
                          ? configmap["metadata"].value("resourceVersion", "")
                          : "";
  return InventoryKeys(configmap);
}

// A whole write, as go-kubernetes' inventory does (every key, empty values); with the
// resourceVersion read, so a concurrent writer (machined, talosctl) is a Conflict, not lost.
absl::Status ManifestSync::WriteInventory(const std::set<std::string>& keys) {
  json data = json::object();
  for (const std::string& key : keys) data[key] = "";
  json meta = {{"name", kInventoryName}, {"namespace", kInventoryNamespace}};
  if (!resource_version_.empty()) meta["resourceVersion"] = resource_version_;
  const json configmap = {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta}, {"data", data}};
  absl::StatusOr<std::string> written =
      kube_.ReplaceObject(InventoryConfigMapPath(), configmap.dump());
  if (!written.ok()) return ManifestError(written.status(), "writing the inventory");
  const json back = json::parse(*written, nullptr, false);
  if (back.is_object() && back.contains("metadata")) {
    resource_version_ = back["metadata"].value("resourceVersion", "");
  }
  return absl::OkStatus();
}

// Every object's live state, read before anything is applied: an object of another inventory
// stops the sync with nothing changed, as go-kubernetes' Apply diffs every object first.
absl::StatusOr<std::vector<json>> ManifestSync::ReadLive(
    const std::vector<ManifestObject>& objects) {
  std::vector<json> live;
  for (const ManifestObject& object : objects) {
    absl::StatusOr<std::string> text = kube_.GetObject(object.Path());
    if (absl::IsNotFound(text.status())) {
      live.emplace_back();
      continue;
    }
    if (!text.ok()) return ManifestError(text.status(), "reading " + object.Describe());
    live.push_back(json::parse(*text, nullptr, false));
    if (std::string other = ForeignInventory(live.back()); !other.empty()) {
      return absl::FailedPreconditionError(fmt::format(
          "{} belongs to the inventory {}, not {}: nothing applied (talosctl refuses it too)",
          object.Describe(), other, kInventoryName));
    }
  }
  return live;
}

absl::StatusOr<bool> ManifestSync::Apply(const ManifestObject& object, const json& live) {
  if (!live.is_null() && Covers(live, object.object) && AppliedByTalos(live)) return false;
  if (absl::Status held = Fence(); !held.ok()) return held;
  absl::Status applied = kube_.ApplyObject(object.Path(), object.object.dump(), kTalosFieldManager);
  if (!applied.ok()) return ManifestError(applied, "applying " + object.Describe());
  return true;
}

absl::StatusOr<bool> ManifestSync::PruneOne(const std::string& key,
                                            const std::vector<ManifestObject>& objects) {
  std::optional<InventoryRef> ref = ParseInventoryKey(key);
  std::optional<std::string> path = ref ? InventoryRefPath(*ref, objects) : std::nullopt;
  if (!path) {
    return absl::FailedPreconditionError(
        fmt::format("the inventory lists {}, of a kind this reconciler cannot address", key));
  }
  absl::StatusOr<std::string> text = kube_.GetObject(*path);
  if (absl::IsNotFound(text.status())) return false;
  if (!text.ok()) return text.status();
  if (std::string other = ForeignInventory(json::parse(*text, nullptr, false)); !other.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("{} left the manifests but belongs to the inventory {}: not pruned",
                    ref->Describe(), other));
  }
  if (absl::Status held = Fence(); !held.ok()) return held;
  absl::Status deleted = kube_.DeleteObject(
      *path, R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})");
  if (absl::IsNotFound(deleted)) return false;
  if (!deleted.ok()) return ManifestError(deleted, "pruning " + ref->Describe());
  Report(0, 0, fmt::format("manifests: {} pruned (no longer in the manifests)", ref->Describe()));
  return true;
}

ManifestSync::Pruned ManifestSync::Prune(std::stop_token stop,
                                         const std::vector<ManifestObject>& objects,
                                         std::set<std::string> inventory) {
  std::set<std::string> wanted;
  for (const ManifestObject& o : objects) wanted.insert(o.InventoryKey());
  Pruned out{absl::OkStatus(), inventory, 0};
  for (const std::string& key : inventory) {
    if (wanted.contains(key)) continue;
    if (stop.stop_requested()) {
      out.status = absl::CancelledError("stopped while pruning the manifests");
      break;
    }
    absl::StatusOr<bool> deleted = PruneOne(key, objects);
    if (!deleted.ok()) {
      out.status = deleted.status();
      break;
    }
    out.deleted += *deleted;
    out.inventory.erase(key);
  }
  return out;
}

absl::Status ManifestSync::WaitRolledOut(std::stop_token stop,
                                         const std::vector<const ManifestObject*>& changed) {
  std::string not_ready, error;
  absl::Status waited = PollUntil(
      env_, stop, options_.poll_interval, options_.rollout_timeout,
      [&]() -> absl::StatusOr<bool> {
        for (const ManifestObject* o : changed) {
          auto found = kube_.ListWorkloads(o->kind, o->ns, o->name, "");
          if (!found.ok()) return found.status();
          for (const core::WorkloadStatus& w : *found) {
            not_ready = core::WorkloadNotReady(w);
            if (!not_ready.empty()) return false;
          }
        }
        return true;
      },
      &error);
  if (absl::IsDeadlineExceeded(waited)) {
    return absl::AbortedError(fmt::format(
        "the manifests did not roll out within {}: {}{}", RolloutSeconds(options_.rollout_timeout),
        not_ready.empty() ? "no answer" : not_ready, error.empty() ? "" : "; " + error));
  }
  if (absl::IsCancelled(waited)) {
    return absl::CancelledError(
        "stopped while waiting for the manifests to roll out: they are applied, a new run "
        "finds them current");
  }
  return waited;
}

ManifestSyncResult ManifestSync::Run(std::stop_token stop,
                                     const std::vector<ManifestObject>& objects) {
  ManifestSyncResult result;
  absl::StatusOr<std::set<std::string>> inventory = ReadInventory();
  if (!inventory.ok()) return {inventory.status(), 0, 0};
  absl::StatusOr<std::vector<json>> live = ReadLive(objects);
  if (!live.ok()) return {live.status(), 0, 0};
  std::vector<const ManifestObject*> changed;
  const int total = static_cast<int>(objects.size());
  for (int i = 0; i < total; ++i) {
    if (stop.stop_requested()) return {absl::CancelledError("stopped"), result.applied, 0};
    absl::StatusOr<bool> applied = Apply(objects[i], (*live)[i]);
    if (!applied.ok()) return {applied.status(), result.applied, 0};
    inventory->insert(objects[i].InventoryKey());
    if (*applied) {
      ++result.applied;
      changed.push_back(&objects[i]);
    }
    Report(i + 1, total,
           fmt::format("manifests {}/{}: {} {}", i + 1, total, objects[i].Describe(),
                       *applied ? "applied" : "already current"));
  }
  if (absl::Status s = WriteInventory(*inventory); !s.ok()) return {s, result.applied, 0};
  if (options_.prune) {
    Pruned pruned = Prune(stop, objects, *std::move(inventory));
    result.pruned = pruned.deleted;
    absl::Status written = WriteInventory(pruned.inventory);
    if (!pruned.status.ok()) return {pruned.status, result.applied, result.pruned};
    if (!written.ok()) return {written, result.applied, result.pruned};
  }
  std::erase_if(changed, [](const ManifestObject* o) {
    return o->kind != "DaemonSet" && o->kind != "Deployment" && o->kind != "StatefulSet";
  });
  result.status = WaitRolledOut(stop, changed);
  return result;
}

KubernetesUpgrade::Step KubernetesUpgrade::SyncManifests(std::stop_token stop,
                                                         UpgradeOutcome& outcome) {
  const UpgradeNode& first = options_.nodes.front();  // a control plane (PreChecks)
  auto resources = talos_.CosiList(first.address, "controlplane", "Manifests.kubernetes.talos.dev");
  if (!resources.ok()) return Failure{resources.status(), kManifests, first.name};
  std::vector<std::string> specs;
  for (const talos::CosiResource& r : *resources) specs.push_back(r.yaml_spec);
  absl::StatusOr<std::vector<ManifestObject>> objects = ManifestObjectsToApply(specs);
  if (!objects.ok()) return Failure{objects.status(), kManifests, first.name};
  ManifestSyncOptions sync;
  sync.prune = options_.prune_manifests;
  sync.poll_interval = options_.poll_interval;
  sync.rollout_timeout = options_.manifests_timeout;
  sync.before_change = [this, &first]() -> absl::Status {
    Step fenced = Fenced(kManifests, first);
    return fenced ? fenced->status : absl::OkStatus();
  };
  sync.report = [this](int done, int total, const std::string& line) {
    Report(kManifests, done, total, line);
  };
  ManifestSyncResult result = ManifestSync(kube_, env_, std::move(sync)).Run(stop, *objects);
  outcome.manifests_applied += result.applied;
  outcome.manifests_pruned += result.pruned;
  if (result.status.ok()) return std::nullopt;
  if (absl::IsCancelled(result.status) && stop.stop_requested() &&
      result.status.message() == "stopped") {
    return Stopped(kManifests, first);
  }
  return Failure{result.status, kManifests, ""};
}

}  // namespace tr::reconciler::k8s_upgrade
