#!/usr/bin/env bash
# Private previews, through the real edge with real sockets: an app
# (edge-app.js in a sandbox) public by default and unchanged; made
# private, an anonymous visitor gets the unknown host's page, identical
# in status, headers and body (and of the same timing class), for HTML,
# JSON and WebSocket upgrades alike, and nothing is forwarded to the
# app; a link minted by a token holder and one minted from a console
# session (through the console's host, with CSRF) exchange once on the
# app's host for a host-only HttpOnly cookie and a redirect to the path;
# the app then answers, WebSocket and SSE included, and never sees the
# cookie; a replayed code, another app's code or cookie, an expired link
# and cookie are refused; visibility changes and DELETE preview-links
# revoke cookies; /__sandboxd/ never reaches the app; the console's
# session cookie has no Domain; behind nginx as the front proxy
# (X-Forwarded-Proto https, Host kept) the cookie is Secure and
# everything works the same; the CLI's app visibility, link and unlink;
# in real Chromium (private-preview.mjs), with third-party cookies allowed
# and blocked, the console signed in frames the private app, its
# WebSocket works there, the cookie is HttpOnly, a direct visit is the
# sign-in page and the console's Open button opens the app; the instance
# default and a restart (the cookie key survives it, links die with it);
# a deleted app's links; a private app restored from the trash after a
# restart stays private while the instance default is public.
. "$(dirname "$0")/lib.sh"
need_docker
command -v python3 >/dev/null || bail "python3 is needed for the raw-socket clients"

# The console's session is the tenant "default": the token is its, so
# that the apps are the console's too.
CONSOLE_DIR=$IT_ROOT/build/console
if [[ ! -f $CONSOLE_DIR/index.html || ! -d $IT_ROOT/console/node_modules/playwright-core ]]; then
	make -s -C "$IT_ROOT" BUILD=build console >"$IT_TMP/make-console.log" 2>&1 ||
		note "make console failed: $(tail -n 5 "$IT_TMP/make-console.log")"
fi
start_edge_daemon "SANDBOXD_API_TOKENS=default=$IT_TOKEN" SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR"

# edge_get, eh and pyclient are lib.sh's.
# The whole answer (head and body) to compare two answers byte for byte.
answer_of() { edge_get "$@"; printf '%s\n\n%s' "$E_HEADERS" "$E_BODY"; }

# ws_try HOST [COOKIE]: prints the status line of a WebSocket handshake,
# then the echo of one frame when it was 101.
ws_try() {
	pyclient "$@" <<'EOF'
import base64, os, socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
cookie = sys.argv[3] if len(sys.argv) > 3 else ""
s = socket.create_connection(("127.0.0.1", port), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
extra = "Cookie: %s\r\n" % cookie if cookie else ""
s.sendall(("GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n%s"
           "Sec-WebSocket-Version: 13\r\n\r\n" % (host, key, extra)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d:
        sys.exit("closed during the handshake: %r" % buf)
    buf += d
head, rest = buf.split(b"\r\n\r\n", 1)
print(head.decode().split("\r\n")[0])
if not head.startswith(b"HTTP/1.1 101"):
    sys.exit(0)
msg = b"private hello"
mask = os.urandom(4)
s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg)))
buf = rest
while len(buf) < 2 or len(buf) < 2 + (buf[1] & 0x7f):
    d = s.recv(4096)
    if not d:
        sys.exit("closed before the echo: %r" % buf)
    buf += d
print(buf[2:2 + (buf[1] & 0x7f)].decode())
EOF
}

