#include "reconciler/features/lease/shard_elector.h"

#include <algorithm>

#include "core/shards.h"
#include "fmt/format.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::lease {
namespace {

std::string Text(const absl::Status& s) { return std::string(s.message()); }

// The label of every membership Lease; its value is the election's Lease name.
constexpr std::string_view kElectionLabel = "talos-reconciler/election";

std::chrono::seconds WholeSeconds(std::chrono::milliseconds d) {
  return std::chrono::ceil<std::chrono::seconds>(d);
}

}  // namespace

absl::Status ValidateTimings(const ElectionTimings& t) {
  if (t.retry_period <= std::chrono::milliseconds(0) || t.renew_deadline <= t.retry_period ||
      WholeSeconds(t.lease_duration) <= t.renew_deadline) {
    return absl::InvalidArgumentError(
        "leader election timings: want lease duration > renew deadline > retry period > 0");
  }
  return absl::OkStatus();
}

ShardElector::ShardElector(LeaseClient& leases, ShardElectorOptions options, Env& env)
    : leases_(leases),
      options_(std::move(options)),
      env_(env),
      count_(std::max(1, options_.shards)) {
  MutexLock lock(mu_);
  shards_.resize(static_cast<size_t>(count_));
}

std::string ShardElector::LeaseName(int shard) const {
  return core::ShardLeaseName(options_.lease_name, shard, options_.shards);
}

void ShardElector::Observe(int shard, TimePoint now) {
  absl::StatusOr<std::optional<LeaseRecord>> read = leases_.Get(LeaseName(shard));
  if (!read.ok()) {
    ModuleLogger("lease")->warn("lease={} step=read error={}", LeaseName(shard),
                                LogValue(Text(read.status())));
    return;
  }
  MutexLock lock(mu_);
  Shard& s = shards_[static_cast<size_t>(shard)];
  const bool changed =
      s.observed.has_value() != read->has_value() || (s.observed && !s.observed->SameSpec(**read));
  if (changed || s.observed_at == TimePoint{}) s.observed_at = now;
  s.observed = *read;
  if (s.held_until > now && (!s.observed || s.observed->holder != options_.identity)) {
    s.held_until = {};  // someone else wrote it: stop acting at once
    ModuleLogger("lease")->warn("lease={} step=lost holder={}", LeaseName(shard),
                                LogValue(s.observed ? s.observed->holder : ""));
  }
}

bool ShardElector::Free(int shard, TimePoint now) const {
  const Shard& s = shards_[static_cast<size_t>(shard)];
  if (!s.observed || s.observed->holder.empty()) return true;
  if (s.observed->holder == options_.identity) return false;  // ours: renewed, not taken
  return s.observed_at + s.observed->duration <= now;
}

core::ShardCensus ShardElector::Census(const std::vector<core::Member>& members,
                                       TimePoint now) const {
  core::ShardCensus census;
  census.shards = count_;
  const core::MemberLiveness liveness{
      options_.timings.lease_duration - options_.timings.renew_deadline, StalledAfter()};
  for (const std::string& identity : core::LiveMembers(members, options_.identity, now, liveness)) {
    census.held[identity] = 0;
  }
  for (int i = 0; i < count_; ++i) {
    const Shard& s = shards_[static_cast<size_t>(i)];
    if (Free(i, now)) {
      ++census.free;
      if (now - s.observed_at >= options_.timings.lease_duration) ++census.stale_free;
    } else if (s.observed && !s.observed->holder.empty()) {
      ++census.held[s.observed->holder];  // a holder without a member Lease counts too
    }
  }
  return census;
}

void ShardElector::Heartbeat() {
  const std::string name = core::MemberLeaseName(options_.lease_name, options_.identity);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const TimePoint sent = env_.Now();
    LeaseRecord record = member_.value_or(LeaseRecord{});
    record.holder = options_.identity;
    record.duration = WholeSeconds(options_.timings.lease_duration);
    if (!member_ || !record.acquire_time) record.acquire_time = sent;
    record.renew_time = sent;
    record.labels = {{std::string(kElectionLabel), options_.lease_name}};
    absl::StatusOr<LeaseRecord> written =
        member_ ? leases_.Update(name, record) : leases_.Create(name, record);
    if (written.ok()) {
      member_ = *std::move(written);
      return;
    }
    if (!absl::IsAlreadyExists(written.status()) && !absl::IsAborted(written.status())) {
      ModuleLogger("lease")->warn("lease={} step=member error={}", name,
                                  LogValue(Text(written.status())));
      return;
    }
    // Left by an earlier run of this identity, or written meanwhile: read it, write again.
    absl::StatusOr<std::optional<LeaseRecord>> read = leases_.Get(name);
    if (!read.ok()) return;
    member_ = *read;
  }
}

