#!/usr/bin/env bash
# Export, the model list, images in prompts, a task's spend.
#
# - GET /v1/agents lists each agent's models; a model behind a provider
#   with no stored credential is usable:false with a reason, and turns
#   usable once a key is stored; the free model is usable without one.
# - An image attached to a task goes through the REAL OpenCode of the
#   image to the (fake) provider: its request log shows an image part.
#   A file that is no image is a 400 naming it, five images or one over
#   5 MiB a 413.  The task lists its images; its done event, the task
#   and the list carry the proxy's spend.
# - GET /v1/apps/{id}/export streams a zip of the app's files (the file
#   the test wrote, not node_modules, .venv, a symlink to /etc/passwd, a
#   FIFO, nor .git unless ?git=true), while the sandbox runs and once it
#   is stopped; another tenant gets 404; `sandboxd app export` writes
#   NAME.zip and -o FILE.  Twelve stalled downloads (more than the API's
#   threads) leave the API answering and the daemon's memory bounded
#   (both printed: time of a full-speed 20 MiB export, RSS before/after).
#
# Nothing leaves the machine: the providers are the fake one on 127.0.0.1.
. "$(dirname "$0")/lib.sh"
need_docker

OKEY=sk-oc-real-$RANDOM$RANDOM$RANDOM$RANDOM
OTHER=tok-other-$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
start_fake_provider --expect-key "$OKEY"
PROXY_PORT=$(free_port)
start_daemon SANDBOXD_API_TOKENS="it=$IT_TOKEN,other=$OTHER" \
	SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" \
	SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "no gateway for the sandbox network: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen: $(grep -i proxy "$DAEMON_ERR")"
export SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN XDG_CONFIG_HOME=$IT_TMP/xdg

# model AGENT ID: the model object of the last GET /v1/agents.
model() { jq -c --arg a "$1" --arg m "$2" \
	'.agents[] | select(.id == $a) | .models[] | select(.id == $m)' <<<"$BODY"; }

t_begin "agents: models per agent, usable false without a credential, with a reason"
api GET /v1/agents
expect_status 200
m=$(model opencode openai/gpt-5)
jq -e '.usable == false and (.reason | test("no credential")) and .provider == "openai" and .label == "GPT-5"' \
	<<<"${m:-null}" >/dev/null || t_err "opencode openai/gpt-5: ${m:-absent}"
m=$(model opencode opencode/big-pickle)
jq -e '.usable == true and .free == true and .default == true and .provider == "zen" and .reason == null' \
	<<<"${m:-null}" >/dev/null || t_err "the free model: ${m:-absent}"
m=$(model claude-code claude-sonnet-4-5)
jq -e '.usable == false and .provider == "anthropic" and .label == "Claude Sonnet 4.5"' \
	<<<"${m:-null}" >/dev/null || t_err "claude-code claude-sonnet-4-5: ${m:-absent}"
[[ -z $(model claude-code openai/gpt-5) ]] || t_err "claude-code lists an OpenAI model"
n=$(jq '[.agents[] | select(.id == "opencode") | .models[] | select(.id | test("[0-9]{8}$"))] | length' <<<"$BODY")
[[ $n == 0 ]] || t_err "$n dated snapshots listed"
t_end

t_begin "agents: a stored key makes the provider's models usable; the CLI lists them"
api POST /v1/agents/opencode/api-key "{\"api_key\":\"$OKEY\"}"
expect_status 200
api GET /v1/agents
m=$(model opencode openai/gpt-5)
jq -e '.usable == true and .reason == null' <<<"${m:-null}" >/dev/null || t_err "after the key: ${m:-absent}"
m=$(model claude-code claude-sonnet-4-5)
jq -e '.usable == false' <<<"${m:-null}" >/dev/null || t_err "claude-code turned usable with OpenCode's key: $m"
out=$("$SANDBOXD_BIN" -q agents models opencode 2>&1) || t_err "agents models: $out"
grep -qx "openai/gpt-5" <<<"$out" || t_err "agents models -q lacks openai/gpt-5: $out"
grep -q "claude-sonnet-4-5" <<<"$out" && ! grep -q "anthropic/claude-sonnet-4-5" <<<"$out" &&
	t_err "agents models opencode lists claude-code's models: $out"
"$SANDBOXD_BIN" agents models nosuch >/dev/null 2>&1
rc=$?
((rc == 5)) || t_err "agents models nosuch: exit $rc, not 5"
t_end

