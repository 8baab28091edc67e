#!/usr/bin/env bash
# The API keeps capacity for its own clients while strangers hold what
# they can of it through the console host, and the apps' X-Forwarded-Host
# is the host the edge routed by.
#
# Two attacker addresses, $NET.2 and $NET.3, live in a network namespace
# the test makes (a veth to the host, whose end is $NET.1, where the edge
# listens).  Without credentials, each opens the edge's cap of
# connections per address (EDGE_MAX_CLIENT_CONNECTIONS, 128) to the
# console host and, on each, asks the API something and holds on: a
# login whose body never comes, the same with a forged session cookie
# or with "Expect: 100-continue" (the API's 100 is no answer), or a
# health check whose connection then idles.  Before the fix that
# held all 256 of the API's connections (API_MAX_CONNECTIONS): the
# command line and the console timed out.  Now the edge holds at most
# EDGE_API_CLIENT_CONNECTIONS (16) API connections per address, 4 of them
# for requests without credentials, answers the rest 429 rate_limited,
# and closes a credential-less request that is not done within
# EDGE_PREAUTH_TIMEOUT_MS (10 s); so while attacked, the command line on
# loopback and a client with a token through the edge (from the host's
# address) answer within a second or two.
#
# Then an app that echoes its headers (edge-app.js /headers) is asked
# with a Host in upper case, with and without a port: its
# X-Forwarded-Host is the host in lower case (before the fix: the
# client's bytes); a Host whose port is not a port 1-65535 (odd bytes
# after the colon, 99999, none, 0) gets the no-preview page rather than
# reaching the app.
. "$(dirname "$0")/lib.sh"
need_docker
[[ $(id -u) == 0 ]] || bail "needs root (a network namespace)"
for tool in ip ss python3 jq; do
	command -v "$tool" >/dev/null || bail "$tool is not installed"
done

PID=$$
NS=sbxit-$PID-cap
HV=sbxc$PID # the host end of the veth; the namespace's is sbxq<pid>
NV=sbxq$PID

NET=$(pick_net24 10.251)
[[ $NET =~ ^10\.251\.[0-9]+$ ]] || bail "no free 10.251.X.0/24: $NET"
outside_host "$NS" "$HV" "$NV" "$NET" 2 3 || bail "cannot make the attackers' network namespace"

EDGE_PORT=$(free_port)
API_PORT=$(free_port)
while [[ $API_PORT == "$EDGE_PORT" ]]; do API_PORT=$(free_port); done
start_daemon "HTTP_PORT=$EDGE_PORT" "SANDBOXD_EDGE_ADDR=$NET.1" \
	"SANDBOXD_API_ADDR=127.0.0.1:$API_PORT" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
EDGE=http://$NET.1:$EDGE_PORT
CONSOLE=console.localhost:$EDGE_PORT
wait_until 10 ip netns exec "$NS" bash -c "exec 3<>/dev/tcp/$NET.1/$EDGE_PORT" ||
	bail "the edge cannot be reached from the namespace"

# Connections the daemon's edge holds to the API (the API's side of
# each is one of its API_MAX_CONNECTIONS): the client ends the daemon
# owns, not a curl or CLI of this test's that happens to be connected.
api_conns() { ss -Htnp state established "( dport = :$API_PORT )" | grep -c "pid=$DAEMON_PID,"; }

# The attackers: 128 connections from each address, held until the
# file $IT_TMP/attack.stop exists; $IT_TMP/attack.out gets "ready
# {counts}" once every request went out and its first answer (if any)
# came, then "closed SECONDS {counts}" each second: the connections of
# each kind that were closed, SECONDS after "ready".
ATTACK='
import json, os, socket, sys, time
edge, port, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
srcs = sys.argv[4:]
host = "console.localhost:%d" % port
login = ("POST /v1/auth/login HTTP/1.1\r\nHost: %s\r\nContent-Type: "
         "application/json\r\nContent-Length: 100\r\n%s\r\n{")
