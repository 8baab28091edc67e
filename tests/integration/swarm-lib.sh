# shellcheck shell=bash
# tests/integration/swarm-lib.sh: the swarm harness (tests 110-114), sourced
# after lib.sh.
#
# It makes this machine's engine a one-node or two-node Docker Swarm of the
# test's own and always gives the engine back as it found it:
#
#   swarm_need            preconditions; "# skip: …" and exit 0 only when
#                         the engine is already in a swarm this harness did
#                         not make (anything else missing is a failure: CI
#                         machines can run this)
#   swarm_up              the state before (swarm_state), a veth pair to a
#                         network namespace of our own ($SW_NS; the host's end
#                         $SW_A1, the namespace's $SW_A2), `swarm init` on
#                         $SW_A1 (heartbeat 2 s, task history 2), and
#                         DELETE /networks/ingress (no IPVS here; nothing
#                         publishes)
#   swarm_node2_up        a second dockerd in $SW_NS (own data root, exec
#                         root and managed containerd, pidfile, socket, bip,
#                         address pool, cgroup parent) in a mount namespace
#                         of its own where a tmpfs holds node 2's data dir
#                         ($SW_N2_DATA: the manager cannot see it); $D2 is
#                         its docker CLI ("docker -H unix://…")
#   swarm_node2_join_raw  node 2 joins by the worker token (no product:
#                         the harness's self-test and the engine benches)
#   swarm_cp_start        the control plane: start_edge_daemon in swarm mode
#                         (SANDBOXD_CLUSTER_ADDR=$SW_A1:<free port>)
#   swarm_node2_agent     the join command the CP prints, run inside node 2's
#                         network + mount namespaces with DOCKER_HOST=node 2
#                         (the agent: $SW_AGENT_PID, its log $SW_AGENT_LOG)
#   n2 ARGS…              a command in node 2's namespaces
#
# The EXIT trap (swarm_cleanup) stops the CP, removes our services, the
# agent, node 2's containers, leaves the swarm on both engines, deletes the
# docker_gwbridge the swarm made (only when it was not there before),
# stops dockerd 2 and its containerd and shims (our pids, found by our
# paths), removes the namespace, the veth pair and node 2's cgroups, then
# lib.sh's cleanup (containers, `sandboxd network remove`), and at last
# compares the machine's state with the one before: any difference is a
# "not ok" case (engine state as found), printed.

SW_STATE_DIR=$IT_TMP/swarm-state
SW_NS=
SW_V1=
SW_V2=
SW_NET=
SW_A1=
SW_A2=
SW_UP=0
SW_N2_ROOT=
SW_N2_PID=
SW_N2_HOLD=
SW_N2_DATA=
SW_N2_CG=
SW_AGENT_PID=
SW_AGENT_LOG=/dev/null
SW_MARK=/run/sandboxd-it-swarm
D2=(false)

