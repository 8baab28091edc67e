#!/usr/bin/env bash
# Claude subscription sign-in (OAuth with PKCE) against a scripted fake
# token endpoint (tests/fake-provider/oauth.py): start answers the
# authorize URL with its parameters in the provider's exact order; finish
# with "code#state" exchanges the code (the endpoint gets a verifier whose
# S256 is the URL's challenge) and connects; wrong, unknown, reused and
# missing states are refused; the tokens are sealed (not in the data dir,
# the logs or GET /v1/agents); a real Claude Code task reaches the fake
# provider with "Authorization: Bearer <access token>" and the OAuth beta
# flag; the refresher (1 s here) renews a token expiring within 15 min and
# the next task uses the new one, keeps the refresh token when none comes
# back, retries failures and turns invalid_grant into needs_login; an API
# key and a login replace each other.
#
# The fakes listen on 127.0.0.1 (only the daemon and its proxy, on the
# host, talk to them); the proxy's address is the sandbox network's
# gateway from GET /v1/status.
. "$(dirname "$0")/lib.sh"
need_docker

rand_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

CODE=code-$(rand_hex 16)
TOKENS=()
for i in {1..12}; do TOKENS+=("sk-ant-oat01-it$i-$(rand_hex 16)"); done
OLOG=$IT_TMP/oauth.log
PLOG=$IT_TMP/provider.log
OPORT=$(free_port)
PPORT=$(free_port)

args=()
for t in "${TOKENS[@]}"; do args+=(--access-token "$t"); done
python3 "$IT_ROOT/tests/fake-provider/oauth.py" --port "$OPORT" --log "$OLOG" \
	--code "$CODE" "${args[@]}" >"$IT_TMP/oauth.out" 2>&1 &
OAUTH_PID=$!
args=()
for t in "${TOKENS[@]}"; do args+=(--expect-key "$t"); done
python3 "$IT_ROOT/tests/fake-provider/provider.py" --port "$PPORT" --bind 127.0.0.1 \
	--log "$PLOG" "${args[@]}" >"$IT_TMP/provider.out" 2>&1 &
PROV_PID=$!
kill_fakes() { kill "$OAUTH_PID" "$PROV_PID" 2>/dev/null; }
IT_CLEANUP_HOOKS+=(kill_fakes)
wait_until 10 grep -q listening "$IT_TMP/oauth.out" ||
	bail "the fake token endpoint did not start: $(cat "$IT_TMP/oauth.out")"
wait_until 10 grep -q listening "$IT_TMP/provider.out" ||
	bail "the fake provider did not start: $(cat "$IT_TMP/provider.out")"

PROXY_PORT=$(free_port)
AUTHORIZE=https://claude.example/cai/oauth/authorize
start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_CLAUDE_AUTHORIZE_URL="$AUTHORIZE" \
	SANDBOXD_CLAUDE_TOKEN_URL="http://127.0.0.1:$OPORT/v1/oauth/token" \
	SANDBOXD_OAUTH_REFRESH_INTERVAL_SECONDS=1 ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "GET /v1/status shows no gateway for the sandbox network: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT"

# script JSON: changes the fake token endpoint's behaviour.
script() {
	curl -s -o /dev/null -XPOST "http://127.0.0.1:$OPORT/_script" -d "$1"
}
# grants [GRANT]: the token endpoint's requests (of that grant type).
grants() { jq -c --arg g "${1:-}" 'select(.path | endswith("/oauth/token")) | select($g == "" or .body.grant_type == $g)' "$OLOG"; }
ngrants() { grants "$@" | wc -l; }
# uses TOKEN N: the refresh token TOKEN went out in at least N refreshes.
uses() { (($(grants refresh_token | grep -cF -- "$1") >= $2)); }
at_least() { (($(ngrants refresh_token) >= $1)); } # N refreshes in all
status_is() { api GET /v1/agents && [[ $(agent .status) == "$1" ]]; }
# Starts a sign-in: URL, CHALLENGE and STATE.
oauth_start() {
	URL= CHALLENGE= STATE=
	api POST /v1/agents/claude-code/oauth/start
	expect_status 200 || return 1
	URL=$(j .authorize_url)
	STATE=$(j .state)
	CHALLENGE=$(sed -nE 's/.*&code_challenge=([^&]*)&.*/\1/p' <<<"$URL")
}
# Signs in start to finish: ACCESS and REFRESH are what was issued.
sign_in() {
	oauth_start || return 1
	api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#$STATE\"}"
	expect_status 200 || return 1
	ACCESS=$(grants authorization_code | tail -n 1 | jq -r .issued.access_token)
	REFRESH=$(grants authorization_code | tail -n 1 | jq -r .issued.refresh_token)
}
s256() { python3 -c 'import sys,hashlib,base64; print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode().rstrip("="))' "$1"; }
agent() { jq -r ".agents[] | select(.id==\"claude-code\") | $1" <<<"$BODY"; }

