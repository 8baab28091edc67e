#!/usr/bin/env bash
# The command-line client against the real daemon: the quickstart with
# the CLI alone (plain pipes, --json, -q), `new` and `task run --follow`
# with the scripted fake agent (succeeded, failed, cancelled, timed out:
# each its own exit status), a follow that survives a daemon restart
# (Last-Event-ID), every error path as one line with its exit status (no
# daemon, no token, a bad token, an unknown id, 409, 413, usage), an
# agent key typed at an echo-off prompt that appears in no argv, no
# output and no pane, and a real terminal (tmux): a spinner and colour,
# a task followed live to its end, and Ctrl-C on --follow leaving the
# task running with the command to re-attach.
. "$(dirname "$0")/lib.sh"
need_test_image
command -v tmux >/dev/null || bail "tmux is not installed"

# The subscription sign-in's token endpoint (tests/fake-provider/oauth.py).
OCODE=code-$RANDOM$RANDOM$RANDOM
start_fake_oauth "$OCODE" "sk-ant-oat01-cli-$RANDOM$RANDOM"

# A private git server on loopback (tests/git-server) with one repository.
GIT_TOKEN=gt-$RANDOM$RANDOM$RANDOM
GROOT=$IT_TMP/git
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com -c init.defaultBranch=main)
"${G[@]}" init -q "$IT_TMP/seed" && printf 'hello from the remote\n' >"$IT_TMP/seed/index.html" &&
	"${G[@]}" -C "$IT_TMP/seed" add -A && "${G[@]}" -C "$IT_TMP/seed" commit -q -m first &&
	mkdir -p "$GROOT" && "${G[@]}" clone -q --bare "$IT_TMP/seed" "$GROOT/app.git" ||
	bail "cannot make the test repository"
GPORT=$(free_port)
python3 "$IT_ROOT/tests/git-server/server.py" --root "$GROOT" --port "$GPORT" \
	--log "$IT_TMP/git.log" --token "$GIT_TOKEN" >/dev/null 2>&1 &
GIT_PID=$!
kill_git() { kill "$GIT_PID" 2>/dev/null; }
IT_CLEANUP_HOOKS+=(kill_git)
wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$GPORT" 2>/dev/null || bail "the git server did not come up"

EDGE_PORT=$(free_port)
API_PORT=$(free_port)
boot() {
	start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" HTTP_PORT=$EDGE_PORT \
		SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_API_ADDR=127.0.0.1:$API_PORT \
		SANDBOXD_CLAUDE_TOKEN_URL="http://127.0.0.1:$OPORT/v1/oauth/token" \
		SANDBOXD_GIT_ALLOW_HTTP=1 -SANDBOXD_API_TOKENS ||
		bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
}
boot
[[ -n $FIRST_TOKEN ]] || bail "no first-start token printed"

export SANDBOXD_API=$API_URL
export SANDBOXD_TOKEN=$FIRST_TOKEN
export XDG_CONFIG_HOME=$IT_TMP/xdg # never the real user's config
unset NO_COLOR
sbd() { "$SANDBOXD_BIN" "$@"; }

# run OUT ERR CMD…: the client's stdout, stderr and exit status (RC)
run() {
	local out=$1 err=$2
	shift 2
	"$SANDBOXD_BIN" "$@" >"$out" 2>"$err" </dev/null
	RC=$?
}

# one_error RC CODE CMD…: exit status RC, no stdout, one stderr line
# "error: … (CODE)"
one_error() {
	local want=$1 code=$2
	shift 2
	run "$IT_TMP/e.out" "$IT_TMP/e.err" "$@"
	local lines
	lines=$(wc -l <"$IT_TMP/e.err")
	((RC == want)) || t_err "$*: exit $RC, want $want; stderr: $(cat "$IT_TMP/e.err")"
	[[ $lines == 1 ]] || t_err "$*: $lines stderr lines, want 1: $(cat "$IT_TMP/e.err")"
	grep -qE "^error: .+ \($code\)\$" "$IT_TMP/e.err" ||
		t_err "$*: stderr is not 'error: … ($code)': $(cat "$IT_TMP/e.err")"
	[[ ! -s $IT_TMP/e.out ]] || t_err "$*: stdout not empty: $(head -c 200 "$IT_TMP/e.out")"
}

# --- the quickstart, CLI only ------------------------------------------------

