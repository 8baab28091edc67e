#!/usr/bin/env bash
# What a published app's releases count in and where they go
# (docs/publish.md, "Disk, backups, the trash, the timeline and metrics"):
# a static app and a server app published, their releases in the app's
# disk figure and the metrics (requests per app and kind, releases by
# status, build seconds); moved to the trash they stop being served (the
# server's production container stopped), also after a daemon restart,
# and their releases stay, counted in the trash entry; restored they
# serve again; a backup carries the releases and a restore onto an empty
# data directory brings them back (root's, a server release's app/ the
# sandbox user's), both serving after start; a purge removes the
# releases and their rows, also when a kill -9 interrupted it; gc and
# doctor see a release directory of an app that is gone, and gc removes
# it and a stopped build container (never a running one).
. "$(dirname "$0")/lib.sh"
need_test_image

SETTINGS=(SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_DISK_USAGE_INTERVAL_SECONDS=5
	SANDBOXD_TRASH_PASS_INTERVAL_SECONDS=1 SANDBOXD_OPERATORS=it)
start_edge_daemon "${SETTINGS[@]}"
sbd() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_IMAGE="$TEST_IMAGE" "$SANDBOXD_BIN" "$@"
}
: >"$IT_TMP/empty.env"

LABEL=around-$$
PHOST=$LABEL.apps.localhost:$EDGE_PORT
INDEX='<!doctype html><title>around</title><p>published around</p>'
served() { edge_get "$PHOST" / && [[ $E_STATUS == 200 && $E_BODY == *"published around"* ]]; }
not_served() { edge_get "$PHOST" / && [[ $E_STATUS != 200 && $E_BODY != *"published around"* ]]; }
release_ready() {
	api GET "/v1/apps/$APP/releases/$REL"
	[[ $STATUS == 200 && $(j .status) != building ]]
}
disk_counts() {
	api GET "/v1/apps/$APP"
	[[ $STATUS == 200 && $(j '.disk.releases // 0') -ge 1 && $(j '.disk.releases_bytes // 0') -gt 0 ]]
}
metric() { grep -E "^$1 " <<<"$M" | awk '{print $2}'; }
scrape() { api GET /metrics && M=$BODY; }

t_begin "publish a static app (plain HTML, output \".\")"
create_app "$LABEL" '"runtime_preset":"static"' && create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID
api PUT "/v1/sandboxes/$SB/files?path=index.html" "$INDEX"
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=app.js" "console.log('around');"
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" $'version: 1\nweb:\n  command: python3 -m http.server 3000\n  port: 3000\npublish:\n  output: .\n'
expect_status 200
api POST "/v1/apps/$APP/publish" "{\"label\":\"$LABEL\"}"
expect_status 202 || bail "publish: $(short_body)"
REL=$(j .release.id)
ulid_ok "$REL" || bail "no release id: $(short_body)"
wait_until 120 release_ready || bail "the release did not finish: $(short_body)"
expect_json .status ready || bail "the release failed: $(j .error)"
wait_until 30 served || t_err "the published host does not serve: $E_STATUS $(head -c 200 <<<"$E_BODY")"
for i in 1 2 3 4; do edge_get "$PHOST" /app.js; done
[[ -d $DATA/releases/$APP/$REL ]] || t_err "no release directory $DATA/releases/$APP/$REL"
t_end

t_begin "publish a server app (node, no build)"
create_app "$LABEL-srv" && create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
SAPP=$APP_ID SSB=$SB_ID
api PUT "/v1/sandboxes/$SSB/files?path=edge-app.js" "@$IT_ROOT/tests/integration/edge-app.js"
expect_status 200
api PUT "/v1/sandboxes/$SSB/files?path=sandbox.yaml" $'version: 1\nweb:\n  command: node edge-app.js\n  port: 3000\n  health_path: /\npublish:\n  command: node edge-app.js\n  port: 3000\n  health_path: /\n'
expect_status 200
api POST "/v1/apps/$SAPP/publish" "{\"label\":\"$LABEL-srv\"}"
expect_status 202 || bail "publish: $(short_body)"
SREL=$(j .release.id)
SC=sandboxd-rel-${SREL,,}
srel_ready() {
	api GET "/v1/apps/$SAPP/releases/$SREL"
	[[ $STATUS == 200 && $(j .status) != building ]]
}
wait_until 150 srel_ready || bail "the server release did not finish: $(short_body)"
[[ $(j .status) == ready && $(j .kind) == server ]] ||
	bail "server release: $(short_body) $(tail -c 600 "$DATA/releases/$SAPP/$SREL/build.log" 2>/dev/null)"
