#!/usr/bin/env bash
# App config marked expose_env becomes the environment of the app's
# processes, end to end through the API: a static app with a worker, a
# plain and a sensitive exposed key and one that is not exposed.  The web
# process and the worker see exactly the exposed ones with their values
# (read from /proc/<pid>/environ inside the container); the sensitive value
# is in no file of the workspace (run.conf included), not in docker
# inspect, the container's log, the data dir or the daemon's output;
# changing a value restarts the processes with the new one; unexposing and
# deleting a key remove it, and a change to a key that is not exposed
# restarts nothing; after a stop/start the processes have them again (the
# supervisor forgot them, the daemon sends them again); the agent of a task
# does not see them; names the supervisor refuses are refused by the API.
. "$(dirname "$0")/lib.sh"
need_test_image
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"

rand_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
PLAIN=plain-$(rand_hex 8)
SECRET=sealed-$(rand_hex 16)
SECRET2=sealed2-$(rand_hex 16)
HIDDEN=hidden-$(rand_hex 8)

# proc_pid NAME: the pid (in the container) of the sandbox's process NAME.
proc_pid() {
	api GET "/v1/sandboxes/$SB"
	j ".processes[] | select(.name == \"$1\" and .pid != null) | .pid"
}
# app_vars NAME: the APP_* entries of process NAME's environment, sorted,
# joined by spaces.
app_vars() {
	local pid
	pid=$(proc_pid "$1")
	[[ -n $pid ]] || return 1
	docker exec "$C" cat "/proc/$pid/environ" 2>/dev/null |
		tr '\0' '\n' | grep '^APP_' | sort | tr '\n' ' '
}
# proc_has NAME ENTRY: process NAME's environment holds ENTRY, once.
proc_has() {
	local pid
	pid=$(proc_pid "$1")
	[[ -n $pid ]] || return 1
	[[ $(docker exec "$C" cat "/proc/$pid/environ" 2>/dev/null |
		tr '\0' '\n' | grep -c "^${2%%=*}=") == 1 ]] &&
		docker exec "$C" cat "/proc/$pid/environ" 2>/dev/null |
		tr '\0' '\n' | grep -qxF -- "$2"
}
# both_are WANT: web and worker have exactly WANT as their APP_* entries.
both_are() { [[ $(app_vars web) == "$1" && $(app_vars envdump) == "$1" ]]; }
# expect_vars WANT: within 30 s.
expect_vars() {
	wait_until 30 both_are "$1" ||
		t_err "want '$1'; web has '$(app_vars web)', envdump '$(app_vars envdump)'"
}
# put KEY BODY: PUT the config key, expecting 200 or 201.
put() {
	api PUT "/v1/apps/$APP/config/$1" "$2"
	[[ $STATUS == 20[01] ]] || t_err "PUT $1: $STATUS $(short_body)"
}
# nowhere VALUE WHAT: VALUE is in no file of the workspace, docker
# inspect, the container's log, the data dir or the daemon's output.
nowhere() {
	local v=$1
	grep -rqaF -- "$v" "$WS" 2>/dev/null &&
		t_err "$2: in the workspace: $(grep -rlaF -- "$v" "$WS" | head -3)"
	grep -qaF -- "$v" <<<"$(docker inspect "$C" 2>&1)" && t_err "$2: in docker inspect"
	grep -qaF -- "$v" <<<"$(docker logs "$C" 2>&1)" && t_err "$2: in the container's log"
	grep -rqaF -- "$v" "$DATA" && t_err "$2: under the data dir: $(grep -rlaF -- "$v" "$DATA" | head -3)"
	grep -qaF -- "$v" "$IT_TMP"/daemon.*.out "$IT_TMP"/daemon.*.err 2>/dev/null &&
		t_err "$2: in the daemon's output"
	return 0
}

