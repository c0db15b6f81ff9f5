#include "reconciler/operations/gates/probes.h"

#include <cmath>
#include <memory>
#include <variant>

#include "base/http_client.h"
#include "base/http_outcome.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/capped_request.h"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::gates {
namespace {

using nlohmann::json;

constexpr size_t kExcerpt = 200;
constexpr size_t kMaxAnswerBytes = kMiB;  // a Prometheus answer of one series is tiny

struct Target {
  std::string origin;  // scheme://host[:port]
  std::string path;    // "/" at least, with the query when written
};

Target SplitUrl(const std::string& url) {
  const size_t scheme_end = url.find("://") + 3;
  const size_t path_start = url.find_first_of("/?#", scheme_end);
  if (path_start == std::string::npos) return {url, "/"};
  std::string path = url.substr(path_start);
  if (path.front() != '/') path.insert(0, "/");
  if (size_t hash = path.find('#'); hash != std::string::npos) path.resize(hash);
  return {url.substr(0, path_start), path};
}

// A printable excerpt of an answer's body, for messages.
std::string Excerpt(const std::string& body) {
  std::string out;
  for (char c : body.substr(0, kExcerpt)) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? ' ' : c;
  }
  return out;
}

std::unique_ptr<httplib::Client> MakeClient(const core::HealthCheck& check,
                                            const core::CheckEndpoint& endpoint,
                                            const Target& target) {
  return NewHttpClient(target.origin, {check.timeout, check.timeout, endpoint.ca_file});
}

std::string RequestError(const httplib::Result& res, httplib::Client& client) {
  std::string text = httplib::to_string(res.error());
  if (res.error() == httplib::Error::SSLServerVerification) {
    text += fmt::format(" (certificate verification: {})",
                        X509_verify_cert_error_string(client.get_openssl_verify_result()));
  }
  return "no answer: " + text;
}

// The single number of a Prometheus `data` object, or why there is none.
std::variant<double, std::string> SingleValue(const json& data) {
  const std::string type = json_fields::Text(data, "resultType");
  const json& result = json_fields::Field(data, "result");
  json sample;
  if (type == "scalar") {
    sample = result;
  } else if (type == "vector" && result.is_array()) {
    if (result.empty()) return std::string("no result");
    if (result.size() > 1) return fmt::format("{} series, expected one", result.size());
    sample = json_fields::Field(result[0], "value");
  } else {
    return fmt::format("result type \"{}\", expected a scalar or a vector", Excerpt(type));
  }
  if (!sample.is_array() || sample.size() != 2 || !sample[1].is_string()) {
    return std::string("malformed sample");
  }
  const std::string text = sample[1].get<std::string>();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return "value \"" + Excerpt(text) + "\" is not a number";
  return value;
}

}  // namespace

ProbeAnswer ProbeHttp(const core::HealthCheck& check) {
  const auto& http = std::get<core::HttpCheck>(check.spec);
  const Target target = SplitUrl(http.endpoint.url);
  std::unique_ptr<httplib::Client> client = MakeClient(check, http.endpoint, target);
  // Only the status matters: reading a long answer stops at the cap.
  CappedAnswer answer = SendCapped(*client, MakeRequest("GET", target.path), kMaxAnswerBytes);
  if (answer.status < 0) return {false, RequestError(answer.result, *client)};
  if (answer.over_cap) {
    const bool healthy = answer.status == http.expect_status;
    return {healthy, fmt::format("HTTP {}{}, answer not read past {} bytes", answer.status,
                                 healthy ? "" : fmt::format(", expected {}", http.expect_status),
                                 kMaxAnswerBytes)};
  }
  httplib::Result& res = answer.result;
  if (!res) return {false, RequestError(res, *client)};
  if (res->status == http.expect_status) return {true, fmt::format("HTTP {}", res->status)};
  std::string message = fmt::format("HTTP {}, expected {}", res->status, http.expect_status);
  if (HttpOutcome::Of(res->status).Redirected() && res->has_header("Location")) {
    message += " (redirect to " + Excerpt(res->get_header_value("Location")) + " not followed)";
  }
  return {false, message};
}

