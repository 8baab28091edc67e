#!/usr/bin/env bash
# A static release, end to end: a react-vite app (its template's files,
# no sandbox.yaml publish: in the shared image, so the recipe's publish
# object decides: `vite build`, dist/, SPA) is published; its release is
# built in a container of its own while the preview keeps running, its
# row says ready with its figures, its files are under
# <data>/releases/<app>/<release>/ (root's, the app's level 0700, site/
# with .gz/.br twins, build.log, no work directory left), and its host
# <label>.apps.localhost answers through the edge: HTML, a hashed asset
# cached for a year, compressed twins, an ETag's 304, the SPA fallback.
# A second release (another file) switches the answer; a rollback to the
# first switches it back at once, and back again; unpublish makes the
# host answer "not published"; the timeline has the events.
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
OTHER=tok-other-tenant-101
start_daemon "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	"SANDBOXD_API_TOKENS=it=$IT_TOKEN,other=$OTHER" ||
	bail "the daemon did not come up"

# publish_ready [BODY]: POST …/publish, wait until ready -> RID, PUB_HOST.
publish_ready() {
	local body=${1:-'{}'}
	RID=
	api POST "/v1/apps/$APP/publish" "$body"
	expect_status 202 || return 1
	RID=$(j .release.id)
	PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##; s#:[0-9]+$##'):$EDGE_PORT
	[[ $(j .release.status) == building ]] || t_err "202 with $(short_body)"
	ulid_ok "$RID" || { t_err "no release id: $(short_body)"; return 1; }
	release_wait "$RID" 150 || return 1
	[[ $(j .status) == ready ]] || {
		t_err "release $RID: $(short_body)"
		api GET "/v1/apps/$APP/releases/$RID/log"
		t_err "its log: $(tail -c 800 "$DATA/releases/$APP/$RID/build.log" 2>/dev/null)"
		return 1
	}
}

t_begin "setup: a react-vite app with a sandbox"
create_app "Shop Front" '"runtime_preset":"react-vite"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID
SB=$SB_ID
# The template's files are seeded by the sandbox's first boot: its dev
# server answering says they are all there.
PREVIEW=s-$SB-3000.preview.localhost:$EDGE_PORT
wait_until 120 eval '[[ $(ecurl "$PREVIEW" / -o /dev/null -w "%{http_code}") == 200 ]]' ||
	bail "the preview never answered: $(ecurl "$PREVIEW" / -i | head -c 300)"
put_file public/version.txt v1
t_end

t_begin "publish: 202 building, then ready, while the preview keeps running"
t0=$(date +%s%N)
publish_ready || bail "the first publish failed: ${T_ERRS[*]}"
R1=$RID
PUB_MS=$((($(date +%s%N) - t0) / 1000000))
note "publish of react-vite: ${PUB_MS} ms to ready ($(j .build_ms) ms build)"
[[ $PUB_HOST == shop-front.apps.localhost:$EDGE_PORT ]] || t_err "host: $PUB_HOST"
expect_json .kind static
expect_json .recipe react-vite
expect_json .source files
expect_json .number 1
expect_json .active true
jq -e '.size_bytes > 10000 and .files > 3 and .build_ms > 0 and .finished_at != null' <<<"$BODY" >/dev/null ||
	t_err "figures: $(short_body)"
[[ $(sandbox_status "$SB") == running ]] || t_err "the preview is $(sandbox_status "$SB")"
[[ $(ecurl "$PREVIEW" / -o /dev/null -w "%{http_code}") == 200 ]] || t_err "the preview stopped answering"
[[ -z $(docker ps -aq --filter "label=sandboxd.build=$R1") ]] || t_err "the build container is left"
t_end

t_begin "the release's files: root's, private, site/ with twins, the log, no work directory"
RD=$DATA/releases/$APP/$R1
[[ -f $RD/site/index.html ]] || t_err "no site/index.html: $(ls "$RD" 2>&1)"
[[ -f $RD/build.log ]] && grep -q 'vite build' "$RD/build.log" || t_err "build.log: $(tail -c 300 "$RD/build.log" 2>&1)"
[[ ! -e $RD/work ]] || t_err "the work directory is left"
[[ $(stat -c %a "$DATA/releases/$APP") == 700 && $(stat -c %u "$RD/site/index.html") == 0 ]] ||
	t_err "modes/owners: $(stat -c '%a %u' "$DATA/releases/$APP" "$RD/site/index.html")"
