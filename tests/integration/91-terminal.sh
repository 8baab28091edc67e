#!/usr/bin/env bash
# The terminal (issue 28): `sandboxd sandbox exec` (exit codes, stdin,
# stderr apart), `sandbox shell` under a real PTY (script) typing a
# command, resize, the sandbox user and no new privileges; refused: a
# cross-origin WebSocket, a reused ticket, another tenant's sandbox and
# session, a session past the per-sandbox cap (default 4) and a tenant's
# eleventh (default 10); tickets whose connection drops before the
# upgrade give their slots back; pause/resume; a reconnect replays; a
# stopped sandbox wakes; a flood with the daemon's RSS flat; the idle
# timeout; the timeline's terminal.opened and terminal.closed.
. "$(dirname "$0")/lib.sh"
need_docker
start_edge_daemon SANDBOXD_API_TOKENS=a=tok-a-term,b=tok-b-term,c=tok-c-term \
	SANDBOXD_TERMINAL_IDLE_SECONDS=12 \
	SANDBOXD_TERMINAL_REATTACH_SECONDS=20
TOKEN=tok-a-term
export SANDBOXD_API=$API_URL SANDBOXD_TOKEN=tok-a-term
export XDG_CONFIG_HOME=$IT_TMP/xdg
sbd() { timeout 60 "$SANDBOXD_BIN" "$@"; }

t_begin "an app and its sandbox"
create_app term && create_sandbox "$APP_ID"
t_end
[[ -n ${SB_ID:-} ]] || bail "no sandbox to work with"
SB=$SB_ID

t_begin "exec: stdout and stderr apart, the exit status ours"
sbd sandbox exec "$SB" -- sh -c 'echo out; echo err >&2; exit 7' \
	>"$IT_TMP/o" 2>"$IT_TMP/e" </dev/null
rc=$?
[[ $rc == 7 ]] || t_err "exit status $rc, not 7"
[[ $(cat "$IT_TMP/o") == out ]] || t_err "stdout: $(cat "$IT_TMP/o")"
[[ $(cat "$IT_TMP/e") == err ]] || t_err "stderr: $(cat "$IT_TMP/e")"
sbd sandbox exec "$SB" -- true </dev/null || t_err "true: $?"
t_end

t_begin "exec: stdin is passed through and closed at its end"
out=$(seq 1 5000 | sbd sandbox exec "$SB" -- sh -c 'wc -l')
[[ $out == 5000 ]] || t_err "wc -l of 5000 lines: $out"
t_end

t_begin "exec: the sandbox user, in the app directory, no new privileges"
out=$(sbd sandbox exec "$SB" -- sh -c 'id -u; pwd; grep NoNewPrivs /proc/self/status' </dev/null)
note "$out"
[[ $(sed -n 1p <<<"$out") != 0 && -n $(sed -n 1p <<<"$out") ]] || t_err "id -u: $(sed -n 1p <<<"$out")"
[[ $(sed -n 2p <<<"$out") == /home/sandbox/workspace/app ]] || t_err "pwd: $(sed -n 2p <<<"$out")"
grep -q 'NoNewPrivs:[[:space:]]*1' <<<"$out" || t_err "NoNewPrivs is not 1"
t_end

t_begin "a root shell is refused: asked for by the API, or reached for with su inside"
api POST "/v1/sandboxes/$SB/terminal" '{"user":"root"}'
expect_status 400 && expect_json .error.code invalid_request
api POST "/v1/sandboxes/$SB/terminal" '{"user":"0","command":["id","-u"]}'
expect_status 400
api POST "/v1/sandboxes/$SB/terminal" '{"privileged":true}'
expect_status 400
# su is set-uid root; with no new privileges it cannot become root
out=$(sbd sandbox exec "$SB" -- sh -c 'su root -c "id -u" </dev/null 2>&1; echo "rc=$?"; id -u' </dev/null)
note "su: $(tr '\n' ' ' <<<"$out")"
[[ $(tail -1 <<<"$out") != 0 ]] || t_err "the shell is root"
! grep -qx 0 <<<"$(sed '$d' <<<"$out")" || t_err "su reached root: $out"
grep -q 'rc=[1-9]' <<<"$out" || t_err "su did not fail: $out"
t_end

