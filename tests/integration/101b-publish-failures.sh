#!/usr/bin/env bash
# Publishing when things go wrong: bad input is refused before anything
# is built (400: no publish config, a bad label, commit or snapshot; 409
# host_taken, publish_in_progress); a failing build, a build past its
# timeout_seconds and a daemon killed (-9) mid-build each fail their
# release with the reason (and the log's tail), remove the build
# container, and leave the previous release serving; rollback to a
# failed release is 409 release_not_ready; a release of a commit builds
# that commit's files; past SANDBOXD_PUBLISH_KEEP the oldest release
# goes, rows and files; a snapshot's release builds its files; a build past
# its memory limit fails saying so.
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
DAEMON_ENV=("HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_PUBLISH_KEEP=6
	SANDBOXD_MEMORY_MB=256)
start_daemon "${DAEMON_ENV[@]}" || bail "the daemon did not come up"

publish() { # [BODY] -> RID (202 expected)
	local body=${1:-'{}'}
	RID=
	api POST "/v1/apps/$APP/publish" "$body"
	expect_status 202 || return 1
	RID=$(j .release.id)
	PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##; s#:[0-9]+$##'):$EDGE_PORT
}
publish_ready() {
	publish "$@" || return 1
	release_wait "$RID" 60 || return 1
	[[ $(j .status) == ready ]] || t_err "release $RID: $(short_body)"
}
# manifest BUILD [TIMEOUT]: sandbox.yaml with a publish: section (output ".").
manifest() {
	put_file sandbox.yaml "version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
publish:
  build: $1
  output: \".\"
  timeout_seconds: ${2:-60}
"
}
serves() { [[ $(ecurl "$PUB_HOST" /index.html) == "$1" ]]; }
builds_left() { docker ps -aq --filter "label=sandboxd.build=$1"; }

t_begin "setup: a static app, published once"
create_app "Fail Shop" '"runtime_preset":"static"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID SBC=$SB_CONTAINER
wait_until 60 eval '[[ $(ecurl "s-$SB-3000.preview.localhost:$EDGE_PORT" / -o /dev/null -w "%{http_code}") == 200 ]]' ||
	bail "the preview never answered"
put_file index.html r1
manifest "echo building r1"
publish_ready || bail "the first publish failed: ${T_ERRS[*]}"
R1=$RID
serves r1 || t_err "release 1 does not answer: '$(ecurl "$PUB_HOST" /index.html)'"
t_end

t_begin "bad input: 400 before anything is built, 409 host_taken"
api POST "/v1/apps/$APP/publish" '{"label":"Bad Label"}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/apps/$APP/publish" '{"commit":"not-hex"}'
expect_status 400
api POST "/v1/apps/$APP/publish" '{"commit":"abcd","snapshot":"01M0000000000000000000SNAP"}'
expect_status 400
api POST "/v1/apps/$APP/publish" '{"snapshot":"01M0000000000000000000SNAP"}'
expect_status 400
create_app "Other" && create_sandbox "$APP_ID" || t_err "no second app"
OAPP=$APP_ID
api PUT "/v1/sandboxes/$SB_ID/files?path=sandbox.yaml" 'version: 1
web:
  command: sleep infinity
  port: 3000
'
api POST "/v1/apps/$OAPP/publish" '{}'
expect_status 400 && expect_envelope invalid_request
[[ $(j .error.message) == *"publish:"* ]] || t_err "the message: $(j .error.message)"
api PATCH "/v1/apps/$OAPP/publish" '{"label":"fail-shop"}'
expect_status 409 && expect_envelope host_taken
api PATCH "/v1/apps/$OAPP/publish" '{"label":"other-shop","visibility":"private"}'
expect_status 200 && expect_json .label other-shop && expect_json .visibility private &&
	expect_json .published false
api GET "/v1/apps/$APP/releases"
[[ $(j '.releases | length') == 1 ]] || t_err "a refused publish made a row: $(short_body)"
t_end

t_begin "a failing build: failed with the log's tail, the previous release serving"
manifest "echo boom-marker-7; exit 7"
publish || bail "no publish"
F1=$RID
release_wait "$F1" 60
expect_json .status failed
[[ $(j .error) == *"exit 7"* && $(j .error) == *boom-marker-7* ]] || t_err "error: $(j .error)"
[[ -z $(builds_left "$F1") ]] || t_err "the build container is left"
serves r1 || t_err "release 1 no longer answers"
api GET "/v1/apps/$APP/publish"
expect_json .release.id "$R1"
t_end

