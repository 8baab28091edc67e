#!/usr/bin/env bash
# Detection in the console, in a real browser (Debian's Chromium driven by
# playwright-core through console-detect.mjs) against a real daemon, with
# repositories served by a git server the test runs: an app imported
# through the New app form shows what was detected (framework,
# confidence, reasons) and previews; Change… applies another recipe
# (written, committed, on the timeline); a repository with nothing to run
# shows what was looked for and the manifest error, and choosing a recipe
# there makes it run; axe on each state.  Screenshots go to $SHOTS when it
# is set.
. "$(dirname "$0")/lib.sh"

ROOT=$IT_TMP/repos
mkdir -p "$ROOT"
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com
	-c init.defaultBranch=main)
# make_repo NAME FILE=CONTENT…: a bare repository NAME.git with one commit.
make_repo() {
	local name=$1 w=$IT_TMP/work.$1 kv
	shift
	"${G[@]}" init -q "$w"
	for kv in "$@"; do
		printf '%s\n' "${kv#*=}" >"$w/${kv%%=*}"
	done
	"${G[@]}" -C "$w" add -A && "${G[@]}" -C "$w" commit -q -m "the app"
	"${G[@]}" clone -q --bare "$w" "$ROOT/$name.git"
}
make_repo site 'index.html=<!doctype html><title>site</title><h1>detected in the console</h1>'
make_repo notes 'notes.txt=nothing to run here' 'page.htm=<h1>notes page</h1>'
start_git_server "$ROOT"
start_console_daemon SANDBOXD_GIT_ALLOW_HTTP=1

SHOTS=${SHOTS:-}
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" EDGE_PORT="$EDGE_PORT" \
	GIT_URL="http://127.0.0.1:$GPORT" \
	timeout -k 10 600 node "$IT_ROOT/tests/integration/console-detect.mjs" >"$IT_TMP/detect.out" 2>&1
rc=$?
report_browser "$IT_TMP/detect.out" "$rc" "the script"
finish