t_begin "a key exposed before the sandbox exists reaches web and worker at the first boot"
create_app envapp '"runtime_preset":"static"'
APP=$APP_ID
put APP_PLAIN "{\"value\":\"$PLAIN\",\"expose_env\":true}"
if create_sandbox "$APP"; then
	SB=$SB_ID C=$SB_CONTAINER
	WS=$DATA/workspaces/$SB
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
  health_path: /
workers:
  - name: envdump
    command: sleep 100000
'
	expect_status 200
	wait_sb "$SB" '.preview.status == "ready" and any(.processes[]; .name == "envdump" and .state == "running")' 60
	expect_vars "APP_PLAIN=$PLAIN "
else
	bail "no sandbox: $(short_body)"
fi
t_end

t_begin "a sensitive exposed key and a key not exposed: the processes see exactly the exposed ones"
put APP_SECRET "{\"value\":\"$SECRET\",\"sensitive\":true,\"expose_env\":true}"
put APP_HIDDEN "{\"value\":\"$HIDDEN\"}"
expect_vars "APP_PLAIN=$PLAIN APP_SECRET=$SECRET "
api GET "/v1/sandboxes/$SB"
expect_jq '.preview.status != "error"' "the preview is not in error"
t_end

t_begin "the sensitive value is in no file of the workspace, not in run.conf, docker inspect or logs"
[[ -f $WS/.sandboxd/run.conf ]] || t_err "no run.conf"
grep -qaF -- "$SECRET" "$WS/.sandboxd/run.conf" && t_err "the value is in run.conf"
nowhere "$SECRET" "the sensitive value"
grep -qaF -- "$PLAIN" <<<"$(docker inspect "$C" 2>&1)" && t_err "the plain value is in docker inspect"
grep -rqaF -- "$PLAIN" "$WS" && t_err "the plain value is in the workspace"
t_end

t_begin "a new value restarts the processes with it"
old=$(proc_pid envdump)
put APP_SECRET "{\"value\":\"$SECRET2\"}"
expect_vars "APP_PLAIN=$PLAIN APP_SECRET=$SECRET2 "
[[ $(proc_pid envdump) != "$old" ]] || t_err "envdump kept pid $old"
nowhere "$SECRET2" "the new sensitive value"
t_end

t_begin "a change to a key that is not exposed restarts nothing"
old_web=$(proc_pid web) old=$(proc_pid envdump)
put APP_HIDDEN "{\"value\":\"$HIDDEN-2\"}"
put APP_OTHER '{"value":"x"}'
sleep 2
[[ $(proc_pid web) == "$old_web" && $(proc_pid envdump) == "$old" ]] ||
	t_err "restarted: web $old_web -> $(proc_pid web), envdump $old -> $(proc_pid envdump)"
t_end

t_begin "expose_env flipped off and on, and a deleted key"
put APP_PLAIN "{\"value\":\"$PLAIN\",\"expose_env\":false}"
expect_vars "APP_SECRET=$SECRET2 "
put APP_HIDDEN "{\"value\":\"$HIDDEN\",\"expose_env\":true}"
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET2 "
api DELETE "/v1/apps/$APP/config/APP_SECRET"
expect_status 204
expect_vars "APP_HIDDEN=$HIDDEN "
t_end

t_begin "after a stop and a start the processes have them again"
put APP_SECRET "{\"value\":\"$SECRET\",\"sensitive\":true,\"expose_env\":true}"
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET "
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
api POST "/v1/sandboxes/$SB/start"
expect_status 200
C=$(container_of "$SB")
wait_sb "$SB" '.preview.status == "ready" and any(.processes[]; .name == "envdump" and .state == "running")' 60
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET "
nowhere "$SECRET" "after the restart"
t_end

t_begin "the agent of a task does not see them"
api POST "/v1/sandboxes/$SB/tasks" '{"prompt":"[[fake:write=note.txt]] write a note","agent":"opencode"}'
expect_status 202
TASK=$(j .id)
for ((i = 0; i < 240; i++)); do
	api GET "/v1/sandboxes/$SB/tasks/$TASK"
	[[ $(j .status) != running ]] && break
	sleep 0.25
