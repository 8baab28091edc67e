#!/usr/bin/env bash
# The preview edge as a reverse proxy, with real sockets on both sides: a
# plain Node app (edge-app.js, put into the sandbox through the files API)
# behind http://s-<id>-3000.preview.localhost:HTTP_PORT.  HTTP through the
# edge with the app seeing Host: localhost:3000 and the edge's own
# X-Forwarded-* (a client's are replaced); the
# app's X-Frame-Options dropped; keep-alive (several requests, one
# connection, and one connection to the app behind it); a reused app
# connection dropped by the app is retried for a GET, not for a POST;
# pipelined requests answered in order; a 5 MB chunked upload echoed
# intact; SSE events arriving one by one; a WebSocket echo through the 101
# tunnel; 20 MiB streamed; unknown sandbox, undeclared port and foreign
# hosts get the 404 page; a malformed request gets 400 and a close
# without harming another keep-alive connection; a 17 KiB header block
# gets 431; a slowloris client is cut off by the header deadline while
# others are served.
. "$(dirname "$0")/lib.sh"
need_docker
command -v python3 >/dev/null || bail "python3 is needed for the raw-socket clients"

start_edge_daemon


# edge_get, eh and pyclient (the raw-socket clients below) are lib.sh's.

# --- setup: the app in a sandbox ---------------------------------------------

t_begin "setup: the Node app serves through the edge"
create_app edge-test && create_sandbox "$APP_ID" ||
	bail "could not create the sandbox: ${T_ERRS[*]}"
SB=$SB_ID
HOST=s-$SB-3000.preview.localhost:$EDGE_PORT
api PUT "/v1/sandboxes/$SB/files?path=edge-app.js" "@$(dirname "$0")/edge-app.js"
expect_status 200
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: node edge-app.js
  port: 3000
'
expect_status 200
up() { edge_get "$HOST" /headers && [[ $E_STATUS == 200 && $E_BODY == *'"host"'* ]]; }
wait_until 60 up || bail "GET /headers through the edge: $E_STATUS $(head -c 300 <<<"$E_BODY")"
t_end

t_begin "HTTP through the edge: the app's page, its status and body"
edge_get "$HOST" /
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] ||
	t_err "GET /: $E_STATUS '$E_BODY'"
edge_get "$HOST" /nothing
[[ $E_STATUS == 404 && $E_BODY == "not here" ]] || t_err "GET /nothing: $E_STATUS '$E_BODY'"
[[ -z $(eh X-Sandboxd-Preview) ]] || t_err "the app's own 404 carries X-Sandboxd-Preview"
t_end