t_begin "quickstart: app create -q and sandbox create -q give the bare ids"
APP=$(sbd app create todo --preset react-vite -q)
ulid_ok "$APP" || t_err "app create -q printed '$APP'"
SB=$(sbd sandbox create "$APP" -q)
ulid_ok "$SB" || t_err "sandbox create -q printed '$SB'"
[[ $(sbd sandbox show "$SB" --json | jq -r .status) == running ]] ||
	t_err "sandbox show --json: not running: $(sbd sandbox show "$SB" --json)"
t_end

t_begin "quickstart: apps lists it (table, -q, --json); sandbox show --json is the API's object"
out=$(sbd apps)
grep -qE "^ID +NAME +PRESET" <<<"$out" || t_err "no header in: $out"
grep -qE "^$APP +todo +react-vite +$SB" <<<"$out" || t_err "no row for the app in: $out"
[[ $(sbd apps -q) == *"$APP"* ]] || t_err "apps -q lacks $APP"
[[ $(sbd apps --json | jq -r '.apps[0].id') == "$APP" ]] || t_err "apps --json: $(sbd apps --json)"
# --json is the API's body byte for byte.
curl -s -H "Authorization: Bearer $SANDBOXD_TOKEN" "$API_URL/v1/apps/$APP" >"$IT_TMP/curl.json"
sbd app show "$APP" --json >"$IT_TMP/cli.json"
cmp -s "$IT_TMP/curl.json" "$IT_TMP/cli.json" ||
	t_err "app show --json differs from the API's body: $(cat "$IT_TMP/cli.json")"
t_end

t_begin "quickstart: the preview becomes ready; url prints it; files and logs read"
for ((i = 0; i < 120; i++)); do
	[[ $(sbd sandbox show "$SB" --json | jq -r .preview.status) == ready ]] && break
	sleep 0.25
done
url=$(sbd sandbox url "$SB")
[[ $url == "http://s-${SB,,}-3000.preview.localhost:$EDGE_PORT"* ]] || t_err "url: '$url'"
sbd sandbox files "$SB" --recursive | grep -qE '^file +[0-9]+ +package\.json$' ||
	t_err "files --recursive lacks package.json: $(sbd sandbox files "$SB" --recursive | head)"
sbd sandbox files "$SB" --json | jq -e '.entries | length > 0' >/dev/null || t_err "files --json"
sbd sandbox cat "$SB" package.json | jq -e .name >/dev/null || t_err "cat package.json is not JSON"
run "$IT_TMP/logs" "$IT_TMP/logs.err" sandbox logs "$SB" web --tail 20
((RC == 0)) || t_err "logs exit $RC: $(cat "$IT_TMP/logs.err")"
printf 'hello from the cli\n' | sbd sandbox put "$SB" notes/hello.txt -q || t_err "put failed"
[[ $(sbd sandbox cat "$SB" notes/hello.txt) == "hello from the cli" ]] || t_err "put/cat round trip"
t_end

t_begin "quickstart: stop, then start --wait answers once the preview is ready"
[[ $(sbd sandbox stop "$SB" --json | jq -r .status) == stopped ]] || t_err "stop"
sbd sandbox start "$SB" --wait --json >"$IT_TMP/start.json" || t_err "start --wait: exit $?"
[[ $(wc -l <"$IT_TMP/start.json") == 1 ]] || t_err "start --wait --json: not one object: $(cat "$IT_TMP/start.json")"
[[ $(jq -r '.status + " " + .preview.status' "$IT_TMP/start.json") == "running ready" ]] ||
	t_err "start --wait: $(cat "$IT_TMP/start.json")"
t_end

t_begin "sandbox logs --follow prints the lines that come, each once"
"$SANDBOXD_BIN" sandbox logs "$SB" web --follow >"$IT_TMP/lf.out" 2>"$IT_TMP/lf.err" &
LPID=$!
sleep 2
n0=$(wc -l <"$IT_TMP/lf.out")
curl -s -o /dev/null -XPOST -H "Authorization: Bearer $SANDBOXD_TOKEN" \
	"$API_URL/v1/sandboxes/$SB/processes/web/restart"
