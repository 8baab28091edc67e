#!/usr/bin/env bash
# Tasks: prompts run by the (scripted, fake) agent CLIs inside real
# sandboxes; results, SSE events (live, replayed, resumed), checkpoints and
# revert, cancel, timeout, OOM, a stop during a task, a daemon killed with
# -9 mid-task, and bad input.  The fakes (tests/fake-agent) speak each real
# CLI's stream format and edit files; the test image is the base image
# with them first in PATH.
. "$(dirname "$0")/lib.sh"
need_test_image

# events SB TASK OUT [curl args…]: the SSE stream into OUT (ends at done)
events() {
	local sb=$1 t=$2 out=$3
	shift 3
	curl -sN --max-time 60 -H "Authorization: Bearer $TOKEN" "$@" \
		"$API_URL/v1/sandboxes/$sb/tasks/$t/events" >"$out"
}

# ev_table FILE: "id<TAB>type<TAB>data" per event
ev_table() {
	awk '/^id: /{id=$2} /^event: /{ev=$2}
	     /^data: /{sub(/^data: /,""); print id "\t" ev "\t" $0}' "$1"
}

# ids_contiguous FILE FROM: ids are FROM, FROM+1, … with exactly one done, last
ids_contiguous() {
	ev_table "$1" | awk -F'\t' -v from="$2" '
		{ if ($1 != from + NR - 1) bad = "id " $1 " at position " NR
		  if ($2 == "done") { dones++; last = NR } }
		END { if (bad) { print bad; exit 1 }
		      if (dones != 1 || last != NR) { print dones " done events, last at " last " of " NR; exit 1 } }'
}

ws_file() { cat "$DATA/workspaces/$1/workspace/app/$2" 2>/dev/null; }

