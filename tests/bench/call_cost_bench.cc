// Benchmark (issue 53): what one Talos call costs the process that makes it, by the way it is
// made. One talos-sim (a child process) serves N clusters of 3 control planes; this process
// holds one client per cluster and asks `MachineService/Version` of the nodes, round robin,
// in five ways:
//
//   client, 1 thread:      the daemon's Talos client (grpc_talos_client.h), one call after another;
//   client, T threads:     the same from T threads at once (the daemon's reconcile workers);
//   callback, W in flight: gRPC's callback API on the same kind of channels, W calls kept in
//                          flight, each completion starting the next on gRPC's own thread (a
//                          reconcile written as completions: no thread waits for a reply);
//   batch of B, T threads: T threads, each starting B calls through the callback API and waiting
//                          once for all B (B = 5: a look that asks its nodes at once; B = 1: a
//                          blocking call whose reply another thread receives);
//   blocking stub, T threads: gRPC's synchronous stub, without the client's routing (its floor).
//
// For each it prints this process's CPU time, voluntary and involuntary context switches per
// call, and the calls per second. CPU is the whole process (getrusage), so it includes gRPC's
// own threads.
//
// Usage: call_cost_bench [--clusters N (default 64)] [--calls N (each way; default 20000)]
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "fmt/format.h"
#include "machine/machine.grpc.pb.h"
#include "reconciler/clients/talos/grpc_talos_client.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "tests/bench/bench_row.h"
#include "tests/bench/bench_support.h"
#include "tests/support/e2e/sim_process.h"

namespace tr::e2e {
namespace {

namespace talos = reconciler::talos;

constexpr int kNodesPerCluster = 3;
constexpr auto kCallTimeout = std::chrono::seconds(30);

struct Options {
  int clusters = 64;
  int calls = 20'000;
};

struct Usage {
  double cpu_seconds = 0;
  long voluntary = 0;
  long involuntary = 0;
  std::chrono::steady_clock::time_point at;
};

Usage Now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return {seconds(u.ru_utime) + seconds(u.ru_stime), u.ru_nvcsw, u.ru_nivcsw,
          std::chrono::steady_clock::now()};
}

// One cluster as both kinds of caller see it: the daemon's client and raw stubs on a channel
// to its first endpoint, made with the same credentials.
struct Cluster {
  std::unique_ptr<talos::TalosClient> client;
  std::unique_ptr<machine::MachineService::Stub> stub;
  std::vector<std::string> nodes;
};

absl::StatusOr<Cluster> Connect(const SimClusterInfo& info) {
  auto config = talos::LoadTalosConfig(info.talosconfig);
  if (!config.ok()) return config.status();
  auto context = config->Context();
  if (!context.ok()) return context.status();
  auto client = talos::NewGrpcTalosClient(*context, Env::Default());
  if (!client.ok()) return client.status();
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = context->ca_pem;
  tls.pem_cert_chain = context->crt_pem;
  tls.pem_private_key = talos::NormalizeKeyPem(context->key_pem);
  auto channel =
      grpc::CreateChannel(context->endpoints.front().Target(), grpc::SslCredentials(tls));
  Cluster cluster{*std::move(client), machine::MachineService::NewStub(channel), {}};
  for (const auto& node : info.nodes) cluster.nodes.push_back(node.address);
  return cluster;
}

// Which cluster and node the `i`th call asks.
struct Target {
  Cluster* cluster;
  const std::string* node;
};
Target TargetOf(std::vector<Cluster>& clusters, long i) {
  Cluster& c = clusters[static_cast<size_t>(i) % clusters.size()];
  return {&c,
          &c.nodes[static_cast<size_t>(i / static_cast<long>(clusters.size())) % c.nodes.size()]};
}

// Counts down to zero; Wait returns then.
class Latch {
 public:
  explicit Latch(long count) : count_(count) {}
  void CountDown() {
    std::lock_guard lock(mu_);
    if (--count_ == 0) done_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable done_;
  long count_;
};

// One Version call through the callback API; `done(ok)` runs on gRPC's thread.
void StartCallback(const Target& target, std::function<void(bool)> done) {
  struct Call {
    grpc::ClientContext context;
    machine::VersionResponse reply;
    std::function<void(bool)> done;
  };
  auto* call = new Call;
  call->done = std::move(done);
  call->context.set_deadline(Env::Default().Now() + kCallTimeout);
  call->context.AddMetadata("node", *target.node);
  target.cluster->stub->async()->Version(
      &call->context, &google::protobuf::Empty::default_instance(), &call->reply,
      [call](grpc::Status status) {
        const bool ok = status.ok() && call->reply.messages_size() == 1;
        auto finish = std::move(call->done);
        delete call;
        finish(ok);
      });
}

// Runs `threads` threads that share `calls` calls, each made by `one(i)`; the failures.
long OnThreads(int threads, long calls, const std::function<bool(long)>& one) {
  std::atomic<long> next{0};
  std::atomic<long> failed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (long i = next++; i < calls; i = next++) failed += !one(i);
    });
  }
  for (auto& thread : pool) thread.join();
  return failed;
}

long ClientCalls(std::vector<Cluster>& clusters, int threads, long calls) {
  return OnThreads(threads, calls, [&](long i) {
    Target t = TargetOf(clusters, i);
    return t.cluster->client->Version(*t.node).ok();
  });
}

