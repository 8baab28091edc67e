#!/usr/bin/env bash
# Static releases served by the edge from memory (src/site,
# src/edge/published.c), end to end: an app of the static preset whose
# files are written through the files API (an index.html, a content-
# hashed script large enough to compress, an about page, a binary, a
# 404.html, a dot file and a symbolic link that must not be served) is
# published, and its host (<label>.<PUBLISH_DOMAIN>) answers through the
# edge: content types, nosniff, ETag and 304, immutable caching for the
# hashed asset and no-cache for HTML, brotli and gzip twins (decoded and
# compared with the file), Vary, one byte range (206, compared with the
# bytes) and 416, the SPA fallback, HEAD, 405, extension-less paths;
# without spa, /404.html with 404.  A second release is seen at once
# (HTML is no-cache) and a rollback switches back without a build; the
# preview host and an unknown host are unchanged; the custom domains'
# HTTP check path answers 404 for an unknown token; a private published
# app gives a stranger the unknown host's page.  A server release is
# proxied: the app sees the published Host, its own headers pass, the
# preview cookie is kept from it, keep-alive reuses one app connection.
. "$(dirname "$0")/lib.sh"
need_docker
command -v brotli >/dev/null || bail "brotli is needed to decode the answers (scripts/bootstrap installs it)"

start_edge_daemon

# publish_ok: POST publish, wait until ready -> RID, PUB_HOST (host:port).
publish_ok() {
	RID=
	api POST "/v1/apps/$APP/publish" '{}'
	expect_status 202 || return 1
	RID=$(j .release.id)
	PUB_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##; s#:[0-9]+$##'):$EDGE_PORT
	ulid_ok "$RID" || { t_err "no release id: $(short_body)"; return 1; }
	release_wait "$RID" 60 || return 1
	[[ $(j .status) == ready && $(j .kind) == static ]] || {
		t_err "release $RID: $(short_body)"
		api GET "/v1/apps/$APP/releases/$RID/log"
		t_err "its log: $(tail -c 600 <<<"$BODY")"
		return 1
	}
}
# pget PATH [curl args]: GET PATH on the published host (edge_get).
pget() { local p=$1; shift; edge_get "$PUB_HOST" "$p" "$@"; }
# pfile PATH OUT [curl args]: the raw body to OUT; E_STATUS, E_HEADERS.
pfile() {
	local p=$1 out=$2
	shift 2
	: >"$IT_TMP/e.head"
	E_STATUS=$(ecurl "$PUB_HOST" "$p" -o "$out" -D "$IT_TMP/e.head" -w '%{http_code}' "$@")
	E_HEADERS=$(tr -d '\r' <"$IT_TMP/e.head")
}

SITE=$IT_TMP/site
mkdir -p "$SITE/assets"
printf '<!doctype html><title>shop</title><script src="/assets/index-3f2a1b9c.js"></script><h1>release one</h1>\n' >"$SITE/index.html"
for i in $(seq 1 400); do
	printf 'export function f%d(a, b) { return a * %d + b; } // a line to compress\n' "$i" "$i"
done >"$SITE/assets/index-3f2a1b9c.js"
printf '<h1>about</h1>\n' >"$SITE/about.html"
printf '<h1>no such page</h1>\n' >"$SITE/404.html"
head -c 100000 /dev/urandom >"$SITE/data.bin"
MANIFEST_SPA='version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
publish:
  output: public
  spa: true
'

t_begin "setup: a static app's files, published"
create_app shop '"runtime_preset":"static"' && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
APP=$APP_ID
SB=$SB_ID
for f in index.html assets/index-3f2a1b9c.js about.html 404.html data.bin; do
	put_file "public/$f" "@$SITE/$f"
done
put_file public/.env 'SECRET=do-not-serve'
put_file sandbox.yaml "$MANIFEST_SPA"
docker exec "$SB_CONTAINER" sh -c 'ln -sf /etc/passwd ~/workspace/app/public/passwd.txt' ||
	t_err "could not make the symbolic link"
publish_ok || bail "the first publish failed: ${T_ERRS[*]}"
R1=$RID
note "published at $PUB_HOST (release $R1)"
t_end

