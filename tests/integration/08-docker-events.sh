#!/usr/bin/env bash
# Docker events: the daemon notices what happens to a container behind its
# back.  `docker kill` of a running sandbox's container shows as
# stopped/exited within 2 s (and the sandbox can be started again); a memory
# hog OOM-killed inside a sandbox (SANDBOXD_MEMORY_MB=64) shows as
# "oom_killed":true.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon SANDBOXD_MEMORY_MB=64 || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

# status_is SB STATUS [REASON]
status_is() {
	api GET "/v1/sandboxes/$1"
	[[ $STATUS == 200 && $(j .status) == "$2" ]] || return 1
	[[ -z ${3:-} || $(j .status_reason) == "$3" ]]
}

t_begin "setup: a running sandbox"
create_app victim && create_sandbox "$APP_ID"
t_end
SB=${SB_ID:-} C=${SB_CONTAINER:-}
[[ -n $C ]] || bail "no sandbox"

t_begin "docker kill behind the daemon's back: stopped/exited within 2 s"
docker kill "$C" >/dev/null 2>&1 || t_err "docker kill $C failed"
t0=$(date +%s.%N)
if wait_until 2 status_is "$SB" stopped exited; then
	expect_json .oom_killed false
else
	t_err "2 s after docker kill: GET /v1/sandboxes/$SB is $STATUS $(short_body)"
	if wait_until 15 status_is "$SB" stopped; then
		note "it said stopped after $(echo "$(date +%s.%N) - $t0" | awk '{print $1 - $3}')s: $(short_body)"
	fi
fi
t_end

t_begin "the killed sandbox can be started again"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
if c=$(container_of "$SB"); then
	container_running "$c" || t_err "container $c is not running after start"
	C=$c
fi
t_end

t_begin "OOM: a memory hog in the sandbox is killed at the 64 MB limit"
mem=$(dinspect "$C" '{{.HostConfig.Memory}}')
[[ $mem == $((64 * 1024 * 1024)) ]] || t_err "HostConfig.Memory is $mem, expected $((64 * 1024 * 1024))"
# tail keeps a line without a newline entirely in memory.
docker exec "$C" sh -c 'head -c 400M /dev/zero | tail > /dev/null' >/dev/null 2>&1
rc=$?
if ((rc != 137)); then
	# Fall back to python3 in case coreutils behave differently.
	docker exec "$C" python3 -c 'b = b"x" * (400 << 20); print(len(b))' >/dev/null 2>&1
	rc2=$?
	((rc2 == 137)) || t_err "no memory hog was killed: tail exited $rc, python3 exited $rc2 (is the memory limit enforced?)"
fi
t_end

t_begin "OOM: the sandbox reports oom_killed:true"
if ! wait_until 5 eval 'api GET "/v1/sandboxes/$SB"; [[ $(j .oom_killed) == true ]]'; then
	t_err "5 s after the OOM kill: GET /v1/sandboxes/$SB is $STATUS $(short_body)"
fi
t_end

t_begin "OOM: the sandbox's main process survived and the API agrees"
api GET "/v1/sandboxes/$SB"
if container_running "$C"; then
	expect_json .status running
else
	expect_json .status stopped
	note "the container itself died: $(dinspect "$C" '{{json .State}}')"
fi
t_end

finish
