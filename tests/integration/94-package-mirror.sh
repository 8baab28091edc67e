#!/usr/bin/env bash
# Package mirrors (README "Package mirrors"): a daemon started with
# SANDBOXD_NPM_REGISTRY and SANDBOXD_PIP_INDEX_URL pointing at a small HTTP
# server in a network namespace of the test's own (a private address,
# which the default egress policy `public` refuses) hands them to every
# sandbox: the container's environment has npm_config_registry,
# NPM_CONFIG_REGISTRY, PIP_INDEX_URL, PIP_TRUSTED_HOST, UV_DEFAULT_INDEX
# and UV_INSECURE_HOST, `npm config get
# registry` and `pip config list` show them, the app's install step sees
# them; and the mirror's address and port, only those, are opened: the
# sandbox fetches from the mirror, while another address of the same
# namespace, and another port of the mirror's, are refused at once.
. "$(dirname "$0")/lib.sh"
need_test_image

NS=sbxit94-$$
HV=sbxm$$
NV=sbxn$$
BLOCKED_STATES=" refused EHOSTUNREACH ENETUNREACH EACCES "
NET=$(pick_net24 10.252) || bail "no free 10.252.X.0/24"
[[ $NET =~ ^10\.252\.[0-9]+$ ]] || bail "no free 10.252.X.0/24: $NET"
MIRROR=$NET.2 OTHER=$NET.3
PM=4873 PX=4874
outside_host "$NS" "$HV" "$NV" "$NET" 2 3 || bail "cannot make the test host"
ip -n "$NS" route add default via "$NET.1" || bail "no default route in $NS"

# The mirror: answers any GET with "mirror <path>"; the other address and
# the mirror's other port: a listener that greets.
ip netns exec "$NS" python3 -c '
import http.server, socket, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("mirror " + self.path + "\n").encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
def greet(addr, port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        c.sendall(b"other\n")
        c.close()
for a, p in ((sys.argv[2], int(sys.argv[3])), (sys.argv[2], int(sys.argv[4])),
             (sys.argv[1], int(sys.argv[4]))):
    threading.Thread(target=greet, args=(a, p), daemon=True).start()
srv = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[3])), H)
print("listening", flush=True)
srv.serve_forever()
' "$MIRROR" "$OTHER" "$PM" "$PX" >"$IT_TMP/mirror.out" 2>&1 &
MIRROR_PID=$!
IT_CLEANUP_HOOKS+=(stop_mirror)
stop_mirror() { kill "$MIRROR_PID" 2>/dev/null; return 0; }
wait_until 10 grep -q listening "$IT_TMP/mirror.out" || bail "the mirror did not start: $(cat "$IT_TMP/mirror.out")"

NPM_URL=http://$MIRROR:$PM/npm/
PIP_URL=http://$MIRROR:$PM/pypi/simple/

# in_sb CMD…: runs CMD in the sandbox as its user; prints its output.
in_sb() { docker exec -u 1000 "$C" "$@" 2>&1; }

t_begin "the daemon opens the mirror's address and port in the egress policy"
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_NPM_REGISTRY="$NPM_URL" \
	SANDBOXD_PIP_INDEX_URL="$PIP_URL" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
wait_status '.egress.mode == "public"' 30 || t_err "egress not public: $(short_body)"
grep -q "SANDBOXD_NPM_REGISTRY: egress allowed to $MIRROR/32 port $PM" "$DAEMON_ERR" "$DAEMON_OUT" ||
	t_err "no log line for the npm mirror's address"
t_end

t_begin "every sandbox gets the mirrors in its environment"
create_app mirrorapp '"runtime_preset":"static"'
create_sandbox "$APP_ID" || bail "no sandbox: $(short_body)"
SB=$SB_ID C=$SB_CONTAINER
WS=$DATA/workspaces/$SB
env_of=$(in_sb env)
for kv in "npm_config_registry=$NPM_URL" "NPM_CONFIG_REGISTRY=$NPM_URL" \
	"PIP_INDEX_URL=$PIP_URL" "PIP_TRUSTED_HOST=$MIRROR" \
	"UV_DEFAULT_INDEX=$PIP_URL" "UV_INSECURE_HOST=$MIRROR"; do
	grep -qxF -- "$kv" <<<"$env_of" || t_err "the container's environment lacks $kv"
done
reg=$(in_sb npm config get registry)
[[ $reg == "$NPM_URL" ]] || t_err "npm config get registry: $reg"
pipconf=$(in_sb pip config list)
grep -qF "index-url='$PIP_URL'" <<<"$pipconf" || t_err "pip config list: $pipconf"
grep -qF "trusted-host='$MIRROR'" <<<"$pipconf" || t_err "pip config list (trusted host): $pipconf"
t_end

t_begin "the install step sees them"
api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000
install:
  command: echo "$npm_config_registry $PIP_INDEX_URL" > ../mirrors
'
expect_status 200
wait_sb "$SB" '.install.state == "done" and .preview.status == "ready"' 60
[[ $(cat "$WS/workspace/mirrors" 2>/dev/null) == "$NPM_URL $PIP_URL" ]] ||
	t_err "the install saw '$(cat "$WS/workspace/mirrors" 2>/dev/null)'"
t_end

t_begin "the sandbox reaches the mirror under public; nothing else of that host"
got=$(in_sb python3 -c '
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1] + "react", timeout=5).read().decode().strip())
' "$NPM_URL")
[[ $got == "mirror /npm/react" ]] || t_err "GET ${NPM_URL}react from the sandbox: $got"
for target in "$OTHER $PM the other address, the mirror's port" \
	"$OTHER $PX the other address" "$MIRROR $PX the mirror's other port"; do
	read -r host port what <<<"$target"
	read -r st ms _b <<<"$(sb_connect "$C" "$host" "$port")"
	note "$what ($host:$port): $st after $ms ms"
	[[ $BLOCKED_STATES == *" $st "* ]] ||
		t_err "$what ($host:$port): expected refused, got $st after $ms ms"
done
# The same host's port is open from outside the policy (it is the policy
# that refuses, not a dead listener).
ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)
print(s.recv(16).decode().strip())' "$OTHER" "$PX" | grep -qx other ||
	t_err "the other listener does not answer in its namespace"
t_end

t_begin "a daemon without the settings refuses the mirror"
stop_daemon
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" ||
	bail "the daemon did not come up: $(tail -n 5 "$DAEMON_ERR")"
wait_status '.egress.mode == "public"' 30 || true
api POST "/v1/sandboxes/$SB/start"
C=$(container_of "$SB")
wait_until 30 container_running "$C" || t_err "the sandbox did not start"
read -r st ms _b <<<"$(sb_connect "$C" "$MIRROR" "$PM")"
note "the mirror without the setting: $st after $ms ms"
[[ $BLOCKED_STATES == *" $st "* ]] || t_err "the mirror without the setting: expected refused, got $st"
t_end

t_begin "a bad mirror URL is refused at start, naming the setting"
stop_daemon
if start_daemon SANDBOXD_NPM_REGISTRY="ftp://$MIRROR/"; then
	t_err "the daemon started with SANDBOXD_NPM_REGISTRY=ftp://…"
else
	grep -q "SANDBOXD_NPM_REGISTRY" "$DAEMON_ERR" || t_err "the error does not name the setting: $(tail -n 3 "$DAEMON_ERR")"
fi
t_end

finish