# claude_task SB NAME: a real Claude Code task that writes NAME; the
# provider's /v1/messages requests it caused are in MSGS (JSON lines).
claude_task() {
	local before
	before=$(wc -l <"$PLOG")
	submit "$1" "{\"prompt\":\"Create $2. [[provider:write=$2]]\",\"agent\":\"claude-code\",\"model\":\"fake-model\"}" || return 1
	wait_task "$1" "$TASK_ID" 120
	expect_json .status succeeded || { note "$(j .error_message)"; return 1; }
	MSGS=$(tail -n +"$((before + 1))" "$PLOG" | jq -c 'select(.path | startswith("/v1/messages"))')
	[[ -n $MSGS ]] || t_err "the provider saw no /v1/messages request"
}
# bearer_only TOKEN: every request in MSGS carried exactly that bearer
# token, no x-api-key, and anthropic-beta with the OAuth flag once.
bearer_only() {
	jq -e -s --arg a "Bearer $1" 'length > 0 and all(.headers.authorization == $a and (.headers | has("x-api-key") | not))' <<<"$MSGS" >/dev/null ||
		t_err "not every request carried 'Authorization: Bearer' with the expected token (and no x-api-key): $(jq -c '.headers | {authorization, "x-api-key"}' <<<"$MSGS" | sort | uniq -c | head -n 3)"
	jq -e -s 'all(.headers["anthropic-beta"] // "" | split(",") | (index("oauth-2025-04-20") != null) and (length == (unique | length)))' <<<"$MSGS" >/dev/null ||
		t_err "anthropic-beta lacks oauth-2025-04-20 or repeats a flag: $(jq -r '.headers["anthropic-beta"]' <<<"$MSGS" | sort -u | head -n 3)"
}

t_begin "GET /v1/agents: Claude Code supports the subscription sign-in, OpenCode does not"
api GET /v1/agents
expect_status 200 && expect_json '.agents[] | select(.id=="claude-code") | .supports_oauth' true &&
	expect_json '.agents[] | select(.id=="opencode") | .supports_oauth' false &&
	expect_json '.agents[] | select(.id=="claude-code") | .status' not_connected
t_end

t_begin "start: the authorize URL has its parameters in the provider's exact order"
oauth_start
re="^$AUTHORIZE\\?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code"
re+="&redirect_uri=https%3A%2F%2Fplatform\\.claude\\.com%2Foauth%2Fcode%2Fcallback&scope=user%3Ainference"
re+="&code_challenge=[A-Za-z0-9_-]{43}&code_challenge_method=S256&state=[A-Za-z0-9_-]{43}$"
[[ $URL =~ $re ]] || t_err "authorize_url: $URL"
[[ $URL == *"&state=$STATE" ]] || t_err "the URL's state is not .state ($STATE)"
FIRST_STATE=$STATE
oauth_start
[[ $STATE != "$FIRST_STATE" ]] || t_err "two starts gave the same state"
t_end

t_begin "OpenCode has no sign-in; an unknown agent is 404"
api POST /v1/agents/opencode/oauth/start
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/codex/oauth/start
expect_status 404 && expect_envelope not_found
api GET /v1/agents/claude-code/oauth/start
expect_status 405
t_end

t_begin "finish: wrong, unknown and ambiguous states and bad codes are 400; the endpoint is not called"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#$(rand_hex 22)\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#${STATE:0:42}x\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE\",\"state\":\"nope\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#$STATE\",\"state\":\"$FIRST_STATE\"}"
expect_status 400 && expect_envelope invalid_request
# Two sign-ins are pending: a code without its state cannot pick one.
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE\"}"
expect_status 400 && expect_envelope invalid_request && expect_jq '.error.message | test("2 sign-ins")'
api POST /v1/agents/claude-code/oauth/finish '{"code":""}'
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"a b#$STATE\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish '{}'
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "code=$CODE"
expect_status 400 && expect_envelope invalid_request
grep -qF -- "$CODE" "$BODY_FILE" && t_err "an error repeats the code"
(($(ngrants) == 0)) || t_err "the token endpoint was called $(ngrants) times"
t_end