create_app "Export Me!" '"runtime_preset":"static"' || bail "no app: $(short_body)"
APP=$APP_ID
create_sandbox "$APP" || bail "no sandbox: $(short_body)"
SB=$SB_ID
CT=$SB_CONTAINER

# A 1x1 PNG.
PNG=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==

t_begin "images: no image, bad base64, five images, one over 5 MiB: refused with a message"
api POST "/v1/sandboxes/$SB/tasks" "{\"prompt\":\"p\",\"images\":[{\"name\":\"shot.png\",\"data\":\"$(printf 'hello world' | base64)\"}]}"
expect_status 400 && expect_jq '.error.message | test("shot.png is not a PNG, JPEG, GIF or WebP")' "names the file"
api POST "/v1/sandboxes/$SB/tasks" '{"prompt":"p","images":[{"name":"a.png","data":"!!!"}]}'
expect_status 400 && expect_jq '.error.message | test("not base64")' "says not base64"
five=$(printf '{"name":"i.png","data":"%s"},' "$PNG" "$PNG" "$PNG" "$PNG" "$PNG")
api POST "/v1/sandboxes/$SB/tasks" "{\"prompt\":\"p\",\"images\":[${five%,}]}"
expect_status 413 && expect_jq '.error.message | test("at most 4 images")' "says at most 4"
python3 -c '
import base64, sys
png = base64.b64decode(sys.argv[1])
big = png + b"\0" * (5 * 1024 * 1024 + 1 - len(png))
sys.stdout.write("{\"prompt\":\"p\",\"images\":[{\"name\":\"big.png\",\"data\":\"%s\"}]}" % base64.b64encode(big).decode())
' "$PNG" >"$IT_TMP/big.json"
api POST "/v1/sandboxes/$SB/tasks" "@$IT_TMP/big.json"
expect_status 413 && expect_jq '.error.message | test("big.png is larger than 5 MiB")' "names the file and the limit"
api GET "/v1/sandboxes/$SB/tasks"
[[ $(j '.tasks | length') == 0 ]] || t_err "a refused request made a task: $(short_body)"
t_end

t_begin "images: a PNG reaches the provider through the real OpenCode; the task lists it"
submit "$SB" "{\"prompt\":\"What is in the picture? [[provider:write=seen.txt]]\",\"agent\":\"opencode\",\"model\":\"openai/fake-model\",\"images\":[{\"name\":\"my shot.png\",\"data\":\"data:image/png;base64,$PNG\"}]}"
expect_jq '.images | length == 1 and .[0].name == "1-my_shot.png" and .[0].bytes == 70' "the image listed"
expect_jq ".images[0].path == \"/home/sandbox/.sandboxd/attachments/$TASK_ID/1-my_shot.png\"" "its path in the sandbox"
wait_task "$SB" "$TASK_ID" 300
expect_json .status succeeded
expect_jq '.images | length == 1' "the task object lists the image"
expect_jq '.spend.requests >= 1 and (.spend.usd | type) == "number"' "the task carries the proxy's spend"
jq -e 'select(.images != null and (.images | index("image/png")))' "$PLOG" >/dev/null ||
	t_err "no provider request carried an image part: $(jq -c '{seq, kind, images}' "$PLOG" | tail -n 5)"
[[ -f $DATA/workspaces/$SB/.sandboxd/attachments/$TASK_ID/1-my_shot.png ]] ||
	t_err "the image is not in the sandbox's attachments"
[[ ! -e $DATA/workspaces/$SB/workspace/app/.sandboxd ]] || t_err "the app directory has a .sandboxd"
t_end

t_begin "spend: the done event and the task list carry the proxy's spend"
curl -sN --max-time 30 -H "Authorization: Bearer $TOKEN" \
	"$API_URL/v1/sandboxes/$SB/tasks/$TASK_ID/events" >"$IT_TMP/t.sse"
done_ev=$(awk '/^event: done$/{getline; sub(/^data: /,""); print; exit}' "$IT_TMP/t.sse")
jq -e '.spend.requests >= 1 and (.spend.usd | type) == "number" and .spend.tokens > 0' \
	<<<"${done_ev:-null}" >/dev/null || t_err "done event: $(jq -c .spend <<<"${done_ev:-null}")"
api GET "/v1/sandboxes/$SB/tasks"
expect_jq '.tasks[0].spend.requests >= 1 and (.tasks[0].images | length) == 1' \
	"the list has spend and images"
