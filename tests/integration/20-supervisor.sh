#!/usr/bin/env bash
# The in-sandbox supervisor, sandboxd-init (docs/supervisor.md), driven as
# the real static binary, two ways:
#   (a) on the host, as an ordinary process (a child subreaper, not PID 1)
#       with HOME in a temp dir: run.conf, the control socket (ping, status,
#       restart, reload, bad requests, a silent client), health with a real
#       HTTP server, backoff and crashloop, log rotation, orphan reaping,
#       seeding from a template dir, shutdown, the app's environment (env:
#       in the web and worker processes' environ, never on disk, refusals,
#       framing);
#   (b) as PID 1 of a hardened container of the sandbox image (read-only
#       root, no capabilities, uid 1000): crash loop, logs, zombies, a web
#       process that never listens, health through the container's address,
#       docker stop, and the supervisor's RSS.
# The control socket is spoken to with python3's socket module.
#
# Test knobs of the supervisor used here (documented in docs/supervisor.md):
#   SANDBOXD_INIT_BACKOFF_MS=100   first restart delay (default 1000)
#   SANDBOXD_INIT_TEMPLATES=DIR    template root (default /opt/sandboxd/templates)
#
#   bash tests/integration/20-supervisor.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/supervisor-lib.sh"

# --- helpers ------------------------------------------------------------------

# expect_status_within SECONDS SOCK JQ-CONDITION
expect_status_within() {
	wait_until "$1" status_is "$2" "$3" ||
		t_err "after $1 s, status is not ($3): ${ANS:0:600}"
}

# Every process, in sh for the container: "pid state ppid session".
# shellcheck disable=SC2016
PROC_SH='for d in /proc/[0-9]*; do s=$(cat $d/stat 2>/dev/null) || continue; r=${s##*) }; set -- $r; echo "${d#/proc/} $1 $2 $4"; done'
host_procs() { bash -c "$PROC_SH"; }

# zombies_of PID (host): zombie children of PID.
zombies_of() { host_procs | awk -v p="$1" '$2 == "Z" && $3 == p { print $1 }' | sort; }
session_procs() { host_procs | awk -v s="$1" '$4 == s && $2 != "Z" { print $1 }'; }

# no_zombie_buildup LISTER: samples zombies 20 times over 2 s; fails when
# one stays a zombie for two samples in a row or 3 pile up.
no_zombie_buildup() {
	local prev="" cur i lister=$1
	for ((i = 0; i < 20; i++)); do
		cur=$($lister)
		if (($(wc -w <<<"$cur") >= 3)); then
			t_err "zombies pile up: $(tr '\n' ' ' <<<"$cur")"
			return 1
		fi
		if [[ -n $cur && -n $prev ]] && [[ -n $(comm -12 <(echo "$prev") <(echo "$cur")) ]]; then
			t_err "zombie(s) not reaped for 100 ms: $(comm -12 <(echo "$prev") <(echo "$cur") | tr '\n' ' ')"
			return 1
		fi
		prev=$cur
		sleep 0.1
	done
}

file_size() { stat -c %s "$1" 2>/dev/null || echo -1; }
# An exact multiple of the line length, so the last line is whole.
FLOOD_LINE=0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz
FLOOD_BYTES=$((73 * 40000))
FLOOD_CMD="yes $FLOOD_LINE | head -c $FLOOD_BYTES; exec sleep 1000"

# wait_flood_done DIR: flood.log.1 exists and flood.log stopped growing.
wait_flood_done() {
	local d=$1 a b i
	wait_until 15 test -s "$d/flood.log.1" || return 1
	for ((i = 0; i < 50; i++)); do
		a=$(file_size "$d/flood.log")
		sleep 0.3
		b=$(file_size "$d/flood.log")
		((a == b)) && return 0
	done
	return 1
}

# check_flood_logs DIR: flood.log at most 1 MiB + one line, flood.log.1
# there, every line whole.
check_flood_logs() {
	local d=$1 cur old bad
	cur=$(file_size "$d/flood.log")
	old=$(file_size "$d/flood.log.1")
	((cur >= 0 && cur <= 1048576 + 73)) || t_err "flood.log is $cur bytes (cap 1 MiB + one line)"
	((old > 0 && old <= 1048576 + 73)) || t_err "flood.log.1 is $old bytes (want 0 < size <= 1 MiB + one line)"
	bad=$(cat "$d/flood.log.1" "$d/flood.log" 2>/dev/null | grep -cvE "^($FLOOD_LINE|sandboxd-init: .*)\$")
	((bad == 0)) || t_err "$bad lines in flood.log{,.1} are cut or foreign"
}

# ==============================================================================
# (a) on the host
# ==============================================================================

H=$IT_TMP/host
mkdir -p "$H/.sandboxd"
PORT=$(free_port)
CONF=$H/.sandboxd/run.conf
WEB_CMD="exec $PY -m http.server $PORT --bind 0.0.0.0"
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 "$WEB_CMD")" \
	"$(rc_line worker ticker 0 'while true; do echo tick; sleep 0.2; done')" \
	"$(rc_line worker extra 1 'exec sleep 1000')" \
	"$(rc_line build 60 'echo not run by the supervisor')"

