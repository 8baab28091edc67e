#!/usr/bin/env bash
# Dependencies stored once: three react-vite apps' node_modules files are
# hard links of one store entry (<data>/store, root-owned, read-only), so
# three apps take about the disk of one; inside a sandbox a shared file
# cannot be written or chmodded (and another sandbox's copy does not
# change), but it can be removed and recreated, npm can install and
# uninstall a package (a local tarball: no network), pip install --user
# of a hand-made wheel, uninstall and reinstall work, Vite starts and the
# preview answers.  A leftover temporary name from a crashed pass is
# removed by the next one; `sandboxd gc` removes unused store entries and
# keeps used ones; the app's disk object shows own and shared; backup
# --workspaces and restore give a working app again.
. "$(dirname "$0")/lib.sh"
need_test_image

sbd() {
	env -i "PATH=$PATH" "HOME=${HOME:-/root}" ${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$DATA" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_IMAGE="$TEST_IMAGE" "$SANDBOXD_BIN" "$@"
}
# gc limited to a repository that holds no image: only the store is ours
# to sweep here (without --repo, gc takes other base images too).
gc_store() { sbd gc --repo "sbxit-dedup-none-$$" "$@"; }
# dedup_done SB [N]: waits up to 90 s for the N-th pass over SB's workspace.
dedup_done() {
	wait_until 90 eval "[[ \$(grep -c 'dedup: sandbox $1' '$DAEMON_ERR' '$DAEMON_OUT' 2>/dev/null | awk -F: '{s+=\$NF} END {print s+0}') -ge ${2:-1} ]]"
}
# in SB CMD: runs CMD as the sandbox user in SB's container, in the app.
in_sb() {
	local c
	c=$(container_of "$1") || return 1
	docker exec -u 1000 -w /home/sandbox/workspace/app "$c" sh -c "$2"
}

start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_DISK_USAGE_INTERVAL_SECONDS=5 ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"

APPS=()
TRASHED=()
SBS=()
t_begin "three react-vite apps: each first boot is deduplicated"
for i in 1 2 3; do
	create_app "dd$i" '"runtime_preset":"react-vite"' || break
	create_sandbox "$APP_ID" || break
	APPS+=("$APP_ID")
	SBS+=("$SB_ID")
done
for sb in "${SBS[@]}"; do
	dedup_done "$sb" || t_err "no dedup pass over $sb: $(grep dedup "$DAEMON_ERR" | tail -n 3)"
done
grep -h "dedup: sandbox" "$DAEMON_ERR" "$DAEMON_OUT" 2>/dev/null | sed 's/^/#   /' | tail -n 3
t_end

WS=("$DATA/workspaces/${SBS[0]}" "$DATA/workspaces/${SBS[1]}" "$DATA/workspaces/${SBS[2]}")
F=workspace/app/node_modules/react/package.json
t_begin "their node_modules files are one root-owned read-only inode of the store"
i0=$(stat -c %i "${WS[0]}/$F") i1=$(stat -c %i "${WS[1]}/$F") i2=$(stat -c %i "${WS[2]}/$F")
[[ -n $i0 && $i0 == "$i1" && $i1 == "$i2" ]] || t_err "inodes differ: $i0 $i1 $i2"
h=$(sha256sum "${WS[0]}/$F" | cut -c1-64)
[[ $(stat -c %i "$DATA/store/$h" 2>/dev/null) == "$i0" ]] || t_err "not the store entry $h"
[[ $(stat -c '%u %a' "${WS[0]}/$F") == "0 444" ]] || t_err "owner/mode: $(stat -c '%u %a' "${WS[0]}/$F")"
[[ -n $(find "$DATA/store" -maxdepth 1 -name '*x' -perm 555 | head -n 1) ]] || t_err "no executable entry (0555)"
n_files=$(find "${WS[0]}/workspace/app/node_modules" -type f | wc -l)
n_shared=$(find "${WS[0]}/workspace/app/node_modules" -type f -links +1 -user 0 | wc -l)
note "node_modules: $n_shared of $n_files files shared"
((n_shared * 10 >= n_files * 9)) || t_err "only $n_shared of $n_files files are shared"
[[ $(stat -c %U "${WS[0]}/workspace/app/node_modules/react") == "$(stat -c %U "${WS[0]}/workspace/app")" ]] ||
	t_err "the directories changed owner"
t_end

t_begin "du: three apps take about one app's disk"
one=$(du -sk "${WS[0]}" | cut -f1)
three=$(du -skc "${WS[@]}" | tail -n 1 | cut -f1)
note "du -sk: one app ${one} KiB, three apps ${three} KiB"
((three * 10 <= one * 13)) || t_err "three apps take $three KiB, one $one KiB"
t_end

t_begin "the app's disk object shows own and shared"
wait_until 30 eval "api GET /v1/apps/${APPS[0]} && [[ \$(j '(.disk.shared // 0) > (.disk.own // 0)') == true ]]" ||
	t_err "disk: $(j .disk)"
own=$(j .disk.own) shared=$(j .disk.shared) bytes=$(j .disk.bytes)
((own + shared == bytes && own < shared)) || t_err "disk: $(j .disk)"
note "disk: bytes $bytes, own $own, shared $shared"
t_end

t_begin "inside a sandbox a shared file cannot be written or chmodded, the other sandbox's copy is unchanged"
in_sb "${SBS[0]}" 'echo evil >> node_modules/react/package.json' 2>/dev/null &&
	t_err "an append to a shared file worked"
in_sb "${SBS[0]}" 'chmod 666 node_modules/react/package.json' 2>/dev/null && t_err "chmod worked"
in_sb "${SBS[0]}" 'touch -d 2000-01-01 node_modules/react/package.json' 2>/dev/null && t_err "touch -d worked"
err=$(in_sb "${SBS[0]}" 'node -e "require(\"fs\").writeFileSync(\"node_modules/react/package.json\", \"x\")"' 2>&1) &&
	t_err "writeFileSync worked"
[[ $err == *EACCES* || $err == *EPERM* ]] || t_err "not EACCES/EPERM: $err"
[[ $(sha256sum "${WS[1]}/$F" | cut -c1-64) == "$h" ]] || t_err "the other sandbox's copy changed"
t_end

t_begin "rm and recreate, an editor's write-and-rename: the sandbox's own file, nobody else's"
in_sb "${SBS[0]}" 'cp node_modules/react/package.json /tmp/p && rm -f node_modules/react/package.json &&
	{ cat /tmp/p; echo; } > node_modules/react/package.json' || t_err "rm + recreate failed"
in_sb "${SBS[0]}" 'f=node_modules/react/index.js; { cat $f; echo "// edited"; } > $f.tmp && mv $f.tmp $f &&
	tail -n 1 $f | grep -q edited' || t_err "write-and-rename failed"
[[ $(stat -c %U "${WS[0]}/workspace/app/node_modules/react/index.js") != root ]] || t_err "the edit is root's"
[[ $(sha256sum "${WS[1]}/$F" | cut -c1-64) == "$h" ]] || t_err "the other sandbox's copy changed"
grep -q edited "${WS[1]}/workspace/app/node_modules/react/index.js" && t_err "the edit shows in sandbox 2"
t_end

t_begin "npm install and uninstall of a local tarball work among shared files (no network)"
out=$(in_sb "${SBS[0]}" 'set -e; mkdir -p /tmp/tiny && cd /tmp/tiny &&
	printf "{\"name\":\"sbx-tiny\",\"version\":\"1.0.0\",\"main\":\"index.js\",\"bin\":{\"sbx-tiny\":\"cli.js\"}}" > package.json &&
	echo "module.exports = 42;" > index.js && printf "#!/usr/bin/env node\nconsole.log(42)\n" > cli.js &&
	npm pack --silent >/dev/null && cd /home/sandbox/workspace/app &&
	npm install --offline --no-audit --no-fund /tmp/tiny/sbx-tiny-1.0.0.tgz &&
	node -e "if (require(\"sbx-tiny\") !== 42) process.exit(1)" &&
	npm uninstall --offline --no-audit --no-fund sbx-tiny && test ! -e node_modules/sbx-tiny &&
	npm install --offline --no-audit --no-fund /tmp/tiny/sbx-tiny-1.0.0.tgz && test -e node_modules/sbx-tiny/index.js &&
	npm uninstall --offline --no-audit --no-fund react-dom && test ! -e node_modules/react-dom' 2>&1) ||
	t_err "npm: $(tail -n 15 <<<"$out")"
t_end

t_begin "Vite starts (its cache in node_modules/.vite) and the preview answers"
api POST "/v1/sandboxes/${SBS[1]}/stop"
expect_status 200
api POST "/v1/sandboxes/${SBS[1]}/start"
expect_status 200
c=$(container_of "${SBS[1]}")
wait_until 60 eval "[[ \$(sb_http '$c' http://127.0.0.1:3000/) == 200 ]]" || t_err "the preview does not answer"
wait_until 30 eval "[[ \$(sb_http '$c' http://127.0.0.1:3000/src/App.jsx) == 200 ]]" || t_err "App.jsx does not compile"
[[ -d ${WS[1]}/workspace/app/node_modules/.vite ]] || note "(no node_modules/.vite yet)"
t_end

# A wheel made by hand (no network, no build backend): pip install --user
# into ~/.local (Debian's pip needs --break-system-packages for --user).
MKWHEEL='import zipfile, hashlib, base64
files = {"sbx_tiny.py": "VALUE = 42\n" + "# padding\n" * 100,
         "sbx_tiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sbx-tiny\nVersion: 1.0\n",
         "sbx_tiny-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = []
with zipfile.ZipFile("/home/sandbox/sbx_tiny-1.0-py3-none-any.whl", "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
        h = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (n, h, len(t)))
    rec.append("sbx_tiny-1.0.dist-info/RECORD,,")
    z.writestr("sbx_tiny-1.0.dist-info/RECORD", "\n".join(rec) + "\n")'
PIP='python3 -m pip install -q --user --no-index --break-system-packages'
t_begin "pip install --user: installs, and after a pass its files are shared"
out=$(in_sb "${SBS[2]}" "python3 -c '$MKWHEEL' && $PIP /home/sandbox/sbx_tiny-1.0-py3-none-any.whl &&
	python3 -c 'import sbx_tiny; assert sbx_tiny.VALUE == 42'" 2>&1) || t_err "pip install --user: $out"
t_end

t_begin "crash safety: a leftover temporary name is removed by the next pass"
d=${WS[2]}/workspace/app/node_modules/react
ln "$DATA/store/$h" "$d/.sandboxd-dedup-999-1"
n=$(grep -c "dedup: sandbox ${SBS[2]}" "$DAEMON_ERR")
api POST "/v1/sandboxes/${SBS[2]}/stop"
api POST "/v1/sandboxes/${SBS[2]}/start"
expect_status 200
dedup_done "${SBS[2]}" $((n + 1)) || t_err "no second pass"
[[ ! -e $d/.sandboxd-dedup-999-1 ]] || t_err "the leftover is still there"
grep "dedup: sandbox ${SBS[2]}" "$DAEMON_ERR" | tail -n 1 | grep -q "1 leftovers removed" ||
	t_err "$(grep "dedup: sandbox ${SBS[2]}" "$DAEMON_ERR" | tail -n 1)"
t_end

t_begin "Vite keeps working once its node_modules/.vite is shared"
c=$(container_of "${SBS[2]}")
wait_until 60 eval "[[ \$(sb_http '$c' http://127.0.0.1:3000/src/App.jsx) == 200 ]]" || t_err "App.jsx does not compile"
api POST "/v1/sandboxes/${SBS[2]}/stop"
api POST "/v1/sandboxes/${SBS[2]}/start"
c=$(container_of "${SBS[2]}")
wait_until 60 eval "[[ \$(sb_http '$c' http://127.0.0.1:3000/src/App.jsx) == 200 ]]" || t_err "App.jsx does not compile after a restart"
note ".vite: $(find "${WS[2]}/workspace/app/node_modules/.vite" -type f -user 0 2>/dev/null | wc -l) shared files of $(find "${WS[2]}/workspace/app/node_modules/.vite" -type f 2>/dev/null | wc -l)"
t_end

t_begin "pip's files in ~/.local are shared, and pip uninstall and reinstall work"
py=${WS[2]}/.local/lib/python3.11/site-packages/sbx_tiny.py
[[ $(stat -c '%u %a %h' "$py" 2>/dev/null) == "0 444 2" ]] || t_err "sbx_tiny.py: $(stat -c '%u %a %h' "$py" 2>&1)"
out=$(in_sb "${SBS[2]}" "python3 -m pip uninstall -q -y --break-system-packages sbx-tiny &&
	! python3 -c 'import sbx_tiny' 2>/dev/null && $PIP /home/sandbox/sbx_tiny-1.0-py3-none-any.whl &&
	$PIP --force-reinstall /home/sandbox/sbx_tiny-1.0-py3-none-any.whl &&
	python3 -c 'import sbx_tiny; assert sbx_tiny.VALUE == 42'" 2>&1) || t_err "pip: $out"
t_end

t_begin "gc removes store entries no workspace links and keeps the others"
# react-dom's files: sandbox 1 uninstalled it; sandboxes 2 and 3 go.
RD=workspace/app/node_modules/react-dom/package.json
hd=$(sha256sum "${WS[1]}/$RD" | cut -c1-64)
for k in 1 2; do
	api DELETE "/v1/apps/${APPS[$k]}"
	[[ $STATUS == 20[04] ]] || t_err "delete app $k: $STATUS"
	TRASHED[$k]=$(header Sandboxd-Trash-Id)
done
# In the trash their workspaces still link the entry (so gc keeps it);
# the purge unlinks it.
(($(stat -c %h "$DATA/store/$hd") > 1)) || t_err "react-dom's entry lost the trash's links"
for k in 1 2; do
	api DELETE "/v1/trash/${TRASHED[$k]}"
	[[ $STATUS == 204 ]] || t_err "purge app $k: $STATUS"
done
[[ $(stat -c %h "$DATA/store/$hd") == 1 ]] || t_err "react-dom's entry has $(stat -c %h "$DATA/store/$hd") links"
out=$(gc_store 2>&1) || t_err "gc dry run: $out"
grep -qE "^would remove [1-9][0-9]* unused store entr" <<<"$out" || t_err "gc dry run said: $out"
[[ -e $DATA/store/$hd ]] || t_err "the dry run removed an entry"
out=$(gc_store --yes 2>&1) || t_err "gc --yes: $out"
grep -qE "^removed [1-9][0-9]* unused store entr" <<<"$out" || t_err "gc said: $out"
[[ ! -e $DATA/store/$hd ]] || t_err "the unused entry is still there"
hs=$(sha256sum "${WS[0]}/workspace/app/node_modules/vite/package.json" | cut -c1-64)
[[ -n $hs && -f $DATA/store/$hs ]] || t_err "a used entry was removed"
t_end

t_begin "backup --workspaces and restore give a working app"
BK=$IT_TMP/backup
sbd backup "$BK" --workspaces >"$IT_TMP/bk.out" 2>&1 || t_err "backup: $(cat "$IT_TMP/bk.out")"
stop_daemon
remove_test_containers
DATA_OLD=$DATA
new_data_dir
sbd restore "$BK" >"$IT_TMP/rs.out" 2>&1 || t_err "restore: $(cat "$IT_TMP/rs.out")"
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" || bail "the restored daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
api POST "/v1/sandboxes/${SBS[0]}/start"
[[ $STATUS == 200 ]] || t_err "start after restore: $STATUS $(short_body)"
c=$(container_of "${SBS[0]}")
wait_until 60 eval "[[ \$(sb_http '$c' http://127.0.0.1:3000/) == 200 ]]" || t_err "the restored preview does not answer"
dedup_done "${SBS[0]}" || t_err "no pass after restore"
f=$DATA/workspaces/${SBS[0]}/workspace/app/node_modules/vite/package.json
[[ $(stat -c %i "$f") == $(stat -c %i "$DATA/store/$hs" 2>/dev/null) ]] ||
	t_err "the restored copy is not linked to the new store"
t_end

finish
