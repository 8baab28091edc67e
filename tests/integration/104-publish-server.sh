#!/usr/bin/env bash
# A server release (publish/runner.c), end to end: a node-express app is
# published and its host answers through the edge from its production
# container "sandboxd-rel-<release>", which runs as the sandbox user on a
# read-only root with /app read-only, has the app's exposed config in its
# environment and no SANDBOXD_* variable (no credential proxy token), no
# supervisor and an empty agents' directory.  Killing its main process
# (SIGKILL from the host: a crash as the engine sees it) gets it restarted
# and answering again; a server that stops answering its health path is
# shown DOWN and restarted; a container removed by hand is made again; a
# daemon restart keeps the running container (the sandboxes' reconcile
# leaves it alone) and its host answers at once, and a production
# container of this instance whose release is no active one is removed.  A second release answers differently and a rollback switches
# the answer back.  The preview sandbox is stopped by the idle reaper,
# then (started again) by the pressure reaper, while the release keeps
# answering (the reapers never touch a release).
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
DAEMON_ENV=("HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1
	SANDBOXD_IDLE_THRESHOLD_SECONDS=40 SANDBOXD_IDLE_REAP_INTERVAL_SECONDS=1)
EDGE=http://127.0.0.1:$EDGE_PORT
start_daemon "${DAEMON_ENV[@]}" || bail "the daemon did not come up"

# publish_ok: POST publish, wait for the release to be ready -> RID, PUB_HOST.
publish_ok() {
	RID=
	api POST "/v1/apps/$APP/publish" '{}'
	expect_status 202 || return 1
	RID=$(j .release.id)
	PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##')
	ulid_ok "$RID" || { t_err "no release id: $(short_body)"; return 1; }
	release_wait "$RID" 150 || return 1
	[[ $(j .status) == ready && $(j .kind) == server ]] || {
		t_err "release $RID: $(short_body)"
		api GET "/v1/apps/$APP/releases/$RID/log"
		t_err "its log: $(tail -c 600 <<<"$BODY")"
		return 1
	}
	active_wait "$RID" 60
}
# active_wait RID SECS: until the release is the app's active one (its
# container answering its health path).
active_wait() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		api GET "/v1/apps/$APP/releases/$1"
		[[ $(j .active) == true ]] && return 0
		sleep 0.5
	done
	t_err "release $1 not active after $2 s: $(short_body)"
}
rel_container() { echo "sandboxd-rel-${1,,}"; }
# answer PATH: the body of GET PATH at the published host (through the edge).
answer() { curl -s --max-time 5 -H "Host: $PUB_HOST" "$EDGE$1" 2>/dev/null; }
answers() { [[ $(answer /version) == "$1" ]]; }
started_at() { dinspect "$1" '{{.State.StartedAt}}'; }

# The app: Express, with the release's version, its environment and a way
# to stop answering (a busy loop) for the health checks.
server_js() {
	cat <<EOF
const express = require('express')
const fs = require('fs')
const app = express()
let hung = false
app.get('/', (q, s) => s.type('html').send('<h1>shop $1</h1>'))
app.get('/version', (q, s) => s.type('text').send('$1'))
app.get('/env', (q, s) => s.json(process.env))
app.get('/health', (q, s) => { if (!hung) s.json({ status: 'ok' }) })
app.get('/hang', (q, s) => { hung = true; s.send('hanging') })
app.get('/write', (q, s) => {
  try { fs.writeFileSync('/app/x', 'x'); s.send('wrote') } catch (e) { s.send(e.code) }
})
app.listen(Number(process.env.PORT) || 3000, '0.0.0.0')
EOF
}

t_begin "setup: a node-express app with an exposed config key, published"
create_app shop '"runtime_preset":"node-express"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID
SB=$SB_ID
# The preset's files (its sandbox.yaml says how to publish) come with
# the first boot.
wait_until 120 eval '[[ -e $DATA/workspaces/$SB/.sandboxd/seeded ]]' ||
	bail "the sandbox was not seeded"
