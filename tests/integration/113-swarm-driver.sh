#!/usr/bin/env bash
# The swarm driver on one node (the manager, no agents), on the real
# engine: SANDBOXD_ORCHESTRATOR=swarm makes the sandbox network as a
# config-only network plus a swarm-scoped one made from it and labels
# the node; a sandbox is a one-replica service (restart none, dnsrr,
# pinned to the node, the workspace bind-mounted) whose task container
# has swap off, no capabilities and no_new_privs; its preview answers
# through the edge; stop scales it to 0 and removes the container; start
# makes a new task (replicas 1 and a forced update); a task that dies by
# itself leaves its service at 0 replicas, with no new task behind the
# daemon's back; DELETE removes the service and the workspace.
#
# It changes the engine (a swarm): tests/run-integration runs it alone
# (its name holds "swarm").  The engine is left as found: the swarm left, the networks
# it made removed (docker_gwbridge too when it was not there), checked
# as the last case.
. "$(dirname "$0")/lib.sh"
need_docker
command -v jq >/dev/null || bail "jq is needed"

sw_state=$(docker info -f '{{.Swarm.LocalNodeState}}' 2>/dev/null)
[[ $sw_state == inactive ]] ||
	bail "the engine is already in a swarm ($sw_state): not touching it"
NETS_BEFORE=$(docker network ls --format '{{.Name}}' | sort)
ADDR=$(ip -4 -o route get 1.1.1.1 2>/dev/null | sed -nE 's/.* src ([0-9.]+).*/\1/p')
[[ -n $ADDR ]] || ADDR=$(ip -4 -o addr show scope global | awk '{print $4; exit}' | cut -d/ -f1)
[[ -n $ADDR ]] || bail "no global IPv4 address to advertise the swarm on"
NET=sbxit-$$-0
SWIMG=sbxit-swarm-$$:latest

swarm_restore() {
	[[ -n ${SW_RESTORED:-} ]] && return 0
	SW_RESTORED=1
	stop_daemon 2>/dev/null
	local s
	for s in $(docker service ls -q --filter "label=sandboxd.managed=true" 2>/dev/null); do
		docker service rm "$s" >/dev/null 2>&1
	done
	docker swarm leave --force >/dev/null 2>&1
	local i
	for ((i = 0; i < 50; i++)); do
		[[ $(docker info -f '{{.Swarm.LocalNodeState}}') == inactive ]] && break
		sleep 0.2
	done
	# The swarm network's local copy may outlive the leave a moment, and
	# the config-only network cannot go before it.
	for ((i = 0; i < 50; i++)); do
		docker network rm "$NET" >/dev/null 2>&1
		docker network rm "$NET-cfg" >/dev/null 2>&1
		docker network inspect "$NET-cfg" >/dev/null 2>&1 || break
		sleep 0.2
	done
	grep -qx docker_gwbridge <<<"$NETS_BEFORE" ||
		docker network rm docker_gwbridge >/dev/null 2>&1
	docker image rm "$SWIMG" >/dev/null 2>&1
	return 0
}
IT_CLEANUP_HOOKS+=(swarm_restore)

# First the same daemon in docker mode: its single-host network of the
# same name must give way to the swarm one when it comes back in swarm
# mode (an operator switching SANDBOXD_ORCHESTRATOR).
start_daemon SANDBOXD_NETWORK="$NET" || bail "the docker-mode daemon did not start"
wait_until 15 docker network inspect "$NET" >/dev/null 2>&1 ||
	bail "the docker-mode daemon made no network $NET"
stop_daemon

docker swarm init --advertise-addr "$ADDR" --listen-addr "$ADDR:2377" \
	--dispatcher-heartbeat 2s --task-history-limit 2 >/dev/null 2>&1 ||
	bail "docker swarm init failed"
# No IPVS here: nothing uses the routing mesh.
curl -s --unix-socket "$DOCKER_SOCK" -X DELETE http://localhost/networks/ingress >/dev/null

