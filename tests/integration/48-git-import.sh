#!/usr/bin/env bash
# Import: an app created with git {repo_url, branch?, credential_id?} gets
# its repository cloned into the new sandbox's workspace, on the host, by
# the git helper (the sandbox user's uid, killed at its timeout).  Against
# real git servers on loopback (tests/git-server: `git http-backend`; one
# requiring a token, one public): a private repository with a stored
# credential, a public one without; the remote's default branch or a
# named one; no credential, a wrong token, a missing branch or repository,
# an unreachable or stalled remote, a repository over the size limit and a
# tree that would write into .git each fail the create with a clear error
# and leave nothing running; private hosts are refused unless allowed;
# the token is nowhere in the workspace, answers or logs; an imported
# app's work is pushed to a new branch, never to the import branch.
. "$(dirname "$0")/lib.sh"
need_test_image

GIT_TOKEN=ghp-import-$RANDOM$RANDOM$RANDOM
PRIV=$IT_TMP/private
PUB=$IT_TMP/public
mkdir -p "$PRIV" "$PUB"
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com
	-c init.defaultBranch=main -c protocol.file.allow=always)

# seed_repo BARE: a bare repository with two commits on main (an app with
# its sandbox.yaml) and a branch dev with one more file.
seed_repo() {
	local w=$IT_TMP/seed.$RANDOM
	"${G[@]}" init -q "$w"
	mkdir -p "$w/src"
	printf 'hello from the remote\n' >"$w/index.html"
	printf 'console.log(1)\n' >"$w/src/app.js"
	printf 'node_modules/\n' >"$w/.gitignore"
	ln -s /etc/passwd "$w/passwd-link"
	"${G[@]}" -C "$w" add -A && "${G[@]}" -C "$w" commit -q -m first
	printf 'two\n' >"$w/CHANGES" && "${G[@]}" -C "$w" add -A &&
		"${G[@]}" -C "$w" commit -q -m second
	"${G[@]}" -C "$w" checkout -q -b dev
	printf 'dev only\n' >"$w/dev.txt" && "${G[@]}" -C "$w" add -A &&
		"${G[@]}" -C "$w" commit -q -m dev
	"${G[@]}" -C "$w" checkout -q main
	"${G[@]}" clone -q --bare "$w" "$1"
	rm -rf "$w"
}
seed_repo "$PRIV/app.git"
seed_repo "$PUB/pub.git"
git --git-dir="$PUB/pub.git" symbolic-ref HEAD refs/heads/dev # default: dev
MAIN_SHA=$(git --git-dir="$PRIV/app.git" rev-parse main)

start_git_server() { # ROOT PORT LOG [TOKEN]
	python3 "$IT_ROOT/tests/git-server/server.py" --root "$1" --port "$2" \
		--log "$3" ${4:+--token "$4"} >/dev/null 2>&1 &
	echo $!
}
PPORT=$(free_port)
PUBPORT=$(free_port)
PRIV_LOG=$IT_TMP/private.log
PUB_LOG=$IT_TMP/public.log
PIDS=("$(start_git_server "$PRIV" "$PPORT" "$PRIV_LOG" "$GIT_TOKEN")"
	"$(start_git_server "$PUB" "$PUBPORT" "$PUB_LOG")")
stop_servers() { kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; }
IT_CLEANUP_HOOKS+=(stop_servers)
for p in "$PPORT" "$PUBPORT"; do
	wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null ||
		bail "a git server did not come up"
done
REMOTE=http://127.0.0.1:$PPORT/app.git
PUBLIC=http://127.0.0.1:$PUBPORT/pub.git

# SANDBOXD_GIT_ALLOW_HTTP=1 (tests only) also lets loopback hosts through
EDGE_PORT=$(free_port)
DAEMON_ENV=(SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1
	SANDBOXD_API_TOKENS=a=tok-a-tenant HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1)
start_daemon "${DAEMON_ENV[@]}" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=tok-a-tenant
G2=(git -c safe.directory='*')

