#!/usr/bin/env bash
# The sandbox network and its egress policy, with the real daemon, the real
# dockerd and the host's real nftables.
#
# The daemon makes its own Docker network (SANDBOXD_NETWORK, one per data
# dir here): a bridge sbx-<8 hex> with inter-container traffic off, a
# subnet of its choosing, the gateway on its first address, the credential
# proxy listening there, and an nft table inet sandboxd_<same 8 hex>.  From
# inside a sandbox, as uid 1000 (python3 sockets; the image has no curl):
#   public (default)  the proxy's port on the gateway answers; any other
#                     port of the host, another sandbox, a private host
#                     and the metadata address are refused within a second
#                     (reset or ICMP prohibited, never a timeout), and the
#                     sandbox's egress_blocked counter counts it;
#   open              the same hosts are reachable (no rules);
#   allow-list        SANDBOXD_EGRESS_ALLOW opens exactly the listed
#                     address:port (also one of the host's own);
#   none              the proxy alone (and the allow-list).
# The rules survive a restart of the daemon and of dockerd; two daemons on
# one engine keep to their own networks, proxies and tables; `sandboxd
# network remove` removes a table and an unused network of ours; a
# sandbox on an old network is moved to the current one at its next
# start; a task submitted while the proxy cannot listen fails at once
# with proxy_unavailable.
#
# Test hosts are made here and only here, in network namespaces behind
# veth pairs; nothing in this file sends a packet anywhere else:
#   sbxit-<pid>-a  10.250.X.2 (X picked free of every route and Docker
#                  network) behind sbxa<pid> (10.250.X.1/24);
#   sbxit-<pid>-m  169.254.169.254 behind sbxm<pid> (169.254.169.1/32).
#                  Only packets that come in on the sandbox network's
#                  bridge are routed there (a policy rule, "iif <bridge>"):
#                  the host's own route to that address is not touched,
#                  and every connect to it from a sandbox is made only
#                  after `ip route get` confirmed it leads into the netns.
# Both run a tiny TCP listener that greets with "<host>:<port>", so an
# "open" is known to have reached the test host.
#
# This test restarts dockerd once (as 99-docker-down.sh does) and makes
# sure it runs again at the end; the restart stops every container on the
# engine, so do not run it beside another suite sharing that engine.
# shellcheck disable=SC2317 # functions run as cleanup hooks and by wait_until
. "$(dirname "$0")/lib.sh"
need_docker
need_test_image
[[ $(id -u) == 0 ]] || bail "needs root (network namespaces, nftables)"
for tool in ip nft python3 jq; do
	command -v "$tool" >/dev/null || bail "$tool is not installed"
done

PID=$$
NS_A=sbxit-$PID-a
NS_M=sbxit-$PID-m
HV_A=sbxa$PID # host ends of the veths; the netns ends are sbxp[am]<pid>
HV_M=sbxm$PID
NV_A=sbxpa$PID
NV_M=sbxpm$PID
RT_TABLE=$((30000 + PID % 20000)) # the policy route to the metadata netns
META=169.254.169.254
META_PEER=169.254.169.1
PA=7001 # two ports of host a (allow-list: one opened, one not)
PB=7002
PM=80 # the metadata host's port

NET_A=sbxit-$PID-0 # daemon A's network (data dir 0, lib.sh's default name)
DATA_A=$DATA
PROXY_A=$(free_port)
HPORT=$(free_port) # a host-only service on the gateway
while [[ $HPORT == "$PROXY_A" ]]; do HPORT=$(free_port); done

BLOCKED_STATES=" refused EHOSTUNREACH ENETUNREACH EACCES "

# --- helpers ----------------------------------------------------------------

# pick_net24: lib.sh's.

# The TCP listener of the test hosts: NAME ADDR PORT…; greets each
# connection with "NAME:PORT" and closes it.
LISTENER='
import socket, sys, threading
name, addr = sys.argv[1], sys.argv[2]
def serve(s, port):
    while True:
        c, _ = s.accept()
        try:
            c.sendall(("%s:%d\n" % (name, port)).encode())
        except OSError:
            pass
        c.close()
socks = []
for p in sys.argv[3:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(p)))
    s.listen(128)
    socks.append((s, int(p)))
for s, p in socks:
    threading.Thread(target=serve, args=(s, p), daemon=True).start()
print("listening", flush=True)
threading.Event().wait()
'