api PUT "/v1/apps/$APP/config/APP_GREETING" '{"value":"hello-prod","expose_env":true}'
[[ $STATUS == 20[01] ]] || t_err "PUT config: $STATUS $(short_body)"
api PUT "/v1/sandboxes/$SB/files?path=server.js" "$(server_js v1)"
expect_status 200
# Its own publish: section (the image's preset may predate it).
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: node server.js
  port: 3000
  health_path: /health
publish:
  command: node server.js
  port: 3000
  health_path: /health
'
expect_status 200
publish_ok || bail "the first publish failed: ${T_ERRS[*]}"
R1=$RID
C1=$(rel_container "$R1")
t_end

t_begin "the published host answers through the edge, from the production container"
wait_until 10 answers v1 || t_err "GET /version: '$(answer /version)'"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $E_BODY == *"shop v1"* ]] || t_err "GET /: $E_STATUS $E_BODY"
container_running "$C1" || t_err "no running container $C1"
[[ $(dinspect "$C1" '{{index .Config.Labels "sandboxd.release"}}') == "$R1" ]] ||
	t_err "$C1 is not labelled with its release"
[[ $(dinspect "$C1" '{{index .Config.Labels "sandboxd.sandbox"}}') == "" ]] ||
	t_err "$C1 carries a sandbox label"
t_end

t_begin "the container: sandbox uid, read-only root and /app, restart policy, no agent or supervisor"
[[ $(docker exec "$C1" id -u) == 1000 ]] || t_err "uid: $(docker exec "$C1" id -u 2>&1)"
[[ $(dinspect "$C1" '{{.HostConfig.ReadonlyRootfs}}') == true ]] || t_err "the root is writable"
[[ $(dinspect "$C1" '{{.HostConfig.RestartPolicy.Name}}') == unless-stopped ]] ||
	t_err "restart policy: $(dinspect "$C1" '{{.HostConfig.RestartPolicy.Name}}')"
[[ $(answer /write) == EROFS ]] || t_err "a write to /app: '$(answer /write)'"
docker exec "$C1" sh -c 'echo x >/usr/local/x' 2>/dev/null && t_err "a write to the root worked"
[[ -z $(docker exec "$C1" ls -A /opt/sandboxd/agents 2>&1) ]] ||
	t_err "the agents' directory is not empty: $(docker exec "$C1" ls -A /opt/sandboxd/agents 2>&1 | head -3)"
docker exec "$C1" sh -c 'for p in /proc/[0-9]*; do cat $p/cmdline; echo; done' 2>/dev/null |
	grep -q sandboxd-init && t_err "the supervisor runs in the production container"
[[ $(dinspect "$C1" '{{range .Mounts}}{{.Destination}} {{end}}') != *"/home/sandbox"* ]] ||
	t_err "the workspace is mounted"
t_end

t_begin "its environment: the app's config and PORT, no SANDBOXD_* (no proxy token)"
ENVJ=$(answer /env)
[[ $(jq -r .APP_GREETING <<<"$ENVJ") == hello-prod ]] || t_err "APP_GREETING: $(head -c 300 <<<"$ENVJ")"
[[ $(jq -r .NODE_ENV <<<"$ENVJ") == production ]] || t_err "NODE_ENV: $(jq -r .NODE_ENV <<<"$ENVJ")"
[[ $(jq -r .PORT <<<"$ENVJ") == 3000 ]] || t_err "PORT: $(jq -r .PORT <<<"$ENVJ")"
[[ $(jq -r '[keys[] | select(startswith("SANDBOXD"))] | length' <<<"$ENVJ") == 0 ]] ||
	t_err "SANDBOXD_* in the env: $(jq -c '[keys[] | select(startswith("SANDBOXD"))]' <<<"$ENVJ")"
t_end

t_begin "a crash (SIGKILL of its main process) is restarted by the engine and answers again"
PID1=$(dinspect "$C1" '{{.State.Pid}}')
BEFORE=$(started_at "$C1")
kill -KILL "$PID1" 2>/dev/null || t_err "could not kill pid $PID1"
wait_until 30 eval '[[ $(started_at "$C1") != "$BEFORE" ]] && container_running "$C1"' ||
	t_err "not restarted: $(dinspect "$C1" '{{.State.Status}} {{.RestartCount}}')"
