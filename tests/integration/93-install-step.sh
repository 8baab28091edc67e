#!/usr/bin/env bash
# The install step (sandbox.yaml `install:`, docs/supervisor.md "Install"),
# end to end through the API with a real sandbox: an install that writes a
# marker and takes a second runs before the web process (status shows it
# running, the problem says "installing dependencies", then done and the
# preview ready); a stop and start does not install again (the key in
# .sandboxd/install.key matches); a changed lockfile (requirements.txt,
# one of the default inputs, written through the files API) installs
# again under a new key; a failing install leaves the web process
# unstarted with the reason in the status, the problem and install.log;
# `restart` retries it, and a fixed lockfile makes it pass.  A task
# submitted while an install runs starts after it (the control plane
# waits; the supervisor would refuse it).
. "$(dirname "$0")/lib.sh"
need_test_image
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"

# The install counts its runs in ../installs (outside the app), takes two
# seconds, and fails while requirements.txt says "broken" or the flag file
# ../fail exists.
MANIFEST='version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
  health_path: /
install:
  command: echo run >> ../installs; echo installing for $HOME; sleep 2; ! grep -q broken requirements.txt && test ! -e ../fail
  timeout_seconds: 60
'
installs() { local n; n=$(cat "$WS/workspace/installs" 2>/dev/null | wc -l); echo "$n"; }
more_installs() { (($(installs) > $1)); }
key_file() { tr -d '\n' <"$WS/.sandboxd/install.key" 2>/dev/null; }
put_file() {
	api PUT "/v1/sandboxes/$SB/files?path=$1" "$2"
	expect_status 200 || t_err "PUT $1: $(short_body)"
}

t_begin "the install runs before the web process, which starts once it is done"
create_app installapp '"runtime_preset":"static"'
APP=$APP_ID
create_sandbox "$APP" || bail "no sandbox: $(short_body)"
SB=$SB_ID C=$SB_CONTAINER
WS=$DATA/workspaces/$SB
wait_sb "$SB" '.preview.status == "ready"' 60
put_file requirements.txt 'flask==3.0.0
'
put_file sandbox.yaml "$MANIFEST"
wait_sb "$SB" '.install.state == "running"' 20
expect_jq '.processes | map(select(.name == "web" and .state == "running")) | length == 0' \
	"no web process runs during the install"
expect_jq '.problem.kind == "installing" and .problem.summary == "installing dependencies"' \
	"the problem says the install runs"
expect_jq '.preview.status == "starting" and .preview.detail == "installing dependencies"' \
	"the preview is starting, installing dependencies"
wait_sb "$SB" '.install.state == "done" and .preview.status == "ready"' 60
expect_jq '.install.exit_code == 0 and (.install.key | test("^[0-9a-f]{64}$"))' "done, exit 0, a key"
expect_jq '.install.ended_at_ms >= .install.started_at_ms + 1900' "it took its two seconds"
expect_jq '.problem == null' "no problem once done"
KEY1=$(j .install.key)
[[ $(key_file) == "$KEY1" ]] || t_err "install.key holds '$(key_file)', not $KEY1"
grep -qP "^install\t60\t$KEY1\t" "$WS/.sandboxd/run.conf" || t_err "no install record in run.conf: $(cat "$WS/.sandboxd/run.conf")"
[[ $(installs) == 1 ]] || t_err "installs: $(installs), want 1"
api GET "/v1/sandboxes/$SB/processes/install/logs"
expect_status 200
expect_jq 'any(.lines[]; . == "installing for /home/sandbox")' "install.log has its output"
t_end

t_begin "a stop and a start do not install again (the key matches)"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
api POST "/v1/sandboxes/$SB/start"
expect_status 200
wait_sb "$SB" '.preview.status == "ready" and .install.state == "done"' 60
expect_jq ".install.key == \"$KEY1\" and .install.exit_code == null" "the same key, not run by this boot"
[[ $(installs) == 1 ]] || t_err "installs: $(installs) after a restart, want 1"
t_end

t_begin "a changed lockfile installs again under a new key"
put_file requirements.txt 'flask==3.0.1
'
wait_sb "$SB" ".install.key != \"$KEY1\" and .install.state == \"done\" and .preview.status == \"ready\"" 60
KEY2=$(j .install.key)
[[ $(installs) == 2 ]] || t_err "installs: $(installs), want 2"
[[ $(key_file) == "$KEY2" ]] || t_err "install.key holds '$(key_file)', not $KEY2"
t_end

t_begin "a task submitted during an install starts once the install is done"
put_file requirements.txt 'flask==3.0.1
# a task comes
'
submit "$SB" '{"prompt":"[[fake:write=notes.txt]] take notes","agent":"opencode"}'
T=$TASK_ID
api GET "/v1/sandboxes/$SB"
[[ $(j .install.state) == running ]] || note "the install was $(j .install.state) right after the submit"
wait_task "$SB" "$T" 90
expect_jq '.status == "succeeded"' "the task succeeded ($(j .status) $(j .failure_reason) $(j .error_message))"
STARTED=$(date -d "$(j .started_at)" +%s%3N 2>/dev/null)
wait_sb "$SB" '.install.state == "done"' 30
ENDED=$(j .install.ended_at_ms)
KEYT=$(j .install.key)
# started_at has whole seconds at worst: within a second of the end.
[[ -n $STARTED && $STARTED -ge $((ENDED / 1000 * 1000)) ]] ||
	t_err "the task started at $STARTED, before the install ended at $ENDED"
[[ -f $WS/workspace/app/notes.txt ]] || t_err "the agent did not write notes.txt"
t_end

t_begin "a failing install: no web process, the status and the problem say why"
put_file requirements.txt 'broken
'
wait_sb "$SB" '.install.state == "failed"' 60
expect_jq '.install.exit_code == 1' "exit code 1"
expect_jq '.processes | map(select(.name == "web")) | length == 0' "no web process"
expect_jq '.preview.status == "error" or .preview.status == "starting"' "the preview does not say ready"
expect_jq '.problem.kind == "install_failed" and (.problem.summary | startswith("the install failed (exit 1)"))' \
	"the problem names the failed install"
expect_jq 'any(.problem.lines[]; test("exited with code 1"))' "the problem has install.log's last lines"
KEY3=$(j .install.key)
[[ $(key_file) == "$KEYT" ]] || t_err "install.key changed after a failure: $(key_file)"
t_end

t_begin "restart retries a failed install; a fixed lockfile passes"
n=$(installs)
docker exec -u 1000 "$C" touch /home/sandbox/workspace/fail
api POST "/v1/sandboxes/$SB/processes/web/restart"
expect_status 200
wait_until 20 more_installs "$n" || t_err "restart did not run the install again"
wait_sb "$SB" '.install.state == "failed"' 30
expect_jq ".install.key == \"$KEY3\"" "the same key"
docker exec -u 1000 "$C" rm -f /home/sandbox/workspace/fail
put_file requirements.txt 'flask==3.0.2
'
wait_sb "$SB" '.install.state == "done" and .preview.status == "ready"' 60
expect_jq '.problem == null' "no problem once fixed"
t_end

finish