t_begin "the app's X-Frame-Options is dropped, other headers pass"
edge_get "$HOST" /
[[ -z $(eh X-Frame-Options) ]] || t_err "X-Frame-Options came through: $(eh X-Frame-Options)"
[[ $(eh Content-Type) == text/plain ]] || t_err "Content-Type: '$(eh Content-Type)'"
direct=$(docker exec "$SB_CONTAINER" python3 -c '
import urllib.request
print(urllib.request.urlopen("http://127.0.0.1:3000/", timeout=5).headers.get("X-Frame-Options"))' 2>&1)
[[ $direct == DENY ]] || t_err "the app itself does not send X-Frame-Options (got: $direct)"
t_end

t_begin "the app sees Host: localhost:3000 and X-Forwarded-For/-Host/-Proto"
edge_get "$HOST" /headers
if ! jq -e . <<<"$E_BODY" >/dev/null 2>&1; then
	t_err "GET /headers: not JSON: $E_BODY"
else
	[[ $(jq -r .host <<<"$E_BODY") == localhost:3000 ]] || t_err "host: $(jq -r .host <<<"$E_BODY")"
	[[ $(jq -r '."x-forwarded-for"' <<<"$E_BODY") == 127.0.0.1 ]] ||
		t_err "x-forwarded-for: $(jq -r '."x-forwarded-for"' <<<"$E_BODY")"
	[[ $(jq -r '."x-forwarded-host"' <<<"$E_BODY") == "${HOST,,}" ]] ||
		t_err "x-forwarded-host: $(jq -r '."x-forwarded-host"' <<<"$E_BODY")"
	[[ $(jq -r '."x-forwarded-proto"' <<<"$E_BODY") == http ]] ||
		t_err "x-forwarded-proto: $(jq -r '."x-forwarded-proto"' <<<"$E_BODY")"
fi
got=$(ecurl "$HOST" /headers -H 'X-Forwarded-For: 10.1.2.3' -H 'X-Forwarded-Proto: https')
[[ $(jq -r '."x-forwarded-for"' <<<"$got") == 127.0.0.1 ]] ||
	t_err "an incoming X-Forwarded-For is not replaced: $got"
[[ $(jq -r '."x-forwarded-proto"' <<<"$got") == http ]] ||
	t_err "an incoming X-Forwarded-Proto is not replaced: $got"
t_end

t_begin "keep-alive: five requests on one client connection"
u=$EDGE/
n=$(curl -s --max-time 30 -H "Host: $HOST" -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
	-w '%{num_connects} %{http_code}\n' "$u" "${u}headers" "$u" "${u}nothing" "$u")
[[ $(awk '{s += $1} END {print s}' <<<"$n") == 1 ]] || t_err "connections opened per request: $(tr '\n' ' ' <<<"$n")"
[[ $(awk '{print $2}' <<<"$n" | tr '\n' ' ') == "200 200 200 404 200 " ]] ||
	t_err "statuses: $(awk '{print $2}' <<<"$n" | tr '\n' ' ')"
t_end

t_begin "keep-alive to the app: one app connection serves a client connection's requests"
u=$EDGE/conn
ports=$(curl -s --max-time 30 -H "Host: $HOST" "$u" "$u" "$u" "$u" | sort -u)
[[ $(wc -l <<<"$ports") == 1 && $ports =~ ^[0-9]+$ ]] ||
	t_err "the app saw the requests come from ports: $(tr '\n' ' ' <<<"$ports")"
t_end

t_begin "the app drops a reused connection unanswered: a GET is sent again, a POST gets 502"
# Two requests on one client connection (--next keeps it); the second
# reaches the app connection that the first one told to drop.
after_drop() {
	: >"$IT_TMP/again.h"
	curl -s --max-time 30 -H "Host: $HOST" -o /dev/null -w '%{http_code} ' "$EDGE/then-drop" \
		--next -s --max-time 30 -H "Host: $HOST" -o "$IT_TMP/again" -D "$IT_TMP/again.h" \
		-w '%{http_code} %{num_connects}' "$@" "$EDGE/"
}
got=$(after_drop)
[[ $got == "200 200 0" && $(cat "$IT_TMP/again") == "hello from the app" ]] ||
	t_err "GET after the drop: $got $(cat "$IT_TMP/again")"
got=$(after_drop -X POST)
[[ $got == "200 502 0" ]] && grep -qi '^X-Sandboxd-Preview: failed' "$IT_TMP/again.h" ||
	t_err "POST after the drop: $got $(cat "$IT_TMP/again.h")"
t_end

t_begin "pipelined requests, a HEAD among them: answered in order on one connection"
out=$(pyclient "$HOST" <<'EOF'
import re, socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
req = "%s %s HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
s.sendall(((req % ("GET", "/")) + (req % ("HEAD", "/big")) + (req % ("GET", "/nothing"))).encode())
buf = b""
while b"not here" not in buf:
    d = s.recv(65536)
    if not d:
        break
    buf += d
codes = re.findall(rb"HTTP/1\.1 (\d{3}) ", buf)
print(b" ".join(codes).decode(), b"Content-Length: 20971520" in buf, len(buf) < 4096,
      buf.count(b"hello from the app"), buf.endswith(b"not here\n"))
EOF
)
[[ $out == "200 200 404 True True 1 True" ]] ||
	t_err "statuses, HEAD's length, no HEAD body, one hello, the 404 last: $out"
t_end

t_begin "a 5 MB chunked upload is echoed intact"
head -c 5000000 /dev/urandom >"$IT_TMP/up.bin"
want=$(sha256sum <"$IT_TMP/up.bin" | cut -d' ' -f1)
got=$(ecurl "$HOST" /echo -H 'Transfer-Encoding: chunked' --data-binary "@$IT_TMP/up.bin" | sha256sum | cut -d' ' -f1)
[[ $got == "$want" ]] || t_err "chunked: sha256 $got, sent $want"
got=$(ecurl "$HOST" /echo --data-binary "@$IT_TMP/up.bin" | sha256sum | cut -d' ' -f1)
[[ $got == "$want" ]] || t_err "Content-Length: sha256 $got, sent $want"
t_end

t_begin "20 MiB streamed from the app arrive complete"
got=$(ecurl "$HOST" /big -w '\n%{size_download} %{http_code}' | tail -n 1)
[[ $got == "20971520 200" ]] || t_err "GET /big: size and status $got"
want=$(head -c 20971520 /dev/zero | tr '\0' x | sha256sum | cut -d' ' -f1)
got=$(ecurl "$HOST" /big | sha256sum | cut -d' ' -f1)
[[ $got == "$want" ]] || t_err "GET /big: content differs"
t_end

t_begin "SSE: five events arrive one by one, not at the end"
ecurl "$HOST" /sse -N | while IFS= read -r line; do
	[[ $line == data:* ]] && echo "$(($(date +%s%N) / 1000000)) $line"
done >"$IT_TMP/sse"
if [[ $(wc -l <"$IT_TMP/sse") != 5 ]]; then
	t_err "expected 5 events, got: $(cat "$IT_TMP/sse")"
else
	spread=$(awk 'NR == 1 {a = $1} END {print $1 - a}' "$IT_TMP/sse")
	((spread >= 600)) || t_err "the 5 events arrived within ${spread} ms (sent 800 ms apart end to end)"
	note "first to last event: ${spread} ms"
fi
t_end

t_begin "WebSocket: handshake through the edge, a masked frame echoed"
out=$(pyclient "$HOST" <<'EOF'
import base64, hashlib, os, socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
           "Sec-WebSocket-Version: 13\r\n\r\n" % (host, key)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    d = s.recv(4096)
    if not d:
        sys.exit("closed during the handshake: %r" % buf)
    buf += d
head, rest = buf.split(b"\r\n\r\n", 1)
head = head.decode()
if not head.startswith("HTTP/1.1 101"):
    sys.exit("no 101: " + head)
want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
if ("sec-websocket-accept: " + want).lower() not in head.lower():
    sys.exit("wrong accept key: " + head)
if "x-frame-options" in head.lower():
    sys.exit("X-Frame-Options in the 101 head")
msg = b"hello through the edge"
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
)
[[ $out == "hello through the edge" ]] || t_err "WebSocket echo: $out"
t_end

t_begin "unknown sandbox, undeclared port, foreign host: 404 with X-Sandboxd-Preview"
edge_get "s-01arz3ndektsv4rrffq69g5fav-3000.preview.localhost:$EDGE_PORT" /
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown ]] ||
	t_err "unknown sandbox: $E_STATUS '$(eh X-Sandboxd-Preview)'"
