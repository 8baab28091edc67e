#!/usr/bin/env bash
# Disk: a workspace over SANDBOXD_WORKSPACE_MAX_MB gets 507 workspace_full
# for new tasks and file writes until files are deleted; a full data
# filesystem answers 507 insufficient_storage to writes while reads keep
# working, loses nothing, and recovers when space returns.  The full
# filesystem is a small tmpfs this test mounts for the daemon's data dir
# (the database and the workspaces), filled from the host.
. "$(dirname "$0")/lib.sh"
need_docker
[[ $(id -u) == 0 ]] || bail "needs root (mounts a tmpfs)"

# --- the workspace cap ----------------------------------------------------------

start_daemon SANDBOXD_WORKSPACE_MAX_MB=2 || bail "the daemon did not start"

t_begin "a workspace under its cap takes writes and tasks"
create_app capped '"runtime_preset":"static"'
create_sandbox "$APP_ID" '{}'
api PUT "/v1/sandboxes/$SB_ID/files?path=small.txt" 'hello'
expect_status 200
t_end

t_begin "over SANDBOXD_WORKSPACE_MAX_MB: file writes and tasks are 507 workspace_full, naming the cap"
# 3 MiB written from inside, as the agent would.
docker exec -u 1000 "$SB_CONTAINER" sh -c \
	'head -c 3145728 /dev/zero > /home/sandbox/workspace/app/big.bin' ||
	t_err "could not write big.bin inside the sandbox"
sleep 6 # the measured size is cached for 5 s
api PUT "/v1/sandboxes/$SB_ID/files?path=more.txt" 'more'
expect_status 507 && expect_envelope workspace_full false
[[ $(j .error.message) == *SANDBOXD_WORKSPACE_MAX_MB* ]] ||
	t_err "the message does not name SANDBOXD_WORKSPACE_MAX_MB: $(j .error.message)"
api POST "/v1/sandboxes/$SB_ID/tasks" '{"prompt":"grow"}'
expect_status 507 && expect_envelope workspace_full
api GET "/v1/sandboxes/$SB_ID/files/content?path=small.txt"
expect_status 200
t_end

t_begin "deleting the files lifts it"
docker exec -u 1000 "$SB_CONTAINER" rm -f /home/sandbox/workspace/app/big.bin
sleep 6
api PUT "/v1/sandboxes/$SB_ID/files?path=more.txt" 'more'
expect_status 200
t_end
stop_daemon

# --- a full data filesystem ---------------------------------------------------------

small_data_dir 48m sbxit-small

start_daemon || bail "the daemon did not start on the tmpfs"

t_begin "setup on a 48 MiB data filesystem: an app and a running sandbox"
create_app before '"runtime_preset":"static"'
BEFORE_APP=$APP_ID
create_sandbox "$APP_ID" '{}'
BEFORE_SB=$SB_ID
api PUT "/v1/sandboxes/$SB_ID/files?path=keep.txt" 'kept'
expect_status 200
t_end

t_begin "the filesystem is filled: writes answer 507 insufficient_storage, reads work, the daemon lives"
dd if=/dev/zero of="$SMALL/filler" bs=1M 2>/dev/null
df -k "$SMALL" | tail -n 1 | sed 's/^/#   /'
api POST /v1/apps '{"name":"during"}'
expect_status 507 && expect_envelope insufficient_storage false
[[ $(j .error.message) == *full* ]] || t_err "message does not say the filesystem is full: $(j .error.message)"
api PUT "/v1/sandboxes/$BEFORE_SB/files?path=new.txt" 'x'
expect_status 507 && expect_envelope insufficient_storage
api POST "/v1/sandboxes/$BEFORE_SB/tasks" '{"prompt":"hi"}'
expect_status 507 && expect_envelope insufficient_storage
api GET /v1/apps
expect_status 200 && expect_jq "[.apps[].id] | index(\"$BEFORE_APP\") != null" "the app made before is listed"
api GET "/v1/sandboxes/$BEFORE_SB"
expect_status 200 && expect_json .status running
api GET "/v1/sandboxes/$BEFORE_SB/files/content?path=keep.txt"
expect_status 200 && [[ $BODY == kept ]] || t_err "keep.txt reads '$BODY'"
expect_healthz
daemon_alive || t_err "the daemon died"
t_end

t_begin "space returns: writes work again and nothing was lost"
rm -f "$SMALL/filler"
api POST /v1/apps '{"name":"after"}'
expect_status 201
api GET "/v1/apps/$BEFORE_APP"
expect_status 200 && expect_json .name before
api PUT "/v1/sandboxes/$BEFORE_SB/files?path=new.txt" 'x'
expect_status 200
t_end

t_begin "a restart on the same data: the database opens and holds everything"
stop_daemon
start_daemon || t_err "the daemon did not start again"
api GET /v1/apps
expect_status 200 && expect_jq '[.apps[].name] | sort == ["after","before"]' "both apps, nothing else"
t_end

finish