# A connect from the host's side of things (in netns NS when given):
# prints the state and greeting like sb_connect.
local_connect() { # [NS] HOST PORT
	local -a pre=()
	if (($# == 3)); then
		pre=(ip netns exec "$1")
		shift
	fi
	"${pre[@]}" python3 -c '
import socket, sys
s = socket.socket()
s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    s.settimeout(0.3)
    try:
        w = s.recv(128).split()
    except OSError:
        w = []
    print("open", w[0].decode() if w else "-")
except OSError as e:
    print("closed", type(e).__name__)
' "$@" 2>&1
}

HOST_PIDS=()
setup_test_hosts() {
	local x
	x=$(pick_net24 10.250) || return 1
	[[ $x =~ ^10\.250\.[0-9]+$ ]] || { echo "no free 10.250.X.0/24: $x"; return 1; }
	A_IP=$x.2
	ip netns add "$NS_A" || return 1
	ip link add "$HV_A" type veth peer name "$NV_A" netns "$NS_A" || return 1
	sysctl -qw "net.ipv6.conf.$HV_A.disable_ipv6=1"
	ip netns exec "$NS_A" sysctl -qw "net.ipv6.conf.$NV_A.disable_ipv6=1"
	ip addr add "$x.1/24" dev "$HV_A" &&
		ip link set "$HV_A" up &&
		ip -n "$NS_A" link set lo up &&
		ip -n "$NS_A" addr add "$A_IP/24" dev "$NV_A" &&
		ip -n "$NS_A" link set "$NV_A" up &&
		ip -n "$NS_A" route add default via "$x.1" || return 1

	ip netns add "$NS_M" || return 1
	ip link add "$HV_M" type veth peer name "$NV_M" netns "$NS_M" || return 1
	sysctl -qw "net.ipv6.conf.$HV_M.disable_ipv6=1"
	ip netns exec "$NS_M" sysctl -qw "net.ipv6.conf.$NV_M.disable_ipv6=1"
	# A /32 on the host end: no prefix route, so the host's own routing
	# (and its real metadata service, if any) stays as it was.
	ip addr add "$META_PEER/32" dev "$HV_M" &&
		ip link set "$HV_M" up &&
		ip -n "$NS_M" link set lo up &&
		ip -n "$NS_M" addr add "$META/32" dev "$NV_M" &&
		ip -n "$NS_M" link set "$NV_M" up &&
		ip -n "$NS_M" route add "$META_PEER" dev "$NV_M" &&
		ip -n "$NS_M" route add default via "$META_PEER" dev "$NV_M" &&
		ip route add "$META/32" dev "$HV_M" table "$RT_TABLE" || return 1

	ip netns exec "$NS_A" python3 -c "$LISTENER" a "$A_IP" "$PA" "$PB" >"$IT_TMP/host-a.out" 2>&1 &
	HOST_PIDS+=($!)
	ip netns exec "$NS_M" python3 -c "$LISTENER" m "$META" "$PM" >"$IT_TMP/host-m.out" 2>&1 &
	HOST_PIDS+=($!)
	wait_until 10 grep -q listening "$IT_TMP/host-a.out" || { cat "$IT_TMP/host-a.out"; return 1; }
	wait_until 10 grep -q listening "$IT_TMP/host-m.out" || { cat "$IT_TMP/host-m.out"; return 1; }
}

META_RULES=() # bridges whose packets to $META go to the metadata netns
route_meta_from() { # BRIDGE
	ip rule add iif "$1" to "$META/32" lookup "$RT_TABLE" || return 1
	META_RULES+=("$1")
}

teardown_test_hosts() {
	local p br
	for p in "${HOST_PIDS[@]}" "${KILL_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for br in "${META_RULES[@]}"; do
		ip rule del iif "$br" to "$META/32" lookup "$RT_TABLE" 2>/dev/null
	done
	ip route flush table "$RT_TABLE" 2>/dev/null
	ip link del "$HV_A" 2>/dev/null
	ip link del "$HV_M" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_M" 2>/dev/null
	return 0
}
KILL_PIDS=()
IT_CLEANUP_HOOKS+=(teardown_test_hosts)

# Two daemons at once.  lib.sh keeps one current daemon in its globals;
# these save and restore them (as SAVED_<name>_<variable>) so a second
# daemon runs beside the first from this same shell: its process stays a
# job of this shell, which the cleanup stops, and its data dir,
# containers and network are under this test's temp dir and records.
DAEMON_VARS=(DAEMON_PID DAEMON_OUT DAEMON_ERR DAEMON_RC API_ADDR API_URL DATA)
SAVED_A_DAEMON_PID=
SAVED_B_DAEMON_PID=
save_daemon() { # NAME
	local v
	for v in "${DAEMON_VARS[@]}"; do printf -v "SAVED_$1_$v" '%s' "${!v}"; done
}
load_daemon() { # NAME
	local v src
	for v in "${DAEMON_VARS[@]}"; do
		src=SAVED_$1_$v
		printf -v "$v" '%s' "${!src}"
	done
}
stop_saved_daemons() { # cleanup: the daemon not current at the end
	local p
	for p in "$SAVED_A_DAEMON_PID" "$SAVED_B_DAEMON_PID"; do
		[[ -n $p && $p != "${DAEMON_PID:-}" ]] || continue
		kill -TERM "$p" 2>/dev/null || continue
		wait_until 10 proc_gone "$p" || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}
IT_CLEANUP_HOOKS+=(stop_saved_daemons)

# dockerd, stopped and started as 99-docker-down.sh does (lib.sh).
dockerd_remember

table_exists() { nft list table inet "$1" >/dev/null 2>&1; }

# Everything GET /v1/status must say once a daemon is fully up.
UP='.docker.up == true and .network.ready == true and .proxy.listening == true'
UP_RULES="$UP and .egress.installed == true"

# The route a sandbox's packet to HOST takes must lead into our netns.
routed_to_netns() { # CONTAINER-IP BRIDGE HOST VETH
	ip route get "$3" from "$1" iif "$2" 2>/dev/null | grep -q " dev $4 "
}

container_ip() { dinspect "$1" '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'; }
# shellcheck disable=SC2016 # a Go template, not shell
networks_of() { dinspect "$1" '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}'; }

# guard HOST CONTAINER: 0 when a connect from CONTAINER to HOST cannot
# leave the host (a test host's address routed into its netns, or a local
# address); records why not.
guard() {
	local host=$1 c=$2 ip br
	case $host in
	"$META")
		ip=$(container_ip "$c")
		br=$(networks_of "$c")
		br=${br% }
		br=$(docker network inspect "$br" -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null)
		routed_to_netns "$ip" "$br" "$META" "$HV_M" ||
			t_err "not connecting to $META: from $ip on ${br:-?} it is not routed into $NS_M ($(ip route get "$META" from "$ip" iif "$br" 2>&1 | head -n 1))"
		;;
	"$A_IP")
		ip route get "$A_IP" 2>/dev/null | grep -q " dev $HV_A " ||
			t_err "not connecting to $A_IP: not routed into $NS_A"
		;;
	*) return 0 ;;
	esac
}

