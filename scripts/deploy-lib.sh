# shellcheck shell=bash disable=SC2034
# scripts/deploy-lib.sh: what upgrade.sh and uninstall.sh share (sourced;
# install.sh keeps its own copy, since it runs before there is a checkout;
# tests/integration/66-install-checks.sh holds env_value and check_data_dir
# the same in both).
# Sets SRC (the checkout), SUDO (an array: empty as root, else sudo),
# COMPOSE (the compose command: the plugin, else docker-compose) and
# COMPOSE_NAME; reads settings from $SRC/.env with env_value.

say() { printf '%s: %s\n' "${PROG:-sandboxd}" "$*"; }
warn() { printf '%s: warning: %s\n' "${PROG:-sandboxd}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${PROG:-sandboxd}" "$*" >&2; exit 1; }

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# env_value FILE NAME: as install.sh's (the last line wins, "export " and
# one pair of quotes stripped).
env_value() {
	awk -v k="$2" '
		{ sub(/^[ \t]+/, ""); sub(/^export[ \t]+/, "") }
		/^#/ || index($0, "=") == 0 { next }
		{
			key = substr($0, 1, index($0, "=") - 1); sub(/[ \t]+$/, "", key)
			if (key != k) next
			v = substr($0, index($0, "=") + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
			if (length(v) >= 2 && (substr(v, 1, 1) == "\"" || substr(v, 1, 1) == "'\''") &&
			    substr(v, length(v), 1) == substr(v, 1, 1))
				v = substr(v, 2, length(v) - 2)
			val = v
		}
		END { printf "%s", val }
	' "$1"
}

setting() { # setting NAME [DEFAULT]: from .env
	local v
	v=$(env_value "$SRC/.env" "$1")
	echo "${v:-${2:-}}"
}

deploy_init() {
	[[ -f $SRC/.env ]] || die "$SRC/.env is missing: install with install.sh first"
	SUDO=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null && sudo -n true 2>/dev/null ||
			die "run as root or as a user who may sudo"
		SUDO=(sudo)
	fi
	"${SUDO[@]}" docker version >/dev/null 2>&1 || die "the Docker engine does not answer (docker version)"
	if "${SUDO[@]}" docker compose version >/dev/null 2>&1; then
		COMPOSE=("${SUDO[@]}" docker compose)
		COMPOSE_NAME="docker compose"
	elif command -v docker-compose >/dev/null; then
		COMPOSE=("${SUDO[@]}" docker-compose)
		COMPOSE_NAME=docker-compose
	else
		die "Docker Compose not found: install the Compose plugin (docker compose) or docker-compose"
	fi
	DATA=$(setting SANDBOXD_DATA_DIR)
	DAEMON_IMAGE=$(setting SANDBOXD_DAEMON_IMAGE sandboxd-daemon:latest)
	BASE_IMAGE=$(setting SANDBOXD_IMAGE sandboxd-base:0.1.0)
	API_URL=http://$(setting SANDBOXD_API_ADDR 127.0.0.1:9090)
	API_URL=${API_URL/\/\/0.0.0.0:/\/\/127.0.0.1:}
	PROJECT=$(setting COMPOSE_PROJECT_NAME sandboxd)
}

# run_compose ARGS…: compose in the checkout with a clean environment (it
# reads .env, nothing of this shell).  COMPOSE_PROFILES_ALL=1 adds every
# profile (for down).
run_compose() {
	local extra=()
	[[ ${COMPOSE_PROFILES_ALL:-0} == 1 ]] && extra=(COMPOSE_PROFILES=traefik)
	(cd "$SRC" && env -i PATH="$PATH" HOME="$HOME" ${DOCKER_HOST:+DOCKER_HOST="$DOCKER_HOST"} \
		SANDBOXD_GIT_COMMIT="$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)" \
		"${extra[@]}" "${COMPOSE[@]}" "$@")
}

image_id() { "${SUDO[@]}" docker image inspect -f '{{.Id}}' "$1" 2>/dev/null; }

# The daemon's container of this install (running or not), or nothing.
daemon_container() {
	"${SUDO[@]}" docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" \
		--filter label=com.docker.compose.service=sandboxd | head -n 1
}

daemon_running() {
	local c
	c=$(daemon_container)
	[[ -n $c && $("${SUDO[@]}" docker inspect -f '{{.State.Running}}' "$c" 2>/dev/null) == true ]]
}

# wait_healthy SECONDS: /healthz says ok.
wait_healthy() {
	local i
	for ((i = 0; i < $1; i++)); do
		[[ $(curl -s --max-time 2 "$API_URL/healthz" 2>/dev/null) == ok ]] && return 0
		sleep 1
	done
	return 1
}

# The data directory must be sandboxd's own: never empty, /, a top-level
# system directory or a home directory.
check_data_dir() {
	local d=${1%/}
	[[ -n $d && $d == /* ]] || die "SANDBOXD_DATA_DIR=\"$1\" is not an absolute path"
	[[ $d != *..* ]] || die "SANDBOXD_DATA_DIR=\"$1\" contains .."
	case $d in
	"" | /bin | /boot | /dev | /etc | /home | /home/* | /lib | /lib64 | /media | /mnt | /opt | \
		/proc | /root | /run | /sbin | /srv | /sys | /tmp | /usr | /usr/* | /var | /var/lib | "$HOME")
		[[ $d == /home/*/* && $d != "$HOME" ]] ||
			die "SANDBOXD_DATA_DIR=\"$1\" is not a directory of sandboxd's own: refused" ;;
	esac
}

# wait_stopped SECONDS: the daemon's container is not running.
wait_stopped() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		daemon_running || return 0
		sleep 0.5
	done
	return 1
}

# Whether this daemon image has `sandboxd CMD` (backup, restore, setup-code).
daemon_has() {
	local out
	# the whole help first: grep -q would close the pipe at its match and
	# the writer's SIGPIPE fail the pipeline (pipefail) at random
	out=$("${SUDO[@]}" docker run --rm --entrypoint /usr/local/bin/sandboxd "$2" help 2>&1) || true
	grep -qE "sandboxd $1( |\$)" <<<"$out"
}
