#!/usr/bin/env bash
# The trash: DELETE /v1/apps/{id} keeps the app restorable.  Deleted, the
# app leaves the list, its preview and its container go, its workspace is
# renamed under <data>/trash/kept; restored, it comes back whole (a
# preview that answers, a git push to a real remote that works, its config
# and its task history), under a new name when a newer app took its
# name; purged (now, or after SANDBOXD_TRASH_RETENTION_SECONDS) it is gone.
# A kill -9 in the middle of a delete or a restore leaves either the app
# or the trash entry whole, and a full data filesystem during a restore
# loses nothing.
. "$(dirname "$0")/lib.sh"
need_test_image
[[ $(id -u) == 0 ]] || bail "needs root (mounts a tmpfs)"
command -v python3 >/dev/null || bail "python3 is needed"

GIT_TOKEN=ghp-test-$RANDOM$RANDOM
ROOT=$IT_TMP/remote
mkdir -p "$ROOT"
git init -q --bare "$ROOT/app.git"
start_git_server "$ROOT" "$GIT_TOKEN"
REMOTE=http://127.0.0.1:$GPORT/app.git
SETTINGS=(SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1
	SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true SANDBOXD_TRASH_PASS_INTERVAL_SECONDS=1
	SANDBOXD_API_TOKENS=it=$IT_TOKEN,b=tok-b-tenant)
start_edge_daemon "${SETTINGS[@]}"
G=(git -c safe.directory='*')
DB=$DATA/state/sandboxd.db

# app_with_preview NAME: an app with a git remote whose sandbox serves
# edge-app.js through the edge -> APP, SB, HOST.
app_with_preview() {
	create_app "$1" "\"git\":{\"repo_url\":\"$REMOTE\",\"credential_id\":\"$CRED\"}" &&
		create_sandbox "$APP_ID" || bail "cannot make the app: ${T_ERRS[*]}"
	APP=$APP_ID SB=$SB_ID HOST=s-$SB_ID-3000.preview.localhost:$EDGE_PORT
	api PUT "/v1/sandboxes/$SB/files?path=edge-app.js" "@$IT_ROOT/tests/integration/edge-app.js"
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" $'version: 1\nweb:\n  command: node edge-app.js\n  port: 3000\n'
	wait_until 60 preview_up || bail "the preview did not come up"
}
preview_up() { [[ $(ecurl "$HOST" /) == "hello from the app" ]]; }
# delete_app APP -> TID (the trash entry), expecting 204
delete_app() {
	api DELETE "/v1/apps/$1"
	expect_status 204 || return 1
	TID=$(header Sandboxd-Trash-Id)
	ulid_ok "$TID" || t_err "no Sandboxd-Trash-Id header: $HEADERS"
}
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2]).fetchall(); c.commit(); print("\n".join("|".join(map(str,x)) for x in r))' "$DB" "$1"; }

t_begin "setup: an app with a remote, config, a finished task and a preview"
api POST /v1/git-credentials "{\"name\":\"local\",\"host\":\"127.0.0.1:$GPORT\",\"token\":\"$GIT_TOKEN\"}"
expect_status 201
CRED=$(j .id)
app_with_preview "Todo App"
api PUT "/v1/apps/$APP/config/GREETING" '{"value":"hi","expose_env":true}'
expect_status 201
api PUT "/v1/apps/$APP/config/API_KEY" '{"value":"s3cret","sensitive":true}'
expect_status 201
submit "$SB" '{"prompt":"Add a todo list","agent":"opencode"}'
wait_task "$SB" "$TASK_ID" 60
expect_json .status succeeded
TASK=$TASK_ID
CONTAINER=$(container_of "$SB")
echo "the only copy" >"$DATA/workspaces/$SB/workspace/app/notes.txt"
chown 1000:1000 "$DATA/workspaces/$SB/workspace/app/notes.txt"
t_end