# expect_blocked CONTAINER HOST PORT WHAT: refused within 1 s.
expect_blocked() {
	guard "$2" "$1" || return 1
	local st ms _b
	read -r st ms _b <<<"$(sb_connect "$1" "$2" "$3")"
	note "$4 ($2:$3): $st after $ms ms"
	[[ $BLOCKED_STATES == *" $st "* ]] ||
		{ t_err "$4 ($2:$3): expected refused (reset or ICMP prohibited), got $st after $ms ms"; return 1; }
	awk -v m="$ms" 'BEGIN { exit !(m < 1000) }' ||
		t_err "$4 ($2:$3): refused only after $ms ms (want < 1000)"
}

# expect_open CONTAINER HOST PORT WHAT [GREETING]
expect_open() {
	guard "$2" "$1" || return 1
	local st ms banner
	read -r st ms banner <<<"$(sb_connect "$1" "$2" "$3")"
	note "$4 ($2:$3): $st after $ms ms${banner:+ ($banner)}"
	[[ $st == open ]] || { t_err "$4 ($2:$3): expected open, got $st after $ms ms"; return 1; }
	[[ -z ${5:-} || $banner == "$5" ]] ||
		t_err "$4 ($2:$3): connected, but the greeting is '$banner', not '$5' (not our test host?)"
}

# expect_proxy CONTAINER GW PORT WHAT: the proxy answers HTTP (any status).
expect_proxy() {
	local code
	code=$(sb_http "$1" "http://$2:$3/")
	[[ $code =~ ^[1-5][0-9][0-9]$ ]] || t_err "$4: GET http://$2:$3/ from the sandbox: $code"
}

# blocked_count SB: .egress_blocked of the sandbox ("" when missing)
blocked_count() {
	api GET "/v1/sandboxes/$1"
	j '.egress_blocked | numbers'
}

# start_a [VAR=value…]: daemon A (its data dir, network and proxy port),
# waiting until its status says UP (and the rules, unless open).
start_a() {
	DATA=$DATA_A
	start_daemon SANDBOXD_NETWORK="$NET_A" SANDBOXD_PROXY_PORT="$PROXY_A" "$@" ||
		{ t_err "daemon A did not start (exit ${DAEMON_RC:-none}): $(tail -n 3 "$DAEMON_ERR")"; return 1; }
	local want=$UP_RULES
	[[ " $* " == *" SANDBOXD_EGRESS=open "* ]] && want=$UP
	wait_status "$want" 30 || { t_err "daemon A: status not ($want) within 30 s: $(short_body)"; return 1; }
}

