#!/usr/bin/env bash
# The API the console needs, through curl against a real daemon: API
# tokens (list, make, replace, delete; operators only; a new token works
# and a deleted one fails at once; SANDBOXD_API_TOKENS' tokens and the
# last operator token stay); file entity tags and preconditions (a save
# refused with 412 and the current ETag when the agent wrote the file
# from inside the container meanwhile, create-only, malformed headers),
# moves (confined, never replacing, never through a link); a commit of
# chosen paths; any app given a remote by PATCH (and a real push to it),
# and cleared; the lifecycle setting (operators, persisted, the idle
# reaper uses a new threshold without a restart) and the status fields.
. "$(dirname "$0")/lib.sh"
need_docker

BOB=tok-bob-$RANDOM$RANDOM
GIT_TOKEN=ghp-test-$RANDOM$RANDOM$RANDOM
ROOT=$IT_TMP/remote
mkdir -p "$ROOT"
git init -q --bare "$ROOT/app.git"
start_git_server "$ROOT" "$GIT_TOKEN"

DAEMON_ARGS=(SANDBOXD_API_TOKENS="it=$IT_TOKEN,bob=$BOB" SANDBOXD_OPERATORS=it,ops2
	SANDBOXD_IDLE_THRESHOLD_SECONDS=3600 SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1
	SANDBOXD_GIT_ALLOW_HTTP=1 SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true)
start_daemon "${DAEMON_ARGS[@]}" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
G=(git -c safe.directory='*')
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
sha_file() { sha256sum "$1" | cut -d' ' -f1; }

# A sandbox nobody touches until the end: the idle reaper's witness.
t_begin "setup: an idle sandbox, and the sandbox the files and git cases use"
create_app idle '"runtime_preset":"static"' && create_sandbox "$APP_ID" ||
	bail "no idle sandbox: ${T_ERRS[*]}"
IDLE_SB=$SB_ID
IDLE_SINCE=$SECONDS
create_app console '"runtime_preset":"static"' && create_sandbox "$APP_ID" ||
	bail "no sandbox: ${T_ERRS[*]}"
APP=$APP_ID
SB=$SB_ID
C=$SB_CONTAINER
DIR=$DATA/workspaces/$SB/workspace/app
t_end

# --- API tokens -------------------------------------------------------------

t_begin "tokens: the list shows SANDBOXD_API_TOKENS' tokens, which is an operator's, never a secret"
api GET /v1/tokens
expect_status 200 &&
	expect_jq '[.tokens[] | "\(.name):\(.source):\(.operator):\(.created_at)"] == ["it:env:true:null","bob:env:false:null"]' \
		'it (operator) and bob, both env, no created_at'
[[ $BODY != *"$IT_TOKEN"* && $BODY != *"$BOB"* ]] || t_err "a token is in the list"
t_end

t_begin "tokens: a non-operator gets 403 operator_only on every call"
api_as "$BOB" GET /v1/tokens
expect_status 403 && expect_envelope operator_only
api_as "$BOB" POST /v1/tokens '{"name":"mine"}'
expect_status 403 && expect_envelope operator_only
api_as "$BOB" DELETE /v1/tokens/bob
expect_status 403 && expect_envelope operator_only
t_end

t_begin "tokens: a new token is shown once and works at once as its own tenant"
api POST /v1/tokens '{"name":"ci-bot"}'
expect_status 201 && expect_json .name ci-bot && expect_json .operator false &&
	expect_jq '.token | test("^sk_[A-Za-z0-9_-]{43}$")' 'an sk_ token' &&
	expect_jq '.created_at | test("^20[0-9-]+T[0-9:]+Z$")' 'an RFC 3339 created_at'
T1=$(j .token)
api_as "$T1" GET /v1/apps
expect_status 200 && expect_jq '.apps == []' "ci-bot's own (empty) tenant"
api GET /v1/tokens
expect_jq '[.tokens[] | select(.name == "ci-bot" and .source == "stored")] | length == 1' 'ci-bot stored'
[[ $BODY != *"$T1"* ]] || t_err "the new token is in the list"
! grep -qF "$T1" "$DAEMON_OUT" "$DAEMON_ERR" || t_err "the new token is in the daemon's output"
t_end