t_begin "shell under a real PTY: a typed command's output, stty size, exit status"
{
	sleep 2
	printf 'echo hi-$((6*7))\r'
	sleep 1
	printf 'stty size\r'
	sleep 1
	# the window changes: the client gets SIGWINCH and sends a resize
	pid=$(pgrep -f "^$SANDBOXD_BIN sandbox shell $SB" | head -1)
	[[ -n $pid ]] && stty -F "/proc/$pid/fd/0" cols 120 rows 40
	sleep 1
	printf 'stty size\r'
	sleep 1
	# Ctrl-C ends the foreground command, not the shell
	printf 'sleep 100\r'
	sleep 1
	printf '\003'
	sleep 1
	printf 'echo after-$((1+1))-int\r'
	sleep 1
	printf 'exit 3\r'
	sleep 2
} | script -qfec "stty cols 100 rows 30; $SANDBOXD_BIN sandbox shell $SB" /dev/null >"$IT_TMP/shell" 2>&1
rc=$?
grep -q 'hi-42' "$IT_TMP/shell" || t_err "no hi-42 in: $(tr -d '\r' <"$IT_TMP/shell" | tail -5)"
grep -q '30 100' "$IT_TMP/shell" || t_err "stty size is not 30 100"
grep -q '40 120' "$IT_TMP/shell" || t_err "stty size after the resize is not 40 120"
grep -q 'after-2-int' "$IT_TMP/shell" || t_err "the shell did not survive Ctrl-C"
[[ $rc == 3 ]] || t_err "the shell's exit status came back as $rc"
t_end

# rss: the daemon's VmRSS in kB
rss() { awk '/^VmRSS/ {print $2}' "/proc/$DAEMON_PID/status"; }

t_begin "a resize message, then a reconnect replays the last screen"
api POST "/v1/sandboxes/$SB/terminal" '{"cols":80,"rows":24}'
expect_status 201
S=$(j .session_id)
M=marker-$RANDOM
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" --resize 77x22 \
	--send "echo $M; stty size\r" --read-for 3 >"$IT_TMP/ws1" 2>"$IT_TMP/ws1e"
grep -q "$M" "$IT_TMP/ws1" || t_err "no $M in the first attach"
grep -q '22 77' "$IT_TMP/ws1" || t_err "stty size after the resize message: $(tr -d '\r' <"$IT_TMP/ws1" | tail -2)"
api POST "/v1/sandboxes/$SB/terminal" "{\"session_id\":\"$S\"}"
expect_status 201 && expect_json .session_id "$S"
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" --read-for 2 >"$IT_TMP/ws2" 2>"$IT_TMP/ws2e"
grep -q "$M" "$IT_TMP/ws2" || t_err "the reconnect did not replay $M: $(tr -d "\r" <"$IT_TMP/ws2" | tail -3) $(cat "$IT_TMP/ws2e")"
t_end

t_begin "idle: a terminal without input ends (reason idle)"
api POST "/v1/sandboxes/$SB/terminal" '{}'
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" --read-for 18 >/dev/null 2>"$IT_TMP/idle"
grep -q '"reason": "idle"' "$IT_TMP/idle" || t_err "no idle exit: $(cat "$IT_TMP/idle")"
t_end

t_begin "flood: a slow reader, the daemon's RSS flat"
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sh","-c","yes | head -c 200000000"]}'
expect_status 201
before=$(rss)
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" --slow 300000 --read-for 5 >/dev/null 2>&1 &
wpid=$!
max=$before
for _ in $(seq 1 20); do
	sleep 0.25
	r=$(rss)
	((r > max)) && max=$r
done
wait "$wpid"
after=$(rss)
note "VmRSS before $before kB, at most $max kB while flooding, after $after kB"
((max - before < 8192)) || t_err "the daemon's RSS grew by $((max - before)) kB under a flood"
t_end

