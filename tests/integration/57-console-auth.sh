#!/usr/bin/env bash
# The console's sign-in and its host, driven with curl against a real
# daemon: the setup code printed at first start (and by `sandboxd
# setup-code`), setup refused without it, the session cookie and its
# flags, login, logout, logout everywhere, a password change, the CSRF
# check (token and Origin), the login rate limit (429 with Retry-After),
# bearer tokens untouched by all of it; then the edge's console host:
# the API through it with the cookie, a task's event stream through it
# event by event while the task runs, the console's files from memory
# (no-store index, immutable assets, the gzip twin, the SPA fallback,
# the security headers), previews framed by the console only; and a
# daemon with auth disabled and no console built.
. "$(dirname "$0")/lib.sh"
need_test_image

# The console's files: what `make console` would build, made by hand.
CON=$IT_TMP/console
mkdir -p "$CON/assets"
printf '<!doctype html><title>console</title><script src="/assets/app-3f2a1b.js"></script>\n' >"$CON/index.html"
printf 'console.log("the console");\n%.0s' {1..40} >"$CON/assets/app-3f2a1b.js"
gzip -9 -k "$CON/assets/app-3f2a1b.js"
printf '<svg xmlns="http://www.w3.org/2000/svg"/>\n' >"$CON/favicon.svg"

EDGE_PORT=$(free_port)
start_daemon -SANDBOXD_API_TOKENS SANDBOXD_IMAGE="$TEST_IMAGE" \
	HTTP_PORT=$EDGE_PORT SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_CONSOLE_DIR="$CON" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
EDGE=http://127.0.0.1:$EDGE_PORT
CH=console.localhost:$EDGE_PORT # the console's Host, as a tunnel keeps it
ORIGIN=http://$CH
PW1='correct horse battery'
PW2='staple battery horse'

