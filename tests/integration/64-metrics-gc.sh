#!/usr/bin/env bash
# GET /metrics (behind an operator's token) and its counters moving after an edge
# request, a wake, a task and proxy requests (forwarded and refused);
# the app object's disk figure, measured in the background;
# SANDBOXD_LOG_FORMAT=json (every line of the daemon's log one JSON
# object); and `sandboxd gc`: its dry run lists a base image no container
# uses and removes nothing, never lists the image a stopped (sleeping)
# sandbox still uses nor the configured one, lists the trash, and --yes
# removes only what it listed.  gc runs with --repo limited to this test's own images: the
# engine is shared, and other images are not this test's to remove.
. "$(dirname "$0")/lib.sh"
need_test_image

REPO=sbxit-gc-$$
remove_gc_images() { docker rmi -f "$REPO:used" "$REPO:unused" >/dev/null 2>&1; }
IT_CLEANUP_HOOKS+=(remove_gc_images)
for tag in used unused; do
	printf 'FROM %s\nLABEL sbxit.gc=%s\n' "$TEST_IMAGE" "$tag-$$" |
		docker build -q -t "$REPO:$tag" - >/dev/null 2>"$IT_TMP/build.err" ||
		bail "cannot build $REPO:$tag: $(cat "$IT_TMP/build.err")"
done
ID_USED=$(docker image inspect -f '{{.Id}}' "$REPO:used")
ID_UNUSED=$(docker image inspect -f '{{.Id}}' "$REPO:unused")

KEY=sk-ant-metrics-$RANDOM$RANDOM$RANDOM
start_fake_provider --expect-key "$KEY"
EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
PROXY_PORT=$(free_port)
start_daemon SANDBOXD_IMAGE="$REPO:used" SANDBOXD_OPERATORS=it HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	SANDBOXD_PROXY_PORT="$PROXY_PORT" SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_LOG_FORMAT=json SANDBOXD_DISK_USAGE_INTERVAL_SECONDS=5 ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "no gateway: $(short_body)"

# metric NAME{LABELS}: its value in the last scrape (M), or "" when absent
scrape() { api GET /metrics; M=$BODY; }
metric() { awk -v k="$1" '$1 == k {print $2}' <<<"$M"; }
# grew NAME BEFORE [BY]: the metric is now BEFORE+BY (default: more than BEFORE)
grew() {
	local now
	now=$(metric "$1")
	if [[ -n ${3:-} ]]; then
		[[ $now == $(($2 + $3)) ]] || t_err "$1: $2 -> ${now:-<absent>}, expected +$3"
	else
		[[ -n $now ]] && ((now > $2)) || t_err "$1: $2 -> ${now:-<absent>}, expected more"
	fi
}

t_begin "/metrics needs the token and speaks the Prometheus text format"
api_noauth GET /metrics
expect_status 401
scrape
expect_status 200
[[ $(header Content-Type) == "text/plain; version=0.0.4; charset=utf-8" ]] ||
	t_err "Content-Type: $(header Content-Type)"
for f in sandboxd_wakes_total sandboxd_tasks_total sandboxd_proxy_requests_total \
	sandboxd_proxy_bytes_total sandboxd_edge_connections_total sandboxd_edge_requests_total \
	sandboxd_reaper_stops_total sandboxd_wake_seconds sandboxd_sandboxes sandboxd_apps \
	sandboxd_egress_refused_packets sandboxd_docker_up; do
	[[ $(grep -c "^# TYPE $f " <<<"$M") == 1 ]] || t_err "no single # TYPE line for $f"
done
bad=$(grep -vE '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[a-z_]+="[^"]*"\})? -?[0-9.]+)$' <<<"$M")
[[ -z $bad ]] || t_err "lines that are not the text format: ${bad:0:300}"
[[ $(metric sandboxd_docker_up) == 1 ]] || t_err "sandboxd_docker_up is not 1"
t_end

serve_edge_app metrics
C=$(container_of "$SB")
own_calls "$APP_ID" # its proxy token is used after its task below