wait_until 20 bash -c "(( \$(wc -l <'$IT_TMP/lf.out') > $n0 ))" || t_err "no new line after a restart of web"
sleep 3
kill "$LPID" 2>/dev/null
wait "$LPID" 2>/dev/null
curl -s -H "Authorization: Bearer $SANDBOXD_TOKEN" \
	"$API_URL/v1/sandboxes/$SB/processes/web/logs?tail=5000" | jq -r '.lines[]' >"$IT_TMP/lf.api"
diff "$IT_TMP/lf.api" "$IT_TMP/lf.out" >/dev/null ||
	t_err "followed lines differ from the log: $(diff "$IT_TMP/lf.api" "$IT_TMP/lf.out" | head -n 8)"
t_end

# --- tasks ---------------------------------------------------------------------

t_begin "task run --follow: live output, the outcome, exit 0"
run "$IT_TMP/run.out" "$IT_TMP/run.err" task run "$SB" \
	"Add a todo list with a delete button on each row" --agent opencode --follow
((RC == 0)) || t_err "exit $RC: $(tail -n 5 "$IT_TMP/run.out") $(cat "$IT_TMP/run.err")"
grep -q "• agent running" "$IT_TMP/run.out" || t_err "no phase line: $(head -n 20 "$IT_TMP/run.out")"
grep -qE "✓ (write|edit) src/App\.jsx" "$IT_TMP/run.out" || t_err "no tool line naming the file: $(cat "$IT_TMP/run.out")"
grep -q "✓ task succeeded" "$IT_TMP/run.out" || t_err "no outcome line"
grep -q "files changed: .*src/App.jsx" "$IT_TMP/run.out" || t_err "no files changed line"
grep -q "tokens: 1640 (input 1200, output 340), cost \$0.0123" "$IT_TMP/run.out" || t_err "no token use: $(grep tokens "$IT_TMP/run.out")"
grep -q $'\033' "$IT_TMP/run.out" && t_err "escape sequences in piped output"
T=$(sbd task list "$SB" -q | head -n 1)
ulid_ok "$T" || t_err "task list -q: '$T'"
[[ $(sbd task show "$SB" "$T" --json | jq -r .status) == succeeded ]] || t_err "task show --json"
t_end

t_begin "task follow --json replays the events, one JSON object a line, done last"
run "$IT_TMP/ev.json" "$IT_TMP/ev.err" task follow "$SB" "$T" --json
((RC == 0)) || t_err "exit $RC"
jq -e . "$IT_TMP/ev.json" >/dev/null 2>&1 || t_err "a line is not JSON"
[[ $(head -n 1 "$IT_TMP/ev.json" | jq -r .phase) == starting ]] || t_err "first: $(head -n 1 "$IT_TMP/ev.json")"
[[ $(tail -n 1 "$IT_TMP/ev.json" | jq -r .status) == succeeded ]] || t_err "last: $(tail -n 1 "$IT_TMP/ev.json")"
n_api=$(curl -sN --max-time 30 -H "Authorization: Bearer $SANDBOXD_TOKEN" \
	"$API_URL/v1/sandboxes/$SB/tasks/$T/events" | grep -c '^data: ')
[[ $(wc -l <"$IT_TMP/ev.json") == "$n_api" ]] || t_err "$(wc -l <"$IT_TMP/ev.json") lines, the API streams $n_api events"
[[ $(sbd task follow "$SB" "$T" --json --since 2 | wc -l) == $((n_api - 3)) ]] || t_err "--since 2"
t_end

t_begin "exit statuses: failed 10, cancelled 11, timed out 12"
run "$IT_TMP/f.out" "$IT_TMP/f.err" task run "$SB" "[[fake:error]]" --follow
((RC == 10)) || t_err "failed task: exit $RC"
grep -q "agent error: " "$IT_TMP/f.out" || t_err "no agent error line: $(cat "$IT_TMP/f.out")"
TC=$(sbd task run "$SB" "[[fake:sleep=30]]" -q)
ulid_ok "$TC" || t_err "task run -q: '$TC'"
sleep 1
[[ $(sbd task cancel "$SB" "$TC" --json | jq -r .status) =~ ^(cancelling|cancelled)$ ]] || t_err "cancel"
run "$IT_TMP/c.out" "$IT_TMP/c.err" task follow "$SB" "$TC"
((RC == 11)) || t_err "cancelled task: exit $RC: $(tail -n 3 "$IT_TMP/c.out")"
run "$IT_TMP/t.out" "$IT_TMP/t.err" task run "$SB" "[[fake:sleep=30]] [[fake:ignore-term]]" --timeout 2 --follow
((RC == 12)) || t_err "timed-out task: exit $RC: $(tail -n 3 "$IT_TMP/t.out")"
grep -q "agent_timeout" "$IT_TMP/t.out" || t_err "no agent_timeout in the outcome"
t_end