# link_for APP [BODY]: mints a link with the token -> LINK (URL), LINK_PATH
# (its path and query, for ecurl).
link_for() {
	api POST "/v1/apps/$1/preview-link" "${2:-}"
	expect_status 201 || return 1
	LINK=$(j .url)
	LINK_PATH=/${LINK#*://*/}
}
# redeem HOST PATH: the exchange -> E_*, COOKIE ("sbx_preview=…").
redeem() {
	edge_get "$1" "$2" "${@:3}"
	COOKIE=$(eh Set-Cookie | sed -E 's/;.*//')
}

# --- setup: two apps, each with the Node app in its sandbox ------------------

t_begin "setup: two apps serve through the edge, public by default"
serve_edge_app private-a
A=$APP_ID SA=$SB HA=$HOST
serve_edge_app private-b
B=$APP_ID HB=$HOST
api GET "/v1/apps/$A"
expect_status 200 && expect_json .preview_visibility null &&
	expect_json .preview_visibility_effective public
api GET "/v1/sandboxes/$SA"
expect_json .preview.visibility public
edge_get "$HA" /
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "public app: $E_STATUS $E_BODY"
t_end

t_begin "preview_visibility: bad values refused, private and null accepted"
api PATCH "/v1/apps/$A" '{"preview_visibility":"secret"}'
expect_status 400 && expect_envelope invalid_request
api PATCH "/v1/apps/$A" '{"preview_visibility":""}'
expect_status 400
api PATCH "/v1/apps/$A" '{"preview_visibility":"private"}'
expect_status 200 && expect_json .preview_visibility private &&
	expect_json .preview_visibility_effective private
api PATCH "/v1/apps/$B" '{"preview_visibility":"private"}'
expect_status 200
api GET "/v1/sandboxes/$SA"
expect_json .preview.visibility private
create_app private-new '"preview_visibility":"private"'
expect_json .preview_visibility private
api POST "/v1/apps/$APP_ID/preview-link"
expect_status 409 && expect_envelope preview_no_sandbox
api POST "/v1/apps/$A/preview-link" '{"ttl_seconds":5}'
expect_status 400
api POST "/v1/apps/$A/preview-link" '{"ttl_seconds":604801}'
expect_status 400
api POST "/v1/apps/$A/preview-link" '{"path":"//evil.example/"}'
expect_status 400
api POST "/v1/apps/$A/preview-link" '{"port":4000}'
expect_status 400
api_noauth POST "/v1/apps/$A/preview-link"
expect_status 401
t_end

UNKNOWN=s-01j$(printf "0%.0s" {1..22})z-3000.preview.localhost:$EDGE_PORT

t_begin "anonymous: the private app's answer is the unknown host's, byte for byte"
priv=$(answer_of "$HA" /)
unk=$(answer_of "$UNKNOWN" /)
[[ $priv == "$unk" ]] || t_err "private and unknown differ:"$'\n'"$priv"$'\n---\n'"$unk"
edge_get "$HA" /
[[ $E_STATUS == 404 ]] || t_err "status $E_STATUS"
[[ $(eh Cache-Control) == no-store ]] || t_err "Cache-Control: $(eh Cache-Control)"
[[ $(eh Content-Type) == text/html* ]] || t_err "Content-Type: $(eh Content-Type)"
[[ $E_BODY == *"Sign in to the console"* && $E_BODY == *"http://console.localhost:$EDGE_PORT/"* ]] ||
	t_err "no sign-in link: $E_BODY"
[[ $E_BODY == *hello* ]] && t_err "app bytes in the refusal"
for p in /headers '/x?y=1'; do
	a=$(answer_of "$HA" "$p" -H 'Accept: application/json')
	b=$(answer_of "$UNKNOWN" "$p" -H 'Accept: application/json')
	[[ $a == "$b" ]] || t_err "$p as JSON: private and unknown differ"
done
# An undeclared port of the private app, and of a public one: the same.
a=$(answer_of "s-${SA,,}-4000.preview.localhost:$EDGE_PORT" /)
[[ $a == "$unk" ]] || t_err "undeclared port differs from unknown"
# HEAD too
a=$(answer_of "$HA" / -I)
b=$(answer_of "$UNKNOWN" / -I)
[[ $a == "$b" ]] || t_err "HEAD differs"
t_end

t_begin "anonymous: the same timing class as an unknown host"
times() {
	local h=$1 i
	for ((i = 0; i < 40; i++)); do
		curl -s -o /dev/null -w '%{time_total}\n' -H "Host: $h" "$EDGE/"
	done | sort -n | awk '{ a[NR] = $1 } END { print a[int(NR / 2)] * 1000 }'
}
tp=$(times "$HA")
tu=$(times "$UNKNOWN")
note "median ms: private refusal $tp, unknown host $tu"
awk -v p="$tp" -v u="$tu" 'BEGIN { d = p - u; if (d < 0) d = -d; exit !(d < 5) }' ||
	t_err "medians differ by 5 ms or more: private $tp, unknown $tu"
t_end

t_begin "anonymous: a WebSocket upgrade is refused like an unknown host's"
out=$(ws_try "$HA")
[[ $out == "HTTP/1.1 404 Not Found" ]] || t_err "private: $out"
out2=$(ws_try "$UNKNOWN")
[[ $out == "$out2" ]] || t_err "unknown host said '$out2', private '$out'"
t_end

t_begin "nothing of an anonymous visit reached the app"
api PATCH "/v1/apps/$A" '{"preview_visibility":"public"}' # to look
edge_get "$HA" /seen
seen=$E_BODY
[[ $seen == *'/headers'* || $seen == *'/x?y=1'* ]] && t_err "the app saw refused requests: $seen"
api PATCH "/v1/apps/$A" '{"preview_visibility":"private"}'
t_end

t_begin "a token holder's link: one exchange, a host-only cookie, a redirect to the path"
link_for "$A" '{"path":"/headers?x=1"}'
[[ $LINK == "http://s-${SA,,}-3000.preview.localhost:$EDGE_PORT/__sandboxd/auth?code="* ]] ||
	t_err "link: $LINK"
expect_jq '.expires_at | test("Z$")' expires_at
redeem "$HA" "$LINK_PATH"
[[ $E_STATUS == 302 ]] || t_err "exchange: $E_STATUS $E_HEADERS"
[[ $(eh Location) == "/headers?x=1" ]] || t_err "Location: $(eh Location)"
sc=$(eh Set-Cookie)
[[ $sc =~ ^sbx_preview=[0-9A-Z]{26}\.[0-9]+\.[0-9]+\.[A-Za-z0-9_-]{43}\; ]] || t_err "Set-Cookie: $sc"
for flag in HttpOnly Path=/ SameSite=None Secure Partitioned; do
	[[ $sc == *"; $flag"* ]] || t_err "Set-Cookie lacks $flag: $sc"
done
[[ ${sc,,} == *domain=* ]] && t_err "Set-Cookie has a Domain: $sc"
[[ $(eh Cache-Control) == no-store ]] || t_err "no no-store on the exchange"
A_COOKIE=$COOKIE
edge_get "$HA" / -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "with the cookie: $E_STATUS $E_BODY"
t_end

t_begin "the code is refused when replayed, on another app's host, and the cookie on another app's"
replay=$(answer_of "$HA" "$LINK_PATH")
[[ $replay == "$unk" ]] || t_err "replayed code: $replay"
link_for "$B"
B_PATH=$LINK_PATH
wrong=$(answer_of "$HA" "$B_PATH")
[[ $wrong == "$unk" ]] || t_err "B's code on A's host: $wrong"
redeem "$HB" "$B_PATH"
[[ $E_STATUS == 302 ]] || t_err "B's code on B's host after the wrong try: $E_STATUS"
B_COOKIE=$COOKIE
edge_get "$HB" / -H "Cookie: $B_COOKIE"
[[ $E_STATUS == 200 ]] || t_err "B with B's cookie: $E_STATUS"
edge_get "$HA" / -H "Cookie: $B_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "A with B's cookie: $E_STATUS"
edge_get "$HA" / -H "Cookie: ${A_COOKIE%?}x"
[[ $E_STATUS == 404 ]] || t_err "a forged MAC: $E_STATUS"
t_end

t_begin "the app never sees the preview cookie (nor a console session)"
edge_get "$HA" /headers -H "Cookie: a=1; $A_COOKIE; sbx_session=abc; b=2"
[[ $E_STATUS == 200 ]] || t_err "status $E_STATUS"
c=$(jq -r '.cookie // empty' <<<"$E_BODY")
[[ $c == "a=1; b=2" ]] || t_err "the app saw Cookie: '$c'"
edge_get "$HA" /headers -H "Cookie: $A_COOKIE"
c=$(jq -r '.cookie // "none"' <<<"$E_BODY")
[[ $c == none ]] || t_err "the app saw Cookie: '$c' (only ours was sent)"
t_end

t_begin "/__sandboxd/ is the edge's: never forwarded"
edge_get "$HA" /__sandboxd/other -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "/__sandboxd/other: $E_STATUS"
edge_get "$HA" "/__sandboxd/auth?code=nonsense" -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "a bad code: $E_STATUS"
edge_get "$HA" / --request-target "http://$HA/__sandboxd/absolute" -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "absolute-form /__sandboxd/: $E_STATUS"
edge_get "$HA" /seen -H "Cookie: $A_COOKIE"
[[ $E_BODY == *__sandboxd* ]] && t_err "the app saw /__sandboxd/: $E_BODY"
t_end

t_begin "authorised: WebSocket and SSE work; a keep-alive connection checks each request"
out=$(ws_try "$HA" "$A_COOKIE")
[[ $out == $'HTTP/1.1 101 Switching Protocols\nprivate hello' ]] || t_err "ws: $out"
n=$(ecurl "$HA" /sse -N -H "Cookie: $A_COOKIE" | grep -c '^data: event')
[[ $n == 5 ]] || t_err "SSE events: $n"
# one connection: with the cookie, then without (refused), then with
out=$(curl -s -o /dev/null -w '%{http_code} ' -H "Host: $HA" -H "Cookie: $A_COOKIE" "$EDGE/" \
	--next -s -o /dev/null -w '%{http_code} ' -H "Host: $HA" "$EDGE/" \
	--next -s -o /dev/null -w '%{http_code}' -H "Host: $HA" -H "Cookie: $A_COOKIE" "$EDGE/")
[[ $out == "200 404 200" ]] || t_err "keep-alive sequence: $out"
# one connection, two apps' hosts: A's cookie, proved on A, is no key to B
out=$(curl -s -o /dev/null -w '%{http_code} ' -H "Host: $HA" -H "Cookie: $A_COOKIE" "$EDGE/" \
	--next -s -o /dev/null -w '%{http_code}' -H "Host: $HB" -H "Cookie: $A_COOKIE" "$EDGE/")
[[ $out == "200 404" ]] || t_err "A's cookie then B on one connection: $out"
t_end

t_begin "signed in to the console: its link opens the app; its cookie has no Domain"
CODE=$(sed -nE 's/^Console setup code \(shown once\): (.*)$/\1/p' "$DAEMON_OUT" | head -n 1)
CH=console.localhost:$EDGE_PORT
JAR=$IT_TMP/jar
if [[ -z $CODE ]]; then
	CODE=$(env -i "PATH=$PATH" SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		"$SANDBOXD_BIN" setup-code 2>/dev/null)
fi
out=$(curl -s -c "$JAR" -D "$IT_TMP/login.head" -H "Host: $CH" -H "Origin: http://$CH" \
	-H 'Content-Type: application/json' --data-binary "{\"setup_code\":\"$CODE\",\"password\":\"private previews\"}" "$EDGE/v1/auth/setup")
csrf=$(jq -r .csrf_token <<<"$out")
[[ -n $csrf && $csrf != null ]] || t_err "console setup: $out"
sc=$(grep -i '^set-cookie:' "$IT_TMP/login.head" | tr -d '\r')
[[ $sc == *sbx_session=* && ${sc,,} != *domain=* ]] || t_err "session cookie: $sc"
out=$(curl -s -b "$JAR" -H "Host: $CH" -H "Origin: http://$CH" -H "X-CSRF-Token: $csrf" \
	-H 'Content-Type: application/json' --data-binary '{"path":"/headers","ttl_seconds":3600}' "$EDGE/v1/apps/$A/preview-link")
url=$(jq -r .url <<<"$out")
[[ $url == http://s-* ]] || t_err "console link: $out"
redeem "$HA" "/${url#*://*/}"
[[ $E_STATUS == 302 && $(eh Location) == /headers ]] || t_err "console link exchange: $E_STATUS"
edge_get "$HA" /headers -H "Cookie: $COOKIE"
[[ $E_STATUS == 200 ]] || t_err "with the console's cookie: $E_STATUS"
# The console's session is never a preview credential.
edge_get "$HA" / -b "$JAR"
[[ $E_STATUS == 404 ]] || t_err "the console session opened the private app: $E_STATUS"
# A cookie-signed mint without CSRF is refused.
st=$(curl -s -o /dev/null -w '%{http_code}' -b "$JAR" -H "Host: $CH" -X POST "$EDGE/v1/apps/$A/preview-link")
[[ $st == 403 ]] || t_err "mint without CSRF: $st"
t_end

# --- a real browser ---------------------------------------------------------------

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
for block in 0 1; do
	if [[ ! -x $CHROMIUM || ! -f $CONSOLE_DIR/index.html || ! -d $IT_ROOT/console/node_modules/playwright-core ]]; then
		t_begin "Chromium: the console frames the private preview"
		t_err "needs $CHROMIUM, make console and console/node_modules (scripts/bootstrap)"
		t_end
		break
	fi
	CONSOLE_URL=http://$CH APP_ID=$A PASSWORD='private previews' CHROMIUM=$CHROMIUM BLOCK_3PC=$block \
		PREVIEW_URL=http://${HA,,} timeout -k 10 300 node "$IT_ROOT/tests/integration/private-preview.mjs" \
		>"$IT_TMP/browser.$block.out" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok "*) t_begin "Chromium: ${line#ok }"; t_end ;;
		"not ok "*) t_begin "Chromium: ${line#not ok }"; t_err "see below"; t_end ;;
		"# "*) note "${line#\# }" ;;
		esac
	done <"$IT_TMP/browser.$block.out"
	grep -q '^ok ' "$IT_TMP/browser.$block.out" || {
		t_begin "Chromium: the private preview flow ran"
		t_err "$(tail -n 20 "$IT_TMP/browser.$block.out")"
		t_end
	}
done

t_begin "CLI: app visibility, app link, app unlink, the PREVIEW column"
sbd() { env -i PATH="$PATH" HOME="$IT_TMP" XDG_CONFIG_HOME="$IT_TMP/xdg" SANDBOXD_API="$API_URL" \
	SANDBOXD_TOKEN="$IT_TOKEN" "$SANDBOXD_BIN" "$@" </dev/null; }
out=$(sbd app visibility "$B" public) || t_err "app visibility: $out"
[[ $out == *"preview public"* ]] || t_err "app visibility said: $out"
out=$(sbd app visibility "$B" secret 2>&1) && t_err "a bad visibility passed: $out"
sbd app visibility "$B" private >/dev/null || t_err "app visibility private"
out=$(sbd apps)
grep -E "^$B .* private " <<<"$out" >/dev/null || t_err "apps: $out"
url=$(sbd -q app link "$B" --path /headers --ttl 600) || t_err "app link: $url"
[[ $url == http://s-*"/__sandboxd/auth?code="*"&next=%2Fheaders" ]] || t_err "app link printed: $url"
redeem "$HB" "/${url#*://*/}"
[[ $E_STATUS == 302 && $(eh Location) == /headers ]] || t_err "the CLI's link: $E_STATUS $(eh Location)"
cookie_b=$COOKIE
out=$(sbd app unlink "$B") || t_err "app unlink: $out"
edge_get "$HB" / -H "Cookie: $cookie_b"
[[ $E_STATUS == 404 ]] || t_err "a cookie after app unlink: $E_STATUS"
t_end

t_begin "revocation: DELETE preview-links and visibility changes end cookies and codes"
link_for "$A"
pending=$LINK_PATH
api DELETE "/v1/apps/$A/preview-links"
expect_status 204
edge_get "$HA" / -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "a revoked cookie: $E_STATUS"
edge_get "$HA" "$pending"
[[ $E_STATUS == 404 ]] || t_err "a revoked code: $E_STATUS"
link_for "$A"
redeem "$HA" "$LINK_PATH"
A_COOKIE=$COOKIE
edge_get "$HA" / -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 200 ]] || t_err "a fresh cookie: $E_STATUS"
api PATCH "/v1/apps/$A" '{"preview_visibility":"public"}'
edge_get "$HA" /
[[ $E_STATUS == 200 ]] || t_err "public again, anonymous: $E_STATUS"
api PATCH "/v1/apps/$A" '{"preview_visibility":"private"}'
edge_get "$HA" / -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 404 ]] || t_err "the cookie of before the change: $E_STATUS"
api PATCH "/v1/apps/$A" '{"name":"renamed"}' # no visibility change: no revocation
link_for "$A"
redeem "$HA" "$LINK_PATH"
A_COOKIE=$COOKIE
api PATCH "/v1/apps/$A" '{"description":"still private"}'
edge_get "$HA" / -H "Cookie: $A_COOKIE"
[[ $E_STATUS == 200 ]] || t_err "a PATCH of the name revoked the cookie: $E_STATUS"
t_end

