#!/usr/bin/env bash
# Snapshots, restore and fork (docs/snapshots.md).  A snapshot of a
# running app pauses it for the copy alone (pause_ms) and the app serves
# after; later writes to the workspace never change a snapshot; list,
# show and delete, ours and the reference's routes; a restore takes an
# undo snapshot first and restoring to it undoes it; a running task
# refuses a restore (409 task_in_progress); a fork makes a new app whose
# own preview serves the snapshot's files while the source keeps serving
# throughout; another tenant gets 404; the per-app cap answers 409
# snapshot_limit; the trash keeps an app's snapshots and a purge removes
# them.
. "$(dirname "$0")/lib.sh"
need_test_image
command -v python3 >/dev/null || bail "python3 is needed"

CAP=8
start_edge_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_SNAPSHOTS_MAX_PER_APP=$CAP SANDBOXD_DISK_USAGE_INTERVAL_SECONDS=5 \
	SANDBOXD_API_TOKENS=it=$IT_TOKEN,b=tok-b-tenant
TOKEN_B=tok-b-tenant

# The app: content.txt as its answer, so a preview says which files it runs on.
APPJS="require('http').createServer((q, r) => r.end(require('fs').readFileSync(__dirname + '/content.txt', 'utf8'))).listen(3000);"
put_file() { api PUT "/v1/sandboxes/$1/files?path=$2" "$3"; expect_status 200; }
file_of() { cat "$DATA/workspaces/$1/workspace/app/$2" 2>/dev/null; }
answer() { ecurl "s-$1-3000.preview.localhost:$EDGE_PORT" /; }
answers() { [[ $(answer "$1") == "$2" ]]; }

t_begin "setup: a running app whose preview serves content.txt"
create_app "Snap App" && create_sandbox "$APP_ID" || bail "cannot make the app: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID CONTAINER=$SB_CONTAINER
put_file "$SB" app.js "$APPJS"
put_file "$SB" content.txt one
put_file "$SB" sandbox.yaml $'version: 1\nweb:\n  command: node app.js\n  port: 3000\n'
wait_until 60 answers "$SB" one || bail "the preview did not come up: $(answer "$SB")"
t_end

t_begin "a snapshot of the running app: ready, paused for the copy (pause_ms), still serving after"
api POST "/v1/apps/$APP/snapshots" '{"name":"v1"}'
expect_status 201
S1=$(j .id)
ulid_ok "$S1" || t_err "id: $S1"
expect_json .status ready && expect_json .name v1 && expect_json .app_id "$APP" &&
	expect_json .source_sandbox_id "$SB" && expect_json .reason manual &&
	expect_json .created_by it
expect_jq '.method == "copy" or .method == "reflink"' 'method copy or reflink'
expect_jq '(.pause_ms | type) == "number" and .pause_ms >= 0 and .pause_ms < 5000' 'pause_ms measured'
expect_jq '.files >= 3 and .size_bytes >= 3 and .own_bytes <= .size_bytes' 'files and sizes counted'
expect_jq '.created_at | test("^[0-9]{4}-")' 'created_at RFC 3339'
[[ $(dinspect "$CONTAINER" '{{.State.Paused}}') == false ]] || t_err "the container stayed paused"
answers "$SB" one || t_err "the app does not serve after the snapshot: $(answer "$SB")"
[[ $(cat "$DATA/snapshots/$S1/app/content.txt" 2>/dev/null) == one ]] ||
	t_err "the snapshot's content.txt is not 'one'"
[[ $(stat -c %a "$DATA/snapshots") == 700 ]] || t_err "snapshots/ is not 0700"
t_end

t_begin "immutable: writes to the workspace after it do not change the snapshot"
put_file "$SB" content.txt two
docker exec -u 1000 "$CONTAINER" sh -c 'echo "// more" >> /home/sandbox/workspace/app/app.js'
[[ $(cat "$DATA/snapshots/$S1/app/content.txt") == one ]] || t_err "the snapshot's file changed"
[[ $(stat -c %i "$DATA/snapshots/$S1/app/app.js") != $(stat -c %i "$DATA/workspaces/$SB/workspace/app/app.js") ]] ||
	t_err "the snapshot shares app.js's inode with the workspace"
