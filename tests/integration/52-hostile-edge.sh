#!/usr/bin/env bash
# The preview edge against hostile anonymous clients (python3 sockets from
# the host to 127.0.0.1; a second client address is 127.0.0.2, bound as
# the client socket's source).  One address holding its cap of
# connections (EDGE_MAX_CLIENT_CONNECTIONS, 128) gets 429 for more, and
# another address still gets its preview; a connection that sends nothing
# is closed after EDGE_FIRST_BYTE_TIMEOUT_MS (5 s), one that stops in its
# head after EDGE_HEADER_TIMEOUT_MS (10 s); 200 clients that pipeline
# many requests and never read grow the daemon's VmRSS by little (the
# edge reads no request beyond the one in flight); smuggling-shaped
# heads (white space before the colon, Transfer-Encoding other than
# chunked, both framings, two lengths) get 400 and the request hidden in
# their body never reaches the app (edge-app.js /seen); a client's
# X-Forwarded-For/-Proto/-Host, Forwarded and X-Real-IP are replaced by
# the edge's view; answers may be framed by the console only
# (Content-Security-Policy: frame-ancestors, no X-Frame-Options).
. "$(dirname "$0")/lib.sh"
need_docker
command -v python3 >/dev/null || bail "python3 is needed for the raw-socket clients"

start_edge_daemon
PYCLIENT_TIMEOUT=120 # pyclient (lib.sh): the slow clients take their time
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

t_begin "setup: the Node app serves through the edge"
serve_edge_app hostile-edge
up() { [[ $(ecurl "$HOST" /) == "hello from the app" ]]; }
t_end

t_begin "one address at its connection cap gets 429; another address gets its preview"
out=$(pyclient "$HOST" <<'EOF'
import socket, sys, time
port, host = int(sys.argv[1]), sys.argv[2]
CAP, EXTRA = 128, 16
def conn(src):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s
def get(src):
    s = conn(src)
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except OSError as e:
        return "error %s" % e
    return buf.split(b"\r\n", 1)[0].decode(errors="replace")
held = []
for i in range(CAP + EXTRA):
    s = conn("127.0.0.1")
    s.send(b"GET / HTTP/1.1\r\n")  # a head begun: held for the header deadline
    held.append(s)
t0 = time.time()
refused = 0
for s in held:
    s.settimeout(0.05)
    try:
        d = s.recv(4096)
        if d.startswith(b"HTTP/1.1 429 ") or d == b"":
            refused += 1
    except socket.timeout:
        pass
    except OSError:
        refused += 1
other = get("127.0.0.2")
same = get("127.0.0.1")
print("refused=%d other=%s same=%s %.1fs" % (refused, other, same, time.time() - t0))
EOF
)
note "$out"
[[ $out == "refused=16 other=HTTP/1.1 200 OK same=HTTP/1.1 429 Too Many Requests "* ]] ||
	t_err "want 16 refused, 200 for 127.0.0.2, 429 for 127.0.0.1: $out"
up || t_err "127.0.0.1 is not served again once its connections closed"
t_end

t_begin "a silent connection is closed after 5 s, a stalled head after 10 s"
out=$(pyclient <<'EOF'
import socket, sys, threading, time
port = int(sys.argv[1])
res = {}
def wait_close(name, first):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    t0 = time.time()
    if first:
        s.send(first)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    res[name] = time.time() - t0
ts = [threading.Thread(target=wait_close, args=a)
      for a in (("silent", b""), ("stalled", b"GET / HTTP/1.1\r\nHost: x"))]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("%.1f %.1f" % (res["silent"], res["stalled"]))
EOF
)
read -r silent stalled <<<"$out"
note "silent connection closed after ${silent:-?} s, stalled head after ${stalled:-?} s"
awk -v s="$silent" 'BEGIN { exit !(s >= 4.5 && s <= 7) }' ||
	t_err "silent connection: closed after '$silent' s (want about 5)"
awk -v s="$stalled" 'BEGIN { exit !(s >= 9.5 && s <= 12.5) }' ||
	t_err "stalled head: closed after '$stalled' s (want about 10)"
t_end

