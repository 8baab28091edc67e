#!/usr/bin/env bash
# Work is never lost in the console, and what users expect works, in a real
# browser (Debian's Chromium driven by playwright-core through
# console-work.mjs) against a real daemon and real sandboxes with the
# scripted fake agent: Enter builds an app from the Apps prompt (focused
# on load, Shift+Enter a new line) with a short generated name; rename in
# the app's title; the composer's draft survives a reload; its model list;
# an image attached to a prompt reaches the task; an unsaved edit is
# guarded when another file or tab is picked, and kept over a reload;
# the session ended from another session keeps the page and the draft,
# and signing in again comes back to the file with the draft, which then
# saves; Download as zip in Files; axe on the states added.  Screenshots
# go to $SHOTS when it is set.
. "$(dirname "$0")/lib.sh"
start_console_daemon

SHOTS=${SHOTS:-}
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" DL_DIR="$IT_TMP/downloads" \
	timeout -k 10 900 node "$IT_ROOT/tests/integration/console-work.mjs" >"$IT_TMP/work.out" 2>&1
rc=$?
report_browser "$IT_TMP/work.out" "$rc" "the script"
finish
