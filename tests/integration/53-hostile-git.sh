#!/usr/bin/env bash
# A hostile sandbox against git through the API, with two tenants: from
# inside sandbox A, as uid 1000, symlinks below A's .git (object files,
# object directories, refs) name HOST paths of tenant B's workspace (its
# `.workspace` from the API), which the daemon on the host could follow.
# Each time A's git/status, git/diff and git/commit show nothing of B's
# (no file name, no content) and B's refs and objects stay byte for byte
# what they were; A gets a clear error; B's own git keeps answering at
# once. Also: workspaces are 0700 and workspaces/ 0711 on the host.
. "$(dirname "$0")/lib.sh"
need_test_image
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" \
	SANDBOXD_API_TOKENS=a=tok-a-tenant,b=tok-b-tenant ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
G=(git -c safe.directory='*' -c user.name=t -c user.email=t@t)
SECRET=b-tenant-secret-$RANDOM$RANDOM

# mkrepo DIR FILE TEXT: a repository on branch main with one commit.
mkrepo() {
	rm -rf "$1/.git"
	"${G[@]}" -C "$1" init -q -b main &&
		printf '%s\n' "$3" >"$1/$2" &&
		"${G[@]}" -C "$1" add -A && "${G[@]}" -C "$1" commit -qm "$2" &&
		chown -R 1000:1000 "$1"
}

# A fingerprint of B's refs and objects: every file's path and content.
b_state() {
	(cd "$B_REPO/.git" && find refs objects packed-refs HEAD -type f 2>/dev/null |
		sort | xargs -r sha256sum | sha256sum)
}

# no_b_data: the last answer has nothing of B's in it (B's sha may be
# named: A wrote it itself).
no_b_data() {
	[[ $BODY != *"$SECRET"* ]] || t_err "$REQ: B's file content in the answer"
	[[ $BODY != *b-secret.txt* ]] || t_err "$REQ: B's file name in the answer"
}

# as_a: A's status, diff and commit show nothing of B's; B is unchanged.
as_a() {
	local before
	before=$(b_state)
	for p in status diff; do
		api GET "/v1/apps/$A_APP/git/$p"
		no_b_data
		[[ $STATUS == 200 || $STATUS == 409 || $STATUS == 500 ]] ||
			t_err "$REQ: HTTP $STATUS"
		[[ $STATUS == 200 ]] || expect_jq '.error.message | length > 0' 'an error message'
	done
	api POST "/v1/apps/$A_APP/git/commit" '{"message":"hostile"}'
	no_b_data
	[[ $(b_state) == "$before" ]] || t_err "B's refs or objects changed"
	[[ $("${G[@]}" -C "$B_REPO" rev-parse main) == "$B_SHA" ]] || t_err "B's main moved"
}

# b_answers: B's own status answers, quickly, with its commit.
b_answers() {
	local t0=$SECONDS
	api_as tok-b-tenant GET "/v1/apps/$B_APP/git/status"
	expect_status 200 && expect_json .head_sha "$B_SHA"
	((SECONDS - t0 <= 2)) || t_err "B's status took $((SECONDS - t0)) s"
}

t_begin "two tenants, each with an app, a sandbox and a repository"
TOKEN=tok-b-tenant
create_app b-app '"runtime_preset":"static"'
B_APP=$APP_ID
create_sandbox "$B_APP"
B_SB=$SB_ID
api GET "/v1/sandboxes/$B_SB"
B_WS=$(j .workspace)
B_REPO=$B_WS/workspace/app
[[ -d $B_REPO ]] || t_err "B's workspace $B_WS is not on this host"
mkrepo "$B_REPO" b-secret.txt "$SECRET"
B_SHA=$("${G[@]}" -C "$B_REPO" rev-parse HEAD)
TOKEN=tok-a-tenant
create_app a-app '"runtime_preset":"static"'
A_APP=$APP_ID
create_sandbox "$A_APP"
A_SB=$SB_ID
A_C=$SB_CONTAINER
A_REPO=$DATA/workspaces/$A_SB/workspace/app
mkrepo "$A_REPO" a.txt "tenant a"
api GET "/v1/apps/$A_APP/git/status"
expect_status 200 && expect_json .clean true
b_answers
t_end