[[ $(eh Content-Type) == "text/html; charset=utf-8" && $E_BODY == *"<html"* ]] ||
	t_err "unknown sandbox: not an HTML page: $(eh Content-Type)"
edge_get "s-$SB-4000.preview.localhost:$EDGE_PORT" /
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown ]] ||
	t_err "undeclared port: $E_STATUS '$(eh X-Sandboxd-Preview)'"
edge_get "example.com" /
[[ $E_STATUS == 404 && $E_BODY == *"No such preview"* ]] || t_err "foreign host: $E_STATUS $E_BODY"
t_end

t_begin "a malformed request gets 400 and a close; another keep-alive connection goes on"
out=$(pyclient "$HOST" <<'EOF'
import socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
def get(s):
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode())
    buf = b""
    while b"hello from the app" not in buf:
        d = s.recv(65536)
        if not d:
            return "closed: %r" % buf
        buf += d
    return buf.split(b"\r\n", 1)[0].decode()
a = socket.create_connection(("127.0.0.1", port), timeout=10)
print("a1", get(a))
b = socket.create_connection(("127.0.0.1", port), timeout=10)
b.sendall(b"GET / HTTP/1.1 garbage\x01\r\nHost: x\r\n\r\n")
buf = b""
while True:
    d = b.recv(65536)
    if not d:
        break
    buf += d
print("b", buf.split(b"\r\n", 1)[0].decode(), "then closed")
print("a2", get(a))
EOF
)
want='a1 HTTP/1.1 200 OK
b HTTP/1.1 400 Bad Request then closed
a2 HTTP/1.1 200 OK'
[[ $out == "$want" ]] || t_err "got: $out"
t_end

t_begin "a header block over 16 KiB gets 431"
big=$(head -c 17000 /dev/zero | tr '\0' a)
st=$(ecurl "$HOST" / -o /dev/null -w '%{http_code}' -H "X-Big: $big")
[[ $st == 431 ]] || t_err "17 KB header: HTTP $st"
big=$(head -c 12000 /dev/zero | tr '\0' a)
st=$(ecurl "$HOST" / -o /dev/null -w '%{http_code}' -H "X-Big: $big")
[[ $st == 200 ]] || t_err "12 KB header: HTTP $st"
t_end

t_begin "slowloris: one header byte a second is cut off by the 10 s deadline; others are served"
pyclient "$HOST" >"$IT_TMP/slow" 2>&1 <<'EOF' &
import socket, sys, time
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=30)
req = ("GET / HTTP/1.1\r\nHost: %s\r\nX-Slow: %s\r\n\r\n" % (host, "z" * 100)).encode()
t0 = time.time()
for i in range(len(req)):
    try:
        s.send(req[i:i + 1])
        s.settimeout(1)
        if s.recv(1) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
print("cut after %.1f s, %d bytes" % (time.time() - t0, i))
EOF
slow=$!
sleep 2
ok=0
for i in 1 2 3 4 5; do
	[[ $(ecurl "$HOST" /) == "hello from the app" ]] && ok=$((ok + 1))
	sleep 1
done
((ok == 5)) || t_err "only $ok of 5 requests answered during the slow client"
wait "$slow"
read -r _ _ secs _ <"$IT_TMP/slow"
if [[ ! $secs =~ ^[0-9.]+$ ]]; then
	t_err "slow client: $(cat "$IT_TMP/slow")"
else
	awk -v s="$secs" 'BEGIN { exit !(s >= 9 && s <= 12.5) }' ||
		t_err "the slow client was cut after $secs s (want about 10)"
	note "$(cat "$IT_TMP/slow")"
fi
t_end

api DELETE "/v1/apps/$APP_ID"
finish
