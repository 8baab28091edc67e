#!/usr/bin/env bash
# The edge routes from its in-memory table (src/sandbox/routes.c), never
# from the store: 20,000 requests for unknown sandboxes and for a port a
# running sandbox does not declare all get their 404 quickly, while an
# API storm (apps created and deleted, apps listed: every call behind
# the store's one mutex) runs beside them and another process holds
# SQLite's write lock half a second at a time (as a slow disk would), so
# the storm's writes wait in the store with its mutex held; a running
# preview, asked on a new connection each time so each request is routed
# afresh, keeps answering with p99 under 100 ms.  (Reading the store on
# the edge's loop, this p99 is the lock's half second.)  A deleted sandbox's host is
# unknown at once, and a stopped one's wakes (the table follows
# lifecycle both ways).
. "$(dirname "$0")/lib.sh"
need_docker
command -v python3 >/dev/null || bail "python3 is needed for the clients"

start_edge_daemon

t_begin "setup: the Node app serves through the edge"
serve_edge_app edge-routes
up() { [[ $(ecurl "$HOST" /) == "hello from the app" ]]; }
t_end

t_begin "20,000 unknown hosts and an API storm: a running preview keeps p99 under 100 ms"
out=$(timeout 300 python3 - "$EDGE_PORT" "$HOST" "$SB" "$API_URL" "$TOKEN" \
	"$DATA/state/sandboxd.db" <<'EOF'
import http.client, json, random, socket, sqlite3, sys, threading, time
port, host, sb, api, token, db = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
FLOOD, FLOODERS, STORMERS = 20000, 16, 4
CROCK = "0123456789abcdefghjkmnpqrstvwxyz"
stop = threading.Event()
lock = threading.Lock()
res = {"flood": 0, "flood_404": 0, "flood_other": [], "storm": 0, "storm_bad": [], "holds": 0}

def flood_host(i):
    if i % 4 == 0:  # the running sandbox, a port it does not declare
        return "s-%s-9999.preview.localhost:%d" % (sb.lower(), port)
    rnd = "".join(random.choice(CROCK) for _ in range(25))
    return "s-0%s-3000.preview.localhost:%d" % (rnd, port)

def answer(f):  # status and whether the edge keeps the connection
    status = f.readline().split(b" ")[1]
    length, keep = 0, True
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        k, _, v = line.partition(b":")
        k = k.strip().lower()
        if k == b"content-length":
            length = int(v)
        elif k == b"connection" and b"close" in v.lower():
            keep = False
    f.read(length)
    return status, keep

def flooder(n):
    s, f = None, None
    for i in range(n):
        try:
            if s is None:
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                f = s.makefile("rb")
            s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % flood_host(i)).encode())
            status, keep = answer(f)
        except (OSError, IndexError, ValueError) as e:
            status, keep = ("error %s" % e).encode(), False
        with lock:
            res["flood"] += 1
            if status == b"404":
                res["flood_404"] += 1
            elif len(res["flood_other"]) < 5:
                res["flood_other"].append(status.decode(errors="replace"))
        if not keep and s is not None:
            s.close()
            s = None

def stormer(k):
    a = api.split("//", 1)[1]
    c = http.client.HTTPConnection(a, timeout=30)
    hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    i = 0
    while not stop.is_set():
        i += 1
        try:
            c.request("POST", "/v1/apps", json.dumps({"name": "storm-%d-%d" % (k, i)}), hdr)
            r = c.getresponse(); body = r.read()
            ok = r.status == 201
            if ok:
                c.request("DELETE", "/v1/apps/" + json.loads(body)["id"], headers=hdr)
                r = c.getresponse(); r.read()
                ok = r.status in (200, 204)
            c.request("GET", "/v1/apps", headers=hdr)
            r = c.getresponse(); r.read()
            with lock:
                res["storm"] += 3
                if not ok and len(res["storm_bad"]) < 5:
                    res["storm_bad"].append(r.status)
        except OSError as e:
            with lock:
                if len(res["storm_bad"]) < 5:
                    res["storm_bad"].append(str(e))
            c = http.client.HTTPConnection(a, timeout=30)

