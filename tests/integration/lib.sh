# tests/integration/lib.sh: the harness every integration test sources.
#
# It starts build/sandboxd on a free port with a throwaway data dir, talks
# to it with curl exactly as a user does, asserts on HTTP status, JSON and
# Docker state, and prints TAP-like lines:
#     ok - integration: <test>: <case>
#     not ok - integration: <test>: <case>
# followed by "#" comment lines that say what was expected and what came.
#
# The EXIT trap always stops the daemon, removes every container that mounts
# anything under the test's temp dir (or carries the instance label of a
# daemon this test started), runs `sandboxd network remove` for every
# sandbox network its daemons used (each data dir has its own,
# sbxit-<pid>-<n>: the nft table, and the Docker network once nothing is
# attached) and removes the temp dir, also when a test fails or is killed
# by the runner's timeout.
#
# A test reads like this:
#     . "$(dirname "$0")/lib.sh"
#     need_docker
#     start_daemon SANDBOXD_MEMORY_MB=256 || bail "daemon did not start"
#     t_begin "create an app"
#     api POST /v1/apps '{"name":"x"}'
#     expect_status 201 && expect_json .name x
#     t_end
#     finish

set -uo pipefail

IT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SANDBOXD_BIN=${SANDBOXD_BIN:-$IT_ROOT/build/sandboxd}
IT_IMAGE=${IT_IMAGE:-sandboxd-base:0.1.0}
IT_NAME=${IT_NAME:-$(basename "$0" .sh | sed -E 's/^[0-9]+-//')}
case ${DOCKER_HOST:-} in
unix://*) DOCKER_SOCK=${DOCKER_HOST#unix://} ;;
*) DOCKER_SOCK=/var/run/docker.sock ;;
esac

IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sandboxd-it.XXXXXX")
chmod 755 "$IT_TMP"
: >"$IT_TMP/empty.env"
IT_FAILS=0
IT_CASES=0
IT_CLEANUP_HOOKS=()

# The data dir of the current daemon; new_data_dir switches to a fresh one.
DATA=$IT_TMP/data
IT_DATA_N=0
# The token `api` sends.  By default each daemon gets
# SANDBOXD_API_TOKENS=it=$IT_TOKEN; a test that wants the generated first-start
# token passes -SANDBOXD_API_TOKENS to start_daemon and gets it in
# FIRST_TOKEN (and TOKEN).
IT_TOKEN=tok-it-$RANDOM$RANDOM
TOKEN=$IT_TOKEN
FIRST_TOKEN=
DAEMON_PID=
DAEMON_RC=
DAEMON_N=0
DAEMON_OUT=/dev/null
DAEMON_ERR=/dev/null
API_ADDR=
API_URL=

# --- results ----------------------------------------------------------------

note() { printf '#   %s\n' "$@"; }

pass() {
	IT_CASES=$((IT_CASES + 1))
	echo "ok - integration: $IT_NAME: $1"
}

fail() {
	IT_CASES=$((IT_CASES + 1))
	IT_FAILS=$((IT_FAILS + 1))
	echo "not ok - integration: $IT_NAME: $1"
	shift
	local line
	for line in "$@"; do
		while IFS= read -r l; do note "$l"; done <<<"$line"
	done
}

