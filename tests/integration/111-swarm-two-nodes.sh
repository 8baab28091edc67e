#!/usr/bin/env bash
# 111-swarm-two-nodes: sandboxd on a two-node swarm (swarm-lib.sh): the
# manager n1 (this machine's engine, the control plane) and n2 (a second
# dockerd in a network + mount namespace of the test's own, joined by the
# command the control plane prints, its agent running in n2's namespaces).
#
# `node ls` shows both; four sandboxes placed on both nodes; previews of
# both through the manager's edge; egress blocked on both nodes (the
# metadata address, another sandbox, the host, the other node's agent and
# swarm ports) while the credential proxy's address answers; the manager
# cannot see n2's workspaces; a task (fake agent) on an n2 sandbox through
# its agent; files, the terminal and logs on n2; kill -9 of the agent (n2's
# sandboxes node_down within 3 heartbeats, n1's containers untouched and
# answering), the agent again; kill -9 of n2's engine and containerd (the
# swarm sees the node down; n2's sandboxes node_down; restore-elsewhere of
# one from a snapshot: the snapshot's file there, a later one gone, as
# documented); n2's engine again; drain of n2 (a marker file reads back
# the same after the move, the preview host unchanged, n2 drained, the
# source in n2's trash).  The teardown case checks the engine is as found.
# it-timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
swarm_need
need_swarm_image