SHOST=$LABEL-srv.apps.localhost:$EDGE_PORT
s_served() { [[ $(ecurl "$SHOST" /) == "hello from the app" ]]; }
wait_until 30 s_served || t_err "the server release does not answer: $(ecurl "$SHOST" / -i | head -c 200)"
container_running "$SC" || t_err "no running production container $SC"
t_end

t_begin "disk: the app's figure counts its releases, in the total"
wait_until 30 disk_counts || t_err "no releases in the disk figure: $(j .disk)"
expect_json .disk.releases 1
rb=$(j .disk.releases_bytes)
(($(j .disk.total_bytes) >= $(j .disk.bytes) + rb)) || t_err "total_bytes lacks the releases: $(j .disk)"
du_rb=$(du -sb "$DATA/releases/$APP" | cut -f1)
((rb >= du_rb)) || t_err "releases_bytes $rb, under the $du_rb bytes du counts"
api GET /v1/apps
expect_jq "[.apps[] | select(.id == \"$APP\") | .disk.releases_bytes > 0] == [true]" "the list shows the releases too"
t_end

t_begin "metrics: requests per published app, releases by status, build seconds"
scrape
expect_status 200
n=$(metric "sandboxd_publish_requests_total\\{app=\"$APP\",kind=\"static\"\\}")
[[ -n $n ]] && ((n >= 5)) || t_err "requests of the app: '${n}' ($(grep publish_requests <<<"$M" | head -3))"
n=$(metric "sandboxd_publish_requests_total\\{app=\"$SAPP\",kind=\"server\"\\}")
[[ -n $n ]] && ((n >= 1)) || t_err "requests of the server app: '${n}'"
[[ $(metric 'sandboxd_releases\{status="ready"\}') == 2 ]] || t_err "releases ready: $(grep '^sandboxd_releases' <<<"$M")"
[[ $(metric 'sandboxd_releases\{status="building"\}') == 0 ]] || t_err "releases building: $(grep '^sandboxd_releases' <<<"$M")"
[[ $(metric sandboxd_published_apps) == 2 ]] || t_err "published apps: $(metric sandboxd_published_apps)"
c=$(metric sandboxd_publish_build_seconds_count)
[[ -n $c ]] && ((c >= 2)) || t_err "build seconds count: '$c'"
grep -q '^# TYPE sandboxd_publish_requests_total counter' <<<"$M" || t_err "no TYPE line for the requests"
t_end

t_begin "the trash: trashed apps are not served, their releases stay and count in the entry"
api DELETE "/v1/apps/$APP"
expect_status 204
TID=$(header Sandboxd-Trash-Id)
api DELETE "/v1/apps/$SAPP"
expect_status 204
STID=$(header Sandboxd-Trash-Id)
wait_until 15 not_served || t_err "the trashed app is still served: $E_STATUS"
s_gone() { ! s_served && ! container_running "$SC"; }
wait_until 30 s_gone || t_err "the trashed server app is still served or its container runs"
[[ -d $DATA/releases/$APP/$REL && -d $DATA/releases/$SAPP/$SREL ]] || t_err "the releases went with the trash move"
trash_measured() { api GET /v1/trash && [[ $(j ".trash[] | select(.id == \"$TID\") | .bytes // 0") -ge $rb ]]; }
wait_until 20 trash_measured || t_err "the trash entry does not count the releases ($rb): $(short_body)"
t_end

t_begin "a restart keeps the trashed apps unserved"
stop_daemon
start_edge_daemon "${SETTINGS[@]}"
PHOST=$LABEL.apps.localhost:$EDGE_PORT SHOST=$LABEL-srv.apps.localhost:$EDGE_PORT
served && t_err "after a restart the trashed static app is served"
s_served && t_err "after a restart the trashed server app is served"
container_running "$SC" && t_err "after a restart the trashed server app's container runs"
t_end

t_begin "restore from the trash: the apps are served again"
api POST "/v1/trash/$TID/restore"
expect_status 200
api POST "/v1/trash/$STID/restore"
expect_status 200
wait_until 30 served || t_err "the restored app is not served: $E_STATUS $(head -c 200 <<<"$E_BODY")"
wait_until 30 s_served || t_err "the restored server app is not served: $(ecurl "$SHOST" / -i | head -c 200)"
t_end