# A case collects every failed expectation between t_begin and t_end and is
# reported once, with all of them.
T_NAME=
T_ERRS=()
t_begin() { T_NAME=$1; T_ERRS=(); }
t_err() { T_ERRS+=("$*"); return 1; }
t_end() {
	if ((${#T_ERRS[@]})); then
		fail "$T_NAME" "${T_ERRS[@]}"
	else
		pass "$T_NAME"
	fi
	T_NAME=
	T_ERRS=()
}

# Setup went wrong: no point going on with this file.
bail() {
	fail "${T_NAME:-setup}" "$@"
	dump_daemon_logs
	exit 1
}

finish() {
	if ((IT_FAILS)); then
		dump_daemon_logs
		exit 1
	fi
	exit 0
}

dump_daemon_logs() {
	local f
	for f in "$DAEMON_OUT" "$DAEMON_ERR"; do
		[[ -s $f ]] || continue
		echo "#   --- last lines of $(basename "$f") ---"
		tail -n 25 "$f" | sed 's/^/#   | /'
	done
}

# --- small utilities ----------------------------------------------------------

# wait_until SECONDS CMD…: retry CMD every 0.1 s until it succeeds.
wait_until() {
	local tries
	tries=$(awk -v s="$1" 'BEGIN { printf "%d", s * 10 }')
	shift
	local i
	for ((i = 0; i <= tries; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

free_port() {
	local p
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' && return
	fi
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

new_data_dir() {
	IT_DATA_N=$((IT_DATA_N + 1))
	DATA=$IT_TMP/data.$IT_DATA_N
}

ulid_ok() { [[ ${1^^} =~ ^[0-7][0-9A-HJKMNP-TV-Z]{25}$ ]]; }

# --- the daemon ---------------------------------------------------------------

daemon_alive() {
	[[ -n $DAEMON_PID ]] && kill -0 "$DAEMON_PID" 2>/dev/null &&
		[[ $(awk '{print $3}' "/proc/$DAEMON_PID/stat" 2>/dev/null) != Z ]]
}

# start_daemon [VAR=value]… [-VAR]…
# Starts `sandboxd serve` in a clean environment: SANDBOXD_DATA_DIR=$DATA,
# SANDBOXD_API_ADDR=127.0.0.1:<free port>, SANDBOXD_ENV_FILE=<an empty file>
# (the daemon refuses a named file that does not exist),
# SANDBOXD_API_TOKENS=it=$IT_TOKEN, HTTP_PORT=<free port> (the preview
# edge; never 80 in tests), SANDBOXD_NETWORK=sbxit-<pid>-<data dir number>
# (each data dir its own Docker network, which the daemon creates; cleanup
# removes it), overridden by VAR=value and removed by -VAR.  Waits up to
# 10 s for /healthz to say ok (not for the network: daemon_gateway and
# wait_status do that).  Returns 0 when ready; 1 when the daemon exited
# (status in DAEMON_RC) or never became ready.
start_daemon() {
	local try
	for try in 1 2 3; do
		start_daemon_once "$@" && return 0
		# A port free_port picked was taken meanwhile by another process
		# (the ephemeral range is shared): try again with new ones.  A
		# port the caller named stays what it named.
		[[ -z $DAEMON_PID ]] &&
			grep -q "Address already in use" "$DAEMON_ERR" 2>/dev/null ||
			return 1
		echo "# start_daemon: a port was taken meanwhile; try $((try + 1))"
	done
	return 1
}

start_daemon_once() {
	local -A env=(
		[SANDBOXD_DATA_DIR]=$DATA
		[SANDBOXD_API_ADDR]=127.0.0.1:$(free_port)
		[SANDBOXD_ENV_FILE]=$IT_TMP/empty.env
		[SANDBOXD_API_TOKENS]=it=$IT_TOKEN
		[HTTP_PORT]=$(free_port)
		[SANDBOXD_PROXY_PORT]=$(free_port)
		[SANDBOXD_NETWORK]=sbxit-$$-$IT_DATA_N
	)
	local kv
	for kv in "$@"; do
		case $kv in
		-*) unset "env[${kv#-}]" ;;
		*=*) env[${kv%%=*}]=${kv#*=} ;;
		*) echo "start_daemon: bad argument $kv" >&2; return 2 ;;
		esac
	done
	[[ -n $DAEMON_PID ]] && stop_daemon
	# Without the variable the daemon uses its default, "sandboxd".
	record_network "${env[SANDBOXD_NETWORK]-sandboxd}"

	local -a cmd=(env -i "PATH=$PATH" "HOME=${HOME:-/root}")
	[[ -n ${DOCKER_HOST:-} ]] && cmd+=("DOCKER_HOST=$DOCKER_HOST")
	for kv in "${!env[@]}"; do cmd+=("$kv=${env[$kv]}"); done
	cmd+=("$SANDBOXD_BIN" serve)

	DAEMON_N=$((DAEMON_N + 1))
	DAEMON_OUT=$IT_TMP/daemon.$DAEMON_N.out
	DAEMON_ERR=$IT_TMP/daemon.$DAEMON_N.err
	DAEMON_RC=
	API_ADDR=${env[SANDBOXD_API_ADDR]:-127.0.0.1:9090}
	API_URL=http://$API_ADDR
	if [[ ! -x $SANDBOXD_BIN ]]; then
		echo "no daemon binary at $SANDBOXD_BIN" >"$DAEMON_ERR"
		DAEMON_RC=127
		return 1
	fi
	"${cmd[@]}" >"$DAEMON_OUT" 2>"$DAEMON_ERR" </dev/null &
	DAEMON_PID=$!

	local i
	for ((i = 0; i < 100; i++)); do
		if ! daemon_alive; then
			wait "$DAEMON_PID" 2>/dev/null
			DAEMON_RC=$?
			DAEMON_PID=
			return 1
		fi
		# Only poll an address we can reach without a name lookup (a test may
		# pass a deliberately broken one).
		if [[ $API_ADDR =~ ^(127\.[0-9.]+|localhost|\[::1\]):[0-9]+$ ]] &&
			[[ $(curl -s --max-time 1 "$API_URL/healthz" 2>/dev/null) == ok ]]; then
			FIRST_TOKEN=$(printed_token)
			if [[ -z ${env[SANDBOXD_API_TOKENS]+set} && -z $FIRST_TOKEN ]]; then
				# Possibly printed just after the listener came up.
				sleep 0.5
				FIRST_TOKEN=$(printed_token)
			fi
			[[ -n $FIRST_TOKEN ]] && TOKEN=$FIRST_TOKEN
			[[ ${env[SANDBOXD_NETWORK]-sandboxd} != none ]] && wait_network_ready
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# Up to 15 s for GET /v1/status to show the sandbox network ready, so that
# a test's first create does not race the network's creation; only while
# Docker answers and the status answers 200.  Leaves BODY alone.
wait_network_ready() {
	local i code
	docker_ok || return 0
	for ((i = 0; i < 150; i++)); do
		code=$(curl -s -o "$IT_TMP/status.json" -w '%{http_code}' --max-time 2 \
			-H "Authorization: Bearer $TOKEN" "$API_URL/v1/status" 2>/dev/null)
		[[ $code == 200 ]] || return 0
		jq -e '.network.ready == true' "$IT_TMP/status.json" >/dev/null 2>&1 && return 0
		daemon_alive || return 0
		sleep 0.1
	done
	return 0
}

# The token the current daemon printed on stdout at first start, if any.
printed_token() {
	sed -nE 's/.*API token \(shown once\): (sk_[^[:space:]]+).*/\1/p' "$DAEMON_OUT" 2>/dev/null | head -n 1
}

stop_daemon() {
	[[ -n $DAEMON_PID ]] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	local i
	for ((i = 0; i < 100; i++)); do
		daemon_alive || break
		sleep 0.1
	done
	daemon_alive && kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_RC=$?
	DAEMON_PID=
}

kill9_daemon() {
	[[ -n $DAEMON_PID ]] || return 0
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_RC=$?
	DAEMON_PID=
}

# record_network NAME: a daemon of this test uses the Docker network NAME;
# cleanup runs `sandboxd network remove` for it (its nft table, and the
# network when sandboxd made it and nothing is attached).  A name that
# already existed before this test first used it (a real install's
# "sandboxd", Docker's own "bridge"/"none") is listed in .networks.kept
# and left alone; so is any name not of this test while Docker cannot say.
record_network() {
	local name=$1
	[[ -n $name ]] || return 0
	if ! grep -qxF -- "$name" "$IT_TMP/.networks" 2>/dev/null; then
		if [[ $name != sbxit-$$-* ]] &&
			{ ! docker_ok || docker network inspect "$name" >/dev/null 2>&1; }; then
			echo "$name" >>"$IT_TMP/.networks.kept"
		fi
	fi
	echo "$name" >>"$IT_TMP/.networks"
}

# remove_test_networks: `sandboxd network remove` for every network of
# .networks that is not in .networks.kept (after the containers are gone).
remove_test_networks() {
	[[ -s $IT_TMP/.networks ]] || return 0
	local name out
	while IFS= read -r name; do
		[[ -n $name ]] || continue
		grep -qxF -- "$name" "$IT_TMP/.networks.kept" 2>/dev/null && continue
		# (An empty env file: a .env in the current directory is not read.)
		if ! out=$(env -i "PATH=$PATH" ${DOCKER_HOST:+"DOCKER_HOST=$DOCKER_HOST"} \
			"SANDBOXD_NETWORK=$name" "SANDBOXD_ENV_FILE=$IT_TMP/empty.env" \
			timeout 60 "$SANDBOXD_BIN" network remove 2>&1 </dev/null); then
			echo "# cleanup: sandboxd network remove of $name failed: $(tail -n 3 <<<"$out")"
		fi
	done < <(sort -u "$IT_TMP/.networks")
	return 0
}

# --- HTTP ---------------------------------------------------------------------

# api METHOD PATH [BODY]: a request with "Authorization: Bearer $TOKEN".
# Sets STATUS (000 if no answer), BODY (trailing newlines stripped),
# BODY_FILE (the raw body), HEADERS (CRs removed) and REQ ("METHOD PATH").
# A BODY of the form @file sends that file.  Without BODY no body is sent;
# with one, Content-Type: application/json (application/octet-stream for a
# PUT of a file's content) unless api_hdr gives a Content-Type.
# api_hdr "NAME: value" METHOD PATH [BODY]: the same with one more request
# header.
api() { api_auth "Bearer $TOKEN" "$@"; }
api_as() { local t=$1; shift; api_auth "Bearer $t" "$@"; }
api_noauth() { api_auth "" "$@"; }
API_EXTRA_HEADER=
api_hdr() {
	API_EXTRA_HEADER=$1
	shift
	api_auth "Bearer $TOKEN" "$@"
	API_EXTRA_HEADER=
}

# api_auth AUTHORIZATION-VALUE METHOD PATH [BODY]  ("" = no header at all)
api_auth() {
	local auth=$1 method=$2 path=$3
	local -a args=(-s --path-as-is -o "$IT_TMP/body" -D "$IT_TMP/headers"
		-w '%{http_code}' --max-time "${API_TIMEOUT:-90}" -X "$method")
	[[ -n $auth ]] && args+=(-H "Authorization: $auth")
	[[ -n $API_EXTRA_HEADER ]] && args+=(-H "$API_EXTRA_HEADER")
	if (($# >= 4)); then
		args+=(--data-binary "$4")
		# The API refuses curl's default form type on a write: JSON,
		# or bytes for a file's content.
		if [[ ${API_EXTRA_HEADER,,} != content-type:* ]]; then
			if [[ $method == PUT && $path == */files\?* ]]; then
				args+=(-H 'Content-Type: application/octet-stream')
			else
				args+=(-H 'Content-Type: application/json')
			fi
		fi
	fi
	: >"$IT_TMP/body"
	: >"$IT_TMP/headers"
	REQ="$method $path"
	STATUS=$(curl "${args[@]}" "$API_URL$path" 2>/dev/null)
	[[ -n $STATUS ]] || STATUS=000
	BODY_FILE=$IT_TMP/body
	BODY=$(cat "$IT_TMP/body")
	HEADERS=$(tr -d '\r' <"$IT_TMP/headers")
}

# jq -r EXPR over the last body (empty on error).
j() { jq -r "$1" <<<"$BODY" 2>/dev/null; }

short_body() {
	local b=${BODY:0:300}
	((${#BODY} > 300)) && b+="…"
	printf '%s' "${b:-<empty>}"
}

header() { # header NAME: value of a response header of the last request
	grep -i "^$1:" <<<"$HEADERS" | tail -n 1 | sed -E 's/^[^:]+:[[:space:]]*//'
}

# --- assertions: each returns non-zero and records why on failure -------------

expect_status() {
	[[ $STATUS == "$1" ]] ||
		t_err "$REQ: expected status $1, got $STATUS; body: $(short_body)"
}

# expect_json JQ-EXPR VALUE: jq -r EXPR must print exactly VALUE.
expect_json() {
	local got
	if ! got=$(jq -r "$1" <<<"$BODY" 2>/dev/null); then
		t_err "$REQ: body is not JSON (wanted $1 == $2): $(short_body)"
		return 1
	fi
	[[ $got == "$2" ]] || t_err "$REQ: expected $1 == $2, got ${got:-<empty>}; body: $(short_body)"
}

# expect_jq JQ-FILTER [WHAT]: jq -e FILTER must be true.
expect_jq() {
	jq -e "$1" <<<"$BODY" >/dev/null 2>&1 ||
		t_err "$REQ: expected ${2:-$1}; body: $(short_body)"
}

# expect_envelope CODE [RETRYABLE]: the error envelope with that code, a
# non-empty message and a boolean retryable (equal to RETRYABLE if given).
expect_envelope() {
	local code=$1 retry=${2:-}
	if ! jq -e '.error | type == "object"' <<<"$BODY" >/dev/null 2>&1; then
		t_err "$REQ: expected an error envelope {\"error\":{…}}, got: $(short_body)"
		return 1
	fi
	local got ok=0
	got=$(j .error.code)
	[[ $got == "$code" ]] || { t_err "$REQ: expected .error.code $code, got ${got:-<none>}"; ok=1; }
	jq -e '.error.message | type == "string" and length > 0' <<<"$BODY" >/dev/null 2>&1 ||
		{ t_err "$REQ: .error.message is not a non-empty string: $(short_body)"; ok=1; }
	jq -e '.error.retryable | type == "boolean"' <<<"$BODY" >/dev/null 2>&1 ||
		{ t_err "$REQ: .error.retryable is not a boolean: $(short_body)"; ok=1; }
	if [[ -n $retry ]]; then
		got=$(j .error.retryable)
		[[ $got == "$retry" ]] || { t_err "$REQ: expected .error.retryable $retry, got $got"; ok=1; }
	fi
	return $ok
}

expect_header() {
	grep -qi "^$1:" <<<"$HEADERS" || t_err "$REQ: no $1 header in the response"
}

# X-Request-Id is there and is a ULID.
expect_request_id() {
	expect_header X-Request-Id || return 1
	ulid_ok "$(header X-Request-Id)" || t_err "$REQ: X-Request-Id '$(header X-Request-Id)' is not a ULID"
}

# expect_true WHAT CMD…: CMD must succeed.
expect_true() {
	local what=$1
	shift
	"$@" || t_err "$what"
}

expect_healthz() {
	local got
	got=$(curl -s --max-time 5 "$API_URL/healthz")
	[[ $got == ok ]] || t_err "GET /healthz: expected ok, got ${got:-<no answer>}"
}

# wait_status JQ-CONDITION SECONDS: polls GET /v1/status until the condition
# holds (BODY is the last status); 1 when it did not within SECONDS.
wait_status() {
	local cond=$1 secs=$2 i
	for ((i = 0; i <= secs * 4; i++)); do
		api GET /v1/status
		[[ $STATUS == 200 && $(j "$cond") == true ]] && return 0
		sleep 0.25
	done
	return 1
}

# daemon_gateway: the gateway of the daemon's sandbox network, where its
# credential proxy listens, from GET /v1/status (.network.gateway; waits
# up to 30 s for the daemon to know it).  Sets GW; 1 when there is none
# (SANDBOXD_NETWORK=none).
daemon_gateway() {
	GW=
	wait_status '(.network.gateway // "") != ""' 30 || return 1
	GW=$(j .network.gateway)
}

# --- Docker -------------------------------------------------------------------

# pick_net24 PREFIX: prints the first "PREFIX.X" (X 20..249, from this
# shell's pid on) whose /24 overlaps no route of the host (any table) and
# no Docker network's subnet: a network for test hosts of our own.
pick_net24() {
	local taken
	taken=$({
		ip -4 route show table all | awk '{ print $1 }' | grep -E '^[0-9.]+(/[0-9]+)?$'
		# shellcheck disable=SC2046
		docker network inspect $(docker network ls -q) \
			-f '{{range .IPAM.Config}}{{println .Subnet}}{{end}}' 2>/dev/null
	} | grep -v '^$')
	python3 -c '
import ipaddress, sys
prefix, pid = sys.argv[1], int(sys.argv[2])
taken = []
for line in sys.stdin:
    try:
        taken.append(ipaddress.ip_network(line.strip(), strict=False))
    except ValueError:
        pass
for i in range(230):
    x = 20 + (pid + i) % 230
    net = ipaddress.ip_network("%s.%d.0/24" % (prefix, x))
    if not any(net.overlaps(t) for t in taken if t.version == 4):
        print("%s.%d" % (prefix, x))
        break
' "$1" "$$" <<<"$taken"
}

# outside_host NS HOST_VETH NS_VETH NET ADDR...: a test host of our own,
# the network namespace NS on a veth pair, the host's end NET.1/24 and
# the namespace's NET.ADDR/24 for each ADDR (lo up too); both go at the
# test's end.  Traffic to it never leaves this machine.
OUTSIDE_HOSTS=()
outside_host() {
	local ns=$1 hv=$2 nv=$3 net=$4 a
	shift 4
	if ((${#OUTSIDE_HOSTS[@]} == 0)); then IT_CLEANUP_HOOKS+=(teardown_outside_hosts); fi
	OUTSIDE_HOSTS+=("$ns $hv")
	ip netns add "$ns" &&
		ip link add "$hv" type veth peer name "$nv" netns "$ns" &&
		ip addr add "$net.1/24" dev "$hv" &&
		ip link set "$hv" up &&
		ip -n "$ns" link set lo up || return 1
	for a in "$@"; do ip -n "$ns" addr add "$net.$a/24" dev "$nv" || return 1; done
	ip -n "$ns" link set "$nv" up
}
teardown_outside_hosts() {
	local h
	for h in "${OUTSIDE_HOSTS[@]}"; do
		ip link del "${h#* }" 2>/dev/null
		ip netns del "${h%% *}" 2>/dev/null
	done
	return 0
}


docker_ok() {
	curl -sf --max-time 3 --unix-socket "$DOCKER_SOCK" http://localhost/_ping >/dev/null 2>&1
}

need_docker() {
	docker_ok || bail "Docker does not answer on $DOCKER_SOCK (_ping)"
	docker image inspect "$IT_IMAGE" >/dev/null 2>&1 ||
		bail "the image $IT_IMAGE is missing (run scripts/bootstrap)"
}

# need_test_image: the base image plus the scripted fake agents of
# tests/fake-agent (first in PATH), tagged by the inputs' hash -> TEST_IMAGE.
need_test_image() {
	need_docker
	TEST_IMAGE=$("$IT_ROOT/tests/fake-agent/build-image" "$IT_IMAGE") ||
		bail "cannot build the test image from $IT_IMAGE"
}

# The container (full id) of a sandbox, found by its label; records the
# daemon's instance id so cleanup can find its containers by label as well.
container_of() {
	local c
	c=$(docker ps -aq --no-trunc --filter "label=sandboxd.sandbox=$1" 2>/dev/null | head -n 1)
	[[ -n $c ]] || return 1
	docker inspect -f '{{index .Config.Labels "sandboxd.instance"}}' "$c" 2>/dev/null >>"$IT_TMP/.instances"
	echo "$c"
}

# dinspect CONTAINER GO-TEMPLATE
dinspect() { docker inspect -f "$2" "$1" 2>/dev/null; }
container_running() { [[ $(dinspect "$1" '{{.State.Running}}') == true ]]; }
container_exists() { docker inspect "$1" >/dev/null 2>&1; }

# Containers (full ids) mounting anything under DIR.
containers_mounting() {
	local dir=$1 ids
	ids=$(docker ps -aq --no-trunc 2>/dev/null)
	[[ -n $ids ]] || return 0
	# shellcheck disable=SC2086
	docker inspect -f '{{.Id}}{{range .Mounts}} {{.Source}}{{end}}' $ids 2>/dev/null |
		awk -v d="$dir/" '{ for (i = 2; i <= NF; i++) if (index($i, d) == 1) { print $1; break } }'
}

remove_test_containers() {
	docker_ok || return 0
	local ids inst
	ids=$(containers_mounting "$IT_TMP")
	if [[ -s $IT_TMP/.instances ]]; then
		for inst in $(sort -u "$IT_TMP/.instances"); do
			[[ -n $inst ]] || continue
			ids+=$'\n'$(docker ps -aq --no-trunc --filter "label=sandboxd.instance=$inst")
		done
	fi
	ids=$(sort -u <<<"$ids" | grep -v '^$')
	# shellcheck disable=SC2086
	[[ -n $ids ]] && timeout 120 docker rm -f -v $ids >/dev/null 2>&1
	return 0
}

# --- from inside a sandbox ------------------------------------------------------
# Both run as uid 1000 (the sandbox user) with the image's python3 (it has
# no curl), and time only what happens inside the container.

# sb_connect CONTAINER HOST PORT [TIMEOUT-SECONDS (default 3)]: one TCP
# connect; prints "STATE MS BANNER": STATE is open, refused (a reset),
# timeout, or the errno's name (EHOSTUNREACH for an ICMP "prohibited",
# ENETUNREACH…; "exec-failed" when docker exec itself failed), MS the
# connect's duration in milliseconds, BANNER the first word the peer sent
# within 0.3 s of an open connect ("-" for none).
sb_connect() {
	local out
	out=$(docker exec -u 1000 "$1" python3 -c '
import errno, socket, sys, time
host, port, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.settimeout(limit)
t0 = time.perf_counter()
banner = "-"
try:
    s.connect((host, port))
    state = "open"
except socket.timeout:
    state = "timeout"
except ConnectionRefusedError:
    state = "refused"
except OSError as e:
    state = errno.errorcode.get(e.errno, "errno%s" % e.errno)
ms = (time.perf_counter() - t0) * 1000
if state == "open":
    s.settimeout(0.3)
    try:
        words = s.recv(128).split()
        if words:
            banner = words[0].decode("ascii", "replace")
    except OSError:
        pass
s.close()
print("%s %.1f %s" % (state, ms, banner))
' "$2" "$3" "${4:-3}" 2>&1)
	[[ $out =~ ^[A-Za-z0-9_-]+\ [0-9.]+\ [^[:space:]]+$ ]] || out="exec-failed 0 ${out//[[:space:]]/_}"
	echo "$out"
}

# sb_http CONTAINER URL [METHOD]: one HTTP request (10 s); prints the
# status code of whatever answered, or "error:<reason>".
sb_http() {
	docker exec -u 1000 "$1" python3 -c '
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2])
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("error:%s" % str(getattr(e, "reason", e)).replace(" ", "_"))
' "$2" "${3:-GET}" 2>&1 | tail -n 1
}

# --- the fake model provider ------------------------------------------------------

# start_fake_provider PROVIDER-ARGS…: tests/fake-provider/provider.py on
# 127.0.0.1:$PPORT (a free port when PPORT is unset), logging to $PLOG
# ($IT_TMP/provider.log when unset), stopped at cleanup.  The credential
# proxy reaches it from the host; sandboxes cannot.  Bails when it does
# not come up.
start_fake_provider() {
	PPORT=${PPORT:-$(free_port)}
	PLOG=${PLOG:-$IT_TMP/provider.log}
	python3 "$IT_ROOT/tests/fake-provider/provider.py" --port "$PPORT" --bind 127.0.0.1 \
		--log "$PLOG" "$@" >"$IT_TMP/provider.out" 2>&1 &
	PROV_PID=$!
	IT_CLEANUP_HOOKS+=(kill_fake_provider)
	wait_until 10 grep -q listening "$IT_TMP/provider.out" ||
		bail "the fake provider did not start: $(cat "$IT_TMP/provider.out")"
}
kill_fake_provider() { kill "$PROV_PID" 2>/dev/null; }

# start_edge_daemon [SETTING=VALUE…]: a daemon whose preview edge listens
# on 127.0.0.1:$EDGE_PORT (a free port), $EDGE its URL.  Bails when it does
# not come up.
start_edge_daemon() {
	EDGE_PORT=$(free_port)
	start_daemon "HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 "$@" ||
		bail "the daemon did not come up"
	EDGE=http://127.0.0.1:$EDGE_PORT
}

# need_console: node, Chromium ($CHROMIUM, default Debian's) and the built
# console ($CONSOLE_DIR, made here with playwright-core when missing) for
# a browser test; bails without them.
need_console() {
	command -v node >/dev/null || bail "node is not installed (scripts/bootstrap installs it)"
	CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
	[[ -x $CHROMIUM ]] || bail "no Chromium at $CHROMIUM (scripts/bootstrap installs it)"
	# BUILD=build: under `make asan` the sub-make would otherwise inherit
	# BUILD=build-asan and build the console where this test does not look.
	CONSOLE_DIR=$IT_ROOT/build/console
	if [[ ! -f $CONSOLE_DIR/index.html || ! -d $IT_ROOT/console/node_modules/playwright-core ]]; then
		make -s -C "$IT_ROOT" BUILD=build console >"$IT_TMP/make-console.log" 2>&1 ||
			bail "make console failed: $(tail -n 5 "$IT_TMP/make-console.log")"
	fi
}

# setup_code: the console setup code the daemon printed ($DAEMON_OUT) into
# $SETUP_CODE; bails without one.
setup_code() {
	SETUP_CODE=$(sed -nE 's/^.*Console setup code[^:]*: *([A-Za-z0-9-]+).*$/\1/p' "$DAEMON_OUT" | head -n 1)
	[[ -n $SETUP_CODE ]] || bail "no 'Console setup code:' line on stdout: $(head -c 400 "$DAEMON_OUT")"
}

# small_data_dir SIZE NAME: a data directory on a tmpfs of SIZE (48m, …)
# mounted as NAME at $SMALL, for a full-disk test: a fresh data dir (and
# network, new_data_dir) with $DATA=$SMALL/data; the mount goes at the end.
small_data_dir() {
	SMALL=$IT_TMP/small
	mkdir -p "$SMALL"
	mount -t tmpfs -o "size=$1,mode=755" "$2" "$SMALL" || bail "cannot mount a tmpfs"
	IT_CLEANUP_HOOKS+=(_unmount_small)
	new_data_dir
	DATA=$SMALL/data
}
_unmount_small() {
	remove_test_containers
	umount -l "$SMALL" 2>/dev/null
}

# start_console_daemon [VAR=VALUE ...]: what a console test in Chromium
# starts from: the test image and the built console (need_test_image,
# need_console), then the daemon with the console on the edge at
# 127.0.0.1:$EDGE_PORT (a free port) and no API token, so the browser signs
# in with the setup code ($SETUP_CODE); extra settings are passed on.
# Bails when it does not come up.
start_console_daemon() {
	need_test_image
	need_console
	EDGE_PORT=$(free_port)
	start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
		SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR" -SANDBOXD_API_TOKENS "$@" ||
		bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
	setup_code
}

# report_browser OUT RC [WHAT]: each case a browser script (steps.mjs)
# printed to OUT ("ok CASE" / "not ok CASE", "# " lines of detail) passed
# or failed here as "browser: CASE"; a script that exited RC != 0 without
# a "not ok" line fails as "browser: WHAT ran to its end".
report_browser() {
	local out=$1 rc=$2 what=${3:-the script} line name= ok=0
	local -a detail=()
	_report_case() {
		[[ -n $name ]] || return 0
		if ((ok)); then pass "browser: $name"; else fail "browser: $name" "${detail[@]}"; fi
		name= detail=()
	}
	while IFS= read -r line; do
		case $line in
		"ok "*) _report_case; name=${line#ok } ok=1 ;;
		"not ok "*) _report_case; name=${line#not ok } ok=0 ;;
		"# "*) detail+=("${line#\# }") ;;
		*) detail+=("$line") ;;
		esac
	done <"$out"
	_report_case
	if ((rc != 0)) && ! grep -q '^not ok ' "$out"; then
		fail "browser: $what ran to its end" "exit $rc: $(tail -n 20 "$out")"
	fi
}

# start_git_server ROOT [TOKEN]: tests/git-server on 127.0.0.1:$GPORT (a
# free port) serving the bare repositories under ROOT to TOKEN (to anyone
# without one: a public repository), logging to $IT_TMP/git-server.log,
# stopped at cleanup.  Bails when it does not come up.
start_git_server() {
	GPORT=$(free_port)
	python3 "$IT_ROOT/tests/git-server/server.py" --root "$1" --port "$GPORT" \
		${2:+--token "$2"} --log "$IT_TMP/git-server.log" >/dev/null 2>&1 &
	GIT_SRV_PID=$!
	IT_CLEANUP_HOOKS+=(stop_git_server)
	wait_until 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$GPORT" 2>/dev/null ||
		bail "the git server did not come up"
}
stop_git_server() { kill "$GIT_SRV_PID" 2>/dev/null; wait "$GIT_SRV_PID" 2>/dev/null; }

# start_fake_oauth CODE ACCESS-TOKEN: the subscription sign-in's token
# endpoint (tests/fake-provider/oauth.py) on 127.0.0.1:$OPORT, taking CODE
# and answering ACCESS-TOKEN, logging to $IT_TMP/oauth.log, stopped at
# cleanup.  Bails when it does not come up.
start_fake_oauth() {
	OPORT=$(free_port)
	python3 "$IT_ROOT/tests/fake-provider/oauth.py" --port "$OPORT" --log "$IT_TMP/oauth.log" \
		--code "$1" --access-token "$2" >"$IT_TMP/oauth.out" 2>&1 &
	OAUTH_PID=$!
	IT_CLEANUP_HOOKS+=(stop_fake_oauth)
	wait_until 10 grep -q listening "$IT_TMP/oauth.out" ||
		bail "the fake token endpoint did not start: $(cat "$IT_TMP/oauth.out")"
}
stop_fake_oauth() { kill "$OAUTH_PID" 2>/dev/null; }

# --- restarting dockerd (tests that stop the engine) ---------------------------

proc_gone() { [[ ! -e /proc/$1 || $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]]; }
live_dockerd() { # the pid of the running dockerd (zombies excluded)
	local p
	for p in $(pgrep -x dockerd); do proc_gone "$p" || { echo "$p"; return; }; done
}

# dockerd_remember: notes the running dockerd's pid (DOCKERD_PID, empty
# when none) and command line (DOCKERD_CMD, to start it the same way) and
# makes cleanup start it again if a test left it stopped.
dockerd_remember() {
	DOCKERD_PID=$(live_dockerd)
	DOCKERD_CMD=()
	if [[ -n $DOCKERD_PID ]]; then
		mapfile -d '' -t DOCKERD_CMD <"/proc/$DOCKERD_PID/cmdline"
	fi
	((${#DOCKERD_CMD[@]})) || DOCKERD_CMD=(dockerd)
	IT_CLEANUP_HOOKS+=(ensure_dockerd)
}

start_dockerd() {
	# As scripts/bootstrap does, in its own session so that the runner's
	# timeout cannot take it down with this script.
	# disown: it is not one of this test's jobs, which cleanup kills.
	# Every descriptor above 2 is closed first: the engine outlives the
	# test, and a runner's lock file inherited by it (the machine's
	# integration locks are such descriptors) would stay locked for as
	# long as the engine runs.
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			((fd > 2)) && eval "exec $fd>&-"
		done
		exec setsid nohup "${DOCKERD_CMD[@]}" >>/var/log/sandboxd-dockerd.log 2>&1 </dev/null
	) &
	disown $!
	wait_until 60 docker_ok
}

stop_dockerd() {
	DOCKERD_PID=$(live_dockerd)
	[[ -n $DOCKERD_PID ]] || { t_err "no dockerd process"; return 1; }
	kill -TERM "$DOCKERD_PID"
	if ! wait_until 60 proc_gone "$DOCKERD_PID"; then
		note "dockerd did not exit within 60 s of SIGTERM; SIGKILL"
		kill -KILL "$DOCKERD_PID"
		sleep 1
	fi
	wait_until 10 eval '! docker_ok' || t_err "Docker still answers _ping after dockerd was stopped"
}

ensure_dockerd() {
	docker_ok && return 0
	echo "# cleanup: starting dockerd again"
	if [[ -n $(live_dockerd) ]]; then
		wait_until 60 docker_ok
	else
		start_dockerd
	fi || echo "# cleanup: dockerd does not answer _ping within 60 s"
}

# --- the preview edge -----------------------------------------------------------

# ecurl HOST PATH [CURL-ARGS…]: curl through the edge at $EDGE with that
# Host header.
ecurl() {
	local host=$1 path=$2
	shift 2
	curl -s --max-time 30 -H "Host: $host" "$@" "$EDGE$path"
}

# Publishing (tests 101-109).  release_wait RID SECS: until app $APP's
# release RID is no longer building (BODY is it), else t_err.
release_wait() {
	local i
	for ((i = 0; i < $2 * 4; i++)); do
		api GET "/v1/apps/$APP/releases/$1"
		[[ $STATUS == 200 && $(j .status) != building ]] && return 0
		sleep 0.25
	done
	t_err "release $1 still building after $2 s: $(short_body)"
}
# put_file PATH BODY: writes a file of sandbox $SB through the files API.
put_file() {
	api PUT "/v1/sandboxes/$SB/files?path=$1" "$2"
	expect_status 200
}

# edge_get HOST PATH [curl args]: one request through the edge (ecurl);
# sets E_STATUS (000 when none came), E_HEADERS (CRs removed), E_BODY.
edge_get() {
	local host=$1 path=$2
	shift 2
	: >"$IT_TMP/e.body"
	: >"$IT_TMP/e.head"
	E_STATUS=$(ecurl "$host" "$path" -o "$IT_TMP/e.body" -D "$IT_TMP/e.head" -w '%{http_code}' "$@")
	[[ -n $E_STATUS ]] || E_STATUS=000
	E_HEADERS=$(tr -d '\r' <"$IT_TMP/e.head")
	E_BODY=$(cat "$IT_TMP/e.body")
}
# eh NAME: the last value of header NAME in E_HEADERS.
eh() { grep -i "^$1:" <<<"$E_HEADERS" | tail -n 1 | sed -E 's/^[^:]+:[[:space:]]*//'; }
# pyclient ARGS… <<'EOF': a raw-socket client in python3 (socket module
# only), given the edge port and ARGS, under PYCLIENT_TIMEOUT (60) seconds.
pyclient() { timeout "${PYCLIENT_TIMEOUT:-60}" python3 - "$EDGE_PORT" "$@"; }

# serve_edge_app NAME: an app whose sandbox runs tests/integration/
# edge-app.js as its web process, answering through the edge ($EDGE,
# $EDGE_PORT) -> SB, HOST.  Bails when it does not come up.
serve_edge_app() {
	create_app "$1" && create_sandbox "$APP_ID" ||
		bail "could not create the sandbox: ${T_ERRS[*]}"
	SB=$SB_ID
	HOST=s-$SB-3000.preview.localhost:$EDGE_PORT
	api PUT "/v1/sandboxes/$SB/files?path=edge-app.js" "@$IT_ROOT/tests/integration/edge-app.js"
	expect_status 200
	api PUT "/v1/sandboxes/$SB/files?path=sandbox.yaml" 'version: 1
web:
  command: node edge-app.js
  port: 3000
'
	expect_status 200
	local i
	for ((i = 0; i < 600; i++)); do
		[[ $(ecurl "$HOST" /) == "hello from the app" ]] && return 0
		sleep 0.1
	done
	bail "GET / through the edge: $(ecurl "$HOST" / -i | head -c 300)"
}

# --- common API steps (set globals; report through t_err) ---------------------

# create_app NAME [EXTRA-JSON-FIELDS] -> APP_ID
create_app() {
	APP_ID=
	api POST /v1/apps "{\"name\":\"$1\"${2:+,$2}}"
	expect_status 201 || return 1
	APP_ID=$(j .id)
	ulid_ok "$APP_ID" || t_err "$REQ: .id is not a ULID: $APP_ID"
}

# create_sandbox APP [BODY] -> SB_ID, SB_CONTAINER (status must be running)
create_sandbox() {
	SB_ID=
	SB_CONTAINER=
	if (($# >= 2)); then
		api POST "/v1/apps/$1/sandbox" "$2"
	else
		api POST "/v1/apps/$1/sandbox" '{"ports":[3000]}'
	fi
	expect_status 201 || return 1
	SB_ID=$(j .id)
	ulid_ok "$SB_ID" || { t_err "$REQ: .id is not a ULID: $SB_ID"; return 1; }
	expect_json .status running || return 1
	SB_CONTAINER=$(container_of "$SB_ID") ||
		{ t_err "no container labelled sandboxd.sandbox=$SB_ID after create"; return 1; }
}

# submit SB BODY -> TASK_ID: POST …/tasks, expecting 202
submit() {
	TASK_ID=
	api POST "/v1/sandboxes/$1/tasks" "$2"
	expect_status 202 || return 1
	TASK_ID=$(j .id)
	ulid_ok "$TASK_ID" || t_err "$REQ: .id is not a ULID: $TASK_ID"
}

# wait_task SB TASK SECS: until the task is no longer running (BODY = it)
wait_task() {
	local i
	for ((i = 0; i < $3 * 4; i++)); do
		api GET "/v1/sandboxes/$1/tasks/$2"
		[[ $STATUS == 200 && $(j .status) != running ]] && return 0
		sleep 0.25
	done
	t_err "task $2 still running after $3 s: $(short_body)"
}

# wait_sb SB JQ-CONDITION SECONDS: polls GET /v1/sandboxes/SB until true.
wait_sb() {
	local sb=$1 cond=$2 secs=$3 i
	for ((i = 0; i < secs * 4; i++)); do
		api GET "/v1/sandboxes/$sb"
		[[ $(j "$cond") == true ]] && return 0
		sleep 0.25
	done
	t_err "after ${secs}s, not ($cond): $(short_body)"
}

# sandbox_status SB: prints .status of GET /v1/sandboxes/SB (or "HTTP <code>")
sandbox_status() {
	api GET "/v1/sandboxes/$1"
	if [[ $STATUS == 200 ]]; then j .status; else echo "HTTP $STATUS"; fi
}

# --- cleanup --------------------------------------------------------------------

# sandbox_post CONTAINER URL KEY BODY: a POST of the JSON BODY to URL from
# inside the sandbox's container (python: the image has no curl), with
# x-api-key KEY unless it is empty; prints the HTTP status.
# own_calls APP_ID: the app opts in to model calls of its own (with a
# big budget), so its sandbox's proxy token works while no task runs.
own_calls() { api PATCH "/v1/apps/$1" '{"own_model_calls":{"usd":1000}}' >/dev/null; }

sandbox_post() {
	docker exec "$1" python3 -c '
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=sys.argv[3].encode(), method="POST")
if sys.argv[2]: req.add_header("x-api-key", sys.argv[2])
req.add_header("content-type", "application/json")
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
' "$2" "$3" "$4" 2>&1
}

# seeds_quickstart API TOKEN: the user's guide's first steps, verbatim
# (only the values of API and SANDBOXD_TOKEN differ): exports API,
# SANDBOXD_TOKEN and AUTH as the guide does and sets APP and SB from its
# commands, for the guide's later commands to use.
seeds_quickstart() {
	export API=$1
	export SANDBOXD_TOKEN=$2
	export AUTH="Authorization: Bearer $SANDBOXD_TOKEN"

	# --- the seeds, verbatim ---------------------------------------------------
	APP=$(curl -s -XPOST $API/v1/apps -H "$AUTH" \
	  -H 'content-type: application/json' \
	  -d '{"name":"todo","runtime_preset":"react-vite"}' \
	  | sed -E 's/.*"id":"([^"]+)".*/\1/')

	SB=$(curl -s -XPOST $API/v1/apps/$APP/sandbox -H "$AUTH" \
	  -H 'content-type: application/json' -d '{"ports":[3000]}' \
	  | sed -E 's/.*"id":"([^"]+)".*/\1/')

	echo "# app=$APP sandbox=$SB"
	# --- end of the seeds -----------------------------------------------------
}

it_cleanup() {
	local rc=$? hook
	trap - EXIT TERM INT HUP
	local pids
	pids=$(jobs -pr)
	# shellcheck disable=SC2086
	[[ -n $pids ]] && kill $pids 2>/dev/null
	# Hooks (e.g. "make sure dockerd runs") before the containers go.
	for hook in "${IT_CLEANUP_HOOKS[@]}"; do "$hook"; done
	stop_daemon 2>/dev/null
	remove_test_containers
	docker_ok && remove_test_networks
	if [[ -n ${IT_KEEP:-} ]]; then
		echo "# kept $IT_TMP"
	else
		rm -rf "$IT_TMP"
	fi
	exit "$rc"
}
trap it_cleanup EXIT
trap 'exit 143' TERM INT HUP

# --- the test npm registry and the starters (tests/registry, tests/fixtures) --

# start_npm_registry: tests/registry/serve.py, the npm registry filled by
# scripts/bootstrap (tests/registry/build.sh) from the starters' lockfiles,
# in a network namespace of its own (outside_host) that has no route but
# its veth: sets NPM_REG_URL (http://NET.2:4873/) and NPM_REG_NS, and logs
# each request to $NPM_REG_LOG ("GET /path STATUS").  Stopped at cleanup.
# Bails when the registry is not built or does not answer.
start_npm_registry() {
	local dir=${TEST_REGISTRY_DIR:-$IT_ROOT/build/test-registry} net
	[[ -d $dir/packuments ]] ||
		bail "no test npm registry in $dir (tests/registry/build.sh; scripts/bootstrap runs it)"
	net=$(pick_net24 10.251)
	[[ $net =~ ^10\.251\.[0-9]+$ ]] || bail "no free 10.251.X.0/24 for the npm registry: $net"
	NPM_REG_NS=sbxit-$$-npm
	NPM_REG_URL=http://$net.2:4873/
	NPM_REG_LOG=$IT_TMP/npm-registry.log
	: >"$NPM_REG_LOG"
	IT_CLEANUP_HOOKS+=(stop_npm_registry)
	outside_host "$NPM_REG_NS" "sbxr$$" "sbxpr$$" "$net" 2 ||
		bail "cannot set up the npm registry's namespace"
	ip netns exec "$NPM_REG_NS" python3 "$IT_ROOT/tests/registry/serve.py" --dir "$dir" \
		--host "$net.2" --port 4873 --base "$NPM_REG_URL" --log "$NPM_REG_LOG" \
		>"$IT_TMP/npm-registry.out" 2>&1 &
	NPM_REG_PID=$!
	wait_until 10 curl -sf -o /dev/null --max-time 2 "${NPM_REG_URL}vite" ||
		bail "the npm registry did not come up: $(tail -n 3 "$IT_TMP/npm-registry.out")"
	: >"$NPM_REG_LOG"
}
stop_npm_registry() {
	[[ -n ${NPM_REG_PID:-} ]] || return 0
	kill "$NPM_REG_PID" 2>/dev/null
	wait "$NPM_REG_PID" 2>/dev/null
	NPM_REG_PID=
}
# npm_reg_requests: how many requests the registry has answered so far.
npm_reg_requests() { wc -l <"$NPM_REG_LOG" | tr -d ' '; }

# starter_repo ID BARE: the bare repository BARE made from the fixture
# tests/fixtures/starters/ID (one commit on main, as a user's push would
# leave it; node_modules never in it).
starter_repo() {
	local src=$IT_ROOT/tests/fixtures/starters/$1 w
	[[ -d $src ]] || return 1
	w=$(mktemp -d "$IT_TMP/starter.XXXXXX")
	(cd "$src" && tar --exclude=node_modules -cf - .) | tar -xf - -C "$w" &&
		git -c init.defaultBranch=main init -q "$w" &&
		git -C "$w" add -A &&
		git -C "$w" -c user.name=dev -c user.email=dev@example.com commit -q -m "$1 starter" &&
		git -c safe.directory='*' clone -q --bare "$w" "$2" &&
		rm -rf "$w"
}

# starter_info ID: the row of tests/fixtures/starters/starters.tsv ->
# S_RECIPE (the recipe detection must choose), S_DIR ("" for the root),
# S_PATH and S_TEXT (what the preview answers).  1 when there is none.
starter_info() {
	local id recipe dir path text
	while IFS=$'\t' read -r id recipe dir path text; do
		[[ $id == "$1" ]] || continue
		S_RECIPE=$recipe S_PATH=$path S_TEXT=$text
		S_DIR=${dir#-}
		return 0
	done <"$IT_ROOT/tests/fixtures/starters/starters.tsv"
	return 1
}

# starters_daemon ID…: a bare repository per fixture ID under
# $IT_TMP/starters served by start_git_server, the test npm registry
# (start_npm_registry), and an edge daemon (start_edge_daemon) importing
# from loopback with SANDBOXD_NPM_REGISTRY set to the registry; extra
# settings in STARTERS_ENV (an array).  Bails when a part does not come up.
starters_daemon() {
	local id
	mkdir -p "$IT_TMP/starters"
	for id in "$@"; do
		starter_repo "$id" "$IT_TMP/starters/$id.git" || bail "cannot make the $id repository"
	done
	start_git_server "$IT_TMP/starters"
	start_npm_registry
	start_edge_daemon "SANDBOXD_IMAGE=$IT_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1 \
		"SANDBOXD_NPM_REGISTRY=$NPM_REG_URL" \
		"${STARTERS_ENV[@]}"
}

# import_starter ID [NAME]: an app with git.repo_url only (no preset, no
# sandbox.yaml) and its sandbox -> APP, SB; START_MS[SB] = when it began.
declare -A START_MS=()
import_starter() {
	local t0
	t0=$(now_ms)
	create_app "${2:-$1}" "\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/$1.git\"}" &&
		create_sandbox "$APP_ID" '{}' || return 1
	APP=$APP_ID SB=$SB_ID
	START_MS[$SB]=$t0
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# starter_answers ID SB: the preview of SB answers the starter's page.
starter_answers() {
	starter_info "$1" || return 1
	[[ $(ecurl "s-$2-3000.preview.localhost:$EDGE_PORT" "$S_PATH" --max-time 10) == *"$S_TEXT"* ]]
}

# wait_starters SECS ID=SB…: waits (all at once) until each SB's preview
# answers its starter's page; an error per one that did not within SECS,
# with its status's problem and manifest.  Notes how long each took.
wait_starters() {
	local secs=$1 pair id sb end left=()
	shift
	left=("$@")
	end=$(($(date +%s) + secs))
	while ((${#left[@]})) && (($(date +%s) < end)); do
		local next=()
		for pair in "${left[@]}"; do
			id=${pair%%=*} sb=${pair#*=}
			if starter_answers "$id" "$sb"; then
				note "$id: the preview answered $(((($(now_ms) - ${START_MS[$sb]:-$(now_ms)})) / 1000)) s after the import began"
			else
				next+=("$pair")
			fi
		done
		left=("${next[@]}")
		((${#left[@]})) && sleep 1
	done
	for pair in "${left[@]}"; do
		id=${pair%%=*} sb=${pair#*=}
		starter_info "$id"
		api GET "/v1/sandboxes/$sb"
		t_err "$id: no answer with \"$S_TEXT\" within ${secs}s: install $(jq -c .install <<<"$BODY") problem $(jq -c '.problem // empty' <<<"$BODY" | head -c 300) manifest $(jq -c .manifest <<<"$BODY" | head -c 300); web.log: $(tail -n 4 "$DATA/workspaces/$sb/.sandboxd/logs/web.log" 2>/dev/null | tr "\n" " ")"
	done
	((${#left[@]} == 0))
}

# check_detected ID APP SB: sandbox.yaml written by sandboxd and committed
# alone on top of the import; runtime-inspect names the starter's recipe
# (and sub-directory).
check_detected() {
	local id=$1 app=$2 sb=$3 a=$DATA/workspaces/$3/workspace/app
	local -a g=(git -c safe.directory='*' -C "$a")
	starter_info "$id" || { t_err "$id is not in starters.tsv"; return 1; }
	[[ $(head -n 1 "$a/sandbox.yaml" 2>/dev/null) == "# Written by sandboxd"* ]] ||
		t_err "$id: sandbox.yaml's first line: $(head -n 1 "$a/sandbox.yaml" 2>&1)"
	[[ $("${g[@]}" log -1 --format=%s) == "sandboxd: "*sandbox.yaml* ]] ||
		t_err "$id: the last commit: $("${g[@]}" log -1 --format=%s)"
	[[ $("${g[@]}" show --name-only --format= HEAD) == sandbox.yaml ]] ||
		t_err "$id: the commit has more than sandbox.yaml: $("${g[@]}" show --name-only --format= HEAD | head -n 3)"
	[[ $("${g[@]}" rev-list --count HEAD) == 2 ]] || t_err "$id: not one commit on top of the import"
	api GET "/v1/apps/$app/runtime-inspect"
	expect_status 200 || return 1
	[[ $(j .detection.recipe) == "$S_RECIPE" ]] ||
		t_err "$id: runtime-inspect's recipe is $(j .detection.recipe), not $S_RECIPE: $(short_body)"
	[[ $(j '.detection.dir // ""') == "$S_DIR" ]] ||
		t_err "$id: runtime-inspect's dir is '$(j '.detection.dir // ""')', not '$S_DIR'"
}