t_begin "tokens: making it again replaces it: the old one is refused at once"
api POST /v1/tokens '{"name":"ci-bot"}'
expect_status 201
T2=$(j .token)
[[ $T2 != "$T1" ]] || t_err "the same token twice"
api_as "$T1" GET /v1/apps
expect_status 401
api_as "$T2" GET /v1/apps
expect_status 200
t_end

t_begin "tokens: deleted, it is refused at once; a second delete is a 404"
api DELETE /v1/tokens/ci-bot
expect_status 204
api_as "$T2" GET /v1/apps
expect_status 401 && expect_envelope unauthorized
api DELETE /v1/tokens/ci-bot
expect_status 404 && expect_envelope not_found
t_end

t_begin "tokens: bad names are 400; SANDBOXD_API_TOKENS' names are 409"
for b in '{}' '{"name":""}' '{"name":"a b"}' '{"name":"a/b"}' '{"name":7}' \
	"{\"name\":\"$(head -c 64 /dev/zero | tr '\0' a)\"}"; do
	api POST /v1/tokens "$b"
	expect_status 400 && expect_envelope invalid_request
done
api DELETE '/v1/tokens/a%20b'
expect_status 400 && expect_envelope invalid_request
api POST /v1/tokens '{"name":"bob"}'
expect_status 409 && expect_envelope conflict
api DELETE /v1/tokens/bob
expect_status 409 && expect_envelope conflict
api_as "$BOB" GET /v1/apps
expect_status 200
t_end

t_begin "tokens: an operator's stored token can go while an env operator token stays"
api POST /v1/tokens '{"name":"ops2"}'
expect_status 201 && expect_json .operator true
OPS2=$(j .token)
api_as "$OPS2" GET /v1/tokens
expect_status 200
api DELETE /v1/tokens/ops2
expect_status 204
api_as "$OPS2" GET /v1/tokens
expect_status 401
t_end

# --- files: entity tags, preconditions, moves --------------------------------

t_begin "files: GET and PUT answer the SHA-256 of the content as a strong ETag"
api PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'first draft'
expect_status 200 && expect_json .etag "$(sha 'first draft')" && expect_json .size 11
[[ $(header ETag) == "\"$(sha 'first draft')\"" ]] || t_err "PUT ETag: $(header ETag)"
api GET "/v1/sandboxes/$SB/files/content?path=notes.txt"
expect_status 200
[[ $BODY == 'first draft' ]] || t_err "content: $BODY"
[[ $(header ETag) == "\"$(sha_file "$DIR/notes.txt")\"" ]] || t_err "GET ETag: $(header ETag)"
OPENED=$(header ETag)
t_end

t_begin "files: a save with If-Match of what was opened replaces the file"
api_hdr "If-Match: $OPENED" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'second draft'
expect_status 200 && expect_json .etag "$(sha 'second draft')"
[[ $(cat "$DIR/notes.txt") == 'second draft' ]] || t_err "on disk: $(cat "$DIR/notes.txt")"
OPENED=$(header ETag)
t_end

t_begin "files: the agent writes the file inside the container; the stale save is 412 with the current ETag and changes nothing"
docker exec -u 1000 "$C" sh -c 'printf "the agent wrote this" >/home/sandbox/workspace/app/notes.txt' ||
	t_err "docker exec failed"
api_hdr "If-Match: $OPENED" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'my edit'
expect_status 412 && expect_envelope precondition_failed &&
	expect_jq '.error.message | test("changed since it was opened")' 'the message says it changed'
[[ $(header ETag) == "\"$(sha 'the agent wrote this')\"" ]] ||
	t_err "412 ETag $(header ETag), want the agent's content's"
[[ $(cat "$DIR/notes.txt") == 'the agent wrote this' ]] || t_err "overwritten: $(cat "$DIR/notes.txt")"
# the console reloads, sees the agent's text and saves on top of it
CURRENT=$(header ETag)
api_hdr "If-Match: $CURRENT" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'merged'
expect_status 200
[[ $(cat "$DIR/notes.txt") == merged ]] || t_err "after the merge: $(cat "$DIR/notes.txt")"
t_end

