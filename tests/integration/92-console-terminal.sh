#!/usr/bin/env bash
# The console's Terminal tab in a real browser (Debian's Chromium driven
# by playwright-core through console-terminal.mjs) against a real daemon
# and a real sandbox: the tab opens a connected shell with the focus in
# it; `echo hi-$RANDOM` shows its output, as a user who is not root; an
# OSC 52 clipboard write from the sandbox writes nothing; a smaller window
# refits the terminal and `stty size` follows; a dropped connection says
# "Session ended" and Reconnect reattaches to the same shell with its
# screen replayed, as a reload does; Escape then Tab leaves the terminal;
# screen reader mode puts the output in the accessibility tree and is
# remembered; `exit` ends the session with its reason and Reconnect opens
# a new shell; a refused ticket shows the error envelope's message and a
# next step, and Try again connects, as does a WebSocket the daemon
# refuses (a forged ticket); a stopped sandbox is woken, the tab
# saying so; on a phone-sized window nothing overflows sideways and the
# keys bar's Ctrl+C interrupts; a 50 MB flood of output ends with the
# prompt back, no page error and the page's heap bounded; axe-core finds no violation in any state;
# the console's CSP sees no violation.  Screenshots go to $SHOTS when set.
. "$(dirname "$0")/lib.sh"
start_console_daemon

t_begin "xterm loads with the Terminal tab only, not in the main bundle"
ASSET=$(grep -oE 'assets/index-[A-Za-z0-9_-]+\.js' "$CONSOLE_DIR/index.html" | head -n 1)
[[ -n $ASSET ]] || t_err "no main script in index.html"
grep -q 'registerOscHandler' "$CONSOLE_DIR/$ASSET" || t_err "the main bundle does not register the OSC 52 handler"
! grep -q 'xterm-helper-textarea' "$CONSOLE_DIR/$ASSET" || t_err "xterm.js is in the main bundle"
t_end

SHOTS=${SHOTS:-}
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" \
	timeout -k 10 600 node "$IT_ROOT/tests/integration/console-terminal.mjs" >"$IT_TMP/terminal.out" 2>&1
rc=$?
report_browser "$IT_TMP/terminal.out" "$rc" "the script"
finish
