// A health check of policy.healthChecks: an extra gate checked before the first node of a step
// and after each node (settled). It is a name, a timeout, and what it checks: a sum type of the
// check types, each decoded and described in its own file (http_check.h, prometheus_check.h,
// kubernetes_check.h). A new type is one such file — a struct with its `kType`, its `kKeys`,
// `DecodeKeys` and `Describe`, and a CheckEndpoint `endpoint` when it asks over HTTP — and one
// line: its name in HealthCheckSpec below. The reconciler probes it with its overload of
// `Probe` (reconciler/operations/gates/probes.h), found through the type for every type of
// HealthCheckSpec. The rollout's waiting and the gateTimeout are the same for every type
// (health_gates.h).
//
// Values and pure functions; thread-compatible.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/http_check.h"
#include "core/kubernetes_check.h"
#include "core/prometheus_check.h"
#include "core/yaml_decode.h"

namespace tr::core {

// Every type of health check, one line each.
using HealthCheckSpec = std::variant<HttpCheck, PrometheusCheck, KubernetesCheck>;

template <typename Spec>
struct BasicHealthCheck {
  std::string name;
  Spec spec;  // what it checks, by its type
  std::chrono::seconds timeout{10};
};
using HealthCheck = BasicHealthCheck<HealthCheckSpec>;

// The `type` of a check: "http".
template <typename Spec>
std::string_view CheckType(const Spec& spec) {
  return std::visit([](const auto& s) { return s.kType; }, spec);
}

// What a check asks, by its type: "GET https://… answers 200".
template <typename Spec>
std::string DescribeCheck(const Spec& spec) {
  return std::visit([](const auto& s) { return s.Describe(); }, spec);
}

namespace health_check_internal {

// `name`: 1-63 letters, digits, '.', '_' or '-'.
std::optional<std::string> DecodeName(const Field& field);
// The index in `types` of the `type` field's value; nullopt after reporting it.
std::optional<size_t> DecodeType(const Field& field, const std::vector<std::string_view>& types);
// Reports each key of another type that `m` sets for type number `chosen`: "only applies to
// type X" when one type takes it, else "does not apply to type <chosen>".
void RefuseForeignKeys(const MappingReader& m, size_t chosen,
                       const std::vector<std::string_view>& types,
                       const std::vector<std::vector<std::string_view>>& keys);

template <typename Spec, typename T>
Spec MakeAlternative() {
  return Spec(std::in_place_type<T>);
}

template <typename Spec>
struct TypeTable;

template <typename... Types>
struct TypeTable<std::variant<Types...>> {
  static std::vector<std::string_view> Names() { return {Types::kType...}; }
  static std::vector<std::vector<std::string_view>> Keys() {
    return {std::vector<std::string_view>(Types::kKeys.begin(), Types::kKeys.end())...};
  }
  // The alternative number `index`, default-constructed.
  static std::variant<Types...> Make(size_t index) {
    static constexpr std::array<std::variant<Types...> (*)(), sizeof...(Types)> kMakers = {
        &MakeAlternative<std::variant<Types...>, Types>...};
    return kMakers[index]();
  }
};

}  // namespace health_check_internal

// The check `field` holds — a mapping of name, type, the keys of that type and timeout — with
// every problem reported on `field`'s context; nullopt when there was one. The keys a file may
// set are those of every type in `Spec`; a key of another type is refused by name.
template <typename Spec>
std::optional<BasicHealthCheck<Spec>> DecodeHealthCheckOf(const Field& field) {
  using Table = health_check_internal::TypeTable<Spec>;
  const std::vector<std::string_view> types = Table::Names();
  const std::vector<std::vector<std::string_view>> keys = Table::Keys();
  std::vector<std::string_view> known = {"name", "type"};
  for (const auto& type_keys : keys) {
    for (std::string_view key : type_keys) {
      if (std::find(known.begin(), known.end(), key) == known.end()) known.push_back(key);
    }
  }
  known.push_back("timeout");
  MappingReader m(field, known);
  if (!m.ok()) return std::nullopt;
  BasicHealthCheck<Spec> check;
  bool ok = true;
  if (std::optional<std::string> name = health_check_internal::DecodeName(m.Required("name"))) {
    check.name = *std::move(name);
  } else {
    ok = false;
  }
  // An unknown type is read as the first, so that the problems of its keys are reported too.
  const std::optional<size_t> type = health_check_internal::DecodeType(m.Required("type"), types);
  ok = ok && type.has_value();
  check.spec = Table::Make(type.value_or(0));
  ok = std::visit(
           [&m](auto& s) {
             if constexpr (requires { s.endpoint; }) {
               return s.endpoint.Decode(m);
             } else {
               return true;
             }
           },
           check.spec) &&
       ok;
  if (const Field f = m.Optional("timeout"); f.present()) {
    std::optional<std::chrono::seconds> timeout = ReadDuration(f, /*allow_zero=*/false);
    if (timeout) check.timeout = *timeout;
    ok = ok && timeout.has_value();
  }
  if (!ok) return std::nullopt;
  health_check_internal::RefuseForeignKeys(m, *type, types, keys);
  if (!std::visit([&m](auto& s) { return s.DecodeKeys(m); }, check.spec)) return std::nullopt;
  return check;
}

// DecodeHealthCheckOf the built-in types.
std::optional<HealthCheck> DecodeHealthCheck(const Field& field);

}  // namespace tr::core
