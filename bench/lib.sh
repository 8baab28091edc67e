# shellcheck shell=bash
# bench/lib.sh: helpers the benchmark scripts source.  Not a benchmark.
#
# Starts a snapshot of build/sandboxd (renamed sbd-bench) on a free port
# with a throwaway data dir (from a temp cwd with no .env, with every
# SANDBOXD_* variable of the caller's environment unset), talks to it with
# curl, and always cleans up on exit, also on failure or ^C: stops the
# daemon it started (by pid), then removes every container that mounts
# something under its temp dir and every container it made directly (label
# sandboxd.bench.run=<this run>), then the Docker networks (and their nft
# tables) of its daemons (`sandboxd network remove`), then the temp dir.
# Each data dir gets a sandbox network of its own, sbd-bench-<run>-<n>.

set -uo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_SRC_BIN=${SANDBOXD_BIN:-$BENCH_ROOT/${BUILD:-build}/sandboxd}
case ${DOCKER_HOST:-} in
unix://*) DOCKER_SOCK=${DOCKER_HOST#unix://} ;;
*) DOCKER_SOCK=/var/run/docker.sock ;;
esac
# Engine API version for the reference calls: the one sandboxd speaks.
DOCKER_API=${DOCKER_API:-v1.41}

BENCH_RUN=$(date +%s)-$$-$RANDOM
# No "sandboxd" in the paths or the process name: someone's `pkill sandboxd`
# (or pkill -f) on a shared machine must not hit the daemon being measured.
BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sbd-bench.XXXXXX")
chmod 755 "$BENCH_TMP"
BENCH_TOKEN=bench-$RANDOM$RANDOM$RANDOM
DAEMON_PID=
DAEMON_URL=
DAEMON_ERR=/dev/null
# Data dir -> the sandbox network its daemon uses.
declare -A BENCH_NETS=()

die() {
	echo "bench: $*" >&2
	if [[ -n $DAEMON_PID ]] && ! daemon_alive; then
		echo "bench: the daemon (pid $DAEMON_PID) is no longer running" >&2
	fi
	dump_daemon_log
	exit 1
}

# Alive and not a zombie (a dead child stays one until waited for).
daemon_alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat" 2>/dev/null)
	[[ -n $st && $st != Z ]]
}

dump_daemon_log() {
	[[ -s $DAEMON_ERR ]] || return 0
	echo "bench: --- last lines of the daemon's log ---" >&2
	tail -n 20 "$DAEMON_ERR" | sed 's/^/bench: | /' >&2
}

# A snapshot of the binary, so a rebuild by someone else during the run
# does not change what is measured.
cp "$BENCH_SRC_BIN" "$BENCH_TMP/sbd-bench" 2>/dev/null ||
	die "no daemon binary at $BENCH_SRC_BIN (run make first)"
BENCH_BIN=$BENCH_TMP/sbd-bench

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || {
			echo "$p"
			return
		}
	done
}

