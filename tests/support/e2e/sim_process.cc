#include "tests/support/e2e/sim_process.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/timestamp.h"
#include "fmt/format.h"
#include "tests/support/e2e/waiter.h"

namespace tr::e2e {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "2026-11-22T03:00:00.123456Z" with its microseconds (core::ParseTimestamp drops them).
std::chrono::system_clock::time_point ParseMicros(const std::string& text) {
  auto whole = core::ParseTimestamp(text);
  if (!whole.ok()) return {};
  std::chrono::microseconds fraction{0};
  if (text.size() > 20 && text[19] == '.') {
    int digits = 0;
    for (size_t i = 20; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 6;
         ++i, ++digits) {
      fraction = fraction * 10 + std::chrono::microseconds(text[i] - '0');
    }
    for (; digits < 6; ++digits) fraction *= 10;
  }
  return *whole + fraction;
}

JournalLine ToJournalLine(const json& j) {
  JournalLine line;
  line.seq = j.value("seq", uint64_t{0});
  line.time = ParseMicros(j.value("time", ""));
  line.call = j.value("kind", "") == "call";
  line.cluster = j.value("cluster", "");
  line.node = j.value("node", "");
  line.what = j.value("what", "");
  line.code = j.value("code", "");
  line.detail = j.value("detail", "");
  return line;
}

std::vector<std::string> Select(const std::vector<SimNodeInfo>& nodes, const char* role,
                                bool address) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    if (role == nullptr || n.role == role) out.push_back(address ? n.address : n.name);
  }
  return out;
}

}  // namespace

std::vector<std::string> SimClusterInfo::ControlPlaneAddresses() const {
  return Select(nodes, "controlplane", true);
}
std::vector<std::string> SimClusterInfo::NodeNames() const { return Select(nodes, nullptr, false); }
std::vector<std::string> SimClusterInfo::WorkerNames() const {
  return Select(nodes, "worker", false);
}
std::vector<std::string> SimClusterInfo::ControlPlaneNames() const {
  return Select(nodes, "controlplane", false);
}

fs::path BuiltBinary(const std::string& relative) { return fs::path(TR_E2E_BINARY_DIR) / relative; }

