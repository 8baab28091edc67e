#!/usr/bin/env bash
# Quickstart: the seeds' curl+sed commands, copied verbatim, work against a
# freshly started daemon that has no token configured: the token it prints
# at first start authenticates, both commands yield 26-character ids, the
# sandbox is running in the API and in Docker, and /healthz says ok.
. "$(dirname "$0")/lib.sh"
need_docker

t_begin "first start without a token prints one and becomes ready"
if ! start_daemon -SANDBOXD_API_TOKENS; then
	bail "the daemon did not come up within 10 s (exit status ${DAEMON_RC:-none})"
fi
[[ $FIRST_TOKEN == sk_* ]] ||
	t_err "stdout has no line 'API token (shown once): sk_…'; stdout was: $(head -c 300 "$DAEMON_OUT")"
grep -qF "listening on http://$API_ADDR" "$DAEMON_OUT" "$DAEMON_ERR" ||
	t_err "no 'listening on http://$API_ADDR' in the daemon's output"
t_end

t_begin "GET /healthz is ok without a token"
api_noauth GET /healthz
expect_status 200
[[ $(cat "$BODY_FILE") == ok ]] || t_err "GET /healthz: expected body ok, got $(short_body)"
expect_header X-Request-Id
t_end

t_begin "the printed token authenticates"
api_as "$FIRST_TOKEN" GET /v1/apps
expect_status 200 && expect_jq '.apps | type == "array"' '.apps to be an array'
api_as "${FIRST_TOKEN}x" GET /v1/apps
expect_status 401
t_end

seeds_quickstart "$API_URL" "$FIRST_TOKEN"

t_begin "APP from the seeds' command is a 26-character id"
ulid_ok "$APP" || t_err "APP is not a ULID: '${APP:0:200}'"
api GET "/v1/apps/$APP"
expect_status 200 && expect_json .id "$APP" && expect_json .name todo &&
	expect_json .runtime_preset react-vite
t_end

t_begin "SB from the seeds' command is a 26-character id"
ulid_ok "$SB" || t_err "SB is not a ULID: '${SB:0:200}'"
t_end

t_begin "the sandbox is running in the API"
api GET "/v1/sandboxes/$SB"
expect_status 200 && expect_json .id "$SB" && expect_json .app_id "$APP" &&
	expect_json .status running && expect_json .oom_killed false &&
	expect_json '.ports | tostring' '[3000]' &&
	expect_json .workspace "$DATA/workspaces/$SB"
api GET "/v1/apps/$APP"
expect_json .current_sandbox_id "$SB"
t_end

t_begin "the sandbox's container is running in Docker"
if c=$(container_of "$SB"); then
	expect_true "container $c is not running: $(dinspect "$c" '{{json .State}}')" container_running "$c"
	api GET "/v1/sandboxes/$SB"
	cid=$(j .container_id)
	[[ -n $cid && $cid != null && $c == "$cid"* ]] ||
		t_err "GET /v1/sandboxes/$SB: container_id '$cid' is not the labelled container $c"
else
	t_err "no container labelled sandboxd.sandbox=$SB"
fi
t_end

t_begin "create responses are compact single-line JSON ending in a newline"
api POST /v1/apps '{"name":"compact"}'
expect_status 201
lines=$(wc -l <"$BODY_FILE")
[[ $lines == 1 && $(tail -c 1 "$BODY_FILE" | od -An -c | tr -d ' ') == '\n' ]] ||
	t_err "POST /v1/apps: body is not exactly one line ending in \\n: $(od -c "$BODY_FILE" | tail -n 3 | head -n 2)"
grep -q '": ' "$BODY_FILE" && t_err "POST /v1/apps: body has a space after ':': $(short_body)"
t_end

t_begin "timestamps are RFC 3339 UTC"
api GET "/v1/sandboxes/$SB"
for k in created_at updated_at last_active_at; do
	v=$(j ".$k")
	[[ $v =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]] ||
		t_err "GET /v1/sandboxes/$SB: .$k '$v' is not RFC 3339 UTC"
done
api GET "/v1/apps/$APP"
v=$(j .created_at)
[[ $v =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]] ||
	t_err "GET /v1/apps/$APP: .created_at '$v' is not RFC 3339 UTC"
t_end

t_begin "the app is listed"
api GET /v1/apps
expect_status 200 && expect_jq "[.apps[].id] | index(\"$APP\") != null" "app $APP in the list"
t_end

t_begin "apps are listed newest first"
api POST /v1/apps '{"name":"newest"}'
NEWEST=$(j .id)
api GET /v1/apps
expect_status 200 && expect_json '.apps[0].id' "$NEWEST" && expect_json '.apps[-1].id' "$APP"
t_end

finish
