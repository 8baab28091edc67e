#!/usr/bin/env bash
# The presets nextjs and worker through the API and the preview edge, with
# sandboxes that reach nothing but the credential proxy
# (SANDBOXD_EGRESS=none: no package registry).  A nextjs app is seeded from
# its template (dependencies included), its preview serves the Next.js
# page (next dev compiles it on the first request) and an edit of
# app/page.js shows without a restart.  A worker app runs its worker and
# no web process: its status says so without an error (preview "none"),
# its heartbeat is in the worker's log and status.json counts its runs,
# and its preview address answers at once with a page that says the app
# has no web process and names the worker: while running, after a wake by
# that address, and after a restart of the daemon.  Prints the times as
# "#" lines.  The sandboxes run $IT_IMAGE (SANDBOXD_IMAGE).
. "$(dirname "$0")/lib.sh"
need_docker
command -v jq >/dev/null || bail "jq is needed"
start_edge_daemon SANDBOXD_IMAGE="$IT_IMAGE" SANDBOXD_EGRESS=none

now_ms() { echo $(($(date +%s%N) / 1000000)); }
host_of() { echo "s-$1-3000.preview.localhost:$EDGE_PORT"; }
# page_has SB TEXT: the preview of SB answers 200 with TEXT in its body.
page_has() {
	edge_get "$(host_of "$1")" /
	[[ $E_STATUS == 200 && $E_BODY == *"$2"* ]]
}
# no_web_page SB: the preview of SB is the edge's no-web page for "worker".
no_web_page() {
	edge_get "$(host_of "$1")" /
	[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == no-web &&
		$E_BODY == *"This app has no web process"* &&
		$E_BODY == *"it runs workers: worker"* ]]
}
# worker_log SB: the worker's log lines, one a line.
worker_log() {
	api GET "/v1/sandboxes/$1/processes/worker/logs?tail=50"
	[[ $STATUS == 200 ]] && j '.lines[]'
}

t_begin "GET /v1/presets lists nextjs (port 3000) and worker (no web: port null)"
api GET /v1/presets
expect_status 200 &&
	expect_jq 'any(.presets[]; .id == "nextjs" and .port == 3000 and .label == "Next.js")' &&
	expect_jq 'any(.presets[]; .id == "worker" and .port == null and (.description | length) > 0)'
t_end

