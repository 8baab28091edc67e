#!/usr/bin/env bash
# Snapshots under failure.  A kill -9 of the daemon in the middle of a
# snapshot's copy leaves no .tmp directory and no "taking" snapshot after
# the restart, and the app's container is not left paused; one in the
# middle of a restore's copy leaves the app on its old files or on the
# snapshot's, whole, never a mix, and no app.new; one in the middle of a
# fork leaves no half-made app (the next start deletes it).  A full data
# filesystem answers 507 insufficient_storage to a snapshot and to a
# restore, leaves no partial copy and the app untouched.  The copies are
# made slow enough to kill by giving the app many files (no fault hook).
. "$(dirname "$0")/lib.sh"
need_test_image
[[ $(id -u) == 0 ]] || bail "needs root (mounts a tmpfs)"
command -v python3 >/dev/null || bail "python3 is needed"

N=60000
SETTINGS=(SANDBOXD_IMAGE="$TEST_IMAGE")
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start"
DB=$DATA/state/sandboxd.db
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print("\n".join("|".join(map(str,x)) for x in c.execute(sys.argv[2]).fetchall()))' "$DB" "$1"; }
kill9() {
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
# many DIR N: N small files under DIR/many, the sandbox user's
many() {
	python3 - "$1/many" "$2" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(0, n, 1000):
    sub = os.path.join(d, "d%03d" % (i // 1000))
    os.makedirs(sub, exist_ok=True)
    for k in range(i, min(n, i + 1000)):
        with open(os.path.join(sub, "f%06d" % k), "w") as f:
            f.write("file %d\n" % k)
PY
	chown -R 1000:1000 "$1/many"
}
count() { find "$1/many" -type f 2>/dev/null | wc -l; }
# wait_path GLOB SECS: until a path matches (fast polling: the copy is short)
wait_path() {
	local i
	for ((i = 0; i < $2 * 100; i++)); do
		compgen -G "$1" >/dev/null && return 0
		sleep 0.01
	done
	return 1
}

t_begin "setup: a running app with $N files"
create_app crash && create_sandbox "$APP_ID" || bail "cannot make the app: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID CONTAINER=$SB_CONTAINER
WS=$DATA/workspaces/$SB/workspace/app
many "$WS" $N
echo a >"$WS/marker-a.txt"
chown 1000:1000 "$WS/marker-a.txt"
[[ $(count "$WS") == "$N" ]] || t_err "setup made $(count "$WS") files"
t_end

t_begin "kill -9 mid-snapshot: after the restart no .tmp, no taking row, the container not paused"
curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d '{"name":"killed"}' "$API_URL/v1/apps/$APP/snapshots" &
CURL=$!
wait_path "$DATA/snapshots/*.tmp/app/many/d0[0-9][0-9]" 60 || t_err "the copy was never seen"
[[ $(dinspect "$CONTAINER" '{{.State.Paused}}') == true ]] || t_err "the container was not paused during the copy"
kill9
wait "$CURL"
note "killed with $(find "$DATA"/snapshots/*.tmp -type f 2>/dev/null | wc -l) files copied"
[[ $(sql "SELECT status FROM snapshot") == taking ]] || t_err "the row was not 'taking' at the kill"
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start again"
compgen -G "$DATA/snapshots/*.tmp" >/dev/null && t_err "a .tmp directory is left: $(ls "$DATA/snapshots")"
[[ -z $(ls "$DATA/snapshots") ]] || t_err "snapshots/ holds $(ls "$DATA/snapshots")"
[[ $(sql "SELECT count(*) FROM snapshot") == 0 ]] || t_err "rows left: $(sql 'SELECT id, status FROM snapshot')"
api GET "/v1/apps/$APP/snapshots"
expect_status 200 && expect_jq '.snapshots == []' 'no snapshot listed'
wait_until 20 bash -c "[[ \$(docker inspect -f '{{.State.Paused}}' $CONTAINER) == false ]]" ||
	t_err "the container stayed paused"
[[ $(count "$WS") == "$N" && -e $WS/marker-a.txt ]] || t_err "the app's files changed"
t_end

t_begin "a snapshot, then a change (marker-a -> marker-b)"
api POST "/v1/apps/$APP/snapshots" '{"name":"a"}'
expect_status 201 && expect_json .files $((N + 1 + $(find "$WS" -type f -o -type l | grep -v -c -e /many/ -e marker-a)))
SA=$(j .id)
rm "$WS/marker-a.txt"
echo b >"$WS/marker-b.txt"
chown 1000:1000 "$WS/marker-b.txt"
t_end

t_begin "kill -9 mid-restore: the app on its old files or the snapshot's, whole; no app.new"
curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d "{\"snapshot_id\":\"$SA\"}" "$API_URL/v1/apps/$APP/restore" &
CURL=$!
wait_path "$WS.new/many/d0[0-9][0-9]" 120 || t_err "the restore's copy was never seen"
kill9
wait "$CURL"
note "killed with $(find "$WS.new" -type f 2>/dev/null | wc -l) files in app.new"
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start again"
[[ ! -e $WS.new ]] || t_err "app.new is left"
a=$([[ -e $WS/marker-a.txt ]] && echo 1 || echo 0)
b=$([[ -e $WS/marker-b.txt ]] && echo 1 || echo 0)
[[ $a$b == 10 || $a$b == 01 ]] || t_err "a mix: marker-a $a, marker-b $b"
[[ $(count "$WS") == "$N" ]] || t_err "many/ holds $(count "$WS") files, not $N"
note "after the restart the app is on its $([[ $a == 1 ]] && echo "snapshot's" || echo old) files"
[[ -z $(sql "SELECT id FROM snapshot WHERE step != ''") ]] || t_err "a restore step is still journaled"
[[ -z $(sql "SELECT id FROM snapshot WHERE status != 'ready'") ]] || t_err "a snapshot is not ready"
api POST "/v1/sandboxes/$SB/start"
wait_sb "$SB" '.status == "running"' 60
api POST "/v1/apps/$APP/restore" "{\"snapshot_id\":\"$SA\"}"
expect_status 201
[[ -e $WS/marker-a.txt && ! -e $WS/marker-b.txt && $(count "$WS") == "$N" ]] ||
	t_err "a restore after the crash did not bring the snapshot back whole"
t_end
t_begin "kill -9 mid-fork: after the restart no half-made app, the source whole"
# other workspaces than the source's being seeded
fork_seen() {
	local w
	for w in "$DATA"/workspaces/*/workspace/app/many/d0[0-9][0-9]; do
		[[ -e $w && $w != "$DATA/workspaces/$SB/"* ]] && return 0
	done
	return 1
}
napps=$(sql "SELECT count(*) FROM app")
curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d "{\"snapshot_id\":\"$SA\",\"name\":\"half\"}" "$API_URL/v1/apps/$APP/fork" &
CURL=$!
for ((i = 0; i < 6000; i++)); do fork_seen && break; sleep 0.01; done
fork_seen || t_err "the fork's copy was never seen"
kill9
wait "$CURL"
[[ -n $(ls "$DATA/snapshots/.forking" 2>/dev/null) ]] || t_err "no fork marker at the kill"
[[ $(sql "SELECT count(*) FROM app") == $((napps + 1)) ]] || t_err "the fork's app row was not there at the kill"
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start again"
[[ $(sql "SELECT count(*) FROM app") == "$napps" ]] || t_err "the half-made app is still there: $(sql 'SELECT id, name FROM app')"
[[ -z $(ls "$DATA/snapshots/.forking" 2>/dev/null) ]] || t_err "the marker is left"
[[ $(ls "$DATA/workspaces") == "$SB" ]] || t_err "workspaces left: $(ls "$DATA/workspaces")"
api GET /v1/apps
expect_jq '[.apps[].name] == ["crash"]' 'only the source is listed'
[[ $(count "$WS") == "$N" ]] || t_err "the source's files changed"
api POST "/v1/apps/$APP/fork" "{\"snapshot_id\":\"$SA\",\"name\":\"whole\"}"
expect_status 201 && expect_json .sandbox.status running
[[ $(count "$DATA/workspaces/$(j .sandbox.id)/workspace/app") == "$N" ]] || t_err "the fork after the crash is not whole"
api DELETE "/v1/apps/$(j .app.id)"
t_end

t_begin "kill -9 right after the exchange (journal set, the old tree in app.new): the start keeps the new files"
kill9
cp -a "$WS" "$WS.new" # the old tree, as the exchange leaves it
rm -f "$WS.new/marker-a.txt"
echo b >"$WS.new/marker-b.txt"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE snapshot SET step = ? WHERE id = ?", (sys.argv[2], sys.argv[3])); c.commit()' "$DB" "$SB" "$SA"
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start again"
[[ ! -e $WS.new ]] || t_err "app.new is left"
[[ -e $WS/marker-a.txt && ! -e $WS/marker-b.txt && $(count "$WS") == "$N" ]] || t_err "the new files are not whole"
[[ -z $(sql "SELECT id FROM snapshot WHERE step != ''") ]] || t_err "the step is still journaled"
api DELETE "/v1/snapshots/$SA"
expect_status 204
t_end
stop_daemon

# --- a full data filesystem -----------------------------------------------------

small_data_dir 160m sbxit-snapfull
start_daemon "${SETTINGS[@]}" || bail "the daemon did not start on the tmpfs"
# fill_to MB: leaves about MB mebibytes free (above the 16 MiB that count as full)
fill_to() {
	local free
	rm -f "$SMALL/filler"
	free=$(($(df -k --output=avail "$SMALL" | tail -n 1) / 1024))
	dd if=/dev/zero of="$SMALL/filler" bs=1M count=$((free - $1)) 2>/dev/null
	note "free now: $(($(df -k --output=avail "$SMALL" | tail -n 1) / 1024)) MiB"
}

t_begin "setup on a 160 MiB data filesystem: an app with 24 MiB of files"
create_app full '"runtime_preset":"static"' && create_sandbox "$APP_ID" '{}' || bail "no app: ${T_ERRS[*]}"
FAPP=$APP_ID FSB=$SB_ID
FWS=$DATA/workspaces/$FSB/workspace/app
head -c 25165824 /dev/urandom >"$FWS/big.bin"
echo kept >"$FWS/keep.txt"
chown 1000:1000 "$FWS/big.bin" "$FWS/keep.txt"
SUM=$(md5sum <"$FWS/big.bin")
t_end

t_begin "disk full: a snapshot answers 507, leaves nothing, the app untouched"
fill_to 20
api POST "/v1/apps/$FAPP/snapshots" '{"name":"too big"}'
expect_status 507 && expect_envelope insufficient_storage
[[ -z $(ls "$DATA/snapshots") ]] || t_err "snapshots/ holds $(ls "$DATA/snapshots")"
api GET "/v1/apps/$FAPP/snapshots"
expect_status 200 && expect_jq '.snapshots == []' 'no snapshot listed'
[[ $(md5sum <"$FWS/big.bin") == "$SUM" && $(cat "$FWS/keep.txt") == kept ]] || t_err "the app's files changed"
api GET "/v1/sandboxes/$FSB"
expect_json .status running
[[ $(dinspect "$(container_of "$FSB")" '{{.State.Paused}}') == false ]] || t_err "the container stayed paused"
t_end

t_begin "disk full: a restore answers 507 and the app keeps its files (no undo snapshot kept)"
rm -f "$SMALL/filler"
api POST "/v1/apps/$FAPP/snapshots" '{"name":"fits"}'
expect_status 201
SF=$(j .id)
echo changed >"$FWS/keep.txt"
# room for the undo snapshot (24 MiB), not for the restore's copy after it
fill_to 36
api POST "/v1/apps/$FAPP/restore" "{\"snapshot_id\":\"$SF\"}"
expect_status 507 && expect_envelope insufficient_storage
[[ $(cat "$FWS/keep.txt") == changed && $(md5sum <"$FWS/big.bin") == "$SUM" ]] || t_err "the app's files changed"
[[ ! -e $FWS.new ]] || t_err "app.new is left"
[[ $(ls "$DATA/snapshots") == "$SF" ]] || t_err "snapshots/ holds $(ls "$DATA/snapshots")"
rm -f "$SMALL/filler"
api POST "/v1/apps/$FAPP/restore" "{\"snapshot_id\":\"$SF\"}"
expect_status 201
[[ $(cat "$FWS/keep.txt") == kept ]] || t_err "with room, the restore did not bring keep.txt back"
t_end

finish
