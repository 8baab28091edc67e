#!/usr/bin/env bash
# sandboxd doctor: every failure that can be staged here without touching
# the shared engine, one at a time: an engine socket that does not
# answer, compose v1 only / the plugin / neither (shims on PATH), the
# preview port taken by another process, a sandbox image that is
# missing and one that is stale (a container on an older image), no
# daemon (proxy not checked, egress table missing), a daemon whose
# credential proxy cannot listen, a nearly full data filesystem, too
# little memory for a sandbox's limit, and a data directory under a
# parent uid 1000 cannot pass.  Each run's exit status is its worst
# level (0 ok, 1 warn, 2 fail) and the text output has one line per
# check.
. "$(dirname "$0")/lib.sh"
need_test_image

# The model providers doctor checks are the fake one on loopback: the
# test reaches no host outside this machine.
start_fake_provider
PROVIDERS=(SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT"
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1"
	SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1")

# doc [VAR=value]… [-- ARGS…]: `sandboxd doctor --json` with the
# current data directory; JSON in DOC, exit status in DOC_RC.
doc() {
	local -a envs=() args=(--json)
	while (($#)); do
		[[ $1 == -- ]] && { shift; args=("$@"); break; }
		envs+=("$1")
		shift
	done
	DOC=$(/usr/bin/env -i "PATH=${D_PATH:-$PATH}" "HOME=${HOME:-/root}" \
		${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_NETWORK="sbxit-$$-doctor" HTTP_PORT="${D_PORT:-$(free_port)}" \
		SANDBOXD_API_ADDR="${D_API:-127.0.0.1:$(free_port)}" \
		"${PROVIDERS[@]}" "${envs[@]}" "$SANDBOXD_BIN" doctor "${args[@]}" 2>"$IT_TMP/doc.err")
	DOC_RC=$?
}
# check NAME -> its status, message and fix (tab-separated)
check() { jq -r --arg n "$1" '.checks[] | select(.name == $n) | [.status, .message, .fix // ""] | @tsv' <<<"$DOC"; }
# expect_check NAME STATUS TEXT: the check has STATUS and TEXT in its message or fix
expect_check() {
	local got
	got=$(check "$1")
	[[ ($2 == any || ${got%%$'\t'*} == "$2") && $got == *"$3"* ]] ||
		t_err "doctor check $1: expected $2 with \"$3\", got: ${got:-<no such check>}"
}
# The exit status is the worst level.
expect_rc() {
	local want
	want=$(jq -r '{"ok":0,"warn":1,"fail":2}[.status]' <<<"$DOC")
	[[ $DOC_RC == "$want" ]] || t_err "doctor exited $DOC_RC for status $(jq -r .status <<<"$DOC")"
}

mkdir -p "$DATA"

t_begin "engine not reachable: fail, names DOCKER_HOST; exit status 2"
doc DOCKER_HOST="unix://$IT_TMP/no-engine.sock"
expect_check engine fail "unreachable at $IT_TMP/no-engine.sock"
expect_check engine fail "DOCKER_HOST"
expect_check image warn "not checked"
[[ $DOC_RC == 2 ]] || t_err "exit status $DOC_RC, not 2"
expect_rc
t_end

t_begin "the text output: one line per check, the fix on it"
doc DOCKER_HOST="unix://$IT_TMP/no-engine.sock" -- 
lines=$(grep -c . <<<"$DOC")
doc DOCKER_HOST="unix://$IT_TMP/no-engine.sock"
n=$(jq '.checks | length' <<<"$DOC")
[[ $lines == "$n" ]] || t_err "$lines lines of text for $n checks"
doc DOCKER_HOST="unix://$IT_TMP/no-engine.sock" --
grep -qE '^fail  engine    .* -- fix: start the engine' <<<"$DOC" || t_err "text: $(head -2 <<<"$DOC")"
t_end

t_begin "compose: v1 only (warn), the plugin (ok), neither (warn)"
SHIM=$IT_TMP/shim
mkdir -p "$SHIM/v1" "$SHIM/v2" "$SHIM/none"
printf '#!/bin/sh\nexit 1\n' >"$SHIM/v1/docker"
printf '#!/bin/sh\n[ "$1 $2" = "version --short" ] && { echo 1.29.2; exit 0; }\nexit 1\n' >"$SHIM/v1/docker-compose"
printf '#!/bin/sh\n[ "$1 $2 $3" = "compose version --short" ] && { echo 2.24.6; exit 0; }\nexit 1\n' >"$SHIM/v2/docker"
printf '#!/bin/sh\nexit 1\n' >"$SHIM/none/docker"
chmod +x "$SHIM"/*/*
D_PATH=$SHIM/v1 doc
expect_check compose warn "only docker-compose 1.29.2 (v1)"
D_PATH=$SHIM/v2 doc
expect_check compose ok "docker compose 2.24.6 (the plugin)"
D_PATH=$SHIM/none doc
expect_check compose warn "neither"
t_end

t_begin "the preview port taken by another process: fail, names it"
LPORT=$(free_port)
python3 -c "import socket,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $LPORT)); s.listen(); time.sleep(300)" &
LPID=$!
wait_until 5 eval "ss -ltn 'sport = :$LPORT' | grep -q LISTEN" || t_err "the listener did not start"
D_PORT=$LPORT doc
expect_check port fail "port $LPORT (HTTP_PORT, the preview edge) is taken by python3 (pid $LPID)"
expect_check port fail "set HTTP_PORT"
expect_rc
t_end

t_begin "the sandbox image missing: fail, says how to build it"
doc SANDBOXD_IMAGE="sbxit-doctor-missing-$$:none"
expect_check image fail "sbxit-doctor-missing-$$:none is missing"
expect_check image fail "make image"
t_end

t_begin "no daemon: the proxy is not checked and the egress table is missing"
doc
expect_check proxy warn "no daemon answers"
expect_check egress fail "is missing"
expect_check egress fail "the daemon installs it at start"
t_end

t_begin "low memory for the sandboxes' limit: fail"
doc SANDBOXD_MEMORY_MB=1048576
expect_check memory fail "each allowed 1048576 MiB"
expect_check memory fail "SANDBOXD_MEMORY_MB"
t_end

t_begin "a data directory uid 1000 cannot pass through: fail, names the directory"
LOCKED=$IT_TMP/locked
mkdir -p "$LOCKED/data/workspaces"
chmod 700 "$LOCKED"
doc SANDBOXD_DATA_DIR="$LOCKED/data"
expect_check datadir fail "uid 1000 cannot pass through $LOCKED (mode 0700"
expect_check datadir fail "chmod o+x $LOCKED"
chmod 755 "$LOCKED"
doc SANDBOXD_DATA_DIR="$LOCKED/data"
expect_check datadir ok "uid 1000 can reach $LOCKED/data/workspaces"
t_end

t_begin "a nearly full data filesystem: fail"
SMALL=$IT_TMP/small
umount_small() { umount "$SMALL"; }
mkdir -p "$SMALL"
if mount -t tmpfs -o size=64m tmpfs "$SMALL" 2>/dev/null; then
	IT_CLEANUP_HOOKS+=(umount_small)
	doc SANDBOXD_DATA_DIR="$SMALL/data"
	expect_check disk fail "MiB free of 64 MiB"
	expect_check disk fail "sandboxd gc"
else
	note "cannot mount a tmpfs here; the thresholds are unit-tested"
fi
t_end

D_API=127.0.0.1:$(free_port)
EPORT=$(free_port)
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_API_ADDR="$D_API" HTTP_PORT="$EPORT" \
	SANDBOXD_NETWORK="sbxit-$$-doctor" || bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

t_begin "with a daemon: its port, proxy, network and egress rules are ok"
create_app doctor && create_sandbox "$APP_ID" || t_err "setup: ${T_ERRS[*]}"
D_PORT=$EPORT doc SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_API_TOKENS="it=$IT_TOKEN"
expect_check port ok "is sandboxd's own (pid $DAEMON_PID)"
expect_check proxy ok "the credential proxy listens at http://"
expect_check provider ok "3 model providers reachable"
expect_check network ok "sbxit-$$-doctor is ready"
expect_check egress ok "is installed (public)"
expect_check image ok "1 sandbox container use it"
expect_check clock any "differ by"
expect_rc
t_end

t_begin "a sandbox on another image than SANDBOXD_IMAGE: stale (compared by id)"
D_PORT=$EPORT doc SANDBOXD_IMAGE="$IT_IMAGE" SANDBOXD_API_TOKENS="it=$IT_TOKEN"
expect_check image warn "1 of 1 sandbox containers use image sha256:"
expect_check image warn "not $IT_IMAGE"
t_end

t_begin "the daemon's status needs a token"
D_PORT=$EPORT doc SANDBOXD_IMAGE="$TEST_IMAGE"
expect_check proxy warn "GET /v1/status answered 401"
expect_check proxy warn "SANDBOXD_API_TOKENS"
t_end

stop_daemon
PPORT_TAKEN=$(free_port)
python3 -c "import socket,time
s=socket.socket(); s.bind(('0.0.0.0', $PPORT_TAKEN)); s.listen(); time.sleep(300)" &
PPID2=$!
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_API_ADDR="$D_API" HTTP_PORT="$EPORT" \
	SANDBOXD_NETWORK="sbxit-$$-doctor" SANDBOXD_PROXY_PORT="$PPORT_TAKEN" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

t_begin "the credential proxy cannot listen: fail, with the daemon's reason"
wait_status '.proxy.listening == false and (.proxy.error // "") != ""' 15
D_PORT=$EPORT doc SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_API_TOKENS="it=$IT_TOKEN" SANDBOXD_PROXY_PORT="$PPORT_TAKEN"
expect_check proxy fail "the credential proxy does not listen: "
expect_check proxy fail "SANDBOXD_PROXY_ADDR"
note "$(check proxy | cut -f2)"
expect_rc
t_end

finish
