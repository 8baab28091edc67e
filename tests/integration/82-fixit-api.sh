#!/usr/bin/env bash
# The daemon's side of the fix-it loop (docs/api.md, "Sandboxes"): a real
# react-vite sandbox whose src/App.jsx gets a JSX syntax error through the
# files API shows problem.kind "compile_error" (with the file in its
# lines) once the preview asks Vite for the module, and problem null once
# the file is fixed; a dev script that exits makes the web process crash
# ("crashed", then "crashloop"); a frozen sandbox lists its processes
# "paused"; a reverted task says reverted_at and can_revert false, in the
# task and in the list; an import from an unreachable remote leaves a
# sandbox in error (status_reason import_failed, one sentence), a PATCH
# fixes the URL and a new create replaces it with a running one, the
# failed one gone with no container; the preview of a booting web process
# says "starting" in words; serve prints the console's address.
. "$(dirname "$0")/lib.sh"
need_test_image

# A public repository on the tests' git server (no token).
ROOT=$IT_TMP/remote
mkdir -p "$ROOT"
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com
	-c init.defaultBranch=main)
W=$IT_TMP/seed
"${G[@]}" init -q "$W"
printf '<h1>imported app</h1>\n' >"$W/index.html"
"${G[@]}" -C "$W" add -A && "${G[@]}" -C "$W" commit -q -m first
"${G[@]}" clone -q --bare "$W" "$ROOT/site.git"
GPORT=$(free_port)
python3 "$IT_ROOT/tests/git-server/server.py" --root "$ROOT" --port "$GPORT" \
	--log "$IT_TMP/git-server.log" >/dev/null 2>&1 &
GIT_SRV_PID=$!
IT_CLEANUP_HOOKS+=(stop_git_server)
wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$GPORT" 2>/dev/null ||
	bail "the git server did not come up"

# wait_ready SB SECS: until preview.status is ready; each "starting" seen
# on the way must say so in words, the probe's error apart (STARTING
# counts them).
STARTING=0
wait_ready() {
	local i st
	for ((i = 0; i < $2 * 4; i++)); do
		api GET "/v1/sandboxes/$1"
		st=$(j .preview.status)
		[[ $st == ready ]] && return 0
		if [[ $st == starting ]]; then
			STARTING=$((STARTING + 1))
			expect_jq '.preview.detail | test("^the (web process|sandbox) is starting$")' \
				'a detail in words while starting' || return 1
			expect_jq '(.preview.probe_error // "") | test("starting") | not' \
				'the probe error apart' || return 1
			[[ $(j .preview.probe_error) != null ]] && PROBE="probe_error: $(j .preview.probe_error)"
		fi
		sleep 0.25
	done
	t_err "not ready after $2 s: $(short_body)"
}

start_edge_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1 \
	SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true

t_begin "serve prints the console's address"
grep -qxF "Console: http://console.localhost:$EDGE_PORT/" "$DAEMON_OUT" ||
	t_err "no 'Console: http://console.localhost:$EDGE_PORT/' line: $(head -c 600 "$DAEMON_OUT")"
grep -q "Console setup code" "$DAEMON_OUT" || t_err "the setup code line is gone"
t_end

t_begin "a react-vite sandbox: its preview starts in words, then is ready with no problem"
create_app "Fixit" '"runtime_preset":"react-vite"' && create_sandbox "$APP_ID" '{}'
SB=$SB_ID
HOST=s-${SB,,}-3000.preview.localhost:$EDGE_PORT
expect_jq '.problem == null' 'no problem at creation'
wait_ready "$SB" 180
expect_jq '.problem == null' 'no problem once ready'
expect_jq '[.processes[] | select(.name == "web")] | length == 1' 'the web process listed'
t_end

APP_JSX=$(cat "$DATA/workspaces/$SB/workspace/app/src/App.jsx")

t_begin "a JSX syntax error, asked for through the preview: compile_error naming the file"
api PUT "/v1/sandboxes/$SB/files?path=src/App.jsx" 'export default function App() {
  return (
    <main>
      <h1>broken</h1
    </main>
  )
}
'
expect_status 200
# Vite only transforms (and so only reports) a module someone asks for.
found=
for ((i = 0; i < 120; i++)); do
	code=$(ecurl "$HOST" /src/App.jsx -o /dev/null -w '%{http_code}')
	api GET "/v1/sandboxes/$SB"
	if [[ $(j .problem.kind) == compile_error ]]; then found=1; break; fi
	sleep 0.25
done
[[ -n $found ]] || t_err "no compile_error (last module answer $code): $(short_body)"
note "compile_error after $((i / 4)).$((i % 4 * 25)) s of polling: $(j .problem.summary)"
note "its first lines: $(j '.problem.lines[:3] | join(" / ")')"
expect_json .problem.process web
expect_jq '.problem.lines | length > 0 and length <= 40' 'one to 40 lines'
expect_jq '[.problem.lines[] | select(test("App\\.jsx"))] | length > 0' 'the file named in the lines'
expect_jq '[.problem.lines[] | select(test("\u001b"))] | length == 0' 'no colour codes'
expect_jq '.problem.summary | length > 0 and (test("\n") | not)' 'a one-line summary'
expect_jq '.problem.since | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' 'since, RFC 3339'
SINCE=$(j .problem.since)
api GET "/v1/sandboxes/$SB"
expect_json .problem.since "$SINCE"
t_end

t_begin "the file fixed: the problem goes"
printf '%s\n' "$APP_JSX" >"$IT_TMP/App.jsx"
api PUT "/v1/sandboxes/$SB/files?path=src/App.jsx" "@$IT_TMP/App.jsx"
expect_status 200
gone=
for ((i = 0; i < 120; i++)); do
	code=$(ecurl "$HOST" /src/App.jsx -o /dev/null -w '%{http_code}')
	api GET "/v1/sandboxes/$SB"
	if [[ $(j .problem) == null ]]; then gone=1; break; fi
	sleep 0.25
