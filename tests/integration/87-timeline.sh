#!/usr/bin/env bash
# The activity timeline (GET /v1/apps/{id}/events and its SSE stream): an
# app's life shows as events with who did it (the token's name, "console"
# for a console session, "system" for what the daemon does by itself; a
# cancelled task names who cancelled it), newest first, paged by a cursor
# and filtered by a type prefix; another tenant's app is 404; a follower
# of the stream sees a new event as it happens and, with Last-Event-ID,
# the ones it missed first, and so does `sandboxd app events --follow`;
# config changes name the key, never the value; the watcher's exit, the
# freeze, the wake, the idle reaper, a budget reached and an OOM kill are
# events too; the prune keeps SANDBOXD_EVENTS_MAX_PER_APP newest; the
# trash keeps an app's events and a purge removes them.
. "$(dirname "$0")/lib.sh"
need_test_image
command -v python3 >/dev/null || bail "python3 is needed"

BOB=tok-bob-$RANDOM$RANDOM
BASE_ENV=(SANDBOXD_IMAGE="$TEST_IMAGE" "SANDBOXD_API_TOKENS=it=$IT_TOKEN,bob=$BOB")
start_daemon "${BASE_ENV[@]}" || bail "the daemon did not come up"
DB=$DATA/state/sandboxd.db
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print("\n".join("|".join(map(str,x)) for x in c.execute(sys.argv[2]).fetchall()))' "$DB" "$1"; }

# events APP [QUERY] [TOKEN]: GET the page -> BODY
events() { api_as "${3:-$TOKEN}" GET "/v1/apps/$1/events${2:+?$2}"; }
# has_event APP TYPE: the newest page holds an event of TYPE
has_event() {
	events "$1" "limit=200" >/dev/null
	[[ $(j "[.events[] | select(.type == \"$2\")] | length") -ge 1 ]]
}
# event APP TYPE [TOKEN]: the newest event of TYPE -> EV (its JSON)
event() {
	events "$1" "limit=200" "${3:-$TOKEN}"
	EV=$(j "[.events[] | select(.type == \"$2\")][0]")
	[[ -n $EV && $EV != null ]] || t_err "no $2 event of app $1: $(short_body)"
}
ev() { jq -r "$@" <<<"$EV"; }

t_begin "an app's life is on its timeline, each event by the token that made it"
create_app "Timeline One" && create_sandbox "$APP_ID" || bail "no app: ${T_ERRS[*]}"
A=$APP_ID SB=$SB_ID
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
api POST "/v1/sandboxes/$SB/start"
expect_status 200
api PATCH "/v1/apps/$A" '{"name":"Timeline Renamed"}'
expect_status 200
api PATCH "/v1/apps/$A" '{"preview_visibility":"private"}'
expect_status 200
api PUT "/v1/apps/$A/config/PAYMENT_KEY" '{"value":"sk-very-secret-value-42","sensitive":true}'
expect_status 201
api POST "/v1/apps/$A/preview-link" '{}'
expect_status 201
for t in app.created sandbox.created sandbox.stopped sandbox.started app.renamed \
	app.visibility_changed app.config_changed app.link_issued; do
	event "$A" "$t"
	[[ $(ev .actor) == it ]] || t_err "$t: actor $(ev .actor), not it"
	[[ $(ev .app_id) == "$A" ]] || t_err "$t: app_id $(ev .app_id)"
	ulid_ok "$(ev .id)" || t_err "$t: id $(ev .id)"
	[[ $(ev .created_at) =~ ^20[0-9-]{8}T[0-9:]{8}Z$ ]] || t_err "$t: created_at $(ev .created_at)"
	[[ $(ev .severity) == info ]] || t_err "$t: severity $(ev .severity)"
	[[ -n $(ev .message) ]] || t_err "$t: no message"
done
event "$A" sandbox.started
[[ $(ev .sandbox_id) == "$SB" ]] || t_err "sandbox.started: sandbox_id $(ev .sandbox_id)"
event "$A" app.renamed
[[ $(ev -c .payload) == '{"from":"Timeline One","to":"Timeline Renamed"}' ]] ||
	t_err "app.renamed payload: $(ev -c .payload)"
event "$A" app.visibility_changed
[[ $(ev -c .payload) == '{"from":"default","to":"private"}' ]] || t_err "visibility payload: $(ev -c .payload)"
t_end

t_begin "config_changed names the key, never the value"
event "$A" app.config_changed
[[ $(ev -c .payload.names) == '["PAYMENT_KEY"]' && $(ev .payload.change) == added ]] ||
	t_err "payload: $(ev -c .payload)"
