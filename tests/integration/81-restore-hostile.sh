#!/usr/bin/env bash
# Backups of hostile trees, and hostile backups.  A workspace holds what a
# sandbox may make: relative and absolute links, a FIFO, a set-id file,
# hard links, names no terminal prints.  `sandboxd backup --workspaces`
# lists every entry with its checksum; restore brings the links back as
# links (never followed), leaves out FIFOs and sockets, drops set-id bits
# and makes each hard link a file of its own, all owned by the sandbox
# user.  A crafted backup is refused, naming the entry, with nothing
# written to the data directory: a workspace that is a link to a host
# directory (Docker would mount it), a device, a FIFO, an entry its list
# lacks, a file that does not match its checksum, one that is missing, a
# list with a set-id mode.  A data directory whose trash or workspaces is
# a link is refused before anything is written through it.  A backup of
# format 1 (no lists) is restored with the same checks and a warning.
# `sandboxd backup` refuses a target that is a link, not empty, or
# another user's, and writes nothing there.
. "$(dirname "$0")/lib.sh"
need_test_image

sbd() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		"$SANDBOXD_BIN" "$@"
}

# refused BACKUP MESSAGE: restore onto a new data directory fails saying
# MESSAGE, and no database is written.
refused() {
	new_data_dir
	if sbd restore "$1" >"$IT_TMP/r.out" 2>&1; then
		t_err "restore of $(basename "$1") succeeded: $(tail -n 3 "$IT_TMP/r.out")"
		return 1
	fi
	grep -qF -- "$2" "$IT_TMP/r.out" || t_err "message: $(cat "$IT_TMP/r.out")"
	[[ ! -e $DATA/state/sandboxd.db ]] || t_err "a database was written anyway"
}

# crafted NAME: a copy of the good backup to change.
crafted() {
	BAD=$IT_TMP/bad-$1
	cp -a "$BK" "$BAD"
	BW=$BAD/workspaces/$SB/workspace/app
}

# relist BACKUP: the manifest's checksum of workspaces.list made right again.
relist() {
	local sum bytes
	sum=$(sha256sum "$1/workspaces.list" | cut -d' ' -f1)
	bytes=$(stat -c %s "$1/workspaces.list")
	jq --arg s "$sum" --argjson b "$bytes" \
		'(.files[] | select(.name == "workspaces.list")) |= (.sha256 = $s | .bytes = $b)' \
		"$1/manifest.json" >"$1/m.tmp" && mv "$1/m.tmp" "$1/manifest.json"
}

start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" || bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
DATA1=$DATA
create_app hostile && create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
SB=$SB_ID
create_app binned && create_sandbox "$APP_ID" || bail "setup: ${T_ERRS[*]}"
api DELETE "/v1/apps/$APP_ID"
[[ $STATUS == 204 ]] || bail "delete into the trash: $STATUS"

W=$DATA1/workspaces/$SB/workspace/app
mkdir -p "$W/node_modules/pkg/bin" "$W/node_modules/.bin" "$W/.venv/bin"
echo 'console.log(1)' >"$W/node_modules/pkg/bin/cli.js"
ln -s ../pkg/bin/cli.js "$W/node_modules/.bin/cli"
ln -s /usr/bin/python3 "$W/.venv/bin/python"
mkfifo "$W/pipe"
printf '#!/bin/sh\n' >"$W/suid" && chmod 4755 "$W/suid"
echo shared >"$W/a" && ln "$W/a" "$W/b"
ODD=$'odd name\n%\xff.txt'
echo odd >"$W/$ODD"
chown -hR 1000:1000 "$W"

t_begin "backup lists every entry of a hostile workspace, and copies no FIFO or set-id bit"
BK=$IT_TMP/backup
sbd backup "$BK" --workspaces >"$IT_TMP/bk.out" 2>&1 || t_err "backup: $(cat "$IT_TMP/bk.out")"
note "$(grep -E '^(workspaces|trash|backup written)' "$IT_TMP/bk.out")"
BODY=$(cat "$BK/manifest.json" 2>/dev/null)
REQ=manifest.json
expect_json .format 2 && expect_json .workspaces.trash true
expect_json '.files[] | select(.name == "workspaces.list") | .sha256' "$(sha256sum "$BK/workspaces.list" 2>/dev/null | cut -d' ' -f1)"
[[ -f $BK/trash-kept.list ]] || t_err "no trash-kept.list: $(ls "$BK")"
grep -qE "^f 0644 7 [0-9]+ $(sha256sum "$W/a" | cut -d' ' -f1) $SB/workspace/app/a\$" "$BK/workspaces.list" ||
	t_err "a's line: $(grep -a "app/a\$" "$BK/workspaces.list")"
grep -q "^l 0777 17 [0-9]* \.\./pkg/bin/cli\.js $SB/workspace/app/node_modules/\.bin/cli\$" "$BK/workspaces.list" ||
	t_err "the link's line: $(grep -a '.bin/cli' "$BK/workspaces.list")"
