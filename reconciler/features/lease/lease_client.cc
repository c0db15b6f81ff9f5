#include "reconciler/features/lease/lease_client.h"

#include "base/percent_encoding.h"
#include "core/timestamp.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::lease {
namespace {

using nlohmann::json;

constexpr int64_t kMaxLeaseSeconds = 366 * 24 * 3600;

json ToJson(const std::string& name, const LeaseRecord& r) {
  json spec = {{"holderIdentity", r.holder},
               {"leaseDurationSeconds", r.duration.count()},
               {"leaseTransitions", r.transitions}};
  if (r.acquire_time) spec["acquireTime"] = FormatMicroTime(*r.acquire_time);
  if (r.renew_time) spec["renewTime"] = FormatMicroTime(*r.renew_time);
  json meta = {{"name", name}};
  if (!r.resource_version.empty()) meta["resourceVersion"] = r.resource_version;
  if (!r.labels.empty()) meta["labels"] = r.labels;
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", meta},
          {"spec", spec}};
}

absl::StatusOr<LeaseRecord> FromObject(const json& obj, const std::string& what) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) {
    return absl::InternalError(fmt::format("lease {}: the answer is not a Lease", what));
  }
  LeaseRecord r;
  r.resource_version = json_fields::Text(obj["metadata"], "resourceVersion");
  const json& labels = json_fields::Field(obj["metadata"], "labels");
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (value.is_string()) r.labels[key] = value.get<std::string>();
    }
  }
  const json spec = obj.value("spec", json::object());
  if (!spec.is_object()) return absl::InternalError(fmt::format("lease {}: bad spec", what));
  const json holder = spec.value("holderIdentity", json());
  r.holder = holder.is_string() ? holder.get<std::string>() : "";
  const int64_t duration = json_fields::Integer(spec, "leaseDurationSeconds", r.duration.count());
  // A longer lease would overflow the clock when added to a time; a real one is seconds.
  if (duration < 0 || duration > kMaxLeaseSeconds) {
    return absl::InternalError(fmt::format("lease {}: leaseDurationSeconds {} is outside 0..{}",
                                           what, duration, kMaxLeaseSeconds));
  }
  r.duration = std::chrono::seconds(duration);
  const json transitions = spec.value("leaseTransitions", json());
  if (transitions.is_number_integer()) r.transitions = transitions.get<int>();
  for (auto [field, slot] :
       {std::pair{"acquireTime", &r.acquire_time}, std::pair{"renewTime", &r.renew_time}}) {
    const json value = spec.value(field, json());
    if (!value.is_string()) continue;
    absl::StatusOr<TimePoint> t = ParseMicroTime(value.get<std::string>());
    if (!t.ok())
      return absl::InternalError(
          fmt::format("lease {}: {}", what, std::string(t.status().message())));
    *slot = *t;
  }
  return r;
}

}  // namespace

absl::StatusOr<LeaseRecord> ParseLease(std::string_view text, const std::string& what) {
  return FromObject(json::parse(text, nullptr, false), what);
}

bool LeaseRecord::SameSpec(const LeaseRecord& o) const {
  return holder == o.holder && duration == o.duration && acquire_time == o.acquire_time &&
         renew_time == o.renew_time && transitions == o.transitions;
}

std::string FormatMicroTime(TimePoint t) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() %
      1'000'000;
  std::string seconds = core::FormatTimestamp(t);  // "...:SSZ", floored to the second
  seconds.pop_back();
  return fmt::format("{}.{:06}Z", seconds, micros < 0 ? micros + 1'000'000 : micros);
}

absl::StatusOr<TimePoint> ParseMicroTime(const std::string& text) {
  absl::StatusOr<TimePoint> whole = core::ParseTimestamp(text);
  if (!whole.ok()) return whole.status();
  // ParseTimestamp reads the fraction but drops it; add back its first six digits.
  int64_t micros = 0;
  if (text.size() > 20 && text[19] == '.') {
    int digits = 0;
    for (size_t i = 20; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (digits < 6) micros = micros * 10 + (text[i] - '0'), ++digits;
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  return *whole + std::chrono::microseconds(micros);
}

std::string LeaseClient::Path(const std::string& name) const {
  return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases{}", namespace_,
                     name.empty() ? "" : "/" + name);
}

absl::StatusOr<std::optional<LeaseRecord>> LeaseClient::Get(const std::string& name) {
  absl::StatusOr<std::string> text = kube_.GetObject(Path(name));
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  absl::StatusOr<LeaseRecord> record = ParseLease(*text, name);
  if (!record.ok()) return record.status();
  return *record;
}

absl::StatusOr<LeaseRecord> LeaseClient::Create(const std::string& name,
                                                const LeaseRecord& record) {
  LeaseRecord fresh = record;
  fresh.resource_version.clear();
  absl::StatusOr<std::string> text = kube_.CreateObject(Path(""), ToJson(name, fresh).dump());
  if (!text.ok()) return text.status();
  return ParseLease(*text, name);
}

absl::StatusOr<LeaseRecord> LeaseClient::Update(const std::string& name,
                                                const LeaseRecord& record) {
  absl::StatusOr<std::string> text = kube_.ReplaceObject(Path(name), ToJson(name, record).dump());
  if (!text.ok()) return text.status();
  return ParseLease(*text, name);
}

absl::StatusOr<std::vector<std::pair<std::string, LeaseRecord>>> LeaseClient::List(
    const std::string& label_selector) {
  absl::StatusOr<std::string> text = kube_.GetObject(
      Path("") + "?labelSelector=" + PercentEncode(label_selector));
  if (!text.ok()) return text.status();
  const json list = json::parse(*text, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return absl::InternalError("lease list: the answer is not a LeaseList");
  }
  std::vector<std::pair<std::string, LeaseRecord>> leases;
  for (const json& item : list["items"]) {
    absl::StatusOr<LeaseRecord> record = FromObject(item, "list");
    if (!record.ok()) return record.status();
    leases.emplace_back(json_fields::Text(item["metadata"], "name"), *std::move(record));
  }
  return leases;
}

}  // namespace tr::reconciler::lease
