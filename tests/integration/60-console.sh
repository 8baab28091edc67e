#!/usr/bin/env bash
# The web console in a real browser: Debian's Chromium driven by
# playwright-core (console/'s devDependency) through console-flow.mjs,
# against a real daemon, real sandboxes with the scripted fake agent
# (tests/fake-agent) and the tests' git server (tests/git-server).  The
# flow: the first visit is refused without the setup code, setup, logout
# and login, CSRF and cookie flags, create an app, the preview, a prompt
# whose chat shows phases, tool calls and done, a reload mid-task that
# re-attaches, edit and save a file, a conflict when it changed
# underneath, commit and push, an agent key that is never shown again,
# stop/start, logout, and no request to another origin.  Screenshots go
# to docs/console/ when CONSOLE_SHOTS=1.  Before the browser, curl checks
# how the edge serves the console (headers, precompressed assets).
. "$(dirname "$0")/lib.sh"
need_test_image

need_console

# The git server the app pushes to.
GIT_TOKEN=ghp-console-$RANDOM$RANDOM$RANDOM
ROOT=$IT_TMP/remote
mkdir -p "$ROOT"
git init -q --bare "$ROOT/app.git"
start_git_server "$ROOT" "$GIT_TOKEN"

# The Claude subscription sign-in's token endpoint (tests/fake-provider).
OAUTH_CODE=code-$RANDOM$RANDOM$RANDOM
start_fake_oauth "$OAUTH_CODE" "sk-ant-oat01-console-$RANDOM$RANDOM"

EDGE_PORT=$(free_port)
EDGE=http://127.0.0.1:$EDGE_PORT
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR" SANDBOXD_GIT_ALLOW_HTTP=1 \
	SANDBOXD_CLAUDE_AUTHORIZE_URL=https://claude.example/cai/oauth/authorize \
	SANDBOXD_CLAUDE_TOKEN_URL="http://127.0.0.1:$OPORT/v1/oauth/token" \
	SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true -SANDBOXD_API_TOKENS ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
CHOST=console.localhost:$EDGE_PORT

t_begin "the daemon prints the console setup code and keeps it 0600"
SETUP_CODE=$(sed -nE 's/^.*Console setup code[^:]*: *([A-Za-z0-9-]+).*$/\1/p' "$DAEMON_OUT" | head -n 1)
[[ -n $SETUP_CODE ]] || t_err "no 'Console setup code:' line on stdout: $(head -c 400 "$DAEMON_OUT")"
[[ -f $DATA/console-setup-code ]] || t_err "no $DATA/console-setup-code"
[[ $(stat -c %a "$DATA/console-setup-code" 2>/dev/null) == 600 ]] ||
	t_err "console-setup-code mode $(stat -c %a "$DATA/console-setup-code" 2>/dev/null)"
t_end

t_begin "the console's index: no-store, a strict CSP, frame-ancestors none"
H=$(ecurl "$CHOST" /apps/x/files -D - -o "$IT_TMP/index.html")
grep -qi '^cache-control: no-store' <<<"$H" || t_err "index Cache-Control: $(grep -i '^cache-control' <<<"$H")"
CSP=$(grep -i '^content-security-policy:' <<<"$H")
for want in "default-src 'self'" "frame-ancestors 'none'" "connect-src 'self'"; do
	[[ $CSP == *"$want"* ]] || t_err "CSP lacks $want: $CSP"
done
[[ $CSP != *unsafe-inline* && $CSP != *unsafe-eval* ]] || t_err "CSP allows inline or eval: $CSP"
grep -qi '^x-content-type-options: nosniff' <<<"$H" || t_err "no nosniff"
grep -q '<div id="root">' "$IT_TMP/index.html" || t_err "a deep link did not answer index.html"
# Nothing inline for the CSP to refuse: every script and style is a file.
if grep -Eq '<script>|<script [^>]*>[^<]|<style|style=' "$IT_TMP/index.html"; then
	t_err "inline script or style in index.html"
fi
t_end

t_begin "assets: immutable, precompressed gzip when asked"
ASSET=$(grep -oE '/assets/index-[A-Za-z0-9_-]+\.js' "$IT_TMP/index.html" | head -n 1)
[[ -n $ASSET ]] || t_err "no main script in index.html"
H=$(ecurl "$CHOST" "$ASSET" -D - -o "$IT_TMP/main.gz" -H 'Accept-Encoding: gzip')
grep -qi '^cache-control: .*immutable' <<<"$H" || t_err "asset Cache-Control: $(grep -i '^cache-control' <<<"$H")"
grep -qi '^content-encoding: gzip' <<<"$H" || t_err "no gzip for a client that accepts it"
cmp -s <(gzip -dc "$IT_TMP/main.gz") "$CONSOLE_DIR$ASSET" || t_err "the gzip body is not the asset"
SZ=$(stat -c %s "$CONSOLE_DIR$ASSET.gz")
((SZ <= 150 * 1024)) || t_err "main bundle is $SZ bytes gzip, over 150 KiB"
t_end

# The browser.
SHOTS=
[[ ${CONSOLE_SHOTS:-} == 1 ]] && SHOTS=$IT_ROOT/docs/console && mkdir -p "$SHOTS"
# run_flow [VAR=value…]: console-flow.mjs against the daemon, each of its
# cases reported here.
run_flow() {
	env CONSOLE_URL="http://$CHOST" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" SETUP_CODE="$SETUP_CODE" \
		GIT_REMOTE="http://127.0.0.1:$GPORT/app.git" GIT_HOST="127.0.0.1:$GPORT" GIT_TOKEN="$GIT_TOKEN" \
		GIT_REMOTE_AUTH="http://u:$GIT_TOKEN@127.0.0.1:$GPORT/app.git" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" OAUTH_CODE="$OAUTH_CODE" "$@" \
		timeout -k 10 900 node "$IT_ROOT/tests/integration/console-flow.mjs" >"$IT_TMP/flow.out" 2>&1
	report_browser "$IT_TMP/flow.out" $? "the flow script"
}
run_flow

t_begin "the pushed branch holds the console's commit"
LOG=$(git --git-dir="$ROOT/app.git" log -1 --format=%s console/todo 2>&1)
[[ $LOG == "todo list from the console" ]] || t_err "console/todo: $LOG"
t_end

# The same console with the API's authentication off: off is for loopback
# clients of the API only, the console still asks for sign-in.
new_data_dir
start_daemon SANDBOXD_IMAGE="$TEST_IMAGE" HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR" SANDBOXD_API_AUTH_DISABLED=true ||
	bail "the daemon without auth did not start: $(tail -n 5 "$DAEMON_ERR")"
run_flow FLOW=open

finish