t_begin "host: starts as a subreaper, processes from run.conf, socket 0600"
start_sup "$H" || bail "no control socket after 5 s; stderr: $(tail -n 5 "$H.err")"
[[ $(cat "/proc/$SUP/comm") == sbi-under-test ]] || t_err "pid $SUP is not the supervisor"
[[ $(stat -c %a "$SOCK") == 600 ]] || t_err "socket mode is $(stat -c %a "$SOCK"), not 600"
expect_status_within 5 "$SOCK" '[.processes[].name] == ["web","ticker","extra"]'
expect_status_within 5 "$SOCK" '.configured == true'
t_end

t_begin "host: ping"
ctl "$SOCK" ping
[[ $ANS == '{"ok":true,"version":"0.1.0"}' ]] || t_err "ping answered: $ANS"
t_end

t_begin "host: status is valid JSON with every field"
ctl "$SOCK" status
jq -e . <<<"$ANS" >/dev/null 2>&1 || t_err "not JSON: $ANS"
jq -e '.ok == true and (.configured | type == "boolean") and
	(.health | IN("none","starting","ready","error")) and
	(.health_detail | type == "string") and
	all(.processes[]; (.name | type == "string") and (.kind | IN("web","worker")) and
		(.state | IN("starting","running","backoff","crashloop","stopped")) and
		(.pid | type == "number") and (.restarts | type == "number") and
		(.exit_code == null or (.exit_code | type == "number"))) and
	(.processes[] | select(.name == "web") | .port) == '"$PORT"' and
	([.processes[] | select(.kind == "worker") | has("port")] | any | not)' <<<"$ANS" >/dev/null ||
	t_err "fields missing or of the wrong type: $ANS"
t_end

t_begin "host: health ready with a real HTTP server, web running, worker running"
expect_status_within 15 "$SOCK" '.health == "ready"'
expect_status_within 5 "$SOCK" '(.processes[] | select(.name == "web") | .state) == "running"'
[[ $(jans .health_detail) == *"HTTP 200"* ]] || t_err "health_detail: $(jans .health_detail)"
[[ $(jans .health_detail) != 127.0.0.1:* ]] || note "no non-loopback IPv4 on this host: checked 127.0.0.1"
expect_status_within 5 "$SOCK" '(.processes[] | select(.name == "ticker") | .state) == "running"'
t_end

t_begin "host: logs are written per process"
wait_until 5 grep -qs tick "$H/.sandboxd/logs/ticker.log" || t_err "no tick in ticker.log"
grep -q "sandboxd-init: started (pid" "$H/.sandboxd/logs/web.log" || t_err "web.log lacks the start line"
wait_until 5 grep -qs '"GET / HTTP/1.0" 200' "$H/.sandboxd/logs/web.log" ||
	t_err "web.log lacks the health check's request"
t_end

t_begin "host: restart <name>"
ctl "$SOCK" status
old_web=$(jans '.processes[] | select(.name == "web") | .pid')
old_ticker=$(jans '.processes[] | select(.name == "ticker") | .pid')
ctl "$SOCK" "restart web"
[[ $ANS == '{"ok":true}' ]] || t_err "restart web answered: $ANS"
expect_status_within 10 "$SOCK" '(.processes[] | select(.name == "web") | .pid != '"$old_web"' and .pid > 0 and .restarts == 1 and .state == "running")'
[[ $(jans '.processes[] | select(.name == "ticker") | .pid') == "$old_ticker" ]] || t_err "ticker was restarted too"
kill -0 "$old_web" 2>/dev/null && t_err "old web pid $old_web still alive"
ctl "$SOCK" "restart nope"
[[ $ANS == '{"ok":false,"error":"no such process: nope"}' ]] || t_err "restart nope answered: $ANS"
t_end

t_begin "host: unknown, overlong and odd requests"
ctl "$SOCK" "hello"
[[ $ANS == '{"ok":false,"error":"unknown request"}' ]] || t_err "hello: $ANS"
ctl "$SOCK" "$(head -c 5000 /dev/zero | tr '\0' x)"
[[ $ANS == '{"ok":false,"error":"request too long"}' ]] || t_err "5000 bytes: $ANS"
ctl "$SOCK" $'restart \xff"\\'
jq -e '.ok == false and (.error | startswith("no such process: "))' <<<"$ANS" >/dev/null 2>&1 ||
	t_err "a name with invalid UTF-8 and quotes: not valid JSON: $ANS"
t_end

t_begin "host: a silent client is dropped after 2 s and does not stall others"
"$PY" "$IT_TMP/ctl.py" silent "$SOCK" >"$IT_TMP/silent" &
silent=$!
sleep 0.3
t0=$(date +%s%N)
ctl "$SOCK" ping
ms=$((($(date +%s%N) - t0) / 1000000))
[[ $(jans .ok) == true ]] || t_err "ping beside a silent client: $ANS"
((ms < 1000)) || t_err "ping took $ms ms beside a silent client"
wait "$silent"
secs=$(cat "$IT_TMP/silent")
awk -v s="$secs" 'BEGIN { exit !(s >= 1.5 && s <= 3.5) }' || t_err "silent client dropped after ${secs:-?} s, want ~2"
t_end

