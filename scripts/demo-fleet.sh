# Part 2 of scripts/demo, the daemon against a simulated fleet (sourced by it in a process group
# of its own; not a command of its own). Uses scripts/demo's globals (root, bin, sim, helper,
# keep, hold) and scripts/demo-lib.sh's functions, in $work. It sets no INT or TERM trap: Ctrl-C
# reaches scripts/demo alone, which kills this part and stops what it started (see
# run_fleet_part in scripts/demo-lib.sh). On its own exit it stops what it started itself.
trap stop_children EXIT

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME="Demo User" GIT_AUTHOR_EMAIL=demo@example.com
export GIT_COMMITTER_NAME="Demo User" GIT_COMMITTER_EMAIL=demo@example.com
status_branch=talos-reconciler/status
clusters=(prod-eu-1 staging edge-lab)

echo "== talos-sim --fleet examples/fleet.yaml (simulated Talos nodes on 127.20.x.y)"
check_sim_addresses_free examples/fleet.yaml
spawn "$work/sim.log" "$sim" --fleet examples/fleet.yaml --state-dir "$work/sim"
sim_pid=$last_pid
if ! wait_for 30 sim_ready; then
  echo "talos-sim did not start within 30 s; its log:" >&2; cat "$work/sim.log" >&2; exit 1
fi
grep '^node ' "$work/sim.log" | sed 's/^/   /'
echo "   $(grep -c '^node ' "$work/sim.log") nodes in $(grep -c '^cluster ' "$work/sim.log") clusters"
factory=$(sed -n 's/^factory //p' "$work/sim.log" | head -n 1)
echo "   and a simulated Image Factory at $factory"
echo

echo "== a stand-in GitHub on loopback (demo-helper forge): takes the reconciler's comments and"
echo "   commit statuses, and receives its notifications"
printf 'ghp_demoForgeToken\n' >"$work/forge-token"
printf 'demo-webhook-secret\n' >"$work/webhook-secret"
# A Standard Webhooks secret, as docs/notifications.md says to make one.
echo "whsec_$(head -c 32 /dev/urandom | base64)" >"$work/notify-secret"
spawn "$work/forge.log" "$helper" forge --dir "$work/forge" --repository acme/fleet \
  --token-file "$work/forge-token" --notify-secret-file "$work/notify-secret"
forge_pid=$last_pid
wait_for 10 test -s "$work/forge/port" || { echo "demo-helper forge did not start" >&2; exit 1; }
forge=http://127.0.0.1:$(cat "$work/forge/port")
echo "   $forge/api/v3 (REST), $forge/notify (notifications)"
echo

echo "== git daemon serving a copy of examples/repo"
git init -q --bare --initial-branch=main "$work/git/fleet.git"
git clone -q "$work/git/fleet.git" "$work/clone" 2>/dev/null
cp -R examples/repo/. "$work/clone/"
git -C "$work/clone" add -A
git -C "$work/clone" commit -qm "example profiles"
git -C "$work/clone" push -q origin main
start_git_daemon
repo=git://127.0.0.1:$git_port/fleet.git
echo "   $repo"
echo

http_port=$(free_port)
webhook_port=$(free_port "$http_port")
echo "== talos-reconciler run --repo $repo --credentials-dir <sim state> --forge github ..."
spawn "$work/daemon.log" "$bin" run --repo "$repo" --credentials-dir "$work/sim" \
  --state-dir "$work/state" --poll-interval 1s --resync 5s --node-poll-interval 200ms \
  --listen "127.0.0.1:$http_port" \
  --webhook-listen "127.0.0.1:$webhook_port" --webhook-secret-file "$work/webhook-secret" \
  --forge github --forge-api-url "$forge/api/v3" --forge-allow-insecure-http \
  --forge-token-file "$work/forge-token" \
  --forge-repository acme/fleet --forge-comment-interval 500ms --image-factory "$factory" \
  --notify "url=$forge/notify,format=json,secret-file=$work/notify-secret"
daemon_pid=$last_pid
daemon_started_at=$SECONDS
echo "   /metrics and /readyz on 127.0.0.1:$http_port, webhooks on 127.0.0.1:$webhook_port"
echo "   its log: $work/daemon.log (warnings and errors are shown here as they come)"
spawn_tail "$work/daemon.log" "$daemon_pid"
tail_pid=$last_pid

if ! wait_for 60 first_status_written edge-lab; then
  echo "the daemon did not report every cluster, edge-lab Ready, within 60 s" >&2; exit 1
fi
wait_for 10 http_get 127.0.0.1 "$http_port" /readyz && echo "   GET /readyz: 200"
echo
echo "== the status branch before the change ($status_branch, one line per cluster)"
snapshot "$work/before"
"$helper" fleet "${snapshot_files[@]}" | sed 's/^/   /'
echo

echo "== pull request #1: edge-lab to Talos 1.12.0 (pushed as refs/pull/1/head, then its webhook)"
git -C "$work/clone" checkout -q -b upgrade-edge-lab
sed -i 's/^    version: 1.11.6$/    version: 1.12.0/' "$work/clone/clusters/edge-lab.yaml"
git -C "$work/clone" commit -qam "edge-lab: Talos 1.12.0"
git -C "$work/clone" push -q origin HEAD:refs/pull/1/head
head=$(git -C "$work/clone" rev-parse HEAD)
echo "   POST /hooks/github (pull_request opened): $(pull_request_webhook 1 upgrade-edge-lab opened "$head")"
if ! wait_for 60 has_status "$head" talos-reconciler/plan; then
  echo "no plan status on the pull request; the forge's log:" >&2
  cat "$work/forge/requests.log" >&2 || true; exit 1