long StubCalls(std::vector<Cluster>& clusters, int threads, long calls) {
  return OnThreads(threads, calls, [&](long i) {
    Target t = TargetOf(clusters, i);
    grpc::ClientContext context;
    context.set_deadline(Env::Default().Now() + kCallTimeout);
    context.AddMetadata("node", *t.node);
    machine::VersionResponse reply;
    return t.cluster->stub->Version(&context, {}, &reply).ok() && reply.messages_size() == 1;
  });
}

long CallbackCalls(std::vector<Cluster>& clusters, int in_flight, long calls) {
  std::atomic<long> next{0};
  std::atomic<long> failed{0};
  Latch all(calls);
  std::function<void()> start_next = [&] {
    const long i = next++;
    if (i >= calls) return;
    StartCallback(TargetOf(clusters, i), [&](bool ok) {
      failed += !ok;
      start_next();
      all.CountDown();
    });
  };
  for (int w = 0; w < in_flight; ++w) start_next();
  all.Wait();
  return failed;
}

long BatchCalls(std::vector<Cluster>& clusters, int threads, int batch, long calls) {
  return OnThreads(threads, calls / batch, [&](long b) {
    Latch done(batch);
    std::atomic<int> ok{0};
    for (int k = 0; k < batch; ++k) {
      StartCallback(TargetOf(clusters, b * batch + k), [&](bool fine) {
        ok += fine;
        done.CountDown();
      });
    }
    done.Wait();
    return ok.load() == batch;
  });
}

// Runs one way, prints its line and row; false when a call failed.
bool Measure(const std::string& way, long calls, const std::function<long()>& run) {
  const Usage before = Now();
  const long failed = run();
  const Usage after = Now();
  const double seconds = std::chrono::duration<double>(after.at - before.at).count();
  const double cpu_us = (after.cpu_seconds - before.cpu_seconds) * 1e6 / calls;
  std::printf("%-28s %9.0f µs CPU %7.2f vol %7.2f invol cs %9.0f calls/s%s\n", way.c_str(), cpu_us,
              static_cast<double>(after.voluntary - before.voluntary) / calls,
              static_cast<double>(after.involuntary - before.involuntary) / calls, calls / seconds,
              failed ? fmt::format("  ({} failed)", failed).c_str() : "");
  PrintBenchRow("CPU per Talos call, " + way, "", fmt::format("{:.0f} µs", cpu_us), std::nullopt,
                fmt::format("{} Version calls, {:.0f} calls/s", calls, calls / seconds));
  return failed == 0;
}

int Run(const Options& options) {
  const std::filesystem::path dir = BenchDirectory("call-cost");
  if (dir.empty()) return 1;
  FleetOptions fleet_options;
  fleet_options.time_scale = 1;
  auto sim = SimProcess::Start(
      dir, FleetYaml(LargeFleet(options.clusters, "1.11.6", kNodesPerCluster, 0), fleet_options),
      std::chrono::minutes(5));
  if (!sim.ok()) {
    std::fprintf(stderr, "%s\n", std::string(sim.status().message()).c_str());
    return 1;
  }
  std::vector<Cluster> clusters;
  for (const auto& info : (*sim)->clusters()) {
    auto cluster = Connect(info);
    if (!cluster.ok()) {
      std::fprintf(stderr, "%s\n", std::string(cluster.status().message()).c_str());
      return 1;
    }
    clusters.push_back(*std::move(cluster));
  }
  const long calls = options.calls;
  // Every connection made and every path warm before anything is counted.
  if (ClientCalls(clusters, 8, static_cast<long>(clusters.size()) * kNodesPerCluster) != 0 ||
      StubCalls(clusters, 8, static_cast<long>(clusters.size()) * kNodesPerCluster) != 0) {
    std::fprintf(stderr, "the warm-up calls failed\n");
    return 1;
  }
  std::printf("%d clusters of %d nodes, %ld MachineService/Version calls each way\n",
              options.clusters, kNodesPerCluster, calls);
  bool ok = true;
  ok &= Measure("client, 1 thread", calls, [&] { return ClientCalls(clusters, 1, calls); });
  for (int threads : {16, 256}) {
    ok &= Measure(fmt::format("client, {} threads", threads), calls,
                  [&] { return ClientCalls(clusters, threads, calls); });
    ok &= Measure(fmt::format("blocking stub, {} threads", threads), calls,
                  [&] { return StubCalls(clusters, threads, calls); });
  }
  for (int in_flight : {1, 16, 256}) {
    ok &= Measure(fmt::format("callback, {} in flight", in_flight), calls,
                  [&] { return CallbackCalls(clusters, in_flight, calls); });
  }
  for (int batch : {1, 5}) {
    for (int threads : {16, 256}) {
      ok &= Measure(fmt::format("batch of {}, {} threads", batch, threads), calls,
                    [&] { return BatchCalls(clusters, threads, batch, calls); });
    }
  }
  clusters.clear();
  if (absl::Status st = (*sim)->Stop(); !st.ok()) return 1;
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace tr::e2e

int main(int argc, char** argv) {
  tr::e2e::Options options;
  const bool read =
      tr::e2e::ReadPositiveFlags(argc, argv, "usage: call_cost_bench [--clusters N] [--calls N]",
                                 [&options](const std::string& name, int value) {
                                   if (name == "--clusters") {
                                     options.clusters = value;
                                   } else if (name == "--calls") {
                                     options.calls = value;
                                   } else {
                                     return false;
                                   }
                                   return true;
                                 });
  if (!read) return 2;
  tr::e2e::RaiseFileLimit();
  return tr::e2e::Run(options);
}
