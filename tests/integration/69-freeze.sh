#!/usr/bin/env bash
# Two-tier sleep, with thresholds short enough to watch.
#
# Freeze (SANDBOXD_FREEZE_AFTER_SECONDS=3, SANDBOXD_IDLE_THRESHOLD_SECONDS=15,
# checked every second): an idle sandbox is frozen (status running,
# "frozen":true, preview.status "frozen", docker inspect says Paused) a few
# seconds after its last activity; a preview request through the edge is
# answered by the app itself (200 with its body, no warming page) and thaws
# it; frozen again, it is stopped (reason idle) at the threshold, counted
# from its last activity.  A task on a frozen sandbox thaws it and runs;
# tasks submitted just as the reaper freezes all run, and POST …/freeze is
# refused (409) while a task runs.
# A container paused behind the daemon's back shows as frozen at once (the
# engine's events), and one paused while the daemon was down shows as
# frozen after the restart (reconcile); a preview request thaws it.
# POST …/freeze freezes at once (idempotent), POST …/start thaws, a
# stopped sandbox cannot be frozen (409); /metrics counts frozen ones.
#
# Pressure (SANDBOXD_MEM_HEADROOM_PCT=100 after a restart): a frozen
# sandbox is stopped before a running one that was less recently active,
# and the log says "stopping frozen sandbox".  A sandbox with idle_policy
# "stop" is never frozen (and setting it thaws a frozen one).
#
# Policy stop (SANDBOXD_SLEEP_POLICY=stop): never frozen, stopped at the
# threshold (today's behaviour).
. "$(dirname "$0")/lib.sh"
need_test_image

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
BASE_ENV=(SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_OPERATORS=it "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1
	SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1)
FREEZE_ENV=("${BASE_ENV[@]}" SANDBOXD_FREEZE_AFTER_SECONDS=3 SANDBOXD_IDLE_THRESHOLD_SECONDS=15
	SANDBOXD_MEM_HEADROOM_PCT=0)