kill9_daemon() {
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# The same settings; the first start's token (stored hashed) still works.
restart_daemon() {
	start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" HTTP_PORT=$EDGE_PORT \
		SANDBOXD_EDGE_ADDR=127.0.0.1 -SANDBOXD_API_TOKENS ||
		bail "the daemon did not (re)start: $(tail -n 5 "$DAEMON_ERR")"
}

EDGE_PORT=$(free_port)
restart_daemon

seeds_quickstart "$API_URL" "$FIRST_TOKEN"
# --- the seeds go on, verbatim ---

TASK_OUT=$(curl -s -XPOST $API/v1/sandboxes/$SB/tasks -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"prompt":"Add a todo list with a text input, an add button, and a delete button on each row. Keep the list in localStorage.","agent":"opencode"}')
# --- end of the seeds ----------------------------------------------------------
T=$(sed -E 's/.*"id":"([^"]+)".*/\1/' <<<"$TASK_OUT")

t_begin "quickstart: the task is accepted right after create (202, its id by sed)"
ulid_ok "$SB" || t_err "SB is not a ULID: '${SB:0:200}'"
ulid_ok "$T" || t_err "the seeds' sed did not yield a task id from: ${TASK_OUT:0:300}"
BODY=$TASK_OUT
expect_json .status running && expect_json .agent opencode &&
	expect_json .sandbox_id "$SB" &&
	expect_json .events_url "/v1/sandboxes/$SB/tasks/$T/events"
t_end

t_begin "quickstart: the live event stream runs to a done event"
events "$SB" "$T" "$IT_TMP/qs.sse"
grep -q '^event: done$' "$IT_TMP/qs.sse" ||
	t_err "no done event; stream: $(head -c 600 "$IT_TMP/qs.sse")"
why=$(ids_contiguous "$IT_TMP/qs.sse" 0) || t_err "event ids: $why"
first=$(ev_table "$IT_TMP/qs.sse" | head -n 1)
[[ $first == $'0\tstatus\t{"phase":"starting"}' ]] || t_err "event 0 is '$first'"
types=$(ev_table "$IT_TMP/qs.sse" | cut -f2 | sort -u | tr '\n' ' ')
for ty in status message tool done; do
	[[ " $types" == *" $ty "* ]] || t_err "no $ty event (types: $types)"
done
ev_table "$IT_TMP/qs.sse" | grep -qP '\tstatus\t\{"phase":"agent_running"\}' ||
	t_err "no agent_running phase"
ev_table "$IT_TMP/qs.sse" | grep -qP '\ttool\t.*"path":"src/App\.jsx"' ||
	t_err "no tool event naming src/App.jsx"
grep -q $'^: ' "$IT_TMP/qs.sse" && note "(a heartbeat arrived)"
t_end

t_begin "quickstart: the result says what happened"
wait_task "$SB" "$T" 60
expect_json .status succeeded && expect_json .id "$T" &&
	expect_jq '.files_changed | index("src/App.jsx") != null' 'src/App.jsx in files_changed' &&
	expect_jq '.agent_message_final | length > 0' 'a final agent message' &&
	expect_jq '.checkpoint_id | test("^[0-9a-f]{40}$")' 'a checkpoint id' &&
	expect_json .tokens.input 1200 && expect_json .tokens.output 340 &&
	expect_json .tokens.total 1640 && expect_json .tokens.cost 0.0123 &&
	expect_json .preview_status_after ready && expect_json .app_healthy true &&
	expect_jq '.duration_ms >= 0' 'duration_ms' &&
	expect_jq '.finished_at | test("Z$")' 'finished_at'
# The done event carries the same result.
done_data=$(ev_table "$IT_TMP/qs.sse" | awk -F'\t' '$2=="done"{print $3}')
[[ $(jq -r .checkpoint_id <<<"$done_data") == $(j .checkpoint_id) ]] ||
	t_err "the done event's result differs from GET: $done_data"
t_end

t_begin "quickstart: the app shows the change through its preview URL"
ok=
for ((i = 0; i < 40; i++)); do
	page=$(curl -s --max-time 5 -H "Host: s-$SB-3000.preview.localhost" \
		"http://127.0.0.1:$EDGE_PORT/src/App.jsx")
	if grep -q 'Todo list' <<<"$page" && grep -q localStorage <<<"$page"; then
		ok=1
		break
	fi
	sleep 0.5
done
[[ -n $ok ]] || t_err "the preview's src/App.jsx does not show the todo list: ${page:0:300}"
ws_file "$SB" src/App.jsx | grep -q 'Todo list' || t_err "the workspace's App.jsx was not changed"
t_end

t_begin "the checkpoint is a private ref: HEAD and the branch did not move"
repo=$DATA/workspaces/$SB/workspace/app
ck=$(j .checkpoint_id)
git -C "$repo" -c safe.directory='*' show-ref | grep -q "$ck refs/sandboxd/checkpoints/$T" ||
	t_err "no refs/sandboxd/checkpoints/$T -> $ck: $(git -C "$repo" -c safe.directory='*' show-ref 2>&1 | head -n 5)"
[[ $(git -C "$repo" -c safe.directory='*' log --format=%s -1 HEAD 2>/dev/null) == *baseline* ]] ||
	t_err "HEAD moved: $(git -C "$repo" -c safe.directory='*' log --oneline -3 2>&1)"
t_end

t_begin "a finished task's events replay to the end, the same bytes"
events "$SB" "$T" "$IT_TMP/qs2.sse"
cmp -s "$IT_TMP/qs.sse" <(grep -v '^: ' "$IT_TMP/qs.sse" | cat) || true
diff <(grep -v '^: ' "$IT_TMP/qs.sse") "$IT_TMP/qs2.sse" >/dev/null ||
	t_err "the replay differs from the live stream"
hdr=$(curl -s -D - -o /dev/null --max-time 10 -H "$AUTH" "$API/v1/sandboxes/$SB/tasks/$T/events")
grep -qi '^content-type: text/event-stream' <<<"$hdr" || t_err "content-type: $(grep -i content-type <<<"$hdr")"
grep -qi '^cache-control: no-cache' <<<"$hdr" || t_err "no Cache-Control: no-cache"
t_end

t_begin "resume: Last-Event-ID and ?since= give exactly the events after N"
n=$(ev_table "$IT_TMP/qs2.sse" | wc -l)
k=$((n / 2))
events "$SB" "$T" "$IT_TMP/r1.sse" -H "Last-Event-ID: $k"
why=$(ids_contiguous "$IT_TMP/r1.sse" $((k + 1))) || t_err "Last-Event-ID $k: $why"
diff <(ev_table "$IT_TMP/qs2.sse" | awk -F'\t' -v k=$k '$1>k') <(ev_table "$IT_TMP/r1.sse") >/dev/null ||
	t_err "Last-Event-ID $k: not the tail of the stream"
events "$SB" "$T" "$IT_TMP/r2.sse" -G -d "since=$k" -H "Last-Event-ID: 0"
cmp -s "$IT_TMP/r1.sse" "$IT_TMP/r2.sse" || t_err "?since=$k (over a Last-Event-ID) differs"
events "$SB" "$T" "$IT_TMP/r3.sse" -G -d "since=$((n - 1))"
[[ ! -s $IT_TMP/r3.sse ]] || t_err "since the last id: expected nothing, got $(head -c 200 "$IT_TMP/r3.sse")"
t_end

t_begin "the history lists the task"
api GET "/v1/sandboxes/$SB/tasks"
expect_status 200 && expect_json '.tasks[0].id' "$T" &&
	expect_json '.tasks[0].status' succeeded && expect_json '.tasks[0].can_revert' true &&
	expect_jq '.tasks[0].agent_message | length > 0' 'agent_message'
t_end

# --- a second app for the rest: static preset, quick to start ----------------
create_app tasks '"runtime_preset":"static"'
create_sandbox "$APP_ID"
SB2=$SB_ID

t_begin "a live stream dropped midway resumes with every event exactly once"
submit "$SB2" '{"prompt":"[[fake:sleep=4]] work slowly"}'
T2=$TASK_ID
events "$SB2" "$T2" "$IT_TMP/d1.sse" --max-time 2
last=$(ev_table "$IT_TMP/d1.sse" | tail -n 1 | cut -f1)
[[ $last =~ ^[0-9]+$ ]] || t_err "nothing arrived in the first 2 s: $(head -c 300 "$IT_TMP/d1.sse")"
grep -q '^event: done' "$IT_TMP/d1.sse" && t_err "the task ended too early for this test"
# A cut can leave a partial event: keep whole ones.
ev_table "$IT_TMP/d1.sse" >"$IT_TMP/d1.tab"
events "$SB2" "$T2" "$IT_TMP/d2.sse" -H "Last-Event-ID: $last"
cat "$IT_TMP/d1.tab" <(ev_table "$IT_TMP/d2.sse") >"$IT_TMP/d.tab"
events "$SB2" "$T2" "$IT_TMP/dall.sse"
diff "$IT_TMP/d.tab" <(ev_table "$IT_TMP/dall.sse") >/dev/null ||
	t_err "first part + resumed part != the whole stream: $(diff "$IT_TMP/d.tab" <(ev_table "$IT_TMP/dall.sse") | head -n 5)"
n=$(grep -c 'working' "$IT_TMP/d.tab")
((n >= 3)) || t_err "expected the agent's periodic messages, got $n"
t_end

t_begin "twenty subscribers of one live task get the same whole stream"
submit "$SB2" '{"prompt":"[[fake:lines=200]] [[fake:interval_ms=5]]"}'
T3=$TASK_ID
pids=()
for ((i = 0; i < 20; i++)); do
	events "$SB2" "$T3" "$IT_TMP/m$i.sse" &
	pids+=($!)
done
wait "${pids[@]}"
for ((i = 0; i < 20; i++)); do
	cmp -s <(grep -v '^: ' "$IT_TMP/m0.sse") <(grep -v '^: ' "$IT_TMP/m$i.sse") ||
		{ t_err "subscriber $i got a different stream"; break; }
done
c=$(ev_table "$IT_TMP/m0.sse" | grep -c $'\tmessage\t.*line [0-9]* t=')
[[ $c == 200 ]] || t_err "expected 200 line messages, got $c"
why=$(ids_contiguous "$IT_TMP/m0.sse" 0) || t_err "ids: $why"
t_end

t_begin "a quiet stream gets a heartbeat comment after 15 s"
submit "$SB2" '{"prompt":"[[fake:quiet=17]]"}'
events "$SB2" "$TASK_ID" "$IT_TMP/hb.sse"
grep -q '^: keep-alive$' "$IT_TMP/hb.sse" ||
	t_err "no heartbeat during 17 quiet seconds: $(head -c 400 "$IT_TMP/hb.sse")"
grep -q '^event: done' "$IT_TMP/hb.sse" || t_err "no done event"
t_end

t_begin "a second task while one runs is refused (409 task_in_progress)"
submit "$SB2" '{"prompt":"[[fake:sleep=30]] long"}'
T4=$TASK_ID
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"another"}'
expect_status 409 && expect_envelope task_in_progress
api GET "/v1/sandboxes/$SB2"
expect_json .active_task_id "$T4"
t_end