# The base image with this tree's sandboxd-init (it sets no_new_privs
# itself: services have no such option before Engine 25).
INIT_BIN=${SANDBOXD_INIT_BIN:-$IT_ROOT/build/sandboxd-init}
mkdir -p "$IT_TMP/img"
install -m 0755 "$INIT_BIN" "$IT_TMP/img/sandboxd-init"
printf 'FROM %s\nCOPY sandboxd-init /usr/local/bin/sandboxd-init\n' \
	"$IT_IMAGE" >"$IT_TMP/img/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$SWIMG" "$IT_TMP/img" >"$IT_TMP/img/out" 2>&1 ||
	bail "cannot build the test image: $(tail -n 3 "$IT_TMP/img/out")"

start_edge_daemon SANDBOXD_ORCHESTRATOR=swarm SANDBOXD_IMAGE="$SWIMG" \
	SANDBOXD_NODE_NAME=cp SANDBOXD_NETWORK="$NET" SANDBOXD_MEMORY_MB=512
SELF=$(docker info -f '{{.Swarm.NodeID}}')

t_begin "the network: $NET-cfg config-only, $NET swarm-scoped from it (the docker-mode one replaced); the node labelled"
[[ $(docker network inspect -f '{{.ConfigOnly}}' "$NET-cfg" 2>/dev/null) == true ]] ||
	t_err "$NET-cfg is not a config-only network"
[[ $(docker network inspect -f '{{index .Labels "sandboxd.network"}}' "$NET-cfg" 2>/dev/null) == true ]] ||
	t_err "$NET-cfg has no sandboxd.network label"
[[ $(docker network inspect -f '{{.Scope}} {{.ConfigFrom.Network}}' "$NET" 2>/dev/null) == "swarm $NET-cfg" ]] ||
	t_err "$NET: $(docker network inspect -f '{{.Scope}} {{.ConfigFrom.Network}}' "$NET" 2>&1)"
lab() { docker node inspect -f "{{index .Spec.Labels \"$1\"}}" "$SELF"; }
wait_until 15 test "$(lab sandboxd.agent)" = 1 || t_err "node label sandboxd.agent: '$(lab sandboxd.agent)'"
[[ $(lab sandboxd.node) == cp ]] || t_err "node label sandboxd.node: '$(lab sandboxd.node)'"
api GET /v1/status
expect_jq '.network.ready == true' "network ready in /v1/status"
[[ $(docker network inspect -f '{{.Attachable}}' "$NET" 2>/dev/null) == true ]] ||
	t_err "$NET is not attachable (a publish's containers could not join it)"
t_end

t_begin "a swarm network an earlier start left not attachable is made again, attachable"
stop_daemon
docker network rm "$NET" >/dev/null 2>&1 &&
	docker network create -d bridge --scope swarm --config-from "$NET-cfg" "$NET" >/dev/null 2>&1 ||
	t_err "cannot make a non-attachable $NET"
[[ $(docker network inspect -f '{{.Attachable}}' "$NET" 2>/dev/null) == false ]] ||
	t_err "the stand-in $NET is attachable already"
start_edge_daemon SANDBOXD_ORCHESTRATOR=swarm SANDBOXD_IMAGE="$SWIMG" \
	SANDBOXD_NODE_NAME=cp SANDBOXD_NETWORK="$NET" SANDBOXD_MEMORY_MB=512
[[ $(docker network inspect -f '{{.Attachable}} {{.ConfigFrom.Network}}' "$NET" 2>/dev/null) == "true $NET-cfg" ]] ||
	t_err "$NET after the start: $(docker network inspect -f '{{.Attachable}} {{.ConfigFrom.Network}}' "$NET" 2>&1)"
t_end

