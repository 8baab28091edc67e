#!/usr/bin/env bash
# Spend caps at the credential proxy.  The fake provider reports the
# usage each prompt names ([[provider:usage=IN,OUT,CW,CR]]); the proxy
# counts it as the answers stream through, per task, app and tenant, and
# the counts must be exact: streamed and not, Anthropic Messages and the
# OpenAI-compatible shape, and a stream cut off midway (input from
# message_start, output estimated from the deltas received).  Budgets: a
# budget crossed during a task of the REAL Claude Code ends it within
# seconds with failure_reason budget_reached; raising it lets the next
# task run; one tenant's budget and counts leave another's alone; a
# restart (and a kill -9) keeps the counts.
. "$(dirname "$0")/lib.sh"
need_docker

KEY=sk-ant-spend-$RANDOM$RANDOM$RANDOM$RANDOM
OKEY=sk-oc-spend-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
PPORT=$(free_port)
start_fake_provider --expect-key "$KEY" --expect-key "$OKEY"
touch "$PLOG"

TA=sk_$(head -c 24 /dev/urandom | xxd -p)
TB=sk_$(head -c 24 /dev/urandom | xxd -p)
TO=sk_$(head -c 24 /dev/urandom | xxd -p)
PROXY_PORT=$(free_port)
DAEMON_ARGS=(SANDBOXD_API_TOKENS="a=$TA,b=$TB,ops=$TO" SANDBOXD_OPERATORS=ops
	SANDBOXD_PROXY_PORT="$PROXY_PORT"
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT"
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1")
start_daemon "${DAEMON_ARGS[@]}" || bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=$TO
daemon_gateway || bail "GET /v1/status shows no gateway: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT"

# The instance's keys serve both tenants.
api POST "/v1/agents/claude-code/api-key?scope=instance" "{\"api_key\":\"$KEY\"}"
expect_status 200 || bail "cannot set the instance key: $(short_body)"
api POST "/v1/agents/opencode/api-key?scope=instance" "{\"api_key\":\"$OKEY\"}"
expect_status 200 || bail "cannot set the instance key: $(short_body)"

create_in() { TOKEN=$1 create_app "$2" '"runtime_preset":"static"' && TOKEN=$1 create_sandbox "$APP_ID"; }
create_in "$TA" spend-a || bail "no sandbox for a: ${T_ERRS[*]}"
APPA=$APP_ID SBA=$SB_ID CA=$SB_CONTAINER
create_in "$TB" spend-b || bail "no sandbox for b: ${T_ERRS[*]}"
APPB=$APP_ID SBB=$SB_ID

# run_task TOKEN SB PROMPT: a Claude Code task, waited for (BODY = it);
# NREQ = the model requests the provider saw during it.
run_task() {
	local before
	before=$(wc -l <"$PLOG")
	TOKEN=$1 submit "$2" "{\"prompt\":\"$3\",\"agent\":\"claude-code\",\"model\":\"fake-model\"}" || return 1
	TOKEN=$1 wait_task "$2" "$TASK_ID" 120
	NREQ=$(tail -n +"$((before + 1))" "$PLOG" | jq -s '[.[] | select(.kind == "messages")] | length')
}

# spent TOKEN [QUERY]: the tenant's spend object (GET /v1/spend).
spent() { api_as "$1" GET "/v1/spend${2:-}" && j .spent; }

# From inside a sandbox, a model call to the proxy with the sandbox's
# token; the answer is read to its end (or to where it was cut off).
# Prints the status.
proxy_call() { # CONTAINER PATH BODY
	docker exec "$1" python3 -c '
import sys, urllib.request, urllib.error, http.client
req = urllib.request.Request(sys.argv[1], data=sys.argv[3].encode(), method="POST")
req.add_header("x-api-key", sys.argv[2])
req.add_header("content-type", "application/json")
req.add_header("anthropic-version", "2023-06-01")
try:
    r = urllib.request.urlopen(req, timeout=20)
    try:
        r.read()
    except (http.client.IncompleteRead, ConnectionError):
        pass
    print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
' "http://$GW:$PROXY_PORT$2" "$PTOK" "$3" 2>&1
}

# expect_delta BEFORE AFTER IN OUT CW CR REQS: the spend grew by exactly that.
expect_delta() {
	jq -e -n --argjson a "$1" --argjson b "$2" --argjson i "$3" --argjson o "$4" \
		--argjson w "$5" --argjson r "$6" --argjson q "$7" \
		'($b.input_tokens - $a.input_tokens) == $i and ($b.output_tokens - $a.output_tokens) == $o and
		 ($b.cache_write_tokens - $a.cache_write_tokens) == $w and ($b.cache_read_tokens - $a.cache_read_tokens) == $r and
		 ($b.requests - $a.requests) == $q' >/dev/null ||
		t_err "spend grew from $1 to $2, not by in=$3 out=$4 cw=$5 cr=$6 requests=$7"
}

t_begin "a real Claude Code task: its answers are counted exactly, per task, app and tenant"
run_task "$TA" "$SBA" "Create a.txt. [[provider:write=a.txt]] [[provider:usage=1000,50,10,20]]"
expect_json .status succeeded
T1=$TASK_ID
((NREQ >= 2)) || t_err "the provider saw $NREQ model requests"
# fake-model is no model the table names: Anthropic's highest prices
# ($15 / $75 / $18.75 / $1.50 a million):
# 1000*15 + 50*75 + 10*18.75 + 20*1.5 = 18967.5 -> 18968 millionths an answer.
expect_jq ".spend.input_tokens == 1000*$NREQ and .spend.output_tokens == 50*$NREQ and
	.spend.cache_write_tokens == 10*$NREQ and .spend.cache_read_tokens == 20*$NREQ and
	.spend.requests == $NREQ and .spend.tokens == 1080*$NREQ" "the task's spend is exact"
expect_jq "(.spend.usd * 1000000 | round) == 18968*$NREQ" "the task's cost is 18968 millionths an answer"
TASK_SPEND=$(j .spend)
api_as "$TA" GET "/v1/apps/$APPA"
[[ $(j .spend.spent) == "$TASK_SPEND" ]] || t_err "the app's spend is not the task's: $(j .spend)"
[[ $(spent "$TA") == "$TASK_SPEND" ]] || t_err "the tenant's spend is not the task's: $(j .spent)"
[[ $(spent "$TB" | jq .tokens) == 0 ]] || t_err "tenant b was charged: $(j .spent)"
t_end

PTOK=$(tr '\0' '\n' <"$DATA/workspaces/$SBA/.sandboxd/tasks/$T1/env" | sed -n 's/^ANTHROPIC_API_KEY=//p')
[[ $PTOK == sk_* ]] || bail "no proxy token in the task's env file"
# The calls below are made between tasks: the app's own (77-meter-closed).
api_as "$TA" PATCH "/v1/apps/$APPA" '{"own_model_calls":{"usd":1000}}'
expect_status 200 || bail "cannot opt app a in to calls of its own: $(short_body)"

t_begin "Anthropic Messages, not streamed and streamed; OpenAI-compatible, not streamed and streamed"
before=$(spent "$TA")
[[ $(proxy_call "$CA" /claude-code/anthropic/v1/messages \
	'{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"user","content":"x [[provider:usage=300,40,5,7]]"}]}') == 200 ]] ||
	t_err "a plain call was not answered 200"
after=$(spent "$TA")
expect_delta "$before" "$after" 300 40 5 7 1
# claude-sonnet: 300*3 + 40*15 + 5*3.75 + 7*0.3 = 1520.85 -> 1521
jq -e -n --argjson a "$before" --argjson b "$after" '(($b.usd - $a.usd) * 1000000 | round) == 1521' >/dev/null ||
	t_err "claude-sonnet was not priced at its built-in price: $before -> $after"
before=$after
[[ $(proxy_call "$CA" /claude-code/anthropic/v1/messages \
	'{"model":"claude-sonnet-4-5","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"x [[provider:usage=1234,56,0,9]]"}]}') == 200 ]] ||
	t_err "a streamed call was not answered 200"
after=$(spent "$TA")
expect_delta "$before" "$after" 1234 56 0 9 1
before=$after
[[ $(proxy_call "$CA" /opencode/openai/chat/completions \
	'{"model":"gpt-5","messages":[{"role":"user","content":"x [[provider:usage=400,30,0,100]]"}]}') == 200 ]] ||
	t_err "an OpenAI call was not answered 200"
after=$(spent "$TA")
# prompt_tokens 500 of which 100 cached: 400 input, 100 cache reads.
expect_delta "$before" "$after" 400 30 0 100 1
before=$after
[[ $(proxy_call "$CA" /opencode/openai/chat/completions \
	'{"model":"gpt-5","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x [[provider:usage=222,33,0,0]]"}]}') == 200 ]] ||
	t_err "a streamed OpenAI call was not answered 200"
after=$(spent "$TA")
expect_delta "$before" "$after" 222 33 0 0 1
t_end

t_begin "a stream cut off midway counts what was received"
before=$(spent "$TA")
proxy_call "$CA" /claude-code/anthropic/v1/messages \
	'{"model":"claude-haiku-4-5","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"x [[provider:usage=700,999,0,0]] [[provider:cut=3]] [[provider:text=one two three four five six seven eight nine ten eleven twelve thirteen]]"}]}' >/dev/null
wait_until 5 grep -q '"cut":true' "$PLOG" || t_err "the provider did not cut the stream"
DB=$(grep '"cut":true' "$PLOG" | tail -n 1 | jq .delta_bytes)
# The output estimate: the deltas' bytes, 3 a token, rounded up.
for _ in $(seq 20); do # counted once the proxy saw the stream end
	after=$(spent "$TA")
	[[ $(jq .requests <<<"$after") != $(jq .requests <<<"$before") ]] && break
	sleep 0.25
done
expect_delta "$before" "$after" 700 $(((DB + 2) / 3)) 0 0 1
note "cut after $DB delta bytes: $before -> $after"
t_end

t_begin "an app budget crossed during a real Claude Code task ends it within seconds"
api_as "$TA" GET "/v1/apps/$APPA"
used=$(j .spend.spent.tokens)
api_as "$TA" PATCH "/v1/apps/$APPA" "{\"budget\":{\"tokens\":$((used + 5000))}}"
expect_status 200 && expect_jq ".spend.budget.tokens == $((used + 5000)) and .spend.budget_source == \"app\"" "the budget is shown"
start=$SECONDS
run_task "$TA" "$SBA" "Create b.txt and c.txt. [[provider:write=b.txt]] [[provider:write=c.txt]] [[provider:usage=100000,10,0,0]]"
took=$((SECONDS - start))
expect_json .status failed && expect_json .failure_reason budget_reached &&
	expect_jq '.error_message | test("^budget reached: app spend-a spent [0-9]+ of [0-9]+ tokens")' "the reason names the app's budget"
((took < 30)) || t_err "the task took ${took}s to end"
((NREQ <= 2)) || t_err "the provider saw $NREQ model requests after the budget was crossed"
note "ended after ${took}s, $NREQ request(s): $(j .error_message)"
t_end

# refusals: how many model calls the proxy refused for a budget so far.
refusals() { grep -c "budget reached" "$DAEMON_ERR"; }

t_begin "the next task is refused at its first model call; raising the budget lets the next one run"
start=$SECONDS
r0=$(refusals)
run_task "$TA" "$SBA" "hello [[provider:usage=10,1,0,0]]"
took=$((SECONDS - start))
expect_json .status failed && expect_json .failure_reason budget_reached
((NREQ == 0)) || t_err "a model request reached the provider over budget"
((took < 30)) || t_err "the refused task took ${took}s to end"
# The 403 is not sent again: Claude Code made one call.
tries=$(($(refusals) - r0))
((tries == 1)) || t_err "Claude Code made $tries calls the proxy refused"
note "refused after ${took}s; Claude Code's calls refused: $tries"
api_as "$TA" PATCH "/v1/apps/$APPA" '{"budget":{"tokens":100000000,"usd":1000}}'
expect_status 200
run_task "$TA" "$SBA" "Create d.txt. [[provider:write=d.txt]] [[provider:usage=10,1,0,0]]"
expect_json .status succeeded
t_end

t_begin "budgets and counts per tenant: a's tenant budget stops a, not b"
api_as "$TA" PATCH /v1/spend '{"tenant_budget":{"usd":0.01}}'
expect_status 403 && expect_json .error.code operator_only
api_as "$TA" GET "/v1/spend?tenant=b"
expect_status 403
api_as "$TO" PATCH "/v1/spend?tenant=a" '{"tenant_budget":{"usd":0.01}}'
expect_status 200 && expect_json .tenant a && expect_jq '.budget.usd == 0.01 and .budget_source == "tenant"' "a's budget"
bspent=$(spent "$TB")
run_task "$TA" "$SBA" "hello [[provider:usage=10,1,0,0]]"
expect_json .status failed && expect_json .failure_reason budget_reached &&
	expect_jq '.error_message | test("^budget reached: tenant a spent \\$[0-9.]+ of \\$0.01")' "the reason names a's tenant budget"
run_task "$TB" "$SBB" "hello [[provider:usage=77,7,0,0]]"
expect_json .status succeeded
after=$(spent "$TB")
expect_delta "$bspent" "$after" $((77 * NREQ)) $((7 * NREQ)) 0 0 "$NREQ"
api_as "$TB" GET "/v1/apps/$APPB"
[[ $(j .spend.spent) == "$after" ]] || t_err "b's app spend is not b's tenant spend: $(j .spend.spent) vs $after"
api_as "$TB" GET /v1/spend
expect_json .budget null
t_end

t_begin "OpenCode (the real CLI) under the instance default for apps: refused at once"
api_as "$TO" PATCH /v1/spend '{"default_app_budget":{"tokens":1}}'
expect_status 200 && expect_jq '.default_app_budget.tokens == 1' "the default is shown"
api_as "$TB" GET "/v1/apps/$APPB"
expect_jq '.spend.budget.tokens == 1 and .spend.budget_source == "instance"' "b's app has the instance default"
before=$(wc -l <"$PLOG")
start=$SECONDS
r0=$(refusals)
TOKEN=$TB submit "$SBB" '{"prompt":"hello [[provider:usage=5,5,0,0]]","agent":"opencode","model":"openai/fake-model"}'
TOKEN=$TB wait_task "$SBB" "$TASK_ID" 120
took=$((SECONDS - start))
tries=$(($(refusals) - r0))
# OpenCode's title request and its first model call may both be made.
((tries >= 1 && tries <= 3)) || t_err "OpenCode made $tries calls the proxy refused"
expect_json .status failed && expect_json .failure_reason budget_reached &&
	expect_jq '.error_message | test("^budget reached: app spend-b spent [0-9]+ of 1 tokens")' "the reason names b's app"
n=$(tail -n +"$((before + 1))" "$PLOG" | jq -s '[.[] | select(.kind == "chat")] | length')
((n == 0)) || t_err "OpenCode reached the provider $n times over budget"
((took < 30)) || t_err "OpenCode's task took ${took}s to end"
note "OpenCode's task ended after ${took}s, $tries call(s) refused: $(j .error_message)"
api_as "$TO" PATCH /v1/spend '{"default_app_budget":null}'
expect_status 200 && expect_json .default_app_budget null
t_end

t_begin "a restart, and a kill -9, keep the counts"
sa=$(spent "$TA")
sb=$(spent "$TB")
stop_daemon
start_daemon "${DAEMON_ARGS[@]}" || bail "the daemon did not start again: $(tail -n 5 "$DAEMON_ERR")"
[[ $(spent "$TA") == "$sa" ]] || t_err "a's spend changed over a restart: $sa -> $(j .spent)"
[[ $(spent "$TB") == "$sb" ]] || t_err "b's spend changed over a restart: $sb -> $(j .spent)"
api_as "$TA" GET /v1/spend
expect_jq '.budget.usd == 0.01' "a's budget survived"
kill9_daemon
start_daemon "${DAEMON_ARGS[@]}" || bail "the daemon did not start after kill -9: $(tail -n 5 "$DAEMON_ERR")"
[[ $(spent "$TA") == "$sa" ]] || t_err "a's spend changed over a kill -9: $sa -> $(j .spent)"
t_end

t_begin "bad budgets and prices are refused; the operator's prices apply"
api_as "$TA" PATCH "/v1/apps/$APPA" '{"budget":{"usd":-1}}'
expect_status 400
api_as "$TA" PATCH "/v1/apps/$APPA" '{"budget":{"tokenz":5}}'
expect_status 400
api_as "$TO" PATCH /v1/spend '{}'
expect_status 400
api_as "$TO" PATCH /v1/spend '{"prices":{"fake-model":{"input":"x","output":1}}}'
expect_status 400
api_as "$TO" PATCH "/v1/spend?tenant=a" '{"tenant_budget":null,"prices":{"fake-model":{"input":1,"output":2}}}'
expect_status 200 && expect_jq '.prices."fake-model".input == 1 and .budget == null' "the price is set, the budget gone"
before=$(spent "$TA")
run_task "$TA" "$SBA" "hello [[provider:usage=1000,1000,0,0]]"
expect_json .status succeeded
after=$(spent "$TA")
jq -e -n --argjson a "$before" --argjson b "$after" --argjson n "$NREQ" \
	'(($b.usd - $a.usd) * 1000000 | round) == 3000 * $n' >/dev/null ||
	t_err "the operator's price was not used: $before -> $after ($NREQ requests)"
t_end

t_begin "the CLI shows the spend"
out=$(SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TA "$SANDBOXD_BIN" spend 2>&1)
grep -q "tenant a" <<<"$out" && grep -q "spend-a" <<<"$out" || t_err "sandboxd spend: $out"
note "$(head -n 3 <<<"$out")"
t_end

finish
