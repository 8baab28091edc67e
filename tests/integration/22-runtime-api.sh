#!/usr/bin/env bash
# The runtime through the API, as a user sees it: every preset with a web
# process but nextjs (95-presets-next-worker.sh has it and worker), created
# with no network in the container (SANDBOXD_NETWORK=none), is seeded from
# its template and serves its page on port 3000 (preview "ready"); a
# crashing web process goes into backoff and then a crash loop while a
# worker runs beside it; logs are readable and capped; restart works; an
# orphaned grandchild is reaped; an invalid sandbox.yaml is reported with
# the field; hostile file paths are refused and nothing outside the app
# directory is read or written.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon SANDBOXD_NETWORK=none || bail "the daemon did not come up"

# page SB: the body of GET http://127.0.0.1:3000/ fetched inside the sandbox
page() {
	docker exec "$(container_of "$1")" python3 -c '
import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:3000/", timeout=5).read().decode()[:4000])' 2>&1
}

t_begin "presets: GET /v1/presets lists the six with port and description (worker: no web port)"
api GET /v1/presets
expect_status 200 &&
	expect_jq '[.presets[].id] | sort == ["fastapi","nextjs","node-express","react-vite","static","worker"]' &&
	expect_jq 'all(.presets[]; (.description | length) > 0 and .port == (if .id == "worker" then null else 3000 end))'
t_end

declare -A want=([react-vite]='<div id="root">' [fastapi]='FastAPI' [node-express]='Express' [static]='<html')
for preset in react-vite fastapi node-express static; do
	t_begin "preset $preset: seeded, ready with no network, serves its page"
	if create_app "p-$preset" "\"runtime_preset\":\"$preset\"" &&
		create_sandbox "$APP_ID"; then
		SB=$SB_ID
		t0=$(date +%s%N)
		if wait_sb "$SB" '.preview.status == "ready"' 90; then
			note "$preset ready $((($(date +%s%N) - t0) / 1000000)) ms after create"
			expect_jq '.manifest.source == "sandbox.yaml" and .manifest.valid'
			expect_jq '[.processes[] | select(.name == "web" and .kind == "web" and .state == "running")] | length == 1'
			[[ -f $DATA/workspaces/$SB/workspace/app/.gitignore ]] ||
				t_err "the template brought no .gitignore"
			out=$(page "$SB")
			[[ $out == *"${want[$preset]}"* ]] ||
				t_err "GET / inside the sandbox did not show '${want[$preset]}': ${out:0:300}"
		fi
		api DELETE "/v1/apps/$APP_ID"
	fi
	t_end
done

t_begin "an existing workspace is never re-seeded"
if create_app keep '"runtime_preset":"static"' && create_sandbox "$APP_ID"; then
	SB=$SB_ID
	wait_sb "$SB" '.preview.status == "ready"' 60
	api PUT "/v1/sandboxes/$SB/files?path=index.html" 'mine'
	expect_status 200
	api POST "/v1/sandboxes/$SB/stop" && api POST "/v1/sandboxes/$SB/start"
	expect_status 200
	wait_sb "$SB" '.preview.status == "ready"' 60
	api GET "/v1/sandboxes/$SB/files/content?path=index.html"
	[[ $BODY == mine ]] || t_err "index.html was overwritten: $(short_body)"
	api DELETE "/v1/apps/$APP_ID"
fi
t_end

# One app without a preset for the process tests.
t_begin "no preset and no sandbox.yaml: the default web process runs"
create_app procs && create_sandbox "$APP_ID" && SB=$SB_ID &&
	wait_sb "$SB" '.manifest.source == "default" and .preview.status == "ready"' 60
t_end
C=$(container_of "$SB")
WS=$DATA/workspaces/$SB

t_begin "a crashing web process backs off, then is a crash loop; a worker runs beside it"
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: sh -c "echo boom; exit 3"
  port: 3000
workers:
  - name: ticker
    command: sh -c "while true; do echo tick; sleep 1; done"
  - name: orphans
    command: sh -c "sleep 1000 & sleep 1000 & exit 0"
'
expect_status 200
wait_sb "$SB" '[.processes[] | select(.name == "web" and .state == "backoff")] | length == 1' 20
wait_sb "$SB" '[.processes[] | select(.name == "ticker" and .state == "running")] | length == 1' 20
expect_jq '.preview.status == "error"'
# 1+2+4+8+16 s of backoff before the sixth quick crash.
wait_sb "$SB" '[.processes[] | select(.name == "web" and .state == "crashloop")] | length == 1' 60
expect_jq '[.processes[] | select(.name == "web")][0].restarts >= 5'
t_end

t_begin "logs: the crash output and the worker output are readable"
api GET "/v1/sandboxes/$SB/processes/web/logs?tail=5"
expect_status 200 && expect_jq '.process == "web" and (.lines | length) <= 5 and any(.lines[]; contains("boom"))'
api GET "/v1/sandboxes/$SB/processes/ticker/logs"
expect_status 200 && expect_jq 'any(.lines[]; . == "tick")'
api GET "/v1/sandboxes/$SB/processes/nosuch/logs"
expect_status 404 && expect_envelope not_found
api GET "/v1/sandboxes/$SB/processes/Bad%20Name/logs"
expect_status 400 && expect_envelope invalid_request
api GET "/v1/sandboxes/$SB/processes/web/logs?tail=0"
expect_status 400
t_end

