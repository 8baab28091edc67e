#!/usr/bin/env bash
# Git through the API, on the host: a task's checkpoint makes the app's
# repository; the seeds' status and commit commands work verbatim; status
# and diff answer while the sandbox is stopped; an empty commit, ten
# concurrent commits (one or more commit, the rest find no changes, the
# repository stays valid); what the daemon writes under .git is uid
# 1000's; another tenant gets 404; a hostile workspace (a hook, a filter
# in .gitattributes and the config, a symlink to /etc/passwd, a .git file
# pointing elsewhere) runs nothing and reads nothing outside.
. "$(dirname "$0")/lib.sh"
need_test_image
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" \
	SANDBOXD_API_TOKENS=a=tok-a-tenant,b=tok-b-tenant ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=tok-a-tenant

export API=$API_URL
export AUTH="Authorization: Bearer $TOKEN"
G=(git -c safe.directory='*')

t_begin "an app without a sandbox: available false, no_sandbox"
create_app gitapp '"runtime_preset":"static"'
APP=$APP_ID
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .available false &&
	expect_json .reason no_sandbox
api POST "/v1/apps/$APP/git/commit" '{"message":"x"}'
expect_status 200 && expect_json .committed false &&
	expect_json .reason no_sandbox
t_end

t_begin "before any task: not_a_git_repo"
create_sandbox "$APP"
SB=$SB_ID
REPO=$DATA/workspaces/$SB/workspace/app
rm -rf "$REPO/.git"
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .available false &&
	expect_json .reason not_a_git_repo
t_end

t_begin "another tenant's app is a 404"
for p in status diff; do
	api_as tok-b-tenant GET "/v1/apps/$APP/git/$p"
	expect_status 404
done
api_as tok-b-tenant POST "/v1/apps/$APP/git/commit" '{"message":"x"}'
expect_status 404
t_end

t_begin "a task makes the repository; the seeds' status shows its work"
submit "$SB" '{"prompt":"Add a todo list","agent":"opencode"}'
wait_task "$SB" "$TASK_ID" 60
expect_json .status succeeded
BODY=$(curl -s $API/v1/apps/$APP/git/status -H "$AUTH")
expect_json .available true && expect_json .truncated false &&
	expect_jq '.head_sha | test("^[0-9a-f]{40}$")' 'a 40-hex head_sha' &&
	expect_jq '.branch | length > 0' 'a branch' &&
	expect_json .clean false &&
	expect_jq '[.files[] | select(.staged == false)] | length > 0' 'unstaged files'
t_end

t_begin "diff: the worktree against HEAD, untracked files included"
printf 'hello from the api\n' >"$REPO/notes.txt"
chown 1000:1000 "$REPO/notes.txt"
api GET "/v1/apps/$APP/git/diff"
expect_status 200 && expect_json .truncated false &&
	expect_jq '.diff | contains("+hello from the api")' 'the new line in the diff' &&
	expect_jq '.files[] | select(.path == "notes.txt") | .additions == 1 and .binary == false' 'notes.txt stats'
t_end

t_begin "the seeds' commit commits everything, as sandboxd, files owned by 1000"
BODY=$(curl -s -XPOST $API/v1/apps/$APP/git/commit -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"message":"todo list, first pass"}')
expect_json .committed true &&
	expect_jq '.sha | test("^[0-9a-f]{40}$")' 'a sha' &&
	expect_jq '.files_committed | index("notes.txt") != null' 'notes.txt committed'
SHA=$(j .sha)
[[ $("${G[@]}" -C "$REPO" rev-parse HEAD) == "$SHA" ]] || t_err "HEAD is not $SHA"
[[ $("${G[@]}" -C "$REPO" log -1 --format='%an <%ae>|%s') == 'sandboxd <sandboxd@localhost>|todo list, first pass' ]] ||
	t_err "author/message: $("${G[@]}" -C "$REPO" log -1 --format='%an <%ae>|%s')"
bad=$(find "$REPO/.git" ! -uid 1000 | head -n 3)
[[ -z $bad ]] || t_err "not uid 1000 under .git: $bad"
api GET "/v1/apps/$APP/git/status"
expect_json .clean true && expect_json .head_sha "$SHA"
t_end

t_begin "an empty commit: committed false, no_changes"
api POST "/v1/apps/$APP/git/commit" '{"message":"nothing"}'
expect_status 200 && expect_json .committed false && expect_json .reason no_changes
t_end