t_begin "host: reload applies a changed run.conf (changed and removed restarted, rest left alone)"
ctl "$SOCK" status
web_pid=$(jans '.processes[] | select(.name == "web") | .pid')
ticker_pid=$(jans '.processes[] | select(.name == "ticker") | .pid')
extra_pid=$(jans '.processes[] | select(.name == "extra") | .pid')
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 "$WEB_CMD")" \
	"$(rc_line worker ticker 0 'while true; do echo tock; sleep 0.2; done')" \
	"$(rc_line worker fresh 0 'exec sleep 1000')"
ctl "$SOCK" reload
[[ $ANS == '{"ok":true}' ]] || t_err "reload answered: $ANS"
expect_status_within 5 "$SOCK" '[.processes[].name] == ["web","ticker","fresh"]'
expect_status_within 5 "$SOCK" '(.processes[] | select(.name == "ticker") | .pid != '"$ticker_pid"' and .pid > 0)'
[[ $(jans '.processes[] | select(.name == "web") | .pid') == "$web_pid" ]] || t_err "unchanged web was restarted"
wait_until 5 grep -qs tock "$H/.sandboxd/logs/ticker.log" || t_err "no tock after reload"
wait_until 5 bash -c "! kill -0 $extra_pid 2>/dev/null" || t_err "removed worker extra (pid $extra_pid) still runs"
t_end

t_begin "host: a bad run.conf is refused naming the line; processes kept"
ctl "$SOCK" status
before=$(jans '[.processes[] | "\(.name)=\(.pid)"] | join(" ")')
run_conf "$CONF" "$(rc_line worker ok 0 'exec sleep 1000')" "$(rc_line web 0 / 0 'exec sleep 1000')"
ctl "$SOCK" reload
[[ $(jans .ok) == false && $(jans .error) == "run.conf line 3: port must be 1-65535, not \"0\"" ]] ||
	t_err "reload of a bad run.conf answered: $ANS"
ctl "$SOCK" status
[[ $(jans '[.processes[] | "\(.name)=\(.pid)"] | join(" ")') == "$before" ]] ||
	t_err "processes changed: before $before, now $(jans '[.processes[] | "\(.name)=\(.pid)"] | join(" ")')"
grep -q "reload refused: run.conf line 3" "$H.err" || t_err "the refusal is not in the supervisor's log"
t_end

t_begin "host: a crashing web process: backoff with growing delays, then crashloop; the worker keeps running"
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 'echo boom; exit 1')" \
	"$(rc_line worker ticker 0 'while true; do echo tock; sleep 0.2; done')"
ctl "$SOCK" status
ticker_pid=$(jans '.processes[] | select(.name == "ticker") | .pid')
: >"$IT_TMP/states"
t0=$(date +%s%N)
ctl "$SOCK" reload
[[ $ANS == '{"ok":true}' ]] || t_err "reload answered: $ANS"
crash_ms=
for ((i = 0; i < 200; i++)); do
	ctl "$SOCK" status
	jans '(.processes[] | select(.name == "web") | .state) + " " + .health' >>"$IT_TMP/states"
	if [[ $(jans '.processes[] | select(.name == "web") | .state') == crashloop ]]; then
		crash_ms=$((($(date +%s%N) - t0) / 1000000))
		break
	fi
	sleep 0.05
done
if [[ -z $crash_ms ]]; then
	t_err "no crashloop within 10 s; states seen: $(sort -u "$IT_TMP/states" | tr '\n' ',')"
else
	note "crashloop after $crash_ms ms (backoff base $BACKOFF ms)"
	# 100+200+400+800+1600 ms of backoff at least.
	((crash_ms >= 3000)) || t_err "crashloop after only $crash_ms ms: delays did not grow"
fi
grep -q '^backoff error$' "$IT_TMP/states" || t_err "never saw state backoff with health error: $(sort -u "$IT_TMP/states" | tr '\n' ',')"
delays=$(sed -nE 's/^sandboxd-init: restarting in ([0-9]+) ms$/\1/p' "$H/.sandboxd/logs/web.log" | tail -n 5 | tr '\n' ' ')
[[ $delays == "100 200 400 800 1600 " ]] || t_err "restart delays in web.log: '$delays', want 100 200 400 800 1600"
booms=$(grep -c '^boom$' "$H/.sandboxd/logs/web.log")
((booms == 6)) || t_err "boom printed $booms times, want 6 (first run + 5 restarts)"
jq -e '(.processes[] | select(.name == "web") | .exit_code == 1 and .pid == 0 and .restarts == 5) and .health == "error"' <<<"$ANS" >/dev/null ||
	t_err "crashloop status: $ANS"