t_begin "create: a one-replica service pinned to the node, its task hardened"
T0=$(date +%s%N)
serve_edge_app swarm-one
note "create + preview up in $((($(date +%s%N) - T0) / 1000000)) ms"
SVC=$(docker service ls --filter "label=sandboxd.sandbox=$SB" --format '{{.Name}}')
[[ -n $SVC ]] || t_err "no service labelled sandboxd.sandbox=$SB"
spec() { docker service inspect -f "$1" "$SVC" 2>/dev/null; }
[[ $(spec '{{.Spec.Mode.Replicated.Replicas}}') == 1 ]] || t_err "replicas: $(spec '{{.Spec.Mode.Replicated.Replicas}}')"
[[ $(spec '{{.Spec.TaskTemplate.RestartPolicy.Condition}}') == none ]] || t_err "restart policy"
[[ $(spec '{{.Spec.EndpointSpec.Mode}}') == dnsrr ]] || t_err "endpoint mode"
spec '{{json .Spec.TaskTemplate.Placement.Constraints}}' | grep -q 'node.labels.sandboxd.node==cp' ||
	t_err "constraints: $(spec '{{json .Spec.TaskTemplate.Placement.Constraints}}')"
[[ $(spec '{{(index .Spec.TaskTemplate.ContainerSpec.Mounts 0).Source}}') == "$DATA/workspaces/$SB" ]] ||
	t_err "bind source: $(spec '{{(index .Spec.TaskTemplate.ContainerSpec.Mounts 0).Source}}')"
[[ $(spec '{{.Spec.TaskTemplate.ContainerSpec.Image}}') == sha256:* ]] || t_err "image not by id"
C=$(container_of "$SB")
[[ $(dinspect "$C" '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}') == "536870912 536870912" ]] ||
	t_err "memory/swap: $(dinspect "$C" '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}')"
[[ $(dinspect "$C" '{{.HostConfig.ReadonlyRootfs}}') == true ]] || t_err "root fs writable"
PID=$(dinspect "$C" '{{.State.Pid}}')
grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$PID/status" || t_err "PID 1: no no_new_privs"
grep -q '^CapEff:[[:space:]]*0000000000000000' "/proc/$PID/status" || t_err "PID 1 has capabilities"
IP=$(dinspect "$C" "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}")
SUBNET=$(docker network inspect -f '{{(index .IPAM.Config 0).Subnet}}' "$NET-cfg")
python3 -c 'import ipaddress,sys; sys.exit(0 if ipaddress.ip_address(sys.argv[1]) in ipaddress.ip_network(sys.argv[2]) else 1)' \
	"$IP" "$SUBNET" || t_err "task address $IP is not in $SUBNET"
grep -q " /tmp tmpfs [^ ]*noexec" <(docker exec "$C" cat /proc/mounts) || t_err "/tmp is not noexec"
api GET "/v1/sandboxes/$SB"
expect_json .status running
t_end

t_begin "preview through the edge"
edge_get "$HOST" /
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "GET /: $E_STATUS '$E_BODY'"
t_end

t_begin "the terminal: an exec in the task's container"
api POST "/v1/sandboxes/$SB/terminal" '{}'
expect_status 201
M=marker-$RANDOM
python3 "$IT_ROOT/tests/integration/wsterm.py" "$API_URL" "$(j .ticket)" \
	--send "echo $M-\$(hostname)\r" --read-for 3 >"$IT_TMP/ws1" 2>"$IT_TMP/ws1e"
grep -q "$M-" "$IT_TMP/ws1" || t_err "no $M in the terminal: $(tail -c 300 "$IT_TMP/ws1") $(cat "$IT_TMP/ws1e")"
t_end

t_begin "freeze: the task's container paused, a preview thaws it"
api POST "/v1/sandboxes/$SB/freeze"
expect_status 200
[[ $(dinspect "$C" '{{.State.Paused}}') == true ]] || t_err "not paused after freeze: $(short_body)"
edge_get "$HOST" /
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "GET / on a frozen sandbox: $E_STATUS"
[[ $(dinspect "$C" '{{.State.Paused}}') == false ]] || t_err "still paused after a preview"
t_end