absl::StatusOr<std::unique_ptr<SimProcess>> SimProcess::Start(const fs::path& dir,
                                                              const std::string& fleet_yaml,
                                                              std::chrono::milliseconds timeout) {
  std::unique_ptr<SimProcess> sim(new SimProcess());
  sim->dir_ = dir;
  sim->state_dir_ = dir / "sim";
  fs::create_directories(dir);
  std::ofstream(dir / "fleet.yaml") << fleet_yaml;
  const int log = open((dir / "sim.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) return absl::InternalError("cannot create sim.log");
  auto process = gitsource::Subprocess::Spawn(
      {.argv = {BuiltBinary("tests/sim/talos-sim").string(), "--fleet",
                (dir / "fleet.yaml").string(), "--state-dir", sim->state_dir_.string()},
       .env = std::nullopt,
       .stdin_fd = -1,
       .stdout_fd = log,
       .stderr_fd = log,
       .working_dir = dir});
  close(log);
  if (!process.ok()) return process.status();
  sim->process_.emplace(*std::move(process));
  ChangeWatcher watcher;
  watcher.Watch(dir);
  watcher.Watch(sim->state_dir_);
  const bool ready = WaitUntil(watcher, timeout, [&] {
    return fs::exists(sim->state_dir_ / "ready.json") || !sim->running();
  });
  if (!ready || !sim->running()) {
    return absl::UnavailableError(fmt::format("talos-sim did not become ready:\n{}", sim->log()));
  }
  if (auto st = sim->ReadReady(); !st.ok()) return st;
  return sim;
}

absl::Status SimProcess::ReadReady() {
  json ready;
  try {
    ready = json::parse(ReadWhole(state_dir_ / "ready.json"));
    time_scale_ = ready.value("time_scale", 1.0);
    control_url_ = ready.at("control_url").get<std::string>();
    factory_url_ = ready.value("factory_url", "");
    for (const auto& c : ready.at("clusters")) {
      SimClusterInfo info;
      info.name = c.at("name").get<std::string>();
      info.talosconfig = c.at("talosconfig").get<std::string>();
      for (const auto& n : c.at("nodes")) {
        info.nodes.push_back({.name = n.at("name").get<std::string>(),
                              .address = n.at("address").get<std::string>(),
                              .role = n.at("role").get<std::string>()});
      }
      clusters_.push_back(std::move(info));
    }
  } catch (const json::exception& e) {
    return absl::InternalError(fmt::format("ready.json: {}", e.what()));
  }
  return absl::OkStatus();
}

SimProcess::~SimProcess() {
  if (process_.has_value() && running()) {
    process_->Signal(SIGTERM);
    if (!process_->WaitFor(std::chrono::seconds(20)).has_value()) process_->Signal(SIGKILL);
  }
}

const SimClusterInfo& SimProcess::cluster(const std::string& name) const {
  for (const auto& c : clusters_) {
    if (c.name == name) return c;
  }
  std::cerr << "no cluster " << name << " in the fleet\n";
  std::abort();
}

std::string SimProcess::address_prefix() const {
  const std::string& address = clusters_.at(0).nodes.at(0).address;
  return address.substr(0, address.rfind('.'));
}

std::string SimProcess::log() const { return ReadWhole(dir_ / "sim.log"); }

const std::vector<JournalLine>& SimProcess::Journal() {
  std::ifstream in(state_dir_ / "journal.jsonl", std::ios::binary);
  if (!in) return journal_;
  in.seekg(static_cast<std::streamoff>(journal_offset_));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a line still being written: read it next time
    journal_offset_ += line.size() + 1;
    try {
      journal_.push_back(ToJournalLine(json::parse(line)));
    } catch (const json::exception& e) {
      std::cerr << "journal.jsonl: unreadable line: " << line << "\n";
    }
  }
  return journal_;
}

// One call of the control endpoint that answers 200 on success: POST with `body`, or DELETE
// when `body` is empty; Internal naming `what` otherwise.
absl::Status SimProcess::Control(const std::string& path, const std::string& body,
                                 const std::string& what) {
  httplib::Client client(control_url_);
  auto reply = body.empty() ? client.Delete(path) : client.Post(path, body, "application/json");
  if (!reply) return absl::UnavailableError("control endpoint unreachable");
  if (reply->status != 200) {
    return absl::InternalError(fmt::format("{}: {} {}", what, reply->status, reply->body));
  }
  return absl::OkStatus();
}

absl::Status SimProcess::InjectFault(const std::string& node, const std::string& fault_json) {
  return Control(fmt::format("/v1/nodes/{}/faults", node), fault_json, "inject fault");
}

absl::Status SimProcess::ClearFaults(const std::string& node) {
  return Control(fmt::format("/v1/nodes/{}/faults", node), "", "clear faults");
}

absl::Status SimProcess::SetFactoryFault(const std::string& kind) {
  return Control("/v1/factory/faults", fmt::format(R"({{"kind": "{}"}})", kind), "factory fault");
}

absl::Status SimProcess::ClearFactoryFaults() {
  return Control("/v1/factory/faults", "", "clear factory faults");
}

absl::Status SimProcess::AddFactoryRelease(const std::string& tag) {
  return Control("/v1/factory/versions", fmt::format(R"({{"version": "{}"}})", tag),
                 "factory release");
}

absl::Status SimProcess::MarkFactoryReleaseBroken(const std::string& tag) {
  return Control("/v1/factory/broken", fmt::format(R"({{"version": "{}"}})", tag),
                 "factory broken release");
}

absl::StatusOr<json> SimProcess::Node(const std::string& node) {
  httplib::Client client(control_url_);
  auto reply = client.Get(fmt::format("/v1/nodes/{}", node));
  if (!reply) return absl::UnavailableError("control endpoint unreachable");
  if (reply->status != 200) {
    return absl::NotFoundError(fmt::format("node {}: {} {}", node, reply->status, reply->body));
  }
  return json::parse(reply->body, nullptr, false);
}

absl::StatusOr<json> SimProcess::Factory() {
  httplib::Client client(control_url_);
  auto reply = client.Get("/v1/factory");
  if (!reply) return absl::UnavailableError("control endpoint unreachable");
  if (reply->status != 200) {
    return absl::InternalError(fmt::format("factory: {} {}", reply->status, reply->body));
  }
  return json::parse(reply->body, nullptr, false);
}

absl::Status SimProcess::Stop() {
  if (!process_.has_value()) return absl::OkStatus();
  process_->Signal(SIGTERM);
  auto status = process_->WaitFor(std::chrono::seconds(30));
  if (!status.has_value()) {
    process_->Signal(SIGKILL);
    process_->Wait();
    return absl::DeadlineExceededError("talos-sim did not stop within 30 s of SIGTERM");
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(
        fmt::format("talos-sim stopped with {}", gitsource::DescribeWaitStatus(*status)));
  }
  return absl::OkStatus();
}

}  // namespace tr::e2e