t_begin "delete: 204 with how to restore; gone from the list, preview gone, container gone"
delete_app "$APP"
[[ $(header Link) == "</v1/trash/$TID/restore>; rel=\"restore\"" ]] || t_err "Link: $(header Link)"
api GET /v1/apps
expect_jq "[.apps[] | select(.id == \"$APP\")] | length == 0" 'the app is not listed'
api GET "/v1/apps/$APP"
expect_status 404
api GET "/v1/sandboxes/$SB"
expect_status 404
container_exists "$CONTAINER" && t_err "the container is still there"
preview_up && t_err "the preview still answers"
[[ $(ecurl "$HOST" / -o /dev/null -w '%{http_code}') == 404 ]] || t_err "the preview host is not 404"
[[ ! -e $DATA/workspaces/$SB ]] || t_err "the workspace is still in workspaces/"
[[ $(cat "$DATA/trash/kept/$TID/workspace/app/notes.txt" 2>/dev/null) == "the only copy" ]] ||
	t_err "the workspace is not in trash/kept/$TID"
t_end

t_begin "GET /v1/trash lists it with purge_at and, once measured, its size; tenants are apart"
api GET "/v1/trash/$TID"
expect_status 200 && expect_json .app_id "$APP" && expect_json .name "Todo App" &&
	expect_json .state trashed && expect_json .sandbox_id "$SB" &&
	expect_json .restore "/v1/trash/$TID/restore" && expect_jq '.purge_at > .deleted_at'
wait_until 10 bash -c "curl -s -H 'Authorization: Bearer $TOKEN' $API_URL/v1/trash | jq -e '.trash[0].bytes > 0' >/dev/null" ||
	t_err "the entry was never measured"
api GET /v1/trash
expect_status 200 && expect_jq '.trash | length == 1' && expect_jq '.bytes > 0' &&
	expect_json .retention_seconds 259200
api GET /v1/status
expect_jq '.trash.entries == 1 and .trash.bytes > 0' 'status shows the trash'
api_as tok-b-tenant GET "/v1/trash/$TID"
expect_status 404
api_as tok-b-tenant POST "/v1/trash/$TID/restore"
expect_status 404
api_as tok-b-tenant GET /v1/trash
expect_jq '.trash | length == 0' "b sees none"
t_end

t_begin "restore: the app, its preview, config, git settings and task history are back"
api POST "/v1/trash/$TID/restore"
expect_status 200 && expect_json .app.id "$APP" && expect_json .app.name "Todo App" &&
	expect_json .app.git.repo_url "$REMOTE" && expect_json .app.git.credential_id "$CRED" &&
	expect_json .sandbox.id "$SB" && expect_json .sandbox.status running
api GET "/v1/trash/$TID"
expect_status 404
api GET /v1/apps
expect_jq "[.apps[] | select(.id == \"$APP\")] | length == 1" 'listed again'
wait_until 60 preview_up || t_err "the preview does not answer after the restore"
api GET "/v1/apps/$APP/config"
expect_jq '[.config[].key] | sort == ["API_KEY","GREETING"]' 'both config keys'
api GET "/v1/sandboxes/$SB/tasks/$TASK"
expect_status 200 && expect_json .status succeeded
[[ $(cat "$DATA/workspaces/$SB/workspace/app/notes.txt" 2>/dev/null) == "the only copy" ]] ||
	t_err "notes.txt is not back"
t_end

t_begin "restore: a commit and a git push to the real remote work"
api POST "/v1/apps/$APP/git/commit" '{"message":"after the restore"}'
expect_json .committed true
api POST "/v1/apps/$APP/git/push" '{"branch":"feature/restored"}'
expect_json .pushed true
rm -rf "$IT_TMP/c1"
git clone -q -b feature/restored "http://u:$GIT_TOKEN@127.0.0.1:$GPORT/app.git" "$IT_TMP/c1" 2>/dev/null ||
	t_err "cannot clone feature/restored"
[[ $(cat "$IT_TMP/c1/notes.txt" 2>/dev/null) == "the only copy" ]] || t_err "notes.txt is not on the remote"
t_end

t_begin "name clash: a newer app with the name is a 409 that says how; a new name restores"
delete_app "$APP"
create_app "Todo App"
NEWER=$APP_ID
api POST "/v1/trash/$TID/restore"
expect_status 409 && expect_envelope trash_name_taken &&
	expect_jq '.error.message | contains("name")' 'the message says how'
