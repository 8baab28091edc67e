#!/usr/bin/env bash
# uninstall.sh [--purge] [--images] [--yes]: remove what install.sh made.
#
# Always: the compose services (the daemon, Traefik), the sandboxes'
# containers (those mounting a workspace of this data directory), the
# sandbox network and its nftables table (`sandboxd network remove`), the
# daemon's image and the rollback tags upgrade.sh left.
# Kept unless --purge: the data directory (apps, workspaces, the database,
# secret.key, backups) and this checkout with its .env; unless --images:
# the sandbox image (SANDBOXD_IMAGE; other installs may use it too).
# --purge removes those, after typing "yes" (or with --yes); it refuses
# a data directory that is not sandboxd's own (empty, /, a system
# directory, a home directory) or does not look like one.
set -euo pipefail
PROG=uninstall
. "$(dirname "${BASH_SOURCE[0]}")/scripts/deploy-lib.sh"

main() {
	local purge=0 images=0 yes=0 a ids answer
	for a in "$@"; do
		case $a in
		--purge) purge=1 ;;
		--images) images=1 ;;
		--yes | -y) yes=1 ;;
		*) die "usage: uninstall.sh [--purge] [--images] [--yes]" ;;
		esac
	done
	deploy_init
	check_data_dir "$DATA"
	if ((purge)); then
		looks_like_data "$DATA" ||
			die "$DATA does not look like a sandboxd data directory (no state/, workspaces/ or secret.key): not removing it"
		if ((!yes)); then
			printf 'This deletes %s (every app, workspace, secret and backup) and %s. Type yes: ' "$DATA" "$SRC"
			read -r answer || answer=
			[[ $answer == yes ]] || die "not confirmed; nothing removed"
		fi
	fi

	say "stopping the services"
	COMPOSE_PROFILES_ALL=1 run_compose down --remove-orphans >/dev/null 2>&1 ||
		warn "compose down failed; removing the containers by label"
	ids=$("${SUDO[@]}" docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")
	# shellcheck disable=SC2086
	[[ -z $ids ]] || "${SUDO[@]}" docker rm -f $ids >/dev/null

	ids=$(sandbox_containers)
	if [[ -n $ids ]]; then
		say "removing $(wc -w <<<"$ids") sandbox container(s)"
		# shellcheck disable=SC2086
		"${SUDO[@]}" docker rm -f -v $ids >/dev/null
	fi

	say "removing the sandbox network and its egress rules"
	"${SUDO[@]}" docker run --rm --network host --cap-add NET_ADMIN \
		-v /var/run/docker.sock:/var/run/docker.sock \
		-e SANDBOXD_ENV_FILE=/etc/sandboxd/sandboxd.env \
		-v "$SRC/.env:/etc/sandboxd/sandboxd.env:ro" -v "$DATA:$DATA" \
		"$DAEMON_IMAGE" network remove >/dev/null 2>&1 ||
		warn "sandboxd network remove failed (remove the network $(setting SANDBOXD_NETWORK sandboxd) by hand if it is left)"

	remove_image "$DAEMON_IMAGE"
	for a in $("${SUDO[@]}" docker images --format '{{.Repository}}:{{.Tag}}' "sandboxd-rollback-$PROJECT"); do
		"${SUDO[@]}" docker rmi "$a" >/dev/null 2>&1 || true
	done

	((images)) && remove_image "$BASE_IMAGE"
	if ((purge)); then
		say "removing $DATA"
		"${SUDO[@]}" rm -rf --one-file-system -- "$DATA"
		say "removing $SRC"
		cd /
		rm -rf -- "$SRC"
	else
		say "kept: $DATA (data) and $SRC (checkout and .env); --purge removes them"
	fi
	say "done"
}

looks_like_data() {
	[[ -d $1 ]] || return 1
	[[ -d $1/state || -d $1/workspaces || -f $1/secret.key ]] && return 0
	# An empty directory is fine too.
	[[ -z $(ls -A "$1") ]]
}

# Containers mounting anything under the data directory: this install's
# sandboxes (their workspace bind mounts), whatever their labels say.
sandbox_containers() {
	local all
	all=$("${SUDO[@]}" docker ps -aq --no-trunc --filter label=sandboxd.managed=true)
	[[ -n $all ]] || return 0
	# shellcheck disable=SC2086
	"${SUDO[@]}" docker inspect -f '{{.Id}}{{range .Mounts}} {{.Source}}{{end}}' $all |
		awk -v d="$DATA/" '{ for (i = 2; i <= NF; i++) if (index($i, d) == 1) { print $1; break } }'
}

remove_image() {
	local id
	id=$(image_id "$1") || return 0
	if "${SUDO[@]}" docker rmi "$1" >/dev/null 2>&1; then
		say "removed the image $1 (${id:7:12})"
	else
		warn "the image $1 is still in use; kept"
	fi
}

main "$@"
