#!/usr/bin/env bash
# Lifecycle: stop frees the container but keeps the files, start brings the
# same files back, both are idempotent; DELETE of a sandbox removes its
# container and workspace and leaves the app able to get a new sandbox;
# DELETE of an app removes the app, its sandbox's container and workspace.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

t_begin "create app and sandbox"
create_app life '"runtime_preset":"fastapi"' && create_sandbox "$APP_ID" '{"ports":[8000]}'
expect_json '.ports | tostring' '[8000]'
t_end
[[ -n ${SB_CONTAINER:-} ]] || bail "no sandbox to work with"
APP=$APP_ID SB=$SB_ID C=$SB_CONTAINER WS=$DATA/workspaces/$SB_ID

t_begin "files written on the host and inside land in the workspace"
echo from-host >"$WS/host.txt"
out=$(docker exec "$C" sh -c 'mkdir -p /home/sandbox/workspace/app && echo from-inside > /home/sandbox/workspace/app/inside.txt && cat /home/sandbox/host.txt' 2>&1)
[[ $out == from-host ]] || t_err "inside the container /home/sandbox/host.txt reads '$out'"
[[ $(cat "$WS/workspace/app/inside.txt" 2>/dev/null) == from-inside ]] ||
	t_err "$WS/workspace/app/inside.txt missing on the host"
t_end

t_begin "stop: status stopped, container not running"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200 && expect_json .status stopped && expect_json .status_reason stopped
api GET "/v1/sandboxes/$SB"
expect_json .status stopped
if container_exists "$C"; then
	container_running "$C" && t_err "container $C still runs after stop"
fi
[[ -d $WS ]] || t_err "workspace $WS is gone after stop"
t_end

t_begin "stop again is idempotent"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200 && expect_json .status stopped
t_end

t_begin "start: status running, files still there"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
api GET "/v1/sandboxes/$SB"
expect_json .status running
if C2=$(container_of "$SB"); then
	container_running "$C2" || t_err "container $C2 not running after start"
	out=$(docker exec "$C2" sh -c 'cat /home/sandbox/host.txt /home/sandbox/workspace/app/inside.txt' 2>&1)
	[[ $out == $'from-host\nfrom-inside' ]] || t_err "after start the files read: $out"
	C=$C2
else
	t_err "no container for $SB after start"
fi
[[ $(cat "$WS/host.txt" 2>/dev/null) == from-host ]] || t_err "$WS/host.txt lost"
t_end

t_begin "start again is idempotent"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
t_end

t_begin "DELETE sandbox: 204, container and workspace gone, app stays"
api DELETE "/v1/sandboxes/$SB"
expect_status 204
[[ -s $BODY_FILE ]] && t_err "$REQ: 204 with a body: $(short_body)"
container_exists "$C" && t_err "container $C still exists after DELETE"
left=$(docker ps -aq --filter "label=sandboxd.sandbox=$SB")
[[ -z $left ]] || t_err "containers labelled with $SB still exist: $left"
[[ -e $WS ]] && t_err "workspace $WS still exists after DELETE"
api GET "/v1/sandboxes/$SB"
expect_status 404 && expect_envelope not_found
api GET "/v1/apps/$APP"
expect_status 200 && expect_jq '.current_sandbox_id == null' "no current_sandbox_id after the sandbox was deleted"
t_end

t_begin "DELETE sandbox again is 404"
api DELETE "/v1/sandboxes/$SB"
expect_status 404 && expect_envelope not_found
t_end

t_begin "the app gets a new sandbox"
create_sandbox "$APP"
[[ -n ${SB_ID:-} && $SB_ID != "$SB" ]] || t_err "new sandbox id '$SB_ID' (old $SB)"
t_end
SB2=${SB_ID:-} C3=${SB_CONTAINER:-}
WS2=$DATA/workspaces/$SB2
[[ -n $SB2 ]] && echo keep >"$WS2/marker"

t_begin "DELETE app: 204, sandbox container and workspace gone, app 404"
api DELETE "/v1/apps/$APP"
expect_status 204
if [[ -n $C3 ]]; then
	container_exists "$C3" && t_err "container $C3 still exists after DELETE of its app"
fi
left=$(docker ps -aq --filter "label=sandboxd.app=$APP")
[[ -z $left ]] || t_err "containers labelled with app $APP still exist: $left"
[[ -n $SB2 && -e $WS2 ]] && t_err "workspace $WS2 still exists after DELETE of its app"
api GET "/v1/apps/$APP"
expect_status 404 && expect_envelope not_found
[[ -n $SB2 ]] && { api GET "/v1/sandboxes/$SB2"; expect_status 404; }
api GET /v1/apps
expect_status 200 && expect_jq "[.apps[].id] | index(\"$APP\") == null" "app $APP gone from the list"
t_end

t_begin "DELETE app again is 404"
api DELETE "/v1/apps/$APP"
expect_status 404 && expect_envelope not_found
t_end

finish