t_begin "stop: 0 replicas, no container left"
echo kept >"$DATA/workspaces/$SB/marker"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200 && expect_json .status stopped
[[ $(spec '{{.Spec.Mode.Replicated.Replicas}}') == 0 ]] || t_err "replicas after stop: $(spec '{{.Spec.Mode.Replicated.Replicas}}')"
left=$(docker ps -q --filter "label=sandboxd.sandbox=$SB")
[[ -z $left ]] || t_err "a running container after stop: $left"
t_end

t_begin "start: a new task runs (replicas 1 + forced update), files kept, preview back"
T0=$(date +%s%N)
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
note "start answered in $((($(date +%s%N) - T0) / 1000000)) ms"
C2=$(docker ps -q --no-trunc --filter "label=sandboxd.sandbox=$SB" | head -n 1)
[[ -n $C2 && $C2 != "$C" ]] || t_err "no new container after start ($C2)"
[[ $(docker exec "$C2" cat /home/sandbox/marker 2>&1) == kept ]] || t_err "workspace file lost"
[[ $(dinspect "$C2" '{{.HostConfig.MemorySwap}}') == 536870912 ]] || t_err "MemorySwap after start"
wait_until 60 test "$(ecurl "$HOST" /)" = "hello from the app" || t_err "preview after start"
t_end

t_begin "a task that dies: its service goes to 0 replicas, no new task appears"
docker kill "$C2" >/dev/null
wait_until 15 test "$(spec '{{.Spec.Mode.Replicated.Replicas}}')" = 0 ||
	t_err "replicas after the task died: $(spec '{{.Spec.Mode.Replicated.Replicas}}')"
sleep 4
left=$(docker ps -q --filter "label=sandboxd.sandbox=$SB")
[[ -z $left ]] || t_err "a new container appeared after the die: $left"
api GET "/v1/sandboxes/$SB"
[[ $(j .status) != running ]] || t_err "status still running after the die"
note "status after the die: $(j .status) ($(j .status_reason))"
t_end

t_begin "start after the die, then DELETE: service and workspace gone"
api POST "/v1/sandboxes/$SB/start"
expect_status 200 && expect_json .status running
api DELETE "/v1/sandboxes/$SB"
expect_status 204
docker service inspect "$SVC" >/dev/null 2>&1 && t_err "service $SVC still exists"
[[ -e $DATA/workspaces/$SB ]] && t_err "workspace still there"
left=$(docker ps -aq --filter "label=sandboxd.sandbox=$SB")
[[ -z $left ]] || t_err "containers of $SB left when DELETE answered: $left"
t_end

t_begin "no node has the memory: 503 no_headroom with Swarm's reason, nothing left"
start_edge_daemon SANDBOXD_ORCHESTRATOR=swarm SANDBOXD_IMAGE="$SWIMG" \
	SANDBOXD_NODE_NAME=cp SANDBOXD_NETWORK="$NET" SANDBOXD_MEMORY_MB=512 \
	SANDBOXD_MEMORY_RESERVE_MB=1000000
create_app swarm-full
api POST "/v1/apps/$APP_ID/sandbox" '{"ports":[3000]}'
expect_status 503 && expect_envelope no_headroom
grep -qi 'no suitable node' <<<"$BODY" || t_err "the reason: $(short_body)"
[[ -z $(docker service ls -q --filter "label=sandboxd.app=$APP_ID") ]] ||
	t_err "a service was left behind"
t_end

t_begin "the engine as found: swarm left, no network added"
swarm_restore
remove_test_networks
[[ $(docker info -f '{{.Swarm.LocalNodeState}}') == inactive ]] || t_err "swarm still $(docker info -f '{{.Swarm.LocalNodeState}}')"
now=$(docker network ls --format '{{.Name}}' | sort)
[[ $now == "$NETS_BEFORE" ]] || t_err "networks differ: $(diff <(echo "$NETS_BEFORE") <(echo "$now") | tr '\n' ' ')"
t_end

finish
