#!/usr/bin/env bash
# Authentication that cannot be walked around, with a real daemon:
# - auth off (SANDBOXD_API_AUTH_DISABLED=true) is for clients on this host
#   calling the API's loopback address: through the console's host of the
#   edge (which listens on every interface) /v1 still needs a token or a
#   session, from this host and from an outside client (a network
#   namespace with its own address); a non-loopback SANDBOXD_API_ADDR is
#   refused at start, and nothing answers there from outside;
# - every write, whatever the auth mode, is refused from another origin
#   (Origin, Sec-Fetch-Site cross-site and same-site) and with a body a
#   web page may send anywhere (text/plain, a form, multipart, no type),
#   and nothing is created; JSON and a file's bytes still pass;
# - /metrics is an operator's: a tenant's token is refused;
# - in real Chromium (auth-walls.mjs), a preview app of the same parent
#   domain sets forged session cookies for it and the console stays
#   signed in; over HTTPS the cookie is a __Host- one.
# shellcheck disable=SC2317 # functions run as cleanup hooks and by wait_until
. "$(dirname "$0")/lib.sh"
need_docker
need_test_image
[[ $(id -u) == 0 ]] || bail "needs root (a network namespace for the outside client)"
for tool in ip python3 jq; do
	command -v "$tool" >/dev/null || bail "$tool is not installed"
done

DOMAIN=walls.example.com
ALICE=tok-alice-$RANDOM$RANDOM
PW='walls walls walls'

# --- the outside client: a network namespace on a veth -----------------------

PID=$$
NS=sbxit-$PID-w
HV=sbxw$PID
NV=sbxpw$PID
X=$(pick_net24 10.252)
[[ $X =~ ^10\.252\.[0-9]+$ ]] || bail "no free 10.252.X.0/24: $X"
HOST_IP=$X.1
outside_host "$NS" "$HV" "$NV" "$X" 2 || bail "cannot set up the outside client's namespace"
# outside URL [curl args…]: curl from the namespace; prints the status
# (000: no answer), the body in $IT_TMP/out.body.
outside() {
	local u=$1
	shift
	ip netns exec "$NS" curl -s -o "$IT_TMP/out.body" -w '%{http_code}' --max-time 5 "$@" "$u" 2>/dev/null
}