t_begin "finish with code#state connects; the endpoint got the PKCE verifier of the URL's challenge"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#$STATE\"}"
expect_status 200 && expect_json .method oauth && expect_json .provider claude-code &&
	expect_json .status connected && expect_jq '.expires_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' 'an RFC 3339 expires_at'
ACCESS=$(grants | tail -n 1 | jq -r .issued.access_token)
REFRESH=$(grants | tail -n 1 | jq -r .issued.refresh_token)
req=$(grants | tail -n 1)
jq -e --arg c "$CODE" --arg s "$STATE" '.body | .grant_type == "authorization_code" and .code == $c and .state == $s and .client_id == "9d1c250a-e61b-44d9-88ed-5944d1962f5e" and .redirect_uri == "https://platform.claude.com/oauth/code/callback" and (.code_verifier | test("^[A-Za-z0-9_-]{43}$"))' <<<"$req" >/dev/null ||
	t_err "the token request: $(jq -c '.body | del(.code_verifier)' <<<"$req")"
jq -e '.headers["content-type"] | startswith("application/json")' <<<"$req" >/dev/null || t_err "the token request is not JSON"
[[ $(s256 "$(jq -r .body.code_verifier <<<"$req")") == "$CHALLENGE" ]] ||
	t_err "S256(code_verifier) is not the authorize URL's code_challenge"
api GET /v1/agents
exp=$(agent .expires_at)
expect_json '.agents[] | select(.id=="claude-code") | .status' connected &&
	expect_json '.agents[] | select(.id=="claude-code") | .method' oauth &&
	expect_jq '.agents[] | select(.id=="claude-code") | has("key_hint") | not' 'no key_hint'
left=$(($(date -d "$exp" +%s) - $(date +%s)))
((left > 3500 && left <= 3600)) || t_err "expires_at $exp is not an hour from now"
t_end

t_begin "a state is single-use; the one pending sign-in is used when the code has no state"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#$STATE\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE\"}"
expect_status 200 && expect_json .status connected
jq -e --arg s "$FIRST_STATE" '.body.state == $s' <<<"$(grants | tail -n 1)" >/dev/null ||
	t_err "the token request did not carry the pending sign-in's state"
ACCESS=$(grants | tail -n 1 | jq -r .issued.access_token)
REFRESH=$(grants | tail -n 1 | jq -r .issued.refresh_token)
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE\"}"
expect_status 400 && expect_jq '.error.message | test("0 sign-ins")'
t_end

t_begin "at most 4 sign-ins of a scope pend; the endpoint's refusal is a 502 that does not repeat the code"
script '{"code":"error"}'
states=()
for i in {1..5}; do
	oauth_start
	states+=("$STATE")
done
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#${states[0]}\"}"
expect_status 400 && expect_jq '.error.message | test("unknown or expired state")' "the oldest sign-in was pushed out"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$CODE#${states[1]}\"}"
expect_status 502 && expect_envelope oauth_failed && expect_jq '.error.message | test("HTTP 400")'
grep -qF -- "$CODE" "$BODY_FILE" && t_err "the 502 repeats the code: $(short_body)"
grep -qF -- "$CODE" "$DAEMON_ERR" && t_err "the log repeats the code"
script '{"code":"ok"}'
api GET /v1/agents
[[ $(agent .status) == connected ]] || t_err "a refused sign-in changed the login"
t_end

create_app oauth '"runtime_preset":"static"'
create_sandbox "$APP_ID"
SB=$SB_ID

t_begin "Claude Code (the real CLI) reaches the provider with the Bearer token and the OAuth beta flag"
claude_task "$SB" one.txt && bearer_only "$ACCESS"
jq -e -s 'any(.headers["anthropic-beta"] // "" | split(",") | length > 1)' <<<"$MSGS" >/dev/null ||
	t_err "the CLI's own anthropic-beta flags were not kept"
note "anthropic-beta: $(jq -r '.headers["anthropic-beta"]' <<<"$MSGS" | sort -u | head -n 1)"
[[ -f $DATA/workspaces/$SB/workspace/app/one.txt ]] || t_err "one.txt is not in the workspace"
t_end