std::vector<core::Member> ShardElector::Members() {
  absl::StatusOr<std::vector<std::pair<std::string, LeaseRecord>>> listed =
      leases_.List(fmt::format("{}={}", kElectionLabel, options_.lease_name));
  if (!listed.ok()) {
    ModuleLogger("lease")->warn("step=members error={}", LogValue(Text(listed.status())));
    return {};  // counted from the shard holders alone this round
  }
  const TimePoint now = env_.Now();
  std::map<std::string, MemberSighting> sightings;
  std::vector<core::Member> members;
  for (const auto& [name, record] : *listed) {
    MemberSighting seen{record.renew_time, now};
    if (auto it = sightings_.find(name);
        it != sightings_.end() && it->second.renewed == seen.renewed) {
      seen.since = it->second.since;
    }
    sightings.emplace(name, seen);
    if (!record.renew_time) continue;
    members.push_back({record.holder, *record.renew_time, record.duration,
                       std::chrono::duration_cast<std::chrono::milliseconds>(now - seen.since)});
  }
  sightings_ = std::move(sightings);
  return members;
}

// A live replica renews its membership Lease every retry period (±10%), so from our rounds its
// renewTime stands still for a little more than one; two allow for one slow or failed renewal.
// At most a lease duration less one retry period: a replica renews its membership Lease just
// before its shard Leases, and we read it at most a round after them, so a killed one is seen
// to have stopped at the latest in the round after its shard Leases expire, the first in which
// a survivor that took one could give a shard back: it never counts as a member holding
// nothing.
std::chrono::milliseconds ShardElector::StalledAfter() const {
  const ElectionTimings& t = options_.timings;
  return std::min(2 * t.retry_period, t.lease_duration - t.retry_period);
}

void ShardElector::Tick() {
  const int n = count_;
  Heartbeat();
  const std::vector<core::Member> members = Members();
  for (int i = 0; i < n; ++i) Observe(i, env_.Now());
  const TimePoint now = env_.Now();
  std::vector<int> mine, free;
  core::ShardCensus census;
  {
    MutexLock lock(mu_);
    census = Census(members, now);
    replicas_ = static_cast<int>(census.held.size());
    // Start the search for a free shard at a place of our own, so replicas starting together
    // mostly try different shards.
    const int offset =
        static_cast<int>(core::Fnv1a32(options_.identity) % static_cast<uint32_t>(n));
    for (int k = 0; k < n; ++k) {
      const int i = (offset + k) % n;
      const Shard& s = shards_[static_cast<size_t>(i)];
      if (s.observed && s.observed->holder == options_.identity) {
        mine.push_back(i);
      } else if (Free(i, now)) {
        free.push_back(i);
      }
    }
  }
  std::sort(mine.begin(), mine.end());
  const core::ShareStep step = core::NextShareStep(census, options_.identity);
  if (step.give_back && !mine.empty()) {
    if (Release(mine.back(), /*voluntary=*/true)) mine.pop_back();
  }
  for (int shard : mine) Renew(shard);
  if (!step.take) return;
  for (int i : free) {
    if (Acquire(i)) break;  // one a round, so replicas starting together share
  }
}

void ShardElector::Wrote(int shard, const absl::StatusOr<LeaseRecord>& written, TimePoint sent,
                         const char* what) {
  MutexLock lock(mu_);
  Shard& s = shards_[static_cast<size_t>(shard)];
  if (!written.ok()) {
    // A conflict means another replica wrote it: stop acting now, read it again next round.
    // Any other failure leaves the deadline to run out.
    if (absl::IsAborted(written.status()) || absl::IsAlreadyExists(written.status())) {
      s.held_until = {};
      s.observed_at = {};
    }
    ModuleLogger("lease")->log(
        absl::IsAborted(written.status()) || absl::IsAlreadyExists(written.status())
            ? spdlog::level::info
            : spdlog::level::warn,
        "lease={} step={} error={}", LeaseName(shard), what, LogValue(Text(written.status())));
    return;
  }
  s.observed = *written;
  s.observed_at = sent;
  s.held_until =
      written->holder == options_.identity ? sent + options_.timings.renew_deadline : TimePoint{};
}

void ShardElector::Renew(int shard) {
  LeaseRecord record;
  bool lapsed = false;
  {
    MutexLock lock(mu_);
    const Shard& s = shards_[static_cast<size_t>(shard)];
    record = *s.observed;
    lapsed = s.held_until <= env_.Now();
  }
  const TimePoint sent = env_.Now();
  record.renew_time = sent;
  record.duration = WholeSeconds(options_.timings.lease_duration);
  Wrote(shard, leases_.Update(LeaseName(shard), record), sent, "renew");
  if (!lapsed) return;
  // Held again after a gap (or after a restart of this identity): a new term.
  bool held = false;
  {
    MutexLock lock(mu_);
    Shard& s = shards_[static_cast<size_t>(shard)];
    held = s.held_until > sent;
    if (held) ++s.term;
  }
  if (held) {
    ModuleLogger("lease")->info("lease={} step=acquired identity={}", LeaseName(shard),
                                LogValue(options_.identity));
    if (on_acquired_) on_acquired_(shard);
  }
}

