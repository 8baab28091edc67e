#!/usr/bin/env bash
# The meter fails closed.  A sandbox's proxy token works only while one
# of its tasks runs, unless its app opted in to model calls of its own
# (their own budget, counted apart); N calls sent at once under a small
# budget cannot pass it together (each reserves its estimate before it
# goes upstream); an OpenAI-compatible stream that did not ask for its
# usage is made to, and one that refuses it is charged from the bytes
# that passed; a model the price table does not name is priced at its
# provider's highest, and a family's expensive member is not priced as
# its cheap one; a background Responses call, which the meter cannot
# see, is refused while a budget applies.  The real Claude Code and
# OpenCode run their tasks through it all, counted exactly.
. "$(dirname "$0")/lib.sh"
need_docker

KEY=sk-ant-meter-$RANDOM$RANDOM$RANDOM$RANDOM
OKEY=sk-oc-meter-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
PPORT=$(free_port)
start_fake_provider --expect-key "$KEY" --expect-key "$OKEY"
touch "$PLOG"

PROXY_PORT=$(free_port)
start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "GET /v1/status shows no gateway: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT"
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200 || bail "cannot set the key: $(short_body)"
api POST /v1/agents/opencode/api-key "{\"api_key\":\"$OKEY\"}"
expect_status 200 || bail "cannot set the key: $(short_body)"

create_app meter '"runtime_preset":"static"' || bail "no app: ${T_ERRS[*]}"
create_sandbox "$APP_ID" || bail "no sandbox: ${T_ERRS[*]}"
APP=$APP_ID SB=$SB_ID C=$SB_CONTAINER

# call PATH BODY: a model call from inside the sandbox with its token,
# read to its end; prints the status, then the body on one line.
call() {
	docker exec "$C" python3 -c '
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=sys.argv[3].encode(), method="POST")
req.add_header("x-api-key", sys.argv[2])
req.add_header("content-type", "application/json")
req.add_header("anthropic-version", "2023-06-01")
try:
    r = urllib.request.urlopen(req, timeout=30)
    b = r.read()
    print(r.status)
except urllib.error.HTTPError as e:
    b = e.read()
    print(e.code)
print(b.decode(errors="replace").replace("\n", " ")[:600])
' "http://$GW:$PROXY_PORT$1" "$PTOK" "$2" 2>&1
}
status_of() { head -n 1 <<<"$1"; }

# own_spent: the app's own calls' spend ({} when it has not opted in).
own_spent() { api GET "/v1/apps/$APP" && j '.spend.own_model_calls.spent // {}'; }
app_spent() { api GET "/v1/apps/$APP" && j .spend.spent; }

t_begin "a real Claude Code task: its proxy token works while it runs, counted exactly"
TOKEN=$TOKEN submit "$SB" '{"prompt":"Create a.txt. [[provider:write=a.txt]] [[provider:usage=300,20,0,0]]","agent":"claude-code","model":"fake-model"}'
wait_task "$SB" "$TASK_ID" 120
expect_json .status succeeded
n=$(jq -s '[.[] | select(.kind == "messages")] | length' "$PLOG")
((n >= 2)) || t_err "the provider saw $n model requests"
expect_jq ".spend.input_tokens == 300*$n and .spend.output_tokens == 20*$n and .spend.requests == $n" \
	"the task's spend is exact"
# fake-model is no model the table names: Anthropic's highest prices
# ($15 in, $75 out a million): 300*15 + 20*75 = 6000 millionths a call.
expect_jq "(.spend.usd * 1000000 | round) == 6000*$n" "an unknown model is priced at the provider's highest"
T1=$TASK_ID
t_end

PTOK=$(tr '\0' '\n' <"$DATA/workspaces/$SB/.sandboxd/tasks/$T1/env" | sed -n 's/^ANTHROPIC_API_KEY=//p')
[[ $PTOK == sk_* ]] || bail "no proxy token in the task's env file"
MSG='{"model":"claude-sonnet-4-5","max_tokens":50,"messages":[{"role":"user","content":"x [[provider:usage=100,10,0,0]]"}]}'

