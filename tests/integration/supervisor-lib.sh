# shellcheck shell=bash
# tests/integration/supervisor-lib.sh: what the tests that drive the
# supervisor, sandboxd-init, on the host share (20-supervisor,
# 23-supervisor-tasks).  Sourced after lib.sh; not a test itself
# (tests/run-integration runs only [0-9]*.sh).
#
# It takes a snapshot of the binary (SBI), finds python3 (PY) and gives:
#   ctl SOCK REQUEST          one request on the control socket; ANS is the answer
#   ctl_body SOCK LINE <BODY  LINE, then stdin as its body (env); ANS
#   ctl_env SOCK NAME=value…  an env request with these entries; ANS
#   jans JQ                   jq -r over ANS
#   status_is SOCK JQ-COND    one status request, JQ-COND true
#   start_sup HOME [VAR=value]…  a supervisor with HOME (SUP, SOCK)
#   stop_sup                  SIGTERM to it and wait (SUP_RC, STOP_MS)
#   alive PID, proc_field PID N, run_conf FILE LINE…, rc_line FIELD…

SBI_SRC=${SANDBOXD_INIT_BIN:-$(dirname "$SANDBOXD_BIN")/sandboxd-init}
[[ -x $SBI_SRC ]] || bail "no supervisor binary at $SBI_SRC (make build/sandboxd-init)"
# A snapshot under a name of its own: a rebuild during the run does not
# change what is tested.
SBI=$IT_TMP/sbi-under-test
cp "$SBI_SRC" "$SBI"
chmod 755 "$SBI"
PY=$(python3 -c 'import sys; print(sys.executable)') || bail "python3 is needed"
# SANDBOXD_INIT_BACKOFF_MS of the supervisors started here (default 1000).
BACKOFF=100

cat >"$IT_TMP/ctl.py" <<'EOF'
# ctl.py req SOCK LINE: sends LINE + "\n", prints the answer.
# ctl.py body SOCK LINE: sends LINE + "\n" + stdin, closes its write side,
# prints the answer.
# ctl.py silent SOCK: connects, sends nothing, prints the seconds until the
# server closes the connection.
import socket, sys, time
mode, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(path)
t0 = time.monotonic()
if mode in ("req", "body"):
    s.sendall(sys.argv[3].encode("utf-8", "surrogateescape") + b"\n")
if mode == "body":
    s.sendall(sys.stdin.buffer.read())
    s.shutdown(socket.SHUT_WR)
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
if mode == "silent":
    print("%.2f" % (time.monotonic() - t0))
else:
    sys.stdout.write(data.decode("utf-8", "replace"))
EOF

# ctl SOCK REQUEST: sets ANS (the answer line).
ctl() { ANS=$("$PY" "$IT_TMP/ctl.py" req "$1" "$2" 2>&1); }
# ctl_body SOCK LINE: LINE, then stdin as the request's body.
ctl_body() { ANS=$("$PY" "$IT_TMP/ctl.py" body "$1" "$2" 2>&1); }
# env_body NAME=value…: the entries, each followed by a NUL.
env_body() { (($# == 0)) || printf '%s\0' "$@"; }
# ctl_env SOCK NAME=value…: "env <N>" and the entries.
ctl_env() {
	local sock=$1 n
	shift
	n=$(env_body "$@" | wc -c)
	ANS=$(env_body "$@" | "$PY" "$IT_TMP/ctl.py" body "$sock" "env $n" 2>&1)
}
# jans JQ: jq -r over ANS.
jans() { jq -r "$1" <<<"$ANS" 2>/dev/null; }
# status_is SOCK JQ-CONDITION: one status request, condition true.
status_is() { ctl "$1" status && [[ $(jans "$2") == true ]]; }

# Supervisors started on the host, each in a session of its own, so that
# cleanup can find whatever they leave behind.
SUP_PIDS=()
kill_sessions() {
	local p
	for p in "${SUP_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		pkill -KILL -s "$p" 2>/dev/null
	done
	return 0
}
IT_CLEANUP_HOOKS+=(kill_sessions)

# start_sup HOME [VAR=value]…: starts the supervisor with HOME, in a clean
# environment plus SUP_ENV and VAR=value… (later ones win); its stderr is
# appended to HOME.err.  Sets SUP (pid) and SOCK; waits for the socket.
SUP_ENV=()
start_sup() {
	local home=$1
	shift
	mkdir -p "$home"
	# One left by a supervisor killed with -9 would look live at once.
	rm -f "$home/.sandboxd/sock"
	env -i PATH="$PATH" HOME="$home" SANDBOXD_INIT_BACKOFF_MS=$BACKOFF \
		"${SUP_ENV[@]}" "$@" setsid "$SBI" >>"$home.err" 2>&1 </dev/null &
	SUP=$!
	SUP_PIDS+=("$SUP")
	SOCK=$home/.sandboxd/sock
	wait_until 5 test -S "$SOCK"
}

# stop_sup: SIGTERM, waits up to 10 s; sets SUP_RC and STOP_MS.
# shellcheck disable=SC2034 # for the caller
stop_sup() {
	local t0
	t0=$(date +%s%N)
	kill -TERM "$SUP" 2>/dev/null
	wait_until 10 sup_gone
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	wait "$SUP" 2>/dev/null
	SUP_RC=$?
}
sup_gone() { ! alive "$SUP"; }

# proc_field PID N: field N after the command name in /proc/PID/stat
# (1 state, 2 ppid, 3 pgrp, 4 session).
proc_field() {
	local s
	local -a f
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	read -ra f <<<"$s"
	echo "${f[$(($2 - 1))]}"
}
# alive PID: the process exists and is not a zombie.
alive() { kill -0 "$1" 2>/dev/null && [[ $(proc_field "$1" 1) != Z ]]; }

# run_conf FILE LINE…: writes run.conf atomically, as the control plane does.
run_conf() {
	local file=$1
	shift
	printf '%s\n' "# sandboxd run.conf 1" "$@" >"$file.tmp" && mv "$file.tmp" "$file"
}
# rc_line FIELD…: one run.conf record, its fields joined by tabs.
rc_line() { local IFS=$'\t'; echo "$*"; }
