#!/usr/bin/env bash
# 115-swarm-remote-app: an app whose sandbox lives on the second node of a
# two-node swarm (swarm-lib.sh), used as a user would, through the API and
# the `sandboxd` CLI, with nothing answering 409 sandbox_remote.
#
# The app is imported from a bare repository the test serves on loopback
# (tests/git-server, public and pushable; SANDBOXD_GIT_ALLOW_HTTP=1 and
# private hosts allowed): a static site with its own sandbox.yaml.  The
# manager carries the placement fence sandboxd.drain=1 while the test
# runs, so every new sandbox goes to n2 (the pinned ones are not fenced).
#
#   git      files written through the files API show in git status and
#            diff; a commit answers its sha, the status is clean after and
#            n2's repository has that HEAD
#   push     a new branch on the test's remote holds the commit (read back
#            with git on the bare repository); the CLI's default branch too;
#            no copy of the workspace left on the control plane
#   recipes  runtime-inspect on the n2 app detects the static recipe; the
#            app's own sandbox.yaml is refused without force; forced, it is
#            written and committed alone (on n2) and the preview answers
#   publish  from the current files (an uncommitted change): built, and
#            served at its published host through the manager's edge
#   restore  a snapshot, a change, a restore: the change is gone, the sandbox
#            runs again on n2 and its preview answers
#   move     a directory and a file moved with files/move: the old paths
#            404, the new ones read back (on n2's disk too)
#   409      no answer of the above (API or CLI) was 409 sandbox_remote
# The teardown case checks the engine is left as found.
# it-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
swarm_need
need_swarm_image

