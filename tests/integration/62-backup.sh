#!/usr/bin/env bash
# Backup and restore: `sandboxd backup` taken while a task writes and the
# API creates apps, checked the way restore checks it (manifest,
# checksums, PRAGMA integrity_check), then restored onto a new data
# directory: its daemon brings back the apps, the task history, the
# secrets (all open) and the sandbox, recreated at its first start with
# the workspace of the backup, while the first daemon's sandbox on the
# same engine is left alone.  Restore refuses to run next to a daemon,
# onto a data directory that has a database (without --force), and a
# backup whose files do not match their checksums.  With the master key
# in SANDBOXD_SECRETS_KEY the manifest says it is external, and restore
# needs the same key.
. "$(dirname "$0")/lib.sh"
need_test_image

# sbd ARGS…: the CLI with the current daemon's data directory.
sbd() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		"$SANDBOXD_BIN" "$@"
}

start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" || bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
DATA1=$DATA

t_begin "set up: apps, a sandbox with a finished task, secrets"
create_app kept-1 && create_app kept-2 && create_app with-sandbox &&
	create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
SB=$SB_ID
OLD_CONTAINER=$SB_CONTAINER
submit "$SB" '{"prompt":"[[fake:write=before.txt]] [[fake:content=from the first task]]","agent":"opencode"}'
T1=$TASK_ID
wait_task "$SB" "$T1" 60 && expect_json .status succeeded
api POST /v1/agents/opencode/api-key '{"api_key":"sk-backup-test-0123456789"}'
expect_status 200
api PUT "/v1/apps/$APP_ID/config/DB_PASSWORD" '{"value":"hunter2-secret","sensitive":true}'
expect_status 201
KEEP_APP=$APP_ID
# one app deleted into the trash: the backup carries it
create_app binned && create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
BIN_APP=$APP_ID
echo "in the trash" >"$DATA/workspaces/$SB_ID/workspace/app/binned.txt"
api DELETE "/v1/apps/$BIN_APP"
expect_status 204
BIN_TID=$(header Sandboxd-Trash-Id)
APP_ID=$KEEP_APP
t_end

t_begin "backup while a task writes and apps are being created"
submit "$SB" '{"prompt":"[[fake:lines=300]] [[fake:interval_ms=10]] [[fake:write=during.txt]]","agent":"opencode"}'
T2=$TASK_ID
(for i in $(seq 1 40); do
	curl -s -o /dev/null -XPOST -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' "$API_URL/v1/apps" -d "{\"name\":\"during-$i\"}"
	sleep 0.05
done) &
WRITER=$!
sleep 0.3
BK=$IT_TMP/backup-1
start_ms=$(date +%s%3N)
sbd backup "$BK" --workspaces >"$IT_TMP/backup.out" 2>&1
rc=$?
took=$(($(date +%s%3N) - start_ms))
wait "$WRITER"
note "backup took ${took} ms; $(du -sb "$BK" | cut -f1) bytes"
((rc == 0)) || t_err "backup exited $rc: $(cat "$IT_TMP/backup.out")"
[[ -f $BK/manifest.json && -f $BK/sandboxd.db && -f $BK/secret.key ]] ||
	t_err "the backup lacks a file: $(ls -la "$BK")"
[[ $(stat -c %a "$BK") == 700 ]] || t_err "the backup directory is $(stat -c %a "$BK"), not 700"
[[ ! -e $BK/sandboxd.db-wal ]] || t_err "a -wal file beside the copy"
[[ $(sqlite3 "$BK/sandboxd.db" 'PRAGMA integrity_check') == ok ]] ||
	t_err "integrity_check of the copy: $(sqlite3 "$BK/sandboxd.db" 'PRAGMA integrity_check' 2>&1 | head -3)"
BODY=$(cat "$BK/manifest.json")
REQ="manifest.json"
expect_json .format 2 && expect_json .secrets_key file &&
	expect_json .data_dir "$DATA1" && expect_json .workspaces.included true
expect_json .counts.apps "$(sqlite3 "$BK/sandboxd.db" 'SELECT count(*) FROM app')"
apps_in_copy=$(sqlite3 "$BK/sandboxd.db" 'SELECT count(*) FROM app WHERE trashed_at = 0')
[[ $(cat "$BK/trash-kept/$BIN_TID/workspace/app/binned.txt" 2>/dev/null) == "in the trash" ]] ||
	t_err "the trash is not in the backup: $(ls "$BK" 2>&1)"
grep -q "^trash: 1 deleted app copied" "$IT_TMP/backup.out" || t_err "backup output: $(cat "$IT_TMP/backup.out")"
expect_json .counts.tasks "$(sqlite3 "$BK/sandboxd.db" 'SELECT count(*) FROM task')"
expect_json .schema_version "$(sqlite3 "$BK/sandboxd.db" 'SELECT max(version) FROM schema_migration')"
for f in sandboxd.db secret.key; do
	expect_json ".files[] | select(.name == \"$f\") | .sha256" "$(sha256sum "$BK/$f" | cut -d' ' -f1)"
