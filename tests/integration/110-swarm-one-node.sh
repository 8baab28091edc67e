#!/usr/bin/env bash
# 110-swarm-one-node: sandboxd with SANDBOXD_ORCHESTRATOR=swarm on a
# one-node swarm of the test's own (swarm-lib.sh).
#
# First the engine's own behaviour the design stands on (no sandboxd):
# a config-only bridge network plus a swarm-scoped --config-from network
# takes a service task on the named bridge; `Image: sha256:<id>` is
# accepted and not pulled; the task container's hardening (CapDrop ALL,
# read-only root, pids, nofile, tmpfs nosuid,nodev,noexec, CapEff 0); a
# RestartPolicy "none" service scaled 0 -> 1 makes no task, and with
# ForceUpdate it does; a killed task is not replaced.
#
# Then sandboxd in swarm mode: the manager is node n1 (labels), a create
# makes service sbx-<id> (constraints, reservation, restart none, dnsrr,
# the image by id, Replicas), the preview answers through the edge, the
# hardening on the task container (NoNewPrivs 1 from the supervisor,
# CapEff 0, MemorySwap == Memory), freeze and thaw, sleep (0 replicas) and
# wake through the edge, a task (fake agent), files, the terminal, logs, a
# killed supervisor (exited, no new task), a restart of the daemon
# (reconcile), delete (the service goes), and the tmpfs lines of
# /proc/mounts equal to a docker-mode sandbox's.  The teardown case checks
# the engine is as found.
# it-timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
swarm_need
need_swarm_image
IMG_ID=$(docker image inspect -f '{{.Id}}' "$TEST_IMAGE")

sbd() { timeout 60 env "SANDBOXD_API=$API_URL" "SANDBOXD_TOKEN=$TOKEN" "XDG_CONFIG_HOME=$IT_TMP/xdg" "$SANDBOXD_BIN" "$@"; }
tmpfs_lines() { # CONTAINER: its tmpfs mounts (mount point, options), sorted
	docker exec "$1" sh -c "grep ' tmpfs ' /proc/mounts | awk '{print \$2, \$4}'" 2>/dev/null | sort
}

# --- a docker-mode sandbox, the reference for /proc/mounts -----------------------
t_begin "docker mode: a sandbox's tmpfs mounts (the reference)"
start_edge_daemon "SANDBOXD_IMAGE=$TEST_IMAGE"
create_app ref && create_sandbox "$APP_ID"
REF_MOUNTS=$(tmpfs_lines "$SB_CONTAINER")
[[ -n $REF_MOUNTS ]] || t_err "no tmpfs line in the docker-mode sandbox's /proc/mounts"
while IFS= read -r l; do note "$l"; done <<<"$REF_MOUNTS"
api DELETE "/v1/sandboxes/$SB_ID"
stop_daemon
remove_test_containers
new_data_dir # swarm mode: a data dir and sandbox network of its own
t_end

# --- the engine alone -------------------------------------------------------------
t_begin "swarm init without IPVS on a veth address; ingress deleted"
swarm_up
[[ $(docker info -f '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}') == "active true" ]] ||
	t_err "docker info: $(docker info -f '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}')"
docker network inspect ingress >/dev/null 2>&1 && t_err "ingress is still there"
t_end

t_begin "engine: config-only bridge + --config-from swarm network; a task by image id, hardened"
sub=$(pick_net24 10.247)
br=sbxe$$
docker network create --config-only --subnet "$sub.0/24" --gateway "$sub.1" \
	-o "com.docker.network.bridge.name=$br" -o com.docker.network.bridge.enable_icc=false \
	--label "sandboxd.instance=it-$$" "sbxe-$$-cfg" >/dev/null || t_err "the config-only network"
docker network create -d bridge --scope swarm --config-from "sbxe-$$-cfg" "sbxe-$$" >/dev/null ||
	t_err "the config-from network"