# creq BASE METHOD PATH [BODY] [curl args…]: a request without a token.
creq() {
	local base=$1 method=$2 path=$3 body=${4-}
	shift 3
	(($# > 0)) && shift
	local -a args=(-s -o "$IT_TMP/body" -D "$IT_TMP/headers" -w '%{http_code}' --max-time 30 -X "$method")
	[[ -n $body ]] && args+=(--data-binary "$body")
	: >"$IT_TMP/body"
	REQ="$method $path"
	STATUS=$(curl "${args[@]}" "$@" "$base$path" 2>/dev/null)
	[[ -n $STATUS ]] || STATUS=000
	BODY=$(cat "$IT_TMP/body")
	HEADERS=$(tr -d '\r' <"$IT_TMP/headers")
}
apps_named() { # NAME: how many apps of that name the operator's token sees
	curl -s --max-time 10 -H "Authorization: Bearer $IT_TOKEN" "$API_URL/v1/apps" |
		jq --arg n "$1" '[.apps[] | select(.name == $n)] | length'
}
JSON='Content-Type: application/json'

# --- auth off: loopback only -------------------------------------------------

API_PORT=$(free_port)
t_begin "auth off with a non-loopback SANDBOXD_API_ADDR: refused at start, nothing answers outside"
if start_daemon SANDBOXD_API_AUTH_DISABLED=true SANDBOXD_NETWORK=none "SANDBOXD_API_ADDR=0.0.0.0:$API_PORT" \
	-SANDBOXD_API_TOKENS "HTTP_PORT=$(free_port)" SANDBOXD_EDGE_ADDR=127.0.0.1; then
	t_err "the daemon started"
fi
got=$(outside "http://$HOST_IP:$API_PORT/v1/apps" -H 'Host: localhost')
[[ $got == 000 ]] || t_err "an outside client reached the API with auth off: $got $(head -c 200 "$IT_TMP/out.body")"
if daemon_alive; then
	t_err "the daemon runs on 0.0.0.0 with auth off"
	stop_daemon
fi
grep -q "loopback only.*SANDBOXD_API_ADDR=0.0.0.0:$API_PORT.*127.0.0.1:$API_PORT" "$DAEMON_ERR" "$DAEMON_OUT" ||
	t_err "no message naming the fix: $(tail -n 3 "$DAEMON_ERR")"
t_end

new_data_dir
EDGE_PORT=$(free_port)
# The edge on every interface (its default), the API on loopback.
start_daemon SANDBOXD_API_AUTH_DISABLED=true SANDBOXD_NETWORK=none -SANDBOXD_API_TOKENS \
	"HTTP_PORT=$EDGE_PORT" "PREVIEW_DOMAIN=$DOMAIN" SANDBOXD_CONSOLE_DIR="$IT_TMP/not-built" ||
	bail "the daemon with auth off did not start: $(tail -n 5 "$DAEMON_ERR")"
CH=console.$DOMAIN:$EDGE_PORT
EDGE=http://127.0.0.1:$EDGE_PORT

t_begin "auth off: the loopback API is open; the log says where"
creq "$API_URL" GET /v1/apps
expect_status 200
creq "$API_URL" POST /v1/apps '{"name":"local"}' -H "$JSON"
expect_status 201
grep -q "loopback only" "$DAEMON_ERR" "$DAEMON_OUT" || t_err "no log line saying auth off is loopback only"
t_end

t_begin "auth off: through the console's host /v1 needs a token or a session"
creq "$EDGE" GET /v1/apps "" -H "Host: $CH"
expect_status 401 && expect_envelope unauthorized
creq "$EDGE" POST /v1/apps '{"name":"via-edge"}' -H "Host: $CH" -H "$JSON" -H "Origin: http://$CH"
expect_status 401
creq "$EDGE" POST /v1/tokens '{"name":"via-edge"}' -H "Host: $CH" -H "$JSON"
expect_status 401
creq "$EDGE" GET /v1/auth/status "" -H "Host: $CH"
expect_status 200 && expect_json .signed_in false && expect_json .auth_enabled true
# A proxy of one's own in front of the API counts as the edge does.
creq "$API_URL" GET /v1/apps "" -H 'X-Forwarded-For: 192.0.2.9'
expect_status 401
creq "$API_URL" GET /v1/apps
[[ $(jq '[.apps[] | select(.name == "via-edge")] | length' <<<"$BODY") == 0 ]] || t_err "an app was made through the edge"
grep -q 'Console setup code' "$DAEMON_OUT" || t_err "no setup code: the console could never be signed in to"
t_end

t_begin "auth off: an outside client reaches the edge, not the API"
got=$(outside "http://$HOST_IP:$EDGE_PORT/v1/apps" -H "Host: $CH")
[[ $got == 401 ]] || t_err "GET /v1/apps from outside through the console's host: $got $(head -c 200 "$IT_TMP/out.body")"
got=$(outside "http://$HOST_IP:$EDGE_PORT/v1/tokens" -X POST -H "Host: $CH" -H "$JSON" -d '{"name":"outsider"}')
[[ $got == 401 ]] || t_err "POST /v1/tokens from outside: $got $(head -c 200 "$IT_TMP/out.body")"
got=$(outside "http://$HOST_IP:${API_ADDR##*:}/v1/apps" -H 'Host: localhost')
[[ $got == 000 ]] || t_err "the API answered an outside client: $got"
t_end

t_begin "auth off: a cross-site write to the loopback API creates nothing"
creq "$API_URL" POST /v1/apps '{"name":"xsite"}' -H "$JSON" -H 'Origin: http://evil.example'
expect_status 403 && expect_envelope csrf_failed
creq "$API_URL" POST /v1/tokens '{"name":"xsite"}' -H 'Content-Type: text/plain'
expect_status 415 && expect_envelope unsupported_media_type
creq "$API_URL" POST /v1/tokens '{"name":"xsite"}' -H 'Sec-Fetch-Site: cross-site' -H "$JSON"
expect_status 403 && expect_envelope csrf_failed
creq "$API_URL" GET /v1/tokens
[[ $(jq '[.tokens[] | select(.name == "xsite")] | length' <<<"$BODY") == 0 ]] || t_err "a token was made cross-site: $BODY"
creq "$API_URL" GET /v1/apps
[[ $(jq '[.apps[] | select(.name == "xsite")] | length' <<<"$BODY") == 0 ]] || t_err "an app was made cross-site"
t_end
stop_daemon

# --- auth on: cross-site writes, /metrics, cookies ------------------------------

new_data_dir
EDGE_PORT=$(free_port)
CONSOLE_DIR=$IT_ROOT/build/console
if [[ ! -f $CONSOLE_DIR/index.html || ! -d $IT_ROOT/console/node_modules/playwright-core ]]; then
	make -s -C "$IT_ROOT" BUILD=build console >"$IT_TMP/make-console.log" 2>&1 ||
		note "make console failed: $(tail -n 5 "$IT_TMP/make-console.log")"
fi
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	"PREVIEW_DOMAIN=$DOMAIN" "SANDBOXD_API_TOKENS=default=$IT_TOKEN,alice=$ALICE" \
	SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=$IT_TOKEN
CH=console.$DOMAIN:$EDGE_PORT
EDGE=http://127.0.0.1:$EDGE_PORT
AUTHZ="Authorization: Bearer $IT_TOKEN"

t_begin "a write from another origin or site is refused, with a token too"
for h in 'Origin: http://evil.example' 'Origin: null' "Origin: http://s-x-3000.preview.$DOMAIN:$EDGE_PORT" \
	'Sec-Fetch-Site: cross-site' 'Sec-Fetch-Site: same-site'; do
	creq "$API_URL" POST /v1/apps '{"name":"foreign"}' -H "$AUTHZ" -H "$JSON" -H "$h"
	REQ="POST /v1/apps ($h)"
	expect_status 403 && expect_envelope csrf_failed
done
note "$(j .error.message)"
creq "$API_URL" POST /v1/tokens '{"name":"foreign"}' -H "$AUTHZ" -H "$JSON" -H 'Sec-Fetch-Site: same-site'
expect_status 403
[[ $(apps_named foreign) == 0 ]] || t_err "an app was made from another origin"
api GET /v1/tokens
[[ $(j '[.tokens[] | select(.name == "foreign")] | length') == 0 ]] || t_err "a token was made from another site"
t_end

t_begin "a write's body: text/plain, a form, multipart or no type are refused"
for ct in 'text/plain' 'text/plain;charset=UTF-8' 'application/x-www-form-urlencoded' 'multipart/form-data; boundary=x'; do
	creq "$API_URL" POST /v1/apps '{"name":"simple"}' -H "$AUTHZ" -H "Content-Type: $ct"
	REQ="POST /v1/apps (Content-Type: $ct)"
	expect_status 415 && expect_envelope unsupported_media_type
done
note "$(j .error.message)"
creq "$API_URL" POST /v1/apps '{"name":"simple"}' -H "$AUTHZ" -H 'Content-Type:'
REQ="POST /v1/apps (no Content-Type)"
expect_status 415 && expect_envelope unsupported_media_type
note "$(j .error.message)"
creq "$API_URL" POST /v1/apps '{"name":"simple"}' -H "$AUTHZ" -H 'Content-Type: application/octet-stream'
expect_status 415
[[ $(apps_named simple) == 0 ]] || t_err "an app was made from a simple body"
t_end

t_begin "JSON from this origin, or from a client that says nothing, passes"
creq "$API_URL" POST /v1/apps '{"name":"plain-cli"}' -H "$AUTHZ" -H "$JSON"
expect_status 201
creq "$API_URL" POST /v1/apps '{"name":"same-origin"}' -H "$AUTHZ" -H "$JSON; charset=utf-8" \
	-H "Origin: http://$API_ADDR" -H 'Sec-Fetch-Site: same-origin'
expect_status 201
creq "$API_URL" POST /v1/apps '{"name":"typed"}' -H "$AUTHZ" -H "$JSON" -H 'Sec-Fetch-Site: none'
expect_status 201
t_end

t_begin "/metrics is an operator's: a tenant's token is refused"
api_as "$ALICE" GET /metrics
expect_status 403 && expect_envelope operator_only
grep -q sandboxd_ <<<"$BODY" && t_err "a series in the refusal"
api GET /metrics
expect_status 200 && grep -q '^sandboxd_apps ' <<<"$BODY" || t_err "the operator's /metrics: $(short_body)"
t_end

# The tossing app: its page sets two forged session cookies for the
# parent domain, one with a longer path (sent first on /v1).
t_begin "a preview app of the parent domain answers"
create_app toss && create_sandbox "$APP_ID" || bail "no sandbox: ${T_ERRS[*]}"
SB=$SB_ID
cat >"$IT_TMP/toss.js" <<EOF
'use strict';
require('http').createServer((req, res) => {
  res.writeHead(200, {'Content-Type': 'text/html', 'Set-Cookie': [
    'sbx_session=forged' + 'A'.repeat(37) + '; Domain=$DOMAIN; Path=/v1',
    'sbx_session=forgeB' + 'B'.repeat(37) + '; Domain=$DOMAIN; Path=/']});
  res.end('<!doctype html><p>tossed</p>');
}).listen(3000);
EOF
api PUT "/v1/sandboxes/$SB/files?path=toss.js" "@$IT_TMP/toss.js"
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: node toss.js
  port: 3000
'
expect_status 200
PH=s-${SB,,}-3000.preview.$DOMAIN:$EDGE_PORT
wait_until 60 bash -c "curl -s --max-time 2 -H 'Host: $PH' '$EDGE/' | grep -q tossed" ||
	t_err "the app does not answer: $(curl -s -i --max-time 2 -H "Host: $PH" "$EDGE/" | head -c 300)"
got=$(curl -s -D - -o /dev/null --max-time 5 -H "Host: $PH" "$EDGE/" | tr -d '\r' | grep -ci "^set-cookie: sbx_session=forge.*domain=$DOMAIN")
[[ $got == 2 ]] || t_err "the edge did not pass the app's cookies ($got): the browser case would prove nothing"
api PUT "/v1/sandboxes/$SB/files?path=x.txt" 'bytes' # octet-stream (lib.sh)
expect_status 200
api_hdr 'Content-Type: text/plain' PUT "/v1/sandboxes/$SB/files?path=x.txt" 'bytes'
expect_status 415 && expect_envelope unsupported_media_type
t_end

t_begin "the console's password; a session survives a forged cookie before it (curl)"
CODE=$(sed -nE 's/^Console setup code \(shown once\): (.*)$/\1/p' "$DAEMON_OUT" | head -n 1)
creq "$EDGE" POST /v1/auth/setup "{\"setup_code\":\"$CODE\",\"password\":\"$PW\"}" -H "Host: $CH" -H "$JSON" -H "Origin: http://$CH"
expect_status 200 && expect_json .via session
REAL=$(sed -nE 's/^set-cookie: sbx_session=([A-Za-z0-9_-]{43});.*$/\1/ip' <<<"$HEADERS")
FORGED=forged$(printf 'A%.0s' {1..37})
creq "$EDGE" GET /v1/auth/status "" -H "Host: $CH" -H "Cookie: sbx_session=$FORGED; theme=x; sbx_session=$REAL"
expect_json .signed_in true && expect_json .via session
# Over HTTPS (the front proxy's X-Forwarded-Proto): a __Host- cookie.
creq "$API_URL" POST /v1/auth/login "{\"password\":\"$PW\"}" -H "$JSON" -H 'X-Forwarded-Proto: https'
expect_status 200
c=$(header Set-Cookie)
[[ $c =~ ^__Host-sbx_session=[A-Za-z0-9_-]{43}\; && $c == *"; Secure"* && $c == *"Path=/;"* && ${c,,} != *domain=* ]] ||
	t_err "over HTTPS: $c"
HOSTC=$(sed -nE 's/^__Host-sbx_session=([A-Za-z0-9_-]{43});.*$/\1/p' <<<"$c")
creq "$API_URL" GET /v1/auth/status "" -H "Cookie: sbx_session=$FORGED; __Host-sbx_session=$HOSTC"
expect_json .signed_in true
t_end

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $CHROMIUM || ! -d $IT_ROOT/console/node_modules/playwright-core ]] || ! command -v node >/dev/null; then
	t_begin "Chromium: cookie tossing"
	t_err "needs $CHROMIUM, node and console/node_modules (scripts/bootstrap, make console)"
	t_end
else
	CONSOLE_URL=http://$CH PREVIEW_URL=http://$PH DOMAIN=$DOMAIN PASSWORD=$PW CHROMIUM=$CHROMIUM \
		timeout -k 10 300 node "$IT_ROOT/tests/integration/auth-walls.mjs" >"$IT_TMP/browser.out" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok "*) t_begin "Chromium: ${line#ok }"; t_end ;;
		"not ok "*) t_begin "Chromium: ${line#not ok }"; t_err "see below"; t_end ;;
		"# "*) note "${line#\# }" ;;
		esac
	done <"$IT_TMP/browser.out"
	grep -q '^ok ' "$IT_TMP/browser.out" || {
		t_begin "Chromium: the cookie flow ran"
		t_err "$(tail -n 20 "$IT_TMP/browser.out")"
		t_end
	}
fi

finish