t_begin "a follow survives a daemon restart: resumed with Last-Event-ID, no event twice"
TR=$(sbd task run "$SB" "[[fake:sleep=8]]" -q)
"$SANDBOXD_BIN" task follow "$SB" "$TR" --json >"$IT_TMP/r.json" 2>"$IT_TMP/r.err" &
FPID=$!
sleep 3
stop_daemon
sleep 1
boot
wait "$FPID"
RC=$?
((RC == 0)) || t_err "exit $RC: $(cat "$IT_TMP/r.err")"
grep -q "resuming" "$IT_TMP/r.err" && t_err "a note on stderr without a terminal: $(cat "$IT_TMP/r.err")"
[[ $(grep -c '"phase":"starting"' "$IT_TMP/r.json") == 1 ]] || t_err "the start came $(grep -c '"phase":"starting"' "$IT_TMP/r.json") times"
[[ $(tail -n 1 "$IT_TMP/r.json" | jq -r .status) == succeeded ]] || t_err "last: $(tail -n 1 "$IT_TMP/r.json")"
n_api=$(curl -sN --max-time 30 -H "Authorization: Bearer $SANDBOXD_TOKEN" \
	"$API_URL/v1/sandboxes/$SB/tasks/$TR/events" | grep -c '^data: ')
[[ $(wc -l <"$IT_TMP/r.json") == "$n_api" ]] || t_err "$(wc -l <"$IT_TMP/r.json") events followed, the task has $n_api"
t_end

t_begin "new: app, sandbox, task, live output and the preview URL, exit 0"
run "$IT_TMP/new.out" "$IT_TMP/new.err" new "Add a todo list" --preset static --name quick
((RC == 0)) || t_err "exit $RC: $(cat "$IT_TMP/new.out" "$IT_TMP/new.err")"
grep -q "✓ task succeeded" "$IT_TMP/new.out" || t_err "no outcome: $(cat "$IT_TMP/new.out")"
grep -qE "^preview: http://s-[0-9a-z]{26}-[0-9]+\.preview\.localhost:$EDGE_PORT" "$IT_TMP/new.out" ||
	t_err "no preview line: $(tail -n 3 "$IT_TMP/new.out")"
run "$IT_TMP/newq.out" "$IT_TMP/newq.err" new "[[fake:write=a.txt]]" --preset static -q
((RC == 0)) || t_err "new -q: exit $RC"
[[ $(wc -l <"$IT_TMP/newq.out") == 3 ]] || t_err "new -q: $(cat "$IT_TMP/newq.out")"
while read -r id; do ulid_ok "$id" || t_err "new -q printed '$id'"; done <"$IT_TMP/newq.out"
t_end

# --- git, settings, credentials, sign-in ---------------------------------------

t_begin "git status, diff, commit and push of the app's repository"
printf 'hello from the cli\n' | sbd sandbox put "$SB" notes/git.txt -q || t_err "put"
run "$IT_TMP/g.out" "$IT_TMP/g.err" git status "$APP"
((RC == 0)) || t_err "status: exit $RC: $(cat "$IT_TMP/g.err")"
grep -qE '^branch .+, HEAD [0-9a-f]{40}, changed$' "$IT_TMP/g.out" || t_err "status: $(head -n 3 "$IT_TMP/g.out")"
grep -qE '^untracked +no +notes/git\.txt$' "$IT_TMP/g.out" || t_err "status lacks notes/git.txt: $(cat "$IT_TMP/g.out")"
sbd git diff "$APP" | grep -q '^+hello from the cli$' || t_err "diff lacks the new line"
[[ $(sbd git diff "$APP" --json | jq -r '.files | length') -ge 1 ]] || t_err "diff --json"
sbd git commit "$APP" -m "from the cli" | grep -qE '^committed [0-9a-f]{40}$' || t_err "commit"
[[ $(sbd git commit "$APP" -m again) == "nothing committed (no_changes)" ]] || t_err "second commit"
[[ $(sbd git status "$APP" --json | jq -r .clean) == true ]] || t_err "not clean after the commit"
one_error 1 no_repo_url git push "$APP"
t_end

