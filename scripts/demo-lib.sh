# The functions of scripts/demo (sourced by it; not a command of its own). They use the demo's
# globals: work, root, bin, helper, repo, status_branch, clusters, keep, hold, ports and pids.
#
# Every process the demo starts in the background runs in a process group (and session) of its
# own, made by setsid, and is stopped with its whole group: git daemon's per-connection children
# and the log follower's pipeline go with their parent. Part 2 (scripts/demo-fleet.sh) runs in a
# process group of its own too, with no INT or TERM trap, and scripts/demo only waits for it: a
# Ctrl-C reaches scripts/demo alone, whose trap kills part 2, stops the groups it started (listed
# in $work/groups), waits for them, and removes the working directory. A signal trap never runs
# in the shell that does the work: bash 5.2 can run one in the middle of parsing a command
# substitution, and then fails with "unexpected EOF while looking for matching `)'" and hangs.

children=()  # the process group ids (= the leaders' pids) of everything started in background
last_pid=
declare -A done_at=()  # cluster -> $SECONDS when it got where the demo takes it
exec 4>&2  # the real stderr, also inside wait_for's checks

# Starts the command after $1 (its log file) in a process group of its own; sets last_pid.
spawn() {
  local log=$1
  shift
  setsid "$@" >"$log" 2>&1 </dev/null &
  last_pid=$!
  record_child
}

# Records $last_pid's group, here and in $work/groups for scripts/demo's trap.
record_child() {
  children+=("$last_pid")
  echo "$last_pid" >>"$work/groups"
}

# Shows the daemon's warnings and errors (log file $1) as they come, until pid $2 exits.
spawn_tail() {
  setsid sh -c 'tail -n +1 -f "$1" --pid="$2" 2>/dev/null |
    grep --line-buffered -E "^[^ ]+ (warning|error|critical) " | sed -u "s/^/   daemon| /"' \
    sh "$1" "$2" </dev/null &
  last_pid=$!
  record_child
}

# The state letter of process $1 (R, S, Z, ...), or nothing when there is no such process.
process_state() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
  stat=${stat##*) }
  echo "${stat%% *}"
}

# Process $1 exists and has not exited (an exited child stays a zombie until it is waited for).
running() {
  local state
  state=$(process_state "$1")
  [ -n "$state" ] && [ "$state" != Z ]
}

# Some process is still in one of the demo's process groups. A leader that exited is reaped
# first (until then it is a zombie, and its group still exists).
any_child_alive() {
  local pgid
  for pgid in "${children[@]}"; do
    running "$pgid" || wait "$pgid" 2>/dev/null || true
    ! kill -0 -- "-$pgid" 2>/dev/null || return 0
  done
  return 1
}

# SIGTERM to every group, up to 10 s for them to exit, SIGKILL to what is left; reaps them all.
stop_children() {
  local pgid deadline=$((SECONDS + 10))
  for pgid in "${children[@]}"; do
    kill -TERM -- "-$pgid" 2>/dev/null || kill -TERM "$pgid" 2>/dev/null || true
  done
  while any_child_alive && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  for pgid in "${children[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null || true; done
  for pgid in "${children[@]}"; do wait "$pgid" 2>/dev/null || true; done
  children=()
}

# Runs file $1 (part 2) in a background process group of its own and waits for it; exits with
# its status. Part 2 stops what it started when it ends by itself, except with --keep, which
# leaves $work/stop behind and everything running.
run_fleet_part() {
  set -m
  (trap - EXIT INT TERM; source "$1") &
  fleet_part=$!
  set +m
  local status=0
  wait "$fleet_part" || status=$?
  fleet_part=
  if [ "$status" = 0 ] && [ -e "$work/stop" ]; then trap - EXIT INT TERM; fi
  exit "$status"
}