t_begin "HTML: 200, its type, no-cache, a strong ETag, nosniff, Accept-Ranges"
pget /
[[ $E_STATUS == 200 && $E_BODY == *"release one"* ]] || t_err "GET /: $E_STATUS $(head -c 200 <<<"$E_BODY")"
[[ $(eh Content-Type) == "text/html; charset=utf-8" ]] || t_err "Content-Type: $(eh Content-Type)"
[[ $(eh Cache-Control) == no-cache ]] || t_err "Cache-Control: $(eh Cache-Control)"
[[ $(eh ETag) =~ ^\"[0-9a-f]+-[0-9a-f]+\"$ ]] || t_err "ETag: $(eh ETag)"
[[ $(eh X-Content-Type-Options) == nosniff ]] || t_err "no nosniff"
[[ $(eh Accept-Ranges) == bytes ]] || t_err "Accept-Ranges: $(eh Accept-Ranges)"
[[ $(eh Content-Length) == "$(stat -c %s "$SITE/index.html")" ]] || t_err "Content-Length: $(eh Content-Length)"
pget /about
[[ $E_STATUS == 200 && $E_BODY == "<h1>about</h1>" ]] || t_err "GET /about (about.html): $E_STATUS $E_BODY"
pget /index.html
[[ $E_STATUS == 200 && $E_BODY == *"release one"* ]] || t_err "GET /index.html: $E_STATUS"
t_end

t_begin "ETag: If-None-Match answers 304 without a body; another tag 200"
pget /
TAG=$(eh ETag)
pget / -H "If-None-Match: $TAG"
[[ $E_STATUS == 304 && -z $E_BODY ]] || t_err "If-None-Match: $E_STATUS '$E_BODY'"
[[ $(eh ETag) == "$TAG" ]] || t_err "304's ETag: $(eh ETag)"
pget / -H 'If-None-Match: "nope"'
[[ $E_STATUS == 200 ]] || t_err "another tag: $E_STATUS"
t_end

JS=/assets/index-3f2a1b9c.js
t_begin "the hashed asset: immutable for a year, JavaScript, Vary"
pfile "$JS" "$IT_TMP/js.plain"
[[ $E_STATUS == 200 ]] || t_err "GET $JS: $E_STATUS"
cmp -s "$IT_TMP/js.plain" "$SITE$JS" || t_err "the asset's bytes differ"
[[ $(eh Cache-Control) == "public, max-age=31536000, immutable" ]] || t_err "Cache-Control: $(eh Cache-Control)"
[[ $(eh Content-Type) == "text/javascript; charset=utf-8" ]] || t_err "Content-Type: $(eh Content-Type)"
[[ $(eh Vary) == Accept-Encoding ]] || t_err "Vary: $(eh Vary)"
[[ -z $(eh Content-Encoding) ]] || t_err "compressed for a client that asked for none"
t_end

t_begin "compression: brotli preferred, gzip otherwise; both decode to the file"
pfile "$JS" "$IT_TMP/js.br" -H 'Accept-Encoding: gzip, deflate, br'
[[ $(eh Content-Encoding) == br ]] || t_err "Content-Encoding for gzip, deflate, br: $(eh Content-Encoding)"
brotli -dc <"$IT_TMP/js.br" | cmp -s - "$SITE$JS" || t_err "the brotli body does not decode to the file"
BR_LEN=$(stat -c %s "$IT_TMP/js.br")
((BR_LEN < $(stat -c %s "$SITE$JS") / 4)) || t_err "brotli body is $BR_LEN bytes"
[[ $(eh Content-Length) == "$BR_LEN" ]] || t_err "Content-Length $(eh Content-Length) for $BR_LEN bytes"
pfile "$JS" "$IT_TMP/js.gz" -H 'Accept-Encoding: gzip'
[[ $(eh Content-Encoding) == gzip ]] || t_err "Content-Encoding for gzip: $(eh Content-Encoding)"
gzip -dc <"$IT_TMP/js.gz" | cmp -s - "$SITE$JS" || t_err "the gzip body does not decode to the file"
pfile "$JS" "$IT_TMP/js.q0" -H 'Accept-Encoding: br;q=0, gzip;q=0'
[[ -z $(eh Content-Encoding) ]] && cmp -s "$IT_TMP/js.q0" "$SITE$JS" || t_err "q=0 still got $(eh Content-Encoding)"
GZTAG=$(ecurl "$PUB_HOST" "$JS" -D - -o /dev/null -H 'Accept-Encoding: gzip' | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')
PLTAG=$(ecurl "$PUB_HOST" "$JS" -D - -o /dev/null | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')
[[ -n $GZTAG && $GZTAG != "$PLTAG" ]] || t_err "the gzip answer's ETag is the plain one's ($GZTAG)"
t_end

t_begin "ranges: one range 206 with its bytes, past the end 416"
pfile /data.bin "$IT_TMP/range" -H 'Range: bytes=1000-1999'
[[ $E_STATUS == 206 ]] || t_err "Range: $E_STATUS"
[[ $(eh Content-Range) == "bytes 1000-1999/100000" ]] || t_err "Content-Range: $(eh Content-Range)"
cmp -s "$IT_TMP/range" <(tail -c +1001 "$SITE/data.bin" | head -c 1000) || t_err "the range's bytes differ"
[[ $(eh Content-Type) == application/octet-stream ]] || t_err "Content-Type: $(eh Content-Type)"
pfile /data.bin "$IT_TMP/range" -H 'Range: bytes=-10'
cmp -s "$IT_TMP/range" <(tail -c 10 "$SITE/data.bin") || t_err "a suffix range's bytes differ"
pfile /data.bin "$IT_TMP/range" -H 'Range: bytes=100000-'
[[ $E_STATUS == 416 && $(eh Content-Range) == "bytes */100000" ]] || t_err "past the end: $E_STATUS $(eh Content-Range)"
pfile "$JS" "$IT_TMP/range" -H 'Range: bytes=0-5' -H 'Accept-Encoding: br'
[[ $E_STATUS == 206 && -z $(eh Content-Encoding) && $(cat "$IT_TMP/range") == "export" ]] ||
	t_err "a range of a compressible file: $E_STATUS $(eh Content-Encoding) '$(cat "$IT_TMP/range")'"
pfile /data.bin "$IT_TMP/range" -H 'Range: bytes=0-1,5-6'
[[ $E_STATUS == 200 ]] && cmp -s "$IT_TMP/range" "$SITE/data.bin" || t_err "several ranges: $E_STATUS"
t_end

t_begin "SPA fallback: an app route gets index.html; nothing outside the output"
pget /cart/42?x=1
[[ $E_STATUS == 200 && $E_BODY == *"release one"* && $(eh Cache-Control) == no-cache ]] ||
	t_err "GET /cart/42: $E_STATUS $(eh Cache-Control) $(head -c 100 <<<"$E_BODY")"
for p in /.env /passwd.txt /../sandbox.yaml /%2e%2e/sandbox.yaml /public/index.html; do
	pget "$p" --path-as-is
	[[ $E_BODY != *SECRET* && $E_BODY != *root:* && $E_BODY != *"web:"* ]] || t_err "$p served: $(head -c 100 <<<"$E_BODY")"
done
t_end

t_begin "HEAD has the headers and no body; POST 405 with Allow"
: >"$IT_TMP/e.body"
H=$(ecurl "$PUB_HOST" / -I | tr -d '\r')
grep -q '^HTTP/1.1 200' <<<"$H" || t_err "HEAD: $(head -n 1 <<<"$H")"
grep -qi "^content-length: $(stat -c %s "$SITE/index.html")$" <<<"$H" || t_err "HEAD's Content-Length: $(grep -i content-length <<<"$H")"
pget / -X POST -d x
[[ $E_STATUS == 405 && $(eh Allow) == "GET, HEAD" ]] || t_err "POST: $E_STATUS Allow: $(eh Allow)"
t_end

t_begin "keep-alive: several files on one connection"
OUT=$(curl -s --max-time 10 -H "Host: $PUB_HOST" -w '%{num_connects} ' \
	-o /dev/null "$EDGE/" -o /dev/null "$EDGE$JS" -o /dev/null "$EDGE/about" \
	-o /dev/null "$EDGE/data.bin" 2>&1)
[[ $OUT == "1 0 0 0 " ]] || t_err "connections per request: $OUT"
t_end

t_begin "hosts: the preview and an unknown host are unchanged; the HTTP check's path"
edge_get "s-$SB-3000.preview.localhost:$EDGE_PORT" /
[[ $(eh X-Sandboxd-Preview) != down ]] || t_err "the preview host: $E_STATUS"
edge_get "nothing.example.com:$EDGE_PORT" /
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown ]] || t_err "an unknown host: $E_STATUS $(eh X-Sandboxd-Preview)"
edge_get "nothing.example.com:$EDGE_PORT" /.well-known/sandboxd-domain/not-a-token
[[ $E_STATUS == 404 && $E_BODY == "No such token." ]] || t_err "an unknown token: $E_STATUS $E_BODY"
t_end

t_begin "a second release is seen at once; a rollback switches back, no build"
sed 's/release one/release two/' "$SITE/index.html" >"$IT_TMP/index2.html"
put_file public/index.html "@$IT_TMP/index2.html"
publish_ok || t_err "the second publish failed"
R2=$RID
pget /
[[ $E_BODY == *"release two"* ]] || t_err "after publish: $(head -c 200 <<<"$E_BODY")"
pget / -H "If-None-Match: $TAG"
[[ $E_STATUS == 200 ]] || t_err "the old ETag still matches: $E_STATUS"
api GET "/v1/apps/$APP/releases"
N=$(j '.releases // . | length')
api POST "/v1/apps/$APP/rollback" "{\"release\":\"$R1\"}"
expect_status 200
pget /
[[ $E_BODY == *"release one"* ]] || t_err "after the rollback: $(head -c 200 <<<"$E_BODY")"
api GET "/v1/apps/$APP/releases"
[[ $(j '.releases // . | length') == "$N" ]] || t_err "the rollback made a release"
t_end

t_begin "private: a stranger gets the unknown host's page, byte for byte; public again answers"
edge_get "nothing.example.com:$EDGE_PORT" /
UNKNOWN=$E_BODY
api PATCH "/v1/apps/$APP/publish" '{"visibility":"private"}'
expect_status 200
pget /
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown && $E_BODY == "$UNKNOWN" ]] ||
	t_err "a private app to a stranger: $E_STATUS $(eh X-Sandboxd-Preview)"