t_begin "app create --git with a credential (token on stdin), then git push to a new branch"
CIDG=$(printf '%s\n' "$GIT_TOKEN" | sbd git credential add local --host "127.0.0.1:$GPORT" --username importer -q)
ulid_ok "$CIDG" || t_err "credential add -q: '$CIDG'"
GAPP=$(sbd app create imported --git "http://127.0.0.1:$GPORT/app.git" --credential "$CIDG" --no-import -q)
ulid_ok "$GAPP" || t_err "app create --git -q: '$GAPP'"
GSB=$(sbd sandbox create "$GAPP" -q)
ulid_ok "$GSB" || t_err "sandbox create of the import: '$GSB'"
[[ $(sbd sandbox cat "$GSB" index.html) == "hello from the remote" ]] || t_err "the clone's file"
printf 'from the cli\n' | sbd sandbox put "$GSB" cli.txt -q
SHA=$(sbd git commit "$GAPP" -m "cli change" -q)
[[ $SHA =~ ^[0-9a-f]{40}$ ]] || t_err "commit -q: '$SHA'"
out=$(sbd git push "$GAPP" --branch cli/feature)
[[ $out == "pushed branch cli/feature to http://127.0.0.1:$GPORT/app.git" ]] || t_err "push: '$out'"
[[ $(git --git-dir="$GROOT/app.git" rev-parse cli/feature 2>&1) == "$SHA" ]] || t_err "the remote's branch is not the commit"
one_error 6 refuses_default_branch git push "$GAPP" --branch main
grep -q -- "$GIT_TOKEN" "$DAEMON_OUT" "$DAEMON_ERR" && t_err "the git token is in the daemon's output"
sbd app delete "$GAPP" --yes -q || t_err "delete the import"
t_end

t_begin "settings get and set (a dotted key), null clears"
sbd settings set agents.default_models.opencode openai/gpt-cli -q || t_err "set"
[[ $(sbd settings get agents.default_models.opencode) == openai/gpt-cli ]] || t_err "get: $(sbd settings get agents.default_models.opencode)"
sbd settings | grep -q '^agents.default_models  {"opencode":"openai/gpt-cli"' || t_err "settings: $(sbd settings)"
sbd settings set agents.default_models.opencode null -q || t_err "set null"
[[ $(sbd settings get agents.default_models.opencode) == null ]] || t_err "not cleared"
one_error 1 invalid_request settings set agents.bogus 1
t_end

t_begin "git credential add (token on stdin), list, delete"
GTOK=ghp_cli$RANDOM$RANDOM$RANDOM
CID=$(printf '%s\n' "$GTOK" | sbd git credential add gh --host github.com --username bot -q)
ulid_ok "$CID" || t_err "add -q: '$CID'"
sbd git credential list | grep -qE "^$CID +gh +github\.com +bot$" || t_err "list: $(sbd git credential list)"
sbd git credential list --json | grep -q -- "$GTOK" && t_err "the token is in the list"
sbd git credential delete "$CID" -q || t_err "delete"
sbd git credential list -q | grep -qx "$CID" && t_err "still listed"
[[ $(sbd git credential list -q) == "$CIDG" ]] || t_err "the other credential went too: $(sbd git credential list)"
t_end

t_begin "agent login claude-code: prints the authorize URL, reads the code, signs in"
printf '%s\n' "$OCODE" | "$SANDBOXD_BIN" agent login claude-code >"$IT_TMP/o.out" 2>"$IT_TMP/o.err"
RC=$?
((RC == 0)) || t_err "exit $RC: $(cat "$IT_TMP/o.out" "$IT_TMP/o.err")"
grep -qE '^https://.+/oauth/authorize\?code=true&client_id=' "$IT_TMP/o.out" || t_err "no URL: $(cat "$IT_TMP/o.out")"
grep -q "claude-code: signed in" "$IT_TMP/o.out" || t_err "no confirmation: $(cat "$IT_TMP/o.out")"
sbd agents | grep -qE '^claude-code +connected +oauth +tenant' || t_err "agents: $(sbd agents)"
sbd agent disconnect claude-code -q || t_err "disconnect"
sbd agents | grep -qE '^claude-code +not_connected' || t_err "after disconnect: $(sbd agents)"
t_end