done
[[ $(j .status) == succeeded ]] || t_err "the task: $(short_body)"
names=$(grep -ha '"fake_env_names"' "$WS/.sandboxd/tasks/$TASK/agent.log" 2>/dev/null | tail -n 1)
if [[ -z $names ]]; then
	t_err "no fake_env_names in agent.log: $(head -c 300 "$WS/.sandboxd/tasks/$TASK/agent.log" 2>&1)"
else
	jq -e '.fake_env_names | index("HOME") != null' <<<"$names" >/dev/null ||
		t_err "the agent's names lack HOME: $names"
	jq -e '[.fake_env_names[] | select(startswith("APP_"))] == []' <<<"$names" >/dev/null ||
		t_err "the agent saw the app's variables: $(jq -c '[.fake_env_names[] | select(startswith("APP_"))]' <<<"$names")"
fi
# Its restart of the web process (if any) keeps them.
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET "
nowhere "$SECRET" "after a task"
t_end

t_begin "names the supervisor sets or that change how programs run are refused for expose_env"
for k in PATH HOME LANG HOST PORT LD_PRELOAD SANDBOXD_X; do
	api PUT "/v1/apps/$APP/config/$k" '{"value":"x","expose_env":true}'
	expect_status 400 && expect_envelope invalid_request
done
api GET "/v1/apps/$APP/config/PORT"
expect_status 404
# Not exposed, they are plain config; exposing one later is refused.
put PORT '{"value":"8080"}'
api PUT "/v1/apps/$APP/config/PORT" '{"value":"8080","expose_env":true}'
expect_status 400 && expect_envelope invalid_request
api PUT "/v1/apps/$APP/config/lowercase_ok" '{"value":"y","expose_env":true}'
expect_status 201
wait_until 30 proc_has envdump lowercase_ok=y || t_err "the worker lacks lowercase_ok"
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET "
proc_has web PORT=3000 || t_err "the web process's PORT is not 3000"
t_end

# large_in NAME: how many LARGE_* entries process NAME's environment has.
large_in() {
	local pid
	pid=$(proc_pid "$1")
	docker exec "$C" cat "/proc/$pid/environ" 2>/dev/null | tr '\0' '\n' | grep -c '^LARGE_'
}
# larges_are N: web and worker have N LARGE_* entries each.
larges_are() { [[ $(large_in web) == "$1" && $(large_in envdump) == "$1" ]]; }

t_begin "over 512 KiB of exposed config: nothing is sent, the processes keep their set"
V64=$(head -c 65536 /dev/zero | tr '\0' v)
for i in 1 2 3 4 5 6 7; do
	put "LARGE_$i" "{\"value\":\"$V64\",\"expose_env\":true}"
done
wait_until 30 larges_are 7 || t_err "web has $(large_in web), envdump $(large_in envdump) LARGE_* entries, want 7"
old=$(proc_pid envdump)
put LARGE_8 "{\"value\":\"$V64\",\"expose_env\":true}"
grep -q "the app's environment is not sent: its exposed config takes more than 524288 bytes" "$DAEMON_ERR" ||
	t_err "the daemon did not say why: $(grep -a "$SB" "$DAEMON_ERR" | tail -n 2)"
sleep 1
[[ $(proc_pid envdump) == "$old" && $(large_in envdump) == 7 ]] ||
	t_err "envdump changed: pid $old -> $(proc_pid envdump), $(large_in envdump) LARGE_* entries"
for i in 1 2 3 4 5 6 7 8; do
	api DELETE "/v1/apps/$APP/config/LARGE_$i"
	expect_status 204
done
wait_until 30 larges_are 0 || t_err "LARGE_* entries left: web $(large_in web), envdump $(large_in envdump)"
expect_vars "APP_HIDDEN=$HIDDEN APP_SECRET=$SECRET "
t_end

t_begin "deleting the app takes its sandbox and config with it"
api DELETE "/v1/apps/$APP"
expect_status 204
nowhere "$SECRET" "after the app is gone"
t_end

finish
