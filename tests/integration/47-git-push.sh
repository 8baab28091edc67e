#!/usr/bin/env bash
# Push through the API against a real git server on loopback
# (tests/git-server: `git http-backend` with basic auth that requires the
# token; plain http, let through by SANDBOXD_GIT_ALLOW_HTTP=1): the
# seeds' commit and push land a new branch with the agent's files; main,
# master and the import branch are refused in any case; a wrong token is
# auth_failed, an unreachable remote unreachable, a credential for
# another host is never sent; the repository stays intact and no token
# shows in an answer or the daemon's logs; the credentials API checks
# its input and its tenant.
. "$(dirname "$0")/lib.sh"
need_test_image

GIT_TOKEN=ghp-test-$RANDOM$RANDOM$RANDOM
ROOT=$IT_TMP/remote
SRV_LOG=$IT_TMP/git-server.log
mkdir -p "$ROOT"
git init -q --bare "$ROOT/app.git"
GPORT=$(free_port)
python3 "$IT_ROOT/tests/git-server/server.py" --root "$ROOT" --port "$GPORT" \
	--token "$GIT_TOKEN" --log "$SRV_LOG" >/dev/null 2>&1 &
SRV_PID=$!
stop_git_server() { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
IT_CLEANUP_HOOKS+=(stop_git_server)
wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$GPORT" 2>/dev/null ||
	bail "the git server did not come up"
REMOTE=http://127.0.0.1:$GPORT/app.git

start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1 SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true \
	SANDBOXD_API_TOKENS=a=tok-a-tenant,b=tok-b-tenant ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=tok-a-tenant
export API=$API_URL
export AUTH="Authorization: Bearer $TOKEN"
G=(git -c safe.directory='*')

# clone_branch BRANCH DIR: a fresh clone of the remote's BRANCH.
clone_branch() {
	rm -rf "$2"
	git clone -q -b "$1" "http://u:$GIT_TOKEN@127.0.0.1:$GPORT/app.git" "$2" 2>/dev/null
}

t_begin "credentials: create answers metadata and token_set, never the token"
api POST /v1/git-credentials "{\"name\":\"local\",\"host\":\"127.0.0.1:$GPORT\",\"username\":\"agent\",\"token\":\"$GIT_TOKEN\"}"
expect_status 201 && expect_json .name local && expect_json .host "127.0.0.1:$GPORT" &&
	expect_json .username agent && expect_json .token_set true
CRED=$(j .id)
ulid_ok "$CRED" || t_err "credential id $CRED"
[[ $BODY != *"$GIT_TOKEN"* ]] || t_err "the token is in the answer"
api GET /v1/git-credentials
expect_status 200 && expect_jq '.credentials | length == 1' 'one credential' &&
	expect_jq '.credentials[0] | has("token") | not' 'no token field'
[[ $BODY != *"$GIT_TOKEN"* ]] || t_err "the token is in the list"
t_end

t_begin "credentials: bad input is a 400, a duplicate name a 409"
for b in '{}' '{"name":"x","host":"h.example"}' '{"name":"x","token":"t"}' \
	'{"name":"","host":"h.example","token":"t"}' \
	"{\"name\":\"$(head -c 65 /dev/zero | tr '\0' n)\",\"host\":\"h.example\",\"token\":\"t\"}" \
	'{"name":"x","host":"h.example","token":""}' \
	'{"name":"x","host":"h.example","token":"a b"}' \
	'{"name":"x","host":"h.example","token":"a\nb"}' \
	'{"name":"x","host":"h.example","token":"a\r"}' \
	'{"name":"x","host":"h.example","token":"a\u0000b"}' \
	"{\"name\":\"x\",\"host\":\"h.example\",\"token\":\"$(head -c 4097 /dev/zero | tr '\0' t)\"}" \
	'{"name":"x","host":"https://h.example","token":"t"}' \
	'{"name":"x","host":"h.example:0","token":"t"}' \
	'{"name":"x","host":"h example","token":"t"}' \
	'{"name":"x","host":"h.example","token":"t","extra":1}' \
	'{"name":"x\u0001","host":"h.example","token":"t"}' \
	'{"name":"x","host":"h.example","username":"a:b","token":"t"}' \
	'{"name":7,"host":"h.example","token":"t"}'; do
	api POST /v1/git-credentials "$b"
	[[ $STATUS == 400 ]] || t_err "$b: $STATUS $(short_body)"
done
api POST /v1/git-credentials "{\"name\":\"local\",\"host\":\"example.com\",\"token\":\"t\"}"
expect_status 409
t_end

t_begin "credentials: another tenant sees none and cannot delete"
api_as tok-b-tenant GET /v1/git-credentials
expect_status 200 && expect_jq '.credentials | length == 0' 'none for b'
api_as tok-b-tenant DELETE "/v1/git-credentials/$CRED"
expect_status 404
api_as tok-b-tenant POST /v1/apps "{\"name\":\"b\",\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$CRED\"}}"
expect_status 404
t_end

t_begin "apps: git settings are checked and shown without a token"
for g in '{"repo_url":"ftp://h.example/r.git"}' '{"repo_url":"https://u:p@h.example/r.git"}' \
	'{"repo_url":"https:///r.git"}' '{"repo_url":"https://h.example/a b"}' \
	'{"repo_url":"https://h.example/r.git","branch":"-x"}' \
	'{"repo_url":"https://h.example/r.git","branch":"a..b"}' \
	'{"repo_url":"https://h.example/r.git","credential_id":"nope"}' '{"branch":"x"}' '"x"'; do
	api POST /v1/apps "{\"name\":\"bad\",\"git\":$g}"
	[[ $STATUS == 400 ]] || t_err "$g: $STATUS $(short_body)"
done
api POST /v1/apps '{"name":"x","git":{"repo_url":"https://h.example/r.git","credential_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}}'
expect_status 404
create_app "Todo App" "\"runtime_preset\":\"static\",\"git\":{\"repo_url\":\"$REMOTE\",\"branch\":\"trunk\",\"credential_id\":\"$CRED\"}"
APP=$APP_ID
expect_json .git.repo_url "$REMOTE" && expect_json .git.branch trunk &&
	expect_json .git.credential_id "$CRED"
api GET "/v1/apps/$APP"
expect_json .git.branch trunk
t_end

t_begin "push without a sandbox or a repository: a reason, not an error"
api POST "/v1/apps/$APP/git/push"
expect_status 200 && expect_json .pushed false && expect_json .reason no_sandbox
create_sandbox "$APP"
SB=$SB_ID
REPO=$DATA/workspaces/$SB/workspace/app
rm -rf "$REPO/.git"
api POST "/v1/apps/$APP/git/push"
expect_status 200 && expect_json .reason not_a_git_repo
t_end

t_begin "a task's work, committed with the seeds' command"
submit "$SB" '{"prompt":"Add a todo list","agent":"opencode"}'
wait_task "$SB" "$TASK_ID" 60
expect_json .status succeeded
printf 'pushed by the api\n' >"$REPO/agent-notes.txt"
chown 1000:1000 "$REPO/agent-notes.txt"
BODY=$(curl -s -XPOST $API/v1/apps/$APP/git/commit -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"message":"todo list, first pass"}')
expect_json .committed true
HEAD=$("${G[@]}" -C "$REPO" rev-parse HEAD)
t_end

t_begin "the seeds' push to main is refused with a clear 409"
BODY=$(curl -s -w '\n%{http_code}' -XPOST $API/v1/apps/$APP/git/push -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"branch":"main"}')
STATUS=${BODY##*$'\n'}
BODY=${BODY%$'\n'*}
expect_status 409 && expect_envelope refuses_default_branch &&
	expect_jq '.error.message | contains("new branch")' 'the message says why'
for b in MAIN master Master trunk TRUNK; do
	api POST "/v1/apps/$APP/git/push" "{\"branch\":\"$b\"}"
	[[ $STATUS == 409 && $(j .error.code) == refuses_default_branch ]] ||
		t_err "$b: $STATUS $(short_body)"
done
for b in '"-x"' '"a..b"' '"a b"' '"x/"' '"x.lock"' '7'; do
	api POST "/v1/apps/$APP/git/push" "{\"branch\":$b}"
	[[ $STATUS == 400 ]] || t_err "$b: $STATUS $(short_body)"
done
[[ -z $(git --git-dir="$ROOT/app.git" for-each-ref) ]] || t_err "the remote got a ref"
t_end

t_begin "the seeds' push to feature/x lands the agent's files on the remote"
BODY=$(curl -s -XPOST $API/v1/apps/$APP/git/push -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"branch":"feature/x"}')
expect_json .pushed true && expect_json .branch feature/x &&
	expect_json .remote_url "$REMOTE" && expect_json .head "$HEAD"
clone_branch feature/x "$IT_TMP/c1" || t_err "cannot clone feature/x"
[[ $(cat "$IT_TMP/c1/agent-notes.txt" 2>/dev/null) == 'pushed by the api' ]] ||
	t_err "agent-notes.txt is not on the remote"
[[ $("${G[@]}" -C "$IT_TMP/c1" rev-parse HEAD) == "$HEAD" ]] || t_err "the remote's tip is not HEAD"
grep -q "POST /app.git/git-receive-pack user=agent 200" "$SRV_LOG" ||
	t_err "the stored username was not used: $(tail -n 3 "$SRV_LOG")"
t_end

t_begin "the default branch is sandboxd/<slug>-<shortsha>, and a sleeping sandbox pushes"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
api POST "/v1/apps/$APP/git/push"
DEF=sandboxd/todo-app-${HEAD:0:7}
expect_status 200 && expect_json .pushed true && expect_json .branch "$DEF"
clone_branch "$DEF" "$IT_TMP/c2" || t_err "cannot clone $DEF"
[[ -f $IT_TMP/c2/agent-notes.txt ]] || t_err "agent-notes.txt is not on $DEF"
t_end

t_begin "never a force push: a diverged remote branch is non_fast_forward"
git -C "$IT_TMP/c1" -c user.name=o -c user.email=o@x commit -q --allow-empty -m other
git -C "$IT_TMP/c1" push -q origin HEAD:refs/heads/diverged 2>/dev/null
OTHER=$(git -C "$IT_TMP/c1" rev-parse HEAD)
api POST "/v1/apps/$APP/git/push" '{"branch":"diverged"}'
expect_status 200 && expect_json .pushed false && expect_json .reason non_fast_forward
[[ $(git --git-dir="$ROOT/app.git" rev-parse refs/heads/diverged) == "$OTHER" ]] ||
	t_err "the remote branch moved"
t_end

# set_remote URL CRED: point the app row at another remote/credential.
set_app_git() {
	stop_daemon
	sqlite3 "$DATA/state/sandboxd.db" "UPDATE app SET git_repo_url='$1', git_credential_id='$2' WHERE id='$APP'" ||
		t_err "cannot update the app row"
	start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1 SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_API_TOKENS=a=tok-a-tenant,b=tok-b-tenant ||
		bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
}

t_begin "a wrong token: auth_failed, the repository intact"
api POST /v1/git-credentials "{\"name\":\"wrong\",\"host\":\"127.0.0.1:$GPORT\",\"token\":\"wrong-token-123\"}"
WRONG=$(j .id)
api POST /v1/git-credentials "{\"name\":\"elsewhere\",\"host\":\"git.example.com\",\"token\":\"$GIT_TOKEN\"}"
ELSE=$(j .id)
set_app_git "$REMOTE" "$WRONG"
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/wrong"}'
expect_status 200 && expect_json .pushed false && expect_json .reason auth_failed
[[ $BODY != *wrong-token-123* ]] || t_err "the token is in the answer"
[[ $("${G[@]}" -C "$REPO" rev-parse HEAD) == "$HEAD" ]] || t_err "HEAD moved"
"${G[@]}" -C "$REPO" fsck >/dev/null 2>&1 || t_err "git fsck failed"
git --git-dir="$ROOT/app.git" rev-parse -q --verify refs/heads/feature/wrong >/dev/null &&
	t_err "feature/wrong exists on the remote"
t_end

t_begin "a credential for another host is never sent: the server sees no auth"
set_app_git "$REMOTE" "$ELSE"
: >"$SRV_LOG"
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/else"}'
expect_status 200 && expect_json .pushed false && expect_json .reason auth_failed
grep -q 'user=-' "$SRV_LOG" || t_err "the server saw no request"
! grep -v 'user=-' "$SRV_LOG" | grep -q . || t_err "credentials were sent: $(cat "$SRV_LOG")"
t_end

t_begin "an unreachable remote: unreachable, the repository intact"
set_app_git "http://127.0.0.1:$(free_port)/app.git" "$CRED"
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/gone"}'
expect_status 200 && expect_json .pushed false && expect_json .reason unreachable &&
	expect_jq '.message | length > 0' 'a message'
[[ $("${G[@]}" -C "$REPO" rev-parse HEAD) == "$HEAD" ]] || t_err "HEAD moved"
"${G[@]}" -C "$REPO" fsck >/dev/null 2>&1 || t_err "git fsck failed"
t_end

t_begin "no URL: no_repo_url; another tenant: 404"
create_app plain
api POST "/v1/apps/$APP_ID/git/push"
expect_status 200 && expect_json .pushed false && expect_json .reason no_repo_url
api_as tok-b-tenant POST "/v1/apps/$APP/git/push"
expect_status 404
t_end

t_begin "delete: 204, then gone; the token is in no log"
api DELETE "/v1/git-credentials/$WRONG"
expect_status 204
api DELETE "/v1/git-credentials/$WRONG"
expect_status 404
api GET /v1/git-credentials
expect_jq '[.credentials[].id] | index("'"$WRONG"'") == null' 'deleted'
for f in "$IT_TMP"/daemon.*.out "$IT_TMP"/daemon.*.err; do
	grep -q -e "$GIT_TOKEN" -e wrong-token-123 "$f" && t_err "a token in $(basename "$f")"
done
t_end

finish