events "$A" "limit=200"
grep -q 'sk-very-secret' "$BODY_FILE" && t_err "the value is in the events"
[[ -z $(sql "SELECT id FROM app_event WHERE payload LIKE '%sk-very%' OR message LIKE '%sk-very%'") ]] ||
	t_err "the value is in the database's events"
api DELETE "/v1/apps/$A/config/PAYMENT_KEY"
expect_status 204
event "$A" app.config_changed
[[ $(ev .payload.change) == removed ]] || t_err "a delete: $(ev -c .payload)"
t_end

t_begin "a task and a commit: task.started, task.succeeded, git.committed"
submit "$SB" '{"prompt":"Add a todo list","agent":"opencode"}'
wait_task "$SB" "$TASK_ID" 90
expect_json .status succeeded
wait_until 10 has_event "$A" task.succeeded || t_err "no task.succeeded"
event "$A" task.started
[[ $(ev .task_id) == "$TASK_ID" && $(ev .actor) == it && $(ev .payload.agent) == opencode ]] ||
	t_err "task.started: $EV"
event "$A" task.succeeded
[[ $(ev .task_id) == "$TASK_ID" ]] || t_err "task.succeeded: $EV"
api PUT "/v1/sandboxes/$SB/files?path=notes.txt" "a note"
api POST "/v1/apps/$A/git/commit" '{"message":"a note"}'
if [[ $STATUS == 200 && $(j .committed) == true ]]; then
	SHA=$(j .sha)
	event "$A" git.committed
	[[ $(ev .payload.sha) == "$SHA" && $(ev .actor) == it ]] || t_err "git.committed: $EV"
else
	t_err "the commit: $STATUS $(short_body)"
fi
t_end

t_begin "a cancelled task: task.cancelled names who cancelled, not the follower"
submit "$SB" '{"prompt":"Wait [[fake:sleep=60]]","agent":"opencode"}'
wait_until 20 has_event "$A" task.started || t_err "no task.started"
api POST "/v1/sandboxes/$SB/tasks/$TASK_ID/cancel"
expect_status 200
wait_task "$SB" "$TASK_ID" 30
expect_json .status cancelled
wait_until 10 has_event "$A" task.cancelled || t_err "no task.cancelled"
event "$A" task.cancelled
[[ $(ev .task_id) == "$TASK_ID" && $(ev .actor) == it ]] || t_err "task.cancelled: $EV"
t_end

t_begin "a container that dies behind our back: sandbox.stopped by system, a warning"
docker kill "$(container_of "$SB")" >/dev/null 2>&1 || t_err "docker kill failed"
stopped_by_system() {
	events "$A" "type=sandbox.stopped"
	[[ $(j '.events[0].actor') == system ]]
}
if wait_until 10 stopped_by_system; then
	EV=$(j '.events[0]')
	[[ $(ev .severity) == warning && $(ev .payload.reason) == exited ]] || t_err "the exit: $EV"
else
	t_err "no sandbox.stopped by system: $(short_body)"
fi
api POST "/v1/sandboxes/$SB/start"
expect_status 200
t_end

