#!/usr/bin/env bash
# Wake on request through the preview edge (HTTP_PORT), as a browser sees
# it: a running app answers through the edge whatever the case of the Host
# header; a stopped sandbox answers a plain GET first with the warming page
# (503, Retry-After, X-Sandboxd-Preview: waking, an HTML page that
# refreshes itself) and then, with the client only following Retry-After,
# with the app's own page; twenty concurrent first requests share one
# container start; a web process listening on another port than
# sandbox.yaml declares gets 502 not-listening (naming the port and
# sandbox.yaml) after SANDBOXD_WAKE_READY_SECONDS; with no memory headroom
# the wake is refused (503 no-headroom) and the sandbox stays stopped; an
# unknown sandbox or an undeclared port is 404; an app that is still
# starting is "starting" (503), not "not-listening", also when the daemon
# restarted meanwhile or a sandbox.yaml change restarted its web process.
. "$(dirname "$0")/lib.sh"
need_docker

EDGE_PORT=$(free_port)
EDGE_ENV=("HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1)
start_daemon "${EDGE_ENV[@]}" || bail "the daemon did not come up"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# edge HOST [PATH]: GET PATH (default /) through the edge with that Host
# header.  Sets E_STATUS (000: no answer), E_HEADERS (CRs removed), E_BODY.
# E_TAG keeps the files of concurrent callers apart.
edge() {
	local host=$1 path=${2:-/} f=$IT_TMP/edge${E_TAG:-}
	: >"$f.body"
	: >"$f.head"
	E_STATUS=$(curl -s --max-time 15 -o "$f.body" -D "$f.head" -w '%{http_code}' \
		-H "Host: $host" "http://127.0.0.1:$EDGE_PORT$path" 2>/dev/null)
	[[ -n $E_STATUS ]] || E_STATUS=000
	E_HEADERS=$(tr -d '\r' <"$f.head")
	E_BODY=$(cat "$f.body")
	E_REQ="GET $path (Host: $host)"
}
e_short() {
	local b=${E_BODY:0:300}
	((${#E_BODY} > 300)) && b+="…"
	printf '%s' "${b:-<empty>}" | tr '\n' ' '
}
host_of() { echo "s-$1-${2:-3000}.preview.localhost:$EDGE_PORT"; }

# browse HOST MARKER SECONDS: what a browser does with the warming page:
# after a 503 it waits Retry-After seconds and asks again, until the app's
# own page (200 with MARKER) comes.  Sets B_TRAIL ("status/state" of every
# answer), B_FIRST (the first of them), B_MS (ms until the app's page).
browse() {
	local host=$1 marker=$2 secs=$3 t0 ra
	B_TRAIL='' B_FIRST='' B_MS=''
	t0=$(now_ms)
	while (($(now_ms) - t0 < secs * 1000)); do
		edge "$host"
		B_TRAIL+="$E_STATUS/$(eh X-Sandboxd-Preview) "
		[[ -n $B_FIRST ]] || B_FIRST="$E_STATUS/$(eh X-Sandboxd-Preview)"
		if [[ $E_STATUS == 200 && $E_BODY == *"$marker"* ]]; then
			B_MS=$(($(now_ms) - t0))
			return 0
		fi
		ra=$(eh Retry-After)
		[[ $ra =~ ^[1-9][0-9]*$ ]] || ra=1
		sleep "$ra"
	done
	return 1
}

# starts_since CONTAINER UNIX-TIME: container start events since then.
starts_since() {
	docker events --since "$2" --until "$(date +%s.%N)" \
		--filter "container=$1" --filter event=start --format '{{.Status}}' 2>/dev/null |
		grep -c start
}

# A sandbox id that does not exist (a well-formed ULID).
random_ulid() {
	local a=0123456789ABCDEFGHJKMNPQRSTVWXYZ s=01 i
	for ((i = 0; i < 24; i++)); do s+=${a:RANDOM%32:1}; done
	echo "$s"
}

MARK="app-page-$RANDOM$RANDOM"
PAGE="<!doctype html><html><body><h1>$MARK</h1></body></html>"

t_begin "setup: a static preset app, running, with its own page"
create_app wake '"runtime_preset":"static"' && create_sandbox "$APP_ID" &&
	wait_sb "$SB_ID" '.preview.status == "ready"' 90
W=${SB_ID:-} WC=${SB_CONTAINER:-}
if [[ -n $W ]]; then
	api PUT "/v1/sandboxes/$W/files?path=index.html" "$PAGE"
	expect_status 200
fi
t_end
[[ -n $W && -n $WC ]] || bail "no sandbox to test with"

t_begin "a running app answers through the edge; the Host is matched in any case, with or without port"
lo=${W,,}
for host in "s-$lo-3000.preview.localhost:$EDGE_PORT" "S-$W-3000.PREVIEW.LOCALHOST:$EDGE_PORT" \
	"s-$W-3000.Preview.LocalHost" "s-$lo-3000.preview.localhost"; do
	edge "$host"
	if [[ $E_STATUS != 200 || $E_BODY != *"$MARK"* ]]; then
		t_err "$E_REQ: expected 200 with the app's page, got $E_STATUS: $(e_short)"
	elif [[ -n $(eh X-Sandboxd-Preview) ]]; then
		t_err "$E_REQ: the app's answer carries X-Sandboxd-Preview: $(eh X-Sandboxd-Preview)"
	fi
done
t_end

t_begin "a stopped sandbox: a plain GET gets the warming page, then the app, with no manual step"
api POST "/v1/sandboxes/$W/stop"
expect_status 200 && expect_json .status stopped
container_running "$WC" && t_err "the container still runs after stop"
edge "$(host_of "$lo")"
if [[ $E_STATUS != 503 ]]; then
	t_err "$E_REQ: expected the warming answer 503, got $E_STATUS: $(e_short)"
else
	[[ $(eh Retry-After) =~ ^[0-9]+$ ]] || t_err "$E_REQ: Retry-After is '$(eh Retry-After)', not a number of seconds"
	[[ $(eh X-Sandboxd-Preview) == waking ]] ||
		t_err "$E_REQ: expected X-Sandboxd-Preview: waking, got '$(eh X-Sandboxd-Preview)'"
	[[ $(eh Content-Type) == text/html* ]] || t_err "$E_REQ: Content-Type is '$(eh Content-Type)', not text/html"
	grep -qiE '<meta[^>]+http-equiv="?refresh' <<<"$E_BODY" ||
		t_err "$E_REQ: the warming page has no <meta http-equiv=\"refresh\">: $(e_short)"
	[[ $E_BODY == *"$MARK"* ]] && t_err "$E_REQ: the warming answer contains the app's page"
fi
if browse "$(host_of "$lo")" "$MARK" 90; then
	note "the app's page came ${B_MS} ms after the warming page (answers: $B_TRAIL)"
	[[ $(sandbox_status "$W") == running ]] || t_err "after the wake the sandbox is $(sandbox_status "$W")"
else
	t_err "no app page within 90 s of following Retry-After; answers: $B_TRAIL; last: $(e_short)"
fi
t_end

t_begin "twenty concurrent first requests to a stopped sandbox: one container start, all get the app"
api POST "/v1/sandboxes/$W/stop"
expect_status 200 && expect_json .status stopped
sleep 1
since=$(date +%s.%N)
log_before=$(grep -c "$W: waking" "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')
rm -f "$IT_TMP/go"
pids=()
for ((k = 0; k < 20; k++)); do
	(
		E_TAG=.w$k
		while [[ ! -e $IT_TMP/go ]]; do sleep 0.01; done
		if browse "$(host_of "$([[ $((k % 2)) == 0 ]] && echo "$lo" || echo "$W")")" "$MARK" 90; then
			echo "ok $B_FIRST $B_MS $B_TRAIL" >"$IT_TMP/w$k.res"
		else
			echo "fail $B_FIRST - $B_TRAIL" >"$IT_TMP/w$k.res"
		fi
	) &
	pids+=($!)
done
sleep 0.5
touch "$IT_TMP/go"
wait "${pids[@]}"
sleep 1
n_start=$(starts_since "$WC" "$since")
log_after=$(grep -c "$W: waking" "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')
[[ $n_start == 1 ]] || t_err "expected exactly 1 container start event, docker reports $n_start"
[[ $((log_after - log_before)) == 1 ]] ||
	t_err "expected 1 'waking' line in the daemon log for $W, found $((log_after - log_before))"
n_ok=0 n_warm=0
for ((k = 0; k < 20; k++)); do
	r=$(cat "$IT_TMP/w$k.res" 2>/dev/null)
	case $r in
	ok*) n_ok=$((n_ok + 1)) ;;
	*) t_err "client $k: ${r:-no result}" ;;
	esac
	[[ $r == "ok 503/waking "* || $r == "ok 503/starting "* ]] && n_warm=$((n_warm + 1))
done
note "$n_ok of 20 clients got the app; $n_warm got a warming answer first; $n_start start event(s)"
((n_warm == 20)) || t_err "only $n_warm of 20 first answers were 503 waking/starting: $(cut -d' ' -f1-2 "$IT_TMP"/w*.res | sort | uniq -c | tr '\n' ';')"
t_end

t_begin "the web process listens on another port: after SANDBOXD_WAKE_READY_SECONDS, 502 not-listening naming port 3000 and sandbox.yaml"
NL=
if create_app wrong-port && create_sandbox "$APP_ID"; then
	NL=$SB_ID NLC=$SB_CONTAINER
	api PUT "/v1/sandboxes/$NL/files?path=sandbox.yaml" 'version: 1
web:
  command: python3 -m http.server 4000 --bind 0.0.0.0
  port: 3000
'
	expect_status 200
	# The web process runs (on 4000) and the preview says nothing answers on 3000.
	wait_sb "$NL" '.manifest.source == "sandbox.yaml" and .preview.status == "starting" and any(.processes[]; .name == "web" and .pid != null)' 30
	api POST "/v1/sandboxes/$NL/stop"
	expect_status 200
fi
if [[ -n $NL ]]; then
	start_daemon "${EDGE_ENV[@]}" SANDBOXD_WAKE_READY_SECONDS=3 || bail "the daemon did not come back"
	t0=$(now_ms)
	edge "$(host_of "$NL")"
	trail="$E_STATUS/$(eh X-Sandboxd-Preview) "
	[[ $E_STATUS == 503 && $(eh X-Sandboxd-Preview) == waking ]] ||
		t_err "$E_REQ: expected 503 waking first, got $E_STATUS/$(eh X-Sandboxd-Preview): $(e_short)"
	got502=
	while (($(now_ms) - t0 < 30000)); do
		sleep 0.25
		edge "$(host_of "$NL")"
		trail+="$E_STATUS/$(eh X-Sandboxd-Preview) "
		if [[ $E_STATUS == 502 ]]; then
			got502=$(($(now_ms) - t0))
			break
		fi
		[[ $E_STATUS == 503 ]] || { t_err "$E_REQ: before the 502, got $E_STATUS: $(e_short)"; break; }
	done
	note "answers: $(tr ' ' '\n' <<<"$trail" | grep . | uniq -c | awk '{ printf "%s×%s ", $1, $2 }')"
	if [[ -z $got502 ]]; then
		t_err "no 502 within 30 s; last answer $E_STATUS: $(e_short)"
	else
		note "502 came ${got502} ms after the first request"
		[[ $(eh X-Sandboxd-Preview) == not-listening ]] ||
			t_err "$E_REQ: expected X-Sandboxd-Preview: not-listening, got '$(eh X-Sandboxd-Preview)'"
		[[ $E_BODY == *3000* ]] || t_err "$E_REQ: the page does not name port 3000: $(e_short)"
		[[ $E_BODY == *sandbox.yaml* ]] || t_err "$E_REQ: the page does not name sandbox.yaml: $(e_short)"
		((got502 >= 2500)) || t_err "502 after only $got502 ms (SANDBOXD_WAKE_READY_SECONDS=3)"
		((got502 <= 12000)) || t_err "502 only after $got502 ms (SANDBOXD_WAKE_READY_SECONDS=3)"
	fi
	out=$(docker exec "$NLC" python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:4000/", timeout=5).status)' 2>&1)
	[[ $out == 200 ]] || note "(port 4000 inside the sandbox did not answer either: ${out:0:200})"
fi
t_end

t_begin "no memory headroom (SANDBOXD_MEM_REFUSE_WAKES_PCT=100): 503 no-headroom with Retry-After, the sandbox stays stopped"
api POST "/v1/sandboxes/$W/stop"
expect_status 200 && expect_json .status stopped
start_daemon "${EDGE_ENV[@]}" SANDBOXD_MEM_REFUSE_WAKES_PCT=100 || bail "the daemon did not come back"
since=$(date +%s.%N)
for round in 1 2; do
	edge "$(host_of "$lo")"
	if [[ $E_STATUS != 503 || $(eh X-Sandboxd-Preview) != no-headroom ]]; then
		t_err "$E_REQ (#$round): expected 503 no-headroom, got $E_STATUS/$(eh X-Sandboxd-Preview): $(e_short)"
	else
		[[ $(eh Retry-After) =~ ^[0-9]+$ ]] || t_err "$E_REQ: Retry-After is '$(eh Retry-After)'"
	fi
	sleep 2
done
[[ $(sandbox_status "$W") == stopped ]] || t_err "the sandbox is $(sandbox_status "$W"), not stopped"
container_running "$WC" && t_err "the container runs"
n=$(starts_since "$WC" "$since")
[[ $n == 0 ]] || t_err "$n container start event(s) after a refused wake"
t_end

t_begin "an unknown sandbox is 404 unknown; an undeclared port is 404 and wakes nothing"
edge "$(host_of "$(random_ulid)")"
[[ $E_STATUS == 404 ]] || t_err "$E_REQ: expected 404, got $E_STATUS: $(e_short)"
[[ $(eh X-Sandboxd-Preview) == unknown ]] || t_err "$E_REQ: expected X-Sandboxd-Preview: unknown, got '$(eh X-Sandboxd-Preview)'"
since=$(date +%s.%N)
edge "$(host_of "$lo" 3001)"
[[ $E_STATUS == 404 ]] || t_err "$E_REQ: expected 404, got $E_STATUS: $(e_short)"
[[ $(eh X-Sandboxd-Preview) == unknown ]] || note "$E_REQ: X-Sandboxd-Preview is '$(eh X-Sandboxd-Preview)'"
edge "s-$W-3000.preview.example.com:$EDGE_PORT"
[[ $E_STATUS == 4?? ]] || t_err "$E_REQ (another domain): expected a 4xx, got $E_STATUS: $(e_short)"
sleep 1
[[ $(sandbox_status "$W") == stopped ]] || t_err "after a request to an undeclared port the sandbox is $(sandbox_status "$W")"
n=$(starts_since "$WC" "$since")
[[ $n == 0 ]] || t_err "$n container start event(s) after 404s"
expect_healthz
t_end


t_begin "an app still starting answers 503 starting, not 502, after a daemon restart and after a sandbox.yaml change"
# SANDBOXD_WAKE_READY_SECONDS=10; the web process sleeps 8 s before it listens.
start_daemon "${EDGE_ENV[@]}" SANDBOXD_WAKE_READY_SECONDS=10 || bail "the daemon did not come back"
SL=
if create_app slow-start && create_sandbox "$APP_ID"; then
	SL=$SB_ID
	api PUT "/v1/sandboxes/$SL/files?path=sandbox.yaml" 'version: 1
web:
  command: sh -c "sleep 8; exec python3 -m http.server 3000 --bind 0.0.0.0"
  port: 3000
'
	expect_status 200
	wait_sb "$SL" '.manifest.source == "sandbox.yaml" and any(.processes[]; .name == "web" and .pid != null)' 30
fi
if [[ -n $SL ]]; then
	api POST "/v1/sandboxes/$SL/stop"
	api POST "/v1/sandboxes/$SL/start"
	expect_status 200
	t0=$(now_ms)
	start_daemon "${EDGE_ENV[@]}" SANDBOXD_WAKE_READY_SECONDS=10 || bail "the daemon did not come back"
	edge "$(host_of "$SL")"
	after=$(($(now_ms) - t0))
	if ((after < 7000)); then
		[[ $E_STATUS == 503 && $(eh X-Sandboxd-Preview) == starting ]] ||
			t_err "after a daemon restart, ${after} ms after the container started (nothing listens yet, SANDBOXD_WAKE_READY_SECONDS=10): expected 503 starting, got $E_STATUS/$(eh X-Sandboxd-Preview): $(e_short)"
	else
		note "(the restart took ${after} ms: the restart check is skipped)"
	fi
	t1=$(now_ms)
	until edge "$(host_of "$SL")" && [[ $E_STATUS == 200 ]]; do
		(($(now_ms) - t1 < 30000)) || { t_err "the slow app never answered: $E_STATUS $(e_short)"; break; }
		sleep 0.5
	done
	# The container is now older than SANDBOXD_WAKE_READY_SECONDS; a new
	# sandbox.yaml restarts the web process, which again sleeps 8 s.
	while (($(now_ms) - t0 < 12000)); do sleep 0.5; done
	api GET "/v1/sandboxes/$SL"
	old_pid=$(j '.processes[] | select(.name == "web") | .pid')
	api PUT "/v1/sandboxes/$SL/files?path=sandbox.yaml" 'version: 1
web:
  command: sh -c "sleep 8; exec python3 -m http.server 3000 --bind 0.0.0.0 --directory ."
  port: 3000
'
	expect_status 200
	wait_sb "$SL" "any(.processes[]; .name == \"web\" and .pid != null and .pid != ${old_pid:-0})" 10
	edge "$(host_of "$SL")"
	[[ $E_STATUS == 503 && $(eh X-Sandboxd-Preview) == starting ]] ||
		t_err "just after a sandbox.yaml change restarted the web process (API: preview $(j .preview.status), web $(j '.processes[] | select(.name == "web") | .state')): expected 503 starting, got $E_STATUS/$(eh X-Sandboxd-Preview): $(e_short)"
fi
t_end

finish
