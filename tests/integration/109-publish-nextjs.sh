#!/usr/bin/env bash
# A Next.js server release: the nextjs preset's app published is built
# with `next build` in its build container and answers through the edge
# at its host from `next start` in its production container (not the dev
# server), its hashed /_next/static/ assets too; a change published again
# answers the new page, and a rollback the first.
. "$(dirname "$0")/lib.sh"
need_docker

start_edge_daemon

# publish_next: POST publish, until the release serves -> RID, PUB_HOST.
publish_next() {
	local i
	api POST "/v1/apps/$APP/publish" '{}'
	expect_status 202 || return 1
	RID=$(j .release.id)
	PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##')
	for ((i = 0; i < 360; i++)); do
		api GET "/v1/apps/$APP/releases/$RID"
		[[ $(j .status) != building && $(j .active) == true ]] && break
		[[ $(j .status) == failed ]] && break
		sleep 0.5
	done
	[[ $(j .status) == ready && $(j .kind) == server && $(j .active) == true ]] || {
		api GET "/v1/apps/$APP/releases/$RID/log"
		t_err "release $RID: $(tail -c 800 <<<"$BODY")"
		return 1
	}
}

t_begin "setup: a nextjs app, published as a server release"
create_app shop-next '"runtime_preset":"nextjs"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID
wait_until 150 eval '[[ -e $DATA/workspaces/$SB_ID/.sandboxd/seeded ]]' ||
	bail "the sandbox was not seeded"
publish_next || bail "the first release: ${T_ERRS[*]}"
RID1=$RID
C=sandboxd-rel-${RID,,}
t_end

t_begin "its host answers the page from next start, its /_next/static assets immutable"
edge_get "$PUB_HOST" /
[[ $E_STATUS == 200 && $E_BODY == *"Your Next.js app is running"* ]] ||
	t_err "GET /: $E_STATUS $(head -c 300 <<<"$E_BODY")"
asset=$(grep -oE '/_next/static/[^"]+\.js' <<<"$E_BODY" | head -n 1)
[[ -n $asset ]] || t_err "no /_next/static script in the page"
if [[ -n $asset ]]; then
	code=$(curl -s -o /dev/null -w '%{http_code}' -D "$IT_TMP/h" -H "Host: $PUB_HOST" "$EDGE$asset")
	[[ $code == 200 ]] || t_err "GET $asset: $code"
	grep -qi '^cache-control:.*immutable' "$IT_TMP/h" || t_err "$asset not immutable: $(cat "$IT_TMP/h")"
fi
cmd=$(docker exec "$C" sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done' 2>/dev/null)
grep -q "next start" <<<"$cmd" || grep -q "next-server" <<<"$cmd" || t_err "no next start: $cmd"
grep -q "next dev" <<<"$cmd" && t_err "the dev server runs in the release: $cmd"
docker exec "$C" touch /app/x 2>/dev/null && t_err "/app is writable"
t_end

t_begin "a change published again serves; rollback serves the first at once"
api PUT "/v1/sandboxes/$SB_ID/files?path=app/page.js" \
	'export default function Home() { return <main><h1>Second release</h1></main>; }'
[[ $STATUS == 20[01] ]] || t_err "PUT page.js: $STATUS $(short_body)"
publish_next || t_err "the second release failed"
edge_get "$PUB_HOST" /
[[ $E_BODY == *"Second release"* ]] || t_err "after the second: $E_STATUS $(head -c 300 <<<"$E_BODY")"
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$RID1\"}"
expect_status 200
edge_get "$PUB_HOST" /
[[ $E_BODY == *"Your Next.js app is running"* ]] || t_err "after the rollback: $E_STATUS $(head -c 300 <<<"$E_BODY")"
t_end

finish
