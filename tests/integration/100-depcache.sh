#!/usr/bin/env bash
# The dependency cache: a second app with the same install installs
# nothing.  Three static apps get a sandbox.yaml with an install step (a
# command that makes node_modules/x/index.js of 100 KB and counts its
# runs in a file outside node_modules) through the files API.  The
# first installs; once the supervisor wrote its key, the watcher keeps
# its tree in <data>/depcache/<key> (the big file a link of the store).
# The second, with the same command and the same input file, is seeded
# before its install would run: it never runs (no install.log, no
# counter), its node_modules/x/index.js is the store entry's inode and
# its preview answers.  The third, whose input file differs, installs.
# `sandboxd gc` removes an entry unused for SANDBOXD_DEPCACHE_MAX_AGE_DAYS
# and keeps a recent one.
. "$(dirname "$0")/lib.sh"
need_test_image

sbd() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_IMAGE="$TEST_IMAGE" "$SANDBOXD_BIN" "$@"
}
: >"$IT_TMP/empty.env"

MANIFEST='version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
  health_path: /
install:
  command: mkdir -p node_modules/x && yes dependency | head -c 102400 >node_modules/x/index.js && echo run >>"$HOME/install-count"
  inputs: [deps.lock]
  timeout_seconds: 60
'

# app_with_install NAME LOCK -> SB, WS, C: a static app whose install's
# input holds LOCK, configured with the manifest above.
app_with_install() {
	SB= WS= C=
	create_app "$1" '"runtime_preset":"static"' || return 1
	create_sandbox "$APP_ID" || return 1
	SB=$SB_ID WS=$DATA/workspaces/$SB_ID C=$SB_CONTAINER
	api PUT "/v1/sandboxes/$SB/files?path=deps.lock" "$2"
	expect_status 200 || return 1
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" "$MANIFEST"
	expect_status 200
}
store_entry_of() { echo "$DATA/store/$(sha256sum "$1" | cut -c1-64)"; }

start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

t_begin "the first app installs; its tree is kept under the install key"
app_with_install dc1 'lock v1' || bail "no sandbox: $(short_body)"
SB1=$SB WS1=$WS
wait_sb "$SB1" '.install.state == "done" and .preview.status == "ready"' 90
KEY=$(tr -d '\n' <"$WS1/.sandboxd/install.key" 2>/dev/null)
[[ $KEY =~ ^[0-9a-f]{64}$ ]] || t_err "install.key: '$KEY'"
[[ $(cat "$WS1/install-count" 2>/dev/null) == run ]] || t_err "install-count: $(cat "$WS1/install-count" 2>&1)"
E=$DATA/depcache/$KEY
wait_until 60 test -f "$E/trees" || t_err "no entry $E: $(grep depcache "$DAEMON_ERR" | tail -n 3)"
F=workspace/app/node_modules/x/index.js
S=$(store_entry_of "$WS1/$F")
[[ $(stat -c %i "$E/$F" 2>/dev/null) == "$(stat -c %i "$S" 2>/dev/null)" ]] ||
	t_err "the entry's index.js is not the store entry $S"
[[ -e $E/workspace/app/deps.lock || -e $E/install-count ]] && t_err "the entry holds more than node_modules"
grep -h "depcache: sandbox $SB1" "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null | sed 's/^/#   /' | tail -n 1
t_end

t_begin "a second app with the same install and input is seeded: its install never runs"
app_with_install dc2 'lock v1' || bail "no sandbox: $(short_body)"
SB2=$SB WS2=$WS
wait_sb "$SB2" '.preview.status == "ready"' 90
[[ $(tr -d '\n' <"$WS2/.sandboxd/install.key" 2>/dev/null) == "$KEY" ]] || t_err "install.key is not $KEY"
[[ -e $WS2/install-count ]] && t_err "the install ran: install-count $(cat "$WS2/install-count")"
[[ -e $WS2/.sandboxd/logs/install.log ]] && t_err "the install ran: $(tail -n 3 "$WS2/.sandboxd/logs/install.log")"
[[ $(stat -c %i "$WS2/$F" 2>/dev/null) == "$(stat -c %i "$S")" ]] || t_err "index.js is not the store entry"
[[ $(stat -c '%u %a' "$WS2/$F" 2>/dev/null) == "0 444" ]] || t_err "index.js: $(stat -c '%u %a' "$WS2/$F")"
[[ $(stat -c %u "$WS2/workspace/app/node_modules/x") == 1000 ]] || t_err "node_modules/x is not the sandbox user's"
api GET "/v1/sandboxes/$SB2"
expect_jq '.install.state == "done" and .install.exit_code == null' "done without running"
code=$(sb_http "$C" http://127.0.0.1:3000/)
[[ $code == 200 ]] || t_err "the web process answers $code"
t_end

t_begin "a third app whose input differs installs for itself"
app_with_install dc3 'lock v2' || bail "no sandbox: $(short_body)"
SB3=$SB WS3=$WS
wait_sb "$SB3" '.install.state == "done" and .preview.status == "ready"' 90
[[ $(cat "$WS3/install-count" 2>/dev/null) == run ]] || t_err "install-count: $(cat "$WS3/install-count" 2>&1)"
KEY3=$(tr -d '\n' <"$WS3/.sandboxd/install.key" 2>/dev/null)
[[ $KEY3 =~ ^[0-9a-f]{64}$ && $KEY3 != "$KEY" ]] || t_err "install.key: '$KEY3'"
wait_until 60 test -f "$DATA/depcache/$KEY3/trees" || t_err "no entry for $KEY3"
t_end

t_begin "gc removes an entry unused for SANDBOXD_DEPCACHE_MAX_AGE_DAYS and keeps a recent one"
touch -d '40 days ago' "$E"
out=$(sbd gc --repo "sbxit-depcache-none-$$" 2>&1)
grep -q "^would remove 1 dependency-cache entry" <<<"$out" || t_err "gc dry run said: $out"
[[ -d $E ]] || t_err "the dry run removed $E"
out=$(sbd gc --repo "sbxit-depcache-none-$$" --yes 2>&1)
grep -q "^removed 1 dependency-cache entry" <<<"$out" || t_err "gc said: $out"
[[ -e $E ]] && t_err "$E is still there"
[[ -d $DATA/depcache/$KEY3 ]] || t_err "the recent entry went too"
[[ -e $WS2/$F ]] || t_err "the seeded app lost its file"
t_end

finish