t_end

# What a sandbox may leave in its app directory.
api PUT "/v1/sandboxes/$SB/files?path=src/edited.js" 'export const edited = 42;'
[[ $STATUS == 200 || $STATUS == 201 ]] || bail "cannot write a file: $STATUS $(short_body)"
docker exec -u 1000 "$CT" sh -c 'cd /home/sandbox/workspace/app &&
	mkdir -p node_modules/left .venv/lib src/.next/cache sub/__pycache__ &&
	echo no >node_modules/left/index.js && echo no >.venv/lib/x.py &&
	echo no >src/.next/cache/c && echo no >sub/__pycache__/m.pyc && echo yes >sub/keep.txt &&
	ln -s /etc/passwd passwd-link && ln -s /etc etc-link && mkfifo a-fifo &&
	{ [ -d .git ] || git init -q .; }' ||
	bail "cannot plant the files in the sandbox"

# export PATH-SUFFIX OUT: GET the export into OUT; zip_names OUT: its names.
export_to() {
	curl -s -D "$IT_TMP/exp.h" -o "$2" -w '%{http_code}' --max-time 60 \
		-H "Authorization: Bearer ${3:-$TOKEN}" "$API_URL/v1/apps/$APP/$1"
}
zip_check() { # zip_check FILE: names one a line, or fails on a bad zip
	python3 - "$1" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip()
    if bad:
        sys.exit("bad CRC: " + bad)
    for n in z.namelist():
        print(n)
EOF
}
check_contents() { # check_contents NAMES WITH-GIT
	grep -qx "src/edited.js" <<<"$1" || t_err "src/edited.js missing: $(tr '\n' ' ' <<<"$1")"
	grep -qx "sub/keep.txt" <<<"$1" || t_err "sub/keep.txt missing"
	grep -qx "sandbox.yaml" <<<"$1" || t_err "sandbox.yaml missing"
	! grep -qE '^(node_modules|\.venv)/|__pycache__|\.next/cache|^\.sandboxd' <<<"$1" ||
		t_err "dependency folders or caches in it: $(grep -E 'node_modules|venv|pycache|cache' <<<"$1" | head -n 3)"
	! grep -qE '^(passwd-link|etc-link|a-fifo)|^etc/|passwd' <<<"$1" ||
		t_err "a symlink or FIFO was stored or followed: $(grep -E 'link|fifo|passwd' <<<"$1")"
	if [[ $2 == yes ]]; then
		grep -qx ".git/HEAD" <<<"$1" || t_err ".git/HEAD missing with git=true"
	else
		! grep -q '^\.git/' <<<"$1" || t_err ".git is in it without git=true"
	fi
}

t_begin "export: a running app's files as a streamed zip, without dependencies, symlinks or .git"
code=$(export_to export "$IT_TMP/run.zip")
[[ $code == 200 ]] || t_err "status $code: $(head -c 300 "$IT_TMP/run.zip")"
h=$(tr -d '\r' <"$IT_TMP/exp.h")
grep -qi '^content-type: application/zip$' <<<"$h" || t_err "content type: $(grep -i content-type <<<"$h")"
grep -qi '^content-disposition: attachment; filename="export-me.zip"$' <<<"$h" ||
	t_err "disposition: $(grep -i disposition <<<"$h")"
grep -qi '^transfer-encoding: chunked$' <<<"$h" || t_err "not streamed (chunked): $h"
names=$(zip_check "$IT_TMP/run.zip") || t_err "not a valid zip: $names"
check_contents "$names" no
got=$(python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("src/edited.js").decode())' "$IT_TMP/run.zip")
[[ $got == 'export const edited = 42;' ]] || t_err "src/edited.js holds: $got"
t_end

t_begin "export: ?git=true adds .git; export.zip is the same; a bad git is 400"
code=$(export_to "export.zip?git=true" "$IT_TMP/git.zip")
[[ $code == 200 ]] || t_err "status $code"
names=$(zip_check "$IT_TMP/git.zip") || t_err "not a valid zip: $names"
check_contents "$names" yes
code=$(export_to "export?git=maybe" "$IT_TMP/bad.zip")
[[ $code == 400 ]] || t_err "git=maybe: $code"
t_end