fi
wait_for 10 test -s "$work/forge/pulls/1.md" || true
echo "   commit status: $(grep "^$head talos-reconciler/plan" "$work/forge/statuses.log" | tail -n 1 | cut -d' ' -f2-)"
echo "   the comment the reconciler posted on pull request #1:"
sed 's/^/   | /' "$work/forge/pulls/1.md"
echo

echo "== merging pull request #1"
git -C "$work/clone" checkout -q main
git -C "$work/clone" merge -q --no-ff upgrade-edge-lab -m "Merge pull request #1 from upgrade-edge-lab"
git -C "$work/clone" push -q origin main
merge=$(git -C "$work/clone" rev-parse HEAD)
merged_at=$SECONDS
echo "   POST /hooks/github (pull_request closed, merged): $(pull_request_webhook 1 upgrade-edge-lab closed "$head" "$merge")"
echo

echo "== the rollout, from the status branch ([#] on the target, [>] upgrading, [.] to do)"
follow_rollout 180 rollout_finished "$merged_at"
echo

echo "== pull request #1's comment now (edited in place by the reconciler)"
wait_for 10 grep -q '^## Rollout of .*: \(succeeded\|failed\)' "$work/forge/pulls/1.md" || true
sed 's/^/   | /' "$work/forge/pulls/1.md"
echo "   commit statuses on the merge commit:"
grep "^$merge " "$work/forge/statuses.log" | cut -d' ' -f2- | sed 's/^/     /' || true
echo "   (the rollout is the clusters the pull request changes: prod-eu-1, waiting for its"
echo "   maintenance window, Sat/Sun 02:00-06:00 Europe/Oslo, neither holds it nor is listed)"
echo

echo "== pull request #2: edge-lab declares its Image Factory schematic in Git instead of an"
echo "   installer ID, adding the extension siderolabs/iscsi-tools at the same Talos 1.12.0"
git -C "$work/clone" checkout -q -b edge-lab-iscsi
sed -i '/^    image: /c\    schematic:\n      customization:\n        systemExtensions:\n          officialExtensions: [siderolabs/iscsi-tools]' \
  "$work/clone/clusters/edge-lab.yaml"
git -C "$work/clone" commit -qam "edge-lab: schematic in Git, with siderolabs/iscsi-tools"
git -C "$work/clone" diff HEAD~1 -U1 -- clusters/edge-lab.yaml | sed -n '/^@@/,$p' | sed 's/^/   | /'
git -C "$work/clone" push -q origin HEAD:refs/pull/2/head
head2=$(git -C "$work/clone" rev-parse HEAD)
echo "   POST /hooks/github (pull_request opened): $(pull_request_webhook 2 edge-lab-iscsi opened "$head2")"
if ! wait_for 60 has_status "$head2" talos-reconciler/plan; then
  echo "no plan status on pull request #2; the forge's log:" >&2
  cat "$work/forge/requests.log" >&2 || true; exit 1
fi
wait_for 10 test -s "$work/forge/pulls/2.md" || true
echo "   the comment the reconciler posted on pull request #2 (the factory gave the schematic's ID):"
sed 's/^/   | /' "$work/forge/pulls/2.md"
git -C "$work/clone" checkout -q main
git -C "$work/clone" merge -q --no-ff edge-lab-iscsi -m "Merge pull request #2 from edge-lab-iscsi"
git -C "$work/clone" push -q origin main
merge2=$(git -C "$work/clone" rev-parse HEAD)
merged2_at=$SECONDS
echo "   merged: POST /hooks/github (pull_request closed, merged): $(pull_request_webhook 2 edge-lab-iscsi closed "$head2" "$merge2")"
echo "== the reinstall at Talos 1.12.0, from the status branch"
follow_rollout 120 schematic_rollout_finished "$merged2_at"
talos_section() { sed -n '/^talos:/,/^kubernetes:/p' "$1" | sed '$d' | sed 's/^/   | /'; }
echo "   edge-lab's status file while its node moved (talos.schematic: the old one, the new one):"
talos_section "$work/schematic-moving.yaml"
echo "   and once it was done:"
git --git-dir "$work/git/fleet.git" show "$status_branch:status/edge-lab.yaml" >"$work/lab-done.yaml"
talos_section "$work/lab-done.yaml"
echo
echo "== the notifications the receiver got (--notify url=$forge/notify,format=json)"
sed 's/^/   /' "$work/forge/notifications.log" 2>/dev/null || echo "   (none)"
echo

print_recap
print_next_steps
if $keep; then
  keep_running
  exit 0
fi
if $hold; then hold_until_interrupted; fi

echo "== stopping"
kill -TERM "$daemon_pid"
if wait "$daemon_pid"; then echo "   talos-reconciler exited 0"; else echo "   talos-reconciler exited $?"; fi
echo "== done"
