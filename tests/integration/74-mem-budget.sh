#!/usr/bin/env bash
# SANDBOXD_MEM_BUDGET_MB: the pressure reaper measured against the
# daemon's own memory budget (the running sandboxes' cgroup charge)
# instead of the host's MemAvailable.  The host here has plenty free, so
# only the budget can make the reaper act.
#
# A budget ten times what the sandbox holds (plus 64 MiB) under the
# default headroom of 15%: the sandbox keeps running.  The same sandbox
# after a restart with a budget of 1 MiB: the reaper stops it (reason
# pressure) within a few passes, and its log line names the budget and
# what the sandboxes hold, which is what `docker stats` shows for the
# container to within a few MiB.
. "$(dirname "$0")/lib.sh"
need_test_image

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
BASE_ENV=(SANDBOXD_IMAGE="$TEST_IMAGE" "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1
	SANDBOXD_PRESSURE_INTERVAL_SECONDS=1 SANDBOXD_MEM_HEADROOM_PCT=15
	SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 SANDBOXD_FREEZE_AFTER_SECONDS=31536000)
daemon_log() { cat "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null; }
# What docker stats shows for the container, in MiB (integer).
stats_mib() {
	docker stats --no-stream --format '{{.MemUsage}}' "$1" | awk '{ v = $1; u = v
		sub(/[0-9.]+/, "", u); sub(/[A-Za-z]+$/, "", v)
		printf "%d\n", u == "GiB" ? v * 1024 : u == "MiB" ? v : v / 1024 }'
}

new_data_dir
start_daemon "${BASE_ENV[@]}" SANDBOXD_MEM_BUDGET_MB=1048576 || bail "the daemon did not come up"
t_begin "setup: a sandbox whose web process answers"
serve_edge_app budget
CT=$(container_of "$SB") || bail "no container for $SB"
t_end

t_begin "a budget ten times the sandbox's charge: the reaper leaves it running"
HOLD=$(stats_mib "$CT")
note "docker stats: the sandbox holds $HOLD MiB"
[[ $HOLD =~ ^[0-9]+$ ]] || bail "docker stats gave '$HOLD'"
stop_daemon
start_daemon "${BASE_ENV[@]}" SANDBOXD_MEM_BUDGET_MB=$((HOLD * 10 + 64)) || bail "the daemon did not come back"
sleep 4
[[ $(sandbox_status "$SB") == running ]] || t_err "status $(sandbox_status "$SB") under a budget of $((HOLD * 10 + 64)) MiB"
container_running "$CT" || t_err "the container does not run"
daemon_log | grep -q 'pressure reaper: ' && t_err "the reaper acted: $(daemon_log | grep -m1 'pressure reaper: ')"
t_end

t_begin "a budget of 1 MiB: the reaper stops it, reason pressure, and says what the sandboxes hold"
stop_daemon
start_daemon "${BASE_ENV[@]}" SANDBOXD_MEM_BUDGET_MB=1 || bail "the daemon did not come back"
is_stopped() { [[ $(sandbox_status "$SB") == stopped ]]; }
wait_until 15 is_stopped || t_err "still $(sandbox_status "$SB") after 15 s"
api GET "/v1/sandboxes/$SB"
expect_status 200 && expect_json .status_reason pressure
container_running "$CT" && t_err "the container still runs"
line=$(daemon_log | grep -m1 'pressure reaper: ')
note "$line"
[[ $line == *"of the 1 MiB budget (1 sandboxes hold "*" MiB)"*"stopping sandbox $SB"* ]] ||
	t_err "the reaper's line does not name the budget and the sandbox: $line"
held=$(sed -E 's/.*sandboxes hold ([0-9]+) MiB.*/\1/' <<<"$line")
[[ $held =~ ^[0-9]+$ ]] && ((held + 8 >= HOLD && held <= HOLD + 8)) ||
	t_err "the daemon counted $held MiB, docker stats showed $HOLD MiB"
t_end

finish
