#!/usr/bin/env bash
# upgrade.sh [REF]: upgrade this install to REF (a branch, tag or commit;
# default: SANDBOXD_REF, else main), or put the previous version back.
#
#   1. notes what runs now: the commit, and the daemon's and the sandbox
#      image's ids (tagged sandboxd-rollback-<project>:daemon-<time> and
#      :base-<time>, so that nothing prunes them);
#   2. fetches REF and checks it out; builds the new daemon image and the
#      sandbox image while the old daemon keeps serving;
#   3. takes a consistent backup into <data>/backups/<time>-<commit>/ with
#      `sandboxd backup` inside the running daemon (the SQLite online
#      backup, the secrets key, a manifest), right before the switch, so
#      nothing written during the builds is missing from it;
#   4. `compose up -d` (the daemon's container is made again from the new
#      image) and waits for /healthz;
#   5. if the new version does not become healthy: stops the daemon,
#      checks the previous commit out, tags the previous images back by id,
#      restores the database from the backup with the daemon stopped
#      (`sandboxd restore --force`, which refuses while a daemon runs on the
#      data directory and keeps the newer database aside), starts the previous version and waits for it.  Exit
#      status 1 either way the upgrade failed; 2 when even the rollback did
#      not become healthy (then: docker compose ps / logs sandboxd).
#
# Sandboxes keep running through an upgrade.  A sandbox started after it
# gets a container of the new sandbox image (the daemon compares image ids
# at start, not tags); its workspace stays as it is.
#
#   upgrade.sh [REF]
#   SANDBOXD_SKIP_IMAGE=1 upgrade.sh …    keep the sandbox image as it is
#   SANDBOXD_HEALTH_TIMEOUT=120           seconds to wait for /healthz
set -euo pipefail
PROG=upgrade
. "$(dirname "${BASH_SOURCE[0]}")/scripts/deploy-lib.sh"

