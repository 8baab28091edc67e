#!/usr/bin/env bash
# The idle and pressure reapers, with thresholds short enough to watch.
#
# Idle (SANDBOXD_IDLE_THRESHOLD_SECONDS=10, checked every second): an idle
# sandbox is stopped (status_reason "idle") about 10 s after its last
# activity; one polled with GET through the API all along is stopped too
# (reading is not activity); one that gets a preview request every second
# through the edge (lower-case host), one with a single long-lived event
# stream open through the edge, and an always_on one keep running; a
# daemon restart does not reset the clock (the busy one, once its traffic
# ends, is stopped ~10 s after its last request although the daemon
# restarted 6 s after it); checking idleness never starts a stopped
# sandbox.
#
# Pressure (SANDBOXD_MEM_HEADROOM_PCT=100: any machine is short,
# SANDBOXD_PRESSURE_INTERVAL_SECONDS=1): three sandboxes made active one
# after the other (A, then B, then C) and one always_on are stopped one at
# a time in the order A, B, C, always_on, each with status_reason
# "pressure", and the daemon's log names the reason.  They are set up
# under SANDBOXD_MEM_HEADROOM_PCT=0 and the daemon is restarted with 100:
# the store keeps last_active_at.
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
EDGE_ENV=("HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1)
IDLE_ENV=(SANDBOXD_IDLE_THRESHOLD_SECONDS=10 SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1
	SANDBOXD_MEM_HEADROOM_PCT=0)

now_ms() { echo $(($(date +%s%N) / 1000000)); }
host_of() { echo "s-$1-${2:-3000}.preview.localhost:$EDGE_PORT"; }
# preview ID: one GET / through the edge (lower-case host); prints the status.
preview() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Host: $(host_of "${1,,}")" \
		"http://127.0.0.1:$EDGE_PORT/" 2>/dev/null
}
# starts_since CONTAINER UNIX-TIME: container start events since then.
starts_since() {
	docker events --since "$2" --until "$(date +%s.%N)" \
		--filter "container=$1" --filter event=start --format '{{.Status}}' 2>/dev/null |
		grep -c start
}
# field SB JQ: one field of GET /v1/sandboxes/SB ("HTTP <code>" on error).
field() {
	api GET "/v1/sandboxes/$1"
	if [[ $STATUS == 200 ]]; then j "$2"; else echo "HTTP $STATUS"; fi
}
# (Read with grep -q through <(daemon_log), not a pipe: under pipefail,
# cat's SIGPIPE after grep -q found its line would fail the check.)
daemon_log() { cat "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null; }

# new_sb NAME: an app with the static preset and its sandbox -> SB_ID, SB_CONTAINER
new_sb() { create_app "$1" '"runtime_preset":"static"' && create_sandbox "$APP_ID"; }

# ---------------------------------------------------------------------------
# Idle reaper
start_daemon "${EDGE_ENV[@]}" "${IDLE_ENV[@]}" || bail "the daemon did not come up"

t_begin "setup: a sandbox serving a server-sent event stream (an event every 2 s)"
STREAM=
if create_app stream && create_sandbox "$APP_ID"; then
	STREAM=$SB_ID
	api PUT "/v1/sandboxes/$STREAM/files?path=sse.js" "require('http').createServer((q, s) => {
  if (q.url !== '/events') return s.end('ok\\n');
  s.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  s.write('data: hello\\n\\n');
  const t = setInterval(() => s.write('data: tick\\n\\n'), 2000);
  q.on('close', () => clearInterval(t));
}).listen(3000, '0.0.0.0');
"
	expect_status 200
	api PUT "/v1/sandboxes/$STREAM/files?path=sandbox.yaml" 'version: 1
web:
  command: node sse.js
  port: 3000
'
	expect_status 200
	for ((i = 0; i < 60; i++)); do
		[[ $(curl -s --max-time 2 -H "Host: $(host_of "${STREAM,,}")" "http://127.0.0.1:$EDGE_PORT/") == ok ]] && break
		sleep 0.25
	done
	((i < 60)) || t_err "the stream app does not answer through the edge"
fi
t_end
[[ -n $STREAM ]] || bail "setup failed"

t_begin "setup: idle, GET-polled, busy, always_on and stopped sandboxes"
T0=$(now_ms)
declare -A SB=() CT=()
for name in idle polled busy always stopped; do
	new_sb "$name" || break
	SB[$name]=$SB_ID CT[$name]=$SB_CONTAINER