grep -q more "$DATA/snapshots/$S1/app/app.js" && t_err "app.js of the snapshot changed"
wait_until 30 answers "$SB" two || t_err "the app does not serve its new content: $(answer "$SB")"
t_end

t_begin "list and show: per app, per tenant, one; the app's disk counts it"
api GET "/v1/apps/$APP/snapshots"
expect_status 200 && expect_jq "[.snapshots[].id] == [\"$S1\"]" 'the app lists S1'
api GET /v1/snapshots
expect_status 200 && expect_jq "[.snapshots[].id] | index(\"$S1\") != null" 'the tenant lists S1'
api GET "/v1/snapshots/$S1"
expect_status 200 && expect_json .name v1 && expect_json .status ready
S1OWN=$(j .own_bytes)
wait_until 30 eval 'api GET "/v1/apps/$APP"; [[ $(j .disk.snapshots) == 1 ]]' ||
	t_err "the app's disk does not count the snapshot: $(j .disk)"
expect_json .disk.snapshot_bytes "$S1OWN"
t_end

t_begin "the reference's route: POST /v1/snapshots {source_sandbox_id,name}, DELETE"
api POST /v1/snapshots "{\"source_sandbox_id\":\"$SB\",\"name\":\"ref\"}"
expect_status 201 && expect_json .app_id "$APP" && expect_json .name ref
REF=$(j .id)
[[ $(cat "$DATA/snapshots/$REF/app/content.txt" 2>/dev/null) == two ]] || t_err "the ref snapshot is not of now"
api POST /v1/snapshots '{"name":"x"}'
expect_status 400 && expect_envelope invalid_request
api POST /v1/snapshots '{"source_sandbox_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}'
expect_status 404
api DELETE "/v1/snapshots/$REF"
expect_status 204
api GET "/v1/snapshots/$REF"
expect_status 404
[[ ! -e $DATA/snapshots/$REF ]] || t_err "the deleted snapshot's files are still there"
t_end

t_begin "another tenant: every snapshot route is 404, its list empty"
api_as "$TOKEN_B" GET "/v1/snapshots/$S1"
expect_status 404 && expect_envelope not_found
api_as "$TOKEN_B" DELETE "/v1/snapshots/$S1"
expect_status 404
api_as "$TOKEN_B" GET "/v1/apps/$APP/snapshots"
expect_status 404
api_as "$TOKEN_B" POST "/v1/apps/$APP/snapshots" '{}'
expect_status 404
api_as "$TOKEN_B" POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$S1\"}"
expect_status 404
api_as "$TOKEN_B" POST "/v1/apps/$APP/fork" '{}'
expect_status 404
api_as "$TOKEN_B" POST /v1/snapshots "{\"source_sandbox_id\":\"$SB\"}"
expect_status 404
api_as "$TOKEN_B" GET /v1/snapshots
expect_status 200 && expect_jq '.snapshots == []' 'no snapshots for tenant b'
[[ -e $DATA/snapshots/$S1 ]] || t_err "tenant b's delete removed the files"
t_end

t_begin "restore: undo snapshot first, files back, sandbox running and serving the old content"
api POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$S1\"}"
expect_status 201 && expect_json .restored_from "$S1" && expect_json .sandbox.id "$SB" &&
	expect_json .sandbox.status running
UNDO=$(j .undo_snapshot_id)
ulid_ok "$UNDO" || t_err "undo_snapshot_id: $UNDO"
[[ $(file_of "$SB" content.txt) == one ]] || t_err "content.txt is not back to 'one'"
grep -q more "$DATA/workspaces/$SB/workspace/app/app.js" && t_err "app.js still has the later line"
[[ ! -e $DATA/workspaces/$SB/workspace/app.new ]] || t_err "app.new left behind"
wait_until 60 answers "$SB" one || t_err "the restored app does not serve 'one': $(answer "$SB")"
api GET "/v1/snapshots/$UNDO"
expect_json .reason before_restore
[[ $(cat "$DATA/snapshots/$UNDO/app/content.txt" 2>/dev/null) == two ]] || t_err "the undo snapshot is not of before"
t_end