# The sandbox's container after a restart: the same or a new one, started
# through the API if it is not running.  Sets C1.
refind_c1() {
	local i
	C1=$(container_of "$SB1") || true
	if [[ -z $C1 ]] || ! container_running "$C1"; then
		for ((i = 0; i < 30; i++)); do
			api POST "/v1/sandboxes/$SB1/start"
			[[ $STATUS == 200 ]] && break
			sleep 1
		done
		expect_status 200 || return 1
		C1=$(container_of "$SB1") || { t_err "no container for $SB1"; return 1; }
	fi
	container_running "$C1" || t_err "the container of $SB1 is not running"
}

# --- the cases ------------------------------------------------------------------

t_begin "nothing in the suite reads the gateway of Docker's default bridge network"
hits=$(grep -lE 'network inspect[[:space:]]+bridge' "$IT_ROOT"/tests/integration/*.sh "$IT_ROOT"/bench/* 2>/dev/null |
	grep -vxF "$IT_ROOT/tests/integration/$(basename "$0")")
[[ -z $hits ]] || t_err "these read it (a fresh dockerd reports no gateway there): $hits"
t_end

setup_test_hosts >"$IT_TMP/setup.out" 2>&1 || bail "cannot make the test hosts: $(cat "$IT_TMP/setup.out")"
[[ $(local_connect "$NS_A" "$A_IP" "$PA") == "open a:$PA" ]] || bail "test host a does not answer in its netns"
[[ $(local_connect "$NS_M" "$META" "$PM") == "open m:$PM" ]] || bail "the metadata test host does not answer in its netns"
echo "# test hosts: $A_IP ($NS_A, ports $PA $PB), $META ($NS_M, port $PM)"

start_a || bail "daemon A is not up: ${T_ERRS[*]}"
api GET /v1/status
ST_A=$BODY
GW=$(j .network.gateway)
GW_A=$GW
BR_A=$(j .network.bridge)
TABLE_A=$(j .egress.table)
NETID_A=$(j .network.id)
SUBNET_A=$(j .network.subnet)
echo "# daemon A: network $NET_A $SUBNET_A gateway $GW_A bridge $BR_A table $TABLE_A"

t_begin "the daemon created its network: status, docker network inspect, the bridge, ICC off, the nft table"
BODY=$ST_A REQ="GET /v1/status"
expect_json .network.name "$NET_A"
expect_json .network.managed true
expect_json .network.ready true
expect_json '.network.error // ""' ""
expect_json .docker.up true
expect_jq '.version | type == "string" and length > 0' 'a version'
expect_jq '.network.id | type == "string" and length >= 12' 'a network id'
expect_jq '.network.bridge | test("^sbx-[0-9a-f]{8}$")' 'bridge sbx-<8 hex>'
expect_json .egress.mode public
expect_json .egress.table "sandboxd_${BR_A#sbx-}"
expect_json .egress.installed true
expect_json '.egress.error // ""' ""
expect_json .proxy.listening true
expect_json .proxy.url "http://$GW_A:$PROXY_A"
expect_json '.proxy.error // ""' ""
python3 -c '
import ipaddress, sys
net = ipaddress.ip_network(sys.argv[1])
sys.exit(0 if ipaddress.ip_address(sys.argv[2]) == net.network_address + 1 else 1)
' "$SUBNET_A" "$GW_A" 2>/dev/null || t_err "gateway $GW_A is not the first address of subnet $SUBNET_A"
if docker network inspect "$NET_A" >"$IT_TMP/net-a.json" 2>&1; then
	BODY=$(cat "$IT_TMP/net-a.json") REQ="docker network inspect $NET_A"
	expect_jq ".[0].Id | startswith(\"$NETID_A\") or (\"$NETID_A\" | startswith(.))" "Id $NETID_A"
	expect_json '.[0].Driver' bridge
	expect_json '.[0].IPAM.Config[0].Subnet' "$SUBNET_A"
	expect_json '.[0].IPAM.Config[0].Gateway' "$GW_A"
	expect_json '.[0].Labels["sandboxd.network"]' true
	expect_jq '.[0].Labels["sandboxd.instance"] | type == "string" and length > 0' 'label sandboxd.instance'
	expect_json '.[0].Options["com.docker.network.bridge.enable_icc"]' false
	expect_json '.[0].Options["com.docker.network.bridge.name"]' "$BR_A"
	NET_INSTANCE=$(j '.[0].Labels["sandboxd.instance"]')
else
	t_err "docker network inspect $NET_A: $(cat "$IT_TMP/net-a.json")"
fi
ip -4 addr show dev "$BR_A" 2>/dev/null | grep -q "inet $GW_A/" ||
	t_err "the bridge $BR_A does not exist or lacks $GW_A: $(ip -4 addr show dev "$BR_A" 2>&1 | head -n 3)"
table_exists "$TABLE_A" || t_err "no nft table inet $TABLE_A"
# The subnet collides with no other Docker network and no host route but
# its own bridge's.
others=$({
	ip -4 route show table all | grep -v " dev $BR_A " | awk '{ print $1 }'
	for n in $(docker network ls -q); do
		[[ $n == "${NETID_A:0:12}" ]] ||
			docker network inspect "$n" -f '{{range .IPAM.Config}}{{println .Subnet}}{{end}}' 2>/dev/null
	done
} | grep -E '^[0-9.]+(/[0-9]+)?$')
clash=$(python3 -c '
import ipaddress, sys
me = ipaddress.ip_network(sys.argv[1])
for l in sys.stdin:
    n = ipaddress.ip_network(l.strip(), strict=False)
    if n.prefixlen > 0 and n.overlaps(me):
        print(n)
' "$SUBNET_A" <<<"$others")
[[ -z $clash ]] || t_err "subnet $SUBNET_A overlaps: $clash"
grep -q "credential proxy listening on $GW_A:$PROXY_A" "$DAEMON_ERR" ||
	t_err "the log does not say 'credential proxy listening on $GW_A:$PROXY_A'"
t_end

route_meta_from "$BR_A" || bail "cannot add the policy route for $META from $BR_A"

# The host-only service: a web server on the gateway, another port.
python3 -m http.server --bind "$GW_A" "$HPORT" >"$IT_TMP/hostsvc.out" 2>&1 &
KILL_PIDS+=($!)
wait_until 10 eval "[[ \$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://$GW_A:$HPORT/) == 200 ]]" ||
	bail "the host-only service on $GW_A:$HPORT does not answer: $(cat "$IT_TMP/hostsvc.out")"

t_begin "setup: two sandboxes on the network; a listener in the second"
create_app egress-one && create_sandbox "$APP_ID"
SB1=${SB_ID:-} C1=${SB_CONTAINER:-}
create_app egress-two && create_sandbox "$APP_ID"
SB2=${SB_ID:-} C2=${SB_CONTAINER:-}
if [[ -n $C1 && -n $C2 ]]; then
	[[ $(networks_of "$C1") == "$NET_A " ]] ||
		t_err "the sandbox is not (only) on $NET_A: $(networks_of "$C1")"
	[[ -z ${NET_INSTANCE:-} || $(dinspect "$C1" '{{index .Config.Labels "sandboxd.instance"}}') == "$NET_INSTANCE" ]] ||
		t_err "the network's sandboxd.instance label is not the daemon's instance"
	C2_IP=$(container_ip "$C2")
	docker exec -d -u 1000 "$C2" python3 -m http.server 3000 --bind 0.0.0.0 ||
		t_err "cannot start a listener in the second sandbox"
	wait_until 10 eval "[[ \$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://$C2_IP:3000/) =~ ^[1-5] ]]" ||
		t_err "nothing answers on $C2_IP:3000 from the host"
fi
t_end
[[ -n $C1 && -n $C2 && -n ${C2_IP:-} ]] || bail "no sandboxes to test from"

t_begin "public: the credential proxy's port on the gateway answers from inside a sandbox (uid 1000)"
expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
t_end

t_begin "public: a host-only service on the gateway is refused fast"
expect_blocked "$C1" "$GW_A" "$HPORT" "the gateway's port $HPORT"
t_end

t_begin "public: another sandbox's web port is refused"
expect_blocked "$C1" "$C2_IP" 3000 "the second sandbox"
t_end

t_begin "public: a private host and the metadata address are refused fast; egress_blocked counts them"
before=$(blocked_count "$SB1")
[[ $before =~ ^[0-9]+$ ]] || t_err "GET /v1/sandboxes/$SB1 has no numeric egress_blocked: $(short_body)"
expect_blocked "$C1" "$A_IP" "$PA" "host a"
expect_blocked "$C1" "$A_IP" "$PB" "host a"
expect_blocked "$C1" "$META" "$PM" "the metadata address"
after=
grown() { after=$(blocked_count "$SB1"); [[ $after =~ ^[0-9]+$ ]] && ((after >= ${before:-0} + 3)); }
wait_until 5 grown || t_err "egress_blocked went from ${before:-?} to ${after:-?} after 3 refused connects"
note "egress_blocked: ${before:-?} -> ${after:-?}"
[[ $(blocked_count "$SB2") =~ ^[0-9]+$ ]] || t_err "the second sandbox has no egress_blocked"
t_end

t_begin "open: the same hosts are reachable (SANDBOXD_EGRESS=open, same data dir)"
stop_daemon
if start_a SANDBOXD_EGRESS=open; then
	expect_json .egress.mode open
	expect_json .egress.installed false
	table_exists "$TABLE_A" && t_err "nft table $TABLE_A is still there under open"
	expect_json .network.gateway "$GW_A"
	refind_c1
	expect_open "$C1" "$A_IP" "$PA" "host a" "a:$PA"
	expect_open "$C1" "$META" "$PM" "the metadata address" "m:$PM"
	expect_open "$C1" "$GW_A" "$HPORT" "the gateway's port $HPORT"
	expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
fi
t_end

t_begin "allow-list: SANDBOXD_EGRESS_ALLOW opens exactly that host's port (and a port of the host itself)"
stop_daemon
if start_a SANDBOXD_EGRESS_ALLOW="$A_IP/32:$PA,$GW_A:$HPORT-$HPORT"; then
	expect_json .egress.mode public
	refind_c1
	expect_open "$C1" "$A_IP" "$PA" "host a, allowed port" "a:$PA"
	expect_blocked "$C1" "$A_IP" "$PB" "host a, another port"
	expect_blocked "$C1" "$META" "$PM" "the metadata address"
	expect_open "$C1" "$GW_A" "$HPORT" "the gateway's allowed port $HPORT"
	expect_blocked "$C1" "$C2_IP" 3000 "the second sandbox"
	expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
fi
t_end

t_begin "none: only the proxy answers"
stop_daemon
if start_a SANDBOXD_EGRESS=none; then
	expect_json .egress.mode none
	refind_c1
	expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
	expect_blocked "$C1" "$A_IP" "$PA" "host a"
	expect_blocked "$C1" "$A_IP" "$PB" "host a"
	expect_blocked "$C1" "$META" "$PM" "the metadata address"
	expect_blocked "$C1" "$GW_A" "$HPORT" "the gateway's port $HPORT"
fi
t_end

t_begin "none: the allow-list applies too"
stop_daemon
if start_a SANDBOXD_EGRESS=none SANDBOXD_EGRESS_ALLOW="$A_IP:$PA"; then
	refind_c1
	expect_open "$C1" "$A_IP" "$PA" "host a, allowed port" "a:$PA"
	expect_blocked "$C1" "$A_IP" "$PB" "host a, another port"
	expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
fi
t_end

t_begin "the rules survive a restart of the daemon; the network is reused"
stop_daemon
n0=""
n1=""
if start_a; then
	refind_c1
	expect_blocked "$C1" "$A_IP" "$PB" "host a"
	n0=$(blocked_count "$SB1")
	stop_daemon
	table_exists "$TABLE_A" || t_err "the nft table went with the daemon"
	expect_blocked "$C1" "$A_IP" "$PA" "host a, daemon stopped"
	if start_a; then
		n1=$(blocked_count "$SB1")
		expect_json .network.id "$NETID_A"
		expect_json .network.gateway "$GW_A"
		expect_json .network.bridge "$BR_A"
		refind_c1
		expect_blocked "$C1" "$A_IP" "$PA" "host a"
		expect_blocked "$C1" "$META" "$PM" "the metadata address"
		expect_proxy "$C1" "$GW_A" "$PROXY_A" "the proxy"
	fi
fi
t_end

t_begin "egress_blocked keeps counting across a daemon restart (the container did not restart)"
# Counted since the container last started: what was refused before the
# restart, and the refusal while the daemon was away, still count.
note "egress_blocked: ${n0:-?} before the restart, ${n1:-?} right after it (one refusal in between)"
if ! [[ $n0 =~ ^[0-9]+$ && $n1 =~ ^[0-9]+$ ]]; then
	t_err "egress_blocked is not a number: '${n0:-}' before, '${n1:-}' after the restart"
elif ((n1 < n0 + 1)); then
	t_err "egress_blocked was $n0 before the daemon restart and $n1 after it, with one more refusal in between (want >= $((n0 + 1)))"
fi
t_end

t_begin "the rules survive a restart of dockerd; the sandbox starts again, still blocked"
before=$(blocked_count "$SB1")
note "egress_blocked before: ${before:-?}"
if stop_dockerd; then
	table_exists "$TABLE_A" || t_err "the nft table went with dockerd"
	start_dockerd || t_err "dockerd did not answer _ping within 60 s of being started"
fi
docker_ok || bail "dockerd is not back"
if ! wait_status "$UP_RULES" 60; then
	t_err "60 s after dockerd came back, status is not ($UP_RULES): $(short_body)"
else
	table_exists "$TABLE_A" || t_err "no nft table $TABLE_A after the dockerd restart"
	expect_json .network.gateway "$GW_A"
	refind_c1
	started=$(blocked_count "$SB1")
	note "egress_blocked after the container started again: ${started:-?}"
	if [[ $before =~ ^[0-9]+$ && $started =~ ^[0-9]+$ ]]; then
		((before == 0 || started < before)) ||
			t_err "egress_blocked did not start anew with the container: $before before, $started after"
	else
		t_err "egress_blocked is not a number: before '${before:-}', after '${started:-}'"
	fi
	expect_blocked "$C1" "$A_IP" "$PA" "host a"
	expect_blocked "$C1" "$META" "$PM" "the metadata address"
	ok=0
	for _ in $(seq 20); do
		[[ $(sb_http "$C1" "http://$GW_A:$PROXY_A/") =~ ^[1-5][0-9][0-9]$ ]] && { ok=1; break; }
		sleep 0.5
	done
	((ok)) || t_err "the proxy does not answer from the sandbox after the dockerd restart"
fi
t_end

# --- a second daemon beside the first ---------------------------------------------
save_daemon A
DAEMON_PID=
new_data_dir
NET_B=sbxit-$PID-$IT_DATA_N
PROXY_B=$(free_port)
B_NET=$(pick_net24 10.251)
SUBNET_B=$B_NET.0/24

t_begin "two daemons on one engine: each its own network (SANDBOXD_SUBNET), proxy and table"
if start_daemon SANDBOXD_NETWORK="$NET_B" SANDBOXD_PROXY_PORT="$PROXY_B" SANDBOXD_SUBNET="$SUBNET_B" &&
	wait_status "$UP_RULES" 30; then
	expect_json .network.name "$NET_B"
	expect_json .network.subnet "$SUBNET_B"
	expect_json .network.gateway "$B_NET.1"
	GW_B=$(j .network.gateway)
	BR_B=$(j .network.bridge)
	TABLE_B=$(j .egress.table)
	[[ $BR_B != "$BR_A" && $TABLE_B != "$TABLE_A" ]] || t_err "B shares A's bridge or table: $BR_B $TABLE_B"
	create_app egress-b && create_sandbox "$APP_ID"
	C_B=${SB_CONTAINER:-}
	if [[ -n $C_B ]]; then
		expect_proxy "$C_B" "$GW_B" "$PROXY_B" "B's proxy from B's sandbox"
		expect_blocked "$C_B" "$GW_A" "$PROXY_A" "A's proxy from B's sandbox"
		expect_blocked "$C_B" "$A_IP" "$PA" "host a from B's sandbox"
	fi
	expect_proxy "$C1" "$GW_A" "$PROXY_A" "A's proxy from A's sandbox"
	expect_blocked "$C1" "$GW_B" "$PROXY_B" "B's proxy from A's sandbox"
	table_exists "$TABLE_A" || t_err "no nft table $TABLE_A"
	table_exists "$TABLE_B" || t_err "no nft table $TABLE_B"
else
	t_err "daemon B is not up (exit ${DAEMON_RC:-running}): $(short_body) $(tail -n 3 "$DAEMON_ERR")"
fi
save_daemon B
load_daemon A
api GET /v1/status
expect_status 200 && expect_jq "$UP_RULES" "daemon A still up with its rules"
t_end

t_begin "stopping the second daemon leaves the first's rules intact"
load_daemon B
stop_daemon
save_daemon B
load_daemon A
table_exists "$TABLE_A" || t_err "A's nft table is gone"
[[ -n ${TABLE_B:-} ]] && { table_exists "$TABLE_B" || t_err "B's nft table went with its daemon"; }
api GET /v1/status
expect_status 200 && expect_jq "$UP_RULES" "daemon A still up with its rules"
expect_blocked "$C1" "$A_IP" "$PA" "host a"
expect_proxy "$C1" "$GW_A" "$PROXY_A" "A's proxy"
t_end

net_remove() { # NETWORK: sandboxd network remove; prints its output, returns its status
	env -i "PATH=$PATH" ${DOCKER_HOST:+"DOCKER_HOST=$DOCKER_HOST"} "SANDBOXD_NETWORK=$1" \
		"SANDBOXD_ENV_FILE=$IT_TMP/empty.env" timeout 60 "$SANDBOXD_BIN" network remove 2>&1 </dev/null
}

t_begin "sandboxd network remove: the table; the network once nothing is attached; exit 0 when nothing is left"
if [[ -n ${TABLE_B:-} ]]; then
	out=$(net_remove "$NET_B")
	note "with a container attached: exit $?${out:+: $out}"
	table_exists "$TABLE_B" && t_err "B's table is still there"
	docker network inspect "$NET_B" >/dev/null 2>&1 || t_err "B's network was removed with a container attached"
	[[ -n ${C_B:-} ]] && docker rm -f -v "$C_B" >/dev/null 2>&1
	out=$(net_remove "$NET_B") || t_err "network remove with nothing attached: exit $?: $out"
	docker network inspect "$NET_B" >/dev/null 2>&1 && t_err "B's network is still there"
	out=$(net_remove "$NET_B") || t_err "network remove with nothing to remove: exit $?: $out"
	table_exists "$TABLE_A" || t_err "A's nft table went too"
	docker network inspect "$NET_A" >/dev/null 2>&1 || t_err "A's network went too"
	expect_blocked "$C1" "$A_IP" "$PA" "host a"
else
	t_err "daemon B never came up; nothing to remove"
fi
t_end

t_begin "a sandbox on another network than the configured one is recreated on it at its next start"
NET_D=sbxit-$PID-d
stop_daemon
DATA=$DATA_A
if start_daemon SANDBOXD_NETWORK="$NET_D" SANDBOXD_PROXY_PORT="$PROXY_A" && wait_status "$UP_RULES" 30; then
	GW_D=$(j .network.gateway)
	old=$C1
	api POST "/v1/sandboxes/$SB1/stop"
	expect_status 200
	api POST "/v1/sandboxes/$SB1/start"
	expect_status 200 && expect_json .status running
	if C1=$(container_of "$SB1"); then
		nets=$(networks_of "$C1")
		[[ $nets == "$NET_D " ]] || t_err "after its start the sandbox is on '$nets', not $NET_D"
		[[ $C1 != "$old" ]] || note "(the same container, reconnected)"
		expect_proxy "$C1" "$GW_D" "$PROXY_A" "the proxy on the new gateway"
		expect_blocked "$C1" "$A_IP" "$PA" "host a"
	else
		t_err "no container for $SB1"
	fi
else
	t_err "the daemon with SANDBOXD_NETWORK=$NET_D is not up: $(short_body)"
fi
stop_daemon
t_end

t_begin "a task submitted while the proxy cannot listen fails at once with proxy_unavailable"
new_data_dir
PROXY_C=$(free_port)
if start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_PROXY_PORT="$PROXY_C" && daemon_gateway; then
	GW_C=$GW
	create_app no-proxy && create_sandbox "$APP_ID"
	SB_C=${SB_ID:-}
	stop_daemon
	# Take the proxy's port on the gateway before the daemon can.
	python3 -c '
import socket, sys, time
s = socket.socket()
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
print("bound", flush=True)
time.sleep(600)
' "$GW_C" "$PROXY_C" >"$IT_TMP/holder.out" 2>&1 &
	HOLDER=$!
	KILL_PIDS+=("$HOLDER")
	wait_until 10 grep -q bound "$IT_TMP/holder.out" || t_err "cannot take $GW_C:$PROXY_C: $(cat "$IT_TMP/holder.out")"
	if start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_PROXY_PORT="$PROXY_C"; then
		wait_status '.network.ready == true and .proxy.listening == false and (.proxy.error // "") != ""' 15 ||
			t_err "status does not show the proxy down with an error: $(short_body)"
		expect_json .proxy.listening false
		note "proxy.error: $(j .proxy.error)"
		expect_healthz
		if [[ -n $SB_C ]]; then
			t0=$SECONDS
			submit "$SB_C" '{"prompt":"hello","timeout_s":60}'
			if [[ -n $TASK_ID ]]; then
				wait_task "$SB_C" "$TASK_ID" 10
				expect_json .status failed && expect_json .failure_reason proxy_unavailable
				expect_jq '.error_message | type == "string" and length > 0' 'an error_message'
				note "failed after $((SECONDS - t0)) s: $(j .error_message)"
			fi
		fi
		expect_healthz
		kill "$HOLDER" 2>/dev/null
		if wait_status '.proxy.listening == true' 15; then
			note "the proxy listens once the port is free again"
		else
			note "15 s after the port was freed the proxy still does not listen: $(j .proxy.error)"
		fi
	else
		t_err "the daemon did not start while its proxy port was taken (exit ${DAEMON_RC:-none}): $(tail -n 3 "$DAEMON_ERR")"
	fi
else
	t_err "the daemon for this case did not come up: $(short_body)"
fi
t_end

finish