t_begin "edge connections and requests count"
scrape
conns=$(metric sandboxd_edge_connections_total) reqs=$(metric sandboxd_edge_requests_total)
for i in 1 2 3; do ecurl "$HOST" / >/dev/null; done
scrape
grew sandboxd_edge_requests_total "$reqs" 3
grew sandboxd_edge_connections_total "$conns" 3
[[ $(metric 'sandboxd_sandboxes{state="running"}') == 1 ]] || t_err "running sandboxes: $(metric 'sandboxd_sandboxes{state="running"}')"
t_end

t_begin "a wake counts, with its time in the histogram"
scrape
wakes=$(metric 'sandboxd_wakes_total{outcome="ok"}') wcount=$(metric sandboxd_wake_seconds_count)
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
scrape
[[ $(metric 'sandboxd_sandboxes{state="stopped"}') == 1 ]] || t_err "stopped sandboxes: $(metric 'sandboxd_sandboxes{state="stopped"}')"
for ((i = 0; i < 300; i++)); do
	[[ $(ecurl "$HOST" /) == "hello from the app" ]] && break
	sleep 0.1
done
scrape
grew 'sandboxd_wakes_total{outcome="ok"}' "$wakes" 1
grew sandboxd_wake_seconds_count "$wcount" 1
[[ $(metric 'sandboxd_wake_seconds_bucket{le="+Inf"}') == $(metric sandboxd_wake_seconds_count) ]] ||
	t_err "+Inf bucket != count"
t_end

t_begin "a task counts by its outcome; proxy requests and bytes count"
scrape
ok=$(metric 'sandboxd_tasks_total{outcome="succeeded"}') fwd=$(metric 'sandboxd_proxy_requests_total{result="forwarded"}')
ref=$(metric 'sandboxd_proxy_requests_total{result="refused"}') up=$(metric 'sandboxd_proxy_bytes_total{direction="upstream"}')
down=$(metric 'sandboxd_proxy_bytes_total{direction="downstream"}')
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
submit "$SB" '{"prompt":"[[fake:write=metrics.txt]]","agent":"opencode"}'
wait_task "$SB" "$TASK_ID" 60 && expect_json .status succeeded
TOK=$(jq -r '.provider.sandboxd.options.apiKey' <<<"$(tr '\0' '\n' <"$DATA/workspaces/$SB/.sandboxd/tasks/$TASK_ID/env" | sed -n 's/^OPENCODE_CONFIG_CONTENT=//p')")
proxy_post() { # TOKEN: a POST to the proxy from inside the sandbox; prints the status
	sandbox_post "$C" "http://$GW:$PROXY_PORT/claude-code/anthropic/v1/messages" "$1" \
		'{"model":"m","max_tokens":5,"messages":[]}'
}
[[ $(proxy_post "$TOK") == 200 ]] || t_err "a request with the sandbox's token was not forwarded"
[[ $(proxy_post "") == 401 ]] || t_err "a request without a token was not refused"
scrape
grew 'sandboxd_tasks_total{outcome="succeeded"}' "$ok" 1
grew 'sandboxd_proxy_requests_total{result="forwarded"}' "$fwd" 1
grew 'sandboxd_proxy_requests_total{result="refused"}' "$ref" 1
grew 'sandboxd_proxy_bytes_total{direction="upstream"}' "$up"
grew 'sandboxd_proxy_bytes_total{direction="downstream"}' "$down"
t_end

t_begin "the app's disk use, measured in the background"
api GET "/v1/apps/$APP_ID"
for ((i = 0; i < 40; i++)); do
	[[ $(j '.disk.bytes // 0') -gt 0 ]] && break
	sleep 0.25
	api GET "/v1/apps/$APP_ID"
done
b0=$(j .disk.bytes)
((b0 > 0)) || t_err "no disk figure: $(short_body)"
[[ $(j .disk.measured_at) =~ ^20[0-9-]+T[0-9:]+Z$ ]] || t_err "measured_at: $(j .disk.measured_at)"
head -c 3000000 /dev/urandom >"$IT_TMP/big.bin"
api PUT "/v1/sandboxes/$SB/files?path=big.bin" "@$IT_TMP/big.bin"
expect_status 200
for ((i = 0; i < 60; i++)); do
	api GET "/v1/apps/$APP_ID"
	(($(j .disk.bytes) >= b0 + 2900000)) && break
	sleep 0.25