# Every API answer of this test is looked at for 409 sandbox_remote (the
# last case reports them all), whatever the case that made it expected.
REMOTE_409=()
api() {
	api_auth "Bearer $TOKEN" "$@"
	[[ $STATUS == 409 && $BODY == *sandbox_remote* ]] && REMOTE_409+=("$REQ: $(short_body)")
	return 0
}
# sbd ARGS…: the CLI against the daemon -> OUT (its stdout), ERR (its
# stderr), RC.
sbd() {
	OUT=$(timeout "${SBD_TIMEOUT:-60}" env "SANDBOXD_API=$API_URL" "SANDBOXD_TOKEN=$TOKEN" \
		"XDG_CONFIG_HOME=$IT_TMP/xdg" NO_COLOR=1 "$SANDBOXD_BIN" "$@" 2>"$IT_TMP/sbd.err" </dev/null)
	RC=$?
	ERR=$(tail -c 2000 "$IT_TMP/sbd.err")
	[[ $OUT$ERR == *sandbox_remote* ]] && REMOTE_409+=("sandboxd $*: $OUT $ERR")
	return $RC
}
# sbd_err WHAT: the failed command's exit status and what it printed.
sbd_err() { t_err "sandboxd $1: exit $RC: $(tail -c 400 <<<"$OUT") $(tail -c 600 <<<"$ERR")"; }
# The daemon's and the agent's warnings and errors logged since the case
# began, noted under a failed case (what the daemon said about it).
case_begin() {
	t_begin "$1"
	LOG_MARK=$(wc -l <"$DAEMON_ERR" 2>/dev/null || echo 0)
	AGENT_MARK=$(wc -l <"$SW_AGENT_LOG" 2>/dev/null || echo 0)
}
case_end() {
	if ((${#T_ERRS[@]})); then
		local d a
		d=$(tail -n +"$((LOG_MARK + 1))" "$DAEMON_ERR" 2>/dev/null | grep -E ' (warn|error) ' | tail -n 8)
		a=$(tail -n +"$((AGENT_MARK + 1))" "$SW_AGENT_LOG" 2>/dev/null | grep -E ' (warn|error) ' | tail -n 4)
		[[ -n $d ]] && t_err "daemon log: $d"
		[[ -n $a ]] && t_err "n2 agent log: $a"
	fi
	t_end
}
n2_app() { echo "$SW_N2_DATA/workspaces/$SB/workspace/app"; }
n2git() { n2 git -c safe.directory='*' -C "$(n2_app)" "$@"; }
preview() { ecurl "s-$SB-3000.preview.localhost:$EDGE_PORT" / --max-time 5; }
previews() { [[ $(preview) == *"$1"* ]]; }
wait_preview() {
	wait_until "$2" previews "$1" ||
		t_err "the preview does not answer \"$1\" within $2 s: $(ecurl "s-$SB-3000.preview.localhost:$EDGE_PORT" / -i --max-time 5 | head -c 300)"
}
# content PATH: GET …/files/content -> STATUS, BODY
content() { api GET "/v1/sandboxes/$SB/files/content?path=$1"; }
expect_content() {
	content "$1"
	[[ $STATUS == 200 && $BODY == "$2" ]] || t_err "$1: expected 200 \"$2\", got $STATUS $(short_body)"
}
expect_gone() {
	content "$1"
	[[ $STATUS == 404 ]] || t_err "$1: expected 404, got $STATUS $(short_body)"
}
# expect_on_n2: the sandbox's row and its container both say n2.
expect_on_n2() {
	local w
	[[ $(sb_node "$SB") == n2 ]] || t_err "the sandbox's row says node '$(sb_node "$SB")', not n2"
	w=$(container_of_any "$SB") || { t_err "no container of $SB on either engine"; return 1; }
	[[ ${w%% *} == 2 ]] || t_err "the sandbox's container is on the manager: $w"
}
sha_ok() { [[ $1 =~ ^[0-9a-f]{40}$ ]]; }
# no_stage_left: the copies of the workspace a push or a publish stages on
# the control plane (<data>/state/wsshadow) are gone within 10 s (a
# shadow of the app's root lives there for a moment too).
stage_empty() { [[ -z $(find "$DATA/state/wsshadow" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1) ]]; }
no_stage_left() {
	wait_until 10 stage_empty ||
		t_err "left on the control plane: $(find "$DATA/state/wsshadow" -mindepth 1 -maxdepth 2 | head -n 5 | tr '\n' ' ')"
}
# bare_rev BRANCH: the sha of the branch on the test's remote ("none").
bare_rev() { git --git-dir="$BARE" rev-parse -q --verify "refs/heads/$1" 2>/dev/null || echo none; }

V1='<!doctype html><title>n2 site</title><h1>hello from n2 v1</h1>'
V2='<!doctype html><title>n2 site</title><h1>hello from n2 v2</h1>'
V3='<!doctype html><title>n2 site</title><h1>hello from n2 v3</h1>'

# --- the remote, the cluster, the app ------------------------------------------------
t_begin "setup: a remote repository, two nodes, the app imported onto n2"
REMOTE_ROOT=$IT_TMP/remote
BARE=$REMOTE_ROOT/site.git
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com -c init.defaultBranch=main)
w=$IT_TMP/site.work
mkdir -p "$w/docs/howto" "$REMOTE_ROOT"
printf '%s\n' "$V1" >"$w/index.html"
printf 'h1 { color: teal }\n' >"$w/style.css"
printf 'guide\n' >"$w/docs/howto/guide.md"
printf 'docs\n' >"$w/docs/readme.txt"
printf '# the app'"'"'s own manifest\nversion: 1\nweb:\n  command: python3 -m http.server 3000 --bind 0.0.0.0\n  port: 3000\n' \
	>"$w/sandbox.yaml"
{ "${G[@]}" init -q "$w" && "${G[@]}" -C "$w" add -A && "${G[@]}" -C "$w" commit -q -m "the site" &&
	"${G[@]}" clone -q --bare "$w" "$BARE"; } || bail "cannot make the remote repository"
start_git_server "$REMOTE_ROOT"
REPO_URL=http://127.0.0.1:$GPORT/site.git

swarm_up
swarm_node2_up
swarm_cp_start "SANDBOXD_IMAGE=$TEST_IMAGE" SANDBOXD_FREEZE_AFTER_SECONDS=31536000 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 SANDBOXD_MEM_HEADROOM_PCT=0 \
	SANDBOXD_GIT_ALLOW_HTTP=1 SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true ||
	bail "the daemon did not start in swarm mode: $(tail -n 5 "$DAEMON_ERR")"
swarm_join_command || bail "no join command: ${T_ERRS[*]}"
t0=$(now_ms)
swarm_node2_agent n2
wait_node n2 ready 300 || bail "n2 did not become ready: ${T_ERRS[*]}"
note "n2 ready $(($(now_ms) - t0)) ms after the join command ran"
# The placement fence on the manager: a new sandbox can only go to n2.
docker node update --label-add sandboxd.drain=1 "$SW_MANAGER_ID" >/dev/null ||
	bail "cannot label the manager sandboxd.drain=1"

create_app "n2 site" "\"git\":{\"repo_url\":\"$REPO_URL\"}" || bail "no app: ${T_ERRS[*]}"
APP=$APP_ID
api POST "/v1/apps/$APP/sandbox" '{}'
expect_status 201 || bail "the import onto n2 failed: ${T_ERRS[*]}"
SB=$(j .id)
expect_json .status running
expect_on_n2 || bail "the sandbox is not on n2: ${T_ERRS[*]}"
n2 test -d "$(n2_app)/.git" || t_err "no repository in n2's workspace"
wait_preview "hello from n2 v1" 90
HEAD0=$(n2git rev-parse HEAD 2>&1)
t_end

# --- 1. git -----------------------------------------------------------------------------
case_begin "git: status and diff show the files API's changes on n2; a commit answers its sha, clean after"
api PUT "/v1/sandboxes/$SB/files?path=index.html" "$V2"
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=notes/n2.txt" 'written on n2'
expect_status 200
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .available true && expect_json .clean false &&
	expect_jq '[.files[] | select(.path == "index.html" and .status == "modified")] | length >= 1' 'index.html modified' &&
	expect_jq '[.files[] | select((.path | startswith("notes")) and .status == "untracked")] | length >= 1' 'notes/ untracked'
if sbd git status "$APP"; then
	[[ $OUT == *changed* && $OUT == *index.html* ]] || t_err "sandboxd git status: $OUT"
else sbd_err "git status"; fi
api GET "/v1/apps/$APP/git/diff"
expect_status 200 &&
	expect_jq '.diff | contains("-<!doctype html><title>n2 site</title><h1>hello from n2 v1</h1>")' 'the old line' &&
	expect_jq '.diff | contains("+<!doctype html><title>n2 site</title><h1>hello from n2 v2</h1>")' 'the new line' &&
	expect_jq '[.files[] | select(.path == "index.html")] | length == 1' 'index.html in .files'
if sbd git diff "$APP"; then
	[[ $OUT == *"+$V2"* ]] || t_err "sandboxd git diff: $(head -c 400 <<<"$OUT")"
else sbd_err "git diff"; fi
api POST "/v1/apps/$APP/git/commit" '{"message":"v2 and notes, on n2"}'
expect_status 200 && expect_json .committed true &&
	expect_jq '.files_committed | index("index.html") != null' 'index.html committed'
SHA1=$(j .sha)
sha_ok "$SHA1" || t_err "the commit's sha: '$SHA1'"
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .clean true && expect_json .head_sha "$SHA1"
[[ $(n2git rev-parse HEAD 2>&1) == "$SHA1" ]] || t_err "n2's HEAD is $(n2git rev-parse HEAD 2>&1), not $SHA1"
[[ $(n2git rev-parse HEAD~1 2>&1) == "$HEAD0" ]] || t_err "the commit's parent is not the imported HEAD $HEAD0"
[[ $(n2git show HEAD:notes/n2.txt 2>&1) == 'written on n2' ]] || t_err "notes/n2.txt is not in the commit"
if sbd git commit "$APP" -m "nothing"; then
	[[ $OUT == *"nothing committed (no_changes)"* ]] || t_err "sandboxd git commit on a clean tree: $OUT"
else sbd_err "git commit"; fi
case_end

# --- 2. push ----------------------------------------------------------------------------
case_begin "push: a new branch of the test's remote holds the n2 commit (API and CLI)"
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/n2"}'
expect_status 200 && expect_json .pushed true && expect_json .branch feature/n2 &&
	expect_json .head "$SHA1" && expect_json .remote_url "$REPO_URL"
if [[ $(bare_rev feature/n2) == "$SHA1" ]]; then
	[[ $(git --git-dir="$BARE" show feature/n2:notes/n2.txt 2>&1) == 'written on n2' ]] ||
		t_err "notes/n2.txt on feature/n2: $(git --git-dir="$BARE" show feature/n2:notes/n2.txt 2>&1)"
else t_err "the remote's feature/n2: $(bare_rev feature/n2)"; fi
[[ $(bare_rev main) == "$HEAD0" ]] || t_err "the remote's main moved"
DEF=sandboxd/n2-site-${SHA1:0:7}
if sbd git push "$APP"; then
	[[ $OUT == "pushed branch $DEF to $REPO_URL"* ]] || t_err "sandboxd git push: $OUT"
	[[ $(bare_rev "$DEF") == "$SHA1" ]] || t_err "the remote's $DEF: $(bare_rev "$DEF")"
else sbd_err "git push"; fi
no_stage_left
case_end

# --- 3. recipes ---------------------------------------------------------------------------
case_begin "recipes: runtime-inspect detects the n2 app's recipe; applied (forced), sandbox.yaml written and committed on n2"
api GET "/v1/apps/$APP/runtime-inspect"
expect_status 200 && expect_json .sandbox_id "$SB" && expect_json .existing_manifest.present true &&
	expect_json '.existing_manifest.written_by_sandboxd // false' false &&
	expect_json .detection.recipe static
if sbd app inspect "$APP" -q; then
	[[ $OUT == static ]] || t_err "sandboxd app inspect -q: $OUT"
else sbd_err "app inspect"; fi
api POST "/v1/apps/$APP/runtime-inspect" '{}'
expect_status 409 && expect_json .error.code manifest_is_users
[[ $(n2 head -n 1 "$(n2_app)/sandbox.yaml") == "# the app's own manifest" ]] ||
	t_err "the refused apply changed sandbox.yaml: $(n2 head -n 1 "$(n2_app)/sandbox.yaml" 2>&1)"
api POST "/v1/apps/$APP/runtime-inspect" '{"force":true}'
expect_status 200 && expect_json .written true && expect_json .sandbox_id "$SB" &&
	expect_json .detection.recipe static
SHA2=$(j '.commit // ""')
sha_ok "$SHA2" || t_err "the apply's commit: '$SHA2'"
content sandbox.yaml
[[ $STATUS == 200 && $(head -n 1 <<<"$BODY") == "# Written by sandboxd"* ]] ||
	t_err "sandbox.yaml after the apply: $STATUS $(head -n 2 <<<"$BODY")"
[[ $(n2git rev-parse HEAD 2>&1) == "$SHA2" ]] || t_err "n2's HEAD is not the apply's commit"
[[ $(n2git show --name-only --format= HEAD 2>&1) == sandbox.yaml ]] ||
	t_err "the apply's commit holds: $(n2git show --name-only --format= HEAD 2>&1 | head -n 3)"
[[ $(n2git log -1 --format=%s 2>&1) == "sandboxd: "*sandbox.yaml* ]] ||
	t_err "the apply's commit message: $(n2git log -1 --format=%s 2>&1)"
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .clean true && expect_json .head_sha "$SHA2"
api GET "/v1/apps/$APP/runtime-inspect"
expect_status 200 && expect_json .existing_manifest.written_by_sandboxd true &&
	expect_json .existing_manifest.recipe static
[[ -n $SHA2 ]] && wait_preview "hello from n2 v2" 60
case_end

# --- 4. publish ---------------------------------------------------------------------------
case_begin "publish from the current files on n2: built and served at its published host through the manager's edge"
api PUT "/v1/sandboxes/$SB/files?path=index.html" "$V3"
expect_status 200
# --json: the release's final JSON on stdout, the build's log on stderr.
SBD_TIMEOUT=200 sbd publish "$APP" --label n2site --follow --json || sbd_err "publish --follow"
REL=$(grep '^{' <<<"$OUT" | tail -n 1)
[[ $(jq -r .status <<<"$REL" 2>/dev/null) == ready ]] || t_err "the release: ${REL:-none}"
[[ $(jq -r .kind <<<"$REL" 2>/dev/null) == static ]] || t_err "the release's kind: $(jq -r .kind <<<"$REL" 2>/dev/null)"
[[ $(jq -r .source <<<"$REL" 2>/dev/null) == files ]] || t_err "the release's source: $(jq -r .source <<<"$REL" 2>/dev/null)"
api GET "/v1/apps/$APP/publish"
expect_status 200 && expect_json .published true
PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##; s#:[0-9]+$##'):$EDGE_PORT
[[ $PUB_HOST == n2site.* ]] || t_err "the published host: $PUB_HOST ($(short_body))"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $E_BODY == *"hello from n2 v3"* ]] ||
	t_err "GET / at $PUB_HOST: $E_STATUS $(head -c 200 <<<"$E_BODY")"