bool ShardElector::Acquire(int shard) {
  std::optional<LeaseRecord> old;
  {
    MutexLock lock(mu_);
    old = shards_[static_cast<size_t>(shard)].observed;
  }
  const TimePoint sent = env_.Now();
  LeaseRecord record = old.value_or(LeaseRecord{});
  record.transitions = old ? old->transitions + (old->holder != options_.identity ? 1 : 0) : 0;
  record.holder = options_.identity;
  record.duration = WholeSeconds(options_.timings.lease_duration);
  record.acquire_time = sent;
  record.renew_time = sent;
  const absl::StatusOr<LeaseRecord> written =
      old ? leases_.Update(LeaseName(shard), record) : leases_.Create(LeaseName(shard), record);
  Wrote(shard, written, sent, "acquire");
  if (!written.ok()) return false;
  {
    MutexLock lock(mu_);
    ++shards_[static_cast<size_t>(shard)].term;
  }
  ModuleLogger("lease")->info("lease={} step=acquired identity={} previous={} transitions={}",
                              LeaseName(shard), LogValue(options_.identity),
                              LogValue(old ? old->holder : ""), record.transitions);
  if (on_acquired_) on_acquired_(shard);
  return true;
}

bool ShardElector::Release(int shard, bool voluntary) {
  // Asked outside the lock (the answer takes the reconciler's). A record that starts an
  // operation after this answer is under way (BeginActing) while it is pushed, which the check
  // below sees; one that ended just before it is on the branch, and the next holder resumes it.
  if (voluntary && in_flight_ && in_flight_(shard)) {
    ModuleLogger("lease")->info("lease={} step=give-back-deferred in_flight=true",
                                LeaseName(shard));
    return false;  // a node of one of its clusters is mid-operation: a later round
  }
  LeaseRecord record;
  {
    MutexLock lock(mu_);
    Shard& s = shards_[static_cast<size_t>(shard)];
    if (!s.observed || s.observed->holder != options_.identity) return false;
    if (voluntary && s.acting > 0) {
      ModuleLogger("lease")->info("lease={} step=give-back-deferred acting={}", LeaseName(shard),
                                  s.acting);
      return false;  // a node operation is under way: give it back in a later round
    }
    s.held_until = {};  // stop acting before giving it back
    record = *s.observed;
  }
  const TimePoint sent = env_.Now();
  // As client-go releases: no holder, the shortest duration, so the next taker waits 1 s.
  record.holder.clear();
  record.duration = std::chrono::seconds(1);
  record.acquire_time = sent;
  record.renew_time = sent;
  Wrote(shard, leases_.Update(LeaseName(shard), record), sent, "release");
  ModuleLogger("lease")->info("lease={} step=released", LeaseName(shard));
  return true;
}

void ShardElector::ReleaseAll() {
  for (int i = 0; i < count_; ++i) Release(i, /*voluntary=*/false);
  if (!member_) return;
  // Leave the members at once rather than after the lease duration.
  LeaseRecord record = *member_;
  record.holder.clear();
  record.duration = std::chrono::seconds(1);
  record.renew_time = env_.Now();
  absl::StatusOr<LeaseRecord> written = leases_.Update(
      core::MemberLeaseName(options_.lease_name, options_.identity), record);
  if (written.ok()) member_ = *std::move(written);
}

void ShardElector::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    Tick();
    if (!env_.SleepFor(Spread(options_.timings.retry_period, 0.1, env_), stop)) break;
  }
  ReleaseAll();
}

std::optional<uint64_t> ShardElector::Holding(int shard, TimePoint now) const {
  if (shard < 0 || shard >= count_) return std::nullopt;
  MutexLock lock(mu_);
  const Shard& s = shards_[static_cast<size_t>(shard)];
  if (s.held_until <= now) return std::nullopt;
  return s.term;
}

std::vector<int> ShardElector::Held(TimePoint now) const {
  std::vector<int> held;
  for (int i = 0; i < count_; ++i) {
    if (Holding(i, now)) held.push_back(i);
  }
  return held;
}

int ShardElector::ShardOfCluster(const std::string& cluster) const {
  return core::ShardOf(cluster, pinned_ ? pinned_(cluster) : std::nullopt, count_);
}

std::optional<uint64_t> ShardElector::Term(const std::string& cluster) {
  return Holding(ShardOfCluster(cluster), env_.Now());
}

bool ShardElector::BeginActing(const std::string& cluster) {
  const int shard = ShardOfCluster(cluster);
  const TimePoint now = env_.Now();
  MutexLock lock(mu_);
  Shard& s = shards_[static_cast<size_t>(shard)];
  if (s.held_until <= now) return false;
  ++s.acting;
  acting_.emplace(cluster, shard);
  return true;
}

void ShardElector::EndActing(const std::string& cluster) {
  MutexLock lock(mu_);
  auto it = acting_.find(cluster);
  if (it == acting_.end()) return;
  --shards_[static_cast<size_t>(it->second)].acting;
  acting_.erase(it);
}

int ShardElector::Replicas() const {
  MutexLock lock(mu_);
  return replicas_;
}

}  // namespace tr::reconciler::lease
