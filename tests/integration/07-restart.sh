#!/usr/bin/env bash
# Restart: after the daemon stops (SIGTERM, then once more with kill -9) and
# starts again on the same data dir, apps and sandboxes are still listed, the
# running sandbox is still running in the very same, untouched container, the
# stopped one stays stopped, workspaces are intact, the token printed at
# first start still works and no new token is printed.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon -SANDBOXD_API_TOKENS || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

t_begin "first start prints a token"
[[ $FIRST_TOKEN == sk_* ]] || t_err "no 'API token (shown once): sk_…' on stdout"
t_end
[[ -n $FIRST_TOKEN ]] || bail "cannot test restarts without the first-start token"
TOKEN0=$FIRST_TOKEN

t_begin "setup: one running sandbox, one stopped, one app without"
create_app run-me && create_sandbox "$APP_ID"
RUN_APP=${APP_ID:-} RUN_SB=${SB_ID:-} RUN_C=${SB_CONTAINER:-}
create_app stop-me && create_sandbox "$APP_ID"
STOP_APP=${APP_ID:-} STOP_SB=${SB_ID:-} STOP_C=${SB_CONTAINER:-}
api POST "/v1/sandboxes/$STOP_SB/stop"
expect_status 200 && expect_json .status stopped
create_app bare
BARE_APP=${APP_ID:-}
t_end
[[ -n $RUN_C && -n $STOP_SB ]] || bail "setup failed"
echo run >"$DATA/workspaces/$RUN_SB/marker"
echo stop >"$DATA/workspaces/$STOP_SB/marker"
RUN_STARTED=$(dinspect "$RUN_C" '{{.State.StartedAt}}')

# after_restart HOW: the checks that must hold after each restart.
after_restart() {
	local how=$1

	t_begin "$how: no new token is printed"
	[[ -z $(printed_token) ]] || t_err "stdout has a new token line: $(grep 'API token' "$DAEMON_OUT")"
	t_end

	t_begin "$how: the first-start token still works"
	api_as "$TOKEN0" GET /v1/apps
	expect_status 200
	t_end

	t_begin "$how: all three apps are listed"
	expect_jq "[.apps[].id] | sort == ([\"$RUN_APP\",\"$STOP_APP\",\"$BARE_APP\"] | sort)" "the apps $RUN_APP $STOP_APP $BARE_APP"
	t_end

	t_begin "$how: the running sandbox is still running, container untouched"
	api GET "/v1/sandboxes/$RUN_SB"
	expect_status 200 && expect_json .status running
	local c
	if c=$(container_of "$RUN_SB"); then
		[[ $c == "$RUN_C" ]] || t_err "the container was replaced: $RUN_C -> $c"
		container_running "$c" || t_err "container $c is not running"
		[[ $(dinspect "$c" '{{.State.StartedAt}}') == "$RUN_STARTED" ]] ||
			t_err "the container was restarted (StartedAt $RUN_STARTED -> $(dinspect "$c" '{{.State.StartedAt}}'))"
	else
		t_err "the running sandbox's container is gone"
	fi
	[[ $(cat "$DATA/workspaces/$RUN_SB/marker" 2>/dev/null) == run ]] || t_err "workspace marker of $RUN_SB lost"
	t_end

	t_begin "$how: the stopped sandbox stays stopped"
	api GET "/v1/sandboxes/$STOP_SB"
	expect_status 200 && expect_json .status stopped
	if [[ -n $STOP_C ]] && container_exists "$STOP_C"; then
		container_running "$STOP_C" && t_err "the stopped sandbox's container $STOP_C runs again"
	fi
	[[ $(cat "$DATA/workspaces/$STOP_SB/marker" 2>/dev/null) == stop ]] || t_err "workspace marker of $STOP_SB lost"
	t_end

	t_begin "$how: the app without a sandbox has none"
	api GET "/v1/apps/$BARE_APP"
	expect_status 200 && expect_jq '.current_sandbox_id == null' "no current_sandbox_id"
	t_end
}

stop_daemon
t_begin "SIGTERM stops the daemon cleanly"
[[ $DAEMON_RC == 0 ]] || t_err "exit status after SIGTERM: $DAEMON_RC (expected 0)"
t_end
start_daemon -SANDBOXD_API_TOKENS || bail "the daemon did not come back after SIGTERM (exit status ${DAEMON_RC:-none})"
TOKEN=$TOKEN0
after_restart "after SIGTERM"

kill9_daemon
start_daemon -SANDBOXD_API_TOKENS || bail "the daemon did not come back after kill -9 (exit status ${DAEMON_RC:-none})"
TOKEN=$TOKEN0
after_restart "after kill -9"

t_begin "after the restarts the stopped sandbox starts with its files"
api POST "/v1/sandboxes/$STOP_SB/start"
expect_status 200 && expect_json .status running
if c=$(container_of "$STOP_SB"); then
	out=$(docker exec "$c" cat /home/sandbox/marker 2>&1)
	[[ $out == stop ]] || t_err "inside, /home/sandbox/marker reads '$out'"
else
	t_err "no container for $STOP_SB after start"
fi
t_end

t_begin "a container removed while the daemon is down is container_missing, and start recreates it"
kill9_daemon
if c=$(container_of "$RUN_SB"); then
	docker rm -f "$c" >/dev/null
fi
if start_daemon -SANDBOXD_API_TOKENS; then
	TOKEN=$TOKEN0
	wait_until 10 eval '[[ $(sandbox_status "$RUN_SB") == stopped ]]'
	api GET "/v1/sandboxes/$RUN_SB"
	expect_status 200 && expect_json .status stopped && expect_json .status_reason container_missing
	api POST "/v1/sandboxes/$RUN_SB/start"
	expect_status 200 && expect_json .status running
	if c=$(container_of "$RUN_SB"); then
		out=$(docker exec "$c" cat /home/sandbox/marker 2>&1)
		[[ $out == run ]] || t_err "inside the recreated container /home/sandbox/marker reads '$out'"
	else
		t_err "no container for $RUN_SB after start"
	fi
else
	t_err "the daemon did not come back (exit ${DAEMON_RC:-none})"
fi
t_end

finish