t_begin "cancel stops the agent's whole process group"
sleep 1
pid_before=$(docker exec "$SB_CONTAINER" pgrep -f fake_agent.py | head -n1)
[[ -n $pid_before ]] || t_err "the fake agent is not running in the container"
api POST "/v1/sandboxes/$SB2/tasks/$T4/cancel"
expect_status 200 && expect_json .id "$T4"
wait_task "$SB2" "$T4" 20
expect_json .status cancelled && expect_json .failure_reason cancelled
left=$(docker exec "$SB_CONTAINER" pgrep -f 'fake_agent.py' || true)
[[ -z $left ]] || t_err "agent processes left after cancel: $left"
events "$SB2" "$T4" "$IT_TMP/c.sse"
grep -q '^event: done' "$IT_TMP/c.sse" || t_err "no done event after cancel"
api POST "/v1/sandboxes/$SB2/tasks/$T4/cancel"
expect_status 200 && expect_json .status cancelled
t_end

t_begin "a timeout ends the task as agent_timeout"
submit "$SB2" '{"prompt":"[[fake:sleep=30]] [[fake:ignore-term]]","timeout_s":2}'
T5=$TASK_ID
wait_task "$SB2" "$T5" 30
expect_json .status failed && expect_json .failure_reason agent_timeout &&
	expect_jq '.error_message | test("timeout")' 'a message naming the timeout'
