#!/usr/bin/env bash
# Agent credentials and default models per tenant, with two tenants'
# tokens (a, b) and an operator's (ops, named in SANDBOXD_OPERATORS).
# A's key is A's: B does not see it as its own, cannot remove or replace
# it (B's calls act on B's own), and B's tasks never use it.  The real
# Claude Code CLI runs each task against the fake provider, which logs
# the key every request carried: A's tasks carry A's key, B's carry B's,
# then (B disconnected) nothing at all, then the instance default the
# operator set.  A non-operator's ?scope=instance is 403 operator_only.
. "$(dirname "$0")/lib.sh"
need_docker

TA=tok-a-$RANDOM$RANDOM$RANDOM
TB=tok-b-$RANDOM$RANDOM$RANDOM
TO=tok-ops-$RANDOM$RANDOM$RANDOM
KA=sk-ant-tenant-a-$RANDOM$RANDOM$RANDOM$RANDOM
KB=sk-ant-tenant-b-$RANDOM$RANDOM$RANDOM$RANDOM
KI=sk-ant-instance-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
PPORT=$(free_port)

start_fake_provider --expect-key "$KA" --expect-key "$KB" --expect-key "$KI"
touch "$PLOG"

PROXY_PORT=$(free_port)
start_daemon SANDBOXD_API_TOKENS="a=$TA,b=$TB,ops=$TO" SANDBOXD_OPERATORS=ops \
	SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=$TA
daemon_gateway || bail "GET /v1/status shows no gateway: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT"

# The claude-code entry of the last GET /v1/agents.
cc() { jq -r ".agents[] | select(.id==\"claude-code\") | $1" <<<"$BODY"; }
hint() { echo "…${1: -4}"; }

# run_task TOKEN SB -> the keys the provider saw during it, one a line, in KEYS
run_task() {
	local before
	before=$(wc -l <"$PLOG")
	TOKEN=$1 submit "$2" '{"prompt":"Create t.txt. [[provider:write=t.txt]]","agent":"claude-code","model":"fake-model"}'
	TOKEN=$1 wait_task "$2" "$TASK_ID" 120
	KEYS=$(tail -n +"$((before + 1))" "$PLOG" |
		jq -r 'select(.path | startswith("/v1/messages")) | .headers | to_entries[] | select(.key == "x-api-key") | .value' | sort -u)
}

t_begin "tenant a sets its key; b's GET /v1/agents does not show it as b's"
api_as "$TA" POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KA\"}"
expect_status 200
api_as "$TA" GET /v1/agents
expect_status 200
[[ $(cc .status) == connected && $(cc .source) == tenant && $(cc .key_hint) == "$(hint "$KA")" ]] ||
	t_err "a's own view: $(cc .)"
[[ $(j .tenant) == a && $(j .operator) == false ]] || t_err "a is not tenant a / not an operator: $(short_body)"
api_as "$TB" GET /v1/agents
expect_status 200
[[ $(cc .status) == not_connected && $(cc .source) == null && $(cc .instance_default) == false ]] ||
	t_err "b sees a credential: $(cc .)"
grep -qF "${KA: -4}" <<<"$BODY" && t_err "b's answer shows a's key hint"
t_end

t_begin "b cannot remove or replace a's key: its calls act on its own"
api_as "$TB" DELETE /v1/agents/claude-code/api-key
expect_status 204
api_as "$TB" POST /v1/agents/claude-code/disconnect
expect_status 204
api_as "$TA" GET /v1/agents
[[ $(cc .status) == connected && $(cc .key_hint) == "$(hint "$KA")" ]] || t_err "a's key is gone after b's delete: $(cc .)"
api_as "$TB" POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KB\"}"
expect_status 200
api_as "$TA" GET /v1/agents
[[ $(cc .key_hint) == "$(hint "$KA")" ]] || t_err "b's key replaced a's: $(cc .)"
api_as "$TB" GET /v1/agents
[[ $(cc .source) == tenant && $(cc .key_hint) == "$(hint "$KB")" ]] || t_err "b's own view: $(cc .)"
t_end

t_begin "a non-operator's scope=instance is 403 operator_only and changes nothing"
for tok in "$TA" "$TB"; do
	api_as "$tok" POST "/v1/agents/claude-code/api-key?scope=instance" "{\"api_key\":\"$KB\"}"
	expect_status 403 && expect_json .error.code operator_only
	api_as "$tok" POST "/v1/agents/claude-code/disconnect?scope=instance"
	expect_status 403 && expect_json .error.code operator_only
	api_as "$tok" DELETE "/v1/agents/claude-code/api-key?scope=instance"
	expect_status 403
	api_as "$tok" POST "/v1/agents/claude-code/oauth/start?scope=instance"
	expect_status 403 && expect_json .error.code operator_only
	api_as "$tok" POST "/v1/agents/claude-code/oauth/finish?scope=instance" '{"code":"x#y"}'
	expect_status 403
	api_as "$tok" PATCH "/v1/settings?scope=instance" '{"agents":{"default_models":{"claude-code":"evil-model"}}}'
	expect_status 403 && expect_json .error.code operator_only
	api_as "$tok" GET "/v1/agents?scope=instance"
	expect_status 403
