# tests/integration/deploy-lib.sh: what the deployment tests (65-install,
# 67-upgrade) share, sourced after lib.sh.
#
# snapshot_repo makes $IT_TMP/repo, a git repository of this checkout's
# files as they are now (committed or not), with one more commit that puts
# a stand-in in place of scripts/build-image: it tags the machine's
# $IT_IMAGE plus a label naming the commit as $SANDBOXD_IMAGE, so each
# commit gets a sandbox image of its own id in a second (the real build
# installs npm packages for minutes; it is tested where it is built).
#
# install_env sets INSTALL_ENV, the environment install.sh runs in: a clean
# HOME, the snapshot as SANDBOXD_REPO, no Traefik (its image cannot be
# pulled here), free ports for the edge, the API and the proxy, a data dir
# and a Docker network, compose project and image names of this test only.
#
# The cleanup hook (registered by install_env) takes down the compose
# project, removes the sandboxes, the images this test built (by id: the
# daemon's image and the stand-in's), the rollback tags upgrade.sh made for
# this project, and the network; lib.sh's own cleanup removes the temp dir.

# deploy_setup: what each deployment test does first: the engine and
# docker-compose are there, the snapshot repository is made, install_env.
deploy_setup() {
	need_docker
	command -v docker-compose >/dev/null || bail "docker-compose is not installed"
	snapshot_repo || bail "cannot make the snapshot repository"
	install_env
}

snapshot_repo() {
	local r=$IT_TMP/repo f
	mkdir -p "$r"
	(cd "$IT_ROOT" && git ls-files -co --exclude-standard -z) |
		while IFS= read -r -d '' f; do
			[[ -f $IT_ROOT/$f ]] && printf '%s\0' "$f"
		done | (cd "$IT_ROOT" && xargs -0 cp --parents -t "$r")
	cat >"$r/scripts/build-image" <<-'EOF'
		#!/usr/bin/env bash
		# Test stand-in (tests/integration/deploy-lib.sh): the sandbox image is
		# $IT_IMAGE with labels naming this commit and the test.
		set -euo pipefail
		repo=$(cd "$(dirname "$0")/.." && pwd)
		if [[ ${1:-} == --base ]]; then echo sandboxd-rootfs:bookworm; exit 0; fi
		rev=$(git -C "$repo" rev-parse HEAD)
		printf 'FROM %s\nLABEL sandboxd.it.test=%s sandboxd.it.rev=%s\n' \
			"$IT_IMAGE" "$IT_TEST_LABEL" "$rev" |
			DOCKER_BUILDKIT=0 docker build -q -t "$SANDBOXD_IMAGE" - >/dev/null
		echo "build-image (test stand-in): $SANDBOXD_IMAGE for ${rev:0:12}"
	EOF
	chmod 755 "$r/scripts/build-image"
	git -C "$r" init -q -b main
	git -C "$r" add -A
	repo_commit "snapshot of the checkout under test, build-image stood in"
}

# repo_commit MESSAGE: commits everything in the snapshot repository.
repo_commit() {
	git -C "$IT_TMP/repo" add -A
	git -C "$IT_TMP/repo" -c user.name=it -c user.email=it@localhost commit -q -m "$1"
}