t_begin "files: ten saves at once with the same If-Match: exactly one wins, nine get 412"
api PUT "/v1/sandboxes/$SB/files?path=race.txt" 'base'
BASE=$(header ETag)
pids=()
for i in 0 1 2 3 4 5 6 7 8 9; do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 -X PUT -H "Authorization: Bearer $TOKEN" \
		-H "If-Match: $BASE" -H 'Content-Type: application/octet-stream' --data-binary "writer $i" "$API_URL/v1/sandboxes/$SB/files?path=race.txt" \
		>"$IT_TMP/race.$i" &
	pids+=($!)
done
wait "${pids[@]}"
codes=$(cat "$IT_TMP"/race.* | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[[ $codes == " 1 200; 9 412;" ]] || t_err "status codes of the ten saves: $codes"
[[ $(cat "$DIR/race.txt") == "writer "[0-9] ]] || t_err "race.txt: $(cat "$DIR/race.txt")"
t_end

t_begin "files: If-Match lists, *, weak tags; If-Match on a deleted file is 412 without an ETag"
api_hdr "If-Match: \"nope\", \"$(sha merged)\"" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'listed'
expect_status 200
api_hdr "If-Match: W/\"$(sha listed)\"" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'weak'
expect_status 412 && expect_envelope precondition_failed
api_hdr "If-Match: *" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'star'
expect_status 200
api_hdr "If-Match: *" PUT "/v1/sandboxes/$SB/files?path=never.txt" 'x'
expect_status 412 && expect_envelope precondition_failed
[[ -z $(header ETag) ]] || t_err "an ETag for a missing file: $(header ETag)"
[[ ! -e $DIR/never.txt ]] || t_err "never.txt was created"
docker exec -u 1000 "$C" rm /home/sandbox/workspace/app/notes.txt
api_hdr "If-Match: \"$(sha star)\"" PUT "/v1/sandboxes/$SB/files?path=notes.txt" 'again'
expect_status 412 && expect_jq '.error.message | test("deleted")' 'the message says it was deleted'
[[ ! -e $DIR/notes.txt ]] || t_err "notes.txt came back"
t_end

t_begin "files: If-None-Match: * creates, and refuses (412, with the ETag) a file the agent made"
api_hdr "If-None-Match: *" PUT "/v1/sandboxes/$SB/files?path=new/one.txt" 'created'
expect_status 200
[[ $(cat "$DIR/new/one.txt") == created ]] || t_err "not created"
docker exec -u 1000 "$C" sh -c 'printf mine >/home/sandbox/workspace/app/agent.txt'
api_hdr "If-None-Match: *" PUT "/v1/sandboxes/$SB/files?path=agent.txt" 'console'
expect_status 412 && expect_envelope precondition_failed
[[ $(header ETag) == "\"$(sha mine)\"" ]] || t_err "412 ETag $(header ETag)"
[[ $(cat "$DIR/agent.txt") == mine ]] || t_err "the agent's file was replaced"
t_end

t_begin "files: malformed preconditions are 400 and write nothing"
# ("If-Match;" is how curl sends the header with an empty value)
for h in 'If-Match: nope' 'If-Match: "a" "b"' 'If-Match: *, "a"' 'If-None-Match: W/x' 'If-Match;'; do
	api_hdr "$h" PUT "/v1/sandboxes/$SB/files?path=agent.txt" 'bad'
	expect_status 400 && expect_envelope invalid_request
done
[[ $(cat "$DIR/agent.txt") == mine ]] || t_err "agent.txt changed: $(cat "$DIR/agent.txt")"
t_end

t_begin "files: move renames a file or a directory, creates the target's parents"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"agent.txt","to":"./docs//agent-notes.txt"}'
expect_status 200 && expect_json .path docs/agent-notes.txt
[[ $(cat "$DIR/docs/agent-notes.txt") == mine && ! -e $DIR/agent.txt ]] || t_err "file not moved"
[[ $(stat -c %u "$DIR/docs") == 1000 ]] || t_err "docs/ is owned by $(stat -c %u "$DIR/docs")"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"new","to":"renamed"}'
expect_status 200 && expect_json .path renamed
[[ $(cat "$DIR/renamed/one.txt") == created ]] || t_err "directory not moved"
t_end