api GET "/v1/trash/$TID"
expect_json .state trashed
api POST "/v1/trash/$TID/restore" '{"name":7}'
expect_status 400
api POST "/v1/trash/$TID/restore" '{"name":"Todo App (restored)"}'
expect_status 200 && expect_json .app.name "Todo App (restored)" && expect_json .app.id "$APP"
api GET "/v1/apps/$NEWER"
expect_json .name "Todo App"
t_end

t_begin "purge now: the workspace, the rows and the task history are gone"
delete_app "$APP"
api DELETE "/v1/trash/$TID"
expect_status 204
api GET "/v1/trash/$TID"
expect_status 404
[[ ! -e $DATA/trash/kept/$TID ]] || t_err "the kept workspace is still there"
[[ $(sql "SELECT count(*) FROM app WHERE id = '$APP'") == 0 ]] || t_err "the app row is still there"
[[ $(sql "SELECT count(*) FROM task WHERE sandbox_id = '$SB'") == 0 ]] || t_err "task rows are still there"
[[ $(sql "SELECT count(*) FROM app_config WHERE app_id = '$APP'") == 0 ]] || t_err "config rows are still there"
api POST "/v1/trash/$TID/restore"
expect_status 404
t_end

t_begin "a running task ends cancelled (app_deleted) with the delete; after the restore a new task runs"
create_app busy && create_sandbox "$APP_ID"
A4=$APP_ID S4=$SB_ID
submit "$S4" '{"prompt":"long one [[fake:sleep=60]]","agent":"opencode"}'
T4=$TASK_ID
sleep 3 # the agent is at work
api GET "/v1/sandboxes/$S4/tasks/$T4"
expect_json .status running
delete_app "$A4"
api POST "/v1/trash/$TID/restore"
expect_status 200
api GET "/v1/sandboxes/$S4/tasks/$T4"
expect_status 200 && expect_json .status cancelled && expect_json .failure_reason app_deleted
submit "$S4" '{"prompt":"after the restore","agent":"opencode"}'
wait_task "$S4" "$TASK_ID" 60
expect_json .status succeeded
t_end

t_begin "a sandbox alone: DELETE keeps it in the trash, the app stays; a restore gives it back"
create_app solo && create_sandbox "$APP_ID"
A3=$APP_ID S3=$SB_ID C3=$SB_CONTAINER
echo mine >"$DATA/workspaces/$S3/workspace/app/solo.txt"
api DELETE "/v1/sandboxes/$S3"
expect_status 204
T3=$(header Sandboxd-Trash-Id)
ulid_ok "$T3" || t_err "no Sandboxd-Trash-Id: $HEADERS"
container_exists "$C3" && t_err "the container is still there"
api GET "/v1/apps/$A3"
expect_status 200 && expect_jq '.current_sandbox_id == null' 'the app has no sandbox'
api GET "/v1/trash/$T3"
expect_json .kind sandbox && expect_json .sandbox_id "$S3"
# a newer sandbox of the app blocks the restore
create_sandbox "$A3"
api POST "/v1/trash/$T3/restore"
expect_status 409 && expect_envelope conflict
api DELETE "/v1/sandboxes/$SB_ID"
expect_status 204
api DELETE "/v1/trash/$(header Sandboxd-Trash-Id)"
expect_status 204
api POST "/v1/trash/$T3/restore"
expect_status 200 && expect_json .sandbox.id "$S3" && expect_json .sandbox.status running
[[ $(cat "$DATA/workspaces/$S3/workspace/app/solo.txt" 2>/dev/null) == mine ]] || t_err "solo.txt is not back"
# the app deleted for good takes its kept sandboxes with it
api DELETE "/v1/sandboxes/$S3"
T3=$(header Sandboxd-Trash-Id)
delete_app "$A3"
api DELETE "/v1/trash/$TID"
expect_status 204
api GET "/v1/trash/$T3"
expect_status 404
[[ ! -e $DATA/trash/kept/$T3 ]] || t_err "the app's kept sandbox is still there"
t_end

# --- crashes ----------------------------------------------------------------------