t_end

t_begin "revert restores the files the task changed"
before=$(ws_file "$SB2" index.html | sha256sum)
submit "$SB2" '{"prompt":"[[fake:write=new/file.txt]] [[fake:write=index.html]] [[fake:content=changed]]"}'
T6=$TASK_ID
wait_task "$SB2" "$T6" 30
expect_json .status succeeded &&
	expect_jq '.files_changed | sort == ["index.html","new/file.txt"]' 'files_changed = index.html, new/file.txt'
[[ $(ws_file "$SB2" new/file.txt) == changed ]] || t_err "the task's file was not written"
api POST "/v1/sandboxes/$SB2/tasks/$T6/revert"
expect_status 200 && expect_json .status reverted
[[ ! -e $DATA/workspaces/$SB2/workspace/app/new/file.txt ]] || t_err "new/file.txt survived the revert"
[[ $(ws_file "$SB2" index.html | sha256sum) == "$before" ]] || t_err "index.html was not restored"
t_end

t_begin "a task on a stopped sandbox wakes it first"
api POST "/v1/sandboxes/$SB2/stop"
expect_status 200
submit "$SB2" '{"prompt":"[[fake:write=woken.txt]]"}'
wait_task "$SB2" "$TASK_ID" 60
expect_json .status succeeded
[[ $(sandbox_status "$SB2") == running ]] || t_err "the sandbox is not running"
t_end

