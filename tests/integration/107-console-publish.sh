#!/usr/bin/env bash
# The console's Publish tab in a real browser (Debian's Chromium driven by
# playwright-core through console-publish.mjs) against a real daemon and a
# sandbox of the static preset: Publish from the button shows the build
# log as it is written and then the live address, which answers through
# the edge at the app's own host (and opens in a new tab); a second
# release (by keyboard) serves the changed page; Roll back (confirmed)
# serves the first again at once; a slow build that fails shows its first
# line while it runs (the button disabled), then its cause, the log's tail
# and Try again (which starts the next release) while the live release
# keeps serving; a custom domain is refused in place when it is not a
# host name and listed as pending with the DNS records to create when it
# is; visibility; Unpublish; axe on each state, the header at 1280 px and
# a phone's width.  Screenshots go to $SHOTS when it is set
# (CONSOLE_SHOTS=1: docs/console/publish).
. "$(dirname "$0")/lib.sh"
# The address the domains' A record names (documentation range).
start_console_daemon SANDBOXD_PUBLIC_ADDRS=192.0.2.10

SHOTS=${SHOTS:-}
[[ ${CONSOLE_SHOTS:-} == 1 ]] && SHOTS=$IT_ROOT/docs/console/publish
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" EDGE_PORT="$EDGE_PORT" \
	timeout -k 10 170 node "$IT_ROOT/tests/integration/console-publish.mjs" >"$IT_TMP/publish.out" 2>&1
rc=$?
report_browser "$IT_TMP/publish.out" "$rc" "the script"
finish