[[ $(jans .health_detail) == *crashloop* ]] || t_err "health_detail: $(jans .health_detail)"
sleep 1
ctl "$SOCK" status
[[ $(jans '.processes[] | select(.name == "web") | .restarts') == 5 ]] || t_err "restarted while in crashloop: $ANS"
[[ $(jans '.processes[] | select(.name == "ticker") | "\(.pid) \(.state)"') == "$ticker_pid running" ]] ||
	t_err "the worker did not keep running: $ANS"
t_end

t_begin "host: restart leaves crashloop"
ctl "$SOCK" "restart web"
[[ $ANS == '{"ok":true}' ]] || t_err "restart web answered: $ANS"
expect_status_within 3 "$SOCK" '(.processes[] | select(.name == "web") | .restarts > 5)'
expect_status_within 10 "$SOCK" '(.processes[] | select(.name == "web") | .state) == "crashloop"'
t_end

t_begin "host: reload with a fixed web process leaves crashloop"
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 "$WEB_CMD")" \
	"$(rc_line worker ticker 0 'while true; do echo tock; sleep 0.2; done')"
ctl "$SOCK" reload
[[ $ANS == '{"ok":true}' ]] || t_err "reload answered: $ANS"
expect_status_within 15 "$SOCK" '.health == "ready" and (.processes[] | select(.name == "web") | .state == "running" and .restarts == 0)'
t_end

t_begin "host: a process flooding its output: log capped at 1 MiB and rotated once, supervisor responsive"
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 "$WEB_CMD")" \
	"$(rc_line worker ticker 0 'while true; do echo tock; sleep 0.2; done')" \
	"$(rc_line worker flood 0 "$FLOOD_CMD")"
ctl "$SOCK" reload
slow=0
for ((i = 0; i < 20; i++)); do
	t0=$(date +%s%N)
	ctl "$SOCK" ping
	(((($(date +%s%N) - t0) / 1000000) < 500)) || slow=$((slow + 1))
	[[ $(file_size "$H/.sandboxd/logs/flood.log.1") -gt 0 ]] && break
	sleep 0.1
done
((slow == 0)) || t_err "$slow pings took over 500 ms during the flood"
wait_flood_done "$H/.sandboxd/logs" || t_err "flood.log did not settle"
check_flood_logs "$H/.sandboxd/logs"
t_end

t_begin "host: orphaned grandchildren are reaped (same group, new session, double fork)"
run_conf "$CONF" \
	"$(rc_line web "$PORT" / 0 "$WEB_CMD")" \
	"$(rc_line worker orphans 0 'while true; do (sleep 0.05 &); setsid sh -c "sleep 0.05 & exit 0" & sleep 0.1; done')"
ctl "$SOCK" reload
sleep 1
no_zombie_buildup "zombies_of $SUP"
grep -q "reaped orphan pid" "$H.err" || t_err "the supervisor's log shows no reaped orphan"
t_end