t_begin "no task runs: the sandbox's token is refused, and no byte reaches the provider"
before=$(wc -l <"$PLOG")
out=$(call /claude-code/anthropic/v1/messages "$MSG")
[[ $(status_of "$out") == 403 ]] || t_err "a call with no task running: $out"
grep -q 'no task of this sandbox is running' <<<"$out" || t_err "the refusal does not say why: $out"
out=$(call /opencode/openai/chat/completions '{"model":"gpt-5","messages":[]}')
[[ $(status_of "$out") == 403 ]] || t_err "an OpenAI call with no task running: $out"
(($(wc -l <"$PLOG") == before)) || t_err "the provider saw a request with no task running"
note "$(tail -n 1 <<<"$out" | head -c 200)"
t_end

t_begin "the app opts in to calls of its own: allowed, counted against their own budget"
api PATCH "/v1/apps/$APP" '{"own_model_calls":{}}'
expect_status 400 && expect_jq '.error.message | test("own_model_calls")' "an empty budget is refused"
api PATCH "/v1/apps/$APP" '{"own_model_calls":{"tokens":100000000}}'
expect_status 200 && expect_jq '.spend.own_model_calls.budget.tokens == 100000000' "the opt-in is shown"
before_app=$(app_spent)
out=$(call /claude-code/anthropic/v1/messages "$MSG")
[[ $(status_of "$out") == 200 ]] || t_err "an opted-in app's own call: $out"
own=$(own_spent)
jq -e '.input_tokens == 100 and .output_tokens == 10 and .requests == 1' <<<"$own" >/dev/null ||
	t_err "the own calls' spend: $own"
jq -e -n --argjson a "$before_app" --argjson b "$(app_spent)" '$b.requests - $a.requests == 1' >/dev/null ||
	t_err "the app's total did not count its own call"
api GET "/v1/sandboxes/$SB/tasks/$T1"
expect_jq ".spend.requests == $n" "the last task was not charged for the app's own call"
t_end

t_begin "an OpenAI-compatible stream without include_usage is asked for it, and counted exactly"
before=$(own_spent)
out=$(call /opencode/openai/chat/completions \
	'{"model":"gpt-5","stream":true,"max_tokens":50,"messages":[{"role":"user","content":"x [[provider:usage=222,33,0,0]]"}]}')
[[ $(status_of "$out") == 200 ]] || t_err "a stream without include_usage: $out"
after=$(own_spent)
jq -e -n --argjson a "$before" --argjson b "$after" \
	'($b.input_tokens - $a.input_tokens) == 222 and ($b.output_tokens - $a.output_tokens) == 33' >/dev/null ||
	t_err "the stream's usage was not counted: $before -> $after"
t_end