api POST /v1/git-credentials "{\"name\":\"local\",\"host\":\"127.0.0.1:$PPORT\",\"username\":\"importer\",\"token\":\"$GIT_TOKEN\"}"
CRED=$(j .id)

# failed_create APP REASON [STATUS]: the sandbox create fails with
# git_import_failed naming REASON, the row is "error", no container runs.
failed_create() {
	api POST "/v1/apps/$1/sandbox" '{"ports":[3000]}'
	[[ $STATUS == "${3:-502}" ]] || t_err "create: $STATUS, not ${3:-502}: $(short_body)"
	expect_envelope git_import_failed &&
		expect_jq ".error.message | contains(\"($2)\")" "the message names $2"
	[[ $BODY != *"$GIT_TOKEN"* ]] || t_err "the token is in the answer"
	api GET "/v1/apps/$1"
	local sb
	sb=$(j .current_sandbox_id)
	if [[ -n $sb && $sb != null ]]; then
		api GET "/v1/sandboxes/$sb"
		expect_json .status error
		[[ -z $(docker ps -q --filter "label=sandboxd.sandbox=$sb") ]] ||
			t_err "a container runs for the failed sandbox"
	fi
}

t_begin "a private repository with a stored credential is cloned into the new sandbox"
create_app "Imported" "\"runtime_preset\":\"static\",\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$CRED\"}"
APP=$APP_ID
api GET "/v1/apps/$APP"
expect_jq '.git | has("branch") | not' 'no branch before the import'
create_sandbox "$APP"
SB=$SB_ID
REPO=$DATA/workspaces/$SB/workspace/app
[[ $(cat "$REPO/index.html" 2>/dev/null) == 'hello from the remote' ]] ||
	t_err "index.html was not checked out"
[[ -f $REPO/src/app.js && -f $REPO/CHANGES && ! -e $REPO/dev.txt ]] ||
	t_err "the tree is not main's: $(ls -A "$REPO")"
[[ $(readlink "$REPO/passwd-link") == /etc/passwd ]] || t_err "the symlink was not kept as a link"
# The repository has no sandbox.yaml: detection wrote one and committed
# it alone on top of main's tip (97-detect-api.sh).
[[ $("${G2[@]}" -C "$REPO" rev-parse HEAD^) == "$MAIN_SHA" ]] || t_err "HEAD's parent is not main's tip"
[[ $("${G2[@]}" -C "$REPO" log -1 --format=%s) == "sandboxd: add sandbox.yaml for "* ]] ||
	t_err "HEAD is not detection's commit: $("${G2[@]}" -C "$REPO" log -1 --format=%s)"
HEAD_SHA=$("${G2[@]}" -C "$REPO" rev-parse HEAD)
[[ $("${G2[@]}" -C "$REPO" symbolic-ref --short HEAD) == main ]] || t_err "not on main"
[[ $("${G2[@]}" -C "$REPO" config remote.origin.url) == "$REMOTE" ]] ||
	t_err "origin is not the app's URL"
[[ $("${G2[@]}" -C "$REPO" rev-parse refs/remotes/origin/main) == "$MAIN_SHA" ]] ||
	t_err "no origin/main"
bad=$(find "$REPO" ! -user 1000 | head -n 3)
[[ -z $bad ]] || t_err "not the sandbox user's: $bad"
grep -rqF "$GIT_TOKEN" "$DATA/workspaces/$SB" && t_err "the token is in the workspace"
grep -q "user=importer 200" "$PRIV_LOG" || t_err "the stored username was not used: $(tail -n 2 "$PRIV_LOG")"
api GET "/v1/apps/$APP"
expect_json .git.branch main && expect_jq '.git.last_import_at | test("^20")' 'last_import_at'
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .available true && expect_json .clean true &&
	expect_json .branch main && expect_json .head_sha "$HEAD_SHA"
t_end