t_begin "nextjs: seeded with its dependencies, its preview serves the Next.js page with no registry"
NEXT_TEXT="Your Next.js app is running"
if create_app next '"runtime_preset":"nextjs"' && create_sandbox "$APP_ID"; then
	NEXT=$SB_ID NEXT_C=$SB_CONTAINER
	t0=$(now_ms)
	if wait_until 120 page_has "$NEXT" "$NEXT_TEXT"; then
		note "nextjs: page through the edge $(($(now_ms) - t0)) ms after the sandbox was created"
		t1=$(now_ms)
		page_has "$NEXT" "$NEXT_TEXT" || t_err "a second GET /: $E_STATUS"
		note "nextjs: a second GET / took $(($(now_ms) - t1)) ms"
	else
		t_err "no page with '$NEXT_TEXT': $E_STATUS $(eh X-Sandboxd-Preview) ${E_BODY:0:300}" \
			"web log: $(tail -n 20 "$DATA/workspaces/$NEXT/.sandboxd/logs/web.log" 2>/dev/null)"
	fi
	wait_sb "$NEXT" '.preview.status == "ready"' 60 &&
		expect_jq '.manifest.source == "sandbox.yaml" and .manifest.valid' &&
		expect_jq '[.processes[] | select(.name == "web" and .state == "running")] | length == 1'
	app=$DATA/workspaces/$NEXT/workspace/app
	[[ -f $app/node_modules/next/package.json ]] || t_err "no node_modules/next in the app"
	ls "$app"/node_modules/@next/swc-linux-*-gnu/*.node >/dev/null 2>&1 ||
		t_err "no native SWC binary in node_modules/@next"
	# The page's client code (the button) compiles too.
	js=$(grep -oE '/_next/static/[^"]+\.js' <<<"$E_BODY" | head -n 1)
	if [[ -n $js ]]; then
		edge_get "$(host_of "$NEXT")" "$js"
		[[ $E_STATUS == 200 ]] || t_err "GET $js: $E_STATUS"
	else
		t_err "the page links no /_next/static script"
	fi
	[[ $(docker exec "$NEXT_C" printenv NEXT_TELEMETRY_DISABLED) == 1 ]] ||
		t_err "NEXT_TELEMETRY_DISABLED is not 1 in the sandbox"
fi
t_end

t_begin "nextjs: an edit of app/page.js shows in the preview without a restart"
if [[ -n ${NEXT:-} ]]; then
	api GET "/v1/sandboxes/$NEXT/files/content?path=app/page.js"
	expect_status 200
	page=${BODY//Your Next.js app is running/Edited while it runs}
	[[ $page != "$BODY" ]] || t_err "app/page.js has no '$NEXT_TEXT'"
	api PUT "/v1/sandboxes/$NEXT/files?path=app/page.js" "$page"
	expect_status 200
	t0=$(now_ms)
	if wait_until 60 page_has "$NEXT" "Edited while it runs"; then
		note "nextjs: the edit showed $(($(now_ms) - t0)) ms after the write"
	else
		t_err "the edit did not show: $E_STATUS ${E_BODY:0:200}"
	fi
	api GET "/v1/sandboxes/$NEXT"
	expect_jq '[.processes[] | select(.name == "web")][0].restarts == 0'
	api DELETE "/v1/apps/$(j .app_id)"
fi
t_end

t_begin "worker: the worker runs, no web process, that is not an error, and it is always on"
if create_app work '"runtime_preset":"worker"' && create_sandbox "$APP_ID"; then
	WORK=$SB_ID
	wait_sb "$WORK" '[.processes[] | select(.name == "worker" and .kind == "worker" and .state == "running")] | length == 1' 60 &&
		expect_jq '.manifest.source == "sandbox.yaml" and .manifest.valid' &&
		expect_jq '[.processes[] | select(.kind == "web")] | length == 0' &&
		expect_jq '.preview.status == "none"' &&
		expect_jq '.problem == null' &&
		expect_jq '.idle_policy == "always_on"' # a worker's job is no traffic
fi
t_end

t_begin "worker: its heartbeat is in its log and status.json counts its runs"
if [[ -n ${WORK:-} ]]; then
	# One run at start, then one every 5 s.
	wait_until 30 eval 'worker_log "$WORK" | grep -q "^heartbeat 2 "' ||
		t_err "no 'heartbeat 2' in the worker's log: $(worker_log "$WORK" | tail -n 5)"
	api GET "/v1/sandboxes/$WORK/files/content?path=status.json"
	expect_status 200 && expect_jq '.runs >= 2 and (.last_run | test("^[0-9]{4}-"))'
fi
t_end

t_begin "worker: its preview address says at once that it has no web process"
if [[ -n ${WORK:-} ]]; then
	t0=$(now_ms)
	no_web_page "$WORK" ||
		t_err "expected 404 no-web naming the worker, got $E_STATUS '$(eh X-Sandboxd-Preview)': ${E_BODY:0:300}"
	note "worker: the no-web page in $(($(now_ms) - t0)) ms"
	[[ -z $(eh Retry-After) ]] || t_err "the no-web page has Retry-After (it is no warming page)"
fi
t_end

t_begin "worker: stopped, woken by its preview address, then the no-web page"
if [[ -n ${WORK:-} ]]; then
	api POST "/v1/sandboxes/$WORK/stop"
	expect_status 200
	edge_get "$(host_of "$WORK")" /
	[[ $E_STATUS == 503 && $(eh X-Sandboxd-Preview) == waking ]] ||
		t_err "a stopped worker app: expected 503 waking, got $E_STATUS '$(eh X-Sandboxd-Preview)'"
	wait_until 60 no_web_page "$WORK" ||
		t_err "after the wake: $E_STATUS '$(eh X-Sandboxd-Preview)': ${E_BODY:0:300}"
	wait_sb "$WORK" '.status == "running" and any(.processes[]; .name == "worker" and .state == "running")' 30
fi
t_end

t_begin "worker: after a daemon restart its preview still says no web process, at once"
if [[ -n ${WORK:-} ]]; then
	start_edge_daemon SANDBOXD_IMAGE="$IT_IMAGE" SANDBOXD_EGRESS=none
	no_web_page "$WORK" ||
		t_err "expected 404 no-web, got $E_STATUS '$(eh X-Sandboxd-Preview)': ${E_BODY:0:300}"
	api GET "/v1/sandboxes/$WORK"
	expect_jq '.preview.status == "none"'
fi
t_end

finish