pget "$JS"
[[ $E_STATUS == 404 && $E_BODY != *"export function"* ]] || t_err "a private app's asset: $E_STATUS"
pget /__sandboxd/auth?code=forged
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown ]] || t_err "a forged code: $E_STATUS $(eh Set-Cookie)"
api PATCH "/v1/apps/$APP/publish" '{"visibility":"public"}'
expect_status 200
pget /
[[ $E_STATUS == 200 && $E_BODY == *"release one"* ]] || t_err "public again: $E_STATUS"
t_end

t_begin "without spa: /404.html with 404 for a path without a file"
put_file sandbox.yaml "${MANIFEST_SPA/spa: true/spa: false}"
publish_ok || t_err "the publish without spa failed"
pget /cart/42
[[ $E_STATUS == 404 && $E_BODY == "<h1>no such page</h1>" ]] || t_err "GET /cart/42: $E_STATUS $E_BODY"
[[ $(eh Content-Type) == "text/html; charset=utf-8" ]] || t_err "404's type: $(eh Content-Type)"
pget /
[[ $E_STATUS == 200 ]] || t_err "GET / without spa: $E_STATUS"
t_end

t_begin "a server release through the edge: its Host, its own headers, one app connection reused"
create_app api && create_sandbox "$APP_ID" || t_err "could not create the sandbox"
APP=$APP_ID
SB=$SB_ID
put_file edge-app.js "@$IT_ROOT/tests/integration/edge-app.js"
put_file sandbox.yaml 'version: 1
web:
  command: node edge-app.js
  port: 3000