t_begin "stopping the sandbox during a task fails it as sandbox_stopped"
submit "$SB2" '{"prompt":"[[fake:sleep=60]]"}'
T7=$TASK_ID
sleep 1.5
api POST "/v1/sandboxes/$SB2/stop"
expect_status 200
wait_task "$SB2" "$T7" 30
expect_json .status failed && expect_json .failure_reason sandbox_stopped
events "$SB2" "$T7" "$IT_TMP/s.sse"
why=$(ids_contiguous "$IT_TMP/s.sse" 0) || t_err "ids: $why"
t_end

t_begin "the claude-code driver: its stream becomes the same events"
submit "$SB2" '{"prompt":"[[fake:write=claude.txt]]","agent":"claude-code","model":"claude-sonnet-4-5"}'
T8=$TASK_ID
wait_task "$SB2" "$T8" 60
expect_json .status succeeded && expect_json .agent claude-code &&
	expect_jq '.files_changed | index("claude.txt") != null' 'claude.txt changed' &&
	expect_jq '.tokens.cost > 0' 'a cost'
events "$SB2" "$T8" "$IT_TMP/cl.sse"
ev_table "$IT_TMP/cl.sse" | grep -qP '\tstatus\t\{"phase":"model"' || t_err "no model status event"
ev_table "$IT_TMP/cl.sse" | grep -qP '\ttool\t.*claude\.txt' || t_err "no tool event for claude.txt"
log=$DATA/workspaces/$SB2/.sandboxd/tasks/$T8/agent.log
argv=$(grep -m1 fake_argv "$log")
jq -e '.fake_argv | index("--append-system-prompt") != null and index("--model") != null' <<<"$argv" >/dev/null ||
	t_err "claude's argv lacks the system prompt or model: ${argv:0:300}"
# Earlier tasks in this sandbox were OpenCode's: nothing of Claude's to continue.
jq -e '.fake_argv | index("--continue") == null' <<<"$argv" >/dev/null ||
	t_err "claude's first task continues a session: ${argv:0:300}"
submit "$SB2" '{"prompt":"[[fake:write=claude2.txt]]","agent":"claude-code"}'
wait_task "$SB2" "$TASK_ID" 60
argv=$(grep -m1 fake_argv "$DATA/workspaces/$SB2/.sandboxd/tasks/$TASK_ID/agent.log")
jq -e '.fake_argv | index("--continue") != null' <<<"$argv" >/dev/null ||
	t_err "claude's second task does not continue its session: ${argv:0:300}"
jq -e '.fake_argv | map(select(test("0.0.0.0:3000") and test("sandbox.yaml"))) | length == 1' <<<"$argv" >/dev/null ||
	t_err "the system prompt does not name the port and sandbox.yaml"
t_end

t_begin "an agent error ends the task as agent_error with its message"
submit "$SB2" '{"prompt":"[[fake:error]]"}'
wait_task "$SB2" "$TASK_ID" 30
expect_json .status failed && expect_json .failure_reason agent_error &&
	expect_jq '.error_message | test("fake provider error")' 'the provider message'
t_end

t_begin "kill -9 of the daemon mid-task: after a restart the task completes, events whole"
submit "$SB2" '{"prompt":"[[fake:sleep=5]] [[fake:write=after-kill.txt]]"}'
T9=$TASK_ID
sleep 2
kill9_daemon
sleep 1
restart_daemon
wait_task "$SB2" "$T9" 40
expect_json .status succeeded &&
	expect_jq '.files_changed | index("after-kill.txt") != null' 'after-kill.txt changed'