grep -q " $SB/workspace/app/odd%20name%0A%25%FF\.txt\$" "$BK/workspaces.list" ||
	t_err "the odd name is not escaped: $(grep -a odd "$BK/workspaces.list")"
[[ ! -e $BK/workspaces/$SB/workspace/app/pipe ]] || t_err "the FIFO is in the backup"
[[ $(stat -c %a "$BK/workspaces/$SB/workspace/app/suid") == 755 ]] ||
	t_err "the backup's copy of suid is $(stat -c %a "$BK/workspaces/$SB/workspace/app/suid")"
t_end

t_begin "restore: links stay links, FIFOs and set-id bits do not come back, hard links split"
new_data_dir
sbd restore "$BK" >"$IT_TMP/r.out" 2>&1 || t_err "restore: $(cat "$IT_TMP/r.out")"
grep -q "^workspaces: .*, each as its list says" "$IT_TMP/r.out" || t_err "output: $(cat "$IT_TMP/r.out")"
W2=$DATA/workspaces/$SB/workspace/app
[[ -L $W2/node_modules/.bin/cli && $(readlink "$W2/node_modules/.bin/cli") == ../pkg/bin/cli.js ]] ||
	t_err "the relative link: $(ls -l "$W2/node_modules/.bin" 2>&1)"
[[ -L $W2/.venv/bin/python && $(readlink "$W2/.venv/bin/python") == /usr/bin/python3 ]] ||
	t_err "the absolute link: $(ls -l "$W2/.venv/bin" 2>&1)"
[[ ! -e $W2/pipe ]] || t_err "the FIFO came back"
[[ $(stat -c %a:%u "$W2/suid" 2>&1) == 755:1000 ]] || t_err "suid came back as $(stat -c %a:%u "$W2/suid" 2>&1)"
[[ $(stat -c %h "$W2/a" 2>&1) == 1 && $(cat "$W2/b") == shared ]] || t_err "the hard links: $(stat -c '%h %i' "$W2/a" "$W2/b" 2>&1)"
[[ $(cat "$W2/$ODD" 2>&1) == odd ]] || t_err "the odd name: $(ls "$W2")"
left=$(find "$DATA/workspaces" "$DATA/trash" \( -type p -o -type s -o -type b -o -type c -o -perm /6000 \) 2>&1)
[[ -z $left ]] || t_err "special or set-id entries restored: $left"
[[ -z $(find "$DATA/workspaces/$SB" ! -uid 1000 2>&1) ]] || t_err "entries not owned by the sandbox user: $(find "$DATA/workspaces/$SB" ! -uid 1000 | head -3)"
[[ $(ls "$DATA/trash/kept" 2>/dev/null | wc -l) == 1 ]] || t_err "the trash: $(ls -la "$DATA/trash/kept" 2>&1)"
t_end

HOSTDIR=$IT_TMP/host-dir
mkdir -p "$HOSTDIR" && echo host >"$HOSTDIR/marker" && chmod 750 "$HOSTDIR"

t_begin "a workspace that is a link to a host directory is refused"
crafted toplink
rm -rf "${BAD:?}/workspaces/$SB" && ln -s "$HOSTDIR" "$BAD/workspaces/$SB"
refused "$BAD" "workspaces/$SB is a symbolic link: every entry of workspaces/ must be a workspace's directory"
[[ ! -e $DATA/workspaces/$SB ]] || t_err "the link was restored: $(ls -l "$DATA/workspaces")"
t_end

t_begin "a device is refused"
crafted device
mknod "$BW/zero" c 1 5
refused "$BAD" "workspaces/$SB/workspace/app/zero is a device"
t_end

t_begin "a FIFO in place of a file, and an entry the list lacks, are refused"
crafted fifo
rm "$BW/a" && mkfifo "$BW/a"
refused "$BAD" "workspaces/$SB/workspace/app/a is a FIFO in the backup, but its list says a file"
crafted extra
ln -s "$HOSTDIR" "$BW/host"
refused "$BAD" "workspaces/$SB/workspace/app/host is in the backup but not in its list"
t_end

t_begin "a tampered file, a missing one and a set-id mode in the list are refused"
crafted tampered
printf 'SHARED\n' >"$BW/b" # the same size, other bytes
refused "$BAD" "workspaces/$SB/workspace/app/b does not match its checksum in the list"
crafted missing
rm "$BW/suid"
refused "$BAD" "workspaces/$SB/workspace/app/suid is listed but missing from the backup"
crafted setid
sed -i -E "s|^f 0755 (.* $SB/workspace/app/suid)\$|f 4755 \1|" "$BAD/workspaces.list"
relist "$BAD"
refused "$BAD" "mode 4755 has a set-id or sticky bit"
crafted setid-file
chmod 4755 "$BW/suid"
new_data_dir
sbd restore "$BAD" >"$IT_TMP/r.out" 2>&1 || t_err "restore: $(cat "$IT_TMP/r.out")"
[[ $(stat -c %a "$DATA/workspaces/$SB/workspace/app/suid" 2>&1) == 755 ]] ||
	t_err "a set-id bit put on the backup's file came back: $(stat -c %a "$DATA/workspaces/$SB/workspace/app/suid" 2>&1)"