done
t2_in_copy=$(sqlite3 "$BK/sandboxd.db" "SELECT status FROM task WHERE id='$T2'")
[[ $t2_in_copy == running ]] || t_err "the copy was not taken while the task ran (its status there: ${t2_in_copy:-none})"
((apps_in_copy >= 3)) || t_err "the copy holds $apps_in_copy apps, fewer than the 3 made before"
[[ $(cat "$BK/workspaces/$SB/workspace/app/before.txt" 2>/dev/null) == "from the first task" ]] ||
	t_err "the copied workspace lacks before.txt: $(ls "$BK/workspaces/$SB/workspace/app" 2>&1)"
[[ $(dinspect "$OLD_CONTAINER" '{{.State.Status}}') == running ]] ||
	t_err "the sandbox was not resumed after its copy: $(dinspect "$OLD_CONTAINER" '{{.State.Status}}')"
t_end

wait_task "$SB" "$T2" 60
api GET /v1/apps
APPS_LIVE=$(j '.apps | length')

t_begin "backup refuses a directory that holds a backup"
sbd backup "$BK" >"$IT_TMP/again.out" 2>&1 && t_err "a second backup into $BK succeeded"
grep -q "already holds a backup" "$IT_TMP/again.out" || t_err "message: $(cat "$IT_TMP/again.out")"
t_end

t_begin "restore refuses while the daemon runs on the data directory"
sbd restore "$BK" >"$IT_TMP/r0.out" 2>&1 && t_err "restore ran next to the daemon"
grep -q "sandboxd is running on $DATA1: stop it first" "$IT_TMP/r0.out" ||
	t_err "message: $(cat "$IT_TMP/r0.out")"
t_end

t_begin "restore refuses a backup whose database does not match its checksum"
BAD=$IT_TMP/backup-bad
cp -a "$BK" "$BAD"
printf 'x' | dd of="$BAD/sandboxd.db" bs=1 seek=5000 conv=notrunc 2>/dev/null
new_data_dir
sbd restore "$BAD" >"$IT_TMP/r1.out" 2>&1 && t_err "restore took a damaged backup"
grep -q "does not match its checksum" "$IT_TMP/r1.out" || t_err "message: $(cat "$IT_TMP/r1.out")"
[[ ! -e $DATA/state/sandboxd.db ]] || t_err "a database was written anyway"
t_end

t_begin "restore onto a new data directory"
sbd restore "$BK" >"$IT_TMP/r2.out" 2>&1 || t_err "restore failed: $(cat "$IT_TMP/r2.out")"
grep -q "checksums and integrity_check ok" "$IT_TMP/r2.out" || t_err "output: $(cat "$IT_TMP/r2.out")"
[[ $(sqlite3 "$DATA/state/sandboxd.db" 'PRAGMA integrity_check') == ok ]] || t_err "integrity_check after restore"
[[ -z $(sqlite3 "$DATA/state/sandboxd.db" "SELECT value FROM meta WHERE key='instance_id'") ]] ||
	t_err "the restored copy kept the old instance id"
sbd secrets check >"$IT_TMP/sc.out" 2>&1 || t_err "secrets check: $(cat "$IT_TMP/sc.out")"
grep -qE "secrets: ([1-9][0-9]*) stored, \1 open, 0 do not" "$IT_TMP/sc.out" ||
	t_err "secrets check: $(cat "$IT_TMP/sc.out")"
