#!/usr/bin/env bash
# A FastAPI server release: the fastapi preset's app published answers
# through the edge at its host from its production container (uvicorn
# without --reload, as the sandbox user, read-only /app, the app's config
# in its environment); a release whose server exits at once fails fast
# with the server's output in its error while the previous one serves;
# unpublishing removes the container and the host answers the app no
# more.
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
start_daemon "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 || bail "the daemon did not come up"

t_begin "setup: a fastapi app, published"
create_app api-py '"runtime_preset":"fastapi"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID
wait_until 120 eval '[[ -e $DATA/workspaces/$SB_ID/.sandboxd/seeded ]]' ||
	bail "the sandbox was not seeded"
api PUT "/v1/apps/$APP/config/APP_MODE" '{"value":"live","expose_env":true}'
[[ $STATUS == 20[01] ]] || t_err "PUT config: $STATUS $(short_body)"
api POST "/v1/apps/$APP/publish" '{}'
expect_status 202 || bail "publish: $(short_body)"
RID=$(j .release.id)
PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##')
for ((i = 0; i < 300; i++)); do
	api GET "/v1/apps/$APP/releases/$RID"
	[[ $(j .status) != building ]] && break
	sleep 0.5
done
[[ $(j .status) == ready && $(j .kind) == server ]] || {
	api GET "/v1/apps/$APP/releases/$RID/log"
	bail "release $RID not ready: $(tail -c 600 <<<"$BODY")"
}
C=sandboxd-rel-${RID,,}
# Ready, then active once its container answers its health path.
for ((i = 0; i < 120; i++)); do
	api GET "/v1/apps/$APP/releases/$RID"
	[[ $(j .active) == true ]] && break
	sleep 0.5
done
[[ $(j .active) == true ]] || t_err "release $RID not active: $(short_body)"
t_end

t_begin "its host answers the FastAPI app through the edge"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $E_BODY == *"Your FastAPI app is running"* ]] || t_err "GET /: $E_STATUS $(head -c 200 <<<"$E_BODY")"
edge_get "$PUB_HOST" /health
[[ $E_STATUS == 200 ]] || t_err "GET /health: $E_STATUS $E_BODY"
t_end

t_begin "uvicorn without --reload, as uid 1000, /app read-only, APP_MODE in its environment"
cmd=$(docker exec "$C" sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done' 2>/dev/null)
grep -q "uvicorn main:app" <<<"$cmd" || t_err "no uvicorn: $cmd"
grep -q -- "--reload" <<<"$cmd" && t_err "uvicorn runs with --reload"
[[ $(docker exec "$C" id -u) == 1000 ]] || t_err "uid: $(docker exec "$C" id -u 2>&1)"
docker exec "$C" touch /app/x 2>/dev/null && t_err "/app is writable"
pid=$(docker exec "$C" pgrep -f "uvicorn main:app" | head -n 1)
docker exec "$C" cat "/proc/$pid/environ" 2>/dev/null | tr '\0' '\n' | grep -qx APP_MODE=live ||
	t_err "APP_MODE not in uvicorn's environment"
t_end

t_begin "a server that exits at once: the release fails with its output, the previous one serves"
BAD_YAML=$(cat <<'YAML'
version: 1
web:
  command: python3 -m uvicorn main:app --host 0.0.0.0 --port 3000 --reload
  port: 3000
publish:
  command: python3 -c "import sys; sys.stderr.write('boom-marker no database'); sys.exit(3)"
  port: 3000
  health_path: /health
YAML
)
api PUT "/v1/sandboxes/$SB_ID/files?path=sandbox.yaml" "$BAD_YAML"
expect_status 200
api POST "/v1/apps/$APP/publish" '{}'
expect_status 202
BAD=$(j .release.id)
t0=$(date +%s)
for ((i = 0; i < 200; i++)); do
	api GET "/v1/apps/$APP/releases/$BAD"
	[[ $(j .status) != building ]] && break
	sleep 0.5
done
[[ $(j .status) == failed ]] || t_err "release $BAD: $(short_body)"
[[ $(j .error) == *boom-marker* ]] || t_err "its error lacks the server's output: $(j .error)"
(($(date +%s) - t0 < 45)) || t_err "it took $(($(date +%s) - t0)) s to fail"
container_exists "sandboxd-rel-${BAD,,}" && t_err "its container is left"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $E_BODY == *"Your FastAPI app is running"* ]] || t_err "the previous release: $E_STATUS"
t_end

t_begin "unpublish: the container is removed, the host answers the app no more"
api DELETE "/v1/apps/$APP/publish"
[[ $STATUS == 20[04] ]] || t_err "DELETE publish: $STATUS $(short_body)"
wait_until 15 eval '! container_exists "$C"' || t_err "$C still exists"
edge_get "$PUB_HOST" /
[[ $E_STATUS != 200 && $E_BODY != *FastAPI* ]] || t_err "after unpublish: $E_STATUS $(head -c 200 <<<"$E_BODY")"
t_end

finish