def hog():  # SQLite's write lock, held from outside half a second at a time
    c = sqlite3.connect(db, timeout=10, isolation_level=None)
    while not stop.is_set():
        c.execute("BEGIN IMMEDIATE")
        time.sleep(0.5)
        c.execute("COMMIT")
        res["holds"] += 1
        time.sleep(0.1)
    c.close()

def probe():  # a new connection each time: routed afresh, never reused
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    return time.monotonic() - t0, buf.split(b"\r\n", 1)[0]

storm = [threading.Thread(target=stormer, args=(k,)) for k in range(STORMERS)]
storm.append(threading.Thread(target=hog))
flood = [threading.Thread(target=flooder, args=(FLOOD // FLOODERS,)) for _ in range(FLOODERS)]
for t in storm: t.start()
time.sleep(0.5)
t0 = time.monotonic()
for t in flood: t.start()
lat, bad = [], []
while (any(t.is_alive() for t in flood) or time.monotonic() - t0 < 5) and \
        time.monotonic() - t0 < 240:
    try:
        dt, line = probe()
        lat.append(dt)
        if b" 200 " not in line and len(bad) < 5:
            bad.append(line.decode(errors="replace"))
    except OSError as e:
        bad.append("error %s" % e)
    time.sleep(0.01)
for t in flood: t.join()
took = time.monotonic() - t0
stop.set()
for t in storm: t.join()
lat.sort()
p99 = lat[int(len(lat) * 0.99) - 1] if lat else 99
print("flood=%d flood_404=%d flood_other=%s took=%.1f storm=%d storm_bad=%s holds=%d probes=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f probe_bad=%s" % (
    res["flood"], res["flood_404"], res["flood_other"], took, res["storm"], res["storm_bad"], res["holds"],
    len(lat), lat[len(lat) // 2] * 1000 if lat else -1, p99 * 1000, lat[-1] * 1000 if lat else -1, bad))
EOF
)
note "$out"
[[ $out =~ flood=([0-9]+)\ flood_404=([0-9]+) ]] || t_err "no result: $out"
flood=${BASH_REMATCH[1]:-0} f404=${BASH_REMATCH[2]:-0}
((flood == 20000 && f404 == 20000)) ||
	t_err "every flood request should be a 404: $flood answered, $f404 were 404"
[[ $out =~ storm=([0-9]+) ]] && ((BASH_REMATCH[1] >= 30)) ||
	t_err "the API storm did not run: $out"
[[ $out =~ holds=([0-9]+) ]] && ((BASH_REMATCH[1] >= 5)) ||
	t_err "the store's write lock was not held from outside: $out"
[[ $out =~ probes=([0-9]+) ]] && ((BASH_REMATCH[1] >= 20)) ||
	t_err "too few probes of the running preview: $out"
[[ $out =~ p99_ms=([0-9]+) ]] && ((BASH_REMATCH[1] < 100)) ||
	t_err "the running preview's p99 should be under 100 ms: $out"
[[ $out == *"probe_bad=[]"* ]] || t_err "a probe of the running preview failed: $out"
[[ $out == *"storm_bad=[]"* ]] || t_err "an API call of the storm failed: $out"
t_end

t_begin "the flood cost the daemon nothing lasting: the preview and the API still answer"
up || t_err "GET / through the edge after the flood: $(ecurl "$HOST" / -i | head -c 300)"
api GET "/v1/sandboxes/$SB"
expect_status 200 && expect_json .status running
t_end

t_begin "a stopped sandbox's host wakes it; a deleted one's is unknown at once"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
hdr=$(ecurl "$HOST" / -o /dev/null -D - | tr -d '\r')
[[ $hdr == *"X-Sandboxd-Preview: waking"* ]] ||
	t_err "a stopped sandbox's preview should say waking: $(head -c 300 <<<"$hdr")"
wait_until 60 up || t_err "the woken app does not answer: $(ecurl "$HOST" / -i | head -c 300)"
api DELETE "/v1/sandboxes/$SB"
[[ $STATUS == 200 || $STATUS == 204 ]] || t_err "DELETE: $STATUS $(short_body)"
code=$(ecurl "$HOST" / -o /dev/null -w '%{http_code}')
[[ $code == 404 ]] || t_err "a deleted sandbox's preview should be 404, got $code"
t_end

finish