t_begin "backup carries the releases; restored onto an empty data directory they serve again"
BK=$IT_TMP/backup
sbd backup "$BK" --workspaces >"$IT_TMP/backup.out" 2>&1 || t_err "backup: $(cat "$IT_TMP/backup.out")"
BODY=$(cat "$BK/manifest.json")
REQ=manifest.json
expect_json .releases.included true && expect_json .releases.apps 2
[[ -f $BK/releases/$APP/$REL/build.log ]] || t_err "the backup lacks the release: $(ls -R "$BK/releases" 2>&1 | head)"
grep -q "^releases: of 2 apps" "$IT_TMP/backup.out" || t_err "backup output: $(cat "$IT_TMP/backup.out")"
sum_before=$(cd "$DATA/releases" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
stop_daemon
# As on a new machine: the first data directory's production container
# goes, so the restored one must be made from the restored files.
docker rm -f "$SC" >/dev/null 2>&1
new_data_dir
sbd restore "$BK" >"$IT_TMP/restore.out" 2>&1 || t_err "restore: $(cat "$IT_TMP/restore.out")"
sum_after=$(cd "$DATA/releases" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
[[ $sum_before == "$sum_after" ]] || t_err "the restored releases differ from the backed-up ones"
[[ $(stat -c '%u %a' "$DATA/releases") == "0 700" ]] || t_err "releases/ is $(stat -c '%u %a' "$DATA/releases")"
[[ -z $(find "$DATA/releases/$APP" ! -user 0 | head -1) ]] || t_err "a restored static release entry is not root's"
[[ $(sqlite3 "$DATA/state/sandboxd.db" "SELECT count(*) FROM release WHERE path NOT LIKE '$DATA/releases/%'") == 0 ]] ||
	t_err "release rows name another data directory: $(sqlite3 "$DATA/state/sandboxd.db" 'SELECT path FROM release')"
[[ $(stat -c %u "$DATA/releases/$SAPP/$SREL") == 0 && $(stat -c %u "$DATA/releases/$SAPP/$SREL/app/edge-app.js") == 1000 ]] ||
	t_err "the server release's owners: $(stat -c '%u %n' "$DATA/releases/$SAPP/$SREL" "$DATA/releases/$SAPP/$SREL/app/edge-app.js")"
start_edge_daemon "${SETTINGS[@]}"
PHOST=$LABEL.apps.localhost:$EDGE_PORT SHOST=$LABEL-srv.apps.localhost:$EDGE_PORT
wait_until 60 served || t_err "after restore the app is not served: $E_STATUS $(head -c 200 <<<"$E_BODY")"
wait_until 90 s_served || t_err "after restore the server app is not served: $(ecurl "$SHOST" / -i | head -c 200)"
[[ $(dinspect "$SC" '{{range .Mounts}}{{.Source}} {{end}}') == *"$DATA/releases/$SAPP/$SREL/app"* ]] ||
	t_err "the production container does not mount the restored release: $(dinspect "$SC" '{{range .Mounts}}{{.Source}} {{end}}')"
t_end

t_begin "purge: the releases and their rows go with the app"
api DELETE "/v1/apps/$APP"
expect_status 204
TID=$(header Sandboxd-Trash-Id)
api DELETE "/v1/trash/$TID"
expect_status 204
gone() { [[ ! -e $DATA/releases/$APP ]]; }
wait_until 15 gone || t_err "the releases are still there: $(ls "$DATA/releases/$APP" 2>&1)"
[[ $(sqlite3 "$DATA/state/sandboxd.db" "SELECT count(*) FROM release WHERE app_id = '$APP'") == 0 ]] ||
	t_err "release rows remain"
[[ $(sqlite3 "$DATA/state/sandboxd.db" "SELECT count(*) FROM publication WHERE app_id = '$APP'") == 0 ]] ||
	t_err "the publication row remains"
not_served || t_err "the purged app is still served"
scrape
[[ $(metric sandboxd_published_apps) == 1 ]] || t_err "published apps after the purge: $(metric sandboxd_published_apps)"
grep -q "app=\"$APP\"" <<<"$M" && t_err "the purged app still has a requests series"
t_end

t_begin "kill -9 mid-purge: the start finishes it, releases and rows included"
api DELETE "/v1/apps/$SAPP"
expect_status 204
STID=$(header Sandboxd-Trash-Id)
stop_daemon
# The journal as a purge killed after its first step leaves it.
sqlite3 "$DATA/state/sandboxd.db" "UPDATE trash SET state = 'purging' WHERE id = '$STID'"
start_edge_daemon "${SETTINGS[@]}"
SHOST=$LABEL-srv.apps.localhost:$EDGE_PORT
s_purged() { [[ ! -e $DATA/releases/$SAPP ]]; }
wait_until 15 s_purged || t_err "the purged server app's releases are still there"
[[ $(sqlite3 "$DATA/state/sandboxd.db" "SELECT count(*) FROM release WHERE app_id = '$SAPP'") == 0 &&
	$(sqlite3 "$DATA/state/sandboxd.db" "SELECT count(*) FROM publication WHERE app_id = '$SAPP'") == 0 ]] ||
	t_err "the purged server app's rows remain"
s_served && t_err "the purged server app is served"
container_exists "$SC" && t_err "the purged server app's container is still there"
t_end

t_begin "gc and doctor: a release directory of an app that is gone"
ORPHAN=01JZZZZZZZZZZZZZZZZZZZZZZZ
mkdir -p "$DATA/releases/$ORPHAN/01JZZZZZZZZZZZZZZZZZZZZZZY/site"
head -c 300000 /dev/urandom >"$DATA/releases/$ORPHAN/01JZZZZZZZZZZZZZZZZZZZZZZY/site/big.bin"
sbd doctor >"$IT_TMP/doctor.out" 2>&1
grep -E "^warn +releases .*1 directory of apps that are gone" "$IT_TMP/doctor.out" >/dev/null ||
	t_err "doctor: $(grep releases "$IT_TMP/doctor.out")"
# A build container its daemon did not remove (a kill -9), stopped, and
# a running one (a build under way): only the first is gc's.
INST=$(sqlite3 "$DATA/state/sandboxd.db" "SELECT value FROM meta WHERE key = 'instance_id'")
OLDB=$(docker create --label sandboxd.build=01JZZZZZZZZZZZZZZZZZZZZZZX --label "sandboxd.instance=$INST" \
	--label sandboxd.managed=true "$TEST_IMAGE" true)
LIVEB=$(docker run -d --label sandboxd.build=01JZZZZZZZZZZZZZZZZZZZZZZW --label "sandboxd.instance=$INST" \
	--label sandboxd.managed=true --entrypoint sleep "$TEST_IMAGE" 300)
rm_builds() { docker rm -f "$OLDB" "$LIVEB" >/dev/null 2>&1; }
IT_CLEANUP_HOOKS+=(rm_builds)
# --repo: images of no repository, so this run touches none of the engine's.
sbd gc --repo sbxit-none-$$ >"$IT_TMP/gc.out" 2>&1 || t_err "gc dry run: $(cat "$IT_TMP/gc.out")"
grep -q "^would remove releases $DATA/releases/$ORPHAN" "$IT_TMP/gc.out" || t_err "gc: $(cat "$IT_TMP/gc.out")"
grep -q "^would remove build container ${OLDB:0:12} (release 01JZZZZZZZZZZZZZZZZZZZZZZX)" "$IT_TMP/gc.out" ||
	t_err "gc does not list the stopped build container: $(cat "$IT_TMP/gc.out")"
grep -q "${LIVEB:0:12}" "$IT_TMP/gc.out" && t_err "gc lists a running build container"
[[ -d $DATA/releases/$ORPHAN ]] || t_err "the dry run removed it"
container_exists "$OLDB" || t_err "the dry run removed the build container"
sbd gc --yes --repo sbxit-none-$$ >"$IT_TMP/gc.out" 2>&1 || t_err "gc --yes: $(cat "$IT_TMP/gc.out")"
[[ ! -e $DATA/releases/$ORPHAN ]] || t_err "gc --yes left it"
grep -q "^removed 1 release directory of apps that are gone (0 MiB) and 1 build container left over" "$IT_TMP/gc.out" ||
	t_err "gc: $(cat "$IT_TMP/gc.out")"
container_exists "$OLDB" && t_err "gc --yes left the stopped build container"
container_running "$LIVEB" || t_err "gc --yes touched the running build container"
rm_builds
t_end

finish