# creq BASE METHOD PATH [BODY] [curl args…]: like api, with no token;
# sets STATUS, BODY, HEADERS.
creq() {
	local base=$1 method=$2 path=$3 body=${4-}
	shift 3
	(($# > 0)) && shift
	local -a args=(-s --path-as-is -o "$IT_TMP/body" -D "$IT_TMP/headers"
		-w '%{http_code}' --max-time 30 -X "$method")
	[[ -n $body ]] && args+=(--data-binary "$body" -H 'Content-Type: application/json')
	: >"$IT_TMP/body"
	: >"$IT_TMP/headers"
	REQ="$method $path"
	STATUS=$(curl "${args[@]}" "$@" "$base$path" 2>/dev/null)
	[[ -n $STATUS ]] || STATUS=000
	BODY=$(tr -d "\0" <"$IT_TMP/body")
	HEADERS=$(tr -d '\r' <"$IT_TMP/headers")
}
# A request to the API with a cookie jar (-b/-c JAR).
jreq() {
	local jar=$1
	shift
	creq "$API_URL" "$1" "$2" "${3-}" -b "$jar" -c "$jar" "${@:4}"
}
cookie_of() { header Set-Cookie; }
# The session token in a jar (empty when none).
jar_token() { awk '$6 == "sbx_session" {print $7}' "$1" 2>/dev/null | tail -n 1; }
setup_code_cmd() {
	env -i "PATH=$PATH" SANDBOXD_DATA_DIR="$DATA" \
		SANDBOXD_ENV_FILE="$IT_TMP/empty.env" "$SANDBOXD_BIN" setup-code
}

# --- the setup code -------------------------------------------------------------

CODE=$(sed -nE 's/^Console setup code \(shown once\): (.*)$/\1/p' "$DAEMON_OUT" | head -n 1)

t_begin "first start prints a setup code beside the API token, kept 0600"
[[ $CODE =~ ^[A-HJ-NP-Z2-9]{4}(-[A-HJ-NP-Z2-9]{4}){3}$ ]] ||
	t_err "no setup code line in stdout: $(head -c 400 "$DAEMON_OUT")"
grep -q '^API token (shown once): sk_' "$DAEMON_OUT" || t_err "no API token line"
[[ $(stat -c %a "$DATA/console-setup-code" 2>/dev/null) == 600 ]] ||
	t_err "console-setup-code is not 0600: $(stat -c %a "$DATA/console-setup-code" 2>&1)"
got=$(setup_code_cmd)
[[ $got == "$CODE" ]] || t_err "sandboxd setup-code printed '$got', not the code of the start ($CODE)"
t_end

t_begin "before setup: status says no password, not signed in"
creq "$API_URL" GET /v1/auth/status
expect_status 200 && expect_json .auth_enabled true && expect_json .password_set false &&
	expect_json .signed_in false && expect_json .via null && expect_json .tenant null &&
	expect_json .csrf_token null
creq "$API_URL" GET /v1/apps
expect_status 401 && expect_envelope unauthorized
t_end

t_begin "setup is refused without the code, with a wrong one, with a short password"
creq "$API_URL" POST /v1/auth/setup "{\"password\":\"$PW1\"}"
expect_status 400 && expect_envelope invalid_request
creq "$API_URL" POST /v1/auth/setup "{\"setup_code\":\"ABCD-EFGH-JKLM-NPQR\",\"password\":\"$PW1\"}" \
	-H 'X-Forwarded-For: 198.51.100.1'
expect_status 403 && expect_envelope setup_code_invalid
creq "$API_URL" POST /v1/auth/setup "{\"setup_code\":\"$CODE\",\"password\":\"short\"}"
expect_status 400 && expect_envelope invalid_request
creq "$API_URL" POST /v1/auth/setup "{\"setup_code\":\"$CODE\",\"password\":\"$PW1\"}" \
	-H 'Origin: http://evil.example'
expect_status 403 && expect_envelope csrf_failed
creq "$API_URL" GET /v1/auth/status
expect_json .password_set false
t_end

J1=$IT_TMP/jar1
t_begin "setup with the printed code: signed in, the cookie HttpOnly, SameSite=Strict, no Secure on http"
lower=$(tr 'A-Z' 'a-z' <<<"$CODE")
jreq "$J1" POST /v1/auth/setup "{\"setup_code\":\"$lower\",\"password\":\"$PW1\"}"
expect_status 200 && expect_json .signed_in true && expect_json .via session &&
	expect_json .tenant default && expect_json .operator true && expect_json .password_set true &&
	expect_jq '.csrf_token | length >= 40' 'a csrf_token' && expect_jq '.expires_at | test("Z$")' 'expires_at'
CSRF1=$(j .csrf_token)
c=$(cookie_of)
[[ $c =~ ^sbx_session=[A-Za-z0-9_-]{43}\; ]] || t_err "Set-Cookie: $c"
for flag in HttpOnly SameSite=Strict Path=/ Max-Age=2592000; do
	[[ $c == *"; $flag"* ]] || t_err "Set-Cookie lacks $flag: $c"
done
[[ $c == *Secure* ]] && t_err "Secure on a plain http request: $c"
[[ -e $DATA/console-setup-code ]] && t_err "the setup code file is still there"
setup_code_cmd >"$IT_TMP/sc.out" 2>"$IT_TMP/sc.err" && t_err "setup-code succeeded after setup"
grep -q 'already set' "$IT_TMP/sc.err" || t_err "setup-code said: $(cat "$IT_TMP/sc.err" "$IT_TMP/sc.out")"
creq "$API_URL" POST /v1/auth/setup "{\"setup_code\":\"$CODE\",\"password\":\"$PW1\"}"
expect_status 409 && expect_envelope password_set
t_end

t_begin "the cookie authenticates reads; only a hash of it is stored"
jreq "$J1" GET /v1/apps
expect_status 200 && expect_jq '.apps | type == "array"' 'an apps list'
jreq "$J1" GET /v1/auth/status
expect_json .via session && expect_json .csrf_token "$CSRF1"
tok=$(jar_token "$J1")
[[ ${#tok} == 43 ]] || t_err "no token in the jar"
grep -qa -- "$tok" "$DATA/state/sandboxd.db" "$DATA"/state/sandboxd.db-wal 2>/dev/null &&
	t_err "the session token is stored in clear"
t_end

t_begin "CSRF: a cookie write needs the token, and the Origin if sent"
jreq "$J1" POST /v1/apps '{"name":"csrf-none"}'
expect_status 403 && expect_envelope csrf_failed
jreq "$J1" POST /v1/apps '{"name":"csrf-wrong"}' -H "X-CSRF-Token: ${CSRF1}x"
expect_status 403 && expect_envelope csrf_failed
jreq "$J1" POST /v1/apps '{"name":"csrf-origin"}' -H "X-CSRF-Token: $CSRF1" \
	-H 'Origin: http://evil.example'
expect_status 403 && expect_envelope csrf_failed
jreq "$J1" POST /v1/apps '{"name":"csrf-null"}' -H "X-CSRF-Token: $CSRF1" -H 'Origin: null'
expect_status 403 && expect_envelope csrf_failed
jreq "$J1" POST /v1/apps '{"name":"csrf-ok"}' -H "X-CSRF-Token: $CSRF1" \
	-H "Origin: http://$API_ADDR"
expect_status 201 && expect_json .name csrf-ok
jreq "$J1" POST /v1/apps '{"name":"csrf-no-origin"}' -H "X-CSRF-Token: $CSRF1"
expect_status 201
api GET /v1/apps
expect_status 200 && expect_jq '[.apps[].name] | (index("csrf-ok") != null) and (index("csrf-none") == null) and (index("csrf-origin") == null)' \
	'only the writes that passed made apps (the token sees the same tenant)'
t_end

t_begin "bearer tokens are unaffected: no CSRF, cookies ignored"
api POST /v1/apps '{"name":"by-token"}'
expect_status 201
creq "$API_URL" GET /v1/apps "" -b "$J1" -H "Authorization: Bearer sk_wrong"
expect_status 401 && expect_envelope unauthorized
creq "$API_URL" GET /v1/auth/status "" -H "Authorization: Bearer $TOKEN"
expect_json .signed_in true && expect_json .via token && expect_json .tenant default &&
	expect_json .csrf_token null
t_end

J2=$IT_TMP/jar2
t_begin "login: a wrong password is 401, the right one a new session; Secure with X-Forwarded-Proto https"
jreq "$J2" POST /v1/auth/login '{"password":"not it at all"}' -H 'X-Forwarded-For: 198.51.100.2'
expect_status 401 && expect_envelope invalid_password
jreq "$J2" POST /v1/auth/login "{\"password\":\"$PW1\"}" -H 'X-Forwarded-Proto: https'
expect_status 200 && expect_json .via session
# Over HTTPS a __Host- cookie: Secure, Path=/, no Domain, which no
# other host (a preview) can set or overwrite.
c=$(cookie_of)
[[ $c =~ ^__Host-sbx_session=[A-Za-z0-9_-]{43}\; && $c == *"; Secure"* && $c == *"Path=/;"* && ${c,,} != *domain=* ]] ||
	t_err "no __Host- Secure cookie with X-Forwarded-Proto https: $c"
CSRF2=$(j .csrf_token)
[[ $CSRF2 != "$CSRF1" ]] || t_err "two sessions share a CSRF token"
# curl keeps a __Host- cookie for https only: send it by hand.
T2=$(sed -nE 's/^__Host-sbx_session=([A-Za-z0-9_-]{43});.*$/\1/p' <<<"$c")
creq "$API_URL" GET /v1/auth/status "" -H "Cookie: __Host-sbx_session=$T2"
expect_json .via session && expect_json .csrf_token "$CSRF2"
jreq "$J1" POST /v1/auth/login '{"password":"x"}' -H 'Origin: http://evil.example'
expect_status 403 && expect_envelope csrf_failed
t_end

t_begin "logout ends only that session and clears the cookie; the others stay"
J3=$IT_TMP/jar3
jreq "$J3" POST /v1/auth/login "{\"password\":\"$PW1\"}"
CSRF3=$(j .csrf_token)
T3=$(jar_token "$J3")
jreq "$J3" POST /v1/auth/logout "" -H "X-CSRF-Token: $CSRF3"
expect_status 204
[[ $(cookie_of) == *"Max-Age=0"* ]] || t_err "the cookie is not cleared: $(cookie_of)"
creq "$API_URL" GET /v1/apps "" -H "Cookie: sbx_session=$T3"
expect_status 401
jreq "$J1" GET /v1/apps
expect_status 200
t_end

t_begin "password change: other sessions end, the caller's stays; the old password fails"
J4=$IT_TMP/jar4
jreq "$J4" POST /v1/auth/login "{\"password\":\"$PW1\"}"
expect_status 200
jreq "$J1" POST /v1/auth/password "{\"current_password\":\"wrong one\",\"new_password\":\"$PW2\"}" \
	-H "X-CSRF-Token: $CSRF1" -H 'X-Forwarded-For: 198.51.100.3'
expect_status 401 && expect_envelope invalid_password
jreq "$J1" POST /v1/auth/password "{\"current_password\":\"$PW1\",\"new_password\":\"$PW2\"}"
expect_status 403 && expect_envelope csrf_failed
jreq "$J1" POST /v1/auth/password "{\"current_password\":\"$PW1\",\"new_password\":\"$PW2\"}" \
	-H "X-CSRF-Token: $CSRF1"
expect_status 204
jreq "$J1" GET /v1/apps
expect_status 200
jreq "$J4" GET /v1/apps
expect_status 401
creq "$API_URL" GET /v1/apps "" -H "Cookie: sbx_session=$T2"
expect_status 401
creq "$API_URL" POST /v1/auth/login "{\"password\":\"$PW1\"}" -H 'X-Forwarded-For: 198.51.100.4'
expect_status 401 && expect_envelope invalid_password
jreq "$J4" POST /v1/auth/login "{\"password\":\"$PW2\"}"
expect_status 200
t_end

t_begin "logout?all=true ends every session"
jreq "$J4" POST '/v1/auth/logout?all=true' "" -H "X-CSRF-Token: $(j .csrf_token)"
expect_status 204
jreq "$J1" GET /v1/apps
expect_status 401
jreq "$J4" GET /v1/apps
expect_status 401
jreq "$J1" POST /v1/auth/login "{\"password\":\"$PW2\"}"
expect_status 200
CSRF1=$(j .csrf_token)
t_end

t_begin "rate limit: 5 failures a minute per client address, then 429 with Retry-After"
for i in 1 2 3 4 5; do
	creq "$API_URL" POST /v1/auth/login '{"password":"guess guess"}' -H 'X-Forwarded-For: 203.0.113.9'
	[[ $STATUS == 401 ]] || t_err "attempt $i: $STATUS"
done
creq "$API_URL" POST /v1/auth/login "{\"password\":\"$PW2\"}" -H 'X-Forwarded-For: 203.0.113.9'
expect_status 429 && expect_envelope rate_limited
ra=$(header Retry-After)
[[ $ra =~ ^[0-9]+$ ]] && ((ra >= 1 && ra <= 60)) || t_err "Retry-After: '$ra'"
creq "$API_URL" POST /v1/auth/setup '{"setup_code":"x","password":"yyyyyyyy"}' -H 'X-Forwarded-For: 203.0.113.9'
expect_status 429
creq "$API_URL" POST /v1/auth/login "{\"password\":\"$PW2\"}" -H 'X-Forwarded-For: 203.0.113.10'
expect_status 200 && expect_json .via session
# A peer that is not loopback cannot pick its address: X-F-F counts only from loopback.
t_end

# --- the console's host ---------------------------------------------------------

# ereq METHOD PATH [BODY] [curl args…]: to the edge with the console's Host.
ereq() { creq "$EDGE" "$1" "$2" "${3-}" -H "Host: $CH" "${@:4}"; }
# curl files cookies under the URL's host (127.0.0.1): send it by hand,
# as a browser at console.localhost does.
CK="Cookie: sbx_session=$(jar_token "$J1")"

t_begin "console host: the API with the cookie, CSRF against the console's origin"
ereq GET /v1/apps "" -H "$CK"
expect_status 200 && expect_jq '.apps | length >= 2' 'the apps' && expect_request_id
ereq GET /healthz
expect_status 200 && [[ $BODY == ok ]] || t_err "/healthz through the console host: $BODY"
ereq POST /v1/apps '{"name":"via-console"}' -H "$CK" -H "X-CSRF-Token: $CSRF1" -H "Origin: $ORIGIN"
expect_status 201 && expect_json .name via-console
ereq POST /v1/apps '{"name":"via-console-2"}' -H "$CK" -H "X-CSRF-Token: $CSRF1" \
	-H "Origin: http://console.localhost:1"
expect_status 403 && expect_envelope csrf_failed
ereq GET /v1/auth/status "" -H "$CK"
expect_json .via session
[[ $(header X-Frame-Options) == DENY ]] || t_err "no X-Frame-Options on an API answer"
# The edge writes X-Forwarded-Proto itself: a client's https is not believed.
ereq POST /v1/auth/login "{\"password\":\"$PW2\"}" -H 'X-Forwarded-Proto: https'
expect_status 200
[[ $(cookie_of) == *Secure* ]] && t_err "the client's X-Forwarded-Proto reached the API: $(cookie_of)"
t_end

t_begin "console host: the edge's X-Forwarded-For counts, not the client's"
for i in 1 2 3 4 5; do
	ereq POST /v1/auth/login '{"password":"guess guess"}' -H 'X-Forwarded-For: 203.0.113.50'
done
ereq POST /v1/auth/login "{\"password\":\"$PW2\"}" -H 'X-Forwarded-For: 203.0.113.51'
expect_status 429 # the edge said 127.0.0.1 for both
creq "$API_URL" POST /v1/auth/login "{\"password\":\"$PW2\"}" -H 'X-Forwarded-For: 203.0.113.52'
expect_status 200
t_end

t_begin "setup: an app behind the edge"
serve_edge_app console-app
t_end

t_begin "console host: a task's events arrive through the edge as they happen"
submit "$SB" '{"prompt":"[[fake:sleep=4]] work slowly"}'
TID=$TASK_ID
start=$(date +%s.%N)
curl -sN --max-time 60 -H "Host: $CH" -H "$CK" \
	"$EDGE/v1/sandboxes/$SB/tasks/$TID/events" |
	while IFS= read -r line; do printf '%s\t%s\n' "$(date +%s.%N)" "$line"; done >"$IT_TMP/sse.tab"
first=$(awk -F'\t' '$2 ~ /^event: /{print $1; exit}' "$IT_TMP/sse.tab")
done_at=$(awk -F'\t' '$2 == "event: done"{print $1}' "$IT_TMP/sse.tab")
n=$(grep -c $'\tevent: ' "$IT_TMP/sse.tab")
[[ -n $first && -n $done_at ]] || t_err "no events or no done: $(head -c 400 "$IT_TMP/sse.tab")"
if [[ -n $first && -n $done_at ]]; then
	awk -v a="$first" -v b="$done_at" 'BEGIN { exit !(b - a >= 2.5) }' ||
		t_err "the first event came $(awk -v a="$first" -v b="$done_at" 'BEGIN{print b-a}') s before done: buffered"
	working=$(awk -F'\t' -v b="$done_at" '$2 ~ /working/ && $1 < b - 1 {n++} END {print n+0}' "$IT_TMP/sse.tab")
	((working >= 2)) || t_err "the agent's progress did not arrive while it ran ($working lines a second before done)"
fi
((n >= 4)) || t_err "only $n events"
note "$n events; first at +$(awk -v a="$first" -v s="$start" 'BEGIN{printf "%.2f", a-s}') s, done at +$(awk -v a="$done_at" -v s="$start" 'BEGIN{printf "%.2f", a-s}') s"
t_end

t_begin "console host: a 12 MiB file upload passes the edge to the API's own cap"
head -c $((12 << 20)) /dev/urandom >"$IT_TMP/big.bin"
ereq PUT "/v1/sandboxes/$SB/files?path=big.bin" "@$IT_TMP/big.bin" -H "$CK" \
	-H "X-CSRF-Token: $CSRF1" -H "Origin: $ORIGIN"
expect_status 200
cmp -s "$DATA/workspaces/$SB/workspace/app/big.bin" "$IT_TMP/big.bin" ||
	t_err "the file in the workspace differs from what was sent"
head -c $((17 << 20)) /dev/zero >"$IT_TMP/huge.bin"
ereq PUT "/v1/sandboxes/$SB/files?path=huge.bin" "@$IT_TMP/huge.bin" -H "$CK" \
	-H "X-CSRF-Token: $CSRF1"
expect_status 413
t_end

t_begin "previews carry frame-ancestors: the console's origin on the request's port"
h=$(ecurl "$HOST" / -D - -o /dev/null | tr -d '\r')
grep -qx "Content-Security-Policy: frame-ancestors http://console.localhost:$EDGE_PORT" <<<"$h" ||
	t_err "preview headers: $(grep -i security <<<"$h")"
grep -qi '^X-Frame-Options' <<<"$h" && t_err "the app's X-Frame-Options was passed on"
t_end

t_begin "console files: index.html no-store, security headers, SPA fallback"
ereq GET /
expect_status 200
[[ $BODY == "$(cat "$CON/index.html")" ]] || t_err "/ is not index.html: $(short_body)"
[[ $(header Cache-Control) == no-store ]] || t_err "index Cache-Control: $(header Cache-Control)"
[[ $(header Content-Type) == "text/html; charset=utf-8" ]] || t_err "Content-Type: $(header Content-Type)"
csp=$(header Content-Security-Policy)
for d in "default-src 'self'" "connect-src 'self'" "img-src 'self' data:" \
	"frame-ancestors 'none'" "base-uri 'none'" "form-action 'self'" \
	"frame-src http://*.preview.localhost:$EDGE_PORT"; do
	[[ $csp == *"$d"* ]] || t_err "CSP lacks $d: $csp"
done
[[ $csp == *unsafe-inline* ]] && t_err "the CSP allows inline script: $csp"
[[ $(header X-Content-Type-Options) == nosniff ]] || t_err "no nosniff"
[[ $(header Referrer-Policy) == no-referrer ]] || t_err "no Referrer-Policy"
[[ $(header X-Frame-Options) == DENY ]] || t_err "no X-Frame-Options DENY"
ereq GET '/apps/01ARZ3NDEKTSV4RRFFQ69G5FAV/files?path=x'
expect_status 200
[[ $BODY == "$(cat "$CON/index.html")" ]] || t_err "a deep link did not get index.html"
[[ $(header Cache-Control) == no-store ]] || t_err "fallback Cache-Control: $(header Cache-Control)"
ereq GET /favicon.svg
expect_status 200 && [[ $(header Content-Type) == image/svg+xml ]] ||
	t_err "favicon: $(header Content-Type)"
ereq GET /assets/app-0000.js
expect_status 404
ereq POST /somewhere 'x'
expect_status 405
t_end

t_begin "console files: assets immutable, the .gz twin when gzip is accepted"
ereq GET /assets/app-3f2a1b.js "" -H 'Accept-Encoding: gzip, deflate, br'
expect_status 200
[[ $(header Cache-Control) == "public, max-age=31536000, immutable" ]] ||
	t_err "asset Cache-Control: $(header Cache-Control)"
[[ $(header Content-Encoding) == gzip ]] || t_err "no Content-Encoding: gzip"
[[ $(header Vary) == Accept-Encoding ]] || t_err "no Vary: Accept-Encoding"
cmp -s "$IT_TMP/body" "$CON/assets/app-3f2a1b.js.gz" || t_err "the gzip body is not the .gz file"
[[ $(header Content-Length) == $(stat -c %s "$CON/assets/app-3f2a1b.js.gz") ]] ||
	t_err "Content-Length $(header Content-Length)"
ereq GET /assets/app-3f2a1b.js
expect_status 200
[[ -z $(header Content-Encoding) ]] || t_err "gzip without Accept-Encoding"
cmp -s "$IT_TMP/body" "$CON/assets/app-3f2a1b.js" || t_err "the plain body differs"
ereq GET /assets/app-3f2a1b.js "" -H 'Accept-Encoding: gzip;q=0'
[[ -z $(header Content-Encoding) ]] || t_err "gzip although q=0"
ereq HEAD / "" -I # -I: the output is the head alone
expect_status 200 && [[ $BODY != *doctype* ]] || t_err "HEAD has a body"
[[ $(header Content-Length) == $(stat -c %s "$CON/index.html") ]] || t_err "HEAD Content-Length"
t_end

t_begin "keep-alive: files and API answers share one connection"
out=$(curl -s -o /dev/null -o /dev/null -o /dev/null -w '%{num_connects}\n' -H "Host: $CH" -H "$CK" \
	"$EDGE/" "$EDGE/v1/apps" "$EDGE/assets/app-3f2a1b.js" | paste -sd' ')
[[ $out == "1 0 0" ]] || t_err "connections per request: $out"
t_end

# --- behind a TLS proxy (PREVIEW_TLS) ----------------------------------------------

new_data_dir
start_daemon -SANDBOXD_API_TOKENS PREVIEW_TLS=true SANDBOXD_NETWORK=none HTTP_PORT=$EDGE_PORT \
	SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_CONSOLE_DIR="$CON" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
CODE=$(sed -nE 's/^Console setup code \(shown once\): (.*)$/\1/p' "$DAEMON_OUT" | head -n 1)

t_begin "PREVIEW_TLS: the cookie is Secure; the proxy's X-Forwarded-For names the browser"
ereq POST /v1/auth/setup "{\"setup_code\":\"$CODE\",\"password\":\"$PW1\"}" \
	-H 'X-Forwarded-For: 192.0.2.1' -H "Origin: https://$CH"
expect_status 200 && expect_json .via session
[[ $(cookie_of) == *"; Secure"* ]] || t_err "no Secure under PREVIEW_TLS: $(cookie_of)"
for i in 1 2 3 4 5; do
	ereq POST /v1/auth/login '{"password":"guess guess"}' -H 'X-Forwarded-For: 192.0.2.7'
done
ereq POST /v1/auth/login "{\"password\":\"$PW1\"}" -H 'X-Forwarded-For: 192.0.2.7'
expect_status 429
ereq POST /v1/auth/login "{\"password\":\"$PW1\"}" -H 'X-Forwarded-For: 10.9.9.9, 192.0.2.8'
expect_status 200
t_end

# --- auth disabled, no console built ---------------------------------------------

new_data_dir
start_daemon SANDBOXD_API_AUTH_DISABLED=true SANDBOXD_NETWORK=none HTTP_PORT=$EDGE_PORT \
	SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_CONSOLE_DIR="$IT_TMP/not-built" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

t_begin "auth disabled: open on loopback only; the console host signs in as usual"
creq "$API_URL" GET /v1/auth/status
expect_status 200 && expect_json .auth_enabled false && expect_json .signed_in true &&
	expect_json .tenant default && expect_json .operator true
ereq GET /v1/auth/status
expect_status 200 && expect_json .auth_enabled true && expect_json .signed_in false
ereq GET /v1/apps
expect_status 401 && expect_envelope unauthorized
creq "$API_URL" GET /v1/apps "" -H 'Host: evil.example'
expect_status 403 && expect_envelope host_not_allowed
grep -q 'Console setup code' "$DAEMON_OUT" || t_err "no setup code with auth disabled: the console could not be signed in to"
t_end

t_begin "no console built: a page that says so; the API still answers"
ereq GET /apps
expect_status 503
grep -q 'make console' <<<"$BODY" || t_err "the page does not say how to build: $(short_body)"
[[ $(header Cache-Control) == no-store ]] || t_err "Cache-Control: $(header Cache-Control)"
ereq GET /healthz
expect_status 200
t_end

finish