# --- errors --------------------------------------------------------------------

t_begin "errors: one line and the exit status"
one_error 3 unreachable --api "http://127.0.0.1:$(free_port)" apps
SANDBOXD_TOKEN=sk_wrong one_error 4 unauthorized apps
one_error 5 not_found app show 01ARZ3NDEKTSV4RRFFQ69G5FAV
one_error 6 conflict sandbox create "$APP"
one_error 2 usage app show
one_error 2 usage apps --bogus
one_error 2 usage sandbox
one_error 2 usage sandbox bogus
one_error 1 invalid_request app show not-an-id
# 413: a file over the API's 16 MiB.
head -c $((17 << 20)) /dev/zero >"$IT_TMP/big"
"$SANDBOXD_BIN" sandbox put "$SB" big.bin <"$IT_TMP/big" >"$IT_TMP/e.out" 2>"$IT_TMP/e.err"
RC=$?
((RC == 7)) || t_err "put 17 MiB: exit $RC: $(cat "$IT_TMP/e.err")"
grep -qE '^error: .+ \(payload_too_large\)$' "$IT_TMP/e.err" || t_err "put 17 MiB: $(cat "$IT_TMP/e.err")"
t_end

t_begin "no token on the host: the error says how to get one"
env -u SANDBOXD_TOKEN "$SANDBOXD_BIN" apps >/dev/null 2>"$IT_TMP/e.err"
RC=$?
((RC == 4)) || t_err "exit $RC"
grep -q "sandboxd login" "$IT_TMP/e.err" && grep -q "sandboxd token" "$IT_TMP/e.err" ||
	t_err "no hint: $(cat "$IT_TMP/e.err")"
t_end

t_begin "login stores the API and the token in a 0600 file that later calls use"
printf '%s\n' "$SANDBOXD_TOKEN" | env -u SANDBOXD_TOKEN "$SANDBOXD_BIN" login >"$IT_TMP/l.out" 2>&1 ||
	t_err "login: $(cat "$IT_TMP/l.out")"
CONF=$XDG_CONFIG_HOME/sandboxd/config
[[ $(stat -c %a "$CONF" 2>/dev/null) == 600 ]] || t_err "config mode $(stat -c %a "$CONF" 2>&1)"
[[ $(env -u SANDBOXD_TOKEN -u SANDBOXD_API "$SANDBOXD_BIN" apps -q | head -n 1) =~ ^[0-9A-Z]{26}$ ]] ||
	t_err "apps with the stored config"
t_end

t_begin "app delete refuses without a terminal or --yes, and says what is lost"
"$SANDBOXD_BIN" app delete "$APP" </dev/null >/dev/null 2>"$IT_TMP/e.err"
RC=$?
((RC == 2)) || t_err "exit $RC"
grep -q "only copy" "$IT_TMP/e.err" || t_err "no warning: $(cat "$IT_TMP/e.err")"
[[ $(sbd app show "$APP" --json | jq -r .id) == "$APP" ]] || t_err "the app went"
t_end

t_begin "completion bash is a script bash accepts"
sbd completion bash >"$IT_TMP/comp.bash"
bash -n "$IT_TMP/comp.bash" || t_err "bash -n fails"
words=$(bash -c ". '$IT_TMP/comp.bash'; COMP_WORDS=(sandboxd sandbox cr); COMP_CWORD=2; _sandboxd; echo \"\${COMPREPLY[*]}\"")
[[ $words == create ]] || t_err "sandbox cr<TAB>: '$words'"
t_end

# --- a real terminal -------------------------------------------------------------

TM="sbxcli$$"
tmux_cleanup() { tmux kill-session -t "$TM" 2>/dev/null; }
IT_CLEANUP_HOOKS+=(tmux_cleanup)
tmux new-session -d -s "$TM" -x 160 -y 50 \
	"env -u NO_COLOR SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$SANDBOXD_TOKEN XDG_CONFIG_HOME=$XDG_CONFIG_HOME PS1='$ ' bash --norc --noprofile"
SB_BIN=$SANDBOXD_BIN
pane() { tmux capture-pane -p -t "$TM" "$@"; }

t_begin "terminal: a spinner while the task runs, colour, the task followed to its end"
tmux send-keys -t "$TM" "clear; $SB_BIN task run $SB '[[fake:sleep=4]]' --follow; echo EXIT=\$?" Enter
spun=0
for ((i = 0; i < 100; i++)); do
	pane | grep -qE '[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ' && spun=1
	pane | grep -qE "EXIT=[0-9]" && break
	sleep 0.1