reqs = {
    "login": (login % (host, "")).encode(),
    "forged": (login % (host, "Cookie: sbx_session=forged\r\n")).encode(),
    "continue": (login % (host, "Expect: 100-continue\r\n")).encode(),
    "idle": ("GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode(),
}
kinds = ["login", "forged", "idle", "continue"]
socks = []
for src in srcs:
    for i in range(128):
        kind = kinds[i % len(kinds)]
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(5)
        s.connect((edge, port))
        s.sendall(reqs[kind])
        socks.append({"s": s, "kind": kind, "src": src, "got": b"", "eof": False})
def poll(wait):
    end = time.time() + wait
    for c in socks:
        if c["eof"]:
            continue
        c["s"].settimeout(max(0.001, end - time.time()))
        try:
            while True:
                d = c["s"].recv(65536)
                if not d:
                    c["eof"] = True
                    break
                c["got"] += d
                c["s"].settimeout(0.001)
        except (socket.timeout, BlockingIOError):
            pass
        except OSError:
            c["eof"] = True
def counts(key):
    out = {}
    for c in socks:
        k = "%s %s" % (c["src"], c["kind"])
        out.setdefault(k, 0)
        if key(c):
            out[k] += 1
    return out
poll(1.0)
refused = counts(lambda c: c["got"].startswith(b"HTTP/1.1 429 ") and b"rate_limited" in c["got"])
print("ready", json.dumps(refused, sort_keys=True), flush=True)
t0 = time.time()
while not os.path.exists(stop):
    poll(1.0)
    print("closed %.1f %s" % (time.time() - t0, json.dumps(counts(lambda c: c["eof"]), sort_keys=True)), flush=True)
'

attack_start() {
	rm -f "$IT_TMP/attack.stop"
	ip netns exec "$NS" timeout 120 python3 -c "$ATTACK" "$NET.1" "$EDGE_PORT" \
		"$IT_TMP/attack.stop" "$NET.2" "$NET.3" >"$IT_TMP/attack.out" 2>&1 &
	ATTACK_PID=$!
	wait_until 30 grep -q '^ready' "$IT_TMP/attack.out"
}
attack_stop() {
	: >"$IT_TMP/attack.stop"
	wait "$ATTACK_PID" 2>/dev/null
}

# Seconds (to the millisecond) a command took; its output in $IT_TMP/timed.
timed() {
	local t0 t1 rc
	t0=$(date +%s%N)
	"$@" >"$IT_TMP/timed" 2>&1
	rc=$?
	t1=$(date +%s%N)
	TOOK=$(((t1 - t0) / 1000000))
	return $rc
}

t_begin "setup: the attackers hold what they can of the API through the console host"
attack_start || bail "the attack did not start: $(tail -n 5 "$IT_TMP/attack.out")"
held=$(api_conns)
note "edge to API connections held: $held" "$(grep '^ready' "$IT_TMP/attack.out")"
((held <= 2 * 16)) || t_err "the edge holds $held connections to the API for two addresses (at most 32)"
t_end

t_begin "while attacked, the command line answers at once"
if timed curl -s --max-time 10 "$API_URL/healthz"; then
	note "curl $API_URL/healthz: ${TOOK} ms"
	[[ $(cat "$IT_TMP/timed") == ok ]] || t_err "healthz: $(cat "$IT_TMP/timed")"
else
	t_err "curl to the loopback API failed after ${TOOK} ms: $(cat "$IT_TMP/timed")"
fi
((TOOK < 2000)) || t_err "the loopback API took ${TOOK} ms"
if timed env SANDBOXD_API="$API_URL" SANDBOXD_TOKEN="$TOKEN" timeout 10 "$SANDBOXD_BIN" apps; then
	note "sandboxd apps: ${TOOK} ms"
else
	t_err "sandboxd apps failed after ${TOOK} ms: $(head -c 300 "$IT_TMP/timed")"
fi
((TOOK < 2000)) || t_err "sandboxd apps took ${TOOK} ms"
t_end

t_begin "while attacked, a client with a token answers through the console host"
if timed curl -s --max-time 10 -o "$IT_TMP/apps.json" -w '%{http_code}' \
	-H "Host: $CONSOLE" -H "Authorization: Bearer $TOKEN" "$EDGE/v1/apps"; then
	note "GET /v1/apps through the edge: $(cat "$IT_TMP/timed") in ${TOOK} ms"
	[[ $(cat "$IT_TMP/timed") == 200 ]] || t_err "status $(cat "$IT_TMP/timed")"
	jq -e '.apps' "$IT_TMP/apps.json" >/dev/null ||
		t_err "GET /v1/apps: $(cat "$IT_TMP/timed") $(head -c 300 "$IT_TMP/apps.json")"
else
	t_err "GET /v1/apps through the edge failed after ${TOOK} ms"
fi
((TOOK < 2000)) || t_err "through the edge it took ${TOOK} ms"
t_end

t_begin "the attackers got 429 rate_limited beyond their share, each address"
ready=$(sed -n 's/^ready //p' "$IT_TMP/attack.out")
for a in "$NET.2" "$NET.3"; do
	n=$(jq --arg a "$a" '[to_entries[] | select(.key | startswith($a + " ")) | .value] | add' <<<"$ready")
	# 128 connections each: at most 16 hold a connection to the API
	# (a few health checks more are answered, then their idle
	# connection closed to make room)
	((n >= 100)) || t_err "$a: $n of 128 refused: $ready"
done
t_end

t_begin "logins without credentials that never finish (100-continue too) are closed within EDGE_PREAUTH_TIMEOUT_MS"
# When (seconds after "ready") every such login was closed; nothing
# while one is open.
logins_closed_at() {
	local t counts
	while read -r _ t counts; do
		jq -e --arg a "$NET.2" --arg b "$NET.3" \
			'[.[$a + " login"], .[$a + " continue"], .[$b + " login"], .[$b + " continue"]] == [32, 32, 32, 32]' \
			<<<"$counts" >/dev/null && { echo "$t"; return 0; }
	done < <(grep '^closed' "$IT_TMP/attack.out")
	return 1
}
wait_until 15 logins_closed_at >/dev/null
at=$(logins_closed_at) || at=never
note "all closed $at s after the attack was ready"
# sent before "ready", closed at 10 s (and a tick of the edge's 250 ms)
if [[ $at == never ]] || ! awk -v t="$at" 'BEGIN { exit !(t <= 12) }'; then
	t_err "closed at $at s (want 12 at most): $(grep '^closed' "$IT_TMP/attack.out" | tail -n 1)"
fi
t_end

attack_stop
t_begin "once the attackers are gone, their connections to the API are given back"
api_given_back() { (($(api_conns) <= 2)); }
wait_until 15 api_given_back || t_err "still held: $(api_conns)"
t_end

# --- X-Forwarded-Host -------------------------------------------------------

t_begin "X-Forwarded-Host: the routed host in lower case; a Host with a bad port is no preview"
serve_edge_app fwd-host
for odd in "S-${SB^^}-3000.PREVIEW.LocalHost:$EDGE_PORT" "s-${SB^^}-3000.Preview.LOCALHOST"; do
	want=s-${SB,,}-3000.preview.localhost
	[[ $odd == *:* ]] && want+=:$EDGE_PORT
	got=$(ecurl "$odd" /headers)
	note "Host: $odd -> X-Forwarded-Host: $(jq -r '."x-forwarded-host"' <<<"$got" 2>/dev/null)"
	[[ $(jq -r '."x-forwarded-host"' <<<"$got" 2>/dev/null) == "$want" ]] ||
		t_err "Host: $odd: x-forwarded-host: $got"
done
edge_get "$HOST<x>" /headers
[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown && $E_BODY != *'"x-forwarded-host"'* ]] ||
	t_err "a Host with odd bytes after its port: $E_STATUS $(head -c 200 <<<"$E_BODY")"
for bad in 99999 "" 0; do
	edge_get "s-$SB-3000.preview.localhost:$bad" /headers
	[[ $E_STATUS == 404 && $(eh X-Sandboxd-Preview) == unknown ]] ||
		t_err "a Host with port '$bad': $E_STATUS $(head -c 200 <<<"$E_BODY")"
done
t_end

finish