t_begin "200 non-reading pipelining clients: daemon VmRSS grows by under 20 MiB"
up
before=$(rss_kb)
pyclient "$HOST" "$IT_TMP/pipe.ready" >"$IT_TMP/pipe.out" 2>&1 <<'EOF' &
import os, socket, sys, time
port, host, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3]
N, REQS = 200, 2000
req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
socks, sent = [], 0
for i in range(N):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # reads nothing
    s.bind(("127.0.0.%d" % (10 + i % 4), 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    socks.append(s)
data = req * REQS
for s in socks:
    try:
        sent += s.send(data)
    except BlockingIOError:
        pass
open(ready, "w").write("%d clients, %d KiB of requests sent\n" % (N, sent // 1024))
time.sleep(30)  # held open, never read, until killed
EOF
pipes=$!
wait_until 30 test -s "$IT_TMP/pipe.ready" || t_err "the pipelining clients did not start: $(cat "$IT_TMP/pipe.out")"
peak=$before
for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do
	sleep 0.5
	r=$(rss_kb)
	((r > peak)) && peak=$r
done
open=$(ls "/proc/$DAEMON_PID/fd" | wc -l)
other=$(pyclient "$HOST" <<'EOF'
import socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.bind(("127.0.0.3", 0))
s.settimeout(10)
s.connect(("127.0.0.1", port))
s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
buf = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(buf.split(b"\r\n", 1)[0].decode())
EOF
)
kill "$pipes" 2>/dev/null
wait "$pipes" 2>/dev/null
growth=$((peak - before))
note "$(cat "$IT_TMP/pipe.ready" 2>/dev/null)" \
	"VmRSS before ${before} kB, peak ${peak} kB with them: +${growth} kB ($((growth / 200)) kB per client); daemon fds ${open}"
((growth < 20 * 1024)) || t_err "VmRSS grew by $growth kB with 200 pipelining clients"
[[ $other == "HTTP/1.1 200 OK" ]] || t_err "another client meanwhile: '$other'"
t_end

t_begin "smuggling-shaped heads get 400 and never reach the app"
out=$(pyclient "$HOST" <<'EOF'
import socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
def hidden(n):
    return "GET /smuggled-%d HTTP/1.1\r\nHost: %s\r\n\r\n" % (n, host)
heads = [
    "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length : %d\r\n\r\n%s",
    "POST / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n%s",
    "POST / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n%s",
    "POST / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n%s",
    "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s",
    "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n%s",
]
codes = []
for n, h in enumerate(heads):
    body = hidden(n)
    text = h % ((host, len(body), body) if "%d" in h else (host, body))
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(text.encode())
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except OSError:
        pass
    codes.append(buf.split(b" ", 2)[1].decode() if buf.startswith(b"HTTP/") else "none")
print(" ".join(codes))
EOF
)
[[ $out == "400 400 400 400 400 400" ]] || t_err "statuses: $out"
seen=$(ecurl "$HOST" /seen)
jq -e . >/dev/null 2>&1 <<<"$seen" || t_err "GET /seen: $seen"
[[ $seen != *smuggled* ]] || t_err "a hidden request reached the app: $(jq -c '[.[] | select(test("smuggled"))]' <<<"$seen")"
[[ $seen != *'"POST /"'* ]] || t_err "a refused POST reached the app"
# the same shapes, well formed, do reach it
got=$(ecurl "$HOST" /echo -H 'Transfer-Encoding: chunked' --data-binary 'abc')
[[ $got == abc ]] || t_err "a chunked POST: '$got'"
t_end

t_begin "the client's X-Forwarded-*, Forwarded and X-Real-IP are replaced"
got=$(ecurl "$HOST" /headers -H 'X-Forwarded-For: 6.6.6.6' -H 'X-Forwarded-Proto: https' \
	-H 'X-Forwarded-Host: evil.example' -H 'Forwarded: for=6.6.6.6' -H 'X-Real-IP: 6.6.6.6')
[[ $(jq -r '."x-forwarded-for"' <<<"$got") == 127.0.0.1 ]] || t_err "x-forwarded-for: $got"
[[ $(jq -r '."x-forwarded-proto"' <<<"$got") == http ]] || t_err "x-forwarded-proto: $got"
[[ $(jq -r '."x-forwarded-host"' <<<"$got") == "${HOST,,}" ]] || t_err "x-forwarded-host: $got"
[[ $(jq -r '.forwarded // "none"' <<<"$got") == none ]] || t_err "forwarded passed: $got"
[[ $(jq -r '."x-real-ip" // "none"' <<<"$got") == none ]] || t_err "x-real-ip passed: $got"
[[ $got != *6.6.6.6* ]] || t_err "the client's address claim reached the app: $got"
got=$(pyclient "$HOST" <<'EOF'
import json, socket, sys
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.bind(("127.0.0.2", 0))
s.settimeout(10)
s.connect(("127.0.0.1", port))
s.sendall(("GET /headers HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: 127.0.0.1\r\n"
           "Connection: close\r\n\r\n" % host).encode())
buf = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(json.loads(buf.split(b"\r\n\r\n", 1)[1])["x-forwarded-for"])
EOF
)
[[ $got == 127.0.0.2 ]] || t_err "from 127.0.0.2 claiming 127.0.0.1: x-forwarded-for '$got'"
t_end

t_begin "answers may be framed by the console only: frame-ancestors, no X-Frame-Options"
hdr=$(ecurl "$HOST" / -D - -o /dev/null | tr -d '\r')
csp=$(grep -i '^content-security-policy:' <<<"$hdr" | sed -E 's/^[^:]+:[[:space:]]*//')
[[ $csp == "frame-ancestors http://console.localhost:$EDGE_PORT" ]] ||
	t_err "Content-Security-Policy: '$csp'"
! grep -qi '^x-frame-options:' <<<"$hdr" || t_err "X-Frame-Options came through"
t_end

api DELETE "/v1/apps/$APP_ID"
finish