main() {
	local ref=${1:-${SANDBOXD_REF:-main}} timeout=${SANDBOXD_HEALTH_TIMEOUT:-120}
	local stamp prev prev_daemon prev_base new backup rb_daemon rb_base
	(($# <= 1)) || die "usage: upgrade.sh [REF]"
	deploy_init
	check_data_dir "$DATA"
	daemon_running || die "the daemon is not running (cd $SRC && $COMPOSE_NAME up -d): an upgrade starts from a running install"

	# 1. what runs now
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	prev=$(git -C "$SRC" rev-parse HEAD)
	prev_daemon=$(image_id "$DAEMON_IMAGE") || die "no image $DAEMON_IMAGE"
	prev_base=$(image_id "$BASE_IMAGE") || die "no sandbox image $BASE_IMAGE"
	rb_daemon=sandboxd-rollback-$PROJECT:daemon-$stamp
	rb_base=sandboxd-rollback-$PROJECT:base-$stamp
	"${SUDO[@]}" docker tag "$prev_daemon" "$rb_daemon"
	"${SUDO[@]}" docker tag "$prev_base" "$rb_base"
	say "now: ${prev:0:12}, daemon image ${prev_daemon:7:12}, sandbox image ${prev_base:7:12}"

	# 2. the new code and its images
	git -C "$SRC" fetch --quiet --tags origin || die "git fetch failed"
	git -C "$SRC" fetch --quiet origin "$ref" 2>/dev/null || true
	new=$(resolve_ref "$ref") || die "$ref is not a branch, tag or commit of origin"
	if [[ $new == "$prev" ]]; then
		say "already at $ref (${new:0:12}); nothing to do"
		"${SUDO[@]}" docker rmi "$rb_daemon" "$rb_base" >/dev/null
		return 0
	fi
	git -C "$SRC" checkout --quiet --detach "$new" || die "git checkout $ref failed"
	say "source: $ref at ${new:0:12}"
	if ! build_all; then
		warn "the build failed; the running version was not touched"
		git -C "$SRC" checkout --quiet --detach "$prev"
		retag "$prev_daemon" "$prev_base"
		return 1
	fi

	# 3. the backup, just before the switch
	backup=$DATA/backups/$stamp-${prev:0:12}
	take_backup "$backup"

	# 4. the switch
	say "restarting on the new version"
	run_compose up -d >"$SRC/build/upgrade-up.log" 2>&1 || warn "compose up -d failed: $(tail -n 3 "$SRC/build/upgrade-up.log")"
	if wait_healthy "$timeout" && [[ $(running_image) == "$(image_id "$DAEMON_IMAGE")" ]]; then
		say "upgraded to ${new:0:12}; backup in $backup"
		say "the previous images stay tagged $rb_daemon and $rb_base (remove them when done)"
		drop_old_rollback_tags "$stamp"
		return 0
	fi

	# 5. rollback
	warn "the new version did not become healthy within ${timeout}s; rolling back to ${prev:0:12}"
	run_compose logs --tail 20 sandboxd >&2 2>/dev/null || true
	run_compose stop sandboxd >/dev/null 2>&1 || true
	wait_stopped 60 || die "the daemon does not stop; not restoring the database under it (cd $SRC && $COMPOSE_NAME ps)"
	git -C "$SRC" checkout --quiet --detach "$prev"
	retag "$prev_daemon" "$prev_base"
	restore_backup "$backup"
	run_compose up -d >"$SRC/build/upgrade-up.log" 2>&1 || true
	if wait_healthy "$timeout"; then
		warn "rolled back to ${prev:0:12} (database restored from $backup); the upgrade to $ref failed"
		return 1
	fi
	warn "the rollback did not become healthy either: cd $SRC && $COMPOSE_NAME ps && $COMPOSE_NAME logs sandboxd"
	return 2
}

resolve_ref() {
	local c
	for c in "refs/remotes/origin/$1" "refs/tags/$1" "$1"; do
		git -C "$SRC" rev-parse --verify --quiet "$c^{commit}" && return 0
	done
	return 1
}

build_all() {
	mkdir -p "$SRC/build"
	# The web console, on this host (its npm registry and CAs), for the
	# daemon's image to copy.
	say "building the web console"
	(cd "$SRC/console" && npm ci --no-audit --no-fund --loglevel=error >"$SRC/build/upgrade-console.log" 2>&1 &&
		CONSOLE_OUT="$SRC/build/console" npm run --silent build >>"$SRC/build/upgrade-console.log" 2>&1) || {
		tail -n 20 "$SRC/build/upgrade-console.log" >&2
		return 1
	}
	say "building the daemon's image"
	run_compose build sandboxd >"$SRC/build/upgrade-build.log" 2>&1 || {
		tail -n 20 "$SRC/build/upgrade-build.log" >&2
		return 1
	}
	if [[ ${SANDBOXD_SKIP_IMAGE:-0} == 1 ]]; then
		say "sandbox image kept as it is (SANDBOXD_SKIP_IMAGE=1)"
		return 0
	fi
	"${SUDO[@]}" docker run --rm --entrypoint cat "$DAEMON_IMAGE" \
		/usr/local/lib/sandboxd/sandboxd-init >"$SRC/build/sandboxd-init.new" || return 1
	chmod 755 "$SRC/build/sandboxd-init.new"
	mv "$SRC/build/sandboxd-init.new" "$SRC/build/sandboxd-init"
	say "building the sandbox image $BASE_IMAGE"
	SANDBOXD_IMAGE=$BASE_IMAGE "${SUDO[@]}" "$SRC/scripts/build-image" 2>&1 | sed 's/^/  /'
	return "${PIPESTATUS[0]}"
}

retag() {
	"${SUDO[@]}" docker tag "$1" "$DAEMON_IMAGE"
	"${SUDO[@]}" docker tag "$2" "$BASE_IMAGE"
}

running_image() {
	local c
	c=$(daemon_container)
	[[ -n $c ]] && "${SUDO[@]}" docker inspect -f '{{.Image}}' "$c"
}

# take_backup DIR: `sandboxd backup DIR` in the running daemon's container
# (DIR is under the data directory, at the same path on the host).  A daemon
# without that command (older than the backup) is backed up offline: the
# database and the key are copied while it is stopped, which is consistent
# because nothing writes then.
take_backup() {
	local dir=$1 c
	"${SUDO[@]}" mkdir -p "$(dirname "$dir")"
	if running_has backup; then
		say "backup: sandboxd backup $dir"
		run_compose exec -T sandboxd sandboxd backup "$dir" </dev/null ||
			die "sandboxd backup failed; nothing was changed but the checkout (git -C $SRC checkout $prev)"
	else
		say "backup: this daemon has no backup command; copying with the daemon stopped"
		run_compose stop sandboxd >/dev/null 2>&1
		wait_stopped 60 || die "the daemon does not stop"
		"${SUDO[@]}" mkdir -p "$dir"
		for c in state/sandboxd.db state/sandboxd.db-wal secret.key; do
			[[ -f $DATA/$c ]] && "${SUDO[@]}" cp -p "$DATA/$c" "$dir/${c##*/}"
		done
		printf '{"kind":"offline-copy","commit":"%s","created_at":"%s"}\n' "$prev" "$stamp" |
			"${SUDO[@]}" tee "$dir/manifest.json" >/dev/null
	fi
	"${SUDO[@]}" cp -p "$SRC/.env" "$dir/env"
	[[ -f $dir/sandboxd.db ]] || die "the backup in $dir has no sandboxd.db"
}

# Whether the running daemon's binary has `sandboxd CMD`.
running_has() {
	local out
	# the whole help first: grep -q would close the pipe at its match and
	# the writer's SIGPIPE fail the pipeline (pipefail) at random
	out=$(run_compose exec -T sandboxd sandboxd help </dev/null 2>&1) || true
	grep -qE "sandboxd $1( |\$)" <<<"$out"
}

# restore_backup DIR, with the daemon stopped: `sandboxd restore DIR` of the
# previous image, else the offline copy put back (the WAL and shared-memory
# files of the newer daemon removed first, so SQLite cannot replay them
# onto the restored file).
restore_backup() {
	local dir=$1 img=$DAEMON_IMAGE
	# an offline copy (take_backup's other way) is put back as a copy
	if ! grep -q '"kind":"offline-copy"' "$dir/manifest.json" 2>/dev/null &&
		daemon_has restore "$img"; then
		say "restore: sandboxd restore $dir"
		"${SUDO[@]}" docker run --rm --network none \
			-e SANDBOXD_ENV_FILE=/etc/sandboxd/sandboxd.env \
			-v "$SRC/.env:/etc/sandboxd/sandboxd.env:ro" -v "$DATA:$DATA" \
			"$img" restore "$dir" --force || die "sandboxd restore $dir failed; the daemon stays stopped"
	else
		say "restore: copying $dir back (the daemon is stopped)"
		"${SUDO[@]}" rm -f "$DATA/state/sandboxd.db-wal" "$DATA/state/sandboxd.db-shm"
		"${SUDO[@]}" cp -p "$dir/sandboxd.db" "$DATA/state/sandboxd.db"
		[[ -f $dir/sandboxd.db-wal ]] && "${SUDO[@]}" cp -p "$dir/sandboxd.db-wal" "$DATA/state/sandboxd.db-wal"
		[[ -f $dir/secret.key ]] && "${SUDO[@]}" cp -p "$dir/secret.key" "$DATA/secret.key"
	fi
	return 0
}

# Rollback tags of earlier upgrades than this one.
drop_old_rollback_tags() {
	local t
	for t in $("${SUDO[@]}" docker images --format '{{.Repository}}:{{.Tag}}' "sandboxd-rollback-$PROJECT" |
		grep -vE ":(daemon|base)-$1\$"); do
		"${SUDO[@]}" docker rmi "$t" >/dev/null 2>&1 || true
	done
}

main "$@"
