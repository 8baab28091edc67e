#!/usr/bin/env bash
# upgrade.sh on an install made by install.sh (docker-compose, no Traefik):
# an upgrade to a newer commit (another version string, and a rebuilt
# sandbox image) keeps every app, workspace file and secret, runs the new
# daemon image, and a sandbox started after it gets a container of the new
# sandbox image (compared by id: the tag stays the same) with its
# workspace; then an upgrade to a deliberately broken commit (the daemon's
# image does not start) is rolled back: the previous commit, the previous
# images by id, the database restored with the daemon stopped, and again
# every app, file and secret.  While the first upgrade runs, /healthz is
# asked every 0.1 s; the seconds of failed requests are printed as
# "# measure: …".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deploy-lib.sh"
deploy_setup
run_install || bail "install.sh failed: $(tail -n 25 "$INSTALL_OUT")"
API_URL=http://$INST_API
TOKEN=$(printed_install_token)
EDGE=http://127.0.0.1:$INST_HTTP_PORT

# upgrade [VAR=value…] REF: upgrade.sh of the installed checkout
upgrade() {
	local vars=()
	while (($# > 1)); do vars+=("$1"); shift; done
	UPGRADE_OUT=$(cd "$INST_SRC" && env -i "PATH=$PATH" "HOME=$INST_HOME" "IT_IMAGE=$IT_IMAGE" \
		"IT_TEST_LABEL=$IT_TEST_LABEL" "${vars[@]}" ./upgrade.sh "$1" 2>&1 </dev/null)
	UPGRADE_RC=$?
	note_daemon_image
}
id_of() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null; }
running_daemon_image() {
	docker inspect -f '{{.Image}}' "$(docker ps -q --filter "label=com.docker.compose.project=$INST_PROJECT" \
		--filter label=com.docker.compose.service=sandboxd | head -n 1)" 2>/dev/null
}
secrets_check() {
	inst_compose exec -T sandboxd sandboxd secrets check 2>&1 </dev/null | grep '^secrets:'
}

# state_is_kept: every app, the workspace file and the secrets are there.
state_is_kept() {
	api GET /v1/apps
	expect_status 200 && expect_json '.apps | length' 2
	api GET "/v1/apps/$APP/config/DB_PASSWORD"
	expect_status 200 && expect_json .value_set true && expect_json .sensitive true
	api GET "/v1/sandboxes/$SB/files/content?path=keep.txt"
	expect_status 200
	[[ $(cat "$BODY_FILE") == "kept across upgrades $$" ]] || t_err "keep.txt: $(short_body)"
	api GET /v1/agents
	expect_jq '.agents[] | select(.name == "claude-code" or .id == "claude-code") | .status == "connected"' \
		'claude-code connected'
	local s
	s=$(secrets_check)
	[[ $s =~ ^secrets:\ ([0-9]+)\ stored,\ ([0-9]+)\ open,\ 0\ do\ not ]] && ((BASH_REMATCH[1] >= 2)) ||
		t_err "sandboxd secrets check: ${s:-no answer}"
}

t_begin "an install with apps, a workspace file and secrets"
create_app keep && create_sandbox "$APP_ID"
APP=$APP_ID
SB=$SB_ID
api PUT "/v1/sandboxes/$SB/files?path=keep.txt" "kept across upgrades $$"
expect_status 200
api PUT "/v1/apps/$APP/config/DB_PASSWORD" '{"value":"hunter2","sensitive":true}'
expect_status 201
api POST /v1/agents/claude-code/api-key '{"api_key":"sk-ant-it-upgrade-key"}'
expect_status 200
create_app other
state_is_kept
D1=$(id_of "$INST_DAEMON_IMAGE")
B1=$(id_of "$INST_BASE_IMAGE")
[[ $(dinspect "$SB_CONTAINER" '{{.Image}}') == "$B1" ]] || t_err "the sandbox does not run $INST_BASE_IMAGE"
t_end

# --- a newer commit -----------------------------------------------------------
sed -i 's/^VERSION    := .*/VERSION    := 0.1.1/' "$IT_TMP/repo/Makefile"
repo_commit "newer: version 0.1.1"

# /healthz every 0.1 s while the upgrade runs: "<unix time> ok|fail"
poll() {
	while :; do
		if [[ $(curl -s --max-time 1 "$API_URL/healthz") == ok ]]; then r=ok; else r=fail; fi
		echo "$(date +%s.%N) $r"
		sleep 0.1
	done >"$IT_TMP/poll"
}

t_begin "upgrade to a newer commit"
poll &
poller=$!
start=$SECONDS
upgrade main
upgrade_s=$((SECONDS - start))
kill "$poller" 2>/dev/null
wait "$poller" 2>/dev/null
((UPGRADE_RC == 0)) || t_err "upgrade.sh exited with $UPGRADE_RC: $(tail -n 20 <<<"$UPGRADE_OUT")"
awk -v s="$upgrade_s" '
	$2 == "fail" { n++; if (!first) first = $1; last = $1 }
	END {
		printf "# measure: upgrade.sh took %ss; /healthz failed %d times (every 0.1 s), ", s, n
		if (n) printf "from the first to the last failure %.1f s\n", last - first + 0.1
		else print "never"
	}' "$IT_TMP/poll"
grep -E '^upgrade: backup: ' <<<"$UPGRADE_OUT" | sed 's/^/# /'
api GET /v1/status
expect_json .version 0.1.1
D2=$(id_of "$INST_DAEMON_IMAGE")
B2=$(id_of "$INST_BASE_IMAGE")
[[ $D2 != "$D1" ]] || t_err "the daemon's image was not rebuilt"
[[ $(running_daemon_image) == "$D2" ]] || t_err "the running daemon is not the new image"
[[ $B2 != "$B1" ]] || t_err "the sandbox image was not rebuilt"
[[ $(git -C "$INST_SRC" rev-parse HEAD) == "$(git -C "$IT_TMP/repo" rev-parse main)" ]] || t_err "checkout not at the new commit"
backup=$(ls -d "$INST_DATA"/backups/*/ 2>/dev/null | tail -n 1)
[[ -n $backup && -s $backup/sandboxd.db && -s $backup/secret.key && -s $backup/manifest.json ]] ||
	t_err "no backup with sandboxd.db, secret.key and manifest.json: $(ls -l "$INST_DATA/backups"/* 2>&1)"
state_is_kept
t_end

t_begin "the sandbox keeps running its image through the upgrade and gets the new one at its next start"
c=$(container_of "$SB")
[[ $(dinspect "$c" '{{.Image}}') == "$B1" ]] || t_err "the running sandbox's image changed under it"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
c=$(container_of "$SB")
[[ $(dinspect "$c" '{{.Image}}') == "$B2" ]] ||
	t_err "after a start the sandbox runs $(dinspect "$c" '{{.Image}}'), not the new $INST_BASE_IMAGE ($B2)"
logs=$(inst_compose logs --no-color sandboxd) # whole: grep -q on a pipe risks SIGPIPE
grep -q "sandbox $SB: its container was made from image" <<<"$logs" ||
	t_err "no log line about making the container again"
api GET "/v1/sandboxes/$SB/files/content?path=keep.txt"
[[ $(cat "$BODY_FILE") == "kept across upgrades $$" ]] || t_err "keep.txt after the new container: $(short_body)"
ok=0
for ((i = 0; i < 600; i++)); do
	[[ $(ecurl "s-$SB-3000.preview.localhost:$INST_HTTP_PORT" / -o /dev/null -w '%{http_code}') == 200 ]] && { ok=1; break; }
	sleep 0.1
done
((ok)) || t_err "the preview does not answer 200 after the new container"
t_end

# --- a broken commit ------------------------------------------------------------
sed -i 's/^CMD \["serve"\]$/CMD ["no-such-command"]/' "$IT_TMP/repo/Dockerfile"
grep -q 'no-such-command' "$IT_TMP/repo/Dockerfile" || bail "could not break the Dockerfile"
repo_commit "broken: the daemon's image does not start"
H2=$(git -C "$INST_SRC" rev-parse HEAD)

t_begin "an upgrade to a broken commit is rolled back"
start=$SECONDS
upgrade SANDBOXD_HEALTH_TIMEOUT=20 main
echo "# measure: a failed upgrade and its rollback took $((SECONDS - start))s"
((UPGRADE_RC == 1)) || t_err "upgrade.sh exited with $UPGRADE_RC, expected 1: $(tail -n 20 <<<"$UPGRADE_OUT")"
grep -q 'rolling back' <<<"$UPGRADE_OUT" || t_err "no 'rolling back' in: $(tail -n 10 <<<"$UPGRADE_OUT")"
grep -qE '^upgrade: restore: ' <<<"$UPGRADE_OUT" || t_err "the database was not restored: $(tail -n 10 <<<"$UPGRADE_OUT")"
[[ $(git -C "$INST_SRC" rev-parse HEAD) == "$H2" ]] || t_err "the checkout is not back at the previous commit"
[[ $(id_of "$INST_DAEMON_IMAGE") == "$D2" ]] || t_err "$INST_DAEMON_IMAGE is not the previous image again"
[[ $(id_of "$INST_BASE_IMAGE") == "$B2" ]] || t_err "$INST_BASE_IMAGE is not the previous image again"
[[ $(running_daemon_image) == "$D2" ]] || t_err "the running daemon is not the previous image: $(tail -n 12 <<<"$UPGRADE_OUT")"
expect_healthz
api GET /v1/status
expect_json .version 0.1.1
state_is_kept
c=$(container_of "$SB")
[[ $(dinspect "$c" '{{.Image}}') == "$B2" ]] || t_err "the sandbox's container changed image"
t_end

finish