t_begin "a stream that refuses its usage is charged from what passed"
before=$(own_spent)
BODY_NU='{"model":"gpt-5","stream":true,"stream_options":{"include_usage":false},"max_tokens":50,"messages":[{"role":"user","content":"x [[provider:usage=5000,5000,0,0]] [[provider:text=abcdefghijklmnopqrstuvwxyz]]"}]}'
out=$(call /opencode/openai/chat/completions "$BODY_NU")
[[ $(status_of "$out") == 200 ]] || t_err "a stream with include_usage false: $out"
after=$(own_spent)
# Input: the request's bytes, 3 a token; output: the 26 bytes of text.
want_in=$(((${#BODY_NU} + 2) / 3))
jq -e -n --argjson a "$before" --argjson b "$after" --argjson i "$want_in" \
	'($b.input_tokens - $a.input_tokens) == $i and ($b.output_tokens - $a.output_tokens) == 9 and ($b.requests - $a.requests) == 1' >/dev/null ||
	t_err "not charged from the bytes (want in=$want_in out=9): $before -> $after"
t_end

t_begin "prices: a family's expensive member is not priced as its cheap one; unknown at the highest"
for m in claude-opus-4 claude-opus-9-preview; do
	before=$(own_spent)
	out=$(call /claude-code/anthropic/v1/messages \
		"{\"model\":\"$m\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"x [[provider:usage=1000,100,0,0]]\"}]}")
	[[ $(status_of "$out") == 200 ]] || t_err "$m: $out"
	after=$(own_spent)
	# $15 / $75 a million: 1000*15 + 100*75 = 22500 millionths.
	jq -e -n --argjson a "$before" --argjson b "$after" '(($b.usd - $a.usd) * 1000000 | round) == 22500' >/dev/null ||
		t_err "$m was not priced at \$15/\$75: $before -> $after"
done
t_end

t_begin "a background Responses call is refused while a budget applies"
before=$(wc -l <"$PLOG")
out=$(call /opencode/openai/responses '{"model":"gpt-5","background":true,"input":"x"}')
[[ $(status_of "$out") == 403 ]] || t_err "a background call: $out"
grep -q 'background call cannot be metered' <<<"$out" || t_err "the refusal does not say why: $out"
(($(wc -l <"$PLOG") == before)) || t_err "the background call reached the provider"
t_end

t_begin "N calls at once under a small budget: at most the budget's worth pass"
# Each call: ~250 bytes (~85 tokens) + max_tokens 100 reserved; the
# provider answers after 2 s and reports 100 + 50 tokens.  A budget of
# 500 more tokens fits two reservations; without them all eight would
# pass the check before the first was counted.
base=$(own_spent | jq '.input_tokens + .output_tokens')
api PATCH "/v1/apps/$APP" "{\"own_model_calls\":{\"tokens\":$((base + 500))}}"
expect_status 200
before=$(own_spent)
out=$(docker exec "$C" python3 -c '
import sys, threading, urllib.request, urllib.error
url, tok = sys.argv[1], sys.argv[2]
body = b"{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"x [[provider:sleep=2]] [[provider:usage=100,50,0,0]]\"}]}"
codes = []
def one():
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("x-api-key", tok)
    req.add_header("content-type", "application/json")
    try:
        r = urllib.request.urlopen(req, timeout=30); r.read(); codes.append(r.status)
    except urllib.error.HTTPError as e:
        codes.append(e.code)
ts = [threading.Thread(target=one) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(" ".join(map(str, sorted(codes))))
' "http://$GW:$PROXY_PORT/claude-code/anthropic/v1/messages" "$PTOK" 2>&1)
ok=$(tr ' ' '\n' <<<"$out" | grep -c '^200$')
refused=$(tr ' ' '\n' <<<"$out" | grep -c '^403$')
((ok >= 1 && ok + refused == 8)) || t_err "the eight calls: $out"
after=$(own_spent)
spent=$(jq -n --argjson a "$before" --argjson b "$after" '($b.input_tokens + $b.output_tokens) - ($a.input_tokens + $a.output_tokens)')
((spent <= 500)) || t_err "the calls together spent $spent tokens of a 500-token budget ($ok passed)"
((spent == 150 * ok)) || t_err "$ok calls passed but $spent tokens were counted"
note "statuses: $out; $spent tokens of 500 spent"
t_end

t_begin "opting out takes the token back"
api PATCH "/v1/apps/$APP" '{"own_model_calls":null}'
expect_status 200 && expect_json .spend.own_model_calls null
out=$(call /claude-code/anthropic/v1/messages "$MSG")
[[ $(status_of "$out") == 403 ]] || t_err "a call after the opt-out: $out"
t_end

t_begin "OpenCode (the real CLI) under an app budget: its task runs and is counted exactly"
api PATCH "/v1/apps/$APP" '{"budget":{"usd":100}}'
expect_status 200
before=$(wc -l <"$PLOG")
submit "$SB" '{"prompt":"Create oc.txt. [[provider:write=oc.txt]] [[provider:usage=400,30,0,0]]","agent":"opencode","model":"openai/fake-model"}'
wait_task "$SB" "$TASK_ID" 120
expect_json .status succeeded
n=$(tail -n +"$((before + 1))" "$PLOG" | jq -s '[.[] | select(.kind == "chat")] | length')
((n >= 1)) || t_err "the provider saw no chat request"
expect_jq ".spend.input_tokens == 400*$n and .spend.output_tokens == 30*$n and .spend.requests == $n" \
	"OpenCode's task spend is exact ($n requests)"
t_end

t_begin "the CLI opts an app in and out"
out=$(SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN "$SANDBOXD_BIN" spend own-calls "$APP" --usd 2 2>&1)
api GET "/v1/apps/$APP"
expect_jq '.spend.own_model_calls.budget.usd == 2' "sandboxd spend own-calls: $out"
SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$TOKEN "$SANDBOXD_BIN" spend own-calls "$APP" --none >/dev/null 2>&1
api GET "/v1/apps/$APP"
expect_json .spend.own_model_calls null
t_end

finish