# Some process of a group listed in $work/groups has not exited. Part 2's children outlive it
# when it is killed, so they are not this shell's to wait for: a zombie counts as gone.
listed_group_alive() {
  local -A listed=()
  local pgid stat fields
  [ -f "$work/groups" ] || return 1
  while read -r pgid; do listed[$pgid]=1; done <"$work/groups"
  for stat in /proc/[0-9]*/stat; do
    { read -r stat <"$stat"; } 2>/dev/null || continue
    fields=(${stat##*) })  # state ppid pgrp ...
    [ "${fields[0]}" != Z ] && [ -n "${listed[${fields[2]}]:-}" ] && return 0
  done
  return 1
}

# SIGTERM to every listed group, up to 10 s for them to exit, SIGKILL to what is left.
stop_listed_groups() {
  local pgid deadline=$((SECONDS + 10))
  [ -f "$work/groups" ] || return 0
  while read -r pgid; do kill -TERM -- "-$pgid" 2>/dev/null || true; done <"$work/groups"
  while listed_group_alive && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  while read -r pgid; do kill -KILL -- "-$pgid" 2>/dev/null || true; done <"$work/groups"
}

# scripts/demo's EXIT trap: kills part 2 if it still runs, stops what it started and removes
# the working directory, keeping the exit status.
cleanup() {
  local status=$?
  trap '' INT TERM
  trap - EXIT
  if [ -n "${fleet_part:-}" ]; then
    kill -KILL -- "-$fleet_part" 2>/dev/null || true
    wait "$fleet_part" 2>/dev/null || true
  fi
  stop_listed_groups
  rm -rf "$work"
  exit "$status"
}

# scripts/demo's INT and TERM trap (Ctrl-C): the EXIT trap does the rest.
on_signal() {
  echo >&4
  echo "== interrupted: stopping what the demo started" >&4
  exit 130
}

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local seconds=$1
  shift
  for _ in $(seq $((seconds * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# A port on 127.0.0.1 nothing answers on (other than $1, if given). Below Linux's ephemeral
# range (32768 and up by default), which the kernel hands out to outgoing connections and to
# anything binding port 0 (tests running beside the demo): a port seen free here stays free.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 12000))
    [ "$port" != "${1:-}" ] || continue
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  echo "no free port on 127.0.0.1" >&4
  return 1
}

# Before talos-sim starts: every node address of fleet file $1 must be free. One that answers is
# almost always a simulator left by an earlier demo (killed with -9, or kept with --keep).
check_sim_addresses_free() {
  local address taken=()
  for address in $(sed -n 's/.*address: *\(127\.[0-9.]*\).*/\1/p' "$1"); do
    if (exec 3<>"/dev/tcp/$address/50000") 2>/dev/null; then taken+=("$address:50000"); fi
  done
  [ ${#taken[@]} -gt 0 ] || return 0
  echo "scripts/demo: talos-sim cannot bind its addresses: ${taken[*]} already in use," >&4
  leftover_hint
  exit 1
}

# How to stop a simulator an earlier demo left running.
leftover_hint() {
  local stop
  {
    echo "most likely by a talos-sim still running from an earlier demo."
    for stop in "${TMPDIR:-/tmp}"/talos-reconciler-demo.*/stop; do
      if [ -x "$stop" ]; then echo "A demo kept with --keep is stopped with: $stop"; fi
    done
    echo "Otherwise stop that process (pgrep -a talos-sim; kill <pid>) and run the demo again."
  } >&4
}

# talos-sim printed its last line, "ready <path>"; exits the demo with the simulator's log if it
# stopped instead. Not ready.json: Fleet::Start writes it before main prints where the nodes
# listen, and the demo reads those lines next.
sim_ready() {
  ! grep -q '^ready ' "$work/sim.log" || return 0
  running "$sim_pid" && return 1
  local code=0
  wait "$sim_pid" || code=$?
  {
    echo "scripts/demo: talos-sim exited (status $code) before it was ready:"
    sed 's/^/   /' "$work/sim.log"
  } >&4
  if grep -q 'cannot listen on' "$work/sim.log"; then
    echo "An address it needs is taken," >&4
    leftover_hint
  fi
  exit 1
}

# Starts git daemon on a free port of 127.0.0.1 serving $work/git; sets git_port.
start_git_daemon() {
  local git_pid
  for _ in $(seq 10); do
    git_port=$(free_port)
    spawn "$work/git-daemon.log" git daemon --listen=127.0.0.1 --port="$git_port" --reuseaddr \
      --export-all --enable=receive-pack --base-path="$work/git" "$work/git"
    git_pid=$last_pid
    if wait_for 5 git_daemon_serves "$git_pid"; then return 0; fi
  done
  echo "git daemon did not start; its log:" >&4
  cat "$work/git-daemon.log" >&4
  exit 1
}

# git daemon $1 answers (or has exited: then the caller tries another port at once).
git_daemon_serves() {
  running "$1" || return 0
  git ls-remote "git://127.0.0.1:$git_port/fleet.git"
}

# GET http://$1:$2$3 with bash alone (no curl on a fresh machine); prints the body.
http_get() {
  exec 3<>"/dev/tcp/$1/$2" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$3" "$1" >&3
  local reply
  reply=$(cat <&3)
  exec 3<&-
  case "$reply" in "HTTP/1."?" 200"*) printf '%s\n' "$reply" | sed '1,/^\r*$/d' ;; *) return 1 ;; esac
}

# The daemon still runs; otherwise the demo ends here, with its log.
daemon_alive() {
  running "$daemon_pid" && return 0
  { echo "talos-reconciler exited; its log:"; cat "$work/daemon.log"; } >&4
  exit 1
}

# The status branch's tip: every status the demo shows is read from one commit of it.
status_commit() {
  git -C "$work/git/fleet.git" rev-parse -q --verify "refs/heads/$status_branch^{commit}"
}

# Copies every cluster's status file of commit $2 (default: the tip) into directory $1; sets
# snapshot_files to those that exist.
snapshot() {
  local commit=${2:-} c
  [ -n "$commit" ] || commit=$(status_commit) || true
  rm -rf "$1"
  mkdir -p "$1"
  snapshot_files=()
  [ -n "$commit" ] || return 0
  for c in "${clusters[@]}"; do
    if git -C "$work/git/fleet.git" show "$commit:status/$c.yaml" >"$1/$c.yaml" 2>/dev/null; then
      snapshot_files+=("$1/$c.yaml")
    fi
  done
}

# Field $2 of section $3 (talos, kubernetes; none: top level) of status file $1.
status_field() {
  if [ -z "${3:-}" ]; then
    sed -n "s/^$2: *//p" "$1" | head -n 1 | tr -d '"'
  else
    sed -n "/^$3:/,/^[a-z]/p" "$1" | sed -n "s/^  $2: *//p" | head -n 1 | tr -d '"'
  fi
}

# Every cluster has a status at the status branch's tip, and cluster $1 is Ready there.
first_status_written() {
  daemon_alive
  snapshot "$work/probe"
  [ ${#snapshot_files[@]} -eq ${#clusters[@]} ] &&
    [ "$(status_field "$work/probe/$1.yaml" phase)" = Ready ]
}

# The forge holds a final commit status of context $2 for commit $1.
has_status() {
  grep -qE "^$1 $2 (success|failure|error)" "$work/forge/statuses.log"
}

# Sends the signed pull_request webhook of pull request #$1 from branch $2: action $3, head $4,
# merge commit $5 (merged when given). Prints the HTTP status the reconciler answered.
pull_request_webhook() {
  local payload=$work/pull-request-$1-$3.json merged=false merge_commit=null
  if [ -n "${5:-}" ]; then merged=true merge_commit="\"$5\""; fi
  printf '{"action":"%s","number":%s,"pull_request":{"number":%s,"head":{"sha":"%s","ref":"%s"},"base":{"ref":"main"},"merged":%s,"merge_commit_sha":%s}}\n' \
    "$3" "$1" "$1" "$4" "$2" "$merged" "$merge_commit" >"$payload"
  "$helper" webhook --url "http://127.0.0.1:$webhook_port/hooks/github" \
    --secret-file "$work/webhook-secret" --event pull_request "$payload" 2>&1 || true
}

# Prints every status commit's change, one line per cluster that changed, with the seconds
# since $3, until the function $2 says the rollout is finished; at most $1 seconds.
follow_rollout() {
  local deadline=$((SECONDS + $1)) finished=$2 since=$3 seen= commit file c line
  local -A shown=()
  while :; do
    daemon_alive
    commit=$(status_commit) || commit=
    if [ -n "$commit" ] && [ "$commit" != "$seen" ]; then
      seen=$commit
      snapshot "$work/view" "$commit"
      for file in "${snapshot_files[@]}"; do
        c=$(basename "$file" .yaml)
        line=$("$helper" fleet "$file")
        if [ "${shown[$c]:-}" != "$line" ]; then
          printf '   %4ss %s\n' "+$((SECONDS - since))" "$line"
          shown[$c]=$line
        fi
      done
      "$finished" && return 0
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "scripts/demo: the rollout did not finish within $1 s" >&4
      exit 1
    fi
    sleep 0.3
  done
}

# Exits the demo when edge-lab's upgrade failed ($1: its status file).
stop_when_failed() {
  if [ "$(status_field "$1" phase)" = UpgradeFailed ]; then
    echo "scripts/demo: edge-lab's upgrade failed: $(status_field "$1" message)" >&4
    exit 1
  fi
}

# The schematic IDs in status file $1's talos section: $2 is current or target.
talos_schematic() {
  sed -n '/^talos:/,/^[a-z]/p' "$1" | sed -n '/^  schematic:/,/^  [a-z]/p' |
    sed -n "s/^    $2: *//p" | head -n 1 | tr -d '"'
}

# Reads $work/view (one status commit): records when each cluster got where the demo takes
# it (edge-lab on Talos 1.12.0, staging on Kubernetes 1.36.3); true once both did. Sets done_at.
rollout_finished() {
  local lab=$work/view/edge-lab.yaml staging=$work/view/staging.yaml
  [ -f "$lab" ] && [ -f "$staging" ] || return 1
  stop_when_failed "$lab"
  if [ -z "${done_at[edge-lab]:-}" ] && [ "$(status_field "$lab" phase)" = Ready ] &&
    [ "$(status_field "$lab" current talos)" = 1.12.0 ]; then
    done_at[edge-lab]=$SECONDS
  fi
  if [ -z "${done_at[staging]:-}" ] && [ "$(status_field "$staging" phase)" = Ready ] &&
    [ "$(status_field "$staging" current kubernetes)" = 1.36.3 ]; then
    done_at[staging]=$SECONDS
  fi
  [ -n "${done_at[edge-lab]:-}" ] && [ -n "${done_at[staging]:-}" ]
}

# Reads $work/view: true once edge-lab is Ready with every node on the schematic its profile
# names (pull request #2's). Keeps the first status that shows the node still on the old one as
# $work/schematic-moving.yaml.
schematic_rollout_finished() {
  local lab=$work/view/edge-lab.yaml target current
  [ -f "$lab" ] || return 1
  stop_when_failed "$lab"
  target=$(talos_schematic "$lab" target)
  current=$(talos_schematic "$lab" current)
  if [ -n "$target" ] && [ "$current" != "$target" ] && [ ! -f "$work/schematic-moving.yaml" ]; then
    cp "$lab" "$work/schematic-moving.yaml"
  fi
  [ "$(status_field "$lab" phase)" = Ready ] && [ -n "$target" ] && [ "$current" = "$target" ]
}

# What changed per cluster, how long it took, and where the status lives (and reading it).
print_recap() {
  local c took
  echo "== recap: what changed"
  snapshot "$work/after"
  for c in "${clusters[@]}"; do
    took=
    case $c in
      edge-lab) took=", $((done_at[edge-lab] - merged_at)) s after the merge" ;;
      staging) took=", $((done_at[staging] - daemon_started_at)) s after the reconciler started" ;;
    esac
    echo "   $("$helper" recap "$work/before/$c.yaml" "$work/after/$c.yaml")$took"
  done
  echo
  echo "== where the status lives: branch $status_branch of $repo,"
  echo "   one file status/<cluster>.yaml per cluster, written only by the reconciler. Read it with"
  echo "   talos-reconciler status --repo $repo:"
  "$bin" status --repo "$repo" 2>&1 | sed 's/^/   /'
  echo
}

print_next_steps() {
  echo "== next steps"
  if $keep || $hold; then
    echo "   $bin status --repo $repo edge-lab -o yaml"
    echo "   $bin status --repo $repo --watch"
    echo "   $bin plan $work/clone --credentials-dir $work/sim"
    echo "      (plans the merged profiles against the running simulated fleet)"
  else
    echo "   $bin plan $root/examples/repo --observed $root/examples/observed.yaml -o markdown"
    echo "      (the plan comment's text, offline)"
    echo "   $root/scripts/demo --keep   (or --hold, which stops it all on Ctrl-C)"
    echo "      (leaves the fleet, the Git server and the reconciler running, to try"
    echo "       talos-reconciler status and plan against them, and kubectl against the clusters)"
  fi
  echo
}

# --keep: stops only the log follower, writes $work/stop and says how to reach everything.
keep_running() {
  kill -TERM -- "-$tail_pid" 2>/dev/null || true
  wait "$tail_pid" 2>/dev/null || true
  local pgids=() pgid
  for pgid in "${children[@]}"; do [ "$pgid" = "$tail_pid" ] || pgids+=("$pgid"); done
  cat >"$work/stop" <<STOP
#!/usr/bin/env bash
# Stops what 'scripts/demo --keep' left running (process groups ${pgids[*]}) and removes $work.
for pgid in ${pgids[*]}; do kill -TERM -- "-\$pgid" 2>/dev/null; done
for _ in \$(seq 100); do
  alive=
  for pgid in ${pgids[*]}; do kill -0 -- "-\$pgid" 2>/dev/null && alive=1; done
  [ -n "\$alive" ] || break
  sleep 0.1
done
for pgid in ${pgids[*]}; do kill -KILL -- "-\$pgid" 2>/dev/null; done
rm -rf '$work'
echo "stopped; removed $work"
STOP
  chmod +x "$work/stop"
  echo "== the fleet keeps running (--keep)"
  print_how_to_reach
  echo "   stop it all: $work/stop"
  trap - EXIT INT TERM
}

# --hold: everything keeps running, the log follower too, until Ctrl-C (or SIGTERM), whose trap
# stops it all and removes $work as at any other moment.
hold_until_interrupted() {
  echo "== the fleet keeps running until Ctrl-C (--hold)"
  print_how_to_reach
  echo "   Ctrl-C stops it all and removes $work"
  # scripts/demo's trap kills this loop with the rest of part 2.
  while :; do sleep 1; done
}

# Where the simulated clusters, the reconciler and the profiles of a running demo are.
print_how_to_reach() {
  local cluster kubeconfig address
  for cluster in "${clusters[@]}"; do
    kubeconfig=$(sed -n "s/^cluster $cluster: .*kubeconfig \([^,]*\),.*/\1/p" "$work/sim.log")
    address=$(sed -n "/- name: $cluster\$/,/- name:/s/.*address: *\(127[0-9.]*\).*/\1/p" \
      "$root/examples/fleet.yaml" | head -n 1)
    echo "   $cluster: kubectl --kubeconfig $kubeconfig get nodes"
    echo "   $cluster: talosctl --talosconfig $work/sim/$cluster/talosconfig -n $address version"
  done
  echo "   (kubectl reaches the simulator's Kubernetes API; talosctl, if installed, its Talos API)"
  echo "   the simulator's control endpoint: $(sed -n 's/^control //p' "$work/sim.log")/v1/nodes/lab"
  echo "   the reconciler: http://127.0.0.1:$http_port/metrics, log $work/daemon.log"
  echo "   the profiles: $repo (git clone it, push a change; the reconciler polls every second)"
  echo "   the pull request's comment and the notifications: $work/forge/"
}