t_begin "export: another tenant's app is 404"
code=$(export_to export "$IT_TMP/other.zip" "$OTHER")
[[ $code == 404 ]] || t_err "the other tenant got $code"
jq -e '.error.code == "not_found"' "$IT_TMP/other.zip" >/dev/null || t_err "not the envelope: $(head -c 200 "$IT_TMP/other.zip")"
t_end

t_begin "export: the CLI writes NAME.zip, -o FILE, -o - to stdout"
mkdir -p "$IT_TMP/cwd"
out=$(cd "$IT_TMP/cwd" && "$SANDBOXD_BIN" app export "$APP" 2>&1) || t_err "app export: $out"
names=$(zip_check "$IT_TMP/cwd/export-me.zip") || t_err "NAME.zip is not a valid zip: $names"
check_contents "$names" no
[[ ! -e $IT_TMP/cwd/export-me.zip.part ]] || t_err "the .part file was left"
out=$("$SANDBOXD_BIN" app export "$APP" --git -o "$IT_TMP/cli.zip" 2>&1) || t_err "-o: $out"
names=$(zip_check "$IT_TMP/cli.zip") || t_err "-o FILE is not a valid zip: $names"
check_contents "$names" yes
"$SANDBOXD_BIN" app export "$APP" -o - >"$IT_TMP/stdout.zip" 2>"$IT_TMP/stdout.err" ||
	t_err "-o -: $(cat "$IT_TMP/stdout.err")"
zip_check "$IT_TMP/stdout.zip" >/dev/null || t_err "-o - wrote no valid zip"
t_end

rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$DAEMON_PID/status"; }
ms() { echo $(($(date +%s%N) / 1000000)); }

t_begin "export: slow clients hold no thread: 12 stalled downloads, the API still answers; memory stays bounded"
# 20 MiB that does not compress, in 200 files.
docker exec -u 1000 "$CT" sh -c 'mkdir -p /home/sandbox/workspace/app/blobs && cd /home/sandbox/workspace/app/blobs &&
	for i in $(seq 1 200); do head -c 102400 /dev/urandom >b$i.bin; done' >/dev/null ||
	t_err "cannot write the blobs"
t0=$(ms)
code=$(export_to export "$IT_TMP/big.zip")
t1=$(ms)
size=$(stat -c %s "$IT_TMP/big.zip")
note "a ${size}-byte export took $((t1 - t0)) ms at full speed"
# The names first, then grep: grep -q on the pipe would stop reading at
# its match, and zip_check's SIGPIPE fail the pipeline under pipefail.
names=$(zip_check "$IT_TMP/big.zip") || names=
[[ $code == 200 ]] && grep -qx "blobs/b200.bin" <<<"$names" || t_err "the big export: $code"
rss0=$(rss_kib)
pids=()
for i in $(seq 1 12); do # more than the API's 8 threads
	curl -s --limit-rate 20k --max-time 60 -o /dev/null -H "Authorization: Bearer $TOKEN" 		"$API_URL/v1/apps/$APP/export" &
	pids+=($!)
done
wait_until 20 grep -c "export:" /dev/null # a beat for them to start
sleep 3
t0=$(ms)
api GET /v1/agents
t1=$(ms)
rss1=$(rss_kib)
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
note "with 12 stalled exports: GET /v1/agents in $((t1 - t0)) ms; daemon RSS ${rss0} KiB -> ${rss1} KiB"
expect_status 200
(((t1 - t0) < 3000)) || t_err "the API took $((t1 - t0)) ms while exports stalled"
(((rss1 - rss0) < 32768)) || t_err "RSS grew by $((rss1 - rss0)) KiB with 12 stalled exports"
t_end

t_begin "export: a stopped sandbox's app exports the same files"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
wait_sb "$SB" '.status == "stopped"' 60
code=$(export_to export "$IT_TMP/stopped.zip")
[[ $code == 200 ]] || t_err "status $code: $(head -c 300 "$IT_TMP/stopped.zip")"
names=$(zip_check "$IT_TMP/stopped.zip") || t_err "not a valid zip: $names"
check_contents "$names" no
t_end

t_begin "export: an app without a sandbox is 409 with a message"
create_app bare
APP=$APP_ID
code=$(export_to export "$IT_TMP/bare.zip")
[[ $code == 409 ]] || t_err "status $code"
jq -e '.error.message | test("no sandbox")' "$IT_TMP/bare.zip" >/dev/null || t_err "$(head -c 200 "$IT_TMP/bare.zip")"
t_end

finish
