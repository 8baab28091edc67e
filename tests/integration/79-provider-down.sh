#!/usr/bin/env bash
# A task says at once why it cannot run.  The REAL OpenCode of the image
# runs a task while its provider cannot be reached (the base URL is a
# closed loopback port): the credential proxy's first failed connection
# is a provider_error event of the task and ends it within seconds with
# failure_reason provider_unreachable, the host and the fix, in the API
# and in `task run --follow` (which prints the task's id first).  A
# provider that rejects the key (401) ends it with provider_refused.
# `sandboxd doctor` names the provider host it cannot reach, and the one
# whose TLS handshake fails (a plain HTTP server behind an https URL).
#
# Nothing here leaves the machine: the providers are the fake one on
# 127.0.0.1 and a port nothing listens on.
. "$(dirname "$0")/lib.sh"
need_docker

OKEY=sk-oc-real-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
start_fake_provider --expect-key "$OKEY"
CLOSED=$(free_port) # nothing listens there

# boot URL-BASE: a daemon whose model providers are all at URL-BASE.
PROXY_PORT=$(free_port)
boot() {
	start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
		SANDBOXD_ANTHROPIC_BASE_URL="$1" \
		SANDBOXD_OPENAI_BASE_URL="$1/v1" \
		SANDBOXD_ZEN_BASE_URL="$1/v1" ||
		bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
	daemon_gateway || bail "no gateway for the sandbox network: $(short_body)"
	wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
		bail "the proxy does not listen: $(grep -i proxy "$DAEMON_ERR")"
}
boot "http://127.0.0.1:$CLOSED"

api POST /v1/agents/opencode/api-key "{\"api_key\":\"$OKEY\"}"
[[ $STATUS == 200 ]] || bail "cannot store the key: $(short_body)"
create_app down '"runtime_preset":"static"' || bail "no app"
create_sandbox "$APP_ID" || bail "no sandbox: $(short_body)"
SB=$SB_ID

TASK='{"prompt":"Create oc.txt. [[provider:write=oc.txt]]","agent":"opencode","model":"openai/fake-model"}'
ms() { echo $(($(date +%s%N) / 1000000)); }

# The task runs through the CLI, in the background, so that the test sees
# when the proxy's first request fails (its log line, on main as well):
# OpenCode takes its time to start on a busy machine, which no change
# here can shorten; what it does once the provider is known unreachable
# is what this measures.
export SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN XDG_CONFIG_HOME=$IT_TMP/xdg
t0=$(ms)
"$SANDBOXD_BIN" task run "$SB" "Create oc.txt. [[provider:write=oc.txt]]" \
	--agent opencode --model openai/fake-model --follow >"$IT_TMP/run.out" 2>"$IT_TMP/run.err" </dev/null &
CLI_PID=$!
wait_until 240 grep -q "proxy: sandbox $SB: openai" "$DAEMON_ERR"
t1=$(ms)
wait "$CLI_PID"
RC=$?
t2=$(ms)
T1=$(sed -nE '1s/^task ([0-9A-Z]{26})$/\1/p' "$IT_TMP/run.out")
note "submit to failure: $((t2 - t0)) ms; the proxy's first failed request to failure: $((t2 - t1)) ms"

t_begin "provider unreachable: the task fails within 15 s of the first failed request, provider_unreachable"
ulid_ok "$T1" || t_err "no task id on the CLI's first line: $(head -n 1 "$IT_TMP/run.out")"
api GET "/v1/sandboxes/$SB/tasks/$T1"
expect_json .status failed && expect_json .failure_reason provider_unreachable
expect_jq ".error_message | contains(\"127.0.0.1:$CLOSED\")" "the message names the host"
expect_jq '.error_message | test("refused the connection") and contains("SANDBOXD_OPENAI_BASE_URL")' \
	"the message says what failed and names the setting"
(((t2 - t1) < 15000)) || t_err "the task took $((t2 - t1)) ms after the first failed request to fail (bound 15000)"
t_end

t_begin "the failed connection is a provider_error event of the task, before done"
curl -sN --max-time 30 -H "Authorization: Bearer $TOKEN" \
	"$API_URL/v1/sandboxes/$SB/tasks/$T1/events" >"$IT_TMP/t1.sse"
ev=$(awk '/^event: provider_error$/{getline; sub(/^data: /,""); print; exit}' "$IT_TMP/t1.sse")
[[ -n $ev ]] || t_err "no provider_error event: $(grep '^event:' "$IT_TMP/t1.sse" | sort | uniq -c | tr '\n' ' ')"
if [[ -n $ev ]]; then
	jq -e --arg h "127.0.0.1:$CLOSED" '.host == $h and .kind == "connect" and .upstream == "openai" and .permanent == true' \
		<<<"$ev" >/dev/null || t_err "the event says: $ev"