t_begin "bad messages: 400"
for b in '{}' '{"message":""}' '{"message":7}' "{\"message\":\"$(head -c 4097 /dev/zero | tr '\0' a)\"}"; do
	api POST "/v1/apps/$APP/git/commit" "$b"
	expect_status 400
done
t_end

t_begin "status and diff while the sandbox is stopped"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
printf 'while asleep\n' >>"$REPO/notes.txt"
api GET "/v1/apps/$APP/git/status"
expect_status 200 && expect_json .available true &&
	expect_jq '.files | index({"path":"notes.txt","status":"modified","staged":false}) != null' 'notes.txt modified'
api GET "/v1/apps/$APP/git/diff"
expect_jq '.diff | contains("+while asleep")' 'the change in the diff'
t_end

t_begin "ten concurrent commits: one or more commit, the rest no_changes, fsck clean"
pids=()
for i in $(seq 10); do
	curl -s -XPOST "$API/v1/apps/$APP/git/commit" -H "$AUTH" \
		-H 'content-type: application/json' \
		-d "{\"message\":\"parallel $i\"}" >"$IT_TMP/c$i.json" &
	pids+=($!)
done
wait "${pids[@]}"
ok=$(cat "$IT_TMP"/c*.json | jq -s '[.[] | select(.committed == true)] | length')
none=$(cat "$IT_TMP"/c*.json | jq -s '[.[] | select(.committed == false and .reason == "no_changes")] | length')
((ok >= 1 && ok + none == 10)) || t_err "committed $ok, no_changes $none: $(cat "$IT_TMP"/c*.json)"
"${G[@]}" -C "$REPO" fsck >/dev/null 2>&1 || t_err "git fsck failed"
[[ -z $("${G[@]}" -C "$REPO" status --porcelain) ]] || t_err "not clean after the commits"
t_end

t_begin "a hostile workspace: hooks and filters never run, symlinks are links"
MARK=$IT_TMP/marker
printf '#!/bin/sh\ntouch %s\n' "$MARK" >"$REPO/.git/hooks/pre-commit"
cp "$REPO/.git/hooks/pre-commit" "$REPO/.git/hooks/post-commit"
chmod +x "$REPO/.git/hooks/"*-commit
printf '*.txt filter=x diff=x\n' >"$REPO/.gitattributes"
ln -s /etc/passwd "$REPO/pw"
printf 'more\n' >>"$REPO/notes.txt"
chown -R 1000:1000 "$REPO"
api GET "/v1/apps/$APP/git/diff"
expect_jq '.diff | contains("root:") | not' 'no /etc/passwd content in the diff'
api POST "/v1/apps/$APP/git/commit" '{"message":"hostile"}'
expect_json .committed true
[[ ! -e $MARK ]] || t_err "a hook ran"
[[ $("${G[@]}" -C "$REPO" ls-tree HEAD pw | cut -c1-6) == 120000 ]] || t_err "pw is not a link in HEAD"
[[ $("${G[@]}" -C "$REPO" cat-file -p HEAD:pw) == /etc/passwd ]] || t_err "pw's blob is not the link's target path"
"${G[@]}" -C "$REPO" config filter.x.clean "touch $MARK"
printf 'again\n' >>"$REPO/notes.txt"
api POST "/v1/apps/$APP/git/commit" '{"message":"filtered"}'
expect_status 409 && expect_envelope unsafe_repo_config &&
	expect_jq '.error.message | contains("filter.x.clean")' 'the message names the key'
api GET "/v1/apps/$APP/git/status"
expect_status 409 && expect_envelope unsafe_repo_config
[[ ! -e $MARK ]] || t_err "a filter ran"
"${G[@]}" -C "$REPO" config --unset filter.x.clean
t_end

t_begin "a .git file pointing elsewhere: a clear error"
mv "$REPO/.git" "$IT_TMP/elsewhere.git"
printf 'gitdir: %s\n' "$IT_TMP/elsewhere.git" >"$REPO/.git"
api GET "/v1/apps/$APP/git/status"
expect_status 409 && expect_envelope unsafe_repo &&
	expect_jq '.error.message | contains(".git file")' 'the message names the .git file'
api POST "/v1/apps/$APP/git/commit" '{"message":"elsewhere"}'
expect_status 409 && expect_envelope unsafe_repo
[[ $("${G[@]}" -C "$IT_TMP/elsewhere.git" log -1 --format=%s 2>/dev/null) != elsewhere ]] ||
	t_err "committed to the repository the .git file names"
rm -f "$REPO/.git"
mv "$IT_TMP/elsewhere.git" "$REPO/.git"
t_end

finish