t_begin "undo: a restore to undo_snapshot_id brings the later files back"
api POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$UNDO\"}"
expect_status 201 && expect_json .restored_from "$UNDO"
[[ $(file_of "$SB" content.txt) == two ]] || t_err "content.txt is not 'two' again"
grep -q more "$DATA/workspaces/$SB/workspace/app/app.js" || t_err "app.js lost the later line"
wait_until 60 answers "$SB" two || t_err "the app does not serve 'two': $(answer "$SB")"
api POST "/v1/apps/$APP/restore" '{"snapshot_id":"nope"}'
expect_status 400
api POST "/v1/apps/$APP/restore" '{"snapshot_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}'
expect_status 404
t_end

t_begin "a running task refuses a restore (409 task_in_progress); the files stay"
submit "$SB" '{"prompt":"[[fake:sleep=30]] long"}'
T=$TASK_ID
api POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$S1\"}"
expect_status 409 && expect_envelope task_in_progress
[[ $(file_of "$SB" content.txt) == two ]] || t_err "the files changed"
api POST "/v1/sandboxes/$SB/tasks/$T/cancel"
wait_task "$SB" "$T" 30
t_end

t_begin "fork from S1: the source serves throughout, the fork's own preview serves the snapshot's files"
wait_until 60 answers "$SB" two || t_err "the source does not serve before the fork"
(
	while [[ ! -e $IT_TMP/fork.done ]]; do
		a=$(answer "$SB")
		[[ $a == two ]] && echo ok || echo "bad: ${a:0:80}"
		sleep 0.05
	done
) >"$IT_TMP/poll.log" &
POLL=$!
api PUT "/v1/apps/$APP/config/GREETING" '{"value":"hi"}'
api POST "/v1/apps/$APP/fork" "{\"snapshot_id\":\"$S1\",\"name\":\"Snap Fork\"}"
expect_status 201 && expect_json .app.name "Snap Fork" && expect_json .snapshot_id "$S1" &&
	expect_json .sandbox.status running
FAPP=$(j .app.id) FSB=$(j .sandbox.id)
[[ $FAPP != "$APP" && $FSB != "$SB" ]] || t_err "the fork is not a new app and sandbox"
wait_until 60 answers "$FSB" one || t_err "the fork's preview does not serve 'one': $(answer "$FSB")"
touch "$IT_TMP/fork.done"
wait "$POLL"
grep -q ok "$IT_TMP/poll.log" || t_err "the source was never polled"
! grep -q bad "$IT_TMP/poll.log" || t_err "the source failed during the fork: $(grep bad "$IT_TMP/poll.log" | head -3)"
note "source polled $(grep -c ok "$IT_TMP/poll.log") times during the fork, all answered"
answers "$SB" two || t_err "the source does not serve 'two' after the fork"
api GET "/v1/apps/$FAPP/config"
expect_status 200 && expect_jq '[.. | objects | select(.key? == "GREETING")] | length == 0' 'no config copied unasked'
[[ $(stat -c %u "$DATA/workspaces/$FSB/workspace/app/content.txt") == 1000 ]] || t_err "the fork's files are not the sandbox user's"
t_end

t_begin "fork of now, config copied when asked, default name; a taken name is 409"
api POST "/v1/apps/$APP/fork" '{"copy_config":true}'
expect_status 201 && expect_json .app.name "Snap App-fork"
F2=$(j .app.id) F2SB=$(j .sandbox.id) F2S=$(j .snapshot_id)
api GET "/v1/snapshots/$F2S"
expect_json .reason fork
[[ $(file_of "$F2SB" content.txt) == two ]] || t_err "the fork of now is not of now"
api GET "/v1/apps/$F2/config/GREETING"
expect_status 200 && expect_json .value hi
api POST "/v1/apps/$APP/fork" '{"name":"Snap Fork"}'
expect_status 409 && expect_envelope conflict
t_end

