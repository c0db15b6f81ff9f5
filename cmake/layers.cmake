# The walls: which code may #include which (docs/architecture.md, "Walls"). Read by
# cmake/check_layers.cmake, which the build runs before compiling anything of ours and ctest runs
# as the test `layers`.
#
# tr_layer(<name> FILES <globs>... MAY <layers>...): the files of the project (paths from the
# source root, globs allowed) that form layer <name>, and the layers their #includes may name
# besides their own. A layer's MAY names every layer beneath it, not only the next one, so that
# the whole order is written here. A file belongs to the first layer whose FILES match it; a file
# of base/, core/, gitsource/ or reconciler/ that no layer holds fails the check (each new file
# is placed). Tests, benchmarks and talos-sim may include any layer.

# base: the environment, HTTP, secrets, signals. It includes nothing of ours.
tr_layer(base FILES base/* MAY)

# core: pure domain logic (no I/O), seven floors. A type that several floors use lives in a
# header of the lowest floor that needs it (core/*_types.h), apart from the behaviour that works
# on it, so that nothing in core includes upward.
#   words:         text, versions, durations, names, diagnostics, raw YAML text.
tr_layer(core_words
  FILES core/api_version.* core/base64.* core/decoded.* core/diagnostic.* core/duration.*
        core/fence.* core/names.* core/schematic_yaml_scalar.* core/shards.* core/text.*
        core/timestamp.* core/version.* core/workload_readiness.* core/yaml_text.*
        core/yaml_writer.* core/strict_yaml.* core/inert_text.*
  MAY)
#   model:         the domain's types: profiles and sets of them, observations (and the
#                  pending-install mark a Node carries), policies, schematics, plans, rollouts,
#                  gates and statuses as records, the support matrix and the Kubernetes removals;
#                  the reading of YAML into values (yaml_decode), which each type of health
#                  check uses to decode itself in its own file.
tr_layer(core_model
  FILES core/*_types.* core/schematic.* core/observed.* core/pending_mark.* core/support_matrix.*
        core/update_policy.* core/profile.* core/k8s_removals.* core/k8s_removal_table.*
        core/yaml_decode.* core/*_check.* core/check_endpoint.*
  MAY core_words)
#   decode:        one document's YAML into the model, with diagnostics (every *_decode); a profile's YAML
#                  edited in place, or written from a running cluster (adopt); a status as YAML
#                  and back.
tr_layer(core_decode
  FILES core/yaml_decode.* core/*_decode.* core/profile_edit.* core/status_yaml.*
        core/adopted_profile.*
  MAY core_words core_model)
#   repository:    a repository's files decoded as one set of profiles, each document by its
#                  decoder.
tr_layer(core_repository FILES core/profile_set.* MAY core_words core_model core_decode)
#   rules:         the planner and the checks: upgrade paths, start checks, gates, health gates,
#                  what a node in flight looks like.
tr_layer(core_rules
  FILES core/upgrade_path.* core/planner.* core/gates.* core/health_gates.* core/start_checks.*
        core/rollout_checks.* core/disruption_forecast.* core/install_ahead.*
  MAY core_words core_model core_decode core_repository)
#   orchestration: the rollout state machine, its record and outcomes, promotion between
#                  clusters, proposals, a cluster's status built from a reconcile.
tr_layer(core_orchestration
  FILES core/rollout.* core/rollout_record.* core/rollout_outcomes.* core/plan_outlook.*
        core/promotion.* core/proposals.* core/status.* core/status_consistency.*
  MAY core_words core_model core_decode core_repository core_rules)
#   report:        what is shown: a rendered plan, the cluster report.
tr_layer(core_report
  FILES core/plan_render.* core/cluster_report.* core/forecast_render.*
  MAY core_words core_model core_decode core_repository core_rules core_orchestration)
set(tr_core core_words core_model core_decode core_repository core_rules core_orchestration
            core_report)

# gitsource: the profile repository and the status branch through libgit2.
tr_layer(gitsource FILES gitsource/* MAY base ${tr_core})

# reconciler: six libraries, one a folder (reconciler/CMakeLists.txt).
set(tr_below base ${tr_core} gitsource)
tr_layer(reconciler_runtime FILES reconciler/runtime/* MAY ${tr_below})
tr_layer(reconciler_clients FILES reconciler/clients/* MAY ${tr_below} reconciler_runtime)
tr_layer(reconciler_operations FILES reconciler/operations/*
  MAY ${tr_below} reconciler_runtime reconciler_clients)
tr_layer(reconciler_loop FILES reconciler/loop/*
  MAY ${tr_below} reconciler_runtime reconciler_clients reconciler_operations)
tr_layer(reconciler_features FILES reconciler/features/*
  MAY ${tr_below} reconciler_runtime reconciler_clients reconciler_operations reconciler_loop)
tr_layer(reconciler_app FILES reconciler/app/*
  MAY ${tr_below} reconciler_runtime reconciler_clients reconciler_operations reconciler_loop
      reconciler_features)

# talos-sim (tests/sim): a product of its own, five libraries, one a folder
# (tests/sim/CMakeLists.txt). It may include core, never the reconciler; its tests (and the
# client they share) may include any layer.
tr_layer(sim_tests FILES tests/sim/*_test.cc tests/sim/test_client.h
  MAY base ${tr_core} gitsource reconciler_runtime reconciler_clients reconciler_operations
      reconciler_loop reconciler_features reconciler_app sim_common sim_catalog sim_node sim_api
      talos_sim)
tr_layer(sim_common FILES tests/sim/common/* MAY ${tr_core})
tr_layer(sim_catalog FILES tests/sim/catalog/* MAY ${tr_core} sim_common)
tr_layer(sim_node FILES tests/sim/node/* MAY ${tr_core} sim_common sim_catalog)
tr_layer(sim_api FILES tests/sim/api/* MAY ${tr_core} sim_common sim_catalog sim_node)
# The binary's main alone may also set up its process with base (the futex hash, base/futex_hash.h).
tr_layer(sim_binary FILES tests/sim/main.cc
  MAY base ${tr_core} sim_common sim_catalog sim_node sim_api talos_sim)
tr_layer(talos_sim FILES tests/sim/* MAY ${tr_core} sim_common sim_catalog sim_node sim_api)
