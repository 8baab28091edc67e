#!/usr/bin/env bash
# install.sh: install sandboxd on this machine with Docker Compose.
#
#   curl -fsSL <raw URL of install.sh> -o install-sandboxd.sh && less install-sandboxd.sh
#   SANDBOXD_REPO=<git URL or path> SANDBOXD_REF=v0.1.0 bash install-sandboxd.sh
#
# What it does, in order (each step checks before it acts, so running it
# again changes nothing that is already right):
#   1. checks: root or sudo, the Docker engine answers, Docker Compose (the
#      plugin, else a standalone docker-compose, else it stops with "Docker
#      Compose not found"), git, the ports it needs are free, and warns
#      below 8 GB of memory or 40 GB of free disk;
#   2. clones SANDBOXD_REPO into $HOME/.sandboxd/src (or fetches) and checks
#      out SANDBOXD_REF;
#   3. writes .env there from .env.example, once: a fresh API token, the data
#      directory, and every setting of .env.example given in this
#      environment (HTTP_PORT=8080 bash install.sh); an existing .env is
#      never touched;
#   4. builds the daemon's image and the sandbox image, writes Traefik's
#      configuration, runs `docker compose up -d` and waits for /healthz;
#   5. prints the console URL, the console setup code, the API token and a
#      request to try.
#
# Environment (besides any setting of .env.example, at first install):
#   SANDBOXD_REPO      the repository to clone: a URL, a mirror or a local
#                      path (default: the checkout this script is in)
#   SANDBOXD_REF       branch, tag or commit to check out (default main)
#   SANDBOXD_HOME      where the checkout goes (default $HOME/.sandboxd;
#                      the checkout is $SANDBOXD_HOME/src)
#   SANDBOXD_TRAEFIK   1 (default): Traefik in front of the daemon's edge;
#                      0: without it, the edge publishes HTTP_PORT itself
#   SANDBOXD_SKIP_IMAGE=1   use the sandbox image SANDBOXD_IMAGE names as it
#                      is (it must exist) instead of building it
#   SANDBOXD_HEALTH_TIMEOUT seconds to wait for /healthz (default 180)
#   install.sh --check      only the checks of step 1
#
# The whole script is one function called on its last line, so a download
# cut short runs nothing.

