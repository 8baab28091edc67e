#!/usr/bin/env bash
# The console fits every screen and is accessible, in a real browser
# (Debian's Chromium driven by playwright-core through console-fit.mjs)
# against a real daemon and real sandboxes (the scripted fake agent gives
# the app a finished task in its chat).  At 1440x900, 1280x720 and
# 390x844, on every screen (sign-in, Apps empty and with an app, the
# Build view, Files with a file open, Git, Config, Spend, Settings, Trash):
# no sideways overflow; the Build and Files views need no page scroll on
# the desktop sizes; the prompt box, Send, the tabs and a preview frame at
# least 200 px tall are inside the window; on the phone the Chat | Preview
# | Files switch shows the preview in one tap; the preview's device-size
# toggle changes the frame's width and is remembered; the App menu opens
# from the keyboard and Escape closes it; the skip link comes first and a
# route change moves the focus to the page's heading; a private preview
# offers a one-time link instead of its plain address; axe-core finds no
# violation on any screen at any size.  Screenshots go to $SHOTS when set.
. "$(dirname "$0")/lib.sh"
start_console_daemon

t_begin "the main bundle stays small"
ASSET=$(grep -oE 'assets/index-[A-Za-z0-9_-]+\.js' "$CONSOLE_DIR/index.html" | head -n 1)
[[ -n $ASSET ]] || t_err "no main script in index.html"
RAW=$(stat -c %s "$CONSOLE_DIR/$ASSET") GZ=$(stat -c %s "$CONSOLE_DIR/$ASSET.gz")
note "main bundle $ASSET: $RAW bytes, $GZ gzip"
((GZ <= 150 * 1024)) || t_err "main bundle is $GZ bytes gzip, over 150 KiB"
t_end

# console-fit.mjs prints "ok CASE" / "not ok CASE" with "# " detail lines.
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="${SHOTS:-}" CHROMIUM="$CHROMIUM" \
	timeout -k 10 1200 node "$IT_ROOT/tests/integration/console-fit.mjs" >"$IT_TMP/fit.out" 2>&1
rc=$?
report_browser "$IT_TMP/fit.out" "$rc" "the fit script"

finish