t_begin "the timeline: snapshot.taken, snapshot.deleted, snapshot.restored, app.forked; app.created on the fork"
api GET "/v1/apps/$APP/events?limit=200"
expect_status 200
expect_jq "[.events[] | select(.type == \"snapshot.taken\" and .snapshot_id == \"$S1\" and .actor == \"it\" and .payload.name == \"v1\")] | length == 1" 'snapshot.taken of S1 by it'
expect_jq "[.events[] | select(.type == \"snapshot.deleted\" and .snapshot_id == \"$REF\")] | length == 1" 'snapshot.deleted of REF'
expect_jq "[.events[] | select(.type == \"snapshot.restored\" and .snapshot_id == \"$S1\" and .payload.undo_snapshot_id == \"$UNDO\")] | length == 1" 'snapshot.restored to S1 with its undo'
expect_jq "[.events[] | select(.type == \"app.forked\" and .payload.app_id == \"$FAPP\" and .snapshot_id == \"$S1\")] | length == 1" 'app.forked naming the fork'
api GET "/v1/apps/$FAPP/events?type=app."
expect_status 200
expect_jq "[.events[] | select(.type == \"app.created\" and .payload.forked_from == \"$APP\" and .payload.snapshot_id == \"$S1\")] | length == 1" 'app.created {forked_from, snapshot_id} on the fork'
t_end

t_begin "dependencies by reference: a react-vite app's node_modules are store links in its snapshot; its fork serves at once"
create_app "Vite App" '"runtime_preset":"react-vite"' && create_sandbox "$APP_ID" || t_err "no react-vite app"
VAPP=$APP_ID VSB=$SB_ID
F=app/node_modules/react/package.json
# the first boot's dependency pass has put the file in the store (a pass
# may log before it reaches every file: wait on the file itself)
store_linked() {
	local f=$DATA/workspaces/$1/workspace/$F h
	[[ -f $f ]] || return 1
	h=$(sha256sum "$f" | cut -c1-64)
	[[ $(stat -c %i "$f") == $(stat -c %i "$DATA/store/$h" 2>/dev/null) ]]
}
wait_until 120 grep -q "dedup: sandbox $VSB" "$DAEMON_ERR" || t_err "no dedup pass over the app"
wait_until 120 store_linked "$VSB" || t_err "node_modules/react/package.json never went to the store"
# The first boot's passes may still be linking the rest: a snapshot taken
# before they end owns what they have not reached.  Snapshot until most
# bytes are shared (each earlier try deleted), as the store fills.
snap_tries=0
shared_snapshot() {
	snap_tries=$((snap_tries + 1))
	api POST "/v1/apps/$VAPP/snapshots" '{"name":"with deps"}'
	[[ $STATUS == 201 ]] || return 1
	VS=$(j .id)
	jq -e '.own_bytes * 2 < .size_bytes' <<<"$BODY" >/dev/null && return 0
	note "try $snap_tries: $(j .own_bytes) of $(j .size_bytes) bytes own; again"
	api DELETE "/v1/snapshots/$VS"
	sleep 1 # a pass takes a second or so: not a snapshot (and a pause) every 0.1 s
	return 1
}
wait_until 120 shared_snapshot || t_err "no snapshot of the app shares most of its bytes with the store: $(short_body)"
note "react-vite snapshot: $(j .files) files, $(j .size_bytes) bytes, $(j .own_bytes) own, $(j .method), paused $(j .pause_ms) ms ($snap_tries tries)"
h=$(sha256sum "$DATA/snapshots/$VS/$F" | cut -c1-64)
[[ $(stat -c %i "$DATA/snapshots/$VS/$F") == $(stat -c %i "$DATA/store/$h" 2>/dev/null) ]] ||
	t_err "node_modules/react/package.json is not the store's entry"