sandboxd_install() {
	set -euo pipefail
	local ref=${SANDBOXD_REF:-main}
	local home=${SANDBOXD_HOME:-$HOME/.sandboxd}
	local src=$home/src
	local traefik=${SANDBOXD_TRAEFIK:-1}
	local health_timeout=${SANDBOXD_HEALTH_TIMEOUT:-180}
	local check_only=0 here repo sudo=() compose=() compose_name

	say() { printf 'sandboxd: %s\n' "$*"; }
	warn() { printf 'sandboxd: warning: %s\n' "$*" >&2; }
	die() { printf 'sandboxd: error: %s\n' "$*" >&2; exit 1; }

	case ${1:-} in
	--check) check_only=1 ;;
	"") ;;
	*) die "usage: install.sh [--check]" ;;
	esac
	[[ $traefik == 0 || $traefik == 1 ]] || die "SANDBOXD_TRAEFIK=$traefik: expected 0 or 1"

	# The checkout this script runs from, if any (not when piped to bash).
	here=
	if [[ -n ${BASH_SOURCE[0]:-} && -f ${BASH_SOURCE[0]} ]]; then
		here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
		[[ -f $here/docker-compose.yml && -e $here/.git ]] || here=
	fi
	repo=${SANDBOXD_REPO:-$here}

	# --- 1. checks ------------------------------------------------------------

	# Root, or sudo for what needs it (Docker, the data directory).
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null && sudo -n true 2>/dev/null ||
			die "run as root or as a user who may sudo (Docker and the data directory need it)"
		sudo=(sudo)
	fi
	command -v git >/dev/null || die "git is required: apt-get install git (or your system's package)"
	command -v curl >/dev/null || die "curl is required: apt-get install curl"

	local engine
	engine=$("${sudo[@]}" docker version --format '{{.Server.Version}}' 2>/dev/null) ||
		die "the Docker engine does not answer (docker version): install Docker Engine and start it (systemctl start docker)"
	say "Docker engine $engine"

	if "${sudo[@]}" docker compose version >/dev/null 2>&1; then
		compose=("${sudo[@]}" docker compose)
		compose_name="docker compose"
	elif command -v docker-compose >/dev/null && "${sudo[@]}" docker-compose version >/dev/null 2>&1; then
		compose=("${sudo[@]}" docker-compose)
		compose_name=docker-compose
	else
		die "Docker Compose not found: install the Compose plugin (docker compose; Debian: docker-compose-plugin from Docker's repository) or docker-compose"
	fi
	say "Compose: $compose_name ($("${compose[@]}" version --short 2>/dev/null || echo "version unknown"))"

	# Settings as they will be: the existing .env's, else this
	# environment's, else .env.example's defaults.
	setting() { # setting NAME DEFAULT
		local v
		if [[ -f $src/.env ]]; then
			v=$(env_value "$src/.env" "$1")
		else
			v=${!1:-}
		fi
		echo "${v:-$2}"
	}
	local http_port api_addr tls edge_port profiles project
	http_port=$(setting HTTP_PORT 80)
	api_addr=$(setting SANDBOXD_API_ADDR 127.0.0.1:9090)
	tls=$(setting PREVIEW_TLS false)
	project=$(setting COMPOSE_PROJECT_NAME sandboxd)
	if [[ -f $src/.env ]]; then
		profiles=$(setting COMPOSE_PROFILES "")
	elif ((traefik)); then
		profiles=${COMPOSE_PROFILES:-traefik}
	else
		profiles=${COMPOSE_PROFILES:-}
	fi
	edge_port=$(setting SANDBOXD_EDGE_PORT "")
	[[ -z $edge_port && $profiles == *traefik* ]] && edge_port=8480

	# Ports: free, unless this install's own daemon holds them already.
	local running ports=() p
	running=$("${sudo[@]}" docker ps -q --filter "label=com.docker.compose.project=$project" \
		--filter label=com.docker.compose.service=sandboxd 2>/dev/null || true)
	if [[ -n $running ]]; then
		say "ports: this install's daemon is running (ports not checked again)"
	else
		ports=("$http_port" "${api_addr##*:}")
		[[ $tls == true || $tls == 1 ]] && ports+=(80 443)
		[[ -n $edge_port && $edge_port != "$http_port" ]] && ports+=("$edge_port")
		for p in $(printf '%s\n' "${ports[@]}" | sort -un); do
			port_busy "$p" && die "port $p is in use ($(port_user "$p")); free it or pick another (HTTP_PORT=8080 bash install.sh for the previews)"
		done
		say "ports free: $(printf '%s\n' "${ports[@]}" | sort -un | tr '\n' ' ')"
	fi

	# The seeds' numbers: 8 GB of memory and 40 GB of disk for a few apps.
	local mem_kb avail_kb data_parent
	mem_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null || echo 0)
	if ((mem_kb < 7500000)); then
		warn "$((mem_kb / 1024 / 1024)) GB of memory: plan 8 GB for a server with several apps (a running sandbox holds a whole Node or Python toolchain; 4 GB runs one small app)"
	fi
	data_parent=$(setting SANDBOXD_DATA_DIR /var/lib)
	while [[ ! -d $data_parent ]]; do data_parent=$(dirname "$data_parent"); done
	avail_kb=$(df -Pk "$data_parent" | awk 'NR == 2 { print $4 }')
	if ((avail_kb < 40 * 1024 * 1024)); then
		warn "$((avail_kb / 1024 / 1024)) GB free on $data_parent: plan 40 GB (each app keeps its own dependencies, node_modules adds up)"
	fi
	if ((check_only)); then
		say "checks passed"
		return 0
	fi

	# --- 2. the checkout ---------------------------------------------------------

	local commit
	if [[ -d $src/.git || -f $src/.git ]]; then
		say "fetching $ref into $src"
		git -C "$src" fetch --quiet --tags origin 2>/dev/null || warn "git fetch failed; using what $src has"
		git -C "$src" fetch --quiet origin "$ref" 2>/dev/null || true
	else
		[[ -n $repo ]] || die "SANDBOXD_REPO is not set: the repository to install from (a URL, a mirror or a local path)"
		say "cloning $repo into $src"
		mkdir -p "$home"
		git clone --quiet "$repo" "$src" || die "git clone $repo failed"
		git -C "$src" fetch --quiet origin "$ref" 2>/dev/null || true
	fi
	commit=$(resolve_ref "$src" "$ref") || die "$ref is not a branch, tag or commit of $(git -C "$src" remote get-url origin)"
	if [[ $(git -C "$src" rev-parse HEAD) != "$commit" ]]; then
		git -C "$src" checkout --quiet --detach "$commit" || die "git checkout $ref failed in $src"
	fi
	say "source: $ref at ${commit:0:12}"

	# --- 3. .env --------------------------------------------------------------

	if [[ -f $src/.env ]]; then
		say ".env exists: kept as it is ($src/.env)"
	else
		write_env "$src" "$traefik"
		say ".env written ($src/.env, mode 0600)"
	fi
	local data token domain image daemon_image
	data=$(env_value "$src/.env" SANDBOXD_DATA_DIR)
	token=$(env_value "$src/.env" SANDBOXD_API_TOKENS)
	domain=$(env_value "$src/.env" PREVIEW_DOMAIN)
	image=$(env_value "$src/.env" SANDBOXD_IMAGE)
	daemon_image=$(env_value "$src/.env" SANDBOXD_DAEMON_IMAGE)
	profiles=$(env_value "$src/.env" COMPOSE_PROFILES)
	project=$(env_value "$src/.env" COMPOSE_PROJECT_NAME)
	project=${project:-$(basename "$src")}
	check_data_dir "$data"
	"${sudo[@]}" mkdir -p "$data" "$data/traefik"

	# --- 4. images, Traefik, compose --------------------------------------------

	if [[ $profiles == *traefik* ]]; then
		# The file provider's directory: traefik-config writes its routers
		# there (as this user), the daemon its custom domains' (as root).
		"${sudo[@]}" mkdir -p "$data/traefik/dynamic"
		"${sudo[@]}" chown "$(id -u):$(id -g)" "$data/traefik/dynamic"
		"$src/scripts/traefik-config" --env "$src/.env" --out "$src/traefik" >/dev/null
		say "Traefik configuration written (traefik/)"
	else
		# compose wants the file to exist even for a service it does not start
		[[ -f $src/traefik/acme.env ]] || (umask 077 && : >"$src/traefik/acme.env")
		say "without Traefik: the edge publishes port $(env_value "$src/.env" HTTP_PORT)"
	fi

	build_console "$src"
	say "building the daemon's image ($daemon_image)"
	run_compose build sandboxd >"$home/build.log" 2>&1 || {
		tail -n 30 "$home/build.log" >&2
		die "building the daemon's image failed (log: $home/build.log)"
	}

	if [[ ${SANDBOXD_SKIP_IMAGE:-0} == 1 ]]; then
		"${sudo[@]}" docker image inspect "$image" >/dev/null 2>&1 ||
			die "SANDBOXD_SKIP_IMAGE=1 but the sandbox image $image does not exist"
		say "sandbox image: $image as it is (SANDBOXD_SKIP_IMAGE=1)"
	else
		build_sandbox_image "$src" "$image" "$daemon_image"
	fi

	say "starting: $compose_name up -d"
	run_compose up -d >"$home/up.log" 2>&1 || {
		tail -n 30 "$home/up.log" >&2
		die "$compose_name up -d failed (log: $home/up.log); see: cd $src && $compose_name ps && $compose_name logs sandboxd"
	}

	local api_url i
	api_url=http://$(local_addr "$(env_value "$src/.env" SANDBOXD_API_ADDR)")
	say "waiting for $api_url/healthz (up to ${health_timeout}s)"
	for ((i = 0; i < health_timeout; i++)); do
		[[ $(curl -s --max-time 2 "$api_url/healthz" 2>/dev/null) == ok ]] && break
		sleep 1
	done
	# and Docker's own health check says so too (what compose ps shows,
	# and what Traefik's depends_on waits for)
	local cid
	cid=$("${sudo[@]}" docker ps -q --filter "label=com.docker.compose.project=$project" \
		--filter label=com.docker.compose.service=sandboxd | head -n 1)
	for (( ; i < health_timeout; i++)); do
		[[ -n $cid && $("${sudo[@]}" docker inspect -f '{{.State.Health.Status}}' "$cid" 2>/dev/null) != starting ]] && break
		sleep 1
	done
	if ((i >= health_timeout)); then
		run_compose logs --tail 20 sandboxd >&2 2>/dev/null || true
		die "sandboxd did not answer $api_url/healthz within ${health_timeout}s. See which service is not running and why: cd $src && $compose_name ps && $compose_name logs sandboxd"
	fi
	say "healthy after ${i}s"

	# --- 5. what to do next ---------------------------------------------------------

	local port scheme console code
	port=$(env_value "$src/.env" HTTP_PORT)
	scheme=http
	case $(env_value "$src/.env" PREVIEW_TLS) in true | 1) scheme=https ;; esac
	console=$scheme://console.${domain:-localhost}
	if [[ ! ($scheme == http && $port == 80) && ! ($scheme == https && $port == 443) ]]; then
		console+=:$port
	fi
	code=$(setup_code)
	token=${token#*=}
	token=${token%%,*}
	cat <<-EOF

		sandboxd is running ($(git -C "$src" describe --tags --always 2>/dev/null)).

		Console:     $console
		             (on a remote server without DNS yet: ssh -L 8080:127.0.0.1:$port you@server,
		             then http://console.localhost:8080)
		Setup code:  ${code:-(this version prints none; set the console up as its page says)}
		API:         $api_url (this host only; never expose it)
		API token:   $token
		             (keep it safe: it controls Docker on this host)

		Try it:
		  curl -s $api_url/v1/apps -H "Authorization: Bearer $token"
		  curl -s -XPOST $api_url/v1/apps -H "Authorization: Bearer $token" -H 'content-type: application/json' -d '{"name":"hello","runtime_preset":"react-vite"}'

		Logs:        cd $src && $compose_name logs -f sandboxd
		Upgrade:     $src/upgrade.sh [REF]
		Uninstall:   $src/uninstall.sh [--purge]
	EOF
}

# --- helpers (called from sandboxd_install, which sets -euo pipefail) --------------

# env_value FILE NAME: NAME's value in a .env file, as the daemon reads it
# (the last line wins, "export " and one pair of quotes stripped).
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

# port_busy PORT: something listens on TCP PORT (any address).
port_busy() {
	if command -v ss >/dev/null; then
		[[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

port_user() {
	local who
	who=$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'users:(("[^"]*"' | head -n 1 | cut -d'"' -f2)
	echo "${who:-by another program}"
}

# resolve_ref DIR REF: the commit REF names (a branch of origin, a tag, a
# commit), fetched already.
resolve_ref() {
	local c
	for c in "refs/remotes/origin/$2" "refs/tags/$2" "$2"; do
		git -C "$1" rev-parse --verify --quiet "$c^{commit}" && return 0
	done
	git -C "$1" rev-parse --verify --quiet "FETCH_HEAD^{commit}" >/dev/null &&
		[[ $(git -C "$1" rev-parse FETCH_HEAD) == "$2"* ]] && git -C "$1" rev-parse FETCH_HEAD && return 0
	return 1
}

# The data directory must be sandboxd's own: never empty, /, a top-level
# system directory or a home directory (as scripts/deploy-lib.sh).
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

# write_env SRC TRAEFIK: .env from .env.example, with this environment's
# values of its settings, a new token, the data directory and the Traefik
# choice; mode 0600 (it holds the token).
write_env() {
	local src=$1 traefik=$2 tmp key line data names=() base
	tmp=$(mktemp "$src/.env.XXXXXX")
	chmod 600 "$tmp"
	# Settings from this environment.  Not the names of this script's own
	# variables that happen to be exported.
	while IFS= read -r line; do
		key=${line%%=*}
		if [[ $line =~ ^[A-Z][A-Z0-9_]*= && -n ${!key+set} ]]; then
			printf '%s=%s\n' "$key" "${!key}"
			names+=("$key")
		else
			printf '%s\n' "$line"
		fi
	done <"$src/.env.example" >"$tmp"
	set_default() { # set_default NAME VALUE: only when the line is empty
		[[ -n $(env_value "$tmp" "$1") ]] && return 0
		sed -i "s|^$1=.*|$1=$2|" "$tmp"
	}
	data=${SANDBOXD_DATA_DIR:-}
	if [[ -z $data ]]; then
		data=/var/lib/sandboxd
		# Installs of older releases keep their path.
		[[ ! -e /var/lib/sandboxd && -d /var/lib/sandboxed ]] && data=/var/lib/sandboxed
	fi
	check_data_dir "$data"
	set_default SANDBOXD_DATA_DIR "$data"
	set_default SANDBOXD_API_TOKENS "default=sk_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
	if ((traefik)); then
		[[ -n ${COMPOSE_PROFILES+set} ]] || sed -i 's|^COMPOSE_PROFILES=.*|COMPOSE_PROFILES=traefik|' "$tmp"
		[[ -n ${SANDBOXD_EDGE_ADDR+set} ]] || sed -i 's|^SANDBOXD_EDGE_ADDR=.*|SANDBOXD_EDGE_ADDR=127.0.0.1|' "$tmp"
		set_default SANDBOXD_EDGE_PORT 8480
		# Traefik reads the data directory's traefik/ as /var/lib/traefik:
		# its file provider watches dynamic/, where the daemon writes the
		# routers of verified custom domains.
		set_default SANDBOXD_TRAEFIK_DYNAMIC_DIR "$data/traefik/dynamic"
	else
		[[ -n ${COMPOSE_PROFILES+set} ]] || sed -i 's|^COMPOSE_PROFILES=.*|COMPOSE_PROFILES=|' "$tmp"
	fi
	if [[ -z ${SANDBOXD_DAEMON_BASE:-} ]]; then
		base=$(daemon_base "$src")
		sed -i "s|^SANDBOXD_DAEMON_BASE=.*|SANDBOXD_DAEMON_BASE=$base|" "$tmp"
	fi
	((${#names[@]} == 0)) || say "settings from the environment: ${names[*]}"
	mv "$tmp" "$src/.env"
}

# The image the daemon's image is built on: debian:bookworm-slim when it is
# here or can be pulled, else the Debian root filesystem scripts/build-image
# makes from this machine's apt mirror.
daemon_base() {
	if "${sudo[@]}" docker image inspect debian:bookworm-slim >/dev/null 2>&1 ||
		timeout 60 "${sudo[@]}" docker pull -q debian:bookworm-slim >/dev/null 2>&1; then
		echo debian:bookworm-slim
	else
		"${sudo[@]}" "$1/scripts/build-image" --base | tail -n 1
	fi
}

# need_npm: node and npm on this host (Debian's will do), for the web
# console and the sandbox image's npm packages, which are built here.
need_npm() {
	command -v npm >/dev/null && return 0
	command -v apt-get >/dev/null ||
		die "building the console and the sandbox image needs node and npm on this host: install them"
	say "installing nodejs and npm (the console and the sandbox image's npm packages are built on the host)"
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
}

# build_console SRC: the web console (SRC/console, from its lockfile) into
# SRC/build/console, which the daemon's image copies.  npm runs here, so
# it uses this machine's npm registry and certificate authorities.
build_console() {
	local src=$1
	need_npm
	say "building the web console"
	(cd "$src/console" && npm ci --no-audit --no-fund --loglevel=error >"$home/console-build.log" 2>&1 &&
		CONSOLE_OUT="$src/build/console" npm run --silent build >>"$home/console-build.log" 2>&1) || {
		tail -n 20 "$home/console-build.log" >&2
		die "building the web console failed (log: $home/console-build.log)"
	}
}

# build_sandbox_image SRC IMAGE DAEMON-IMAGE: scripts/build-image with the
# supervisor binary built inside the daemon's image (no compiler needed
# here); it needs node and npm on this host for the templates' packages.
build_sandbox_image() {
	local src=$1 image=$2 daemon_image=$3
	need_npm
	mkdir -p "$src/build"
	"${sudo[@]}" docker run --rm --entrypoint cat "$daemon_image" \
		/usr/local/lib/sandboxd/sandboxd-init >"$src/build/sandboxd-init.new"
	chmod 755 "$src/build/sandboxd-init.new"
	mv "$src/build/sandboxd-init.new" "$src/build/sandboxd-init"
	say "building the sandbox image $image (the first time takes minutes)"
	SANDBOXD_IMAGE=$image "${sudo[@]}" "$src/scripts/build-image" 2>&1 | sed 's/^/  /' ||
		die "building the sandbox image failed"
}

# run_compose ARGS…: compose in the checkout with a clean environment, so
# that what it reads is the .env file and nothing from this shell.
run_compose() {
	(cd "$src" && env -i PATH="$PATH" HOME="$HOME" ${DOCKER_HOST:+DOCKER_HOST="$DOCKER_HOST"} \
		SANDBOXD_GIT_COMMIT="$(git -C "$src" rev-parse HEAD)" "${compose[@]}" "$@")
}

# local_addr HOST:PORT: an address to reach it from this host.
local_addr() {
	case $1 in
	0.0.0.0:* | "[::]:"*) echo "127.0.0.1:${1##*:}" ;;
	*) echo "$1" ;;
	esac
}

# The one-time console setup code: the line the daemon printed at its first
# start, else `sandboxd setup-code` where the daemon has that command.
setup_code() {
	local c
	c=$(run_compose logs --no-color sandboxd 2>/dev/null |
		sed -nE 's/.*Console setup code: *([^[:space:]]+).*/\1/p' | tail -n 1)
	if [[ -z $c ]]; then
		c=$(run_compose exec -T sandboxd sandboxd setup-code 2>/dev/null </dev/null |
			sed -nE 's/^(Console setup code: *)?([A-Za-z0-9_-]{4,})[[:space:]]*$/\2/p' | tail -n 1) || c=
	fi
	echo "$c"
}

sandboxd_install "$@"