t_begin "pages: newest first, by before, to the end; a type prefix"
events "$A" "limit=200"
ALL=$(j '[.events[].id] | join(" ")')
read -ra ALLA <<<"$ALL"
((${#ALLA[@]} >= 12)) || t_err "only ${#ALLA[@]} events"
[[ $(j '[.events[].id] == ([.events[].id] | sort | reverse)') == true ]] || t_err "not newest first"
[[ $(j .next_before) == null ]] || t_err "one page, yet next_before: $(j .next_before)"
got=() before=
for ((i = 0; i < 20; i++)); do
	events "$A" "limit=5${before:+&before=$before}"
	expect_status 200 || break
	mapfile -t page < <(j '.events[].id')
	got+=("${page[@]}")
	before=$(j .next_before)
	[[ $before == null ]] && break
	((${#page[@]} == 5)) || t_err "a full page has ${#page[@]}"
	[[ $before == "${page[4]}" ]] || t_err "next_before $before is not the page's last"
done
[[ "${got[*]}" == "$ALL" ]] || t_err "the pages differ from the whole: ${got[*]} vs $ALL"
events "$A" "type=task."
[[ $(j '[.events[].type | startswith("task.")] | all') == true && $(j '.events | length') -ge 2 ]] ||
	t_err "type=task.: $(short_body)"
events "$A" "type=sandbox.st"
[[ $(j '[.events[].type] | unique | sort | join(",")') == "sandbox.started,sandbox.stopped" ]] ||
	t_err "type=sandbox.st: $(j '[.events[].type] | unique')"
for q in limit=0 limit=201 limit=x before=nope "type=App.Created" "type=a%22b"; do
	events "$A" "$q"
	expect_status 400 && expect_envelope invalid_request
done
t_end

t_begin "tenancy: another tenant's app is 404, its own events name it"
events "$A" "" "$BOB"
expect_status 404 && expect_envelope not_found
api_as "$BOB" GET "/v1/apps/$A/events/stream"
expect_status 404
api_as "$BOB" POST /v1/apps '{"name":"Bobs App"}'
expect_status 201
B=$(j .id)
event "$B" app.created "$BOB"
[[ $(ev .actor) == bob ]] || t_err "bob's app.created: actor $(ev .actor)"
events "$B" "" "$TOKEN"
expect_status 404
api GET "/v1/apps/01ARZ3NDEKTSV4RRFFQ69G5FAV/events"
expect_status 404
t_end

t_begin "a console session's changes are by console"
CODE=$(sed -nE 's/^Console setup code \(shown once\): (.*)$/\1/p' "$DAEMON_OUT" | head -n 1)
[[ -n $CODE ]] || t_err "no setup code on stdout"
JAR=$IT_TMP/jar
# ccurl ARGS…: a call with the session's cookie (and CSRF token once set)
ccurl() { curl -s -b "$JAR" -c "$JAR" ${CSRF:+-H "X-CSRF-Token: $CSRF"} "$@"; }
CSRF=
CSRF=$(ccurl -H 'Content-Type: application/json' -d "{\"setup_code\":\"$CODE\",\"password\":\"correct horse battery\"}" \
	"$API_URL/v1/auth/setup" | jq -r .csrf_token)
[[ ${#CSRF} -ge 40 ]] || t_err "no session: $CSRF"
CA=$(ccurl -H 'Content-Type: application/json' -d '{"name":"By Console"}' "$API_URL/v1/apps" | jq -r .id)
if ulid_ok "$CA"; then
	BODY=$(ccurl "$API_URL/v1/apps/$CA/events")
	[[ $(j '.events[0].type') == app.created && $(j '.events[0].actor') == console ]] ||
		t_err "the console's app.created: $(short_body)"
else
	t_err "the console made no app: $CA"
fi
t_end

t_begin "live: a follower sees a new event; Last-Event-ID replays what it missed"
OUT=$IT_TMP/stream.out
curl -sN --max-time 30 -D "$OUT.head" -H "Authorization: Bearer $TOKEN" \
	"$API_URL/v1/apps/$A/events/stream" >"$OUT" 2>/dev/null &
CURL=$!
# The follower is in place once the answer's head came; then an event.
stream_open() { grep -qi '^content-type: text/event-stream' "$OUT.head" 2>/dev/null; }
wait_until 10 stream_open || t_err "the stream did not open: $(cat "$OUT.head" 2>/dev/null)"
api PATCH "/v1/apps/$A" '{"name":"Live Name"}'
expect_status 200
seen() { grep -q '"type":"app.renamed".*"to":"Live Name"' "$OUT"; }
wait_until 10 seen || t_err "the follower did not see the rename: $(head -c 600 "$OUT")"
grep -q '^event: app_event$' "$OUT" || t_err "no 'event: app_event' line"
LIVE_ID=$(sed -n 's/^id: //p' "$OUT" | tail -n 1)
ulid_ok "$LIVE_ID" || t_err "no id: line: $(head -c 300 "$OUT")"
grep -q 'sandbox.created' "$OUT" && t_err "without a cursor the follower got old events"
kill "$CURL" 2>/dev/null
wait "$CURL" 2>/dev/null
events "$A" "limit=4"
mapfile -t newest < <(j '.events[].id')
curl -sN --max-time 3 -H "Authorization: Bearer $TOKEN" -H "Last-Event-ID: ${newest[3]}" \
	"$API_URL/v1/apps/$A/events/stream" >"$OUT.2" 2>/dev/null
mapfile -t replay < <(sed -n 's/^id: //p' "$OUT.2")
[[ "${replay[*]}" == "${newest[2]} ${newest[1]} ${newest[0]}" ]] ||
	t_err "replay after ${newest[3]}: ${replay[*]} (want ${newest[2]} ${newest[1]} ${newest[0]})"
curl -sN --max-time 3 -H "Authorization: Bearer $TOKEN" -H "Last-Event-ID: nope" \
	-o /dev/null -w '%{http_code}' "$API_URL/v1/apps/$A/events/stream" >"$OUT.3" 2>/dev/null
[[ $(cat "$OUT.3") == 400 ]] || t_err "a bad Last-Event-ID: $(cat "$OUT.3")"
t_end

t_begin "the command line: app events lists oldest first, --follow prints a new one"
CLI=(env SANDBOXD_API="$API_URL" SANDBOXD_TOKEN="$TOKEN" "$SANDBOXD_BIN")
"${CLI[@]}" app events "$A" --limit 3 >"$IT_TMP/cli.out" 2>&1 || t_err "app events: $(cat "$IT_TMP/cli.out")"
events "$A" "limit=3"
mapfile -t want < <(j '.events | reverse | .[].type')
mapfile -t got < <(awk '{print $3}' "$IT_TMP/cli.out")
[[ "${got[*]}" == "${want[*]}" ]] || t_err "app events printed $(cat "$IT_TMP/cli.out") (want ${want[*]})"
"${CLI[@]}" app events "$A" --limit 2 -q >"$IT_TMP/cli.q" 2>&1
[[ $(head -n 1 "$IT_TMP/cli.q") == "$(j '.events[1].id')" ]] || t_err "-q: $(cat "$IT_TMP/cli.q")"
"${CLI[@]}" app events "$A" --limit 1 --follow --type app. >"$IT_TMP/cli.f" 2>&1 &
FPID=$!
cli_shown() { [[ -s $IT_TMP/cli.f ]]; }
wait_until 10 cli_shown || t_err "app events --follow printed nothing"
# Opened or not yet, the stream starts after the event shown
# (Last-Event-ID): a rename now is printed either way.
api PATCH "/v1/apps/$A" '{"name":"Followed Name"}'
followed() { (($(grep -c 'app\.renamed' "$IT_TMP/cli.f") >= 2)); }
wait_until 10 followed || t_err "--follow did not print the rename: $(cat "$IT_TMP/cli.f")"
kill -INT "$FPID" 2>/dev/null
wait "$FPID"
rc=$?
((rc == 0)) || t_err "Ctrl-C of --follow exited $rc"
"${CLI[@]}" app events "$A" --limit 0 >/dev/null 2>&1
(($? == 2)) || t_err "--limit 0 is not a usage error"
t_end

t_begin "the trash keeps an app's events; a purge removes them"
api_as "$BOB" DELETE "/v1/apps/$B"
expect_status 204
TID=$(header Sandboxd-Trash-Id)
[[ $(sql "SELECT count(*) FROM app_event WHERE app_id = '$B' AND type = 'app.trashed' AND actor = 'bob'") == 1 ]] ||
	t_err "no app.trashed by bob in the database"
api_as "$BOB" POST "/v1/trash/$TID/restore"
expect_status 200
event "$B" app.untrashed "$BOB"
[[ $(ev .actor) == bob ]] || t_err "app.untrashed by $(ev .actor)"
events "$B" "" "$BOB"
[[ $(j '[.events[].type] | join(",")') == "app.untrashed,app.trashed,app.created" ]] ||
	t_err "after the restore: $(j '[.events[].type]')"
api_as "$BOB" DELETE "/v1/apps/$B"
TID=$(header Sandboxd-Trash-Id)
api_as "$BOB" DELETE "/v1/trash/$TID"
expect_status 204
[[ $(sql "SELECT count(*) FROM app_event WHERE app_id = '$B'") == 0 ]] || t_err "the purged app's events stay"
t_end

# --- the daemon's own events, and the prune -------------------------------
stop_daemon
start_daemon "${BASE_ENV[@]}" SANDBOXD_SLEEP_POLICY=freeze SANDBOXD_FREEZE_AFTER_SECONDS=2 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=10 SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1 SANDBOXD_MEM_HEADROOM_PCT=0 \
	SANDBOXD_EVENTS_MAX_PER_APP=10 SANDBOXD_EVENTS_PRUNE_INTERVAL_SECONDS=1 ||
	bail "the daemon did not come back"

t_begin "frozen while idle, woken by a start, reaped at the idle threshold: by system"
# Idle since before the restart, it may be reaped at once: a start makes
# it fresh, and the events after it are looked at.
api POST "/v1/sandboxes/$SB/start"
expect_status 200
events "$A" "limit=1"
MARK=$(j '.events[0].id')
# newer TYPE: the newest event of TYPE is after MARK -> EV
newer() {
	events "$A" "type=$1&limit=1"
	EV=$(j '.events[0]')
	[[ $(j '.events[0].id // ""') > $MARK ]]
}
wait_until 30 newer sandbox.frozen || t_err "no sandbox.frozen after the start"
[[ $(ev .actor) == system ]] || t_err "sandbox.frozen by $(ev .actor)"
api POST "/v1/sandboxes/$SB/start"
expect_status 200
newer sandbox.woken || t_err "no sandbox.woken after a start of the frozen sandbox"
[[ $(ev .actor) == it ]] || t_err "sandbox.woken by $(ev .actor) (the start's token woke it)"
wait_until 40 newer sandbox.reaped || t_err "no sandbox.reaped"
[[ $(ev .actor) == system && $(ev .payload.reason) == idle ]] || t_err "sandbox.reaped: $EV"
t_end

t_begin "the prune keeps the newest SANDBOXD_EVENTS_MAX_PER_APP of each app"
pruned() { [[ $(sql "SELECT count(*) FROM app_event WHERE app_id = '$A'") -le 10 ]]; }
wait_until 10 pruned || t_err "$(sql "SELECT count(*) FROM app_event WHERE app_id = '$A'") events kept"
events "$A" "limit=200"
[[ $(j '.events | length') -ge 5 && $(j '.events[0].type') == sandbox.reaped ]] ||
	t_err "the newest were not kept: $(j '[.events[].type]')"
t_end

# --- a budget reached and an OOM kill ------------------------------------
KEY=sk-ant-test-$RANDOM$RANDOM
start_fake_provider --expect-key "$KEY"
PROXY_PORT=$(free_port)
stop_daemon
start_daemon "${BASE_ENV[@]}" SANDBOXD_MEMORY_MB=64 SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" || bail "the daemon did not come back"
daemon_gateway || bail "no gateway for the sandbox network: $(short_body)"

t_begin "a model call refused by the app's budget: app.budget_reached, a warning, by system"
create_app "Hog" && create_sandbox "$APP_ID" || bail "no app: ${T_ERRS[*]}"
H=$APP_ID
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
submit "$SB_ID" '{"prompt":"[[fake:write=a.txt]]","agent":"opencode"}'
wait_task "$SB_ID" "$TASK_ID" 60
TOK=$(jq -r '.provider.sandboxd.options.apiKey' <<<"$(tr '\0' '\n' <"$DATA/workspaces/$SB_ID/.sandboxd/tasks/$TASK_ID/env" |
	sed -n 's/^OPENCODE_CONFIG_CONTENT=//p')")
[[ $TOK == sk_* ]] || t_err "no proxy token in the task's env file"
api PATCH "/v1/apps/$H" '{"own_model_calls":{"tokens":1}}'
expect_status 200
st=$(sandbox_post "$SB_CONTAINER" "http://$GW:$PROXY_PORT/claude-code/anthropic/v1/messages" "$TOK" \
	'{"model":"m","max_tokens":50,"messages":[]}')
[[ $st == 403 ]] || t_err "the call over budget answered $st"
sandbox_post "$SB_CONTAINER" "http://$GW:$PROXY_PORT/claude-code/anthropic/v1/messages" "$TOK" \
	'{"model":"m","max_tokens":50,"messages":[]}' >/dev/null
wait_until 10 has_event "$H" app.budget_reached || t_err "no app.budget_reached"
event "$H" app.budget_reached
[[ $(ev .severity) == warning && $(ev .actor) == system && $(ev .sandbox_id) == "$SB_ID" ]] ||
	t_err "app.budget_reached: $EV"
events "$H" "type=app.budget_reached"
[[ $(j '.events | length') == 1 ]] || t_err "two refusals in a minute made $(j '.events | length') events"
t_end

t_begin "a process killed at the memory limit: sandbox.oom_killed, an error, by system"
docker exec "$SB_CONTAINER" python3 -c 'b = b"x" * (400 << 20); print(len(b))' >/dev/null 2>&1
wait_until 15 has_event "$H" sandbox.oom_killed || t_err "no sandbox.oom_killed"
event "$H" sandbox.oom_killed
[[ $(ev .severity) == error && $(ev .actor) == system && $(ev .sandbox_id) == "$SB_ID" ]] ||
	t_err "sandbox.oom_killed: $EV"
t_end

finish