t_begin "host: SIGTERM stops everything and exits 0 within 5 s"
mapfile -t procs < <(session_procs "$SUP")
((${#procs[@]} >= 3)) || t_err "expected the supervisor and its processes in session $SUP, found ${procs[*]}"
stop_sup
((SUP_RC == 0)) || t_err "exit status $SUP_RC, want 0"
((STOP_MS < 5000)) || t_err "took $STOP_MS ms"
left=$(session_procs "$SUP" | tr '\n' ' ')
[[ -z $left ]] || t_err "processes left: $left"
[[ ! -e $SOCK ]] || t_err "the socket was left behind"
t_end

t_begin "host: a process ignoring SIGTERM is killed after 5 s; exit 0 within Docker's 10 s"
H2=$IT_TMP/host2
mkdir -p "$H2/.sandboxd"
run_conf "$H2/.sandboxd/run.conf" "$(rc_line worker stubborn 0 "trap '' TERM; while true; do sleep 0.1; done")"
if start_sup "$H2"; then
	sleep 1.5
	stop_sup
	((SUP_RC == 0)) || t_err "exit status $SUP_RC, want 0"
	((STOP_MS >= 4500 && STOP_MS < 8000)) || t_err "took $STOP_MS ms, want 5 s grace then SIGKILL"
	grep -q "stubborn.*killed by signal 9" "$H2.err" || t_err "no SIGKILL of stubborn in the log: $(tail -n 5 "$H2.err")"
	[[ -z $(session_procs "$SUP") ]] || t_err "processes left"
else
	t_err "no socket"
fi
t_end

t_begin "host: a bad run.conf at boot starts nothing and says why; reload fixes it"
H3=$IT_TMP/host3
mkdir -p "$H3/.sandboxd"
printf 'worker\tok\t0\tsleep 100\nweb\t3000\t/\t0\n' >"$H3/.sandboxd/run.conf"
if start_sup "$H3"; then
	ctl "$SOCK" status
	jq -e '.configured == false and .health == "none" and .processes == [] and
		(.health_detail | startswith("run.conf line 2: want web"))' <<<"$ANS" >/dev/null ||
		t_err "status: $ANS"
	grep -q "run.conf line 2.*nothing started" "$H3.err" || t_err "not logged: $(cat "$H3.err")"
	run_conf "$H3/.sandboxd/run.conf" "$(rc_line worker ok 0 'exec sleep 100')"
	ctl "$SOCK" reload
	expect_status_within 5 "$SOCK" '.configured == true and .processes[0].name == "ok" and .processes[0].pid > 0'
	rm "$H3/.sandboxd/run.conf"
	ctl "$SOCK" reload
	expect_status_within 5 "$SOCK" '.configured == false and .processes == []'
	kill -HUP "$SUP"
	run_conf "$H3/.sandboxd/run.conf" "$(rc_line worker hup 0 'exec sleep 100')"
	kill -HUP "$SUP"
	expect_status_within 5 "$SOCK" '.configured == true and .processes[0].name == "hup"'
	stop_sup
else
	t_err "no socket"
fi
t_end

t_begin "host: seeding: an empty app dir is seeded once, before processes start"
TPL=$IT_TMP/templates
mkdir -p "$TPL/demo/sub"
echo "<h1>demo template</h1>" >"$TPL/demo/index.html"
echo nested >"$TPL/demo/sub/file.txt"
chmod 640 "$TPL/demo/sub/file.txt"
H4=$IT_TMP/host4
mkdir -p "$H4/.sandboxd"
run_conf "$H4/.sandboxd/run.conf" "$(rc_line worker show 0 'cat index.html; exec sleep 100')"
if start_sup "$H4" SANDBOXD_PRESET=demo SANDBOXD_INIT_TEMPLATES="$TPL"; then
	[[ -f $H4/.sandboxd/seeded ]] || t_err "no .sandboxd/seeded once the socket is up"
	cmp -s "$TPL/demo/index.html" "$H4/workspace/app/index.html" || t_err "index.html not copied"
	[[ $(cat "$H4/workspace/app/sub/file.txt" 2>/dev/null) == nested ]] || t_err "sub/file.txt not copied"
	[[ $(stat -c %a "$H4/workspace/app/sub/file.txt" 2>/dev/null) == 640 ]] || t_err "mode not preserved (cp -a)"
	wait_until 5 grep -qs "demo template" "$H4/.sandboxd/logs/show.log" ||
		t_err "the process did not see the seeded app (show.log: $(cat "$H4/.sandboxd/logs/show.log" 2>/dev/null))"
	stop_sup
	# Emptied by the user later: never seeded again.
	rm -rf "$H4/workspace/app/"*
	if start_sup "$H4" SANDBOXD_PRESET=demo SANDBOXD_INIT_TEMPLATES="$TPL"; then
		[[ -z $(ls -A "$H4/workspace/app") ]] || t_err "seeded a second time: $(ls -A "$H4/workspace/app")"
		stop_sup
	else
		t_err "no socket at the second boot"
	fi
else
	t_err "no socket; stderr: $(tail -n 5 "$H4.err")"
fi
t_end

t_begin "host: seeding: a non-empty app dir is untouched; no preset still marks the first boot"
H5=$IT_TMP/host5
mkdir -p "$H5/workspace/app"
echo mine >"$H5/workspace/app/mine.txt"
if start_sup "$H5" SANDBOXD_PRESET=demo SANDBOXD_INIT_TEMPLATES="$TPL"; then
	[[ $(ls -A "$H5/workspace/app") == mine.txt ]] || t_err "app dir changed: $(ls -A "$H5/workspace/app")"
	[[ -f $H5/.sandboxd/seeded ]] || t_err "no marker after finding the app dir non-empty"
	stop_sup
else
	t_err "no socket"
fi
H6=$IT_TMP/host6
if start_sup "$H6"; then
	[[ -f $H6/.sandboxd/seeded && -z $(ls -A "$H6/workspace/app") ]] || t_err "no preset: marker missing or app dir not empty"
	stop_sup
else
	t_err "no socket"
fi
t_end

# --- the app's environment (env) ----------------------------------------------

# env_of PID NAME: NAME's value in the process's environment; fails when
# it has none.
env_of() {
	grep -qz "^$2=" "/proc/$1/environ" 2>/dev/null || return 1
	local v
	v=$(grep -z "^$2=" "/proc/$1/environ" | tr -d '\0')
	printf '%s' "${v#"$2"=}"
}
# env_count PID NAME: how many entries for NAME the environment has.
env_count() { grep -zc "^$2=" "/proc/$1/environ" 2>/dev/null; }
# env_pids: sets WEB7 and W7 from a status request.
env_pids() {
	ctl "$SOCK" status
	WEB7=$(jans '.processes[] | select(.name == "web") | .pid')
	W7=$(jans '.processes[] | select(.name == "w") | .pid')
}
# env_restarted: both processes run again with new pids (then env_pids).
env_restarted() {
	expect_status_within 10 "$SOCK" "all(.processes[]; .pid > 0) and
		(any(.processes[]; .pid == $WEB7 or .pid == $W7) | not)" && env_pids
}

H7=$IT_TMP/host7
mkdir -p "$H7/.sandboxd"
P7=$(free_port)
APP_SECRET=app-secret-$RANDOM$RANDOM-value
run_conf "$H7/.sandboxd/run.conf" \
	"$(rc_line web "$P7" / 0 "exec $PY -m http.server $P7 --bind 0.0.0.0")" \
	"$(rc_line worker w 0 'exec sleep 1000')"

t_begin "host: env: web and workers get the app's environment and restart; status counts it"
if start_sup "$H7" SHARED_VAR=from-container; then
	expect_status_within 5 "$SOCK" '.env_count == 0 and all(.processes[]; .pid > 0)'
	env_pids
	env_of "$W7" APP_SECRET >/dev/null && t_err "APP_SECRET before any env request"
	ctl_env "$SOCK" "APP_PLAIN=plain value" "APP_SECRET=$APP_SECRET" \
		"SHARED_VAR=from-app" $'MULTI=line1\nline2=x' "EMPTY="
	[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env answered: $ANS"
	env_restarted || t_err "web and w were not restarted"
	expect_status_within 2 "$SOCK" '.env_count == 5'
	for p in "$WEB7" "$W7"; do
		[[ $(env_of "$p" APP_SECRET) == "$APP_SECRET" ]] || t_err "pid $p: APP_SECRET is '$(env_of "$p" APP_SECRET)'"
		[[ $(env_of "$p" APP_PLAIN) == "plain value" ]] || t_err "pid $p: APP_PLAIN"
		[[ $(env_of "$p" MULTI) == $'line1\nline2=x' ]] || t_err "pid $p: MULTI is '$(env_of "$p" MULTI)'"
		env_of "$p" EMPTY >/dev/null || t_err "pid $p: no EMPTY"
		# The app's replaces the container's, once.
		[[ $(env_of "$p" SHARED_VAR) == from-app && $(env_count "$p" SHARED_VAR) == 1 ]] ||
			t_err "pid $p: SHARED_VAR is '$(env_of "$p" SHARED_VAR)' ($(env_count "$p" SHARED_VAR) entries)"
		[[ $(env_of "$p" HOST) == 0.0.0.0 && $(env_of "$p" HOME) == "$H7" ]] || t_err "pid $p: HOST or HOME lost"
	done
	[[ $(env_of "$WEB7" PORT) == "$P7" ]] || t_err "web: PORT is '$(env_of "$WEB7" PORT)'"
	env_of "$W7" PORT >/dev/null && t_err "the worker has a PORT"
	grep -q "restarting: the app's environment changed" "$H7/.sandboxd/logs/w.log" || t_err "w.log does not say why it restarted"
	grep -q "the app's environment changed (5 variables)" "$H7.err" || t_err "not in the supervisor's log: $(tail -n 3 "$H7.err")"
	expect_status_within 15 "$SOCK" '.health == "ready"'
else
	t_err "no socket; stderr: $(tail -n 5 "$H7.err")"
fi
t_end

t_begin "host: env: the same set in another order changes nothing; a refused set keeps the old one"
ctl_env "$SOCK" "EMPTY=" $'MULTI=line1\nline2=x' "SHARED_VAR=from-app" "APP_SECRET=$APP_SECRET" "APP_PLAIN=plain value"
[[ $ANS == '{"ok":true,"changed":false}' ]] || t_err "the same set answered: $ANS"
while IFS='|' read -r entries want; do
	read -ra args <<<"$entries"
	ctl_env "$SOCK" "${args[@]}"
	[[ $ANS == "$want" ]] || t_err "env $entries: answered $ANS, want $want"
done <<'REFUSED'
A=1 PATH=/x|{"ok":false,"error":"env: entry 2: PATH is reserved"}
PORT=1|{"ok":false,"error":"env: entry 1: PORT is reserved"}
LD_PRELOAD=/x.so|{"ok":false,"error":"env: entry 1: LD_PRELOAD is reserved"}
SANDBOXD_INIT_BACKOFF_MS=10|{"ok":false,"error":"env: entry 1: SANDBOXD_INIT_BACKOFF_MS is reserved"}
A=1 B=2 A=3|{"ok":false,"error":"env: A is given twice"}
1A=x|{"ok":false,"error":"env: entry 1: the name must match [A-Za-z_][A-Za-z0-9_]{0,127}"}
A=1 NOEQUALS|{"ok":false,"error":"env: entry 2 is not NAME=value"}
REFUSED
ctl_body "$SOCK" "env 3" < <(printf 'A=1')
[[ $ANS == '{"ok":false,"error":"env: the last entry is not NUL-terminated"}' ]] || t_err "no NUL: $ANS"
ctl_body "$SOCK" "env 100" < <(printf 'A=1\0')
[[ $ANS == '{"ok":false,"error":"the request ended before its body"}' ]] || t_err "a short body: $ANS"
ctl_body "$SOCK" "env 524289" </dev/null
[[ $ANS == '{"ok":false,"error":"request too long"}' ]] || t_err "over 512 KiB: $ANS"
ctl_body "$SOCK" "env 01" </dev/null
[[ $ANS == '{"ok":false,"error":"unknown request"}' ]] || t_err "env 01: $ANS"
ctl "$SOCK" status
[[ $(jans .env_count) == 5 ]] || t_err "env_count after refusals: $(jans .env_count)"
[[ $(jans '.processes[] | select(.name == "w") | .pid') == "$W7" ]] || t_err "a refused set restarted w"
grep -q "env refused: env: entry 2: PATH is reserved" "$H7.err" || t_err "the refusal is not logged"
t_end

t_begin "host: env: 200 KiB and 500 KiB bodies in many reads; the set is replaced as a whole"
V64=$(head -c 65536 /dev/zero | tr '\0' v)
ctl_env "$SOCK" "BIG1=$V64" "BIG2=$V64" "BIG3=${V64}w" "APP_SECRET=$APP_SECRET"
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env answered: ${ANS:0:300}"
env_restarted || t_err "not restarted"
big=$(env_of "$W7" BIG3)
((${#big} == 65537)) || t_err "BIG3 is ${#big} bytes, want 65537"
env_of "$W7" APP_PLAIN >/dev/null && t_err "APP_PLAIN outlived the set it was in"
[[ $(env_of "$W7" SHARED_VAR) == from-container ]] || t_err "SHARED_VAR is not the container's again"
# Just below the cap: one value far over what execve takes for one
# string (128 KiB), so the processes cannot start with it; the request
# itself is fine.
V500=$(head -c $((500 << 10)) /dev/zero | tr '\0' x)
ctl_env "$SOCK" "HUGE=$V500"
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "a 500 KiB value: ${ANS:0:300}"
ctl_env "$SOCK" "APP_SECRET=$APP_SECRET"
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env answered: $ANS"
expect_status_within 10 "$SOCK" 'all(.processes[]; .pid > 0 and .state != "backoff")'
env_pids
[[ $(env_of "$W7" APP_SECRET) == "$APP_SECRET" ]] || t_err "APP_SECRET after the huge set"
t_end

t_begin "host: env: never on disk, gone with the supervisor; env 0 empties it"
if grep -rqaF -- "$APP_SECRET" "$H7" "$H7.err"; then
	t_err "the value is on disk: $(grep -rlaF -- "$APP_SECRET" "$H7" "$H7.err" | head -3)"
fi
ctl_body "$SOCK" "env 0" </dev/null
[[ $ANS == '{"ok":true,"changed":true}' ]] || t_err "env 0 answered: $ANS"
env_restarted || t_err "not restarted"
env_of "$W7" APP_SECRET >/dev/null && t_err "APP_SECRET after env 0"
ctl "$SOCK" status
[[ $(jans .env_count) == 0 ]] || t_err "env_count after env 0: $(jans .env_count)"
ctl_env "$SOCK" "APP_SECRET=$APP_SECRET"
stop_sup
if start_sup "$H7" SHARED_VAR=from-container; then
	expect_status_within 5 "$SOCK" '.env_count == 0 and all(.processes[]; .pid > 0)'
	env_pids
	env_of "$W7" APP_SECRET >/dev/null && t_err "a new supervisor had the old set"
	stop_sup
else
	t_err "no socket at the second boot"
fi
t_end

# ==============================================================================
# (b) PID 1 of a hardened container
# ==============================================================================

need_docker

WS=$IT_TMP/ws
mkdir -p "$WS/.sandboxd"
run_conf "$WS/.sandboxd/run.conf" \
	"$(rc_line web 3000 /health 0 'echo web never listens; exec sleep 1000')" \
	"$(rc_line worker ticker 0 'while true; do echo tick; sleep 0.2; done')" \
	"$(rc_line worker crash 0 'echo boom; exit 1')" \
	"$(rc_line worker flood 0 "$FLOOD_CMD")" \
	"$(rc_line worker orphans 0 'while true; do (sleep 0.05 &); setsid sh -c "sleep 0.05 & exit 0" & sleep 0.1; done')"
chown -R 1000:1000 "$WS"
CSOCK=$WS/.sandboxd/sock

t_begin "container: sandboxd-init is PID 1 and serves its socket"
C=$(docker run -d --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
	--user 1000:1000 -e SANDBOXD_INIT_BACKOFF_MS=$BACKOFF \
	-v "$WS:/home/sandbox" -v "$SBI:/usr/local/bin/sandboxd-init:ro" \
	--entrypoint /usr/local/bin/sandboxd-init "$IT_IMAGE" 2>&1) ||
	bail "docker run failed: $C"
wait_until 10 test -S "$CSOCK" || t_err "no socket; logs: $(docker logs "$C" 2>&1 | tail -n 5)"
[[ $(docker exec "$C" cat /proc/1/comm 2>&1) == sandboxd-init ]] || t_err "PID 1 is $(docker exec "$C" cat /proc/1/comm 2>&1)"
ctl "$CSOCK" ping
[[ $(jans .ok) == true ]] || t_err "ping: $ANS"
[[ -f $WS/.sandboxd/seeded ]] || t_err "first boot without a preset left no marker"
t_end

t_begin "container: a web process that never listens stays starting"
expect_status_within 5 "$CSOCK" '(.processes[] | select(.name == "web") | .state == "starting" and .pid > 0)'
sleep 2
ctl "$CSOCK" status
jq -e '.health == "starting" and (.processes[] | select(.name == "web") | .state == "starting" and .restarts == 0)' <<<"$ANS" >/dev/null ||
	t_err "status: $ANS"
[[ $(jans .health_detail) == *":3000: Connection refused"* ]] || t_err "health_detail: $(jans .health_detail)"
[[ $(jans .health_detail) != 127.0.0.1:* ]] || t_err "checked loopback, not the container's address: $(jans .health_detail)"
t_end

t_begin "container: crash loop beside running workers"
expect_status_within 10 "$CSOCK" '(.processes[] | select(.name == "crash") | .state == "crashloop" and .restarts == 5 and .exit_code == 1)'
expect_status_within 2 "$CSOCK" '(.processes[] | select(.name == "ticker") | .state) == "running"'
[[ $(grep -c '^boom$' "$WS/.sandboxd/logs/crash.log") == 6 ]] || t_err "crash.log: $(head -c 600 "$WS/.sandboxd/logs/crash.log")"
t_end

t_begin "container: logs capped and rotated"
wait_flood_done "$WS/.sandboxd/logs" || t_err "flood.log did not settle"
check_flood_logs "$WS/.sandboxd/logs"
[[ $(stat -c %u "$WS/.sandboxd/logs/flood.log") == 1000 ]] || t_err "log not owned by the sandbox user"
t_end

t_begin "container: orphans reaped, no zombies under PID 1"
czombies() { docker exec "$C" sh -c "$PROC_SH" 2>/dev/null | awk '$2 == "Z" && $3 == 1 { print $1 }' | sort; }
no_zombie_buildup czombies
orphans=$(docker logs "$C" 2>&1 | sed -nE 's/.*reaped orphan pid [0-9]+ .*; ([0-9]+) more since.*/\1/p' | awk '{ n += $1 + 1 } END { print n + 0 }')
note "orphans reaped so far: $orphans"
((orphans > 20)) || t_err "only $orphans orphans reaped per the log"
t_end

t_begin "container: restart and reload"
ctl "$CSOCK" "restart crash"
[[ $ANS == '{"ok":true}' ]] || t_err "restart crash: $ANS"
# The restarted process crashes again at once and its count keeps
# climbing (through docker exec a poll can miss the moment it is 6).
expect_status_within 3 "$CSOCK" '(.processes[] | select(.name == "crash") | .restarts >= 6)'
run_conf "$WS/.sandboxd/run.conf" \
	"$(rc_line web 3000 /health 0 'echo web never listens; exec sleep 1000')" \
	"$(rc_line worker ticker 0 'while true; do echo tock; sleep 0.2; done')"
chown 1000:1000 "$WS/.sandboxd/run.conf"
ctl "$CSOCK" reload
[[ $ANS == '{"ok":true}' ]] || t_err "reload: $ANS"
expect_status_within 5 "$CSOCK" '[.processes[].name] == ["web","ticker"]'
wait_until 5 grep -qs tock "$WS/.sandboxd/logs/ticker.log" || t_err "no tock after reload"
t_end

t_begin "container: health ready through the container's address"
run_conf "$WS/.sandboxd/run.conf" \
	"$(rc_line web 3000 /health 0 'exec perl -MIO::Socket::INET -e '\''$s = IO::Socket::INET->new(LocalPort => $ENV{PORT}, Listen => 5, ReuseAddr => 1) or die "listen: $!"; while ($c = $s->accept) { <$c>; print $c "HTTP/1.0 204 No Content\r\n\r\n"; close $c }'\''')"
chown 1000:1000 "$WS/.sandboxd/run.conf"
ctl "$CSOCK" reload
expect_status_within 10 "$CSOCK" '.health == "ready" and (.processes[] | select(.name == "web") | .state == "running")'
ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$C")
[[ -z $ip || $(jans .health_detail) == "$ip:3000: HTTP 204" ]] || t_err "health_detail $(jans .health_detail), want $ip:3000: HTTP 204"
t_end

t_begin "container: the supervisor's RSS stays under 2 MB"
rss=$(docker exec "$C" awk '/^VmRSS/ { print $2 }' /proc/1/status 2>/dev/null)
note "PID 1 VmRSS: ${rss:-?} kB"
[[ -n $rss ]] && ((rss < 2048)) || t_err "VmRSS ${rss:-?} kB"
t_end

t_begin "container: docker stop: everything stopped, exit 0, well inside 10 s"
t0=$(date +%s%N)
docker stop -t 10 "$C" >/dev/null 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
[[ $(dinspect "$C" '{{.State.ExitCode}}') == 0 ]] || t_err "exit code $(dinspect "$C" '{{.State.ExitCode}}')"
((ms < 6000)) || t_err "docker stop took $ms ms"
# Not piped into grep -q: an early exit would fail the pipe (pipefail).
grep -q "SIGTERM: stopping" <<<"$(docker logs "$C" 2>&1)" || t_err "no SIGTERM in the log"
[[ ! -e $CSOCK ]] || t_err "socket left behind"
t_end

finish