t_begin "the import is what the app serves, and the template did not overwrite it"
wait_until 30 bash -c "docker exec $SB_CONTAINER test -e /home/sandbox/.sandboxd/seeded" ||
	t_err "the supervisor did not finish its first boot"
[[ $(cat "$REPO/index.html") == 'hello from the remote' ]] || t_err "index.html was replaced"
t_end

t_begin "an imported app's work goes to a new branch, never the import branch"
printf 'agent work\n' >"$REPO/agent.txt"
chown 1000:1000 "$REPO/agent.txt"
api POST "/v1/apps/$APP/git/commit" '{"message":"agent work"}'
expect_json .committed true && expect_json .branch main
api POST "/v1/apps/$APP/git/push" '{"branch":"main"}'
expect_status 409 && expect_envelope refuses_default_branch
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/agent"}'
expect_status 200 && expect_json .pushed true
[[ $(git --git-dir="$PRIV/app.git" rev-parse main) == "$MAIN_SHA" ]] || t_err "main moved on the remote"
git --git-dir="$PRIV/app.git" cat-file -e feature/agent:agent.txt 2>/dev/null ||
	t_err "agent.txt is not on feature/agent"
t_end

t_begin "a public repository without a credential: its default branch, no auth sent"
: >"$PUB_LOG"
create_app "Public" "\"git\":{\"repo_url\":\"$PUBLIC\"}"
PUBAPP=$APP_ID
create_sandbox "$PUBAPP"
R=$DATA/workspaces/$SB_ID/workspace/app
[[ -f $R/dev.txt ]] || t_err "the default branch (dev) was not checked out"
[[ $("${G2[@]}" -C "$R" symbolic-ref --short HEAD) == dev ]] || t_err "not on dev"
api GET "/v1/apps/$PUBAPP"
expect_json .git.branch dev
grep -q 'user=-' "$PUB_LOG" || t_err "the public server saw no request"
! grep -v 'user=-' "$PUB_LOG" | grep -q . || t_err "credentials were sent: $(cat "$PUB_LOG")"
api POST "/v1/apps/$PUBAPP/git/push" '{"branch":"DEV"}'
expect_status 409 && expect_envelope refuses_default_branch
t_end

t_begin "an empty repository: imported empty, the preset's template next to it"
git init -q --bare "$PUB/empty.git"
for br in "" trunk; do
	create_app "Empty $br" "\"runtime_preset\":\"static\",\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/empty.git\"${br:+,\"branch\":\"$br\"}}"
	create_sandbox "$APP_ID" || continue
	R=$DATA/workspaces/$SB_ID/workspace/app
	[[ $("${G2[@]}" -C "$R" symbolic-ref --short HEAD) == "${br:-main}" ]] ||
		t_err "HEAD does not name ${br:-main}"
	[[ $("${G2[@]}" -C "$R" config remote.origin.url) == "http://127.0.0.1:$PUBPORT/empty.git" ]] ||
		t_err "no origin"
	wait_until 30 test -e "$R/index.html" || t_err "the template was not copied next to .git"
	api GET "/v1/apps/$APP_ID"
	expect_json .git.branch "${br:-main}"
done
t_end

t_begin "an imported sandbox.yaml names the preview port, and the preview serves the import"
P=$IT_TMP/port.$RANDOM
"${G[@]}" init -q "$P"
printf 'served on 8080 from the remote\n' >"$P/index.html"
printf 'version: 1\nweb:\n  command: python3 -m http.server 8080 --bind 0.0.0.0\n  port: 8080\n  health_path: /\n' >"$P/sandbox.yaml"
"${G[@]}" -C "$P" add -A && "${G[@]}" -C "$P" commit -q -m port
"${G[@]}" clone -q --bare "$P" "$PUB/port.git"
create_app "Port" "\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/port.git\"}"
PORTAPP=$APP_ID
api POST "/v1/apps/$PORTAPP/sandbox" '{}'
expect_status 201 && expect_jq '.ports == [8080]' 'ports [8080]' && expect_json .preview.port 8080
HOST=$(j .preview.url | sed -E 's#^https?://##; s#:[0-9]+$##')
wait_until 60 bash -c "curl -s --max-time 5 -H 'Host: $HOST' http://127.0.0.1:$EDGE_PORT/ | grep -q 'served on 8080'" ||
	t_err "the preview does not serve the import: $(curl -s --max-time 5 -H "Host: $HOST" "http://127.0.0.1:$EDGE_PORT/" | head -c 300)"
