#!/usr/bin/env bash
# scripts/demo, run on already built binaries (TR_DEMO_BUILT), stops everything it started when
# Ctrl-C reaches it at any moment: SIGINT is sent to the demo's process group, as a terminal
# does, while the simulator starts, in the middle of the rollout and at the end (--hold, which
# waits for it: a signal sent just as the demo ends by itself would race its end). Afterwards no
# process the demo started may be left (each carries a marker in its environment, which every
# child inherits, whatever its process group or session), nothing may listen on the addresses
# it used, its working directory must be gone, and bash must not have complained. A run that is
# not interrupted ends with the pull request's comments and the notifications shown. And with a
# talos-sim already holding the example fleet's addresses, the demo fails at once and says why.
#
#   demo_interrupt_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
tmp=$(mktemp -d)
occupier=
cleanup() {
  if [ -n "$occupier" ]; then kill -TERM "$occupier" 2>/dev/null || true; wait "$occupier" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  [ ! -f "$tmp/demo.log" ] || sed 's/^/   demo| /' "$tmp/demo.log" >&2
  exit 1
}

# Exists and has not exited (an exited child stays a zombie until waited for).
running() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# Runs the demo as a job of its own process group, marked with $1, with arguments $2...; sets
# demo_pid. Job control
# (set -m) so that it is signalled as a terminal's foreground job is: without it, a background
# command starts with SIGINT ignored, and a shell cannot trap what it inherited ignored.
start_demo() {
  rm -f "$tmp/demo.log"  # not the last run's: the job truncates it only once it runs
  set -m
  env TR_DEMO_TEST_MARK="$1" TR_DEMO_BUILT="$build_dir" bash "$source_dir/scripts/demo" "${@:2}" \
    >"$tmp/demo.log" 2>&1 </dev/null &
  demo_pid=$!
  set +m
}

# Follows file $2 from its start (tail waits on inotify, and for the file to appear), for at
# most $1 seconds and no longer than process $3 lives.
follow() {
  timeout "$1" tail -n +1 -F -s 0.1 --pid="$3" "$2" 2>/dev/null
}

# Waits up to $2 seconds for the demo's output to hold line pattern $1 (grep ends at the first
# match; the follower ends with the demo or at the deadline).
wait_for_output() {
  grep -qE -m1 "$1" < <(follow "$2" "$tmp/demo.log" "$demo_pid") && return 0
  if ! running "$demo_pid"; then
    local status=0
    wait "$demo_pid" || status=$?
    fail "the demo ended (status $status) before printing '$1'"
  fi
  fail "no '$1' within $2 s"
}

# Waits up to $1 seconds for the demo to exit; sets demo_status.
wait_for_exit() {
  timeout "$1" tail -s 0.1 --pid="$demo_pid" -f /dev/null ||
    fail "the demo did not exit within $1 s"
  demo_status=0
  wait "$demo_pid" || demo_status=$?
}

# The pids and command lines of live processes whose environment holds marker $1.
marked_processes() {
  local environ pid
  for environ in $(grep -slzx "TR_DEMO_TEST_MARK=$1" /proc/[0-9]*/environ); do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if running "$pid"; then echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"; fi
  done
}

# /proc/net/tcp's form of address $1:$2 (little-endian hex address, hex port).
tcp_form() {
  local a b c d
  IFS=. read -r a b c d <<<"$1"
  printf '%02X%02X%02X%02X:%04X' "$d" "$c" "$b" "$a" "$2"
}

# Every address:port the demo printed (its servers and the simulated nodes) has no listener.
check_no_listener_left() {
  local endpoint
  for endpoint in $(grep -oE '127\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+' "$tmp/demo.log" | sort -u); do
    if awk '$4 == "0A" {print $2}' /proc/net/tcp | grep -qx "$(tcp_form "${endpoint%:*}" "${endpoint#*:}")"; then
      fail "$endpoint still listens"
    fi
  done
}

# Interrupts a demo run with arguments $2... once its output holds $1, then checks it left
# nothing behind.
interrupt_at() {
  local mark=interrupt-$RANDOM-$$ left work
  start_demo "$mark" "${@:2}"
  wait_for_output "$1" 120
  local interrupted=$SECONDS
  kill -INT -- "-$demo_pid" || fail "interrupted at '$1': the demo had ended already"
  wait_for_exit 30
  local took=$((SECONDS - interrupted))
  [ "$demo_status" = 130 ] || fail "interrupted at '$1': exit status $demo_status, want 130"
  left=$(marked_processes "$mark")
  [ -z "$left" ] || fail "interrupted at '$1': processes left: $left"
  check_no_listener_left
  work=$(sed -n 's/^== working in //p' "$tmp/demo.log")
  [ -n "$work" ] && [ ! -e "$work" ] || fail "interrupted at '$1': '$work' is still there"
  if grep -E 'syntax error|unbound variable|command not found|Terminated|Killed' "$tmp/demo.log"; then
    fail "interrupted at '$1': the shell complained"
  fi
  grep -q '^== interrupted: stopping what the demo started' "$tmp/demo.log" ||
    fail "interrupted at '$1': the demo did not say it stopped"
  echo "ok: interrupted at '$1' (it stopped in at most $((took + 1)) s)"
}

interrupt_at '^== talos-sim ' # while the simulator starts
interrupt_at '^ +\+[0-9]+s edge-lab +\[>' # mid-rollout: edge-lab's node upgrading
interrupt_at '^== the fleet keeps running until Ctrl-C' --hold # the end, all shown
grep -q '^== recap' "$tmp/demo.log" || fail "the recap was not shown"
grep -q '<!-- talos-reconciler:pull-request-comment -->' "$tmp/demo.log" ||
  fail "the plan comment was not shown"
grep -q '^   | ## Rollout of ' "$tmp/demo.log" || fail "the comment's rollout section was not shown"
grep -q '^   node.upgraded edge-lab: upgraded to Talos 1.12.0' "$tmp/demo.log" ||
  fail "the node.upgraded notification was not shown"
echo "ok: the comment and the notifications were shown"

# A talos-sim left from an earlier run holds the fleet's addresses: the demo stops at once.
setsid "$build_dir/tests/sim/talos-sim" --fleet "$source_dir/examples/fleet.yaml" \
  --state-dir "$tmp/occupier" >"$tmp/occupier.log" 2>&1 </dev/null &
occupier=$!
if ! read -r -n 1 _ < <(follow 30 "$tmp/occupier/ready.json" "$occupier"); then
  running "$occupier" || { cat "$tmp/occupier.log" >&2; fail "the occupying talos-sim did not start"; }
  fail "the occupying talos-sim was not ready within 30 s"
fi
mark=occupied-$RANDOM-$$
start_demo "$mark"
wait_for_exit 30
[ "$demo_status" = 1 ] || fail "with the addresses taken: exit status $demo_status, want 1"
grep -q 'talos-sim cannot bind its addresses: 127.20.1.11:50000' "$tmp/demo.log" ||
  fail "with the addresses taken: no clear reason"
[ -z "$(marked_processes "$mark")" ] || fail "with the addresses taken: processes left"
echo "ok: a leftover simulator is named at once"