edge_get "$PUB_HOST" /style.css
[[ $E_STATUS == 200 && $E_BODY == *teal* ]] || t_err "GET /style.css at $PUB_HOST: $E_STATUS"
no_stage_left
case_end

# --- 5. snapshot, change, restore -----------------------------------------------------------
case_begin "snapshot, change a file, restore: the change is gone, the sandbox runs again on n2, the preview answers"
sbd snapshot create "$APP" --name before-change -q || sbd_err "snapshot create"
SNAP=$OUT
ulid_ok "$SNAP" || t_err "the snapshot's id: $SNAP"
api PUT "/v1/sandboxes/$SB/files?path=index.html" '<h1>changed after the snapshot</h1>'
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=after.txt" 'written after the snapshot'
expect_status 200
wait_preview "changed after the snapshot" 30
api POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$SNAP\"}"
if expect_status 201; then
	expect_json .restored_from "$SNAP" && expect_jq '.undo_snapshot_id | type == "string"' 'an undo snapshot'
	wait_sb "$SB" '.status == "running"' 90
	expect_on_n2
	wait_preview "hello from n2 v3" 90
fi
expect_content index.html "$V3"
expect_gone after.txt
[[ $(n2 cat "$(n2_app)/index.html" 2>&1) == "$V3" ]] || t_err "n2's index.html is not the snapshot's"
case_end