t_begin "restart: a crash-looped process starts again"
api POST "/v1/sandboxes/$SB/processes/web/restart"
expect_status 200 && expect_json .restarted true
api POST "/v1/sandboxes/$SB/processes/nosuch/restart"
expect_status 404
t_end

t_begin "orphaned grandchildren are reaped: no zombies"
sleep 2
z=$(docker exec "$C" ps -eo stat= 2>/dev/null | grep -c '^Z')
[[ $z == 0 ]] || t_err "$z zombie processes in the sandbox: $(docker exec "$C" ps -eo pid,ppid,stat,args)"
t_end

t_begin "logs are capped: a flood keeps the log at 1 MiB plus one rotation"
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
workers:
  - name: flood
    command: sh -c "yes 0123456789abcdef0123456789abcdef | head -c 5000000; sleep 1000"
'
expect_status 200
wait_sb "$SB" '[.processes[] | select(.name == "flood")] | length == 1' 20
sleep 3
size=$(stat -c %s "$WS/.sandboxd/logs/flood.log" 2>/dev/null || echo missing)
old=$(stat -c %s "$WS/.sandboxd/logs/flood.log.1" 2>/dev/null || echo missing)
[[ $size != missing && $size -le 1049000 ]] || t_err "flood.log is $size bytes"
[[ $old != missing && $old -le 1049000 ]] || t_err "flood.log.1 is $old bytes"
api GET "/v1/sandboxes/$SB/processes/flood/logs?tail=3"
expect_status 200 && expect_jq '(.lines | length) == 3'
t_end

t_begin "an invalid sandbox.yaml is reported with the field, not replaced"
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: npm run dev
  port: lots
'
expect_status 200
wait_sb "$SB" '.manifest.valid == false' 20
expect_jq '(.manifest.error | contains("web.port")) and .preview.status == "error"'
t_end

t_begin "hostile paths: refused, nothing outside the app directory touched"
echo secret >"$WS/outside.txt"
docker exec "$C" sh -c 'cd ~/workspace/app && ln -sf /etc etc-link && ln -sf ../../outside.txt up-link && ln -sf / root-link && mkdir -p d && ln -sf /etc d/inner' >/dev/null 2>&1
n=0
for p in '../outside.txt' '../../outside.txt' '/etc/passwd' '%2Fetc%2Fpasswd' 'a/../../x' '..' \
	'etc-link/passwd' 'up-link' 'root-link/etc/hostname' 'd/inner/passwd' 'a%00b' \
	'%2e%2e/outside.txt' 'x/%2e%2e/%2e%2e/outside.txt' '.%2F..%2Foutside.txt' "$(printf 'a%.0s' {1..1100})"; do
	api GET "/v1/sandboxes/$SB/files/content?path=$p"
	[[ $STATUS == 400 || $STATUS == 404 ]] || t_err "GET content $p: HTTP $STATUS $(short_body)"
	[[ $BODY == *secret* || $BODY == *root:x:* ]] && t_err "GET content $p leaked: $(short_body)"
	api PUT "/v1/sandboxes/$SB/files?path=$p" 'pwned'
	[[ $STATUS == 400 || $STATUS == 404 ]] || t_err "PUT $p: HTTP $STATUS $(short_body)"
	api DELETE "/v1/sandboxes/$SB/files?path=$p"
	[[ $STATUS == 400 || $STATUS == 404 || ($STATUS == 204 && $p == up-link) ]] ||
		t_err "DELETE $p: HTTP $STATUS"
	n=$((n + 1))
done
[[ $(cat "$WS/outside.txt") == secret ]] || t_err "outside.txt changed"
grep -q pwned /etc/passwd /etc/hostname 2>/dev/null && t_err "a host file was written"
[[ -e /pwned || -e /etc/pwned ]] && t_err "a file appeared outside"
note "$n hostile paths tried with GET, PUT and DELETE"
head -c 17000000 /dev/zero >"$IT_TMP/big.bin"
api PUT "/v1/sandboxes/$SB/files?path=big.bin" "@$IT_TMP/big.bin"
expect_status 413
t_end

t_begin "files work while the sandbox is stopped"
api POST "/v1/sandboxes/$SB/stop"
api PUT "/v1/sandboxes/$SB/files?path=notes/todo.md" 'offline edit'
expect_status 200 && expect_json .size 12
api GET "/v1/sandboxes/$SB/files?path=notes"
expect_status 200 && expect_jq '.entries == [{"path":"notes/todo.md","type":"file","size":12}]'
[[ $(stat -c %u "$WS/workspace/app/notes/todo.md") == 1000 ]] || t_err "the file is not owned by uid 1000"
api GET "/v1/sandboxes/$SB/processes/ticker/logs"
expect_status 200
t_end

finish
