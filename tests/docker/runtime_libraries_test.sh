#!/usr/bin/env bash
# Checks the Dockerfile without docker (which cannot run here):
#   - multi-stage: a debian:bookworm build stage, a debian:bookworm-slim runtime stage;
#   - the runtime stage runs as a non-root user and installs no -dev package;
#   - every shared library the binary needs (ldd: its NEEDED entries and theirs) belongs to a
#     package the runtime stage installs, or to one those depend on (Depends and Pre-Depends,
#     as the packages installed on this machine declare them; apt installs the same).
# Usage: runtime_libraries_test.sh <Dockerfile> <talos-reconciler binary>
set -euo pipefail
dockerfile=$1
binary=$2
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# The instructions with their continuation lines joined, comments dropped.
instructions=$(sed -e '/^[[:space:]]*#/d' "$dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
froms=$(echo "$instructions" | awk '$1 == "FROM" {print $2}')
[ "$(echo "$froms" | head -n 1)" = debian:bookworm ] || fail "the build stage is not FROM debian:bookworm"
[ "$(echo "$froms" | tail -n 1)" = debian:bookworm-slim ] || fail "the runtime stage is not FROM debian:bookworm-slim"
[ "$(echo "$froms" | wc -l)" -ge 2 ] || fail "not a multi-stage build"
runtime=$(echo "$instructions" | awk '$1 == "FROM" {stage = ""} {stage = stage $0 "\n"} END {printf "%s", stage}')
user=$(echo "$runtime" | awk '$1 == "USER" {print $2}' | tail -n 1)
case "${user%%:*}" in
  "" | 0 | root) fail "the runtime stage does not switch to a non-root USER (got '$user')" ;;
esac

# The packages after `apt-get install` in the runtime stage: words up to the next && or ;.
packages=$(echo "$runtime" | grep -o 'apt-get install[^&;]*' | sed 's/apt-get install//' |
  tr ' ' '\n' | grep -v '^-' | grep -v '^$' | sort -u)
[ -n "$packages" ] || fail "the runtime stage installs no package"
for p in $packages; do
  case "$p" in *-dev) fail "the runtime stage installs a development package: $p" ;; esac
done

# The dependency closure of those packages, from the package database of this machine (read
# once: one dpkg-query per package is slow).
declare -A depends=()
while IFS='|' read -r name deps; do
  depends[$name]=$deps
done < <(dpkg-query -W -f='${Package}|${Depends}, ${Pre-Depends}\n')
declare -A closure=()
queue=($packages)
while [ ${#queue[@]} -gt 0 ]; do
  p=${queue[0]}; queue=("${queue[@]:1}")
  [ -z "${closure[$p]:-}" ] || continue
  closure[$p]=1
  if [ -z "${depends[$p]+set}" ]; then
    fail "package $p is not installed on this machine, so its dependencies cannot be checked"
    continue
  fi
  # First alternative of each dependency, without version or architecture.
  for d in $(echo "${depends[$p]}" | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:.*//; s/[[:space:]]//g'); do
    [ -n "$d" ] && queue+=("$d")
  done
done

# The package that owns each library file, in one dpkg-query. With usrmerge dpkg may know a
# file under /usr/lib or /lib: ask for both, compare without the /usr prefix.
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
[ -n "$libraries" ] || fail "ldd found no shared library in $binary"
declare -A owner=()
while IFS= read -r line; do
  path=${line##*: }
  owner[${path#/usr}]=${line%%:*}
done < <(for lib in $libraries; do
           real=$(readlink -f "$lib")
           printf '%s\n' "${lib#/usr}" "/usr${lib#/usr}" "${real#/usr}" "/usr${real#/usr}"
         done | sort -u | xargs dpkg-query -S 2>/dev/null || true)
checked=0
for lib in $libraries; do
  real=$(readlink -f "$lib")
  pkg=${owner[${lib#/usr}]:-${owner[${real#/usr}]:-}}
  if [ -z "$pkg" ]; then
    fail "$lib belongs to no Debian package"
    continue
  fi
  checked=$((checked + 1))
  [ -n "${closure[$pkg]:-}" ] || fail "$lib (package $pkg) is not installed by the runtime stage"
done

echo "$checked libraries checked against ${#closure[@]} packages of the runtime stage"
if [ "$failures" -gt 0 ]; then
  exit 1
fi