now_ms() { echo $(($(date +%s%N) / 1000000)); }
host_of() { echo "s-${1,,}-3000.preview.localhost:$EDGE_PORT"; }
paused() { dinspect "$1" '{{.State.Paused}}'; }
field() {
	api GET "/v1/sandboxes/$1"
	if [[ $STATUS == 200 ]]; then j "$2"; else echo "HTTP $STATUS"; fi
}
daemon_log() { cat "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null; }
# wait_field SB JQ VALUE SECS: until the field has that value; prints the ms.
wait_field() {
	local t0 v
	t0=$(now_ms)
	while (($(now_ms) - t0 < $4 * 1000)); do
		v=$(field "$1" "$2")
		[[ $v == "$3" ]] && { echo $(($(now_ms) - t0)); return 0; }
		sleep 0.2
	done
	return 1
}
# app NAME: a sandbox whose web process answers "app NAME" -> SB_ID, SB_CONTAINER
app() {
	create_app "$1" '"runtime_preset":"static"' && create_sandbox "$APP_ID" || return 1
	api PUT "/v1/sandboxes/$SB_ID/files?path=app.js" "require('http').createServer((q, s) => s.end('app $1\\n')).listen(3000, '0.0.0.0');
"
	expect_status 200 || return 1
	api PUT "/v1/sandboxes/$SB_ID/files?path=sandbox.yaml" 'version: 1
web:
  command: node app.js
  port: 3000
'
	expect_status 200 || return 1
	local i
	for ((i = 0; i < 150; i++)); do
		[[ $(ecurl "$(host_of "$SB_ID")" / --max-time 2) == "app $1" ]] && return 0
		sleep 0.2
	done
	t_err "app $1 does not answer through the edge"
}
# first_answer SB: one GET / through the edge -> E_STATUS, E_BODY, E_STATE
# (X-Sandboxd-Preview), E_MS
first_answer() {
	local t0 f=$IT_TMP/first
	t0=$(now_ms)
	E_STATUS=$(curl -s --max-time 10 -o "$f.body" -D "$f.head" -w '%{http_code}' \
		-H "Host: $(host_of "$1")" "$EDGE/")
	E_MS=$(($(now_ms) - t0))
	E_BODY=$(cat "$f.body")
	E_STATE=$(tr -d '\r' <"$f.head" | grep -i '^x-sandboxd-preview:' | sed -E 's/^[^:]+:[[:space:]]*//')
}

# ---------------------------------------------------------------------------
start_daemon "${FREEZE_ENV[@]}" || bail "the daemon did not come up"

t_begin "setup: three sandboxes serving their app through the edge"
A= B= D=
app a && A=$SB_ID ACT=$SB_CONTAINER
app b && B=$SB_ID BCT=$SB_CONTAINER
app d && D=$SB_ID DCT=$SB_CONTAINER
[[ -n $D ]] && { api PATCH "/v1/sandboxes/$D" '{"idle_policy":"always_on"}'; expect_status 200; }
api PATCH "/v1/sandboxes/$D" '{"idle_policy":"sometimes"}'
expect_status 400
t_end
[[ -n $A && -n $B && -n $D ]] || bail "setup failed"

t_begin "an idle sandbox is frozen: running, frozen, preview frozen, the container Paused"
if ms=$(wait_field "$A" .frozen true 12); then
	note "frozen ${ms} ms after the setup"
	api GET "/v1/sandboxes/$A"
	expect_json .status running && expect_json .preview.status frozen
	[[ $(paused "$ACT") == true ]] || t_err "docker inspect: Paused is $(paused "$ACT")"
	grep -q "sandbox $A: frozen" <(daemon_log) || t_err "no 'sandbox $A: frozen' line in the log"
	api GET /metrics
	grep -qE '^sandboxd_sandboxes_frozen [1-9]' <<<"$BODY" ||
		t_err "/metrics: $(grep sandboxd_sandboxes_frozen <<<"$BODY" | tail -n 1)"
else
	t_err "not frozen after 12 s: $(short_body)"
fi
t_end

t_begin "a preview request to a frozen sandbox gets the app's answer (no warming page) and thaws it"
first_answer "$A"
note "first answer from frozen: HTTP $E_STATUS in $E_MS ms"
[[ $E_STATUS == 200 && $E_BODY == "app a" ]] ||
	t_err "HTTP $E_STATUS (${E_STATE:-no preview state}): $E_BODY"
[[ -z $E_STATE ]] || t_err "the answer carries X-Sandboxd-Preview: $E_STATE"
((E_MS < 2000)) || t_err "the answer took $E_MS ms"
wait_field "$A" .frozen false 3 >/dev/null || t_err "still frozen after the request"
[[ $(paused "$ACT") == false ]] || t_err "docker inspect: Paused is $(paused "$ACT") after the request"
T_WOKE=$(now_ms)
t_end

t_begin "frozen again, then stopped (reason idle) at the threshold"
wait_field "$A" .frozen true 10 >/dev/null || t_err "not frozen again"
if wait_field "$A" .status stopped 25 >/dev/null; then
	at=$(($(now_ms) - T_WOKE))
	note "stopped $at ms after its last request"
	((at >= 14000 && at <= 19000)) || t_err "stopped after $at ms; expected ~15-18 s"
	api GET "/v1/sandboxes/$A"
	expect_json .status_reason idle && expect_json .frozen false
	container_running "$ACT" && t_err "the container still runs"
else
	t_err "not stopped: $(short_body)"
fi
t_end

t_begin "a task on a frozen sandbox thaws it and runs"
# Started again first: b was stopped at the threshold meanwhile.
api POST "/v1/sandboxes/$B/start"
expect_status 200 && expect_json .status running
wait_field "$B" .frozen true 10 >/dev/null || t_err "b is not frozen: $(field "$B" .)"
[[ $(paused "$BCT") == true ]] || t_err "b's container is not paused"
if submit "$B" '{"prompt":"[[fake:write=thawed.txt]] [[fake:content=yes]]"}'; then
	wait_task "$B" "$TASK_ID" 60
	expect_json .status succeeded
	[[ $(cat "$DATA/workspaces/$B/workspace/app/thawed.txt" 2>/dev/null) == yes* ]] ||
		t_err "the task's file is not in the workspace"
	[[ $(field "$B" .frozen) == false ]] || t_err "b is still frozen after the task"
	[[ $(paused "$BCT") == false ]] || t_err "b's container is still paused"
fi
t_end

t_begin "tasks submitted just as the reaper freezes the sandbox all run (no 502, no wait on a frozen agent)"
# Each task ends its activity; the next comes 2.9-3.9 s later, around the
# 3 s freeze threshold, so submits and freezes meet.
n_ok=0
for i in 0 1 2 3 4 5; do
	sleep "$(awk -v i="$i" 'BEGIN { printf "%.2f", 2.9 + i * 0.2 }')"
	submit "$B" "{\"prompt\":\"[[fake:write=race$i.txt]] [[fake:content=$i]]\"}" || { t_err "submit $i: HTTP $STATUS $(short_body)"; continue; }
	t0=$(now_ms)
	wait_task "$B" "$TASK_ID" 30
	if [[ $(j .status) == succeeded ]]; then
		n_ok=$((n_ok + 1))
	else
		t_err "task $i: $(j .status) $(j .failure_reason)"
	fi
	(($(now_ms) - t0 < 15000)) || t_err "task $i took $(($(now_ms) - t0)) ms"
done
note "$n_ok of 6 tasks succeeded; freezes meanwhile: $(daemon_log | grep -c "$B: frozen")"
((n_ok == 6)) || t_err "only $n_ok of 6 tasks succeeded"
t_end

t_begin "POST …/freeze is refused while a task runs"
if submit "$B" '{"prompt":"[[fake:sleep=3]] done"}'; then
	long=$TASK_ID
	api POST "/v1/sandboxes/$B/freeze"
	expect_status 409 && expect_envelope task_in_progress
	[[ $(paused "$BCT") == false ]] || t_err "b's container is paused during its task"
	wait_task "$B" "$long" 30
	expect_json .status succeeded
fi
t_end

t_begin "a container paused behind the daemon's back shows frozen (events), and unpaused not"
docker pause "$DCT" >/dev/null || t_err "docker pause failed"
wait_field "$D" .frozen true 3 >/dev/null || t_err "not frozen after docker pause: $(short_body)"
docker unpause "$DCT" >/dev/null || t_err "docker unpause failed"
wait_field "$D" .frozen false 3 >/dev/null || t_err "still frozen after docker unpause: $(short_body)"
t_end

t_begin "a container paused while the daemon was down is frozen after the restart; a request thaws it"
stop_daemon
docker pause "$DCT" >/dev/null || t_err "docker pause failed"
start_daemon "${FREEZE_ENV[@]}" || bail "the daemon did not come back"
api GET "/v1/sandboxes/$D"
expect_json .status running && expect_json .frozen true && expect_json .preview.status frozen
first_answer "$D"
[[ $E_STATUS == 200 && $E_BODY == "app d" ]] || t_err "HTTP $E_STATUS (${E_STATE:-}): $E_BODY"
wait_field "$D" .frozen false 3 >/dev/null || t_err "still frozen after the request"
[[ $(paused "$DCT") == false ]] || t_err "docker inspect: Paused is $(paused "$DCT")"
t_end

t_begin "POST …/freeze freezes at once, POST …/start thaws; a stopped sandbox cannot be frozen"
api POST "/v1/sandboxes/$D/freeze"
expect_status 200 && expect_json .frozen true && expect_json .status running
[[ $(paused "$DCT") == true ]] || t_err "docker inspect: Paused is $(paused "$DCT") after freeze"
api POST "/v1/sandboxes/$D/freeze"
expect_status 200 && expect_json .frozen true
api POST "/v1/sandboxes/$D/start"
expect_status 200 && expect_json .frozen false && expect_json .status running
[[ $(paused "$DCT") == false ]] || t_err "docker inspect: Paused is $(paused "$DCT") after start"
api POST "/v1/sandboxes/$A/freeze"
expect_status 409 && expect_envelope conflict
t_end

# ---------------------------------------------------------------------------
new_data_dir
P_ENV=("${BASE_ENV[@]}" SANDBOXD_FREEZE_AFTER_SECONDS=2 SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000)
start_daemon "${P_ENV[@]}" SANDBOXD_MEM_HEADROOM_PCT=0 || bail "the daemon did not come up"

t_begin "setup: R (idle_policy stop, active first) and F (active later, then frozen)"
R= F=
app r && R=$SB_ID RCT=$SB_CONTAINER
app f && F=$SB_ID FCT=$SB_CONTAINER
if [[ -n $R && -n $F ]]; then
	# (R may have been frozen while F was made: "stop" thaws it.)
	api PATCH "/v1/sandboxes/$R" '{"idle_policy":"stop"}'
	expect_status 200 && expect_json .idle_policy stop && expect_json .frozen false
	sleep 1.5
	api PATCH "/v1/sandboxes/$F" '{"idle_policy":"freeze"}'
	expect_status 200
	wait_field "$F" .frozen true 10 >/dev/null || t_err "F is not frozen: $(short_body)"
	sleep 1.5
	[[ $(field "$R" .frozen) == false && $(paused "$RCT") == false ]] ||
		t_err "R (idle_policy stop) was frozen"
fi
t_end
[[ -n $R && -n $F ]] || bail "setup failed"

t_begin "pressure: the frozen sandbox is stopped first, then the less recently active running one"
stop_daemon
start_daemon "${P_ENV[@]}" SANDBOXD_MEM_HEADROOM_PCT=100 SANDBOXD_PRESSURE_INTERVAL_SECONDS=1 ||
	bail "the daemon did not come back"
[[ $(field "$F" .frozen) == true ]] || t_err "F is not frozen after the restart"
T3=$(now_ms)
FAT= RAT=
while (($(now_ms) - T3 < 20000)) && [[ -z $FAT || -z $RAT ]]; do
	[[ -z $FAT && $(field "$F" .status) == stopped ]] && FAT=$(($(now_ms) - T3))
	[[ -z $RAT && $(field "$R" .status) == stopped ]] && RAT=$(($(now_ms) - T3))
	sleep 0.1
done
note "stopped (ms after the restart): F(frozen) ${FAT:--} R ${RAT:--}"
[[ -n $FAT && -n $RAT ]] && ((FAT < RAT)) || t_err "F at ${FAT:--} ms, R at ${RAT:--} ms: expected F first"
for s in "$F" "$R"; do
	[[ $(field "$s" .status_reason) == pressure ]] || t_err "$s: reason $(field "$s" .status_reason)"
done
grep -q "stopping frozen sandbox $F" <(daemon_log) || t_err "no 'stopping frozen sandbox $F' in the log"
container_running "$FCT" && t_err "F's container still runs"
container_running "$RCT" && t_err "R's container still runs"
t_end

# ---------------------------------------------------------------------------
new_data_dir
start_daemon "${BASE_ENV[@]}" SANDBOXD_SLEEP_POLICY=stop SANDBOXD_FREEZE_AFTER_SECONDS=1 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=10 SANDBOXD_MEM_HEADROOM_PCT=0 || bail "the daemon did not come up"

t_begin "SANDBOXD_SLEEP_POLICY=stop: never frozen, stopped at the threshold (reason idle)"
S=
app s && S=$SB_ID SCT=$SB_CONTAINER
T4=$(now_ms)
if [[ -n $S ]]; then
	api PATCH "/v1/sandboxes/$S" '{"idle_policy":"sleep"}'
	T4=$(now_ms)
	frozen_seen=false
	while (($(now_ms) - T4 < 16000)); do
		[[ $(paused "$SCT") == true ]] && frozen_seen=true
		[[ $(field "$S" .status) == stopped ]] && break
		sleep 0.2
	done
	at=$(($(now_ms) - T4))
	$frozen_seen && t_err "the container was paused under policy stop"
	api GET "/v1/sandboxes/$S"
	expect_json .status stopped && expect_json .status_reason idle
	note "stopped $at ms after its last activity"
	((at >= 9500 && at <= 14000)) || t_err "stopped after $at ms; expected ~10-13 s"
fi
t_end

t_begin "a bad SANDBOXD_SLEEP_POLICY stops the daemon at start, naming it"
stop_daemon
if start_daemon "${BASE_ENV[@]}" SANDBOXD_SLEEP_POLICY=nap; then
	t_err "the daemon started with SANDBOXD_SLEEP_POLICY=nap"
else
	grep -q "SANDBOXD_SLEEP_POLICY" "$DAEMON_ERR" || t_err "no SANDBOXD_SLEEP_POLICY in: $(tail -n 3 "$DAEMON_ERR")"
fi
t_end

finish
