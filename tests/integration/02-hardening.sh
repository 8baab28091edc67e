#!/usr/bin/env bash
# Hardening: the container of a new sandbox runs as uid 1000 with a read-only
# root filesystem, tmpfs /tmp, no capabilities, no-new-privileges, the
# memory / pids / nofile limits from the environment (swap = memory), its
# workspace (owned by uid 1000) bound at /home/sandbox, and its labels and
# name; and from inside, / is not writable while /home/sandbox and /tmp are.
. "$(dirname "$0")/lib.sh"
need_docker

MEM_MB=192
PIDS=321
NOFILE=2048
start_daemon SANDBOXD_MEMORY_MB=$MEM_MB SANDBOXD_PIDS_LIMIT=$PIDS SANDBOXD_NOFILE_LIMIT=$NOFILE ||
	bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

t_begin "create a sandbox"
create_app harden && create_sandbox "$APP_ID"
t_end
[[ -n ${SB_CONTAINER:-} ]] || bail "no sandbox container to inspect"
C=$SB_CONTAINER
WS=$DATA/workspaces/$SB_ID

# inspect_is WHAT GO-TEMPLATE EXPECTED…: the template must give one of EXPECTED.
inspect_is() {
	local what=$1 tpl=$2 got want
	shift 2
	got=$(dinspect "$C" "$tpl")
	for want in "$@"; do [[ $got == "$want" ]] && return 0; done
	t_err "$what: expected $(printf "'%s' or " "$@" | sed 's/ or $//'), got '$got'"
}
# inspect_jq WHAT JQ-FILTER: the filter over `docker inspect` must be true.
inspect_jq() {
	docker inspect "$C" | jq -e ".[0] | $2" >/dev/null 2>&1 ||
		t_err "$1: docker inspect fails $2"
}

t_begin "runs as user 1000:1000"
inspect_is Config.User '{{.Config.User}}' 1000:1000 1000
t_end

t_begin "read-only root filesystem"
inspect_is HostConfig.ReadonlyRootfs '{{.HostConfig.ReadonlyRootfs}}' true
t_end

t_begin "tmpfs at /tmp"
inspect_jq "tmpfs /tmp" '(.HostConfig.Tmpfs // {} | has("/tmp")) or ([.Mounts[] | select(.Type == "tmpfs" and .Destination == "/tmp")] | length > 0)'
t_end

t_begin "all capabilities dropped, not privileged"
inspect_jq "CapDrop" '.HostConfig.CapDrop // [] | map(ascii_upcase) | index("ALL") != null'
inspect_jq "CapAdd" '(.HostConfig.CapAdd // []) | length == 0'
inspect_is HostConfig.Privileged '{{.HostConfig.Privileged}}' false
t_end

t_begin "no-new-privileges"
inspect_jq "SecurityOpt" '.HostConfig.SecurityOpt // [] | map(select(test("^no-new-privileges(:true|=true)?$"))) | length > 0'
t_end

t_begin "memory limit = SANDBOXD_MEMORY_MB, swap = memory"
inspect_is HostConfig.Memory '{{.HostConfig.Memory}}' $((MEM_MB * 1024 * 1024))
inspect_is HostConfig.MemorySwap '{{.HostConfig.MemorySwap}}' $((MEM_MB * 1024 * 1024))
t_end

t_begin "pids limit = SANDBOXD_PIDS_LIMIT"
inspect_is HostConfig.PidsLimit '{{.HostConfig.PidsLimit}}' $PIDS
t_end

t_begin "nofile ulimit = SANDBOXD_NOFILE_LIMIT"
inspect_jq "Ulimits nofile" "[.HostConfig.Ulimits // [] | .[] | select(.Name == \"nofile\" and .Soft == $NOFILE and .Hard == $NOFILE)] | length == 1"
got=$(docker exec "$C" sh -c 'ulimit -n' 2>&1)
[[ $got == "$NOFILE" ]] || t_err "ulimit -n inside: expected $NOFILE, got $got"
t_end

t_begin "workspace bound read-write at /home/sandbox"
inspect_jq "bind $WS -> /home/sandbox" "[.Mounts[] | select(.Type == \"bind\" and .Source == \"$WS\" and .Destination == \"/home/sandbox\" and .RW == true)] | length == 1"
api GET "/v1/sandboxes/$SB_ID"
expect_json .workspace "$WS"
t_end

t_begin "workspace directory is owned by uid 1000"
if [[ -d $WS ]]; then
	owner=$(stat -c %u "$WS")
	[[ $owner == 1000 ]] || t_err "$WS is owned by uid $owner"
else
	t_err "$WS does not exist"
fi
t_end

t_begin "labels and name"
inspect_is 'label sandboxd.managed' '{{index .Config.Labels "sandboxd.managed"}}' true
inspect_is 'label sandboxd.sandbox' '{{index .Config.Labels "sandboxd.sandbox"}}' "$SB_ID"
inspect_is 'label sandboxd.app' '{{index .Config.Labels "sandboxd.app"}}' "$APP_ID"
inst=$(dinspect "$C" '{{index .Config.Labels "sandboxd.instance"}}')
if [[ -z $inst ]]; then
	t_err "label sandboxd.instance is empty"
else
	inspect_is 'container name' '{{.Name}}' "/sandboxd-${inst,,}-${SB_ID,,}"
fi
t_end

t_begin "inside: id -u is 1000"
got=$(docker exec "$C" id -u 2>&1)
[[ $got == 1000 ]] || t_err "docker exec id -u: expected 1000, got $got"
t_end

t_begin "inside: no capabilities and no_new_privs"
got=$(docker exec "$C" sh -c 'grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs):" /proc/self/status' 2>&1)
grep -Eq '^CapEff:[[:space:]]+0+$' <<<"$got" || t_err "CapEff not zero: $got"
grep -Eq '^CapBnd:[[:space:]]+0+$' <<<"$got" || t_err "CapBnd not zero: $got"
grep -Eq '^NoNewPrivs:[[:space:]]+1$' <<<"$got" || t_err "NoNewPrivs not 1: $got"
t_end

t_begin "inside: / is read-only"
if docker exec "$C" sh -c 'echo x > /it-root-write' >/dev/null 2>&1; then
	t_err "writing /it-root-write succeeded"
fi
if docker exec "$C" sh -c 'echo x > /etc/it-etc-write' >/dev/null 2>&1; then
	t_err "writing /etc/it-etc-write succeeded"
fi
t_end

t_begin "inside: /home/sandbox and /tmp are writable"
out=$(docker exec "$C" sh -c 'echo inside > /home/sandbox/it-probe && echo tmp > /tmp/it-probe && cat /tmp/it-probe' 2>&1)
[[ $out == tmp ]] || t_err "write to /home/sandbox or /tmp failed: $out"
if [[ -f $WS/it-probe ]]; then
	[[ $(cat "$WS/it-probe") == inside ]] || t_err "$WS/it-probe has '$(cat "$WS/it-probe")'"
	[[ $(stat -c %u "$WS/it-probe") == 1000 ]] || t_err "$WS/it-probe is owned by uid $(stat -c %u "$WS/it-probe")"
else
	t_err "a file written to /home/sandbox did not appear in $WS"
fi
t_end

t_begin "inside: the pids limit holds"
got=$(docker exec "$C" cat /sys/fs/cgroup/pids.max 2>/dev/null || docker exec "$C" cat /sys/fs/cgroup/pids/pids.max 2>/dev/null)
[[ $got == "$PIDS" ]] || t_err "pids.max inside: expected $PIDS, got ${got:-<unreadable>}"
t_end

finish
