#!/usr/bin/env bash
# Docker down (disruptive, runs last): with dockerd stopped, calls that need
# Docker answer 503 docker_unavailable with retryable:true while the rest of
# the API and /healthz keep working; once dockerd is back (started as
# scripts/bootstrap does) a sandbox create succeeds again within 30 s without
# restarting sandboxd.  A second round starts sandboxd while Docker is down
# (so the sandbox row still says running): it must come up, and stop must
# be 503 until Docker is back.  dockerd is always running again at the end.
. "$(dirname "$0")/lib.sh"
need_docker

dockerd_remember
[[ -n $DOCKERD_PID ]] || bail "no dockerd process found (Docker answers from elsewhere?)"
echo "# dockerd: pid $DOCKERD_PID: ${DOCKERD_CMD[*]}"

start_daemon || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

t_begin "setup: a sandbox while Docker is up"
create_app before && create_sandbox "$APP_ID"
t_end
SB=${SB_ID:-}
[[ -n $SB ]] || bail "no sandbox"

t_begin "stop dockerd"
stop_dockerd
t_end
docker_ok && bail "Docker is still up; cannot test"

# down_503 WHAT METHOD PATH [BODY]: must be 503 docker_unavailable, retryable.
down_503() {
	local what=$1 t0
	shift
	t_begin "Docker down: $what is 503 docker_unavailable"
	t0=$SECONDS
	api "$@"
	expect_status 503 && expect_envelope docker_unavailable true
	expect_header X-Request-Id
	((SECONDS - t0 <= 15)) || t_err "$REQ took $((SECONDS - t0)) s to answer"
	t_end
}

t_begin "Docker down: the API without Docker still works"
api GET /v1/apps
expect_status 200
expect_healthz
create_app during-outage
NEW_APP=${APP_ID:-}
NEW_SB=
t_end

[[ -n $NEW_APP ]] && down_503 "POST /v1/apps/{id}/sandbox on a new app" POST "/v1/apps/$NEW_APP/sandbox" '{"ports":[3000]}'

# dockerd stops the containers as it shuts down; if the daemon saw that and
# already shows the sandbox stopped, stop is idempotent, so use start.
api GET "/v1/sandboxes/$SB"
before=$(j .status)
echo "# the first sandbox is '$before' in the API while Docker is down"
if [[ $before == stopped ]]; then
	down_503 "POST /v1/sandboxes/{id}/start" POST "/v1/sandboxes/$SB/start"
else
	down_503 "POST /v1/sandboxes/{id}/stop" POST "/v1/sandboxes/$SB/stop"
fi

t_begin "Docker down: the daemon stays healthy after the refusals"
daemon_alive || t_err "the daemon died"
expect_healthz
api GET /v1/apps
expect_status 200
if [[ -n $NEW_APP ]]; then
	api GET "/v1/apps/$NEW_APP"
	sb=$(j '.current_sandbox_id // empty')
	if [[ -n $sb ]]; then
		api GET "/v1/sandboxes/$sb"
		[[ $(j .status) == creating ]] && t_err "the refused create left sandbox $sb in 'creating'"
	fi
fi
t_end

t_begin "dockerd comes back"
start_dockerd || t_err "dockerd did not answer _ping within 60 s of being started"
t_end
docker_ok || bail "dockerd is not back"

t_begin "Docker back: POST /v1/apps/{id}/sandbox succeeds within 30 s"
t0=$SECONDS
ok=0
while ((SECONDS - t0 <= 30)); do
	api POST "/v1/apps/$NEW_APP/sandbox" '{"ports":[3000]}'
	[[ $STATUS == 201 ]] && { ok=1; break; }
	sleep 1
done
if ((ok)); then
	expect_json .status running
	note "took $((SECONDS - t0)) s"
	NEW_SB=$(j .id)
	c=$(container_of "$NEW_SB") && { container_running "$c" || t_err "its container is not running"; }
else
	t_err "30 s after Docker came back: $REQ is still $STATUS $(short_body)"
fi
t_end

t_begin "Docker back: the first sandbox can be started again"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
t_end

# --- round two: sandboxd starts while Docker is down -----------------------------
SB2=${NEW_SB:-$SB}
stop_daemon
t_begin "round two: stop sandboxd, then dockerd"
stop_dockerd
t_end
docker_ok && bail "Docker is still up; cannot test"

t_begin "round two: sandboxd starts while Docker is down"
start_daemon || t_err "the daemon did not come up without Docker (exit ${DAEMON_RC:-none}): $(tail -n 3 "$DAEMON_ERR")"
expect_healthz
api GET /v1/apps
expect_status 200
api GET "/v1/sandboxes/$SB2"
expect_status 200
before=$(j .status)
note "the sandbox is '$before' in the API"
t_end

# The daemon cannot know the container's state; whichever it shows, the
# action that would change it needs Docker.
if [[ $before == stopped ]]; then
	down_503 "round two: POST /v1/sandboxes/{id}/start" POST "/v1/sandboxes/$SB2/start"
else
	down_503 "round two: POST /v1/sandboxes/{id}/stop" POST "/v1/sandboxes/$SB2/stop"
fi

t_begin "round two: after the refusals the sandbox still exists"
api GET "/v1/sandboxes/$SB2"
expect_status 200
t_end

t_begin "round two: dockerd comes back"
start_dockerd || t_err "dockerd did not answer _ping within 60 s of being started"
t_end
docker_ok || bail "dockerd is not back"

t_begin "round two: within 30 s the daemon has caught up and the sandbox starts"
t0=$SECONDS
while ((SECONDS - t0 <= 30)); do
	api POST "/v1/sandboxes/$SB2/start"
	[[ $STATUS == 200 ]] && break
	sleep 1
done
expect_status 200 && expect_json .status running
if c=$(container_of "$SB2"); then
	container_running "$c" ||
		t_err "$REQ answered $STATUS \"status\":\"$(j .status)\" $((SECONDS - t0)) s after Docker came back, but its container is not running: $(dinspect "$c" '{{.State.Status}} exit {{.State.ExitCode}}')"
	sleep 2
	api GET "/v1/sandboxes/$SB2"
	expect_json .status running
else
	t_err "no container for $SB2"
fi
t_end

finish