t_begin "workspaces are 0700, workspaces/ 0711"
for ws in "$DATA/workspaces/$A_SB" "$B_WS"; do
	[[ $(stat -c %a "$ws") == 700 ]] || t_err "$ws is $(stat -c %a "$ws")"
done
[[ $(stat -c %a "$DATA/workspaces") == 711 ]] || t_err "workspaces/ is $(stat -c %a "$DATA/workspaces")"
t_end

# B's loose objects, as paths below .git/objects (xx/yyyy…).
B_OBJS=$(cd "$B_REPO/.git/objects" && find . -path ./info -prune -o -path ./pack -prune -o -type f -print | sed 's|^\./||')

# in_a SCRIPT ARGS…: sh in sandbox A as the sandbox user, in A's .git.
in_a() {
	local s=$1
	shift
	docker exec -u 1000 -w /home/sandbox/workspace/app/.git "$A_C" sh -ec "$s" sh "$@"
}

# link_objects: A's object files linked to B's (so B's commits resolve).
link_objects() {
	in_a 'bws=$1; shift
for o in "$@"; do mkdir -p "objects/${o%%/*}"; ln -sf "$bws/workspace/app/.git/objects/$o" "objects/$o"; done' "$B_WS" $B_OBJS ||
		t_err "planting the links failed"
}

t_begin "object files linked to B's, A's main set to B's commit: nothing of B's"
link_objects
in_a 'printf "%s\n" "$1" >refs/heads/main' "$B_SHA" || t_err "setting main failed"
as_a
b_answers
t_end

t_begin "the same links relative, with ../ up to B's workspace"
rel=../../../../../../../../../../..$B_WS/workspace/app/.git/objects
in_a 'rel=$1; shift
for o in "$@"; do ln -sfn "$rel/$o" "objects/$o"; done' "$rel" $B_OBJS ||
	t_err "planting the links failed"
as_a
b_answers
t_end

t_begin "object directories linked to B's: 409 unsafe_repo"
in_a 'bws=$1; shift
for o in "$@"; do d=${o%%/*}; rm -rf "objects/$d"; ln -sfn "$bws/workspace/app/.git/objects/$d" "objects/$d"; done' "$B_WS" $B_OBJS ||
	t_err "planting the links failed"
as_a
api GET "/v1/apps/$A_APP/git/diff"
expect_status 409 && expect_envelope unsafe_repo &&
	expect_jq '.error.message | contains("symbolic link")' 'the message names a link'
t_end

t_begin "refs/heads linked to B's (and B's objects): commit cannot move B's branch"
mkrepo "$A_REPO" a.txt "tenant a"
link_objects
in_a 'bws=$1; rm -rf refs/heads; ln -s "$bws/workspace/app/.git/refs/heads" refs/heads' "$B_WS" ||
	t_err "planting the link failed"
printf 'change\n' >>"$A_REPO/a.txt"
as_a
api POST "/v1/apps/$A_APP/git/commit" '{"message":"move b"}'
expect_status 409 && expect_envelope unsafe_repo
b_answers
t_end

t_begin "refs/heads/main linked to B's main file: the same"
mkrepo "$A_REPO" a.txt "tenant a"
link_objects
in_a 'bws=$1; rm -f refs/heads/main; ln -s "$bws/workspace/app/.git/refs/heads/main" refs/heads/main' "$B_WS" ||
	t_err "planting the link failed"
printf 'change\n' >>"$A_REPO/a.txt"
as_a
b_answers
t_end

t_begin "A's repository repaired: its git works again"
mkrepo "$A_REPO" a.txt "tenant a"
printf 'change\n' >>"$A_REPO/a.txt"
api POST "/v1/apps/$A_APP/git/commit" '{"message":"mine"}'
expect_status 200 && expect_json .committed true
api GET "/v1/apps/$A_APP/git/diff"
expect_status 200 && expect_json .diff ""
b_answers
t_end

finish
