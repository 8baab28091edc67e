#!/usr/bin/env bash
# The credential proxy with the REAL agent CLIs of the image: Claude Code
# and OpenCode each run a task against a scripted fake model provider
# (tests/fake-provider) that only accepts the real key; the sandbox gets
# its own proxy token instead, and the key's bytes appear nowhere a
# sandbox (or its task's output) can reach.  Token checks: missing, wrong,
# another sandbox's, a deleted sandbox's.  A rejected key ends the task at
# once with the provider's message.
#
# The fake providers listen on 127.0.0.1: only the proxy, on the host,
# talks to them.  The sandboxes reach the proxy on their network's
# gateway, which the daemon reports in GET /v1/status.
. "$(dirname "$0")/lib.sh"
need_docker

KEY=sk-ant-real-$RANDOM$RANDOM$RANDOM$RANDOM
OKEY=sk-oc-real-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
PPORT=$(free_port)

# The provider accepts both keys (anthropic takes KEY, openai OKEY).
start_fake_provider --expect-key "$KEY" --expect-key "$OKEY"

PROXY_PORT=$(free_port)
start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" \
	SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "GET /v1/status shows no gateway for the sandbox network: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT: $(grep -i proxy "$DAEMON_ERR")"

# In-sandbox HTTP (lib.sh): prints the status.
from_sandbox() { # CONTAINER TOKEN-HEADER-VALUE PATH
	sandbox_post "$1" "http://$GW:$PROXY_PORT$3" "$2" '{}'
}

t_begin "the agents' keys are stored through the API"
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
api POST /v1/agents/opencode/api-key "{\"api_key\":\"$OKEY\"}"
expect_status 200
t_end

create_app proxied '"runtime_preset":"static"'
own_calls "$APP_ID" # its token is used between tasks below
create_sandbox "$APP_ID"
SB=$SB_ID
C=$SB_CONTAINER

t_begin "Claude Code (the real CLI) runs a task through the proxy: a tool call writes a file"
submit "$SB" '{"prompt":"Create hello.txt. [[provider:write=hello.txt]]","agent":"claude-code","model":"fake-model"}'
T1=$TASK_ID
wait_task "$SB" "$T1" 120
expect_json .status succeeded &&
	expect_jq '.files_changed | index("hello.txt") != null' 'hello.txt in files_changed'
[[ -f $DATA/workspaces/$SB/workspace/app/hello.txt ]] || t_err "hello.txt is not in the workspace"
grep -q '"path": *"/v1/messages' "$PLOG" || t_err "the provider saw no /v1/messages request"
t_end

t_begin "OpenCode (the real CLI) runs a task through the proxy"
submit "$SB" '{"prompt":"Create oc.txt. [[provider:write=oc.txt]]","agent":"opencode","model":"openai/fake-model"}'
T2=$TASK_ID
wait_task "$SB" "$T2" 120
expect_json .status succeeded &&
	expect_jq '.files_changed | index("oc.txt") != null' 'oc.txt in files_changed'
[[ -f $DATA/workspaces/$SB/workspace/app/oc.txt ]] || t_err "oc.txt is not in the workspace"
grep -q '/chat/completions' "$PLOG" || t_err "the provider saw no chat completions"
t_end

t_begin "the provider got the real keys; the sandbox never had them"
jq -e -s --arg k "$KEY" '[.[] | select(.path | startswith("/v1/messages")) | .headers | to_entries[] | select(.key | ascii_downcase == "x-api-key") | .value] | length > 0 and all(. == $k)' "$PLOG" >/dev/null ||
	t_err "Anthropic requests did not all carry the real key"
jq -e -s --arg k "Bearer $OKEY" '[.[] | select(.path | contains("chat/completions")) | .headers | to_entries[] | select(.key | ascii_downcase == "authorization") | .value] | length > 0 and all(. == $k)' "$PLOG" >/dev/null ||
	t_err "OpenAI-style requests did not all carry the real key"
for k in "$KEY" "$OKEY"; do
	docker inspect "$C" | grep -qF "$k" && t_err "the key is in docker inspect"
	grep -rqF "$k" "$DATA/workspaces/$SB" && t_err "the key is in the workspace: $(grep -rlF "$k" "$DATA/workspaces/$SB" | head -n 3)"
	docker exec "$C" sh -c 'cat /proc/[0-9]*/environ 2>/dev/null' | tr '\0' '\n' | grep -qF "$k" &&
		t_err "the key is in a sandbox process's environment"
	grep -qF "$k" "$DATA/tasks/"*.events && t_err "the key is in task events"
	api GET "/v1/sandboxes/$SB/tasks"
	grep -qF "$k" <<<"$BODY" && t_err "the key is in task results"
	grep -qF "$k" "$DAEMON_ERR" "$DAEMON_OUT" && t_err "the key is in the daemon's logs"
done
t_end