t_begin "files: move never replaces (409), says 404 for a missing source, never leaves the app directory"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"renamed/one.txt","to":"docs/agent-notes.txt"}'
expect_status 409 && expect_envelope conflict
[[ $(cat "$DIR/docs/agent-notes.txt") == mine ]] || t_err "the target was replaced"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"missing.txt","to":"x.txt"}'
expect_status 404 && expect_envelope not_found
for b in '{"from":"renamed/one.txt","to":"../../escaped.txt"}' \
	'{"from":"renamed/one.txt","to":"/tmp/escaped.txt"}' \
	'{"from":"../../../etc/hostname","to":"x.txt"}' '{"from":"renamed"}' \
	'{"from":"","to":"x"}' '{"from":"renamed","to":"renamed/inner"}' '{"from":1,"to":"x"}'; do
	api POST "/v1/sandboxes/$SB/files/move" "$b"
	expect_status 400 && expect_envelope invalid_request
done
[[ ! -e $DATA/workspaces/$SB/escaped.txt && ! -e /tmp/escaped.txt ]] || t_err "a file left the app directory"
t_end

t_begin "files: move never goes through a symbolic link, nor moves one"
docker exec -u 1000 "$C" sh -c 'cd /home/sandbox/workspace/app && ln -s /etc etc-link && ln -s ../.. up'
api POST "/v1/sandboxes/$SB/files/move" '{"from":"etc-link","to":"etc2"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB/files/move" '{"from":"etc-link/hostname","to":"h.txt"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/sandboxes/$SB/files/move" '{"from":"renamed/one.txt","to":"up/escaped.txt"}'
expect_status 400 && expect_envelope invalid_request
[[ -e $DIR/renamed/one.txt && ! -e $DATA/workspaces/escaped.txt ]] || t_err "moved through the link"
docker exec -u 1000 "$C" rm /home/sandbox/workspace/app/etc-link /home/sandbox/workspace/app/up
t_end

# --- git ----------------------------------------------------------------------

t_begin "git: a commit of chosen paths commits those only; what the agent staged stays staged"
docker exec -u 1000 -w /home/sandbox/workspace/app "$C" sh -c \
	'git init -q -b main && git add -A && git -c user.name=a -c user.email=a@a commit -qm base' ||
	t_err "git init in the container failed"
api PUT "/v1/sandboxes/$SB/files?path=src/app.js" 'console.log(1)'
api PUT "/v1/sandboxes/$SB/files?path=README.md" 'changed readme'
docker exec -u 1000 -w /home/sandbox/workspace/app "$C" sh -c \
	'echo staged >staged.txt && git add staged.txt && rm index.html'
api POST "/v1/apps/$APP/git/commit" '{"message":"chosen","paths":["src","index.html"]}'
expect_status 200 && expect_json .committed true &&
	expect_jq '.files_committed == ["index.html","src/app.js"]' 'index.html and src/app.js committed'
CHOSEN=$(j .sha)
got=$("${G[@]}" -C "$DIR" show --format=%s --name-only HEAD | tr '\n' ' ')
[[ $got == "chosen  index.html src/app.js " ]] || t_err "HEAD: $got"
api GET "/v1/apps/$APP/git/status"
expect_jq '[.files[] | "\(.path):\(.staged)"] | sort == ["README.md:false","staged.txt:true"]' \
	'README.md still modified, staged.txt still staged'
t_end

t_begin "git: a path with no change, outside the repository or in .git is a 400 naming it, and commits nothing"
for p in README.md/x src ../other /etc/passwd .git/config; do
	api POST "/v1/apps/$APP/git/commit" "{\"message\":\"x\",\"paths\":[\"README.md\",\"$p\"]}"
	expect_status 400 && expect_envelope invalid_request &&
		expect_jq ".error.message | contains(\"$p\")" "the message names $p"
done
for b in '{"message":"x","paths":[]}' '{"message":"x","paths":"README.md"}' '{"message":"x","paths":[1]}'; do
	api POST "/v1/apps/$APP/git/commit" "$b"
	expect_status 400 && expect_envelope invalid_request
done
[[ $("${G[@]}" -C "$DIR" rev-parse HEAD) == "$CHOSEN" ]] || t_err "a refused commit moved HEAD"
api POST "/v1/apps/$APP/git/commit" '{"message":"the rest"}'
expect_status 200 && expect_json .committed true &&
	expect_jq '.files_committed | sort == ["README.md","staged.txt"]' 'the rest, without paths'
t_end

t_begin "git: PATCH gives an app that was not imported a remote; a push lands there"
api POST /v1/git-credentials "{\"name\":\"local\",\"host\":\"127.0.0.1:$GPORT\",\"token\":\"$GIT_TOKEN\"}"
expect_status 201
CRED=$(j .id)
api PATCH "/v1/apps/$APP" "{\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/app.git\",\"branch\":\"main\",\"credential_id\":\"$CRED\"}}"
expect_status 200 && expect_json .git.repo_url "http://127.0.0.1:$GPORT/app.git" &&
	expect_json .git.branch main && expect_json .git.credential_id "$CRED" &&
	expect_json .name console
[[ $BODY != *"$GIT_TOKEN"* ]] || t_err "the token is in the app"
api GET "/v1/apps/$APP"
expect_json .git.repo_url "http://127.0.0.1:$GPORT/app.git"
api POST "/v1/apps/$APP/git/push" '{"branch":"console/first"}'
expect_status 200 && expect_json .pushed true && expect_json .branch console/first
got=$(git --git-dir="$ROOT/app.git" log --format=%s -1 console/first 2>&1)
[[ $got == "the rest" ]] || t_err "the remote's console/first: $got"
t_end

t_begin "git: PATCH checks git as a create does (400, another tenant's credential 404) and changes nothing then"
for g in '{"repo_url":"ftp://h/x"}' '{"repo_url":"https://u:p@h/x"}' '{}' '"x"' \
	'{"repo_url":"https://h/x","branch":"a..b"}' '{"repo_url":"https://h/x","nope":1}'; do
	api PATCH "/v1/apps/$APP" "{\"git\":$g}"
	expect_status 400 && expect_envelope invalid_request
done
api_as "$BOB" POST /v1/git-credentials '{"name":"bobs","host":"h.example","token":"t"}'
BOBCRED=$(j .id)
api PATCH "/v1/apps/$APP" "{\"git\":{\"repo_url\":\"https://h.example/x\",\"credential_id\":\"$BOBCRED\"}}"
expect_status 404 && expect_envelope not_found
api_as "$BOB" PATCH "/v1/apps/$APP" '{"git":null}'
expect_status 404
api GET "/v1/apps/$APP"
expect_json .git.repo_url "http://127.0.0.1:$GPORT/app.git" && expect_json .git.credential_id "$CRED"
t_end

t_begin "git: the app's next sandbox is cloned from the remote PATCH gave it"
# (the remote's HEAD names main, which it lacks: name the pushed branch)
git --git-dir="$ROOT/app.git" symbolic-ref HEAD refs/heads/console/first
api PATCH "/v1/apps/$APP" "{\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/app.git\",\"branch\":\"console/first\",\"credential_id\":\"$CRED\"}}"
expect_status 200 && expect_json .git.branch console/first
api DELETE "/v1/sandboxes/$SB"
expect_status 204
create_sandbox "$APP" && {
	NEWDIR=$DATA/workspaces/$SB_ID/workspace/app
	[[ $(cat "$NEWDIR/src/app.js" 2>&1) == 'console.log(1)' && $(cat "$NEWDIR/staged.txt" 2>&1) == staged ]] ||
		t_err "the clone lacks the pushed files: $(ls -A "$NEWDIR" 2>&1 | tr '\n' ' ')"
	[[ $("${G[@]}" -C "$NEWDIR" log --format=%s -1 2>&1) == "the rest" ]] || t_err "the clone's HEAD is not the pushed commit"
}
api GET "/v1/apps/$APP"
expect_jq '.git.last_import_at | test("Z$")' 'last_import_at after the clone'
t_end

t_begin "git: PATCH git null clears the remote: a push says no_repo_url"
api PATCH "/v1/apps/$APP" '{"git":null}'
expect_status 200 && expect_jq 'has("git") | not' 'no git in the app'
api POST "/v1/apps/$APP/git/push" '{"branch":"console/second"}'
expect_status 200 && expect_json .pushed false && expect_json .reason no_repo_url
t_end

# --- settings and status -------------------------------------------------------

t_begin "status: data_dir for operators only, the idle threshold in use for all"
api GET /v1/status
expect_status 200 && expect_json .data_dir "$DATA" && expect_json .idle_threshold_seconds 3600
api_as "$BOB" GET /v1/status
expect_status 200 && expect_json .data_dir null && expect_json .idle_threshold_seconds 3600
t_end

t_begin "settings: lifecycle is shown, editable by operators only"
api GET /v1/settings
expect_status 200 && expect_json .lifecycle.idle_threshold_seconds 3600 &&
	expect_json .lifecycle.default_idle_policy sleep &&
	expect_jq '.editable == ["agents.default_models","lifecycle.idle_threshold_seconds"]' 'both editable'
api_as "$BOB" GET /v1/settings
expect_status 200 && expect_json .lifecycle.idle_threshold_seconds 3600 &&
	expect_jq '.editable == ["agents.default_models"]' 'only the models for bob'
api_as "$BOB" PATCH /v1/settings '{"lifecycle":{"idle_threshold_seconds":600}}'
expect_status 403 && expect_envelope operator_only
t_end

t_begin "settings: bad thresholds are 400 and change nothing"
for b in '{"lifecycle":{"idle_threshold_seconds":59}}' '{"lifecycle":{"idle_threshold_seconds":604801}}' \
	'{"lifecycle":{"idle_threshold_seconds":"600"}}' '{"lifecycle":{"idle_threshold_seconds":600.5}}' \
	'{"lifecycle":{"idle_policy":"sleep"}}' '{"lifecycle":7}' \
	'{"lifecycle":{"idle_threshold_seconds":600},"agents":{"default_models":{"nope":"x"}}}'; do
	api PATCH /v1/settings "$b"
	expect_status 400 && expect_envelope invalid_request
done
api GET /v1/status
expect_json .idle_threshold_seconds 3600
t_end

t_begin "settings: a new threshold is used by the idle reaper without a restart"
# The idle sandbox has been left alone since setup; past 60 s of that,
# the 3600 s of the environment still keep it running.
left=$((62 - (SECONDS - IDLE_SINCE)))
((left > 0)) && sleep "$left"
[[ $(sandbox_status "$IDLE_SB") == running ]] || t_err "stopped before the PATCH: $(sandbox_status "$IDLE_SB")"
api PATCH /v1/settings '{"lifecycle":{"idle_threshold_seconds":60}}'
expect_status 200 && expect_json .lifecycle.idle_threshold_seconds 60
wait_sb "$IDLE_SB" '.status == "stopped"' 15 && expect_json .status_reason idle
t_end

t_begin "settings: the threshold survives a restart and wins over the environment; null goes back to it"
start_daemon "${DAEMON_ARGS[@]}" || bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
api GET /v1/settings
expect_status 200 && expect_json .lifecycle.idle_threshold_seconds 60
api GET /v1/status
expect_json .idle_threshold_seconds 60
api PATCH /v1/settings '{"lifecycle":{"idle_threshold_seconds":null}}'
expect_status 200 && expect_json .lifecycle.idle_threshold_seconds 3600
t_end

# --- the last operator token ------------------------------------------------------

t_begin "tokens: without SANDBOXD_API_TOKENS the first-start token is the last operator token: 409 until another exists"
new_data_dir
start_daemon -SANDBOXD_API_TOKENS SANDBOXD_OPERATORS=ops SANDBOXD_NETWORK=none ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
FIRST=$TOKEN
api GET /v1/tokens
expect_status 200 &&
	expect_jq '[.tokens[] | "\(.name):\(.source):\(.operator)"] == ["default:stored:true"]' 'default, stored, operator' &&
	expect_jq '.tokens[0].created_at | test("Z$")' 'a created_at'
api DELETE /v1/tokens/default
expect_status 409 && expect_envelope conflict &&
	expect_jq '.error.message | test("last operator")' 'says it is the last operator token'
api POST /v1/tokens '{"name":"ops"}'
expect_status 201 && expect_json .operator true
OPS=$(j .token)
TOKEN=$OPS
api DELETE /v1/tokens/default
expect_status 204
api_as "$FIRST" GET /v1/status
expect_status 401
api DELETE /v1/tokens/ops
expect_status 409 && expect_envelope conflict
api GET /v1/tokens
expect_jq '[.tokens[].name] == ["ops"]' 'only ops is left'
t_end

finish