publish:
  command: node edge-app.js
  port: 3000
  health_path: /
'
RID=
api POST "/v1/apps/$APP/publish" '{}'
expect_status 202
RID=$(j .release.id)
SRV_HOST=$(j .url | sed -E 's#^https?://##; s#/.*$##; s#:[0-9]+$##'):$EDGE_PORT
release_wait "$RID" 90
[[ $(j .status) == ready && $(j .kind) == server ]] || t_err "the server release: $(short_body)"
srv_up() { edge_get "$SRV_HOST" / && [[ $E_STATUS == 200 ]]; }
wait_until 60 srv_up || t_err "the server release does not answer: $E_STATUS $(head -c 200 <<<"$E_BODY")"
[[ $E_BODY == "hello from the app" ]] || t_err "GET /: $E_BODY"
[[ $(eh X-Frame-Options) == DENY ]] || t_err "the app's X-Frame-Options was dropped"
edge_get "$SRV_HOST" /headers -H 'Cookie: sbx_preview=x; theirs=1' -H 'X-Forwarded-Host: evil.example'
[[ $(jq -r .host <<<"$E_BODY") == "$SRV_HOST" ]] || t_err "the app's Host: $(jq -r .host <<<"$E_BODY")"
[[ $(jq -r '."x-forwarded-host"' <<<"$E_BODY") == "$SRV_HOST" ]] || t_err "X-Forwarded-Host: $(jq -r '."x-forwarded-host"' <<<"$E_BODY")"
[[ $(jq -r .cookie <<<"$E_BODY") == "theirs=1" ]] || t_err "the cookies the app got: $(jq -r .cookie <<<"$E_BODY")"
PORTS=$(curl -s --max-time 10 -H "Host: $SRV_HOST" "$EDGE/conn" "$EDGE/conn" "$EDGE/conn" | sort -u | wc -l)
[[ $PORTS == 1 ]] || t_err "three requests on one client connection used $PORTS app connections"
edge_get "$SRV_HOST" /.well-known/sandboxd-domain/x
[[ $E_STATUS == 404 && $E_BODY == "No such token." ]] || t_err "the check path reached the app: $E_STATUS"
t_end

finish