done
if ((${#SB[@]} == 5)); then
	api POST "/v1/sandboxes/${SB[stopped]}/stop"
	expect_status 200 && expect_json .status stopped
	api PATCH "/v1/sandboxes/${SB[always]}" '{"idle_policy":"always_on"}'
	expect_status 200 && expect_json .idle_policy always_on
	api PATCH "/v1/sandboxes/${SB[always]}" '{"idle_policy":"sometimes"}'
	expect_status 400
	# A non-GET call on a sandbox is activity: this is where the clock starts.
	for name in idle polled busy; do
		api PATCH "/v1/sandboxes/${SB[$name]}" '{"idle_policy":"sleep"}'
		expect_status 200 && expect_json .idle_policy sleep
	done
fi
T1=$(now_ms)
SINCE1=$(date +%s.%N)
# Created under a 10 s threshold: the first ones must not have been reaped yet.
(((T1 - T0) < 8000)) || t_err "the setup took $((T1 - T0)) ms; the first sandboxes may have been reaped meanwhile"
t_end
((${#SB[@]} == 5)) || bail "setup failed"

# Steady preview traffic on "busy", GET polling on "polled".
rm -f "$IT_TMP/busy.stop"
(
	while [[ ! -e $IT_TMP/busy.stop ]]; do
		date +%s%N >"$IT_TMP/busy.last"
		{ preview "${SB[busy]}"; echo; } >>"$IT_TMP/busy.codes"
		sleep 1
	done
) &
BUSY_PID=$!
# One long-lived event stream through the edge: no new requests.
curl -sN --max-time 60 -H "Host: $(host_of "${STREAM,,}")" "http://127.0.0.1:$EDGE_PORT/events" \
	>"$IT_TMP/sse.out" 2>/dev/null &
SSE_PID=$!
(
	while [[ ! -e $IT_TMP/busy.stop ]]; do
		curl -s -o /dev/null --max-time 5 -H "Authorization: Bearer $TOKEN" \
			"$API_URL/v1/sandboxes/${SB[polled]}"
		sleep 1
	done
) &
POLL_PID=$!

t_begin "idle: the idle and the GET-polled sandboxes are stopped ~10 s after their last activity, reason idle"
declare -A STOPPED_AT=()
while (($(now_ms) - T1 < 22000)); do
	for name in idle polled busy always; do
		[[ -n ${STOPPED_AT[$name]:-} ]] && continue
		[[ $(field "${SB[$name]}" .status) == stopped ]] && STOPPED_AT[$name]=$(($(now_ms) - T1))
	done
	[[ -n ${STOPPED_AT[idle]:-} && -n ${STOPPED_AT[polled]:-} ]] && break
	sleep 0.25
done
for name in idle polled; do
	at=${STOPPED_AT[$name]:-}
	if [[ -z $at ]]; then
		t_err "$name: still $(field "${SB[$name]}" .status) $((($(now_ms) - T1) / 1000)) s after its last activity"
		continue
	fi
	note "$name stopped $at ms after its last activity"
	((at >= 9500 && at <= 14500)) || t_err "$name: stopped after $at ms, expected 10-13 s (threshold 10 s, checked every 1 s)"
	r=$(field "${SB[$name]}" .status_reason)
	[[ $r == idle ]] || t_err "$name: status_reason is '$r', expected idle"
	container_running "${CT[$name]}" && t_err "$name: the container still runs"
	grep -q "idle reaper: sandbox ${SB[$name]}" <(daemon_log) ||
		t_err "$name: no 'idle reaper: sandbox ${SB[$name]} …' line in the daemon log"
done
t_end

t_begin "idle: the busy sandbox (a preview request every second) and the always_on one keep running"
sleep 3
for name in busy always; do
	st=$(field "${SB[$name]}" .status)
	[[ $st == running ]] || t_err "$name: $st (reason $(field "${SB[$name]}" .status_reason)) $((($(now_ms) - T1) / 1000)) s in"
	container_running "${CT[$name]}" || t_err "$name: the container does not run"
done
note "busy's preview answers: $(sort "$IT_TMP/busy.codes" | uniq -c | awk '{ printf "%s×%s ", $1, $2 }')"
grep -qv '^200$' "$IT_TMP/busy.codes" && note "(some preview answers for busy were not 200)"
t_end

t_begin "idle: a sandbox with one long-lived event stream open through the edge keeps running"
st=$(field "$STREAM" .status)
[[ $st == running ]] || t_err "stream: $st (reason $(field "$STREAM" .status_reason)) $((($(now_ms) - T1) / 1000)) s into the stream"
n=$(grep -c '^data: tick' "$IT_TMP/sse.out" 2>/dev/null)
note "the stream has carried ${n:-0} events"
((${n:-0} >= 5)) || t_err "the stream carried only ${n:-0} events in $((($(now_ms) - T1) / 1000)) s"
kill "$SSE_PID" 2>/dev/null
wait "$SSE_PID" 2>/dev/null
t_end

t_begin "a daemon restart does not reset the clock: stopped ~10 s after the last request, not after the restart"
touch "$IT_TMP/busy.stop"
wait "$BUSY_PID" "$POLL_PID" 2>/dev/null
T2=$(($(cat "$IT_TMP/busy.last") / 1000000))
[[ $(field "${SB[busy]}" .status) == running ]] || t_err "busy is not running when its traffic ends"
sleep "$(awk -v ms=$((T2 + 6000 - $(now_ms))) 'BEGIN { print (ms > 0 ? ms / 1000 : 0) }')"
stop_daemon
start_daemon "${EDGE_ENV[@]}" "${IDLE_ENV[@]}" || bail "the daemon did not come back"
note "the daemon was back $(($(now_ms) - T2)) ms after busy's last request"
at=
while (($(now_ms) - T2 < 25000)); do
	if [[ $(field "${SB[busy]}" .status) == stopped ]]; then
		at=$(($(now_ms) - T2))
		break
	fi
	sleep 0.25
done
if [[ -z $at ]]; then
	t_err "busy still $(field "${SB[busy]}" .status) 25 s after its last request"
else
	note "busy stopped $at ms after its last request"
	((at >= 9500 && at <= 14500)) ||
		t_err "busy stopped $at ms after its last request: expected ~10-13 s (the restart was at ~6 s; ~16 s and more means the restart reset the clock)"
	r=$(field "${SB[busy]}" .status_reason)
	[[ $r == idle ]] || t_err "busy: status_reason is '$r', expected idle"
fi
st=$(field "${SB[always]}" .status)
[[ $st == running ]] || t_err "always_on: $st (reason $(field "${SB[always]}" .status_reason)) after the restart"
t_end

t_begin "checking idleness never wakes a stopped sandbox"
sleep 2
for name in idle polled stopped; do
	st=$(field "${SB[$name]}" .status)
	[[ $st == stopped ]] || t_err "$name: $st"
	container_running "${CT[$name]}" && t_err "$name: the container runs"
	n=$(starts_since "${CT[$name]}" "$SINCE1")
	[[ $n == 0 ]] || t_err "$name: $n container start event(s) while the reaper ran"
done
expect_healthz
t_end

# ---------------------------------------------------------------------------
# Pressure reaper
new_data_dir
start_daemon "${EDGE_ENV[@]}" SANDBOXD_MEM_HEADROOM_PCT=0 SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 \
	SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1 || bail "the daemon did not come up"

t_begin "setup: A, B, C made active in that order, and an always_on D"
declare -A P=() PC=()
for name in D A B C; do
	new_sb "p-$name" || break
	P[$name]=$SB_ID PC[$name]=$SB_CONTAINER
done
if ((${#P[@]} == 4)); then
	api PATCH "/v1/sandboxes/${P[D]}" '{"idle_policy":"always_on"}'
	expect_status 200
	sleep 1.2
	code=$(preview "${P[A]}") # preview traffic
	[[ $code =~ ^(200|503)$ ]] || t_err "preview request to A: HTTP $code"
	sleep 1.5
	api PATCH "/v1/sandboxes/${P[B]}" '{"idle_policy":"sleep"}' # a non-GET API call
	expect_status 200
	sleep 1.5
	code=$(preview "${P[C]}")
	[[ $code =~ ^(200|503)$ ]] || t_err "preview request to C: HTTP $code"
	# Let the reaper write the activity to the store (every second).
	sleep 2.5
fi
t_end
((${#P[@]} == 4)) || bail "setup failed"

t_begin "pressure: stopped one at a time, least recently active first, always_on last, reason pressure"
stop_daemon
start_daemon "${EDGE_ENV[@]}" SANDBOXD_MEM_HEADROOM_PCT=100 SANDBOXD_PRESSURE_INTERVAL_SECONDS=1 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 || bail "the daemon did not come back"
T3=$(now_ms)
declare -A PAT=()
while (($(now_ms) - T3 < 30000)) && ((${#PAT[@]} < 4)); do
	for name in A B C D; do
		[[ -n ${PAT[$name]:-} ]] && continue
		[[ $(field "${P[$name]}" .status) == stopped ]] && PAT[$name]=$(($(now_ms) - T3))
	done
	sleep 0.1
done
order=$(for name in "${!PAT[@]}"; do echo "${PAT[$name]} $name"; done | sort -n | awk '{ printf "%s", $2 }')
note "stopped (ms after the restart): A ${PAT[A]:--} B ${PAT[B]:--} C ${PAT[C]:--} D(always_on) ${PAT[D]:--}"
[[ $order == ABCD ]] || t_err "stop order $order, expected ABCD"
logorder=$(daemon_log | grep 'pressure reaper: ' | grep -o 'stopping sandbox [0-9A-Z]*' | awk '{ print $3 }' |
	while read -r id; do for n in A B C D; do [[ ${P[$n]} == "$id" ]] && printf '%s' "$n"; done; done)
[[ $logorder == ABCD ]] || t_err "the daemon log's 'pressure reaper: … stopping sandbox' lines are in the order '$logorder', expected ABCD"
for name in A B C D; do
	r=$(field "${P[$name]}" .status_reason)
	[[ $r == pressure ]] || t_err "$name: status_reason is '$r', expected pressure"
	container_running "${PC[$name]}" && t_err "$name: the container still runs"
	grep "pressure reaper: " <(daemon_log) | grep -F "${P[$name]}" >/dev/null ||
		t_err "$name: the daemon log has no pressure reaper line naming ${P[$name]}"
done
t_end
daemon_log | grep 'pressure reaper: ' | head -n 4 | sed -E 's/^/  /' | while IFS= read -r l; do note "$l"; done

finish