done
api_as "$TA" POST "/v1/agents/claude-code/api-key?scope=everyone" "{\"api_key\":\"$KB\"}"
expect_status 400
api_as "$TO" GET /v1/settings
expect_json '.agents.instance_default_models."claude-code"' null
api_as "$TO" GET "/v1/agents?scope=instance"
expect_status 200
[[ $(cc .status) == not_connected ]] || t_err "an instance credential appeared: $(cc .)"
t_end

create_app_as() { TOKEN=$1 create_app "$2" '"runtime_preset":"static"' && TOKEN=$1 create_sandbox "$APP_ID"; }
create_app_as "$TA" tenant-a || bail "no sandbox for a: ${T_ERRS[*]}"
SBA=$SB_ID
create_app_as "$TB" tenant-b || bail "no sandbox for b: ${T_ERRS[*]}"
SBB=$SB_ID

t_begin "a's task uses a's key, b's task b's"
run_task "$TA" "$SBA"
expect_json .status succeeded
[[ $KEYS == "$KA" ]] || t_err "a's task carried: ${KEYS:-nothing}"
run_task "$TB" "$SBB"
expect_json .status succeeded
[[ $KEYS == "$KB" ]] || t_err "b's task carried: ${KEYS:-nothing}"
t_end

t_begin "b without a key and no instance default: its task fails, a's key is not used"
api_as "$TB" POST /v1/agents/claude-code/disconnect
expect_status 204
api_as "$TB" GET /v1/agents
[[ $(cc .status) == not_connected ]] || t_err "b still connected: $(cc .)"
start=$SECONDS
run_task "$TB" "$SBB"
expect_json .status failed && expect_jq '.error_message | test("not connected")' 'the error says the agent is not connected'
((SECONDS - start < 60)) || t_err "the keyless task took $((SECONDS - start))s to fail"
[[ -z $KEYS ]] || t_err "b's keyless task reached the provider with: $KEYS"
note "failed after $((SECONDS - start))s: $(j .error_message | head -c 200)"
t_end

t_begin "the operator's instance default serves b (no key of its own), never a"
api_as "$TO" POST "/v1/agents/claude-code/api-key?scope=instance" "{\"api_key\":\"$KI\"}"
expect_status 200
api_as "$TO" PATCH "/v1/settings?scope=instance" '{"agents":{"default_models":{"claude-code":"fake-instance-model"}}}'
expect_status 200 && expect_json '.agents.instance_default_models."claude-code"' fake-instance-model
api_as "$TB" GET /v1/agents
[[ $(cc .status) == connected && $(cc .source) == instance && $(cc .instance_default) == true ]] ||
	t_err "b's view of the instance default: $(cc .)"
[[ $(cc .key_hint) == null ]] || t_err "a non-operator sees the instance key's hint: $(cc .key_hint)"
[[ $(cc .default_model) == fake-instance-model && $(cc .default_model_source) == instance ]] ||
	t_err "b's default model: $(cc .)"
api_as "$TA" GET /v1/agents
[[ $(cc .source) == tenant && $(cc .key_hint) == "$(hint "$KA")" ]] || t_err "a's view changed: $(cc .)"
run_task "$TB" "$SBB"
expect_json .status succeeded
[[ $KEYS == "$KI" ]] || t_err "b's task carried: ${KEYS:-nothing}"
run_task "$TA" "$SBA"
expect_json .status succeeded
[[ $KEYS == "$KA" ]] || t_err "a's task carried: ${KEYS:-nothing}"
t_end

t_begin "default models: a tenant's own wins for it alone; the instance's is the fallback"
api_as "$TA" PATCH /v1/settings '{"agents":{"default_models":{"claude-code":"fake-a-model"}}}'
expect_status 200 && expect_json '.agents.default_models."claude-code"' fake-a-model &&
	expect_json '.agents.instance_default_models."claude-code"' fake-instance-model
api_as "$TB" GET /v1/settings
expect_json '.agents.default_models."claude-code"' fake-instance-model &&
	expect_json '.agents.tenant_default_models."claude-code"' null
api_as "$TA" POST /v1/sandboxes/"$SBA"/tasks '{"prompt":"Say hi.","agent":"claude-code"}'
expect_status 202 && expect_json .model fake-a-model
TOKEN=$TA wait_task "$SBA" "$(j .id)" 120
api_as "$TB" POST /v1/sandboxes/"$SBB"/tasks '{"prompt":"Say hi.","agent":"claude-code"}'
expect_status 202 && expect_json .model fake-instance-model
TOKEN=$TB wait_task "$SBB" "$(j .id)" 120
t_end

t_begin "a's delete leaves b's and the instance's alone; a falls back to the instance default"
api_as "$TA" DELETE /v1/agents/claude-code/api-key
expect_status 204
api_as "$TA" GET /v1/agents
[[ $(cc .source) == instance ]] || t_err "a after delete: $(cc .)"
api_as "$TO" GET "/v1/agents?scope=instance"
[[ $(cc .status) == connected && $(cc .key_hint) == "$(hint "$KI")" ]] || t_err "the instance key after a's delete: $(cc .)"
for k in "$KA" "$KB" "$KI"; do
	grep -qF "$k" "$DAEMON_ERR" "$DAEMON_OUT" && t_err "a key is in the daemon's logs"
done
t_end

finish