t_begin "one build at a time (409 publish_in_progress); past timeout_seconds it fails"
manifest "sleep 60" 3
publish || bail "no publish"
T1=$RID
api POST "/v1/apps/$APP/publish" '{}'
expect_status 409 && expect_envelope publish_in_progress
t0=$(date +%s)
release_wait "$T1" 30
expect_json .status failed
[[ $(j .error) == *"longer than 3 seconds"* ]] || t_err "error: $(j .error)"
(($(date +%s) - t0 < 20)) || t_err "the timeout took $(($(date +%s) - t0)) s"
[[ -z $(builds_left "$T1") ]] || t_err "the build container is left"
serves r1 || t_err "release 1 no longer answers"
t_end

t_begin "a build past its memory limit (256 MB) fails and says so"
manifest "python3 -c 'b = b\"x\" * (768 << 20)'"
publish || bail "no publish"
M1=$RID
release_wait "$M1" 60
expect_json .status failed
[[ $(j .error) == *"out of memory"* && $(j .error) == *"256 MB"* ]] || t_err "error: $(j .error)"
[[ -z $(builds_left "$M1") ]] || t_err "the build container is left"
serves r1 || t_err "release 1 no longer answers"
t_end

t_begin "kill -9 mid-build: after a restart the build failed, its container gone, release 1 serving"
manifest "sleep 60" 120
publish || bail "no publish"
K1=$RID
wait_until 30 eval '[[ -n $(docker ps -q --filter "label=sandboxd.build=$K1") ]]' ||
	t_err "no build container running"
kill9_daemon
start_daemon "${DAEMON_ENV[@]}" || bail "the daemon did not come back"
api GET "/v1/apps/$APP/releases/$K1"
expect_json .status failed
[[ $(j .error) == *"daemon stopped"* ]] || t_err "error: $(j .error)"
[[ -z $(builds_left "$K1") ]] || t_err "the build container is left"
[[ ! -e $DATA/releases/$APP/$K1/work ]] || t_err "its work directory is left"
api GET "/v1/apps/$APP/publish"
expect_json .release.id "$R1"
wait_until 10 serves r1 || t_err "release 1 does not answer after the restart"
t_end

t_begin "rollback: to release 1 and back; a failed one is 409 release_not_ready"
put_file index.html r2
manifest "echo building r2"
publish_ready || t_err "the second good publish failed"
R2=$RID
serves r2 || t_err "release $R2 does not answer"
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R1\"}"
expect_status 200
serves r1 || t_err "after the rollback: '$(ecurl "$PUB_HOST" /index.html)'"
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R2\"}"
expect_status 200
serves r2 || t_err "after rolling forward"
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$F1\"}"
expect_status 409 && expect_envelope release_not_ready
t_end

t_begin "a commit: its files are built, HEAD recorded; an unknown commit fails"
gitc() { docker exec -u 1000:1000 -e HOME=/home/sandbox -w /home/sandbox/workspace/app "$SBC" git "$@"; }
put_file index.html c1
gitc init -q 2>/dev/null
gitc -c user.email=t@example.com -c user.name=t add -A &&
	gitc -c user.email=t@example.com -c user.name=t commit -qm c1 || t_err "git commit failed"
C1=$(gitc rev-parse HEAD)
put_file index.html c2
publish_ready "{\"commit\":\"${C1:0:12}\"}" || t_err "the commit's publish failed"
R3=$RID
expect_json .source commit
expect_json .commit "$C1"
serves c1 || t_err "the commit's release: '$(ecurl "$PUB_HOST" /index.html)'"
publish '{"commit":"deadbeefdeadbeef"}'
release_wait "$RID" 60
expect_json .status failed
[[ $(j .error) == *"not in the app's repository"* ]] || t_err "error: $(j .error)"
serves c1 || t_err "the previous release no longer answers"
t_end

t_begin "a snapshot: its files are built"
put_file index.html s1
api POST "/v1/apps/$APP/snapshots" '{"name":"for a release"}'
expect_status 201
SN=$(j .id)
put_file index.html s2
publish_ready "{\"snapshot\":\"$SN\"}" || t_err "the snapshot's publish failed"
expect_json .source snapshot
expect_json .source_ref "$SN"
serves s1 || t_err "the snapshot's release: '$(ecurl "$PUB_HOST" /index.html)'"
t_end

t_begin "keep N (6): the oldest releases go, rows and files; the active one stays"
# 9 releases were made: the 3 oldest (1 to 3) went.
api GET "/v1/apps/$APP/releases"
[[ $(j '[.releases[].number] | join(",")') == 9,8,7,6,5,4 ]] ||
	t_err "releases kept: $(j '[.releases[].number] | join(",")')"
for r in "$R1" "$F1" "$T1"; do
	api GET "/v1/apps/$APP/releases/$r"
	expect_status 404
	[[ ! -e $DATA/releases/$APP/$r ]] || t_err "the files of $r are left"
done
api GET "/v1/apps/$APP/publish"
expect_json .release.id "$RID"
t_end

finish