t_begin "flow control: a pause stops the output, a resume brings it back"
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sh","-c","yes | head -c 30000000"]}'
expect_status 201
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" \
	--pause-for 4 --read-for 8 >/dev/null 2>"$IT_TMP/flow"
note "$(grep -E 'bytes:' "$IT_TMP/flow" | tr '\n' ' ')"
pb=$(sed -n 's/^paused-bytes: //p' "$IT_TMP/flow")
rb=$(sed -n 's/^resumed-bytes: //p' "$IT_TMP/flow")
[[ $pb == 0 ]] || t_err "output while paused: ${pb:-none} bytes: $(cat "$IT_TMP/flow")"
((${rb:-0} > 1000000)) || t_err "output after the resume: ${rb:-none} bytes"
t_end

t_begin "a sandbox stopped under an open terminal ends it (reason sandbox_stopped)"
api POST "/v1/sandboxes/$SB/terminal" '{}'
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" \
	--send 'echo typing\r' --after 0.5 --read-for 30 >/dev/null 2>"$IT_TMP/stopped" &
wpid=$!
sleep 2
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
wait "$wpid"
grep -q '"reason": "sandbox_stopped"' "$IT_TMP/stopped" || t_err "the terminal's end: $(cat "$IT_TMP/stopped")"
t_end

t_begin "a stopped sandbox wakes for a terminal"
out=$(sbd sandbox exec "$SB" -- echo awake </dev/null)
[[ $out == awake ]] || t_err "exec on a stopped sandbox: $out"
api GET "/v1/sandboxes/$SB"
expect_json .status running
t_end

# ws_open TICKET [ORIGIN [HOST]]: the status of a WebSocket handshake,
# straight to the API or, with HOST, through the edge
ws_open() {
	local url=$API_URL
	[[ -n ${3:-} ]] && url=$EDGE
	curl -s -o /dev/null -w '%{http_code}' --max-time 2 --http1.1 \
		-H 'Connection: Upgrade' -H 'Upgrade: websocket' \
		-H 'Sec-WebSocket-Version: 13' \
		-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
		${2:+-H "Origin: $2"} ${3:+-H "Host: $3"} "$url/v1/terminal?ticket=$1"
}

t_begin "through the console's host: its own Origin opens, a preview's is refused"
CH=console.localhost:$EDGE_PORT
api POST "/v1/sandboxes/$SB/terminal" '{"command":["true"]}'
T=$(j .ticket)
[[ $(ws_open "$T" "http://s-${SB,,}-3000.preview.localhost:$EDGE_PORT" "$CH") == 403 ]] ||
	t_err "a preview's Origin opens a terminal through the console's host"
[[ $(ws_open "$T" "http://$CH" "$CH") == 101 ]] || t_err "the console's own Origin is refused"
t_end

t_begin "refused: a cross-origin WebSocket, a reused ticket"
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sleep","30"]}'
expect_status 201
T=$(j .ticket)
[[ $(ws_open "$T" "http://s-$SB-3000.preview.localhost") == 403 ]] || t_err "a preview's Origin is not refused"
[[ $(ws_open "$T" "http://$API_ADDR") == 101 ]] || t_err "the server's own Origin is refused"
[[ $(ws_open "$T") == 403 ]] || t_err "the used ticket opens again"
[[ $(ws_open "nonsense") == 403 ]] || t_err "an unknown ticket opens"
t_end

t_begin "refused: another tenant's sandbox (404) and session"
api_as tok-b-term POST "/v1/sandboxes/$SB/terminal" '{}'
expect_status 404
S=$(j .session_id)
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sleep","30"]}'
S=$(j .session_id)
api_as tok-b-term POST "/v1/sandboxes/$SB/terminal" "{\"session_id\":\"$S\"}"
expect_status 404
t_end

t_begin "refused: past the per-sandbox cap (the default 4: 409 terminal_limit)"
for _ in 1 2 3 4 5; do
	api POST "/v1/sandboxes/$SB/terminal" '{"command":["sleep","30"]}'
	[[ $STATUS == 201 ]] || break
