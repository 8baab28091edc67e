#!/usr/bin/env bash
# install.sh from a clean HOME against the real engine, as a user runs it:
# Debian's docker-compose 1.29 (the fallback: the Compose plugin is not
# packaged here), without Traefik (SANDBOXD_TRAEFIK=0: its image cannot be
# pulled here), on ports of its own.  The daemon comes up healthy in its
# container with what it needs (host network, NET_ADMIN, the socket, the
# data dir at the same path); the token install.sh prints works, and so do
# its sample requests as printed; the seeds' quickstart runs verbatim
# against it, with the preview served through HTTP_PORT; docker-compose
# ps and logs show the service; a second run changes nothing and keeps
# .env; uninstall.sh removes the services and the network and keeps the
# data; a daemon that cannot start makes install.sh say what to run.  Times of each step are printed as "# time: …".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deploy-lib.sh"
deploy_setup

t_begin "install.sh from a clean HOME installs and waits for health"
start=$SECONDS
run_install
install_s=$((SECONDS - start))
echo "# time: install.sh (daemon image build, compose up -d, health) ${install_s}s"
if ((INSTALL_RC != 0)); then
	t_err "install.sh exited with $INSTALL_RC: $(tail -n 25 "$INSTALL_OUT")"
	t_end
	finish
fi
grep -q '^sandboxd: Compose: docker-compose (1\.' "$INSTALL_OUT" ||
	t_err "install.sh did not use the docker-compose fallback: $(grep Compose "$INSTALL_OUT")"
grep -q '^sandboxd: healthy after' "$INSTALL_OUT" || t_err "no health wait in the output"
grep -q "^Console: *http://console.localhost:$INST_HTTP_PORT\$" "$INSTALL_OUT" || t_err "no console URL"
grep -q '^Setup code: ' "$INSTALL_OUT" || t_err "no setup code line"
[[ -d $INST_SRC/.git ]] || t_err "no checkout in $INST_SRC"
[[ $(git -C "$INST_SRC" rev-parse HEAD) == "$(git -C "$IT_TMP/repo" rev-parse main)" ]] ||
	t_err "the checkout is not at main of SANDBOXD_REPO"
t_end

t_begin ".env: written 0600 with a fresh token and the settings given at install"
[[ $(stat -c %a "$INST_SRC/.env") == 600 ]] || t_err ".env mode is $(stat -c %a "$INST_SRC/.env"), not 600"
token_line=$(inst_env_value SANDBOXD_API_TOKENS)
[[ $token_line =~ ^default=sk_[A-Za-z0-9_-]{40,}$ ]] || t_err "SANDBOXD_API_TOKENS is '$token_line'"
[[ $(inst_env_value HTTP_PORT) == "$INST_HTTP_PORT" ]] || t_err "HTTP_PORT in .env is $(inst_env_value HTTP_PORT)"
[[ $(inst_env_value SANDBOXD_API_ADDR) == "$INST_API" ]] || t_err "SANDBOXD_API_ADDR in .env"
[[ $(inst_env_value SANDBOXD_DATA_DIR) == "$INST_DATA" ]] || t_err "SANDBOXD_DATA_DIR in .env"
[[ -z $(inst_env_value COMPOSE_PROFILES) ]] || t_err "COMPOSE_PROFILES is not empty without Traefik"
# every other line is .env.example's
diff <(grep -vE '^(HTTP_PORT|SANDBOXD_(API_ADDR|API_TOKENS|PROXY_PORT|DATA_DIR|NETWORK|DAEMON_IMAGE|DAEMON_BASE|IMAGE)|COMPOSE_(PROJECT_NAME|PROFILES))=' "$INST_SRC/.env") \
	<(grep -vE '^(HTTP_PORT|SANDBOXD_(API_ADDR|API_TOKENS|PROXY_PORT|DATA_DIR|NETWORK|DAEMON_IMAGE|DAEMON_BASE|IMAGE)|COMPOSE_(PROJECT_NAME|PROFILES))=' "$INST_SRC/.env.example") >/dev/null ||
	t_err ".env differs from .env.example in other lines than the ones given"
