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

# core: pure domain logic (no I/O). It includes nothing of ours.
tr_layer(core FILES core/* MAY)
set(tr_core core)

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