done
(($(j .disk.bytes) >= b0 + 2900000)) || t_err "the disk figure did not grow by 3 MB: $b0 -> $(j .disk.bytes)"
api GET /v1/apps
expect_jq "[.apps[] | select(.id == \"$APP_ID\") | .disk.bytes > 0] == [true]" "the list shows disk too"
t_end

# gc: the sandbox sleeps (its container stopped) on $REPO:used.
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
gc() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_IMAGE="$TEST_IMAGE" "$SANDBOXD_BIN" gc "$@" >"$IT_TMP/gc.out" 2>&1
}

t_begin "gc dry run: lists the unused base image, not the sleeping sandbox's, removes nothing"
gc --repo "$REPO" || t_err "gc exited $?: $(cat "$IT_TMP/gc.out")"
grep -q "^would remove image ${ID_UNUSED:0:19} $REPO:unused" "$IT_TMP/gc.out" ||
	t_err "the unused image is not listed: $(cat "$IT_TMP/gc.out")"
grep -q "$REPO:used\|${ID_USED:0:19}" "$IT_TMP/gc.out" &&
	t_err "the image of a stopped sandbox is listed: $(cat "$IT_TMP/gc.out")"
grep -q "would remove 1 image" "$IT_TMP/gc.out" || t_err "summary: $(tail -1 "$IT_TMP/gc.out")"
docker image inspect "$REPO:unused" >/dev/null 2>&1 || t_err "the dry run removed $REPO:unused"
gc || t_err "gc without --repo exited $?"
grep -q "${ID_USED:0:19}" "$IT_TMP/gc.out" && t_err "unlimited gc lists the image a stopped sandbox uses"
grep -q "$(docker image inspect -f '{{.Id}}' "$TEST_IMAGE" | cut -c1-19)" "$IT_TMP/gc.out" &&
	t_err "gc lists the configured image"
t_end

t_begin "gc lists the trash (a removal that was interrupted) and --yes empties it"
mkdir -p "$DATA/trash/01LEFTOVER/workspace"
head -c 2000000 /dev/urandom >"$DATA/trash/01LEFTOVER/workspace/blob"
gc --repo "$REPO" || t_err "gc exited $?"
grep -q "^would remove trash $DATA/trash/01LEFTOVER (1 MiB)" "$IT_TMP/gc.out" || t_err "trash not listed: $(cat "$IT_TMP/gc.out")"
grep -q "and 1 trash entry" "$IT_TMP/gc.out" || t_err "summary: $(tail -1 "$IT_TMP/gc.out")"
[[ -e $DATA/trash/01LEFTOVER/workspace/blob ]] || t_err "the dry run removed the trash"
t_end

t_begin "gc --yes removes what it listed and keeps the sleeping sandbox's image"
gc --repo "$REPO" --yes || t_err "gc --yes exited $?: $(cat "$IT_TMP/gc.out")"
docker image inspect "$REPO:unused" >/dev/null 2>&1 && t_err "$REPO:unused is still there"
docker image inspect "$REPO:used" >/dev/null 2>&1 || t_err "$REPO:used was removed"
[[ ! -e $DATA/trash/01LEFTOVER ]] || t_err "the trash is still there"
[[ -d $DATA/trash ]] || t_err "the trash directory itself is gone"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
t_end

t_begin "SANDBOXD_LOG_FORMAT=json: every log line is one JSON object"
bad=$(jq -Rr 'fromjson? // "BAD" | if type == "object" and has("ts") and has("level") and has("msg") then empty else "BAD" end' "$DAEMON_ERR" | grep -c BAD)
((bad == 0)) || t_err "$bad lines are not JSON log objects: $(head -3 "$DAEMON_ERR")"
(($(wc -l <"$DAEMON_ERR") > 5)) || t_err "hardly any log lines"
jq -se 'any(.[]; .msg | test("listening on http://"))' "$DAEMON_ERR" >/dev/null || t_err "no 'listening' line"
jq -se --arg sb "$SB" 'any(.[]; .fields.sandbox == $sb and (.fields.wake_ms | test("^[0-9]+$")))' "$DAEMON_ERR" >/dev/null ||
	t_err "the wake's line has no fields: $(grep woke "$DAEMON_ERR")"
t_end

finish