install_env() {
	IT_TEST_LABEL=$$-$RANDOM
	INST_HTTP_PORT=$(free_port)
	INST_API=127.0.0.1:$(free_port)
	INST_NETWORK=sbxit-$$-inst
	INST_PROJECT=sbxit$$
	INST_DAEMON_IMAGE=sandboxd-it-daemon:$$
	INST_BASE_IMAGE=sandboxd-it-base:$$
	INST_DATA=$IT_TMP/data-inst
	INST_HOME=$IT_TMP/home
	INST_SRC=$INST_HOME/.sandboxd/src
	mkdir -p "$INST_HOME"
	record_network "$INST_NETWORK"
	INSTALL_ENV=(env -i "PATH=$PATH" "HOME=$INST_HOME"
		"SANDBOXD_REPO=$IT_TMP/repo" SANDBOXD_REF=main SANDBOXD_TRAEFIK=0
		"HTTP_PORT=$INST_HTTP_PORT" "SANDBOXD_API_ADDR=$INST_API"
		"SANDBOXD_PROXY_PORT=$(free_port)" "SANDBOXD_DATA_DIR=$INST_DATA"
		"SANDBOXD_NETWORK=$INST_NETWORK" "COMPOSE_PROJECT_NAME=$INST_PROJECT"
		"SANDBOXD_DAEMON_IMAGE=$INST_DAEMON_IMAGE"
		SANDBOXD_DAEMON_BASE=sandboxd-rootfs:bookworm
		"SANDBOXD_IMAGE=$INST_BASE_IMAGE" "IT_IMAGE=$IT_IMAGE"
		"IT_TEST_LABEL=$IT_TEST_LABEL")
	[[ -n ${DOCKER_HOST:-} ]] && INSTALL_ENV+=("DOCKER_HOST=$DOCKER_HOST")
	: >"$IT_TMP/.daemon-images"
	IT_CLEANUP_HOOKS+=(deploy_cleanup)
}

# inst_compose ARGS…: docker-compose in the installed checkout, with the
# environment compose gets from install.sh (none but PATH and HOME).
inst_compose() {
	(cd "$INST_SRC" && env -i "PATH=$PATH" "HOME=$INST_HOME" docker-compose "$@")
}

inst_env_value() { sed -n "s/^$1=//p" "$INST_SRC/.env" | tail -n 1; }

# Notes the daemon image's current id, for cleanup.
note_daemon_image() {
	docker image inspect -f '{{.Id}}' "$INST_DAEMON_IMAGE" 2>/dev/null >>"$IT_TMP/.daemon-images"
}

deploy_cleanup() {
	local ids id t
	docker_ok || return 0
	if [[ -f $INST_SRC/docker-compose.yml && -f $INST_SRC/.env ]]; then
		inst_compose down --remove-orphans >/dev/null 2>&1 ||
			echo "# cleanup: docker-compose down failed"
	fi
	ids=$(docker ps -aq --filter "label=com.docker.compose.project=$INST_PROJECT")
	# shellcheck disable=SC2086
	[[ -z $ids ]] || docker rm -f $ids >/dev/null 2>&1
	remove_test_containers
	note_daemon_image
	for t in $(docker images --format '{{.Repository}}:{{.Tag}}' "sandboxd-rollback-$INST_PROJECT") \
		"$INST_DAEMON_IMAGE" "$INST_BASE_IMAGE"; do
		docker rmi "$t" >/dev/null 2>&1
	done
	# By id: what the stand-in built, and every daemon image this test saw.
	# An id that still has another tag (someone else's) is left.
	for id in $(docker images -q --no-trunc --filter "label=sandboxd.it.test=$IT_TEST_LABEL") \
		$(sort -u "$IT_TMP/.daemon-images"); do
		docker rmi "$id" >/dev/null 2>&1
	done
	return 0
}

# run_install [VAR=value…] [-- ARGS…]: install.sh of the snapshot with
# INSTALL_ENV (and the extra variables); output in $IT_TMP/install.N.out,
# status in INSTALL_RC.
INSTALL_N=0
run_install() {
	local vars=()
	while (($#)) && [[ $1 != -- ]]; do vars+=("$1"); shift; done
	(($#)) && shift
	INSTALL_N=$((INSTALL_N + 1))
	INSTALL_OUT=$IT_TMP/install.$INSTALL_N.out
	"${INSTALL_ENV[@]}" "${vars[@]}" bash "$IT_TMP/repo/install.sh" "$@" >"$INSTALL_OUT" 2>&1 </dev/null
	INSTALL_RC=$?
	note_daemon_image
	return $INSTALL_RC
}

# The token install.sh printed ("API token:   sk_…").
printed_install_token() {
	sed -nE 's/^API token: +(sk_[A-Za-z0-9_-]+).*/\1/p' "$INSTALL_OUT" | head -n 1
}