ls "$DATA"/*.restore-tmp "$DATA"/state/*.restore-tmp >/dev/null 2>&1 && t_err "staged files left behind"
t_end

t_begin "restore refuses a data directory that has a database, unless --force"
sbd restore "$BK" >"$IT_TMP/r3.out" 2>&1 && t_err "restore replaced a database without --force"
grep -q "holds a database" "$IT_TMP/r3.out" || t_err "message: $(cat "$IT_TMP/r3.out")"
t_end

DATA2=$DATA
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" || bail "the restored daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

t_begin "after restore: apps, task history, secrets and the sandbox come back"
api GET /v1/apps
expect_status 200 && expect_json '.apps | length' "$apps_in_copy"
((apps_in_copy < APPS_LIVE)) || t_err "all $APPS_LIVE apps are in the copy: it was not taken while apps were being created"
api GET "/v1/sandboxes/$SB/tasks/$T1"
expect_status 200 && expect_json .status succeeded
# The activity timeline is in the database, so in the copy.
api GET "/v1/apps/$(sqlite3 "$DATA/state/sandboxd.db" "SELECT app_id FROM sandbox WHERE id = '$SB'")/events?type=task.succeeded"
expect_status 200 && expect_jq "[.events[].task_id] | index(\"$T1\") != null" "the task's event came back"
api GET "/v1/sandboxes/$SB/tasks/$T2"
expect_status 200
note "the copy holds $apps_in_copy of $APPS_LIVE apps; the task that ran during the backup is now $(j .status) ($(j .failure_reason))"
api GET /v1/agents
expect_jq '.agents[] | select(.id == "opencode") | .status == "connected" and .method == "api_key"' "opencode's key to be there"
api GET "/v1/apps/$APP_ID/config"
expect_jq '.config[] | select(.key == "DB_PASSWORD") | .value_set == true and .sensitive == true'
api POST "/v1/sandboxes/$SB/start"
[[ $STATUS == 200 ]] || api GET "/v1/sandboxes/$SB"
wait_sb "$SB" '.status == "running"' 60
NEW_CONTAINER=$(container_of "$SB")
[[ -n $NEW_CONTAINER && $NEW_CONTAINER != "$OLD_CONTAINER" ]] ||
	t_err "no new container for the sandbox (old $OLD_CONTAINER, new ${NEW_CONTAINER:-none})"
[[ $(dinspect "$NEW_CONTAINER" '{{range .Mounts}}{{.Source}} {{end}}') == *"$DATA2/workspaces/$SB"* ]] ||
	t_err "the new container does not mount the restored workspace"
api GET "/v1/sandboxes/$SB/files/content?path=before.txt"
expect_status 200 && [[ $BODY == "from the first task" ]] || t_err "before.txt: $(short_body)"
[[ $(dinspect "$OLD_CONTAINER" '{{.State.Status}}') == running ]] ||
	t_err "the first daemon's container was touched: $(dinspect "$OLD_CONTAINER" '{{.State.Status}}')"
t_end

t_begin "after restore: the app deleted before the backup restores from the trash, files and all"
api POST "/v1/trash/$BIN_TID/restore"
expect_status 200 && expect_json .app.id "$BIN_APP" && expect_json .sandbox.status running
api GET "/v1/sandboxes/$(j .sandbox.id)/files/content?path=binned.txt"
expect_status 200 && [[ $BODY == "in the trash" ]] || t_err "binned.txt: $(short_body)"
t_end

# --- the master key in SANDBOXD_SECRETS_KEY: not in the backup ----------------
new_data_dir
EKEY=$(head -c 32 /dev/urandom | base64)
start_daemon SANDBOXD_NETWORK=none SANDBOXD_SECRETS_KEY="$EKEY" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
create_app external-key
api PUT "/v1/apps/$APP_ID/config/API_SECRET" '{"value":"sealed-under-the-env-key","sensitive":true}'
expect_status 201

t_begin "with SANDBOXD_SECRETS_KEY the manifest says the key is external"
BK2=$IT_TMP/backup-ext
env -i "PATH=$PATH" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
	SANDBOXD_SECRETS_KEY="$EKEY" "$SANDBOXD_BIN" backup "$BK2" >"$IT_TMP/bk2.out" 2>&1 ||
	t_err "backup: $(cat "$IT_TMP/bk2.out")"
BODY=$(cat "$BK2/manifest.json")
REQ=manifest.json
expect_json .secrets_key external && expect_json '[.files[].name] | join(",")' sandboxd.db
[[ ! -e $BK2/secret.key ]] || t_err "a secret.key is in the backup"
grep -q "external: keep it with the backup yourself" "$IT_TMP/bk2.out" || t_err "output: $(cat "$IT_TMP/bk2.out")"
t_end

stop_daemon
t_begin "restoring it needs the same SANDBOXD_SECRETS_KEY; then every secret opens"
new_data_dir
sbd restore "$BK2" >"$IT_TMP/r4.out" 2>&1 && t_err "restore without the key succeeded"
grep -q "set it to the same key" "$IT_TMP/r4.out" || t_err "message: $(cat "$IT_TMP/r4.out")"
env -i "PATH=$PATH" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
	SANDBOXD_SECRETS_KEY="$EKEY" "$SANDBOXD_BIN" restore "$BK2" >"$IT_TMP/r5.out" 2>&1 ||
	t_err "restore with the key: $(cat "$IT_TMP/r5.out")"
env -i "PATH=$PATH" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
	SANDBOXD_SECRETS_KEY="$EKEY" "$SANDBOXD_BIN" secrets check >"$IT_TMP/sc2.out" 2>&1
grep -q "secrets: 1 stored, 1 open, 0 do not" "$IT_TMP/sc2.out" || t_err "secrets check: $(cat "$IT_TMP/sc2.out")"
[[ ! -e $DATA/secret.key ]] || t_err "restore wrote a secret.key"
t_end

finish