t_end

API_URL=http://$INST_API
TOKEN=$(printed_install_token)

t_begin "healthz is ok and the printed token works"
expect_healthz
[[ $TOKEN == "${token_line#default=}" ]] || t_err "printed token '$TOKEN' is not the one in .env"
api GET /v1/apps
expect_status 200
api_as "${TOKEN}x" GET /v1/apps
expect_status 401
api GET /v1/status
expect_json .network.name "$INST_NETWORK" && expect_json .network.ready true &&
	expect_json .egress.installed true && expect_json .proxy.listening true
t_end

t_begin "the sample requests install.sh printed work as printed"
mapfile -t samples < <(sed -n '/^Try it:/,/^$/p' "$INSTALL_OUT" | sed -n 's/^  \(curl .*\)$/\1/p')
((${#samples[@]} == 2)) || t_err "expected 2 sample requests after 'Try it:', got ${#samples[@]}"
if ((${#samples[@]} == 2)); then
	out=$(bash -c "${samples[0]}")
	jq -e '.apps | type == "array"' <<<"$out" >/dev/null || t_err "sample 1 answered: ${out:0:300}"
	out=$(bash -c "${samples[1]}")
	jq -e '.id | length == 26' <<<"$out" >/dev/null || t_err "sample 2 answered: ${out:0:300}"
fi
t_end

t_begin "the daemon's container has host network, NET_ADMIN, the socket and the data dir at its path"
c=$(docker ps -q --filter "label=com.docker.compose.project=$INST_PROJECT" --filter label=com.docker.compose.service=sandboxd)
if [[ -z $c ]]; then
	t_err "no running container of service sandboxd in project $INST_PROJECT"
else
	[[ $(dinspect "$c" '{{.HostConfig.NetworkMode}}') == host ]] || t_err "network mode $(dinspect "$c" '{{.HostConfig.NetworkMode}}')"
	[[ $(dinspect "$c" '{{json .HostConfig.CapAdd}}') == '["NET_ADMIN"]' ]] || t_err "cap_add $(dinspect "$c" '{{json .HostConfig.CapAdd}}')"
	mounts=$(dinspect "$c" '{{range .Mounts}}{{.Source}}={{.Destination}} {{end}}')
	[[ " $mounts " == *" $INST_DATA=$INST_DATA "* ]] || t_err "data dir not mounted at its own path: $mounts"
	[[ " $mounts " == *" /var/run/docker.sock=/var/run/docker.sock "* ]] || t_err "no docker socket: $mounts"
	[[ $(dinspect "$c" '{{.State.Health.Status}}') == healthy ]] || t_err "health $(dinspect "$c" '{{.State.Health.Status}}')"
	[[ $(dinspect "$c" '{{.HostConfig.RestartPolicy.Name}}') == unless-stopped ]] || t_err "restart policy"
fi
t_end

# the guide's health check (its $API is this install's)
curl http://$INST_API/healthz >"$IT_TMP/healthz" 2>/dev/null

start=$SECONDS
seeds_quickstart "http://$INST_API" "$TOKEN"

t_begin "the seeds' quickstart against the compose-deployed daemon"
[[ $(cat "$IT_TMP/healthz") == ok ]] || t_err "curl \$API/healthz said '$(cat "$IT_TMP/healthz")'"
ulid_ok "$APP" || t_err "APP is not an id: '${APP:0:200}'"
ulid_ok "$SB" || t_err "SB is not an id: '${SB:0:200}'"
api GET "/v1/sandboxes/$SB"
expect_json .status running && expect_json .workspace "$INST_DATA/workspaces/$SB"
t_end

t_begin "the console is served at console.localhost through HTTP_PORT, and signs in with the printed setup code"
EDGE=http://127.0.0.1:$INST_HTTP_PORT
code=$(ecurl "console.localhost:$INST_HTTP_PORT" /apps -D "$IT_TMP/console.h" -o "$IT_TMP/console.html" -w '%{http_code}')
[[ $code == 200 ]] || t_err "GET /apps of the console: $code $(head -c 300 "$IT_TMP/console.html")"
grep -q '<script type="module"' "$IT_TMP/console.html" || t_err "not the console's index.html: $(head -c 300 "$IT_TMP/console.html")"
grep -qi "^content-security-policy: .*frame-ancestors 'none'" "$IT_TMP/console.h" || t_err "no CSP on the console"
asset=$(grep -oE '/assets/[^"]+\.js' "$IT_TMP/console.html" | head -n 1)
code=$(ecurl "console.localhost:$INST_HTTP_PORT" "$asset" -o /dev/null -w '%{http_code}')
[[ -n $asset && $code == 200 ]] || t_err "the console's script $asset: $code"
setup=$(sed -n 's/^Setup code: *//p' "$INSTALL_OUT" | head -n 1)
code=$(ecurl "console.localhost:$INST_HTTP_PORT" /v1/auth/setup -o "$IT_TMP/setup.json" -w '%{http_code}' \
	-H 'content-type: application/json' -d "{\"setup_code\":\"$setup\",\"password\":\"install-test-pw\"}")
[[ $code == 200 ]] || t_err "setup with the printed code '$setup': $code $(head -c 300 "$IT_TMP/setup.json")"
t_end

t_begin "the preview is served through HTTP_PORT"
EDGE=http://127.0.0.1:$INST_HTTP_PORT
host=s-$SB-3000.preview.localhost:$INST_HTTP_PORT
ok=0
for ((i = 0; i < 600; i++)); do
	code=$(ecurl "$host" / -o "$IT_TMP/preview" -w '%{http_code}')
	[[ $code == 200 ]] && grep -q '/@vite/client' "$IT_TMP/preview" && { ok=1; break; }
	sleep 0.1
done
echo "# time: quickstart (create app and sandbox, preview ready) $((SECONDS - start))s"
if ((!ok)); then
	api GET "/v1/sandboxes/$SB/processes/web/logs?tail=20"
	t_err "GET / of $host: $code $(head -c 300 "$IT_TMP/preview")" "web logs: $(short_body)"
fi
api GET "/v1/sandboxes/$SB"
expect_json .preview.url "http://s-${SB,,}-3000.preview.localhost:$INST_HTTP_PORT"
t_end

t_begin "the seeds' stop, start and delete"
out=$(curl -s -XPOST $API/v1/sandboxes/$SB/stop -H "$AUTH")
jq -e '.status == "stopped"' <<<"$out" >/dev/null || t_err "stop: ${out:0:200}"
out=$(curl -s -XPOST $API/v1/sandboxes/$SB/start -H "$AUTH")
jq -e '.status == "running"' <<<"$out" >/dev/null || t_err "start: ${out:0:200}"
code=$(curl -s -o /dev/null -w '%{http_code}' -XDELETE $API/v1/sandboxes/$SB -H "$AUTH")
[[ $code == 204 || $code == 200 ]] || t_err "delete sandbox: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -XDELETE $API/v1/apps/$APP -H "$AUTH")
[[ $code == 204 || $code == 200 ]] || t_err "delete app: $code"
t_end

t_begin "docker-compose ps and logs sandboxd show the service"
ps=$(inst_compose ps)
grep -qE "${INST_PROJECT}_sandboxd_1 .*Up \(healthy\)" <<<"$ps" || t_err "docker-compose ps: $ps"
# Read whole, then searched: grep -q closing the pipe early would make
# docker-compose die of SIGPIPE, a failure under pipefail.
logs=$(inst_compose logs --no-color sandboxd)
grep -q "listening on http://$INST_API" <<<"$logs" ||
	t_err "docker-compose logs sandboxd has no 'listening on http://$INST_API'"
t_end

t_begin "a second run changes nothing and keeps .env"
env_sum=$(sha256sum <"$INST_SRC/.env")
container=$(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$INST_PROJECT")
image=$(docker image inspect -f '{{.Id}}' "$INST_DAEMON_IMAGE")
start=$SECONDS
run_install HTTP_PORT=1 SANDBOXD_API_TOKENS=other=sk_notthisone
echo "# time: second install.sh run $((SECONDS - start))s"
((INSTALL_RC == 0)) || t_err "second run exited with $INSTALL_RC: $(tail -n 20 "$INSTALL_OUT")"
[[ $(sha256sum <"$INST_SRC/.env") == "$env_sum" ]] || t_err ".env changed"
grep -q '^sandboxd: .env exists: kept' "$INSTALL_OUT" || t_err "no '.env exists: kept' line"
[[ $(docker ps -q --no-trunc --filter "label=com.docker.compose.project=$INST_PROJECT") == "$container" ]] ||
	t_err "the daemon's container was replaced"
[[ $(docker image inspect -f '{{.Id}}' "$INST_DAEMON_IMAGE") == "$image" ]] || t_err "the daemon's image changed"
[[ $(printed_install_token) == "$TOKEN" ]] || t_err "the second run printed another token"
grep -q 'up-to-date' "$INST_HOME/.sandboxd/up.log" || t_err "compose up -d did something: $(cat "$INST_HOME/.sandboxd/up.log")"
expect_healthz
t_end

t_begin "uninstall.sh removes the services and the network, keeps the data"
out=$(cd "$INST_SRC" && env -i "PATH=$PATH" "HOME=$INST_HOME" ./uninstall.sh 2>&1) || t_err "uninstall.sh failed: $out"
[[ -z $(docker ps -aq --filter "label=com.docker.compose.project=$INST_PROJECT") ]] || t_err "containers left"
docker network inspect "$INST_NETWORK" >/dev/null 2>&1 && t_err "network $INST_NETWORK left"
docker image inspect "$INST_DAEMON_IMAGE" >/dev/null 2>&1 && t_err "daemon image left"
[[ -f $INST_DATA/secret.key && -f $INST_DATA/state/sandboxd.db && -f $INST_SRC/.env ]] ||
	t_err "data or .env gone: $(ls "$INST_DATA" "$INST_SRC/.env" 2>&1)"
t_end

t_begin "a daemon that does not become healthy: install.sh says what to run"
echo 'SANDBOXD_MEMORY_MB=lots' >>"$INST_SRC/.env"
run_install SANDBOXD_HEALTH_TIMEOUT=15
((INSTALL_RC == 1)) || t_err "install.sh exited with $INSTALL_RC, expected 1: $(tail -n 5 "$INSTALL_OUT")"
grep -q "did not answer http://$INST_API/healthz within 15s" "$INSTALL_OUT" || t_err "no health failure message: $(tail -n 5 "$INSTALL_OUT")"
grep -q "cd $INST_SRC && docker-compose ps && docker-compose logs sandboxd" "$INSTALL_OUT" ||
	t_err "the message does not say what to run: $(tail -n 3 "$INSTALL_OUT")"
grep -q 'SANDBOXD_MEMORY_MB' "$INSTALL_OUT" || t_err "the daemon's own complaint is not shown: $(tail -n 12 "$INSTALL_OUT")"
inst_compose down >/dev/null 2>&1
t_end

t_begin "uninstall.sh --purge refuses a data dir that is not sandboxd's own"
fake=$IT_TMP/fake-src
mkdir -p "$fake/scripts" "$IT_TMP/fakehome"
cp "$INST_SRC/uninstall.sh" "$fake/"
cp "$INST_SRC/scripts/deploy-lib.sh" "$fake/scripts/"
for bad in / /var/lib "$IT_TMP/fakehome" "" "$IT_TMP/repo"; do
	printf 'SANDBOXD_DATA_DIR=%s\nCOMPOSE_PROJECT_NAME=sbxit%snone\n' "$bad" "$$" >"$fake/.env"
	if out=$(cd "$fake" && env -i "PATH=$PATH" "HOME=$IT_TMP/fakehome" ./uninstall.sh --purge --yes 2>&1); then
		t_err "uninstall.sh --purge with SANDBOXD_DATA_DIR='$bad' went ahead: $out"
	fi
done
[[ -f $IT_TMP/repo/install.sh ]] || t_err "the repository was removed"
t_end

finish
