#!/usr/bin/env bash
# 114-swarm-harness: the two-node swarm harness (swarm-lib.sh) on its own,
# no sandboxd: twice over, swarm init on a veth address of ours, a second
# engine in a network namespace of ours joins as a worker, the sandbox
# network's form (a config-only bridge network on each node, with the same
# subnet, gateway and bridge name, and one swarm-scoped --config-from
# network) takes a service task on each node, node 2's data dir is not
# visible to the manager; then everything goes and the machine's state
# must be as found (the teardown case).  A failure here is the harness's
# or the engine's, never the product's.
# it-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
swarm_need
swarm_pause_image

for round in 1 2; do
	t_begin "round $round: swarm init on a veth address of ours; ingress deleted"
	swarm_up
	got=$(docker info -f '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}} {{.Swarm.NodeAddr}}')
	[[ $got == "active true $SW_A1" ]] || t_err "docker info: $got (expected active true $SW_A1)"
	docker network inspect ingress >/dev/null 2>&1 && t_err "the ingress network is still there"
	note "swarm init: ${SW_INIT_S}s"
	t_end

	t_begin "round $round: a second engine in its own namespaces joins as a worker"
	t0=$(now_ms)
	swarm_node2_up
	note "dockerd 2 up: $(($(now_ms) - t0)) ms"
	swarm_node2_join_raw
	[[ $(docker node ls -q | wc -l) == 2 ]] || t_err "docker node ls: $(docker node ls 2>&1)"
	[[ $("${D2[@]}" info -f '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}') == "active false" ]] ||
		t_err "node 2: $("${D2[@]}" info -f '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}')"
	# Node 2's data dir is a tmpfs in its own mount namespace.
	[[ $(n2 stat -f -c %T "$SW_N2_DATA") == tmpfs ]] || t_err "node 2's data dir is not its tmpfs: $(n2 stat -f -c %T "$SW_N2_DATA")"
	n2 sh -c "echo n2 >'$SW_N2_DATA/marker'" || t_err "cannot write in node 2's data dir"
	[[ -e $SW_N2_DATA/marker ]] && t_err "the manager sees node 2's data dir ($SW_N2_DATA/marker)"
	# Its engine's addresses are in its namespace only.
	ip -o addr show | grep -qF " $SW_A2/" && t_err "node 2's address is on the host"
	t_end

	t_begin "round $round: the image by id on node 2 (docker save | load), not pulled"
	docker save "$SW_PAUSE_TAG" | "${D2[@]}" load >/dev/null 2>&1 || t_err "load on node 2 failed"
	[[ $("${D2[@]}" image inspect -f '{{.Id}}' "$SW_PAUSE_IMG" 2>/dev/null) == "$SW_PAUSE_IMG" ]] ||
		t_err "node 2 has not the image $SW_PAUSE_IMG"
	t_end

	t_begin "round $round: one sandbox-network form on both nodes: a task on each, same subnet and bridge"
	br=sbxh$$
	sub=$(pick_net24 10.247)
	cfg=(--config-only --subnet "$sub.0/24" --gateway "$sub.1"
		-o "com.docker.network.bridge.name=$br" -o com.docker.network.bridge.enable_icc=false
		--label "sandboxd.instance=it-$$")
	docker network create "${cfg[@]}" "sbxh-$$-cfg" >/dev/null || t_err "config-only network on node 1"
	"${D2[@]}" network create "${cfg[@]}" "sbxh-$$-cfg" >/dev/null || t_err "config-only network on node 2"
	docker network create -d bridge --scope swarm --config-from "sbxh-$$-cfg" "sbxh-$$" >/dev/null ||
		t_err "the swarm-scoped --config-from network"
	for n in 1 2; do
		if ((n == 1)); then nid=$SW_MANAGER_ID; else nid=$SW_N2_ID; fi
		out=$(docker service create -d --name "sbxh-$$-$n" --network "sbxh-$$" --restart-condition none \
			--endpoint-mode dnsrr --constraint "node.id==$nid" --stop-grace-period 5s \
			--container-label "sandboxd.it=$$" "$SW_PAUSE_IMG" 2>&1) || t_err "service create on node $n: $out"
	done
	for n in 1 2; do
		wait_until 60 sh -c "docker service ps --filter desired-state=running --format '{{.CurrentState}}' sbxh-$$-$n | grep -q ^Running" ||
			t_err "node $n's task is not running: $(swarm_tasks "sbxh-$$-$n" | head -n 2)"
	done
	c1=$(docker ps -q --filter "label=com.docker.swarm.service.name=sbxh-$$-1" | head -n 1)
	c2=$("${D2[@]}" ps -q --filter "label=com.docker.swarm.service.name=sbxh-$$-2" | head -n 1)
	[[ -n $c1 ]] || t_err "no task container of service 1 on node 1"
	[[ -n $c2 ]] || t_err "no task container of service 2 on node 2"
	if [[ -n $c1 && -n $c2 ]]; then
		ip1=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$c1")
		ip2=$("${D2[@]}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$c2")
		[[ $ip1 == "$sub".* && $ip2 == "$sub".* ]] || t_err "addresses not in $sub.0/24: node 1 $ip1, node 2 $ip2"
		ip -o link show "$br" >/dev/null 2>&1 || t_err "no bridge $br on node 1"
		n2 ip -o link show "$br" >/dev/null 2>&1 || t_err "no bridge $br on node 2"
		[[ $(n2 ip -o -4 addr show dev "$br" | awk '{print $4}') == "$sub.1/24" ]] ||
			t_err "node 2's $br is not $sub.1/24: $(n2 ip -o -4 addr show dev "$br")"
		note "node 1 task $ip1, node 2 task $ip2, bridge $br on both"
	fi
	# Scale to 0 and back with ForceUpdate (the wake of a RestartPolicy none
	# service): a new running task on node 2 again.
	docker service scale -d "sbxh-$$-2=0" >/dev/null 2>&1
	wait_until 30 sh -c "[ -z \"\$(${D2[*]} ps -q --filter label=com.docker.swarm.service.name=sbxh-$$-2)\" ]" ||
		t_err "scale to 0 left a container on node 2"
	t0=$(now_ms)
	docker service update -d --replicas 1 --force "sbxh-$$-2" >/dev/null 2>&1
	wait_until 60 sh -c "[ -n \"\$(${D2[*]} ps -q --filter label=com.docker.swarm.service.name=sbxh-$$-2)\" ]" ||
		t_err "replicas 1 + force made no running container on node 2: $(swarm_tasks "sbxh-$$-2" | head -n 3)"
	note "0 -> 1 replicas (+ForceUpdate) on node 2: container running after $(($(now_ms) - t0)) ms"
	docker service rm "sbxh-$$-1" "sbxh-$$-2" >/dev/null 2>&1
	wait_until 30 sh -c "[ -z \"\$(docker ps -q --filter label=sandboxd.it=$$)\" ]"
	t_end

	swarm_down
done
finish