t_begin "expiry: a link and the cookie it gave end at ttl_seconds"
link_for "$A" '{"ttl_seconds":10}'
late=$LINK_PATH
link_for "$A" '{"ttl_seconds":10}'
redeem "$HA" "$LINK_PATH"
short=$COOKIE
[[ $(eh Set-Cookie) =~ Max-Age=(9|10)\; ]] || t_err "Max-Age: $(eh Set-Cookie)"
edge_get "$HA" / -H "Cookie: $short"
[[ $E_STATUS == 200 ]] || t_err "before expiry: $E_STATUS"
sleep 11
edge_get "$HA" "$late"
[[ $E_STATUS == 404 ]] || t_err "an expired link: $E_STATUS"
edge_get "$HA" / -H "Cookie: $short"
[[ $E_STATUS == 404 ]] || t_err "an expired cookie: $E_STATUS"
t_end

# --- behind a front proxy ------------------------------------------------------

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [[ -x $NGINX ]]; then
	t_begin "behind nginx (X-Forwarded-Proto https, Host kept): Secure cookie, app, WebSocket"
	NG=$IT_TMP/nginx
	NGP=$(free_port)
	mkdir -p "$NG"
	cat >"$NG/nginx.conf" <<EOF
worker_processes 1;
pid $NG/nginx.pid;
error_log $NG/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $NG/cb; proxy_temp_path $NG/p; fastcgi_temp_path $NG/f;
    uwsgi_temp_path $NG/u; scgi_temp_path $NG/s;
    map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
    server {
        listen 127.0.0.1:$NGP;
        location / {
            proxy_pass http://127.0.0.1:$EDGE_PORT;
            proxy_http_version 1.1;
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_buffering off;
        }
    }
}
EOF
	"$NGINX" -p "$NG" -c "$NG/nginx.conf" -g 'daemon off;' >"$NG/out" 2>&1 &
	NGINX_PID=$!
	stop_nginx() { kill "$NGINX_PID" 2>/dev/null; }
	IT_CLEANUP_HOOKS+=(stop_nginx)
	wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$NGP" 2>/dev/null || t_err "nginx did not start: $(cat "$NG/out")"
	SAVED_EDGE=$EDGE SAVED_PORT=$EDGE_PORT
	EDGE=http://127.0.0.1:$NGP
	# nginx adds its own Date: two answers a second apart differ there.
	a=$(answer_of "$HA" / | grep -v '^Date: ')
	b=$(answer_of "$UNKNOWN" / | grep -v '^Date: ')
	[[ $a == "$b" && $a == *"404"* ]] || t_err "through nginx, private and unknown differ:"$'\n'"$a"$'\n---\n'"$b"
	link_for "$A"
	redeem "$HA" "$LINK_PATH"
	[[ $E_STATUS == 302 && $(eh Set-Cookie) == *"; Secure"* ]] || t_err "exchange via nginx: $E_STATUS $(eh Set-Cookie)"
	edge_get "$HA" / -H "Cookie: $COOKIE"
	[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "app via nginx: $E_STATUS"
	EDGE_PORT=$NGP
	out=$(ws_try "$HA" "$COOKIE")
	[[ $out == $'HTTP/1.1 101 Switching Protocols\nprivate hello' ]] || t_err "ws via nginx: $out"
	out=$(ws_try "$HA")
	[[ $out == "HTTP/1.1 404 Not Found" ]] || t_err "anonymous ws via nginx: $out"
	EDGE=$SAVED_EDGE EDGE_PORT=$SAVED_PORT
	t_end
else
	t_begin "behind nginx"
	t_err "nginx is not installed (apt-get install nginx-light)"
	t_end
fi

# --- deleting, the instance default, a restart --------------------------------

t_begin "the instance default private; a restart keeps cookies valid"
api PATCH "/v1/apps/$B" '{"preview_visibility":null}'
expect_json .preview_visibility null && expect_json .preview_visibility_effective public
link_for "$A"
keep_path=$LINK_PATH
link_for "$A"
redeem "$HA" "$LINK_PATH"
A_COOKIE=$COOKIE
start_edge_daemon "SANDBOXD_API_TOKENS=default=$IT_TOKEN" SANDBOXD_PREVIEW_VISIBILITY=private
HA=s-${SA,,}-3000.preview.localhost:$EDGE_PORT
HB=${HB%:*}:$EDGE_PORT
api GET "/v1/apps/$B"
expect_json .preview_visibility null && expect_json .preview_visibility_effective private
wait_until 60 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: $HA' -H 'Cookie: $A_COOKIE' $EDGE/) == 200 ]]" ||
	t_err "A's cookie after the restart: $(ecurl "$HA" / -H "Cookie: $A_COOKIE" -i | head -n 1)"
edge_get "$HB" /
[[ $E_STATUS == 404 ]] || t_err "B (default private) anonymous: $E_STATUS"
edge_get "$HA" "$keep_path"
[[ $E_STATUS == 404 ]] || t_err "a code from before the restart: $E_STATUS"
t_end

t_begin "deleting the app ends its links"
link_for "$B"
api DELETE "/v1/apps/$B"
expect_status 204
a=$(answer_of "$HB" "$LINK_PATH")
b=$(answer_of "$UNKNOWN" "$LINK_PATH")
[[ ${a%%$'\n'*} == *404* ]] || t_err "deleted app's link: ${a%%$'\n'*}"
t_end


t_begin "a private app restored from the trash after a restart stays private (instance default public)"
api PATCH "/v1/apps/$A" '{"preview_visibility":"private"}'
expect_status 200
api DELETE "/v1/apps/$A"
expect_status 204
TID=$(header Sandboxd-Trash-Id)
start_edge_daemon "SANDBOXD_API_TOKENS=default=$IT_TOKEN"
HA=s-${SA,,}-3000.preview.localhost:$EDGE_PORT
UNKNOWN=${UNKNOWN%:*}:$EDGE_PORT
api POST "/v1/trash/$TID/restore"
expect_status 200 && expect_json .app.preview_visibility private
# Up first (through a link), so the anonymous 404 below is the gate's.
link_for "$A"
redeem "$HA" "$LINK_PATH"
wait_until 60 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: $HA' -H 'Cookie: $COOKIE' $EDGE/) == 200 ]]" ||
	t_err "the restored app does not answer its viewer: $(ecurl "$HA" / -H "Cookie: $COOKIE" -i | head -n 1)"
priv=$(answer_of "$HA" /)
unk=$(answer_of "$UNKNOWN" /)
[[ $priv == "$unk" ]] || t_err "the restored private app answers anonymous visitors: ${priv%%$'\n'*}"
t_end

finish