t_begin "proxy tokens: missing, wrong, another sandbox's and a deleted sandbox's are refused"
[[ $(from_sandbox "$C" "" /claude-code/anthropic/v1/messages) == 401 ]] || t_err "no token: not 401"
[[ $(from_sandbox "$C" sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA /claude-code/anthropic/v1/messages) == 401 ]] ||
	t_err "a wrong token: not 401"
TOK=$(jq -r '.provider.sandboxd.options.apiKey' <<<"$(tr '\0' '\n' <"$DATA/workspaces/$SB/.sandboxd/tasks/$T2/env" | sed -n 's/^OPENCODE_CONFIG_CONTENT=//p')")
[[ $TOK == sk_* ]] || t_err "no proxy token in the task's env file"
[[ $(from_sandbox "$C" "$TOK" /claude-code/anthropic/v1/messages) == 200 ]] ||
	t_err "its own token from its own sandbox: not 200"
create_app other '"runtime_preset":"static"'
own_calls "$APP_ID"
create_sandbox "$APP_ID"
SB2=$SB_ID
C2=$SB_CONTAINER
[[ $(from_sandbox "$C2" "$TOK" /claude-code/anthropic/v1/messages) == 401 ]] ||
	t_err "another sandbox's token: not 401"
api DELETE "/v1/sandboxes/$SB"
expect_status 204
[[ $(from_sandbox "$C2" "$TOK" /claude-code/anthropic/v1/messages) == 401 ]] ||
	t_err "a deleted sandbox's token: not 401"
t_end

# SB2's own token, from a first task there.
submit "$SB2" '{"prompt":"hello","agent":"claude-code","model":"fake-model"}'
wait_task "$SB2" "$TASK_ID" 60
TOK2=$(tr '\0' '\n' <"$DATA/workspaces/$SB2/.sandboxd/tasks/$TASK_ID/env" | sed -n 's/^ANTHROPIC_API_KEY=//p')


t_begin "a rejected key ends the task within seconds with the provider's message"
api POST /v1/agents/claude-code/api-key '{"api_key":"sk-ant-wrong-key-0000"}'
expect_status 200
submit "$SB2" '{"prompt":"hello","agent":"claude-code","model":"fake-model"}'
start=$SECONDS
wait_task "$SB2" "$TASK_ID" 60
took=$((SECONDS - start))
expect_json .status failed && expect_json .failure_reason provider_refused &&
	expect_jq '.error_message | test("anthropic: the key was rejected.*invalid x-api-key")' \
		"the proxy's message with the provider's"
((took < 30)) || t_err "the task took ${took}s to fail"
note "failed after ${took}s: $(j .error_message)"
t_end

t_begin "answers stream through the proxy as they come, not when they end"
SLOWPORT=$(free_port)
python3 "$IT_ROOT/tests/fake-provider/provider.py" --port "$SLOWPORT" --bind 127.0.0.1 \
	--log "$IT_TMP/slow.log" --chunk-delay-ms 150 >"$IT_TMP/slow.out" 2>&1 &
SLOW_PID=$!
kill_slow() { kill "$SLOW_PID" 2>/dev/null; }
IT_CLEANUP_HOOKS+=(kill_slow)
wait_until 10 grep -q listening "$IT_TMP/slow.out" || t_err "the slow provider did not start"
# The daemon sends Anthropic requests to the slow provider from now on.
restart_with_slow() {
	stop_daemon
	start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
		SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$SLOWPORT" \
		SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" \
		SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1" ||
		bail "the daemon did not restart"
	wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR"
}
restart_with_slow
# Only through the proxy ("-": no direct request; the sandbox cannot reach
# a provider on the host's loopback anyway).
times=$(docker exec -i "$C2" python3 - 1 - - \
	"http://$GW:$PROXY_PORT/claude-code/anthropic/v1/messages" "$TOK2" \
	<"$IT_ROOT/bench/proxy-client.py" 2>&1)
read -r _ ttfb total _ <<<"$(grep '^proxy' <<<"$times")"
note "through the proxy: first byte after ${ttfb} ms, last after ${total} ms"
awk -v a="$ttfb" -v b="$total" 'BEGIN { exit !(a > 0 && b > 600 && a < b / 3) }' ||
	t_err "not streamed: first byte ${ttfb} ms, end ${total} ms ($times)"
t_end

t_begin "the agent's default model from settings applies; a task's model overrides it"
api PATCH /v1/settings '{"agents":{"default_models":{"claude-code":"fake-default"}}}'
expect_status 200
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
submit "$SB2" '{"prompt":"hello","agent":"claude-code"}'
expect_json .model fake-default
wait_task "$SB2" "$TASK_ID" 60
submit "$SB2" '{"prompt":"hello","agent":"claude-code","model":"fake-other"}'
expect_json .model fake-other
wait_task "$SB2" "$TASK_ID" 60
t_end

finish