events "$SB2" "$T9" "$IT_TMP/k.sse"
why=$(ids_contiguous "$IT_TMP/k.sse" 0) || t_err "ids: $why"
for ((i = 1; i <= 5; i++)); do
	c=$(ev_table "$IT_TMP/k.sse" | grep -c "working.* $i\"")
	[[ $c == 1 ]] || t_err "message 'working… $i' appears $c times"
done
t_end

t_begin "a task that ends while the daemon is down is finished at the next start"
submit "$SB2" '{"prompt":"[[fake:sleep=1]] [[fake:write=while-down.txt]]"}'
T10=$TASK_ID
steps=$DATA/workspaces/$SB2/.sandboxd/tasks/$T10/steps
wait_until 30 test -s "$steps" || t_err "the supervisor did not get the task"
kill9_daemon
wait_until 30 grep -q '^end' "$steps" ||
	t_err "the supervisor did not finish the task on its own: $(cat "$steps" 2>&1)"
restart_daemon
wait_task "$SB2" "$T10" 20
expect_json .status succeeded &&
	expect_jq '.files_changed == ["while-down.txt"]' 'files_changed = while-down.txt'
events "$SB2" "$T10" "$IT_TMP/w.sse"
why=$(ids_contiguous "$IT_TMP/w.sse" 0) || t_err "ids: $why"
ev_table "$IT_TMP/w.sse" | grep -q $'\tmessage\t.*working' || t_err "the agent's messages are missing"
t_end

t_begin "bad input: envelope errors, nothing started"
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":""}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"   "}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":42}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","agent":"codex"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","timeout_s":-1}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","timeout_s":86401}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","timeout_s":99999999999999999999}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","timeout_s":"10"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" "{\"prompt\":\"x\",\"model\":\"$(printf 'm%.0s' {1..201})\"}"
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","model":"--help"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x","continue":"yes"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB2/tasks" 'not json'
expect_status 400 && expect_envelope invalid_request
api GET "/v1/sandboxes/$SB2/tasks/not-a-ulid"
expect_status 400
api GET "/v1/sandboxes/$SB2/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV"
expect_status 404 && expect_envelope not_found
api GET "/v1/sandboxes/$SB2/tasks/$T/events"
expect_status 404
api GET "/v1/sandboxes/$SB2/tasks/$T9/events?since=abc"
expect_status 400 && expect_envelope invalid_request
api_as "other-token-xyz" GET "/v1/sandboxes/$SB2/tasks"
expect_status 401
api GET "/v1/sandboxes/$SB2/tasks"
expect_jq '[.tasks[] | select(.status == "running")] | length == 0' 'no task left running'
t_end

t_begin "a task on a deleted sandbox is 404; its tasks are kept in the trash and gone once purged"
api DELETE "/v1/sandboxes/$SB2"
expect_status 204
TRASH_ID=$(header Sandboxd-Trash-Id)
api POST "/v1/sandboxes/$SB2/tasks" '{"prompt":"x"}'
expect_status 404 && expect_envelope not_found
api GET "/v1/sandboxes/$SB2/tasks/$T9"
expect_status 404
[[ -e $DATA/tasks/$T9.events ]] || t_err "the event log of a trashed sandbox's task is gone before the purge"
api DELETE "/v1/trash/$TRASH_ID"
expect_status 204
[[ ! -e $DATA/tasks/$T9.events ]] || t_err "the event log of a purged sandbox's task is left"
t_end

t_begin "an agent killed for memory ends the task as oom_killed"
stop_daemon
new_data_dir
TOKEN=$IT_TOKEN
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_MEMORY_MB=192 ||
	bail "the daemon did not start"
create_app oom '"runtime_preset":"static"'
create_sandbox "$APP_ID"
submit "$SB_ID" '{"prompt":"[[fake:oom]]"}'
wait_task "$SB_ID" "$TASK_ID" 60
expect_json .status failed && expect_json .failure_reason oom_killed
t_end

finish