HB_MS=1000
sbd() { timeout 60 env "SANDBOXD_API=$API_URL" "SANDBOXD_TOKEN=$TOKEN" "XDG_CONFIG_HOME=$IT_TMP/xdg" "$SANDBOXD_BIN" "$@"; }
# dk NODE ARGS…: docker on node 1 or 2
dk() { if [[ $1 == n2 ]]; then shift; "${D2[@]}" "$@"; else shift; docker "$@"; fi; }
# where SB: "n1 CONTAINER" or "n2 CONTAINER" (by label, on either engine)
where() {
	local r
	r=$(container_of_any "$1") || return 1
	echo "n${r%% *} ${r#* }"
}
# make_sb NAME -> SB, APPS[SB]: an app and its sandbox (running), with
# edge-app.js as its web process
declare -A APPS=()
make_sb() {
	SB=
	create_app "$1" || return 1
	api POST "/v1/apps/$APP_ID/sandbox" '{"ports":[3000]}'
	expect_status 201 || return 1
	expect_json .status running || return 1
	SB=$(j .id)
	APPS[$SB]=$APP_ID
	api PUT "/v1/sandboxes/$SB/files?path=edge-app.js" "@$IT_ROOT/tests/integration/edge-app.js"
	expect_status 200
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: node edge-app.js
  port: 3000
'
	expect_status 200
}
host_of() { echo "s-$1-3000.preview.localhost:$EDGE_PORT"; }
answers() { [[ $(ecurl "$(host_of "$1")" / --max-time 5) == "hello from the app" ]]; }
wait_answers() { wait_until "$2" answers "$1" || t_err "the preview of $1 does not answer: $(ecurl "$(host_of "$1")" / -i --max-time 5 | head -c 300)"; }
# sbx_connect SB HOST PORT: sb_connect from the sandbox's container on its node
sbx_connect() {
	local w node c
	w=$(where "$1") || { echo "no-container 0 -"; return; }
	node=${w% *} c=${w#* }
	if [[ $node == n2 ]]; then
		DOCKER_HOST=unix://$SW_N2_ROOT/docker.sock sb_connect "$c" "$2" "$3"
	else
		sb_connect "$c" "$2" "$3"
	fi
}
sb_ip() {
	local w
	w=$(where "$1") || return 1
	dk "${w% *}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "${w#* }"
}

# --- the cluster ---------------------------------------------------------------------
t_begin "two nodes: the control plane on n1, n2 joined by the printed command, both ready"
swarm_up
swarm_node2_up
swarm_cp_start "SANDBOXD_IMAGE=$TEST_IMAGE" SANDBOXD_FREEZE_AFTER_SECONDS=31536000 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 SANDBOXD_MEM_HEADROOM_PCT=0 \
	"SANDBOXD_NODE_HEARTBEAT_MS=$HB_MS" ||
	bail "the daemon did not start in swarm mode: $(tail -n 5 "$DAEMON_ERR")"
swarm_join_command || bail "no join command: ${T_ERRS[*]}"
note "$SW_JOIN"
t0=$(now_ms)
swarm_node2_agent n2
wait_node n2 ready 300 || bail "n2 did not become ready: ${T_ERRS[*]}"
note "n2 ready $(($(now_ms) - t0)) ms after the join command ran (enroll, swarm join, image load)"
[[ $(docker node ls -q | wc -l) == 2 ]] || t_err "docker node ls: $(docker node ls 2>&1)"
SW_N2_ID=$("${D2[@]}" info -f '{{.Swarm.NodeID}}')
labels=$(docker node inspect -f '{{json .Spec.Labels}}' "$SW_N2_ID")
jq -e '."sandboxd.agent" == "1" and ."sandboxd.node" == "n2"' <<<"$labels" >/dev/null ||
	t_err "n2's swarm labels: $labels"
api GET /v1/nodes
expect_status 200 && expect_jq '[(.nodes // .)[] | select(.name == "n1" or .name == "n2")] | length == 2' 'n1 and n2 in GET /v1/nodes'
note "$(jq -c '(.nodes // .)[] | {name, status, memory: (.memory // .mem_total // null)}' <<<"$BODY" 2>/dev/null | tr '\n' ' ')"
out=$(sbd node ls 2>&1)
grep -q '^n1 ' <<<"$out" && grep -q '^n2 ' <<<"$out" || t_err "sandboxd node ls: $out"
t_end

t_begin "four sandboxes, placed on both nodes"
SBS=()
for i in 1 2 3 4; do
	make_sb "app$i" && SBS+=("$SB")
done
N1=() N2=()
for SB in "${SBS[@]}"; do
	w=$(where "$SB") || { t_err "no container of $SB on either engine"; continue; }
	node=$(sb_node "$SB")
	[[ ${node:-n1} == "${w% *}" ]] || t_err "$SB: the row says node '${node}', its container is on ${w% *}"
	if [[ ${w% *} == n2 ]]; then N2+=("$SB"); else N1+=("$SB"); fi
done
note "n1: ${N1[*]:-none}; n2: ${N2[*]:-none}"
((${#N1[@]} >= 1 && ${#N2[@]} >= 1)) || t_err "not on both nodes: n1 ${#N1[@]}, n2 ${#N2[@]}"
t_end
((${#N2[@]} >= 1 && ${#N1[@]} >= 1)) || bail "the rest needs a sandbox on each node"
A=${N1[0]} B=${N2[0]}

t_begin "previews of both nodes' sandboxes through the manager's edge"
for SB in "${SBS[@]}"; do wait_answers "$SB" 90; done
t_end

t_begin "the manager cannot see n2's workspace (its data dir is n2's alone)"
n2 test -d "$SW_N2_DATA/workspaces/$B" || t_err "no $SW_N2_DATA/workspaces/$B on n2"
[[ -e $SW_N2_DATA/workspaces/$B ]] && t_err "the manager sees n2's workspace"
[[ -d $DATA/workspaces/$B/workspace ]] && note "the control plane still holds a copy of $B's workspace (from the create)"
t_end

t_begin "egress blocked on both nodes; the credential proxy's address answers"
daemon_gateway || t_err "no gateway in /v1/status"
PROXY_PORT=$(tr '\0' '\n' <"/proc/$DAEMON_PID/environ" | sed -n 's/^SANDBOXD_PROXY_PORT=//p')
for pair in "$A ${N1[1]:--} n2 $SW_A2 7443" "$B ${N2[1]:--} n1 $SW_A1 2377"; do
	read -r me other onode oaddr oport <<<"$pair"
	targets=("169.254.169.254 80" "$oaddr $oport" "$SW_A1 ${API_ADDR##*:}" "$SW_A1 $SW_CPORT")
	[[ $onode == n1 ]] && targets+=("$SW_A2 7443")
	[[ $other != - ]] && targets+=("$(sb_ip "$other") 3000")
	for tgt in "${targets[@]}"; do
		r=$(sbx_connect "$me" ${tgt})
		[[ ${r%% *} == open || ${r%% *} == exec-failed || ${r%% *} == no-container ]] &&
			t_err "from $me ($(where "$me" | cut -d' ' -f1)) to $tgt: $r"
		note "$(where "$me" | cut -d' ' -f1) -> $tgt: $r"
	done
	r=$(sbx_connect "$me" "$GW" "$PROXY_PORT")
	[[ ${r%% *} == open ]] || t_err "from $me to the proxy $GW:$PROXY_PORT: $r"
done
t_end

t_begin "a task (fake agent) on an n2 sandbox, through its agent"
submit "$B" '{"prompt":"[[fake:write=from-task.txt]] [[fake:content=n2 task]]"}' &&
	wait_task "$B" "$TASK_ID" 90
expect_json .status succeeded
api GET "/v1/sandboxes/$B/files/content?path=from-task.txt"
[[ $STATUS == 200 && $BODY == "n2 task" ]] || t_err "from-task.txt: $STATUS $(short_body)"
[[ $(n2 cat "$SW_N2_DATA/workspaces/$B/workspace/app/from-task.txt" 2>&1) == "n2 task" ]] ||
	t_err "the file is not in n2's workspace"
t_end

t_begin "files, the terminal and logs on n2"
api PUT "/v1/sandboxes/$B/files?path=dir/n.txt" 'hello n2'
expect_status 200
api GET "/v1/sandboxes/$B/files?path=dir"
expect_status 200 && expect_jq '[.entries[].path] | index("dir/n.txt") != null' 'dir/n.txt listed'
out=$(sbd sandbox exec "$B" -- sh -c 'cat dir/n.txt; echo; hostname' </dev/null 2>&1)
[[ $(head -n 1 <<<"$out") == "hello n2" ]] || t_err "sandbox exec on n2: $out"
api GET "/v1/sandboxes/$B/processes/web/logs?tail=5"
expect_status 200
t_end

# --- a killed agent ----------------------------------------------------------------------
t_begin "kill -9 of n2's agent: n2's sandboxes node_down within 3 heartbeats; n1 untouched"
declare -A STARTED=()
for SB in "${N1[@]}"; do STARTED[$SB]=$(docker inspect -f '{{.State.StartedAt}}' "$(where "$SB" | cut -d' ' -f2)"); done
kill -KILL "$SW_AGENT_PID"
wait "$SW_AGENT_PID" 2>/dev/null
n2 ss -Hltn "sport = :7443" | grep -q . && t_err "something still listens on n2's 7443 after the kill"
t0=$(now_ms)
for SB in "${N2[@]}"; do
	wait_sb "$SB" '(.status_reason // .reason // "") == "node_down"' 15
done
ms=$(($(now_ms) - t0))
note "node_down seen after $ms ms (heartbeat $HB_MS ms)"
((ms <= 3 * HB_MS + 2000)) || t_err "node_down after $ms ms: more than 3 heartbeats (+2 s)"
for SB in "${N1[@]}"; do
	[[ $(docker inspect -f '{{.State.StartedAt}}' "$(where "$SB" | cut -d' ' -f2)") == "${STARTED[$SB]}" ]] ||
		t_err "$SB on n1 was restarted"
	answers "$SB" || t_err "$SB on n1 does not answer"
done
edge_get "$(host_of "$B")" /
[[ $E_STATUS != 200 ]] || t_err "the preview of $B answered 200 with its node down"
note "the preview of an n2 sandbox meanwhile: $E_STATUS $(eh X-Sandboxd-Preview)"
t_end

t_begin "the agent again (node run): n2 ready, its sandboxes start there again"
swarm_agent_run
wait_node n2 ready 60
for SB in "${N2[@]}"; do
	api POST "/v1/sandboxes/$SB/start"
	expect_status 200
	wait_answers "$SB" 90
done
t_end

# --- a killed engine -----------------------------------------------------------------------
t_begin "kill -9 of n2's engine: the swarm marks n2 down, its sandboxes node_down; restore-elsewhere from a snapshot"
api PUT "/v1/sandboxes/$B/files?path=before.txt" 'in the snapshot'
api POST "/v1/apps/${APPS[$B]}/snapshots" '{"name":"before-kill"}'
expect_status 201
api PUT "/v1/sandboxes/$B/files?path=after.txt" 'written after the snapshot'
expect_status 200
swarm_dockerd2_kill9
t0=$(now_ms)
wait_until 30 sh -c "docker node inspect -f '{{.Status.State}}' $SW_N2_ID | grep -qx down" ||
	t_err "the swarm does not say n2 is down: $(docker node inspect -f '{{.Status.State}}' "$SW_N2_ID")"
note "swarm: n2 down after $(($(now_ms) - t0)) ms (dispatcher heartbeat 2 s)"
for SB in "${N2[@]}"; do
	wait_sb "$SB" '(.status_reason // .reason // "") == "node_down"' 30
done
for SB in "${N1[@]}"; do answers "$SB" || t_err "$SB on n1 does not answer"; done
api POST "/v1/sandboxes/$B/restore-elsewhere" '{}'
[[ $STATUS == 200 || $STATUS == 201 || $STATUS == 202 ]] || t_err "restore-elsewhere: $STATUS $(short_body)"
note "restore-elsewhere: $(short_body)"
# The sandbox stays stopped where it was restored: a start wakes it there.
api POST "/v1/sandboxes/$B/start"
expect_status 200
wait_sb "$B" '.status == "running"' 90
[[ $(sb_node "$B") != n2 ]] || t_err "$B is still on n2"
api GET "/v1/sandboxes/$B/files/content?path=before.txt"
[[ $STATUS == 200 && $BODY == "in the snapshot" ]] || t_err "before.txt after the restore: $STATUS $(short_body)"
api GET "/v1/sandboxes/$B/files/content?path=after.txt"
[[ $STATUS == 404 ]] || t_err "after.txt (written after the snapshot) is there: $STATUS"
wait_answers "$B" 90
t_end

t_begin "n2's engine again: the same swarm node, ready, its agent back"
swarm_dockerd2_start
wait_until 60 sh -c "docker node inspect -f '{{.Status.State}}' $SW_N2_ID | grep -qx ready" ||
	t_err "n2 is not ready in the swarm again"
kill -0 "$SW_AGENT_PID" 2>/dev/null || swarm_agent_run
wait_node n2 ready 60
t_end

# --- drain ------------------------------------------------------------------------------------
t_begin "drain n2: the workspace moved (a marker reads back the same), the preview host unchanged, n2 drained"
LEFT=()
for SB in "${N2[@]}"; do [[ $SB != "$B" ]] && LEFT+=("$SB"); done
if ((${#LEFT[@]} == 0)); then
	make_sb app5 && LEFT+=("$SB")
fi
C=${LEFT[0]}
if [[ $(sb_node "$C") == n2 ]]; then
	# The marker goes in through n2's agent while the sandbox sleeps: after
	# the kill -9 of n2's engine above, Engine 20.10 keeps its bridge
	# driver's record of the swarm network and rejects a new task there
	# ("network … exists"); a drain is the way off such a node (docs/deploy.md).
	marker=marker-$RANDOM$RANDOM
	api PUT "/v1/sandboxes/$C/files?path=marker.txt" "$marker"
	expect_status 200
	t0=$(now_ms)
	api POST /v1/nodes/n2/drain '{}'
	[[ $STATUS == 200 || $STATUS == 202 ]] || t_err "POST /v1/nodes/n2/drain: $STATUS $(short_body)"
	wait_node n2 drained 180
	note "drain of n2: $(($(now_ms) - t0)) ms"
	[[ $(sb_node "$C") != n2 ]] || t_err "$C is still on n2"
	api GET "/v1/sandboxes/$C/files/content?path=marker.txt"
	[[ $STATUS == 200 && $BODY == "$marker" ]] || t_err "marker.txt after the move: $STATUS $(short_body)"
	wait_answers "$C" 90
	[[ $(where "$C" | cut -d' ' -f1) == n1 ]] || t_err "$C's container is not on n1: $(where "$C")"
	[[ $(docker node inspect -f '{{.Spec.Availability}}' "$SW_N2_ID") == drain ]] ||
		t_err "n2's availability: $(docker node inspect -f '{{.Spec.Availability}}' "$SW_N2_ID")"
	n2 sh -c "ls -d '$SW_N2_DATA'/trash/*/*$C* '$SW_N2_DATA'/trash/*$C* 2>/dev/null | grep -q ." ||
		t_err "the source is not in n2's trash: $(n2 find "$SW_N2_DATA/trash" -maxdepth 3 2>&1 | head -n 5)"
else
	t_err "no n2 sandbox to drain ($C is on '$(sb_node "$C")')"
fi
t_end

finish