# whole_app APP SB: listed, workspace in place, no trash entry.
whole_app() {
	api GET "/v1/apps/$1"
	[[ $STATUS == 200 && -d $DATA/workspaces/$2/workspace/app &&
		$(sql "SELECT count(*) FROM trash WHERE app_id = '$1'") == 0 ]]
}
# whole_entry APP SB: not listed, a "trashed" entry, workspace kept, no row.
whole_entry() {
	local tid
	tid=$(sql "SELECT id FROM trash WHERE app_id = '$1' AND state = 'trashed'")
	api GET "/v1/apps/$1"
	[[ $STATUS == 404 && -n $tid && -d $DATA/trash/kept/$tid/workspace/app && ! -e $DATA/workspaces/$2 &&
		$(sql "SELECT count(*) FROM sandbox WHERE id = '$2'") == 0 ]]
}

t_begin "kill -9 mid-delete (journal left at each step): the start finishes the delete"
create_app crash1 && create_sandbox "$APP_ID"
A1=$APP_ID S1=$SB_ID C1=$SB_CONTAINER
echo keep >"$DATA/workspaces/$S1/workspace/app/k.txt"
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
T1=01JTRASHCRASH0000000000001
# step 1 done, nothing else: entry "deleting", app marked, row and container there
sql "INSERT INTO trash (id, owner, app_id, state, sandbox_id, sb_image, sb_ports, sb_created_at, deleted_at, purge_at)
     SELECT '$T1', a.owner, a.id, 'deleting', s.id, s.image, s.ports, s.created_at, 1, 4102444800
     FROM app a JOIN sandbox s ON s.app_id = a.id WHERE a.id = '$A1'" >/dev/null
sql "UPDATE app SET trashed_at = 1 WHERE id = '$A1'" >/dev/null
start_edge_daemon "${SETTINGS[@]}"
whole_entry "$A1" "$S1" || t_err "not a whole trash entry after the restart"
wait_until 20 bash -c "! docker inspect $C1 >/dev/null 2>&1" || t_err "the container is still there"
api POST "/v1/trash/$T1/restore"
expect_status 200 && expect_json .sandbox.status running
[[ $(cat "$DATA/workspaces/$S1/workspace/app/k.txt" 2>/dev/null) == keep ]] || t_err "k.txt lost"
t_end

t_begin "kill -9 mid-restore (workspace moved back, rows not yet): the start rolls it back"
delete_app "$A1"
T1=$TID
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
sql "UPDATE trash SET state = 'restoring' WHERE id = '$T1'" >/dev/null
mv "$DATA/trash/kept/$T1" "$DATA/workspaces/$S1"
start_edge_daemon "${SETTINGS[@]}"
whole_entry "$A1" "$S1" || t_err "not a whole trash entry after the restart"
api POST "/v1/trash/$T1/restore"
expect_status 200
whole_app "$A1" "$S1" || t_err "the restore after the crash is not whole"
t_end

t_begin "kill -9 at a random moment of real deletes and restores: always one whole copy"
for delay in 0.005 0.02 0.05 0.1 0.2; do
	curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $TOKEN" "$API_URL/v1/apps/$A1" &
	CURL=$!
	sleep "$delay"
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	wait "$CURL"
	start_edge_daemon "${SETTINGS[@]}"
	if whole_app "$A1" "$S1"; then
		note "delay $delay: the app stayed"
	elif whole_entry "$A1" "$S1"; then
		note "delay $delay: the entry is whole"
		TID=$(sql "SELECT id FROM trash WHERE app_id = '$A1'")
		curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" "$API_URL/v1/trash/$TID/restore" &
		CURL=$!
		sleep "$delay"
		kill -9 "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
		DAEMON_PID=
		wait "$CURL"
		start_edge_daemon "${SETTINGS[@]}"
		whole_app "$A1" "$S1" || whole_entry "$A1" "$S1" ||
			t_err "delay $delay: after a killed restore neither the app nor the entry is whole"
		if whole_entry "$A1" "$S1"; then
			api POST "/v1/trash/$TID/restore"
			expect_status 200
		fi
	else
		t_err "delay $delay: after a killed delete neither the app nor the entry is whole"
		break
	fi
	[[ $(cat "$DATA/workspaces/$S1/workspace/app/k.txt" 2>/dev/null) == keep ]] || t_err "delay $delay: k.txt lost"