done
((spun)) || t_err "no spinner seen"
wait_until 30 bash -c "tmux capture-pane -p -t $TM | grep -qE EXIT=[0-9]" || t_err "the follow did not end"
pane | grep -q "EXIT=0" || t_err "exit: $(pane | tail -n 5)"
pane | grep -q "✓ task succeeded" || t_err "no outcome in the pane"
pane -e | grep -q $'\033\\[' || t_err "no colour in the pane"
t_end

t_begin "terminal: Ctrl-C on --follow leaves the task running and says how to re-attach"
tmux send-keys -t "$TM" "clear; $SB_BIN task run $SB '[[fake:sleep=30]]' --follow; echo EXIT=\$?" Enter
wait_until 20 bash -c "tmux capture-pane -p -t $TM | grep -q 'working'" || t_err "the task did not start: $(pane)"
tmux send-keys -t "$TM" C-c
wait_until 10 bash -c "tmux capture-pane -p -t $TM | grep -qE EXIT=[0-9]" || t_err "Ctrl-C did not end it"
pane | grep -q "EXIT=130" || t_err "exit: $(pane | tail -n 5)"
pane | grep -q "keeps running" || t_err "no note: $(pane | tail -n 5)"
TK=$(sbd task list "$SB" -q | head -n 1)
pane | grep -q "re-attach with: sandboxd task follow $SB $TK" || t_err "no re-attach command: $(pane | tail -n 5)"
[[ $(sbd task show "$SB" "$TK" --json | jq -r .status) == running ]] || t_err "the task does not run on"
sbd task cancel "$SB" "$TK" -q >/dev/null
sbd task follow "$SB" "$TK" -q
t_end

t_begin "terminal: agent key at an echo-off prompt; the key in no argv, pane or output"
KEY=sk-oc-secret-$RANDOM$RANDOM$RANDOM
tmux send-keys -t "$TM" "clear; $SB_BIN agent key opencode; echo EXIT=\$?" Enter
wait_until 10 bash -c "tmux capture-pane -p -t $TM | grep -q 'API key (not shown):'" || t_err "no prompt: $(pane)"
tmux send-keys -t "$TM" -l "$KEY"
sleep 0.3
# Every process's argv, read by bash itself (a grep would carry the key
# in its own argv); the prompt is waiting for Enter right now.
n_procs=0
for f in /proc/[0-9]*/cmdline; do
	IFS= read -r -d '' argv0 <"$f" 2>/dev/null || continue
	cmd=$(tr '\0' ' ' <"$f" 2>/dev/null)
	n_procs=$((n_procs + 1))
	[[ $cmd == *"$KEY"* ]] && t_err "the key is in the argv of ${f#/proc/}: $cmd"
done
((n_procs > 10)) || t_err "read only $n_procs argv"
pgrep -f "agent key opencode" >/dev/null || t_err "the prompting client is not running"
pane | grep -q -- "$KEY" && t_err "the typed key is echoed"
tmux send-keys -t "$TM" Enter
wait_until 10 bash -c "tmux capture-pane -p -t $TM | grep -qE EXIT=[0-9]" || t_err "agent key did not end"
pane | grep -q "EXIT=0" || t_err "exit: $(pane | tail -n 5)"
pane | grep -q "opencode: connected" || t_err "no confirmation: $(pane | tail -n 5)"
pane -S - | grep -q -- "$KEY" && t_err "the key is in the pane"
[[ $(sbd agents --json | jq -r '.agents[] | select(.id=="opencode") | .key_hint') == "…${KEY: -4}" ]] ||
	t_err "key_hint: $(sbd agents --json)"
grep -q -- "$KEY" "$DAEMON_ERR" "$DAEMON_OUT" && t_err "the key is in the daemon's output"
# And from stdin: also nowhere in the output.
printf '%s' "$KEY-2" | "$SANDBOXD_BIN" agent key claude-code >"$IT_TMP/k.out" 2>&1 || t_err "key from stdin: $(cat "$IT_TMP/k.out")"
grep -q -- "$KEY" "$IT_TMP/k.out" && t_err "the key is echoed"
t_end

sbd app delete "$APP" --yes -q || true
finish
