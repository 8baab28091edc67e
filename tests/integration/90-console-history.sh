#!/usr/bin/env bash
# The console's History tab in a real browser (Debian's Chromium driven by
# playwright-core through console-history.mjs) against a real daemon and a
# real sandbox whose web process is tests/integration/edge-app.js, with
# the scripted fake agent for a task: the
# empty state says what a snapshot is; a snapshot taken in the UI shows in
# the list and on the timeline; an event made through the API (a rename,
# outside the browser) appears without a reload; Load older pages back;
# a task's checkpoint is on the line and its Revert puts the files back;
# a restore while a task runs is refused in place with the next step;
# restore (a dialog, by keyboard; Escape closes it and gives the focus
# back) puts the files back, and Undo returns them; fork opens the new app,
# whose preview answers while the source's still does; delete removes the
# snapshot; axe on each state.  Screenshots go to $SHOTS when it is set
# (CONSOLE_SHOTS=1: docs/console/history).
. "$(dirname "$0")/lib.sh"
start_console_daemon
EDGE=http://127.0.0.1:$EDGE_PORT

# The app: its sandbox serves edge-app.js ("hello from the app") through
# the edge (APP_ID, SB, HOST).
serve_edge_app history
pass "the app's preview answers through the edge"

SHOTS=${SHOTS:-}
[[ ${CONSOLE_SHOTS:-} == 1 ]] && SHOTS=$IT_ROOT/docs/console/history
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" APP_ID="$APP_ID" EDGE_PORT="$EDGE_PORT" \
	timeout -k 10 900 node "$IT_ROOT/tests/integration/console-history.mjs" >"$IT_TMP/history.out" 2>&1
rc=$?
report_browser "$IT_TMP/history.out" "$rc" "the script"
finish