fi
last=$(grep '^event:' "$IT_TMP/t1.sse" | tail -n 1)
[[ $last == "event: done" ]] || t_err "the last event is '$last'"
# ids stay contiguous with the proxy's event among the derived ones
awk '/^id: /{ if ($2 != n++) { print "id " $2 " at " n - 1; exit 1 } }' "$IT_TMP/t1.sse" ||
	t_err "event ids are not contiguous"
t_end

t_begin "task run --follow prints the task's id first, then the provider's failure and the reason"
((RC == 10)) || t_err "exit $RC, not 10 (failed): $(cat "$IT_TMP/run.err")"
grep -q "provider: openai: 127.0.0.1:$CLOSED refused the connection" "$IT_TMP/run.out" ||
	t_err "no provider line: $(cat "$IT_TMP/run.out")"
grep -q "✗ task failed (provider_unreachable)" "$IT_TMP/run.out" ||
	t_err "no outcome line with the reason: $(tail -n 5 "$IT_TMP/run.out")"
t_end

boot "http://127.0.0.1:$PPORT"

t_begin "a key the provider rejects (401): provider_refused with the provider's words"
api POST /v1/agents/opencode/api-key '{"api_key":"sk-oc-wrong-0000"}'
expect_status 200
submit "$SB" "$TASK"
wait_until 240 grep -q "proxy: sandbox $SB: openai" "$DAEMON_ERR"
t1=$(ms)
wait_task "$SB" "$TASK_ID" 150
took_ms=$(($(ms) - t1))
note "401: the first refused request to failure ${took_ms} ms"
expect_json .status failed && expect_json .failure_reason provider_refused &&
	expect_jq '.error_message | test("openai: the key was rejected")' "the proxy's message"
((took_ms < 15000)) || t_err "the task took ${took_ms} ms to fail"
curl -sN --max-time 30 -H "Authorization: Bearer $TOKEN" \
	"$API_URL/v1/sandboxes/$SB/tasks/$TASK_ID/events" >"$IT_TMP/t3.sse"
ev=$(awk '/^event: provider_error$/{getline; sub(/^data: /,""); print; exit}' "$IT_TMP/t3.sse")
jq -e '.kind == "http" and .status == 401 and .permanent == true' <<<"${ev:-null}" >/dev/null ||
	t_err "no provider_error event for the 401: ${ev:-none}"
t_end

# doc URL-BASE: `sandboxd doctor --json` with every provider at URL-BASE.
doc() {
	DOC=$(/usr/bin/env -i "PATH=$PATH" "HOME=${HOME:-/root}" \
		${DOCKER_HOST:+DOCKER_HOST=$DOCKER_HOST} \
		SANDBOXD_DATA_DIR="$IT_TMP/doc-data" SANDBOXD_ENV_FILE="$IT_TMP/empty.env" \
		SANDBOXD_NETWORK="sbxit-$$-doctor" HTTP_PORT="$(free_port)" \
		SANDBOXD_API_ADDR="127.0.0.1:$(free_port)" \
		SANDBOXD_ANTHROPIC_BASE_URL="$1" SANDBOXD_OPENAI_BASE_URL="$1/v1" \
		SANDBOXD_ZEN_BASE_URL="$1/v1" \
		"$SANDBOXD_BIN" doctor --json 2>"$IT_TMP/doc.err")
	PROV=$(jq -c '.checks[] | select(.name == "provider")' <<<"$DOC" 2>/dev/null)
}
mkdir -p "$IT_TMP/doc-data"

t_begin "doctor: a provider host that refuses: fail, names the host and the setting"
doc "http://127.0.0.1:$CLOSED"
jq -e --arg h "127.0.0.1:$CLOSED" '.status == "fail" and (.message | contains($h)) and
	(.message | contains("refused the connection")) and (.fix | contains("SANDBOXD_ANTHROPIC_BASE_URL"))' \
	<<<"${PROV:-null}" >/dev/null || t_err "the provider check says: ${PROV:-<none>} $(head -c 300 "$IT_TMP/doc.err")"
[[ $(jq -r .status <<<"$DOC") == fail ]] || t_err "the report is not fail"
t_end

t_begin "doctor: a plain HTTP server behind an https URL: the TLS handshake fails"
doc "https://127.0.0.1:$PPORT"
jq -e '.status == "fail" and (.message | contains("TLS handshake"))' <<<"${PROV:-null}" >/dev/null ||
	t_err "the provider check says: ${PROV:-<none>}"
t_end

t_begin "doctor: providers that answer: ok"
doc "http://127.0.0.1:$PPORT"
jq -e '.status == "ok" and (.message | contains("3 model providers reachable"))' <<<"${PROV:-null}" >/dev/null ||
	t_err "the provider check says: ${PROV:-<none>}"
t_end

finish