create_app "Port named" "\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/port.git\"}"
api POST "/v1/apps/$APP_ID/sandbox" '{"ports":[3000,8080]}'
expect_status 201 && expect_jq '.ports == [3000,8080]' 'the ports asked for'
t_end

t_begin "a named branch is the one checked out"
create_app "Dev branch" "\"git\":{\"repo_url\":\"$REMOTE\",\"branch\":\"dev\",\"credential_id\":\"$CRED\"}"
create_sandbox "$APP_ID"
R=$DATA/workspaces/$SB_ID/workspace/app
[[ -f $R/dev.txt && $("${G2[@]}" -C "$R" symbolic-ref --short HEAD) == dev ]] ||
	t_err "dev was not checked out"
t_end

t_begin "a private repository without a credential: auth_failed, nothing runs"
create_app "No cred" "\"git\":{\"repo_url\":\"$REMOTE\"}"
failed_create "$APP_ID" auth_failed
NOCRED=$APP_ID
t_end

t_begin "a wrong token: auth_failed after one try, never in an answer"
api POST /v1/git-credentials "{\"name\":\"wrong\",\"host\":\"127.0.0.1:$PPORT\",\"token\":\"wrong-import-token\"}"
WRONG=$(j .id)
: >"$PRIV_LOG"
create_app "Wrong" "\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$WRONG\"}"
failed_create "$APP_ID" auth_failed
[[ $BODY != *wrong-import-token* ]] || t_err "the token is in the answer"
n=$(grep -c ' 401$' "$PRIV_LOG")
((n <= 2)) || t_err "the wrong token was retried: $n answers 401"
t_end

t_begin "a credential for another host is never sent"
api POST /v1/git-credentials "{\"name\":\"else\",\"host\":\"git.example.com\",\"token\":\"$GIT_TOKEN\"}"
: >"$PRIV_LOG"
create_app "Elsewhere" "\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$(j .id)\"}"
failed_create "$APP_ID" auth_failed
! grep -v 'user=-' "$PRIV_LOG" | grep -q . || t_err "credentials were sent: $(cat "$PRIV_LOG")"
t_end

t_begin "a missing branch or repository, an unreachable remote: each named"
create_app "No branch" "\"git\":{\"repo_url\":\"$REMOTE\",\"branch\":\"nope\",\"credential_id\":\"$CRED\"}"
failed_create "$APP_ID" branch_not_found
create_app "No repo" "\"git\":{\"repo_url\":\"$PUBLIC/../missing.git\"}"
api POST "/v1/apps/$APP_ID/sandbox" '{}'
[[ $STATUS == 502 ]] || t_err "missing repository: $STATUS $(short_body)"
create_app "Gone" "\"git\":{\"repo_url\":\"http://127.0.0.1:$(free_port)/x.git\"}"
failed_create "$APP_ID" unreachable
t_end

t_begin "after a failure the next create tries again and can succeed"
api POST /v1/git-credentials "{\"name\":\"local2\",\"host\":\"127.0.0.1:$PPORT\",\"token\":\"$GIT_TOKEN\"}"
sqlite3 "$DATA/state/sandboxd.db" "UPDATE app SET git_credential_id='$(j .id)' WHERE id='$NOCRED'"
create_sandbox "$NOCRED"
[[ -f $DATA/workspaces/$SB_ID/workspace/app/index.html ]] || t_err "not imported on retry"
t_end