JS=$(cd "$RD/site" && ls assets/*.js | head -n 1)
[[ -n $JS && -f $RD/site/$JS.gz && -f $RD/site/$JS.br ]] || t_err "no .gz/.br twins of '$JS': $(ls "$RD/site/assets")"
t_end

t_begin "its host through the edge: HTML, an immutable asset, compression, 304, the SPA fallback"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $(eh Content-Type) == text/html* && $E_BODY == *'<div id="root">'* ]] ||
	t_err "GET /: $E_STATUS $(eh Content-Type) ${E_BODY:0:200}"
edge_get "$PUB_HOST" "/$JS"
[[ $E_STATUS == 200 && $(eh Content-Type) == *javascript* && $(eh Cache-Control) == *immutable* ]] ||
	t_err "GET /$JS: $E_STATUS $(eh Content-Type) $(eh Cache-Control)"
ETAG=$(eh ETag)
edge_get "$PUB_HOST" "/$JS" -H "If-None-Match: $ETAG"
[[ $E_STATUS == 304 ]] || t_err "If-None-Match $ETAG: $E_STATUS"
edge_get "$PUB_HOST" "/$JS" -H 'Accept-Encoding: br, gzip' 2>/dev/null
[[ $(eh Content-Encoding) == br ]] || t_err "Accept-Encoding br: '$(eh Content-Encoding)'"
edge_get "$PUB_HOST" "/$JS" -H 'Accept-Encoding: gzip' 2>/dev/null
[[ $(eh Content-Encoding) == gzip ]] || t_err "Accept-Encoding gzip: '$(eh Content-Encoding)'"
edge_get "$PUB_HOST" /orders/42
[[ $E_STATUS == 200 && $E_BODY == *'<div id="root">'* ]] || t_err "SPA fallback: $E_STATUS ${E_BODY:0:200}"
edge_get "$PUB_HOST" /version.txt
[[ $E_BODY == v1 ]] || t_err "version.txt: $E_STATUS '$E_BODY'"
edge_get "nope.apps.localhost:$EDGE_PORT" /
[[ $E_STATUS == 404 ]] || t_err "an unknown label: $E_STATUS"
t_end

t_begin "GET …/publish: published, its label, host, url and active release"
api GET "/v1/apps/$APP/publish"
expect_status 200
expect_json .published true
expect_json .label shop-front
expect_json .url "http://shop-front.apps.localhost:$EDGE_PORT"
expect_json .release.id "$R1"
expect_json .building null
t_end

t_begin "a second release switches the answer; rollback to the first and back, at once"
put_file public/version.txt v2
publish_ready || t_err "the second publish failed"
R2=$RID
expect_json .number 2
edge_get "$PUB_HOST" /version.txt
[[ $E_BODY == v2 ]] || t_err "after release 2: '$E_BODY'"
api GET "/v1/apps/$APP/releases"
[[ $(j '[.releases[].id] | join(",")') == "$R2,$R1" && $(j '[.releases[] | select(.active)] | .[0].id') == "$R2" ]] ||
	t_err "list: $(short_body)"
t0=$(date +%s%N)
api POST "/v1/apps/$APP/rollback" '{"release":1}'
RB_MS=$((($(date +%s%N) - t0) / 1000000))
expect_status 200 && expect_json .release.id "$R1"
edge_get "$PUB_HOST" /version.txt
[[ $E_BODY == v1 ]] || t_err "after the rollback: '$E_BODY'"
note "rollback: ${RB_MS} ms"
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R2\"}"
expect_status 200 && expect_json .release.id "$R2"
edge_get "$PUB_HOST" /version.txt
[[ $E_BODY == v2 ]] || t_err "after rolling forward: '$E_BODY'"
api POST "/v1/apps/$APP/rollback" '{"release":9}'
expect_status 404
api POST "/v1/apps/$APP/rollback" '{"release":"x"}'
expect_status 400
t_end

t_begin "another tenant sees none of it"
api_as "$OTHER" GET "/v1/apps/$APP/releases"
expect_status 404
api_as "$OTHER" GET "/v1/apps/$APP/releases/$R1"
expect_status 404
api_as "$OTHER" POST "/v1/apps/$APP/rollback" "{\"release\":\"$R1\"}"
expect_status 404
api_as "$OTHER" POST "/v1/apps/$APP/publish" '{}'
expect_status 404
t_end

t_begin "unpublish: the host answers 404; again is 409 not_published"
api DELETE "/v1/apps/$APP/publish"
expect_status 200 && expect_json .published false
edge_get "$PUB_HOST" /
[[ $E_STATUS == 404 ]] || t_err "after unpublish: $E_STATUS ${E_BODY:0:200}"
api DELETE "/v1/apps/$APP/publish"
expect_status 409 && expect_envelope not_published
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R2\"}"
expect_status 200
edge_get "$PUB_HOST" /version.txt
[[ $E_BODY == v2 ]] || t_err "published again by a rollback: '$E_BODY'"
t_end

t_begin "the timeline: publish.started, publish.succeeded, release.rolled_back, app.unpublished"
api GET "/v1/apps/$APP/events?limit=100"
for ty in publish.started publish.succeeded release.rolled_back app.unpublished; do
	[[ $(j "[.events[] | select(.type == \"$ty\")] | length") -ge 1 ]] || t_err "no $ty event"
done
t_end

finish