# swarm_need: root, the tools, the engine's API >= 1.41, veth and netns.
swarm_need() {
	local state api t mine
	((EUID == 0)) || bail "the swarm tests need root (namespaces, veth, a second dockerd)"
	docker_ok || bail "Docker does not answer on $DOCKER_SOCK (_ping)"
	for t in ip nsenter unshare dockerd containerd iptables-save nft jq python3 ss; do
		command -v "$t" >/dev/null || bail "$t is not installed"
	done
	state=$(docker info -f '{{.Swarm.LocalNodeState}}' 2>/dev/null)
	if [[ $state != inactive ]]; then
		# A swarm this harness made in a run that was killed before its
		# trap: the mark holds its node id.  Left, then the test goes on.
		mine=$(cat "$SW_MARK" 2>/dev/null)
		if [[ -n $mine && $mine == "$(docker info -f '{{.Swarm.NodeID}}' 2>/dev/null)" ]]; then
			echo "# a swarm left by an earlier run of this harness (node $mine): leaving it"
			docker swarm leave --force >/dev/null 2>&1
			rm -f "$SW_MARK"
		else
			echo "# skip: the engine is already in a swarm ($state) that this test did not make: not touching it"
			exit 0
		fi
	fi
	# The state to give back: taken before anything of this test exists.
	mkdir -p "$SW_STATE_DIR"
	swarm_state "$SW_STATE_DIR/before"
	api=$(curl -s --max-time 5 --unix-socket "$DOCKER_SOCK" http://x/version | jq -r .ApiVersion)
	[[ $(printf '%s\n1.41\n' "$api" | sort -V | head -n 1) == 1.41 ]] ||
		bail "the engine's API is $api; swarm mode needs 1.41 or later"
	[[ -d /sys/class/net ]] && ip link add sbxchk$$ type veth peer name sbxchk$$b 2>/dev/null &&
		ip link del sbxchk$$ || bail "no veth pairs here (CONFIG_VETH)"
}

# swarm_state FILE: what the machine's engine and network look like, in a
# form two runs can compare (counters and addresses of things that come
# and go stripped): Swarm state, Docker networks, links, namespaces,
# iptables filter/nat rules and chains, nft tables, listeners on the
# swarm ports, our cgroups.
swarm_state() {
	{
		echo "## swarm"
		docker info -f '{{.Swarm.LocalNodeState}}' 2>&1
		echo "## networks"
		docker network ls --no-trunc --format '{{.ID}} {{.Name}} {{.Driver}} {{.Scope}}' 2>&1 | sort
		echo "## links"
		ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort
		echo "## netns"
		ip netns list 2>/dev/null | awk '{ print $1 }' | sort
		echo "## iptables filter"
		iptables-save -t filter 2>&1 | grep -E '^(-A|:)' | sed -E 's/ \[[0-9]+:[0-9]+\]$//' | sort
		echo "## iptables nat"
		iptables-save -t nat 2>&1 | grep -E '^(-A|:)' | sed -E 's/ \[[0-9]+:[0-9]+\]$//' | sort
		echo "## nft tables"
		nft list tables 2>&1 | sort
		echo "## listeners (2377 7946 4789)"
		ss -Hlntu 2>/dev/null | awk '{ print $1, $5 }' | grep -E ':(2377|7946|4789)$' | sort
		echo "## cgroups"
		ls -d /sys/fs/cgroup/*/sbxn2-* /sys/fs/cgroup/sbxn2-* 2>/dev/null | sort
	} >"$1"
}

# swarm_up: the state before, the namespace and veth pair, swarm init.
swarm_up() {
	[[ -s $SW_STATE_DIR/before ]] || bail "swarm_up before swarm_need"
	SW_NET=$(pick_net24 10.250)
	[[ $SW_NET =~ ^10\.250\.[0-9]+$ ]] || bail "no free 10.250.X.0/24 for the veth pair: $SW_NET"
	SW_NS=sbxn2-$$
	SW_V1=sbxa$$ SW_V2=sbxb$$ # link names <= 15 characters
	SW_A1=$SW_NET.1 SW_A2=$SW_NET.2
	ip netns add "$SW_NS" || bail "ip netns add $SW_NS failed"
	SW_UP=1
	ip link add "$SW_V1" type veth peer name "$SW_V2" netns "$SW_NS" &&
		ip addr add "$SW_A1/24" dev "$SW_V1" && ip link set "$SW_V1" up &&
		ip -n "$SW_NS" addr add "$SW_A2/24" dev "$SW_V2" &&
		ip -n "$SW_NS" link set "$SW_V2" up && ip -n "$SW_NS" link set lo up &&
		ip -n "$SW_NS" route add default via "$SW_A1" ||
		bail "cannot make the veth pair $SW_V1/$SW_V2"
	local out t0=$SECONDS
	out=$(docker swarm init --advertise-addr "$SW_A1" --listen-addr "$SW_A1:2377" \
		--data-path-addr "$SW_A1" --dispatcher-heartbeat 2s --task-history-limit 2 2>&1) ||
		bail "docker swarm init failed: $out"
	docker info -f '{{.Swarm.NodeID}}' >"$SW_MARK" 2>/dev/null
	SW_INIT_S=$((SECONDS - t0))
	# No IPVS on such kernels, and nothing of ours publishes a port.  The
	# swarm makes ingress a moment after init: waited for, then deleted.
	local code i
	wait_until 15 docker network inspect ingress >/dev/null 2>&1 ||
		note "no ingress network 15 s after swarm init"
	for ((i = 0; i < 20; i++)); do
		code=$(curl -s -o "$IT_TMP/ingress.out" -w '%{http_code}' --unix-socket "$DOCKER_SOCK" \
			-X DELETE http://x/v1.41/networks/ingress)
		[[ $code == 204 || $code == 404 ]] || bail "DELETE /networks/ingress: $code $(cat "$IT_TMP/ingress.out")"
		sleep 0.5
		docker network inspect ingress >/dev/null 2>&1 || break
	done
	SW_MANAGER_ID=$(docker info -f '{{.Swarm.NodeID}}')
}

# n2 CMD…: CMD inside node 2's network and mount namespaces.
n2() { nsenter --target "$SW_N2_HOLD" --mount --net -- "$@"; }

# swarm_node2_up: node 2's namespaces, then its engine (see the header).
# A holder process (SW_N2_HOLD, a sleep) keeps node 2's network and mount
# namespaces, so that a killed dockerd 2 can be started again with its
# data dir still there.  Waits up to 60 s for the engine.
swarm_node2_up() {
	SW_N2_ROOT=$IT_TMP/n2
	SW_N2_DATA=$SW_N2_ROOT/sbx
	SW_N2_CG=sbxn2-$$
	mkdir -p "$SW_N2_ROOT"/{docker,exec,sbx}
	echo '{}' >"$SW_N2_ROOT/daemon.json"
	SW_N2_BIP=$(pick_net24 10.249)
	[[ $SW_N2_BIP =~ ^10\.249\.[0-9]+$ ]] || bail "no free 10.249.X.0/24 for node 2's docker0: $SW_N2_BIP"
	# `unshare --mount` (not `ip netns exec`, which remounts /sys and loses
	# the cgroup mounts dockerd needs): the tmpfs is node 2's alone.
	nsenter --net="/run/netns/$SW_NS" -- unshare --mount --propagation slave -- sh -c '
		mount -t tmpfs -o size=3g,mode=0755 sbxn2data "$1/sbx" || exit 1
		echo ready >"$1/hold.ready"
		exec sleep 2147483647' sh "$SW_N2_ROOT" </dev/null >"$SW_N2_ROOT/hold.log" 2>&1 &
	SW_N2_HOLD=$!
	wait_until 10 test -e "$SW_N2_ROOT/hold.ready" ||
		bail "node 2's namespaces: $(cat "$SW_N2_ROOT/hold.log")"
	swarm_dockerd2_start
}

# swarm_dockerd2_start: dockerd 2 in node 2's namespaces (again after a
# kill: the same data root, so it is the same swarm node).  SW_N2_PID.
swarm_dockerd2_start() {
	nsenter --target "$SW_N2_HOLD" --mount --net -- \
		env DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1 dockerd \
		--config-file "$SW_N2_ROOT/daemon.json" \
		--data-root "$SW_N2_ROOT/docker" --exec-root "$SW_N2_ROOT/exec" \
		--pidfile "$SW_N2_ROOT/dockerd.pid" -H "unix://$SW_N2_ROOT/docker.sock" \
		--containerd-namespace "sbxn2-$$" --containerd-plugins-namespace "sbxn2-$$-plugins" \
		--bip "$SW_N2_BIP.1/24" --default-address-pool "base=10.248.0.0/16,size=24" \
		--cgroup-parent "/$SW_N2_CG" --no-new-privileges --storage-driver overlay2 \
		--swarm-default-advertise-addr "$SW_A2" --log-level warn \
		>>"$SW_N2_ROOT/dockerd.log" 2>&1 </dev/null &
	SW_N2_PID=$!
	D2=(docker -H "unix://$SW_N2_ROOT/docker.sock")
	local i
	for ((i = 0; i < 300; i++)); do
		"${D2[@]}" version >/dev/null 2>&1 && break
		kill -0 "$SW_N2_PID" 2>/dev/null || bail "dockerd 2 exited: $(tail -n 5 "$SW_N2_ROOT/dockerd.log")"
		sleep 0.2
	done
	"${D2[@]}" version >/dev/null 2>&1 || bail "dockerd 2 does not answer: $(tail -n 5 "$SW_N2_ROOT/dockerd.log")"
}

# swarm_dockerd2_kill9: SIGKILL to dockerd 2 and its containerd (our
# pids: the containerd whose socket is under node 2's exec root).
swarm_dockerd2_kill9() {
	local p cd=
	for p in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "^containerd .*$SW_N2_ROOT/exec" && cd+=" ${p#/proc/}"
	done
	# shellcheck disable=SC2086
	kill -KILL "$SW_N2_PID" $cd 2>/dev/null
	wait "$SW_N2_PID" 2>/dev/null
	note "killed dockerd 2 ($SW_N2_PID) and containerd ($cd)"
}

# swarm_node2_join_raw: node 2 joins as a worker (no product).  Sets SW_N2_ID.
swarm_node2_join_raw() {
	local tok out
	tok=$(docker swarm join-token -q worker) || bail "no worker join token"
	out=$("${D2[@]}" swarm join --token "$tok" --advertise-addr "$SW_A2" \
		--listen-addr "$SW_A2:2377" "$SW_A1:2377" 2>&1) || bail "node 2's swarm join failed: $out"
	SW_N2_ID=$("${D2[@]}" info -f '{{.Swarm.NodeID}}')
	wait_until 30 sh -c "docker node inspect -f '{{.Status.State}}' '$SW_N2_ID' 2>/dev/null | grep -qx ready" ||
		bail "node 2 is not ready in the manager's list: $(docker node ls 2>&1)"
}

# swarm_cp_start [VAR=value…]: the control plane in swarm mode, its edge
# on 127.0.0.1:$EDGE_PORT; cluster port SW_CPORT on $SW_A1.
swarm_cp_start() {
	SW_CPORT=$(free_port)
	# The test's token ("it") is an operator's: the nodes API is theirs.
	start_edge_daemon SANDBOXD_ORCHESTRATOR=swarm SANDBOXD_OPERATORS=it "SANDBOXD_CLUSTER_ADDR=$SW_A1:$SW_CPORT" \
		"SANDBOXD_CLUSTER_PORT=$SW_CPORT" SANDBOXD_NODE_NAME=n1 SANDBOXD_NODE_HEARTBEAT_MS=1000 "$@"
	SW_NETNAME=sbxit-$$-$IT_DATA_N
}

# swarm_join_command: POST /v1/nodes/join-command -> SW_JOIN (its command).
swarm_join_command() {
	SW_JOIN=
	api POST /v1/nodes/join-command '{}'
	[[ $STATUS == 201 || $STATUS == 200 ]] || { t_err "$REQ: $STATUS $(short_body)"; return 1; }
	SW_JOIN=$(j .command)
	[[ $SW_JOIN == "sandboxd node join "*"--token "* ]] ||
		t_err "the join command is not 'sandboxd node join … --token …': $SW_JOIN"
}

# swarm_node2_agent [NAME]: runs the printed join command (its words after
# "sandboxd") in node 2's namespaces with DOCKER_HOST=node 2; the agent
# stays in the background (SW_AGENT_PID).  Does not wait.
swarm_node2_agent() {
	local name=${1:-n2}
	local -a words
	read -r -a words <<<"${SW_JOIN#sandboxd }"
	SW_AGENT_LOG=$IT_TMP/agent.$name.log
	# nsenter itself (not the n2 function, whose background subshell's pid
	# $! would be): it execs, so SW_AGENT_PID is the agent's own pid.
	nsenter --target "$SW_N2_HOLD" --mount --net -- env -i "PATH=$PATH" "HOME=${HOME:-/root}" "DOCKER_HOST=unix://$SW_N2_ROOT/docker.sock" \
		"SANDBOXD_DATA_DIR=$SW_N2_DATA" "SANDBOXD_NODE_NAME=$name" "SANDBOXD_NODE_ADDR=$SW_A2" \
		"SANDBOXD_ENV_FILE=$IT_TMP/empty.env" SANDBOXD_NODE_HEARTBEAT_MS=1000 \
		"$SANDBOXD_BIN" "${words[@]}" --name "$name" --addr "$SW_A2" >"$SW_AGENT_LOG" 2>&1 </dev/null &
	SW_AGENT_PID=$!
}

# swarm_agent_run: `sandboxd node run` again (an enrolled node 2).
swarm_agent_run() {
	SW_AGENT_LOG=$IT_TMP/agent.run.$RANDOM.log
	nsenter --target "$SW_N2_HOLD" --mount --net -- env -i "PATH=$PATH" "HOME=${HOME:-/root}" "DOCKER_HOST=unix://$SW_N2_ROOT/docker.sock" \
		"SANDBOXD_DATA_DIR=$SW_N2_DATA" SANDBOXD_NODE_NAME=n2 "SANDBOXD_NODE_ADDR=$SW_A2" \
		"SANDBOXD_ENV_FILE=$IT_TMP/empty.env" SANDBOXD_NODE_HEARTBEAT_MS=1000 \
		"$SANDBOXD_BIN" node run >"$SW_AGENT_LOG" 2>&1 </dev/null &
	SW_AGENT_PID=$!
}

# node_status NAME: .status of the node in GET /v1/nodes ("" when absent).
# In $(…) BODY stays the caller's; node_status_now sets NODE_STATUS and BODY.
node_status() {
	api GET /v1/nodes
	jq -r --arg n "$1" '(.nodes // .) | .[]? | select(.name == $n) | .status' <<<"$BODY" 2>/dev/null
}
node_status_now() {
	api GET /v1/nodes
	NODE_STATUS=$(jq -r --arg n "$1" '(.nodes // .) | .[]? | select(.name == $n) | .status' <<<"$BODY" 2>/dev/null)
}

# wait_node NAME STATUS SECS
wait_node() {
	local i
	for ((i = 0; i < $3 * 2; i++)); do
		node_status_now "$1"
		[[ $NODE_STATUS == "$2" ]] && return 0
		sleep 0.5
	done
	t_err "node $1 is not $2 after $3 s: GET /v1/nodes: $(short_body); agent log: $(tail -n 5 "$SW_AGENT_LOG" 2>/dev/null | tr '\n' ' ')"
}

# sb_node SB: the node a sandbox is on ("" the manager).
sb_node() {
	api GET "/v1/sandboxes/$1"
	j '.node // ""'
}

# service_of SB: the name of the sandbox's swarm service (by its label
# sandboxd.sandbox; the name is the container name the daemon gives it).
service_of() {
	docker service ls -q --filter "label=sandboxd.sandbox=$1" 2>/dev/null | head -n 1 |
		xargs -r docker service inspect -f '{{.Spec.Name}}' 2>/dev/null
}

# container_of_any SB: the container of SB on either engine -> "1 ID" / "2 ID".
container_of_any() {
	local c
	c=$(docker ps -aq --no-trunc --filter "label=sandboxd.sandbox=$1" 2>/dev/null | head -n 1)
	[[ -n $c ]] && { echo "1 $c"; return 0; }
	[[ -n $SW_N2_PID ]] || return 1
	c=$("${D2[@]}" ps -aq --no-trunc --filter "label=sandboxd.sandbox=$1" 2>/dev/null | head -n 1)
	[[ -n $c ]] && { echo "2 $c"; return 0; }
	return 1
}

# --- teardown -------------------------------------------------------------------

_sw_kill_agent() {
	[[ -n $SW_AGENT_PID ]] || return 0
	kill -TERM "$SW_AGENT_PID" 2>/dev/null
	local i
	for ((i = 0; i < 50; i++)); do kill -0 "$SW_AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$SW_AGENT_PID" 2>/dev/null
	wait "$SW_AGENT_PID" 2>/dev/null
	SW_AGENT_PID=
}

# Processes of node 2 that are ours by their paths (containerd, shims) and
# every process in node 2's cgroups.
_sw_n2_pids() {
	local p
	[[ -n $SW_N2_ROOT ]] || return 0
	for p in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$SW_N2_ROOT/" && echo "${p#/proc/}"
	done
	[[ -n $SW_N2_CG ]] && cat /sys/fs/cgroup/*/"$SW_N2_CG"/cgroup.procs /sys/fs/cgroup/*/"$SW_N2_CG"/*/cgroup.procs 2>/dev/null
	ip netns pids "$SW_NS" 2>/dev/null
}

_sw_node2_down() {
	[[ -n $SW_N2_ROOT ]] || return 0
	local i ids
	if [[ -n $SW_N2_PID ]] && kill -0 "$SW_N2_PID" 2>/dev/null; then
		ids=$("${D2[@]}" ps -aq 2>/dev/null)
		# shellcheck disable=SC2086
		[[ -n $ids ]] && timeout 60 "${D2[@]}" rm -f -v $ids >/dev/null 2>&1
		timeout 30 "${D2[@]}" swarm leave --force >/dev/null 2>&1
		kill -TERM "$SW_N2_PID" 2>/dev/null
		for ((i = 0; i < 200; i++)); do kill -0 "$SW_N2_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$SW_N2_PID" 2>/dev/null
	fi
	wait "$SW_N2_PID" 2>/dev/null
	[[ -n $SW_N2_HOLD ]] && kill -KILL "$SW_N2_HOLD" 2>/dev/null && wait "$SW_N2_HOLD" 2>/dev/null
	SW_N2_HOLD=
	for i in 1 2 3; do
		ids=$(_sw_n2_pids | sort -u)
		[[ -n $ids ]] || break
		# shellcheck disable=SC2086
		kill -KILL $ids 2>/dev/null
		sleep 0.5
	done
	SW_N2_PID=
	rm -rf "$SW_N2_ROOT" 2>/dev/null
	# cgroups, deepest first
	[[ -n $SW_N2_CG ]] && find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -path "*/$SW_N2_CG*" 2>/dev/null |
		awk '{ print length($0), $0 }' | sort -rn | cut -d' ' -f2- | xargs -r rmdir 2>/dev/null
	return 0
}

_sw_leave() {
	local ids gw
	ids=$(docker service ls -q 2>/dev/null)
	# Only services of our daemons' instances, or every service when this
	# swarm is ours (it is: swarm_up made it; a skip never gets here).
	# shellcheck disable=SC2086
	[[ -n $ids ]] && timeout 60 docker service rm $ids >/dev/null 2>&1
	for _ in $(seq 40); do
		[[ -z $(docker ps -aq --filter label=com.docker.swarm.service.id 2>/dev/null) ]] && break
		sleep 0.25
	done
	timeout 60 docker swarm leave --force >/dev/null 2>&1
	rm -f "$SW_MARK"
	gw=$(docker network inspect -f '{{.Id}}' docker_gwbridge 2>/dev/null)
	if [[ -n $gw ]] && ! grep -q "^$gw " "$SW_STATE_DIR/before" 2>/dev/null; then
		curl -s -o /dev/null --unix-socket "$DOCKER_SOCK" -X DELETE http://x/v1.41/networks/docker_gwbridge
	fi
	# Networks the harness's own cases made (label sandboxd.instance=it-<pid>).
	ids=$(docker network ls -q --filter "label=sandboxd.instance=it-$$" 2>/dev/null)
	# shellcheck disable=SC2086
	[[ -n $ids ]] && docker network rm $ids >/dev/null 2>&1
	# The sandbox networks of our daemons' data dirs: the swarm-scoped one
	# goes with the swarm; the config-only <net>-cfg stays: removed here
	# when it carries an instance label of ours or its name is ours.
	local n
	if [[ -s $IT_TMP/.networks ]]; then
		while IFS= read -r n; do
			[[ $n == sbxit-$$-* ]] || continue
			# Refused while the swarm network made from it is still being
			# taken down after the leave: tried again for a while.
			local i
			for i in $(seq 50); do
				docker network inspect "$n-cfg" >/dev/null 2>&1 || break
				curl -s -o /dev/null --unix-socket "$DOCKER_SOCK" -X DELETE "http://x/v1.41/networks/$n-cfg"
				docker network inspect "$n-cfg" >/dev/null 2>&1 || break
				sleep 0.2
			done
		done < <(sort -u "$IT_TMP/.networks")
	fi
	return 0
}

_sw_net_down() {
	[[ -n $SW_NS ]] || return 0
	ip link del "$SW_V1" 2>/dev/null
	ip netns del "$SW_NS" 2>/dev/null
	return 0
}

# swarm_verify: the machine's state now against the one before.  Docker's
# DOCKER-INGRESS chains and rules that the swarm added are deleted exactly
# first (added lines only), then the state is compared again.
swarm_verify() {
	[[ -s $SW_STATE_DIR/before ]] || return 0
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		swarm_state "$SW_STATE_DIR/after"
		cmp -s "$SW_STATE_DIR/before" "$SW_STATE_DIR/after" && break
		sleep 1
	done
	if ! cmp -s "$SW_STATE_DIR/before" "$SW_STATE_DIR/after"; then
		_sw_ingress_rules
		swarm_state "$SW_STATE_DIR/after"
	fi
	T_NAME= T_ERRS=()
	if cmp -s "$SW_STATE_DIR/before" "$SW_STATE_DIR/after"; then
		pass "teardown: the machine's engine and network state as found (swarm inactive; networks, links, netns, iptables, nft, listeners, cgroups)"
	else
		fail "teardown: the machine's engine and network state as found" \
			"$(diff "$SW_STATE_DIR/before" "$SW_STATE_DIR/after" | head -n 40)"
	fi
}

# The DOCKER-INGRESS chain and the rules jumping to it, when the swarm
# added them (they were not in the state before).
_sw_ingress_rules() {
	local t line
	for t in filter nat; do
		iptables-save -t "$t" | grep -E '^-A .*DOCKER-INGRESS' | while IFS= read -r line; do
			grep -qxF -- "$line" "$SW_STATE_DIR/before" && continue
			# shellcheck disable=SC2086
			eval iptables -t "$t" -D "${line#-A }" 2>/dev/null
		done
		if iptables-save -t "$t" | grep -q '^:DOCKER-INGRESS' &&
			! grep -q '^:DOCKER-INGRESS' <(sed -n "/^## iptables $t/,/^## /p" "$SW_STATE_DIR/before"); then
			iptables -t "$t" -F DOCKER-INGRESS 2>/dev/null
			iptables -t "$t" -X DOCKER-INGRESS 2>/dev/null
		fi
	done
}

# swarm_down: everything swarm_up and swarm_node2_up made goes, in that
# order, then the case "teardown: … as found" (swarm_verify).  The EXIT
# trap calls it; a test may call it earlier (and swarm_up again).
swarm_down() {
	stop_daemon 2>/dev/null
	_sw_kill_agent
	_sw_node2_down
	_sw_leave
	_sw_net_down
	remove_test_containers
	docker_ok && remove_test_networks
	swarm_verify
	SW_UP=0 SW_N2_ROOT= SW_NS= SW_N2_CG=
	D2=(false)
}

swarm_cleanup() {
	local rc=$? hook pids
	trap - EXIT TERM INT HUP
	pids=$(jobs -pr)
	# shellcheck disable=SC2086
	[[ -n $pids ]] && kill $pids 2>/dev/null
	stop_daemon 2>/dev/null
	_sw_kill_agent
	for hook in "${IT_CLEANUP_HOOKS[@]}"; do "$hook"; done
	if ((SW_UP)); then
		swarm_down
	else
		remove_test_containers
		docker_ok && remove_test_networks
	fi
	((IT_FAILS)) && rc=1
	if [[ -n ${IT_KEEP:-} ]]; then
		echo "# kept $IT_TMP"
	else
		rm -rf "$IT_TMP" 2>/dev/null || { sleep 2; rm -rf "$IT_TMP"; }
	fi
	exit "$rc"
}
trap swarm_cleanup EXIT

# --- a tiny image for the harness's own cases ------------------------------------

# swarm_pause_image: a one-file image (a static program that sleeps until
# SIGTERM), made here with gcc -static and `docker import` -> SW_PAUSE_IMG
# (its id, sha256:…); removed at the end.  Bails when it cannot be made.
swarm_pause_image() {
	local d=$IT_TMP/pause
	mkdir -p "$d/root"
	cat >"$d/pause.c" <<'EOF_C'
#include <signal.h>
#include <unistd.h>
static void bye(int s) { (void)s; _exit(0); }
int main(void) { signal(SIGTERM, bye); signal(SIGINT, bye); for (;;) pause(); }
EOF_C
	gcc -static -O2 -o "$d/root/pause" "$d/pause.c" 2>"$d/cc.log" ||
		bail "cannot build the pause program: $(tail -n 3 "$d/cc.log")"
	SW_PAUSE_TAG=sbxit-pause:$$
	SW_PAUSE_IMG=$(tar -C "$d/root" -c pause | docker import --change 'ENTRYPOINT ["/pause"]' - "$SW_PAUSE_TAG" 2>&1) ||
		bail "docker import failed: $SW_PAUSE_IMG"
	IT_CLEANUP_HOOKS+=(_sw_rm_pause_image)
}
_sw_rm_pause_image() { docker rmi -f "$SW_PAUSE_TAG" >/dev/null 2>&1; return 0; }

# swarm_tasks SERVICE: "STATE NODEID CONTAINERID ERR" of each task (newest first).
swarm_tasks() {
	curl -s --unix-socket "$DOCKER_SOCK" -G "http://x/v1.41/tasks" \
		--data-urlencode "filters={\"service\":[\"$1\"]}" |
		jq -r 'sort_by(.CreatedAt) | reverse | .[] | "\(.Status.State) \(.NodeID) \(.Status.ContainerStatus.ContainerID // "-") \(.Status.Err // "-")"'
}

# need_swarm_image: the test image (need_test_image: the base image and the
# fake agents) with this build's supervisor (SANDBOXD_INIT_BIN, else
# build/sandboxd-init) as its entrypoint -> TEST_IMAGE.  Swarm mode needs
# a supervisor that sets no_new_privs itself (services have no
# security options before Engine 25); an image built before that change
# must not make the product look broken.  Tagged by the inputs' hash;
# older ones go.
need_swarm_image() {
	need_test_image
	local init=${SANDBOXD_INIT_BIN:-$IT_ROOT/build/sandboxd-init} h ctx tag
	[[ -x $init ]] || bail "no supervisor binary at $init (make)"
	h=$( { docker image inspect -f '{{.Id}}' "$TEST_IMAGE"; sha256sum <"$init"; } | sha256sum | cut -c1-12)
	tag=sandboxd-swarmtest:$h
	if ! docker image inspect "$tag" >/dev/null 2>&1; then
		ctx=$IT_TMP/swarm-image
		mkdir -p "$ctx"
		cp "$init" "$ctx/sandboxd-init"
		printf 'FROM %s\nCOPY sandboxd-init /usr/local/bin/sandboxd-init\n' "$TEST_IMAGE" >"$ctx/Dockerfile"
		docker build -q -t "$tag" "$ctx" >"$ctx/build.log" 2>&1 ||
			bail "cannot build $tag: $(tail -n 5 "$ctx/build.log")"
		docker images --format '{{.Repository}}:{{.Tag}}' sandboxd-swarmtest |
			grep -vxF "$tag" | xargs -r docker rmi -f >/dev/null 2>&1
	fi
	TEST_IMAGE=$tag
}