t_end

t_begin "restore writes nothing through a link in the data directory"
new_data_dir
mkdir -p "$DATA" && ln -s "$HOSTDIR" "$DATA/trash"
sbd restore "$BK" >"$IT_TMP/r.out" 2>&1 && t_err "restore succeeded with trash a link"
grep -q "$DATA/trash is a symbolic link: restore writes nothing through a link" "$IT_TMP/r.out" ||
	t_err "message: $(cat "$IT_TMP/r.out")"
new_data_dir
mkdir -p "$DATA" && ln -s "$HOSTDIR" "$DATA/workspaces"
sbd restore "$BK" >"$IT_TMP/r.out" 2>&1 && t_err "restore succeeded with workspaces a link"
grep -q "$DATA/workspaces is a symbolic link" "$IT_TMP/r.out" || t_err "message: $(cat "$IT_TMP/r.out")"
[[ $(ls -A "$HOSTDIR") == marker && $(stat -c %a "$HOSTDIR") == 750 ]] ||
	t_err "the host directory was touched: $(stat -c %a "$HOSTDIR"; ls -lA "$HOSTDIR")"
t_end

t_begin "a backup of format 1 (no lists) restores with the same checks and a warning"
crafted format1
jq '.format = 1 | .files |= map(select(.name | endswith(".list") | not)) | del(.workspaces.trash)' \
	"$BAD/manifest.json" >"$BAD/m.tmp" && mv "$BAD/m.tmp" "$BAD/manifest.json"
rm "$BAD"/*.list
mkfifo "$BW/pipe2" && chmod 4755 "$BW/suid"
new_data_dir
sbd restore "$BAD" >"$IT_TMP/r.out" 2>&1 || t_err "restore: $(cat "$IT_TMP/r.out")"
grep -q "warning: a backup of format 1 lists no checksums" "$IT_TMP/r.out" || t_err "output: $(cat "$IT_TMP/r.out")"
[[ ! -e $DATA/workspaces/$SB/workspace/app/pipe2 && $(stat -c %a "$DATA/workspaces/$SB/workspace/app/suid" 2>&1) == 755 ]] ||
	t_err "a FIFO or a set-id bit came back: $(ls -l "$DATA/workspaces/$SB/workspace/app" 2>&1)"
crafted format1-device
jq '.format = 1 | .files |= map(select(.name | endswith(".list") | not)) | del(.workspaces.trash)' \
	"$BAD/manifest.json" >"$BAD/m.tmp" && mv "$BAD/m.tmp" "$BAD/manifest.json"
rm "$BAD"/*.list
mknod "$BW/zero" c 1 5
refused "$BAD" "workspaces/$SB/workspace/app/zero is a device"
t_end

DATA=$DATA1
t_begin "backup refuses a target that is not a new or empty directory of its own"
echo original >"$IT_TMP/victim"
mkdir "$IT_TMP/bk-full" && ln -s "$IT_TMP/victim" "$IT_TMP/bk-full/manifest.json.tmp"
sbd backup "$IT_TMP/bk-full" >"$IT_TMP/b.out" 2>&1 && t_err "backup into a non-empty directory succeeded"
grep -q "bk-full is not empty" "$IT_TMP/b.out" || t_err "message: $(cat "$IT_TMP/b.out")"
[[ $(cat "$IT_TMP/victim") == original ]] || t_err "written through a link: $(head -c 200 "$IT_TMP/victim")"
mkdir "$IT_TMP/real" && ln -s "$IT_TMP/real" "$IT_TMP/bk-link"
sbd backup "$IT_TMP/bk-link" >"$IT_TMP/b.out" 2>&1 && t_err "backup into a link succeeded"
grep -q "bk-link is a symbolic link" "$IT_TMP/b.out" || t_err "message: $(cat "$IT_TMP/b.out")"
[[ -z $(ls -A "$IT_TMP/real") ]] || t_err "written through the link: $(ls -A "$IT_TMP/real")"
mkdir "$IT_TMP/bk-other" && chown 1234:1234 "$IT_TMP/bk-other"
sbd backup "$IT_TMP/bk-other" >"$IT_TMP/b.out" 2>&1 && t_err "backup into another user's directory succeeded"
grep -q "bk-other belongs to uid 1234" "$IT_TMP/b.out" || t_err "message: $(cat "$IT_TMP/b.out")"
touch "$IT_TMP/bk-file"
sbd backup "$IT_TMP/bk-file" >"$IT_TMP/b.out" 2>&1 && t_err "backup onto a file succeeded"
mkdir -m 755 "$IT_TMP/bk-empty"
sbd backup "$IT_TMP/bk-empty" >"$IT_TMP/b.out" 2>&1 || t_err "backup into an empty directory: $(cat "$IT_TMP/b.out")"
[[ $(stat -c %a "$IT_TMP/bk-empty") == 700 && -f $IT_TMP/bk-empty/manifest.json ]] ||
	t_err "the empty directory: $(ls -la "$IT_TMP/bk-empty")"
t_end

finish