done
[[ -n $gone ]] || t_err "the problem stayed (module answer $code): $(short_body)"
note "problem gone $((i / 4)).$((i % 4 * 25)) s after the fix"
[[ $code == 200 ]] || t_err "the fixed module answers $code"
t_end

t_begin "a dev script that exits: crashed, then crashloop with the last lines"
PKG=$(cat "$DATA/workspaces/$SB/workspace/app/package.json")
jq '.scripts.dev = "echo the dev server cannot start >&2; exit 3"' <<<"$PKG" >"$IT_TMP/package.json"
api PUT "/v1/sandboxes/$SB/files?path=package.json" "@$IT_TMP/package.json"
expect_status 200
api POST "/v1/sandboxes/$SB/processes/web/restart"
expect_status 200
wait_sb "$SB" '.problem.kind == "crashed" or .problem.kind == "crashloop"' 30
T0=$SECONDS
wait_sb "$SB" '.problem.kind == "crashloop"' 120
note "crashloop $((SECONDS - T0)) s after the first crash: $(j .problem.summary)"
expect_json .problem.process web
expect_jq '[.problem.lines[] | select(test("cannot start"))] | length > 0' 'the script'\''s output in the lines'
expect_jq '.problem.summary | length > 0' 'a summary'
t_end

t_begin "the dev script restored and the web restarted: no problem"
printf '%s\n' "$PKG" >"$IT_TMP/package.json"
api PUT "/v1/sandboxes/$SB/files?path=package.json" "@$IT_TMP/package.json"
api POST "/v1/sandboxes/$SB/processes/web/restart"
expect_status 200
wait_ready "$SB" 120
expect_jq '.problem == null' 'no problem once ready again'
((STARTING > 0)) || t_err "the preview was never seen starting"
note "preview seen starting $STARTING times (${PROBE:-no probe error seen})"
t_end

t_begin "a reverted task: reverted_at and can_revert false, in the task and the list"
submit "$SB" '{"prompt":"[[fake:write=notes.txt]] [[fake:content=hello]]"}'
T=$TASK_ID
wait_task "$SB" "$T" 120
expect_json .status succeeded && expect_json .can_revert true
expect_jq 'has("reverted_at") | not' 'no reverted_at before the revert'
api POST "/v1/sandboxes/$SB/tasks/$T/revert"
expect_status 200 && expect_json .status reverted
api GET "/v1/sandboxes/$SB/tasks/$T"
expect_json .can_revert false &&
	expect_jq '.reverted_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' 'reverted_at, RFC 3339'
api GET "/v1/sandboxes/$SB/tasks"
expect_jq ".tasks[] | select(.id == \"$T\") | .can_revert == false and (.reverted_at | length > 0)" \
	'the list shows the revert'
t_end

t_begin "frozen: the processes stay listed, paused"
api POST "/v1/sandboxes/$SB/freeze"
expect_status 200 && expect_json .frozen true
api GET "/v1/sandboxes/$SB"
expect_json .frozen true
expect_jq '(.processes | length > 0) and all(.processes[]; .state == "paused")' 'every process paused'
expect_jq '[.processes[] | select(.name == "web" and .kind == "web")] | length == 1' 'web among them'
api POST "/v1/sandboxes/$SB/start"
expect_status 200
wait_sb "$SB" '.frozen == false and all(.processes[]; .state != "paused")' 30
t_end

t_begin "an unreachable import: error, import_failed, one sentence"
create_app "Imported" "\"runtime_preset\":\"static\",\"git\":{\"repo_url\":\"http://127.0.0.1:$(free_port)/gone.git\"}"
IMP=$APP_ID
api POST "/v1/apps/$IMP/sandbox" '{}'
[[ $STATUS == 502 ]] || t_err "create: $STATUS $(short_body)"
expect_envelope git_import_failed
api GET "/v1/apps/$IMP"
BAD=$(j .current_sandbox_id)
api GET "/v1/sandboxes/$BAD"
expect_status 200 && expect_json .status error && expect_json .status_reason import_failed
expect_jq '.error_message | test("^[A-Z][^\n]*[.]$")' 'a sentence: a capital, one line, a full stop'
expect_jq '.error_message | test("[.] [A-Z]") | not' 'no second sentence run on'
note "error_message: $(j .error_message)"
[[ -z $(docker ps -aq --filter "label=sandboxd.sandbox=$BAD") ]] || t_err "a container is left for the failed sandbox"
t_end

t_begin "the URL fixed by PATCH, the import retried: running, the failed one gone"
api PATCH "/v1/apps/$IMP" "{\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/site.git\",\"branch\":\"main\"}}"
expect_status 200 && expect_json .git.repo_url "http://127.0.0.1:$GPORT/site.git"
api PATCH "/v1/apps/$IMP" '{"git":{"repo_url":"ftp://example.com/x.git"}}'
expect_status 400
api POST "/v1/apps/$IMP/sandbox" '{}'
expect_status 201 && expect_json .status running
NEW=$(j .id)
[[ $NEW != "$BAD" ]] || t_err "the same sandbox id came back"
api GET "/v1/sandboxes/$BAD"
expect_status 404
[[ -z $(docker ps -aq --filter "label=sandboxd.sandbox=$BAD") ]] || t_err "the failed sandbox's container is left"
[[ $(cat "$DATA/workspaces/$NEW/workspace/app/index.html" 2>/dev/null) == "<h1>imported app</h1>" ]] ||
	t_err "the import did not bring index.html"
t_end

finish