t0=$(date +%s%N)
api POST "/v1/apps/$VAPP/fork" "{\"snapshot_id\":\"$VS\"}"
expect_status 201
VFSB=$(j .sandbox.id)
vite_up() { [[ $(ecurl "s-$VFSB-3000.preview.localhost:$EDGE_PORT" / -o /dev/null -w '%{http_code}') == 200 ]]; }
wait_until 90 vite_up || t_err "the fork's Vite preview does not answer"
note "fork to its preview answering: $((($(date +%s%N) - t0) / 1000000)) ms"
[[ $(stat -c %i "$DATA/workspaces/$VFSB/workspace/$F") == $(stat -c %i "$DATA/store/$h") ]] ||
	t_err "the fork's node_modules file is not the store's entry"
t_end

t_begin "the command line: snapshot create|list|show|delete, app restore, app fork"
cli() { SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN XDG_CONFIG_HOME=$IT_TMP/xdg "$SANDBOXD_BIN" "$@" </dev/null 2>"$IT_TMP/cli.err"; }
CS=$(cli snapshot create "$APP" --name "from cli" -q)
ulid_ok "$CS" || t_err "snapshot create -q printed '$CS': $(cat "$IT_TMP/cli.err")"
cli snapshot list "$APP" | grep -q "from cli" || t_err "snapshot list APP does not show it"
cli snapshot list | grep -q "$CS" || t_err "snapshot list does not show it"
[[ $(cli snapshot show "$CS" --json | jq -r .name) == "from cli" ]] || t_err "snapshot show --json"
head=$(git -c safe.directory='*' -C "$DATA/workspaces/$SB/workspace/app" rev-parse -q --verify HEAD 2>/dev/null || echo null)
api GET "/v1/snapshots/$CS"
expect_json .commit "$head"
note "the snapshot's commit: $head"
out=$(cli app restore "$APP" "$S1") || t_err "app restore failed: $(cat "$IT_TMP/cli.err")"
[[ $out == *"undo with: sandboxd app restore $APP "* ]] || t_err "app restore does not say how to undo: $out"
[[ $(file_of "$SB" content.txt) == one ]] || t_err "app restore did not restore"
CF=$(cli app fork "$APP" --snapshot "$S1" --name "Cli Fork" -q)
ulid_ok "$CF" || t_err "app fork -q printed '$CF': $(cat "$IT_TMP/cli.err")"
api GET "/v1/apps/$CF"
expect_status 200 && expect_json .name "Cli Fork"
cli snapshot delete "$CS" --yes >/dev/null || t_err "snapshot delete failed: $(cat "$IT_TMP/cli.err")"
api GET "/v1/snapshots/$CS"
expect_status 404
t_end

t_begin "the cap: SANDBOXD_SNAPSHOTS_MAX_PER_APP answers 409 snapshot_limit, naming the setting"
for ((i = 0; i < CAP + 2; i++)); do
	api POST "/v1/apps/$APP/snapshots" '{}'
	[[ $STATUS == 201 ]] || break
done
expect_status 409 && expect_envelope snapshot_limit
[[ $(j .error.message) == *SANDBOXD_SNAPSHOTS_MAX_PER_APP* ]] || t_err "message: $(j .error.message)"
api GET "/v1/apps/$APP/snapshots"
expect_jq ".snapshots | length == $CAP" "$CAP snapshots kept"
ls "$DATA/snapshots" | grep -q tmp && t_err "a .tmp directory is left"
t_end

t_begin "the trash keeps an app's snapshots; the purge removes them"
api DELETE "/v1/apps/$APP"
expect_status 204
TID=$(header Sandboxd-Trash-Id)
[[ -e $DATA/snapshots/$S1 ]] || t_err "the snapshot went with the delete to the trash"
api DELETE "/v1/trash/$TID"
expect_status 204
api GET "/v1/snapshots/$S1"
expect_status 404
[[ ! -e $DATA/snapshots/$S1 ]] || t_err "the purge left the snapshot's files"
api GET "/v1/snapshots/$F2S"
expect_status 404
t_end

finish