t_begin "a deleted credential: a clear 409"
api POST /v1/git-credentials "{\"name\":\"short-lived\",\"host\":\"127.0.0.1:$PPORT\",\"token\":\"$GIT_TOKEN\"}"
SHORT=$(j .id)
create_app "Short" "\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$SHORT\"}"
api DELETE "/v1/git-credentials/$SHORT"
api POST "/v1/apps/$APP_ID/sandbox" '{}'
expect_status 409 && expect_envelope git_import_failed &&
	expect_jq '.error.message | contains("deleted")' 'says the credential was deleted'
t_end

t_begin "a tree that writes into .git is refused; nothing lands in the repository's config"
E=$IT_TMP/evil.$RANDOM
"${G[@]}" init -q "$E"
printf '[core]\n\thooksPath = /tmp\n' >"$IT_TMP/evil-config"
blob=$("${G[@]}" -C "$E" hash-object -w "$IT_TMP/evil-config")
sub=$(printf '100644 blob %s\tconfig\n' "$blob" | "${G[@]}" -C "$E" mktree)
top=$(printf '040000 tree %s\t.git\n100644 blob %s\tREADME\n' "$sub" "$blob" | "${G[@]}" -C "$E" mktree)
c=$("${G[@]}" -C "$E" commit-tree "$top" -m evil)
"${G[@]}" -C "$E" update-ref refs/heads/main "$c"
"${G[@]}" clone -q --bare "$E" "$PUB/evil.git" 2>/dev/null ||
	cp -a "$E/.git" "$PUB/evil.git"