done
expect_status 409 && expect_json .error.code terminal_limit
t_end

# drop_before_upgrade TICKET: sends the handshake and resets the
# connection at once, before the 101 can be read
drop_before_upgrade() {
	python3 - "$API_ADDR" "$1" <<'PY'
import socket, struct, sys
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
s.sendall((f"GET /v1/terminal?ticket={sys.argv[2]} HTTP/1.1\r\nHost: {sys.argv[1]}\r\n"
           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
s.shutdown(socket.SHUT_WR)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
PY
}

t_begin "tickets taken, connections dropped before the upgrade: the cap's slots come back"
APP1=$APP_ID
create_app term-drop && create_sandbox "$APP_ID"
SB2=$SB_ID
APP_ID=$APP1
for _ in 1 2 3 4; do
	api POST "/v1/sandboxes/$SB2/terminal" '{"command":["sleep","300"]}'
	expect_status 201 || break
	drop_before_upgrade "$(j .ticket)"
done
ok=
for i in $(seq 1 60); do
	api POST "/v1/sandboxes/$SB2/terminal" '{"command":["true"]}'
	[[ $STATUS == 201 ]] && { ok=$i; break; }
	sleep 0.5
done
[[ -n $ok ]] || t_err "no new session within 30 s of 4 dropped upgrades: $STATUS $BODY"
note "a new session opened after $ok tries (0.5 s apart);" \
	"$(grep -c 'the upgrade did not happen' "$DAEMON_ERR" 2>/dev/null) abandoned upgrades logged"
t_end

t_begin "refused: the eleventh session of a tenant past its cap (10; another tenant unaffected)"
C_SBS=()
for n in 1 2 3; do
	api_as tok-c-term POST /v1/apps "{\"name\":\"term-c$n\"}"
	expect_status 201 || break
	a=$(j .id)
	api_as tok-c-term POST "/v1/apps/$a/sandbox" '{"ports":[3000]}'
	expect_status 201 || break
	C_SBS+=("$(j .id)")
done
opened=0
for sb in "${C_SBS[@]}"; do
	for _ in 1 2 3 4; do
		((opened < 10)) || break
		api_as tok-c-term POST "/v1/sandboxes/$sb/terminal" '{"command":["sleep","120"]}'
		expect_status 201 || break
		opened=$((opened + 1))
	done
done
((opened == 10)) || t_err "$opened sessions opened, not 10"
api_as tok-c-term POST "/v1/sandboxes/${C_SBS[2]}/terminal" '{"command":["sleep","120"]}'
expect_status 409 && expect_json .error.code terminal_limit
grep -q 'already' <<<"$BODY" || t_err "the refusal: $BODY"
# tenant a, on a sandbox of its own with nothing open, is not affected
create_app term-other && create_sandbox "$APP_ID"
APP_ID=$APP1
api POST "/v1/sandboxes/$SB_ID/terminal" '{"command":["true"]}'
expect_status 201
t_end

t_begin "the timeline has terminal.opened and terminal.closed with the actor"
api GET "/v1/apps/$APP_ID/events?limit=200"
n_open=$(jq '[.events[]? // .[]? | select(.type=="terminal.opened")] | length' <<<"$BODY")
n_closed=$(jq '[.events[]? // .[]? | select(.type=="terminal.closed")] | length' <<<"$BODY")
actor=$(jq -r '[.events[]? // .[]? | select(.type=="terminal.opened")][0].actor' <<<"$BODY")
((n_open >= 3)) || t_err "$n_open terminal.opened events"
((n_closed >= 2)) || t_err "$n_closed terminal.closed events"
[[ $actor == a ]] || t_err "terminal.opened's actor: $actor"
n_idle=$(jq '[.events[] | select(.type=="terminal.closed" and .payload.reason=="idle")] | length' <<<"$BODY")
((n_idle >= 1)) || t_err "no terminal.closed with reason idle: $(jq -c '[.events[] | select(.type=="terminal.closed")][0]' <<<"$BODY")"
t_end

finish
