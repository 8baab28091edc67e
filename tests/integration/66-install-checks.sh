#!/usr/bin/env bash
# install.sh --check, the checks before anything is installed, with shims
# on PATH in front of the real engine: the Compose plugin is preferred
# when `docker compose` answers; else the standalone docker-compose; with
# neither it stops with "Docker Compose not found".  It also stops when
# the engine does not answer, git is missing or HTTP_PORT is taken, and
# warns when the data directory's disk has less than 40 GB free.  --check
# changes nothing (no checkout, no .env).  The memory warning (below 8 GB)
# is not staged: this machine has more, and /proc/meminfo cannot be faked
# for one process without a mount namespace of its own.
. "$(dirname "$0")/lib.sh"
need_docker

real_docker=$(command -v docker)
home=$IT_TMP/home
mkdir -p "$home" "$IT_TMP/plugin" "$IT_TMP/fallback" "$IT_TMP/bare"

# docker with the Compose plugin: `docker compose …` answers like v2.
cat >"$IT_TMP/plugin/docker" <<EOF
#!/bin/sh
if [ "\$1" = compose ]; then
	case "\$2" in
	version) if [ "\$3" = --short ]; then echo 2.99.0; else echo "Docker Compose version v2.99.0"; fi; exit 0 ;;
	esac
	exit 1
fi
exec $real_docker "\$@"
EOF
# docker without it, as Debian's docker.io: "'compose' is not a docker command".
cat >"$IT_TMP/fallback/docker" <<EOF
#!/bin/sh
if [ "\$1" = compose ]; then
	echo "docker: 'compose' is not a docker command." >&2
	exit 1
fi
exec $real_docker "\$@"
EOF
chmod 755 "$IT_TMP/plugin/docker" "$IT_TMP/fallback/docker"
# A PATH of everything on this machine but docker-compose (and docker,
# which comes from the shim directory), and one without git either.
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	[[ -d $d && ! -L $d ]] || continue
	for f in "$d"/*; do
		n=${f##*/}
		[[ $n == docker-compose || $n == docker || -e $IT_TMP/bare/$n ]] && continue
		[[ -x $f && ! -d $f ]] && ln -s "$f" "$IT_TMP/bare/$n"
	done
done
mkdir -p "$IT_TMP/nogit"
cp -P "$IT_TMP"/bare/* "$IT_TMP/nogit/" 2>/dev/null
rm -f "$IT_TMP/nogit/git"
ln -s "$(command -v docker-compose)" "$IT_TMP/nogit/docker-compose"

port=$(free_port)
# check PATH [VAR=value…]: install.sh --check; CHECK_OUT, CHECK_RC
check() {
	local path=$1
	shift
	CHECK_OUT=$(env -i "PATH=$path" "HOME=$home" "HTTP_PORT=$port" \
		"SANDBOXD_API_ADDR=127.0.0.1:$(free_port)" "SANDBOXD_DATA_DIR=$IT_TMP/data" \
		"$@" bash "$IT_ROOT/install.sh" --check 2>&1 </dev/null)
	CHECK_RC=$?
}

# expect_check RC PATTERN: check exited RC and a line of its output
# matches PATTERN (grep's).
expect_check() {
	((CHECK_RC == $1)) || t_err "exit $CHECK_RC, expected $1: $CHECK_OUT"
	grep -q -- "$2" <<<"$CHECK_OUT" || t_err "output: $CHECK_OUT"
}

t_begin "the Compose plugin is used when docker compose answers"
check "$IT_TMP/plugin:$PATH"
expect_check 0 '^sandboxd: Compose: docker compose (2.99.0)$'
t_end

t_begin "without the plugin, the standalone docker-compose"
check "$IT_TMP/fallback:$PATH"
expect_check 0 '^sandboxd: Compose: docker-compose (1\.'
t_end

t_begin "with neither: Docker Compose not found"
check "$IT_TMP/fallback:$IT_TMP/bare"
expect_check 1 'Docker Compose not found'
t_end

t_begin "an engine that does not answer stops it"
check "$IT_TMP/fallback:$PATH" DOCKER_HOST=unix://$IT_TMP/no-such.sock
expect_check 1 'the Docker engine does not answer'
t_end

t_begin "git missing stops it"
check "$IT_TMP/fallback:$IT_TMP/nogit"
expect_check 1 'git is required'
t_end

t_begin "HTTP_PORT in use stops it"
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port" &
listener=$!
wait_until 5 bash -c "ss -Hltn 'sport = :$port' | grep -q ." || t_err "the test's listener did not come up"
check "$IT_TMP/fallback:$PATH"
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
expect_check 1 "port $port is in use"
t_end

t_begin "a data directory on a disk with less than 40 GB free is warned about"
mkdir -p "$IT_TMP/small"
if mount -t tmpfs -o size=16m tmpfs "$IT_TMP/small" 2>/dev/null; then
	IT_CLEANUP_HOOKS+=(umount_small)
	umount_small() { umount "$IT_TMP/small" 2>/dev/null; }
	check "$IT_TMP/fallback:$PATH" SANDBOXD_DATA_DIR="$IT_TMP/small/data"
	umount "$IT_TMP/small"
	expect_check 0 "warning: 0 GB free on $IT_TMP/small: plan 40 GB"
	check "$IT_TMP/fallback:$PATH"
	if (($(df -Pk "$IT_TMP" | awk 'NR == 2 { print $4 }') > 40 * 1024 * 1024)); then
		grep -q 'plan 40 GB' <<<"$CHECK_OUT" && t_err "warned although the disk has room: $CHECK_OUT"
	fi
else
	t_err "cannot mount a small tmpfs to stage a full disk"
fi
t_end

t_begin "--check changes nothing"
[[ ! -e $home/.sandboxd ]] || t_err "--check made $home/.sandboxd: $(ls -R "$home/.sandboxd" | head)"
t_end

t_begin "install.sh's own copies of env_value and check_data_dir are scripts/deploy-lib.sh's to the letter"
# install.sh runs alone (piped, before there is a checkout), so it cannot
# source deploy-lib.sh; the copies it keeps must not drift apart.
for f in env_value check_data_dir; do
	a=$(sed -n "/^$f() {/,/^}/p" "$IT_ROOT/install.sh")
	b=$(sed -n "/^$f() {/,/^}/p" "$IT_ROOT/scripts/deploy-lib.sh")
	[[ -n $a && $a == "$b" ]] || t_err "$f differs: $(diff <(echo "$a") <(echo "$b") | head -n 20)"
done
t_end

finish
