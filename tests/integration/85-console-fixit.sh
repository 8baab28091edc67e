#!/usr/bin/env bash
# The console's fix-it loop in a real browser (Debian's Chromium driven by
# playwright-core through console-fixit.mjs), against a real daemon, real
# sandboxes and the REAL OpenCode of the image, whose model is the fake
# provider (tests/fake-provider) behind the credential proxy:
#   - the provider goes away mid-use: the task fails in plain words with a
#     link to Settings → AI agents, the provider's failure showed as a
#     warning row while it ran, no "build passed", no Revert; the provider
#     comes back: Retry refills the composer and the task succeeds;
#   - a JSX syntax error planted through the files API while the preview
#     is open: the problem card, Ask the agent to fix (the provider's
#     --directives-file scripts the answer to the console's own prompt),
#     the agent writes the fixed file, the card goes, the preview shows it;
#   - the app's budget reached: the composer is blocked with a link to
#     Spend, the budget raised there, Send works again;
#   - an import from an unreachable URL: the failed sandbox's card, the URL
#     fixed to the tests' git server, Try again, running.
# axe on each of these states; screenshots to $SHOTS (CONSOLE_SHOTS=1:
# docs/console/fixit).  Nothing leaves the machine.
. "$(dirname "$0")/lib.sh"
need_docker

need_console

# The provider, whose answer to a prompt without directives is the file's.
DIRECTIVES=$IT_TMP/directives.txt
start_fake_provider --directives-file "$DIRECTIVES"

# The git server with the (public) repository an import is fixed to.
ROOT=$IT_TMP/remote
mkdir -p "$ROOT"
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com -c init.defaultBranch=main)
W=$IT_TMP/seed
"${G[@]}" init -q "$W"
printf '<!doctype html><title>imported</title><h1>Imported app</h1>\n' >"$W/index.html"
"${G[@]}" -C "$W" add -A && "${G[@]}" -C "$W" commit -q -m first
"${G[@]}" clone -q --bare "$W" "$ROOT/site.git"
start_git_server "$ROOT"
CLOSED=$(free_port) # nothing listens there

EDGE_PORT=$(free_port)
PROXY_PORT=$(free_port)
start_daemon HTTP_PORT="$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 \
	SANDBOXD_CONSOLE_DIR="$CONSOLE_DIR" SANDBOXD_GIT_ALLOW_HTTP=1 \
	SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" \
	SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1" -SANDBOXD_API_TOKENS ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
setup_code

# The provider's control for the browser flow: a file it polls for "down"
# or "up", answered by stopping or starting the provider on its port.
CTL=$IT_TMP/provider.ctl
: >"$CTL"
provider_ctl() {
	local last=
	while kill -0 "$FLOW_PID" 2>/dev/null; do
		local want
		want=$(cat "$CTL" 2>/dev/null)
		if [[ $want != "$last" ]]; then
			case $want in
			down) kill "$PROV_PID" 2>/dev/null && wait "$PROV_PID" 2>/dev/null
				echo down-done >"$CTL.ack" ;;
			up) : >"$IT_TMP/provider.out"
				start_fake_provider --directives-file "$DIRECTIVES"
				echo up-done >"$CTL.ack" ;;
			esac
			last=$want
		fi
		sleep 0.2
	done
}

SHOTS=${SHOTS:-}
[[ ${CONSOLE_SHOTS:-} == 1 ]] && SHOTS=$IT_ROOT/docs/console/fixit
[[ -n $SHOTS ]] && mkdir -p "$SHOTS"
env CONSOLE_URL="http://console.localhost:$EDGE_PORT" API_URL="$API_URL" TOKEN="$FIRST_TOKEN" \
	SETUP_CODE="$SETUP_CODE" SHOTS="$SHOTS" CHROMIUM="$CHROMIUM" DIRECTIVES="$DIRECTIVES" CTL="$CTL" \
	GIT_GOOD="http://127.0.0.1:$GPORT/site.git" GIT_BAD="http://127.0.0.1:$CLOSED/site.git" \
	timeout -k 10 1500 node "$IT_ROOT/tests/integration/console-fixit.mjs" >"$IT_TMP/flow.out" 2>&1 &
FLOW_PID=$!
provider_ctl
wait "$FLOW_PID"
RC=$?

report_browser "$IT_TMP/flow.out" "$RC" "the flow script"
grep '^# measured' "$IT_TMP/flow.out" | sed 's/^# measured/#   measured/'

finish