ProbeAnswer ProbePrometheus(const core::HealthCheck& check) {
  const auto& prometheus = std::get<core::PrometheusCheck>(check.spec);
  Target target = SplitUrl(prometheus.endpoint.url);
  if (target.path.back() != '/') target.path += '/';
  std::unique_ptr<httplib::Client> client = MakeClient(check, prometheus.endpoint, target);
  CappedAnswer answer =
      SendCapped(*client,
                 MakeRequest("GET", httplib::append_query_params(target.path + "api/v1/query",
                                                                 {{"query", prometheus.query}})),
                 kMaxAnswerBytes);
  if (answer.over_cap) {
    return {false, std::string(AnswerOverCap("prometheus query", kMaxAnswerBytes).message())};
  }
  httplib::Result& res = answer.result;
  if (!res) return {false, RequestError(res, *client)};
  return PrometheusVerdict(res->status, res->body, prometheus.max_value);
}

ProbeAnswer PrometheusVerdict(int http_status, const std::string& body_text,
                              std::optional<double> max_value) {
  const json body = json::parse(body_text, nullptr, false);
  if (!body.is_object()) {
    return {false, fmt::format("HTTP {}: not a Prometheus API answer: {}", http_status,
                               Excerpt(body_text))};
  }
  if (json_fields::Text(body, "status") != "success") {
    return {false,
            fmt::format("query error ({}): {}", Excerpt(json_fields::Text(body, "errorType")),
                        Excerpt(json_fields::Text(body, "error")))};
  }
  const auto value = SingleValue(json_fields::Field(body, "data"));
  if (const std::string* why = std::get_if<std::string>(&value)) return {false, *why};
  const double v = std::get<double>(value);
  if (std::isnan(v)) return {false, "value is NaN"};
  if (max_value && !(v <= *max_value)) {
    return {false, fmt::format("value {} > max {}", v, *max_value)};
  }
  return {true, max_value ? fmt::format("value {} <= max {}", v, *max_value)
                          : fmt::format("value {}", v)};
}

ProbeAnswer ProbeKubernetes(const core::HealthCheck& check, kube::KubeClient& kube) {
  const auto& spec = std::get<core::KubernetesCheck>(check.spec);
  absl::StatusOr<std::vector<core::WorkloadStatus>> workloads = kube.ListWorkloads(
      spec.workload_kind, spec.namespace_name, spec.workload_name, spec.label_selector);
  if (!workloads.ok()) return {false, "no answer: " + std::string(workloads.status().message())};
  if (workloads->empty()) {
    return {false, fmt::format("no {} in namespace {} matches \"{}\"", spec.workload_kind,
                               spec.namespace_name, spec.label_selector)};
  }
  std::vector<std::string> waiting;
  for (const core::WorkloadStatus& w : *workloads) {
    if (std::string why = core::WorkloadNotReady(w); !why.empty()) waiting.push_back(why);
  }
  if (waiting.empty()) {
    return {true, fmt::format("{} {}{} rolled out", workloads->size(), spec.workload_kind,
                              workloads->size() == 1 ? "" : "s")};
  }
  std::string message = waiting.front();
  if (waiting.size() > 1) message += fmt::format(" (and {} more)", waiting.size() - 1);
  return {false, message};
}

ProbeAnswer Probe(const core::HttpCheck&, const core::HealthCheck& check, const ProbeScope&) {
  return ProbeHttp(check);
}

ProbeAnswer Probe(const core::PrometheusCheck&, const core::HealthCheck& check,
                  const ProbeScope&) {
  return ProbePrometheus(check);
}

ProbeAnswer Probe(const core::KubernetesCheck&, const core::HealthCheck& check,
                  const ProbeScope& scope) {
  absl::StatusOr<ClusterClients> clients = scope.clients.ForProfile(scope.profile);
  if (!clients.ok()) return {false, "no answer: " + std::string(clients.status().message())};
  if (!clients->kube) return {false, "no answer: the cluster's Kubernetes API is not reachable yet"};
  return ProbeKubernetes(check, *clients->kube);
}

}  // namespace tr::reconciler::gates