wait_until 20 answers v1 || t_err "after the restart: '$(answer /version)'"
t_end

t_begin "a server that stops answering its health path is DOWN, then restarted"
BEFORE=$(started_at "$C1")
answer /hang >/dev/null
down=
for ((i = 0; i < 300; i++)); do
	edge_get "$PUB_HOST" /version --max-time 2
	[[ $E_STATUS == 503 ]] && { down=1; break; }
	sleep 0.1
done
[[ -n $down ]] || t_err "never DOWN (last: $E_STATUS $E_BODY)"
wait_until 40 eval '[[ $(started_at "$C1") != "$BEFORE" ]]' || t_err "not restarted"
wait_until 30 answers v1 || t_err "after the restart: '$(answer /version)'"
t_end

t_begin "a container removed by hand is made again"
docker rm -f "$C1" >/dev/null
wait_until 40 answers v1 || t_err "not answering again: '$(answer /version)'"
container_running "$C1" || t_err "$C1 not made again"
t_end

t_begin "a daemon restart keeps the running container (answering at once), removes a stale one"
BEFORE=$(started_at "$C1")
INST=$(dinspect "$C1" '{{index .Config.Labels "sandboxd.instance"}}')
echo "$INST" >>"$IT_TMP/.instances"
stop_daemon
container_running "$C1" || t_err "the container stopped with the daemon"
# A production container of a release that is no active one (left by a
# crash between a switch and the old container's removal).
STALE=sandboxd-rel-stale-$$
docker run -d --name "$STALE" --label "sandboxd.instance=$INST" \
	--label sandboxd.release=01M00000000000000000STALE0 --label sandboxd.production=true \
	--entrypoint sleep "$IT_IMAGE" 600 >/dev/null || t_err "could not make $STALE"
start_daemon "${DAEMON_ENV[@]}" || bail "the daemon did not come back"
wait_until 5 answers v1 || t_err "after the restart: '$(answer /version)'"
[[ $(started_at "$C1") == "$BEFORE" ]] || t_err "the container was restarted"
wait_until 10 eval '! container_exists "$STALE"' || t_err "the stale $STALE is still there"
t_end

t_begin "a second release answers v2; rollback switches back to v1, and to v2 again"
api PUT "/v1/sandboxes/$SB/files?path=server.js" "$(server_js v2)"
expect_status 200
if publish_ok; then
	R2=$RID
	wait_until 10 answers v2 || t_err "after release 2: '$(answer /version)'"
	api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R1\"}"
	expect_status 200
	wait_until 10 answers v1 || t_err "after the rollback: '$(answer /version)'"
	api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R2\"}"
	expect_status 200
	wait_until 10 answers v2 || t_err "after the rollback to 2: '$(answer /version)'"
	# Only the active release runs.
	wait_until 10 eval '! container_running "$C1"' || t_err "$C1 still runs"
fi
t_end

t_begin "the idle reaper stops the preview sandbox; the release keeps answering"
wait_sb "$SB" '.status == "stopped" and .status_reason == "idle"' 90
answers v2 || t_err "the release stopped answering: '$(answer /version)'"
container_running "$(rel_container "$R2")" || t_err "the release's container stopped"
t_end

t_begin "the pressure reaper stops the preview again, never the release"
api POST "/v1/sandboxes/$SB/start"
expect_status 200
stop_daemon
start_daemon "${DAEMON_ENV[@]}" SANDBOXD_MEM_HEADROOM_PCT=100 SANDBOXD_PRESSURE_INTERVAL_SECONDS=1 ||
	bail "the daemon did not come back"
wait_sb "$SB" '.status == "stopped" and .status_reason == "pressure"' 60
sleep_until=$(($(date +%s) + 3))
while (($(date +%s) < sleep_until)); do
	answers v2 || { t_err "the release stopped answering under pressure"; break; }
done
container_running "$(rel_container "$R2")" || t_err "the release's container was stopped"
t_end

finish