done
t_end

t_begin "CLI: app delete prints how to restore; trash lists; trash restore brings it back"
export SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN
out=$("$SANDBOXD_BIN" app delete "$A1" --yes 2>&1)
TID=$(sql "SELECT id FROM trash WHERE app_id = '$A1'")
[[ -n $TID && $out == *"sandboxd trash restore $TID"* ]] || t_err "app delete printed: $out"
out=$("$SANDBOXD_BIN" trash 2>&1)
[[ $out == *"$TID"* && $out == *crash1* ]] || t_err "trash printed: $out"
out=$("$SANDBOXD_BIN" trash restore "$TID" 2>&1)
[[ $out == *"restored app $A1"* ]] || t_err "trash restore printed: $out"
whole_app "$A1" "$S1" || t_err "not whole after the CLI restore"
out=$("$SANDBOXD_BIN" trash restore "$TID" 2>&1) && t_err "a second restore succeeded: $out"
t_end

t_begin "retention: an entry past SANDBOXD_TRASH_RETENTION_SECONDS is purged by the trash pass"
start_edge_daemon "${SETTINGS[@]}" SANDBOXD_TRASH_RETENTION_SECONDS=2
delete_app "$A1"
api GET "/v1/trash/$TID"
expect_status 200
wait_until 15 bash -c "[[ ! -e $DATA/trash/kept/$TID ]]" || t_err "still kept after 15 s"
api GET "/v1/trash/$TID"
expect_status 404
[[ $(sql "SELECT count(*) FROM app WHERE id = '$A1'") == 0 ]] || t_err "the app row is still there"
t_end

t_begin "retention 0: a delete is for good at once, as before the trash"
start_edge_daemon "${SETTINGS[@]}" SANDBOXD_TRASH_RETENTION_SECONDS=0
create_app gone && create_sandbox "$APP_ID"
api DELETE "/v1/apps/$APP_ID"
expect_status 204
[[ -z $(header Sandboxd-Trash-Id) ]] || t_err "a trash id with retention 0"
[[ ! -e $DATA/workspaces/$SB_ID ]] || t_err "the workspace is still there"
[[ -z $(ls "$DATA/trash/kept") ]] || t_err "something was kept"
t_end
stop_daemon

# --- a full data filesystem during a restore -----------------------------------------

small_data_dir 48m sbxit-trash
DB=$DATA/state/sandboxd.db
start_edge_daemon "${SETTINGS[@]}"

t_begin "full disk during a restore: refused, nothing lost; once space is back it restores"
create_app full && create_sandbox "$APP_ID"
A2=$APP_ID S2=$SB_ID
head -c 1048576 /dev/urandom >"$DATA/workspaces/$S2/workspace/app/data.bin"
SUM=$(sha256sum <"$DATA/workspaces/$S2/workspace/app/data.bin")
delete_app "$A2"
T2=$TID
dd if=/dev/zero of="$SMALL/fill" bs=1M 2>/dev/null
api POST "/v1/trash/$T2/restore"
[[ $STATUS == 507 || $STATUS == 500 ]] || t_err "restore on a full disk: $STATUS $(short_body)"
note "on a full disk: $STATUS $(j .error.code)"
[[ $(sha256sum <"$DATA/trash/kept/$T2/workspace/app/data.bin" 2>/dev/null) == "$SUM" ]] ||
	t_err "data.bin is not whole in the trash"
[[ ! -e $DATA/workspaces/$S2 ]] || t_err "the workspace is half restored"
rm -f "$SMALL/fill"
api GET "/v1/trash/$T2"
expect_status 200 && expect_json .state trashed
api POST "/v1/trash/$T2/restore"
expect_status 200
[[ $(sha256sum <"$DATA/workspaces/$S2/workspace/app/data.bin" 2>/dev/null) == "$SUM" ]] ||
	t_err "data.bin changed"
t_end

finish
