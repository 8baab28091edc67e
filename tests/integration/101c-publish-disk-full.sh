#!/usr/bin/env bash
# A full data filesystem: a publish answers 507 insufficient_storage
# before anything is built (no row, nothing written, the serving release
# untouched); a build that fills the disk fails its release (the log's
# tail says so), its files removed, and the previous release serves on.
. "$(dirname "$0")/lib.sh"
need_docker

small_data_dir 160m sbxit-pubfull
EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
start_daemon "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 ||
	bail "the daemon did not start on the tmpfs"
# fill_to MB: leaves about MB mebibytes free (below 16 MiB counts as full)
fill_to() {
	local free
	rm -f "$SMALL/filler"
	free=$(($(df -k --output=avail "$SMALL" | tail -n 1) / 1024))
	dd if=/dev/zero of="$SMALL/filler" bs=1M count=$((free - $1)) 2>/dev/null
	note "free now: $(($(df -k --output=avail "$SMALL" | tail -n 1) / 1024)) MiB"
}
manifest() {
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" "version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
publish:
  build: $1
  output: \".\"
"
	expect_status 200
}
serves() { [[ $(ecurl "$PUB_HOST" /index.html) == "$1" ]]; }

t_begin "setup on a 160 MiB data filesystem: a static app, published"
create_app full '"runtime_preset":"static"' && create_sandbox "$APP_ID" ||
	bail "no app: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID
wait_until 60 eval '[[ -e $DATA/workspaces/$SB/.sandboxd/seeded ]]' || bail "not seeded"
api PUT "/v1/sandboxes/$SB/files?path=index.html" d1
manifest "echo fine"
api POST "/v1/apps/$APP/publish" '{}'
expect_status 202 || bail "publish: $(short_body)"
R1=$(j .release.id)
PUB_HOST=$(j .url | sed -E 's#^https?://##; s#:[0-9]+$##'):$EDGE_PORT
release_wait "$R1" 60
expect_json .status ready || bail "release 1: $(short_body)"
serves d1 || t_err "release 1 does not answer"
t_end

t_begin "disk full: 507 before anything is built; the serving release untouched"
fill_to 10
api POST "/v1/apps/$APP/publish" '{}'
expect_status 507 && expect_envelope insufficient_storage
api GET "/v1/apps/$APP/releases"
[[ $(j '.releases | length') == 1 ]] || t_err "a row was made: $(short_body)"
[[ $(ls "$DATA/releases/$APP") == "$R1" ]] || t_err "releases/ holds $(ls "$DATA/releases/$APP")"
serves d1 || t_err "release 1 no longer answers"
t_end

t_begin "a build that fills the disk: its release fails, its files go, release 1 serves"
rm -f "$SMALL/filler"
manifest "head -c 200000000 /dev/zero >big.bin"
fill_to 60
api POST "/v1/apps/$APP/publish" '{}'
expect_status 202 || t_err "publish: $(short_body)"
R2=$(j .release.id)
release_wait "$R2" 60
expect_json .status failed
[[ $(j .error) == *"the build command failed"* && $(j .error) == *"No space left"* ]] ||
	t_err "error: $(j .error)"
[[ $(ls "$DATA/releases/$APP/$R2") == build.log ]] || t_err "left: $(ls "$DATA/releases/$APP/$R2")"
serves d1 || t_err "release 1 no longer answers"
api GET "/v1/apps/$APP/publish"
expect_json .release.id "$R1"
rm -f "$SMALL/filler"
t_end

finish