# --- 6. files move ----------------------------------------------------------------------------
case_begin "files API on n2: a directory and a file moved; the old paths 404, the new ones read back"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"docs","to":"manual"}'
expect_status 200 && expect_json .path manual
expect_gone docs/howto/guide.md
expect_gone docs/readme.txt
api GET "/v1/sandboxes/$SB/files?path=docs"
[[ $STATUS == 404 ]] || t_err "GET …/files?path=docs after the move: $STATUS $(short_body)"
expect_content manual/howto/guide.md guide
expect_content manual/readme.txt docs
api GET "/v1/sandboxes/$SB/files?path=manual&recursive=true"
expect_status 200 && expect_jq '[.entries[].path] | index("manual/howto/guide.md") != null' 'manual/howto/guide.md listed'
n2 test -f "$(n2_app)/manual/howto/guide.md" || t_err "not moved on n2's disk"
n2 test -e "$(n2_app)/docs" && t_err "docs/ is still on n2's disk"
api POST "/v1/sandboxes/$SB/files/move" '{"from":"manual/readme.txt","to":"moved/readme.txt"}'
expect_status 200 && expect_json .path moved/readme.txt
expect_gone manual/readme.txt
expect_content moved/readme.txt docs
case_end

# --- 7. no 409 sandbox_remote ----------------------------------------------------------------------
case_begin "nothing above answered 409 sandbox_remote (API or CLI)"
for r in "${REMOTE_409[@]}"; do t_err "$r"; done
grep -h 'sandbox_remote\|is on node' "$DAEMON_ERR" 2>/dev/null | head -n 5 | while IFS= read -r l; do note "daemon log: $l"; done
case_end

finish