create_app "Evil" "\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/evil.git\"}"
api POST "/v1/apps/$APP_ID/sandbox" '{}'
[[ $STATUS == 502 ]] || t_err "a .git path in the tree: $STATUS $(short_body)"
expect_envelope git_import_failed
for cfg in "$DATA"/workspaces/*/workspace/app/.git/config; do
	grep -q hooksPath "$cfg" && t_err "$cfg got hooksPath from the tree"
done
t_end

t_begin "limits: a stalled remote times out, a large repository is refused, the helper is gone"
stop_daemon
python3 - "$IT_TMP/stall.port" <<'EOF' &
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
conns = []
while True:
    c, _ = s.accept(); conns.append(c)  # never answers
EOF
PIDS+=($!)
wait_until 5 test -s "$IT_TMP/stall.port" || bail "the stalling server did not start"
B=$IT_TMP/big.$RANDOM
"${G[@]}" init -q "$B"
head -c 3000000 /dev/urandom >"$B/random.bin"
"${G[@]}" -C "$B" add -A && "${G[@]}" -C "$B" commit -q -m big
"${G[@]}" clone -q --bare "$B" "$PUB/big.git"
Z=$IT_TMP/zeros.$RANDOM
"${G[@]}" init -q "$Z"
head -c 8000000 /dev/zero >"$Z/zeros.bin"
"${G[@]}" -C "$Z" add -A && "${G[@]}" -C "$Z" commit -q -m zeros
"${G[@]}" clone -q --bare "$Z" "$PUB/zeros.git"
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_GIT_TIMEOUT_SECONDS=5 \
	SANDBOXD_GIT_IMPORT_MAX_MB=1 || bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
create_app "Stalled" "\"git\":{\"repo_url\":\"http://127.0.0.1:$(cat "$IT_TMP/stall.port")/x.git\"}"
t0=$SECONDS
failed_create "$APP_ID" timeout 504
((SECONDS - t0 <= 15)) || t_err "the timeout took $((SECONDS - t0)) s"
create_app "Big" "\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/big.git\"}"
failed_create "$APP_ID" too_large
create_app "Zeros" "\"git\":{\"repo_url\":\"http://127.0.0.1:$PUBPORT/zeros.git\"}"
failed_create "$APP_ID" too_large
# Only this daemon's helpers: other daemons on the machine may be pushing.
pgrep -P "$DAEMON_PID" -f 'sandboxd git-helper' >/dev/null && t_err "a git helper is still running"
t_end

t_begin "private hosts are refused by default, for imports and pushes"
create_app "Blocked" "\"git\":{\"repo_url\":\"$PUBLIC\"}"
stop_daemon
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_DATA_DIR="$DATA" -SANDBOXD_GIT_ALLOW_HTTP ||
	bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
: >"$PUB_LOG"
failed_create "$APP_ID" blocked_host 400
expect_jq '.error_message | contains("SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS")' 'the sandbox says which setting'
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/blocked"}'
expect_status 200 && expect_json .pushed false && expect_json .reason blocked_host
[[ ! -s $PUB_LOG ]] || t_err "the server was contacted: $(cat "$PUB_LOG")"
t_end

t_begin "https: an unknown certificate authority is refused; SANDBOXD_GIT_CA_FILE trusts one"
T=$IT_TMP/tls
mkdir -p "$T"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" \
	-days 2 -subj /CN=sandboxd-test-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$T/srv.key" -out "$T/srv.csr" \
	-subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost\n' >"$T/ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" \
	-CAcreateserial -out "$T/srv.pem" -days 2 -extfile "$T/ext" 2>/dev/null
TPORT=$(free_port)
TLS_LOG=$IT_TMP/tls.log
python3 "$IT_ROOT/tests/git-server/server.py" --root "$PRIV" --port "$TPORT" \
	--log "$TLS_LOG" --token "$GIT_TOKEN" --tls-cert "$T/srv.pem" --tls-key "$T/srv.key" \
	>/dev/null 2>&1 &
PIDS+=($!)
wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$TPORT" 2>/dev/null || t_err "the https server did not come up"
stop_daemon
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_DATA_DIR="$DATA" ||
	bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
api POST /v1/git-credentials "{\"name\":\"tls\",\"host\":\"localhost:$TPORT\",\"token\":\"$GIT_TOKEN\"}"
TLSCRED=$(j .id)
create_app "Over TLS" "\"git\":{\"repo_url\":\"https://localhost:$TPORT/app.git\",\"credential_id\":\"$TLSCRED\"}"
TLSAPP=$APP_ID
failed_create "$TLSAPP" tls_failed
! grep -q 'user=' "$TLS_LOG" 2>/dev/null || t_err "a request got through an untrusted TLS session"
stop_daemon
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_GIT_CA_FILE="$T/nope.pem" &&
	t_err "the daemon started with a CA file that does not exist"
grep -q SANDBOXD_GIT_CA_FILE "$DAEMON_ERR" || t_err "the error does not name SANDBOXD_GIT_CA_FILE"
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_GIT_CA_FILE="$T/ca.pem" ||
	bail "the daemon did not come back: $(tail -n 5 "$DAEMON_ERR")"
create_sandbox "$TLSAPP"
[[ $(cat "$DATA/workspaces/$SB_ID/workspace/app/index.html" 2>/dev/null) == 'hello from the remote' ]] ||
	t_err "not imported over https"
grep -q "user=x-access-token 200" "$TLS_LOG" || t_err "the token did not go over TLS: $(tail -n 2 "$TLS_LOG")"
printf 'over tls\n' >"$DATA/workspaces/$SB_ID/workspace/app/tls.txt"
chown 1000:1000 "$DATA/workspaces/$SB_ID/workspace/app/tls.txt"
api POST "/v1/apps/$TLSAPP/git/commit" '{"message":"tls"}'
api POST "/v1/apps/$TLSAPP/git/push" '{"branch":"feature/tls"}'
expect_status 200 && expect_json .pushed true
git --git-dir="$PRIV/app.git" cat-file -e feature/tls:tls.txt 2>/dev/null || t_err "tls.txt is not on the remote"
t_end

t_begin "no token in any log"
for f in "$IT_TMP"/daemon.*.out "$IT_TMP"/daemon.*.err; do
	grep -q -e "$GIT_TOKEN" -e wrong-import-token "$f" && t_err "a token in $(basename "$f")"
done
t_end

finish
