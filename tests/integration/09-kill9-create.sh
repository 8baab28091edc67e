#!/usr/bin/env bash
# kill -9 during create: the daemon is killed at several moments of a
# `POST /v1/apps/{id}/sandbox` and restarted on the same data dir.  After
# the restart there is no orphan container (every container mounting this
# daemon's workspaces belongs to a sandbox the API shows as running or
# stopped), the interrupted sandbox is running, stopped or error (never
# creating), a new create for the app works (201, or 409 if the old one
# survived as running/stopped), and another sandbox's files are intact.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

t_begin "setup: a bystander sandbox with a marker file"
create_app bystander && create_sandbox "$APP_ID"
t_end
KEEP_SB=${SB_ID:-} KEEP_C=${SB_CONTAINER:-}
[[ -n $KEEP_C ]] || bail "no bystander sandbox"
echo precious >"$DATA/workspaces/$KEEP_SB/marker"
docker exec "$KEEP_C" sh -c 'echo inside > /home/sandbox/marker2' ||
	bail "cannot write into the bystander's workspace"

# The API's view of one sandbox: "<status> <container_id>" or "HTTP <code>".
sb_view() {
	api GET "/v1/sandboxes/$1"
	if [[ $STATUS == 200 ]]; then echo "$(j .status) $(j .container_id)"; else echo "HTTP $STATUS"; fi
}

# consistency APP: prints one line per problem; silent when consistent.
consistency() {
	local app=$1 c sb view st cid
	for c in $(containers_mounting "$DATA"); do
		sb=$(dinspect "$c" '{{index .Config.Labels "sandboxd.sandbox"}}')
		if [[ -z $sb ]]; then
			echo "orphan: container ${c:0:12} mounts $DATA but has no sandboxd.sandbox label"
			continue
		fi
		view=$(sb_view "$sb")
		st=${view%% *}
		cid=${view#* }
		case $st in
		running | stopped)
			[[ -n $cid && $cid != null && $c == "$cid"* ]] ||
				echo "orphan: container ${c:0:12} of sandbox $sb, but the API's container_id is '$cid'"
			if [[ $st == running ]] && ! container_running "$c"; then
				echo "sandbox $sb is running in the API but container ${c:0:12} is not"
			fi
			;;
		*) echo "orphan: container ${c:0:12} (running=$(dinspect "$c" '{{.State.Running}}')) of sandbox $sb, which the API shows as '$view'" ;;
		esac
	done
	api GET "/v1/apps/$app"
	if [[ $STATUS != 200 ]]; then
		echo "GET /v1/apps/$app: $STATUS"
		return
	fi
	sb=$(j '.current_sandbox_id // empty')
	if [[ -n $sb ]]; then
		view=$(sb_view "$sb")
		case ${view%% *} in
		running | stopped | error) ;;
		*) echo "the interrupted sandbox $sb is '$view'" ;;
		esac
	fi
	view=$(sb_view "$KEEP_SB")
	[[ ${view%% *} == running ]] || echo "the bystander sandbox is '$view'"
	container_running "$KEEP_C" || echo "the bystander's container ${KEEP_C:0:12} is not running"
	[[ $(cat "$DATA/workspaces/$KEEP_SB/marker" 2>/dev/null) == precious ]] ||
		echo "the bystander's marker file is gone or changed"
	[[ $(cat "$DATA/workspaces/$KEEP_SB/marker2" 2>/dev/null) == inside ]] ||
		echo "the bystander's marker2 file is gone or changed"
}

# Wait-for conditions for the kill moments.
app_has_sandbox() { api GET "/v1/apps/$1"; [[ -n $(j '.current_sandbox_id // empty') ]]; }
app_has_container() { [[ -n $(docker ps -aq --filter "label=sandboxd.app=$1") ]]; }
app_container_running() { [[ -n $(docker ps -q --filter "label=sandboxd.app=$1") ]]; }

# round MOMENT: one create killed at MOMENT (seconds, or a condition).
round() {
	local moment=$1 app pid problems st view sb
	t_begin "kill -9 $moment"
	create_app "k9-$moment" || { t_end; return; }
	app=$APP_ID
	curl -s -o /dev/null --max-time 60 -X POST -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' --data-binary '{"ports":[3000]}' "$API_URL/v1/apps/$app/sandbox" </dev/null >/dev/null 2>&1 &
	pid=$!
	case $moment in
	after-*s) sleep "${moment//[^0-9.]/}" ;;
	when-the-row-appears) wait_until 10 app_has_sandbox "$app" || note "no current_sandbox_id within 10 s" ;;
	when-the-container-appears) wait_until 10 app_has_container "$app" || note "no container within 10 s" ;;
	when-the-container-runs) wait_until 10 app_container_running "$app" || note "no running container within 10 s" ;;
	esac
	kill9_daemon
	wait "$pid" 2>/dev/null
	note "state when killed: container=$(docker ps -a --filter "label=sandboxd.app=$app" --format '{{.Status}}' | head -n 1)"

	if ! start_daemon; then
		t_err "the daemon did not come back after kill -9 (exit ${DAEMON_RC:-none}): $(tail -n 5 "$DAEMON_ERR")"
		t_end
		return
	fi
	# Give reconciliation a few seconds, then report what is still wrong.
	if ! wait_until 10 eval '[[ -z $(consistency "$app") ]]'; then
		while IFS= read -r p; do t_err "$p"; done < <(consistency "$app")
	fi

	api GET "/v1/apps/$app"
	sb=$(j '.current_sandbox_id // empty')
	view=
	[[ -n $sb ]] && view=$(sb_view "$sb")
	note "after restart: sandbox ${sb:-none} ${view}"
	api POST "/v1/apps/$app/sandbox" '{"ports":[3000]}'
	case $STATUS in
	201)
		expect_json .status running
		[[ -n $sb && $(j .id) == "$sb" ]] && t_err "$REQ: 201 with the old sandbox's id $sb"
		case ${view%% *} in
		running | stopped) t_err "$REQ: 201 although the app still has sandbox $sb ($view); expected 409" ;;
		esac
		;;
	409)
		st=${view%% *}
		[[ $st == running || $st == stopped ]] ||
			t_err "$REQ: 409 although the app's sandbox is '${view:-none}' (an error one must be replaced)"
		expect_envelope conflict
		;;
	*) t_err "$REQ: expected 201 (or 409 next to a live sandbox), got $STATUS $(short_body)" ;;
	esac
	# And once more, everything must be consistent.
	while IFS= read -r p; do [[ -n $p ]] && t_err "after the new create: $p"; done < <(consistency "$app")
	t_end
}

round after-0s
round after-0.1s
round after-0.3s
round after-0.6s
round when-the-row-appears
round when-the-container-appears
round when-the-container-runs

finish