spec=$(jq -n --arg img "$IMG_ID" --arg net "sbxe-$$" --arg n "sbxe-$$-svc" '{
	Name: $n, Labels: {"sandboxd.it": "1"},
	TaskTemplate: {
		ContainerSpec: {Image: $img, Command: ["sleep", "infinity"], User: "1000",
			ReadOnly: true, CapabilityDrop: ["ALL"],
			Ulimits: [{Name: "nofile", Soft: 4096, Hard: 4096}],
			Mounts: [{Type: "tmpfs", Target: "/tmp", TmpfsOptions: {SizeBytes: 67108864, Mode: 1777}}]},
		Resources: {Limits: {MemoryBytes: 268435456, Pids: 256}, Reservations: {MemoryBytes: 134217728}},
		RestartPolicy: {Condition: "none"},
		Networks: [{Target: $net}]},
	Mode: {Replicated: {Replicas: 1}}, EndpointSpec: {Mode: "dnsrr"}}')
code=$(curl -s -o "$IT_TMP/svc.out" -w '%{http_code}' --unix-socket "$DOCKER_SOCK" \
	-H 'Content-Type: application/json' -X POST http://x/v1.41/services/create --data-binary "$spec")
[[ $code == 201 ]] || t_err "POST /services/create: $code $(cat "$IT_TMP/svc.out")"
wait_until 60 sh -c "docker ps -q --filter label=com.docker.swarm.service.name=sbxe-$$-svc | grep -q ." ||
	t_err "no running task container: $(swarm_tasks "sbxe-$$-svc" | head -n 2)"
C=$(docker ps -q --no-trunc --filter "label=com.docker.swarm.service.name=sbxe-$$-svc" | head -n 1)
if [[ -n $C ]]; then
	[[ $(dinspect "$C" '{{.Image}}') == "$IMG_ID" ]] || t_err "the task's image is $(dinspect "$C" '{{.Image}}')"
	[[ $(dinspect "$C" '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}') == "$sub".* ]] ||
		t_err "the task's address is not in $sub.0/24"
	ip -o link show "$br" >/dev/null 2>&1 || t_err "no bridge named $br"
	[[ $(dinspect "$C" '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.PidsLimit}} {{.HostConfig.Memory}}') == "true [ALL] 256 268435456" ]] ||
		t_err "hardening: $(dinspect "$C" '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.PidsLimit}} {{.HostConfig.Memory}}')"
	[[ $(dinspect "$C" '{{range .HostConfig.Ulimits}}{{.Name}}={{.Soft}}:{{.Hard}}{{end}}') == nofile=4096:4096 ]] ||
		t_err "ulimits: $(dinspect "$C" '{{json .HostConfig.Ulimits}}')"
	grep -q ' /tmp tmpfs .*nosuid.*nodev.*noexec' <(docker exec "$C" cat /proc/mounts) ||
		t_err "/tmp: $(docker exec "$C" grep ' /tmp ' /proc/mounts)"
	st=$(docker exec "$C" cat /proc/1/status)
	grep -q '^CapEff:[[:space:]]*0000000000000000' <<<"$st" || t_err "$(grep CapEff <<<"$st")"
	note "engine alone: $(grep NoNewPrivs <<<"$st") (Engine < 25 has no service option; the supervisor sets it)"
	note "MemorySwap of the task: $(dinspect "$C" '{{.HostConfig.MemorySwap}}') (the product sets it = Memory)"
	# A killed task is not replaced (RestartPolicy none).
	docker kill "$C" >/dev/null 2>&1
	sleep 4
	[[ -z $(docker ps -q --filter "label=com.docker.swarm.service.name=sbxe-$$-svc") ]] ||
		t_err "a new task ran after the kill (restart policy none)"
fi
t_end

t_begin "engine: Replicas 0 -> 1 (restart none); with ForceUpdate a running task (the wake)"
docker service update -d --replicas 1 --force "sbxe-$$-svc" >/dev/null 2>&1
wait_until 60 sh -c "docker ps -q --filter label=com.docker.swarm.service.name=sbxe-$$-svc | grep -q ." ||
	t_err "no running task to start from: $(swarm_tasks "sbxe-$$-svc" | head -n 3)"
docker service scale -d "sbxe-$$-svc=0" >/dev/null 2>&1
wait_until 30 sh -c "[ -z \"\$(docker ps -q --filter label=com.docker.swarm.service.name=sbxe-$$-svc)\" ]" ||
	t_err "scale to 0 left a running container"
docker service scale -d "sbxe-$$-svc=1" >/dev/null 2>&1
sleep 4
if [[ -z $(docker ps -q --filter "label=com.docker.swarm.service.name=sbxe-$$-svc") ]]; then
	note "Replicas 1 alone (after a clean 1 -> 0) made no running task: the wake needs ForceUpdate"
else
	note "Replicas 1 alone (after a clean 1 -> 0) made a running task on this engine"
fi
docker service scale -d "sbxe-$$-svc=0" >/dev/null 2>&1
wait_until 30 sh -c "[ -z \"\$(docker ps -q --filter label=com.docker.swarm.service.name=sbxe-$$-svc)\" ]"
t0=$(now_ms)
docker service update -d --replicas 1 --force "sbxe-$$-svc" >/dev/null 2>&1
wait_until 60 sh -c "docker ps -q --filter label=com.docker.swarm.service.name=sbxe-$$-svc | grep -q ." ||
	t_err "Replicas 1 + ForceUpdate made no running task: $(swarm_tasks "sbxe-$$-svc" | head -n 3)"
note "0 -> 1 + ForceUpdate: running after $(($(now_ms) - t0)) ms (CLI included)"
docker service rm "sbxe-$$-svc" >/dev/null 2>&1
t_end

# --- sandboxd in swarm mode -----------------------------------------------------------
t_begin "the control plane starts in swarm mode; the manager is node n1"
swarm_cp_start "SANDBOXD_IMAGE=$TEST_IMAGE" SANDBOXD_FREEZE_AFTER_SECONDS=31536000 \
	SANDBOXD_IDLE_THRESHOLD_SECONDS=31536000 ||
	bail "the daemon did not start in swarm mode: $(tail -n 5 "$DAEMON_ERR")"
labels=$(docker node inspect -f '{{json .Spec.Labels}}' self)
jq -e '."sandboxd.agent" == "1" and ."sandboxd.node" == "n1"' <<<"$labels" >/dev/null ||
	t_err "the manager's labels: $labels"
wait_node n1 ready 30
t_end

t_begin "create: a service per sandbox (the pin without the placement fences, reservation, restart none, dnsrr, image by id), running"
create_app one && create_sandbox "$APP_ID"
SB=$SB_ID
SVC_NAME=$(service_of "$SB")
SVC=$(docker service inspect "$SVC_NAME" 2>/dev/null)
if [[ -z $SVC_NAME || -z $SVC || $SVC == "[]" ]]; then
	t_err "no service labelled sandboxd.sandbox=$SB: $(docker service ls 2>&1 | head -n 3)"
else
	jq -e '.[0].Spec.TaskTemplate.Placement.Constraints as $c |
		($c | index("node.labels.sandboxd.agent==1")) != null and
		($c | index("node.labels.sandboxd.node==n1")) != null and
		($c | index("node.labels.sandboxd.disk!=full")) == null and
		($c | index("node.labels.sandboxd.drain!=1")) == null' <<<"$SVC" >/dev/null ||
		t_err "constraints: $(jq -c '.[0].Spec.TaskTemplate.Placement.Constraints' <<<"$SVC")"
	jq -e '.[0].Spec.TaskTemplate.Resources.Reservations.MemoryBytes > 0 and
		.[0].Spec.TaskTemplate.Resources.Limits.MemoryBytes > 0' <<<"$SVC" >/dev/null ||
		t_err "resources: $(jq -c '.[0].Spec.TaskTemplate.Resources' <<<"$SVC")"
	[[ $(jq -r '.[0].Spec.TaskTemplate.RestartPolicy.Condition' <<<"$SVC") == none ]] ||
		t_err "restart policy: $(jq -c '.[0].Spec.TaskTemplate.RestartPolicy' <<<"$SVC")"
	[[ $(jq -r '.[0].Spec.EndpointSpec.Mode' <<<"$SVC") == dnsrr ]] || t_err "endpoint mode"
	[[ $(jq -r '.[0].Spec.TaskTemplate.ContainerSpec.Image' <<<"$SVC") == "$IMG_ID" ]] ||
		t_err "image: $(jq -r '.[0].Spec.TaskTemplate.ContainerSpec.Image' <<<"$SVC") (want $IMG_ID)"
	[[ $(jq -r '.[0].Spec.Mode.Replicated.Replicas' <<<"$SVC") == 1 ]] || t_err "replicas not 1 while running"
fi
[[ $(j '.node // ""') == "" || $(j '.node') == n1 ]] || t_err "node: $(j .node)"
t_end

t_begin "the preview answers through the manager's edge"
FIRST_SB=$SB FIRST_SVC=$SVC_NAME
serve_edge_app edge # a sandbox of its own: SB, HOST
SVC_NAME=$(service_of "$SB")
[[ -n $SVC_NAME ]] || t_err "no service labelled sandboxd.sandbox=$SB"
C=$(container_of "$SB")
t_end

t_begin "hardening on the task container: read-only, CapDrop ALL, pids, NoNewPrivs 1, CapEff 0, MemorySwap = Memory"
C=$(container_of "$SB")
[[ $(dinspect "$C" '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}}') == "true [ALL]" ]] ||
	t_err "$(dinspect "$C" '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}}')"
[[ $(dinspect "$C" '{{.HostConfig.PidsLimit}}') -gt 0 ]] || t_err "PidsLimit $(dinspect "$C" '{{.HostConfig.PidsLimit}}')"
st=$(docker exec "$C" cat /proc/1/status 2>&1)
grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$st" || t_err "PID 1: $(grep NoNewPrivs <<<"$st")"
grep -q '^CapEff:[[:space:]]*0000000000000000' <<<"$st" || t_err "PID 1: $(grep CapEff <<<"$st")"
m=$(dinspect "$C" '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}')
[[ ${m% *} == "${m#* }" && ${m% *} -gt 0 ]] || t_err "Memory MemorySwap: $m"
t_end

t_begin "/proc/mounts tmpfs lines equal to a docker-mode sandbox's"
got=$(tmpfs_lines "$C")
[[ $got == "$REF_MOUNTS" ]] || t_err "swarm: $got" "docker: $REF_MOUNTS"
t_end

t_begin "freeze then thaw: the container paused, then the preview answers with no warming page"
api POST "/v1/sandboxes/$SB/freeze"
expect_status 200
[[ $(dinspect "$C" '{{.State.Paused}}') == true ]] || t_err "not paused after freeze"
edge_get "$HOST" /
[[ $E_STATUS == 200 && -z $(eh X-Sandboxd-Preview) ]] || t_err "after thaw: $E_STATUS $(eh X-Sandboxd-Preview)"
[[ $(dinspect "$C" '{{.State.Paused}}') == false ]] || t_err "still paused"
t_end

t_begin "sleep is 0 replicas; a request wakes it (warming, then the app)"
api POST "/v1/sandboxes/$SB/stop"
expect_status 200
replicas() { docker service inspect -f '{{.Spec.Mode.Replicated.Replicas}}' "$SVC_NAME" 2>&1; }
wait_until 20 sh -c "[ \"\$(docker service inspect -f '{{.Spec.Mode.Replicated.Replicas}}' $SVC_NAME)\" = 0 ]" ||
	t_err "replicas 20 s after stop: $(replicas) (sandbox status $(sandbox_status "$SB"))"
wait_until 20 sh -c "[ -z \"\$(docker ps -q --filter label=sandboxd.sandbox=$SB)\" ]" ||
	t_err "a container of the sandbox still runs after stop"
t0=$(now_ms)
first=
for ((i = 0; i < 300; i++)); do
	edge_get "$HOST" /
	[[ -n $first ]] || first="$E_STATUS/$(eh X-Sandboxd-Preview)"
	[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] && break
	sleep 0.2
done
[[ $E_STATUS == 200 && $E_BODY == "hello from the app" ]] || t_err "no answer after the wake: $E_STATUS $(head -c 200 <<<"$E_BODY")"
note "first answer $first; the app answered $(($(now_ms) - t0)) ms after the first request"
C=$(container_of "$SB")
t_end

t_begin "a task (fake agent) runs to completion in the swarm task"
submit "$SB" '{"prompt":"[[fake:write=swarm.txt]] [[fake:content=from the swarm]]"}' &&
	wait_task "$SB" "$TASK_ID" 60
expect_json .status succeeded
api GET "/v1/sandboxes/$SB/files/content?path=swarm.txt"
expect_status 200
[[ $BODY == "from the swarm" ]] || t_err "swarm.txt: $(short_body)"
t_end

t_begin "files, the terminal and logs"
api PUT "/v1/sandboxes/$SB/files?path=note.txt" 'written by the test'
expect_status 200
out=$(sbd sandbox exec "$SB" -- cat note.txt </dev/null 2>&1)
[[ $out == "written by the test" ]] || t_err "sandbox exec cat: $out"
api GET "/v1/sandboxes/$SB/processes/web/logs?tail=5"
expect_status 200
t_end

t_begin "a killed supervisor: the row is exited and Swarm made no new task"
docker kill "$C" >/dev/null 2>&1
wait_sb "$SB" '.status != "running"' 20
[[ $(j .status) == exited || $(j .status) == stopped ]] || t_err "status: $(j .status)"
wait_until 20 sh -c "[ \"\$(docker service inspect -f '{{.Spec.Mode.Replicated.Replicas}}' $SVC_NAME)\" = 0 ]" ||
	t_err "replicas 20 s after the die: $(replicas) (sandbox status $(sandbox_status "$SB"))"
sleep 3
[[ -z $(docker ps -q --filter "label=sandboxd.sandbox=$SB") ]] || t_err "Swarm started a new task"
t_end

t_begin "a restart of the daemon: the sandbox starts again and answers"
stop_daemon
P=$EDGE_PORT
swarm_cp_start "SANDBOXD_IMAGE=$TEST_IMAGE" "HTTP_PORT=$P" ||
	t_err "the daemon did not start again: $(tail -n 5 "$DAEMON_ERR")"
EDGE_PORT=$P EDGE=http://127.0.0.1:$P
api POST "/v1/sandboxes/$SB/start"
expect_status 200
wait_until 60 sh -c "curl -s --max-time 2 -H 'Host: $HOST' $EDGE/ | grep -q 'hello from the app'" ||
	t_err "no answer after the restart and start"
t_end

t_begin "delete removes the service (a running sandbox and a stopped one)"
api POST "/v1/sandboxes/$FIRST_SB/stop"
for pair in "$SB $SVC_NAME" "$FIRST_SB $FIRST_SVC"; do
	read -r sb svc <<<"$pair"
	api DELETE "/v1/sandboxes/$sb"
	[[ $STATUS == 200 || $STATUS == 204 ]] || t_err "DELETE: $STATUS $(short_body)"
	[[ -n $svc ]] || t_err "no service name to check for $sb"
	wait_until 20 sh -c "! docker service inspect $svc >/dev/null 2>&1" || t_err "service $svc is still there"
done
t_end

finish