t_begin "refresh: a token expiring within 15 min is renewed and the next task uses the new one"
script '{"expires_in":600,"refresh_expires_in":3600}'
sign_in
OLD=$ACCESS
wait_until 10 uses "$REFRESH" 1 || t_err "no refresh with the login's refresh token"
req=$(grants refresh_token | tail -n 1)
jq -e --arg r "$REFRESH" '.body == {"grant_type":"refresh_token","refresh_token":$r,"client_id":"9d1c250a-e61b-44d9-88ed-5944d1962f5e"}' <<<"$req" >/dev/null ||
	t_err "the refresh request: $(jq -c '.body | keys' <<<"$req")"
ACCESS=$(jq -r .issued.access_token <<<"$req")
[[ -n $ACCESS && $ACCESS != "$OLD" ]] || t_err "no new access token"
sleep 1.5
api GET /v1/agents
left=$(($(date -d "$(agent .expires_at)" +%s) - $(date +%s)))
((left > 3000)) || t_err "expires_at is $left s away after the refresh"
(($(ngrants refresh_token) == 1)) || t_err "$(ngrants refresh_token) refreshes for one token expiring soon"
claude_task "$SB" two.txt && bearer_only "$ACCESS"
t_end

t_begin "refresh: an answer without a refresh token keeps the old one"
script '{"expires_in":600,"refresh_expires_in":600,"rotate":false}'
sign_in
wait_until 10 uses "$REFRESH" 3 ||
	t_err "the kept refresh token was not used again: $(grants refresh_token | grep -cF -- "$REFRESH") uses"
t_end

t_begin "refresh: a failure is logged without secrets and retried"
script '{"refresh":"error"}'
n=$(ngrants refresh_token)
wait_until 10 at_least $((n + 2)) || t_err "no retries after a 500"
grep -q "refresh failed: HTTP 500" "$DAEMON_ERR" || t_err "the failure is not logged"
api GET /v1/agents
[[ $(agent .status) == connected ]] || t_err "status after a failed refresh: $(agent .status)"
t_end

t_begin "refresh: invalid_grant means the login needs a new sign-in"
script '{"refresh":"invalid_grant"}'
wait_until 10 status_is needs_login || t_err "no needs_login"
[[ $(agent .status) == needs_login && $(agent .method) == oauth ]] || t_err "agent: $(agent .)"
grep -q "invalid_grant" "$DAEMON_ERR" || t_err "the refusal is not logged"
n=$(ngrants refresh_token)
sleep 2.5
(($(ngrants refresh_token) == n)) || t_err "the refresher kept asking after invalid_grant"
script '{"refresh":"ok","expires_in":3600,"rotate":true}'
sign_in
api GET /v1/agents
[[ $(agent .status) == connected ]] || t_err "a new sign-in did not clear needs_login"
t_end

t_begin "an API key replaces the login, and a login replaces the key"
api POST /v1/agents/claude-code/api-key '{"api_key":"sk-ant-it-key-0123456789"}'
expect_status 200
api GET /v1/agents
[[ $(agent .method) == api_key && $(agent .expires_at) == null ]] || t_err "after the key: $(agent .)"
sign_in
api GET /v1/agents
[[ $(agent .method) == oauth && $(agent .key_hint) == null ]] || t_err "after the login: $(agent .)"
api POST /v1/agents/claude-code/disconnect
expect_status 204
api GET /v1/agents
[[ $(agent .status) == not_connected ]] || t_err "after disconnect: $(agent .)"
t_end

t_begin "the tokens, codes and verifiers are nowhere in plain text"
mapfile -t secrets < <(jq -r '(.issued // {} | .access_token, .refresh_token), (.body.code_verifier // empty) | select(. != null)' "$OLOG" | sort -u)
secrets+=("$CODE")
((${#secrets[@]} > 10)) || t_err "only ${#secrets[@]} secrets to look for"
for s in "${secrets[@]}"; do
	[[ -n $s ]] || continue
	grep -rqaF -- "$s" "$DATA" && t_err "under the data dir: ${s:0:16}…: $(grep -rlaF -- "$s" "$DATA" | head -n 3)"
	grep -qaF -- "$s" "$DAEMON_ERR" "$DAEMON_OUT" && t_err "in the daemon's output: ${s:0:16}…"
	docker exec "$SB_CONTAINER" sh -c 'cat /proc/[0-9]*/environ 2>/dev/null' | tr '\0' '\n' | grep -qF -- "$s" &&
		t_err "in a sandbox process's environment: ${s:0:16}…"
done
api GET /v1/agents
for s in "${secrets[@]}"; do grep -qaF -- "$s" "$BODY_FILE" && t_err "GET /v1/agents shows ${s:0:16}…"; done
t_end

finish