# daemon_start DATA_DIR [VAR=value…]: starts the daemon, waits until it
# says it listens and its sandbox network is ready.  The network is
# SANDBOXD_NETWORK=sbd-bench-<run>-<n>, one per data dir (a VAR=value may
# name another).  Sets DAEMON_PID, DAEMON_URL, DAEMON_ERR.
daemon_start() {
	local data=$1 port cwd out v net
	shift
	if [[ -z ${BENCH_NETS[$data]:-} ]]; then
		BENCH_NETS[$data]=sbd-bench-$BENCH_RUN-${#BENCH_NETS[@]}
	fi
	net=${BENCH_NETS[$data]}
	for v in "$@"; do
		[[ $v == SANDBOXD_NETWORK=* ]] && net=${v#*=}
	done
	grep -qxF -- "$net" "$BENCH_TMP/.networks" 2>/dev/null ||
		echo "$net" >>"$BENCH_TMP/.networks"
	mkdir -p "$BENCH_TMP/cwd"
	for _ in 1 2 3; do
		port=$(free_port)
		cwd=$BENCH_TMP/cwd
		out=$BENCH_TMP/daemon.$port.out
		DAEMON_ERR=$BENCH_TMP/daemon.$port.err
		(
			cd "$cwd" || exit 1
			for v in $(compgen -e); do
				[[ $v == SANDBOXD_* ]] && unset "$v"
			done
			export SANDBOXD_DATA_DIR=$data
			export SANDBOXD_API_ADDR=127.0.0.1:$port
			export SANDBOXD_API_TOKENS=bench=$BENCH_TOKEN
			export SANDBOXD_NETWORK=$net
			HTTP_PORT=$(free_port)
			SANDBOXD_PROXY_PORT=$(free_port)
			export HTTP_PORT SANDBOXD_PROXY_PORT
			for v in "$@"; do export "${v?}"; done
			exec "$BENCH_BIN" serve >"$out" 2>"$DAEMON_ERR" </dev/null
		) &
		DAEMON_PID=$!
		DAEMON_URL=http://127.0.0.1:$port
		local i
		for ((i = 0; i < 150; i++)); do
			if grep -q '^sandboxd listening on ' "$out" 2>/dev/null; then
				daemon_wait_network
				return
			fi
			daemon_alive || break
			sleep 0.1
		done
		daemon_stop
		grep -q 'in use' "$DAEMON_ERR" 2>/dev/null || break
	done
	die "the daemon did not start"
}

# Waits up to 30 s for GET /v1/status to show the sandbox network ready
# (a daemon without /v1/status is not waited for).
daemon_wait_network() {
	local i r
	for ((i = 0; i < 300; i++)); do
		r=$(api GET /v1/status)
		[[ ${r%% *} == 200 ]] || return 0
		[[ $(body | jq -r '.network.ready') == true ]] && return 0
		daemon_alive || die "the daemon exited"
		sleep 0.1
	done
	die "the sandbox network is not ready after 30 s: $(body)"
}

# daemon_gateway: the gateway of the daemon's sandbox network (where its
# credential proxy listens), from GET /v1/status.  Sets GW.
daemon_gateway() {
	local r
	r=$(api GET /v1/status)
	GW=$(body | jq -r '.network.gateway // empty')
	[[ ${r%% *} == 200 && -n $GW ]] || die "GET /v1/status shows no gateway: HTTP ${r%% *} $(body)"
}

daemon_stop() {
	[[ -n $DAEMON_PID ]] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# api METHOD PATH [BODY]: the body of the answer goes to $BENCH_TMP/body;
# prints "STATUS TIME_TOTAL_SECONDS".
api() {
	local args=(-s -o "$BENCH_TMP/body" -w '%{http_code} %{time_total}'
		-X "$1" -H "Authorization: Bearer $BENCH_TOKEN")
	[[ $# -ge 3 ]] && args+=(--data-binary "$3" -H 'Content-Type: application/json')
	: >"$BENCH_TMP/body"
	curl "${args[@]}" "$DAEMON_URL$2"
}

body() { cat "$BENCH_TMP/body"; }

# engine METHOD PATH [BODY]: a Docker Engine API call over the unix socket;
# same output as api.
engine() {
	local args=(-s -o "$BENCH_TMP/engine-body" -w '%{http_code} %{time_total}'
		--unix-socket "$DOCKER_SOCK" -X "$1")
	[[ $# -ge 3 ]] && args+=(-H 'Content-Type: application/json'
		--data-binary "$3")
	: >"$BENCH_TMP/engine-body"
	curl "${args[@]}" "http://docker/$DOCKER_API$2"
}

engine_body() { cat "$BENCH_TMP/engine-body"; }

# Containers that mount something under our temp dir, or that we made
# directly.
our_containers() {
	local ids
	ids=$(docker ps -aq --no-trunc --filter label=sandboxd.managed=true)
	if [[ -n $ids ]]; then
		# shellcheck disable=SC2086
		docker inspect $ids 2>/dev/null | jq -r --arg t "$BENCH_TMP/" \
			'.[] | select(any(.Mounts[]?; .Source | startswith($t))) | .Id'
	fi
	docker ps -aq --no-trunc --filter "label=sandboxd.bench.run=$BENCH_RUN"
}

# If the engine is away (someone restarting it), waits up to 60 s for it so
# nothing is left behind; says what to remove by hand when it stays away.
bench_cleanup() {
	daemon_stop
	local ids i
	for ((i = 0; i < 30; i++)); do
		docker info >/dev/null 2>&1 && break
		sleep 2
	done
	if ! docker info >/dev/null 2>&1; then
		echo "bench: the Docker engine does not answer; remove by hand the" \
			"containers that mount $BENCH_TMP/... or carry the label" \
			"sandboxd.bench.run=$BENCH_RUN" >&2
	else
		ids=$(our_containers | sort -u)
		if [[ -n $ids ]]; then
			# shellcheck disable=SC2086
			docker rm -f -v $ids >/dev/null 2>&1 ||
				echo "bench: could not remove every container of: $ids" >&2
		fi
		bench_remove_networks
	fi
	rm -rf "$BENCH_TMP"
}

# `sandboxd network remove` for every network this run's daemons used: its
# nft table, and the Docker network (ours, nothing attached any more).
bench_remove_networks() {
	local net out
	[[ -s $BENCH_TMP/.networks ]] || return 0
	while IFS= read -r net; do
		[[ -n $net ]] || continue
		# From the daemons' cwd, which has no .env.  The engine may list
		# an endpoint of a container removed a moment ago: asked again.
		local try
		for try in 1 2 3; do
			out=$(cd "$BENCH_TMP/cwd" && env -i "PATH=$PATH" ${DOCKER_HOST:+"DOCKER_HOST=$DOCKER_HOST"} \
				"SANDBOXD_NETWORK=$net" timeout 60 "$BENCH_BIN" network remove 2>&1 </dev/null) && break
			((try < 3)) && sleep 2
		done ||
			echo "bench: sandboxd network remove of $net failed: $(tail -n 2 <<<"$out")" >&2
	done <"$BENCH_TMP/.networks"
}

trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Statistics over numbers (one a line) on stdin, in milliseconds:
# prints "n p50 p90 mean min max".  Percentiles interpolate linearly
# between the closest ranks (numpy's default).
stats() {
	sort -g | awk '
		{ v[n++] = $1; s += $1 }
		function pct(p,   r, lo) {
			r = p * (n - 1); lo = int(r)
			return lo + 1 < n ? v[lo] + (r - lo) * (v[lo + 1] - v[lo]) : v[lo]
		}
		END {
			if (n == 0) { print "0 0 0 0 0 0"; exit }
			printf "%d %.1f %.1f %.1f %.1f %.1f\n", n, pct(0.5), pct(0.9), s / n, v[0], v[n - 1]
		}'
}

# ms SECONDS: seconds (curl's time_total) to milliseconds.
ms() { awk -v s="$1" 'BEGIN { printf "%.3f", s * 1000 }'; }

proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# Prints the daemon's warnings and errors of this run, if any (at most 5).
daemon_log_notes() {
	local n
	n=$(grep -cE '^[^ ]+ (warn|error) ' "$DAEMON_ERR" 2>/dev/null)
	((${n:-0} > 0)) || return 0
	echo "  note: the daemon logged $n warning(s)/error(s), e.g.:"
	grep -E '^[^ ]+ (warn|error) ' "$DAEMON_ERR" | head -n 5 | sed 's/^/    | /'
}
