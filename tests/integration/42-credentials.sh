#!/usr/bin/env bash
# Credentials and settings: the seeds' api-key command connects an agent;
# the key never comes back (not in GET /v1/agents, the logs or anywhere
# under the data dir in plain text); disconnect; default models in
# settings; app config with write-only sensitive values, tenant-scoped;
# `sandboxd secrets rotate` (daemon stopped; refused while it runs) and
# `secrets check`; a corrupt or missing secret.key and a bad
# SANDBOXD_SECRETS_KEY stop the daemon with a clear message and change
# nothing; bad input to every endpoint is a 400 envelope.  No Docker
# needed.
. "$(dirname "$0")/lib.sh"

OTHER=tok-other-tenant
TOKENS="it=$IT_TOKEN,other=$OTHER"
start_daemon SANDBOXD_API_TOKENS="$TOKENS" ||
	bail "the daemon did not come up (exit ${DAEMON_RC:-none}): $(head -c 300 "$DAEMON_ERR")"

rand_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
KEY=sk-ant-it-$(rand_hex 24)     # what we connect; must never come back
SECRET=pw-$(rand_hex 16)         # a sensitive app config value
KEY_MID=${KEY:10:24}             # a piece without the well-known prefix

# cli ARGS…: build/sandboxd on the current data dir, the daemon's settings
# and CLI_ENV (VAR=value…); output in CLI_OUT, status in CLI_RC.
CLI_ENV=()
cli() {
	CLI_OUT=$(env -i PATH="$PATH" HOME="${HOME:-/root}" SANDBOXD_DATA_DIR="$DATA" \
		SANDBOXD_ENV_FILE="$IT_TMP/empty.env" "${CLI_ENV[@]}" "$SANDBOXD_BIN" "$@" 2>&1)
	CLI_RC=$?
}

# nowhere WHAT: the key and the secret are in no log and in no file under
# the data dir (the database, its WAL and everything else), in plain text.
nowhere() {
	local s
	for s in "$KEY" "$KEY_MID" "$SECRET"; do
		if grep -rqaF -- "$s" "$DATA"; then
			t_err "$1: plain text found under the data dir: $(grep -rlaF -- "$s" "$DATA" | head -3)"
		fi
		if grep -qaF -- "$s" "$IT_TMP"/daemon.*.out "$IT_TMP"/daemon.*.err 2>/dev/null; then
			t_err "$1: plain text found in the daemon's output"
		fi
	done
}

# --- agents -------------------------------------------------------------------

t_begin "the seeds' api-key command connects claude-code"
export API=$API_URL
export SANDBOXD_TOKEN=$TOKEN
export AUTH="Authorization: Bearer $SANDBOXD_TOKEN"
out=$(curl -s -XPOST $API/v1/agents/claude-code/api-key -H "$AUTH" \
  -H 'content-type: application/json' \
  -d '{"api_key":"sk-ant-..."}')
[[ $out == '{"method":"api_key","provider":"claude-code","status":"connected"}' ]] ||
	t_err "the seeds' command answered: ${out:-<nothing>}"
api GET /v1/agents
expect_status 200 &&
	expect_json '.agents[] | select(.id=="claude-code") | .status' connected &&
	expect_json '.agents[] | select(.id=="claude-code") | .method' api_key &&
	expect_json '.agents[] | select(.id=="opencode") | .status' not_connected
t_end

t_begin "a key is connected and never shown back"
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200 && expect_json .status connected && expect_json .provider claude-code
grep -qF -- "$KEY_MID" "$BODY_FILE" && t_err "the answer to POST contains the key"
api GET /v1/agents
expect_status 200
grep -qaF -- "$KEY_MID" "$BODY_FILE" && t_err "GET /v1/agents contains the key"
grep -qaF -- "${KEY:0:14}" "$BODY_FILE" && t_err "GET /v1/agents contains the key's start"
expect_json '.agents[] | select(.id=="claude-code") | .key_hint' "…${KEY: -4}"
expect_json '[.agents[].id] | join(",")' opencode,claude-code
expect_json '.agents[] | select(.id=="opencode") | .free_model' opencode/big-pickle
expect_json '.agents[] | select(.id=="opencode") | .method' null
expect_jq '.agents | all(.supports_api_key == true and (.supports_oauth | type == "boolean"))'
nowhere "after connecting"
t_end

t_begin "another tenant does not see the connection (credentials are per tenant), nor the key"
api_as "$OTHER" GET /v1/agents
expect_status 200 && expect_json '.agents[] | select(.id=="claude-code") | .status' not_connected
grep -qaF -- "$KEY_MID" "$BODY_FILE" && t_err "the other tenant's GET contains the key"
t_end

# bad_req NAME STATUS CODE METHOD PATH [BODY]: an error envelope, which never
# repeats the key that was sent.
bad_req() {
	local name=$1 st=$2 code=$3
	shift 3
	t_begin "$name"
	api "$@"
	expect_status "$st" && expect_envelope "$code"
	grep -qaF -- "$KEY_MID" "$BODY_FILE" && t_err "the error repeats the key"
	t_end
}
LONG=$(printf 'k%.0s' {1..4097})
bad_req "api-key: unknown agent is 404" 404 not_found POST /v1/agents/codex/api-key "{\"api_key\":\"$KEY\"}"
bad_req "api-key: missing api_key is 400" 400 invalid_request POST /v1/agents/opencode/api-key '{}'
bad_req "api-key: a number is 400" 400 invalid_request POST /v1/agents/opencode/api-key '{"api_key":42}'
bad_req "api-key: empty is 400" 400 invalid_request POST /v1/agents/opencode/api-key '{"api_key":""}'
bad_req "api-key: a space is 400" 400 invalid_request POST /v1/agents/opencode/api-key "{\"api_key\":\"$KEY_MID x\"}"
bad_req "api-key: a newline is 400" 400 invalid_request POST /v1/agents/opencode/api-key "{\"api_key\":\"$KEY_MID\\n\"}"
bad_req "api-key: non-ASCII is 400" 400 invalid_request POST /v1/agents/opencode/api-key '{"api_key":"sk-é"}'
bad_req "api-key: over 4 KiB is 400" 400 invalid_request POST /v1/agents/opencode/api-key "{\"api_key\":\"$LONG\"}"
bad_req "api-key: not JSON is 400" 400 invalid_request POST /v1/agents/opencode/api-key "api_key=$KEY"
bad_req "api-key: an array is 400" 400 invalid_request POST /v1/agents/opencode/api-key "[\"$KEY\"]"
bad_req "api-key: no body is 400" 400 invalid_request POST /v1/agents/opencode/api-key
bad_req "DELETE api-key: unknown agent is 404" 404 not_found DELETE /v1/agents/nope/api-key
bad_req "disconnect: unknown agent is 404" 404 not_found POST /v1/agents/nope/disconnect
bad_req "GET an agent's api-key is 405" 405 method_not_allowed GET /v1/agents/opencode/api-key

t_begin "the bad requests connected nothing"
api GET /v1/agents
expect_json '.agents[] | select(.id=="opencode") | .status' not_connected
t_end

# --- settings -----------------------------------------------------------------

t_begin "settings: default models merge, show up, and clear"
api GET /v1/settings
expect_status 200 && expect_json .agents.default_models.opencode null &&
	expect_json .agents.default_agent opencode && expect_jq '.editable == ["agents.default_models"]'
api PATCH /v1/settings '{"agents":{"default_models":{"opencode":"opencode/zen-x","claude-code":"claude-sonnet-4-5"}}}'
expect_status 200 && expect_json .agents.default_models.opencode opencode/zen-x &&
	expect_json '.agents.default_models["claude-code"]' claude-sonnet-4-5
api PATCH /v1/settings '{"agents":{"default_models":{"opencode":"opencode/zen-y"}}}'
expect_status 200 && expect_json .agents.default_models.opencode opencode/zen-y &&
	expect_json '.agents.default_models["claude-code"]' claude-sonnet-4-5
api GET /v1/agents
expect_json '.agents[] | select(.id=="opencode") | .default_model' opencode/zen-y
api PATCH /v1/settings '{"agents":{"default_models":{"opencode":"","claude-code":null}}}'
expect_status 200 && expect_json .agents.default_models.opencode null &&
	expect_json '.agents.default_models["claude-code"]' null
api PATCH /v1/settings '{"agents":{"default_models":{"claude-code":"claude-opus-4"}}}'
api_as "$OTHER" GET /v1/settings
expect_json '.agents.default_models["claude-code"]' null
t_end

M201=$(printf 'm%.0s' {1..201})
bad_req "settings: {} is 400" 400 invalid_request PATCH /v1/settings '{}'
bad_req "settings: an unknown field is 400" 400 invalid_request PATCH /v1/settings '{"egress":{"mode":"open"}}'
bad_req "settings: lifecycle from a token that is not an operator's is 403" 403 operator_only PATCH /v1/settings '{"lifecycle":{"idle_threshold_seconds":60}}'
bad_req "settings: agents not an object is 400" 400 invalid_request PATCH /v1/settings '{"agents":[]}'
bad_req "settings: an unknown agents field is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"providers":[]}}'
bad_req "settings: default_models not an object is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"default_models":"x"}}'
bad_req "settings: an unknown agent is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"default_models":{"codex":"gpt"}}}'
bad_req "settings: a model with a space is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"default_models":{"opencode":"a b"}}}'
bad_req "settings: a model like an option is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"default_models":{"opencode":"--help"}}}'
bad_req "settings: a model over 200 bytes is 400" 400 invalid_request PATCH /v1/settings "{\"agents\":{\"default_models\":{\"opencode\":\"$M201\"}}}"
bad_req "settings: a number is 400" 400 invalid_request PATCH /v1/settings '{"agents":{"default_models":{"opencode":7}}}'
bad_req "settings: not JSON is 400" 400 invalid_request PATCH /v1/settings 'x'

t_begin "settings: a refused PATCH changes nothing"
api PATCH /v1/settings '{"agents":{"default_models":{"opencode":"fine/model","codex":"gpt"}}}'
expect_status 400
api GET /v1/settings
expect_json .agents.default_models.opencode null
t_end

# --- app config -----------------------------------------------------------------

t_begin "app config: plain and sensitive values"
create_app cfg-app
APP=${APP_ID:-01ARZ3NDEKTSV4RRFFQ69G5FAV}
api PUT "/v1/apps/$APP/config/APP_PORT" '{"value":"8080","expose_env":true}'
expect_status 201 && expect_json .key APP_PORT && expect_json .value 8080 &&
	expect_json .sensitive false && expect_json .expose_env true && expect_json .value_set true
api PUT "/v1/apps/$APP/config/APP_PORT" '{"value":"9090"}'
expect_status 200 && expect_json .value 9090 && expect_json .expose_env true
api PUT "/v1/apps/$APP/config/DB_PASSWORD" "{\"value\":\"$SECRET\",\"sensitive\":true}"
expect_status 201 && expect_json .sensitive true && expect_json .value_set true && expect_jq 'has("value") | not' "no value"
api GET "/v1/apps/$APP/config/DB_PASSWORD"
expect_status 200 && expect_json .value_set true && expect_jq 'has("value") | not' "no value"
api PUT "/v1/apps/$APP/config/EMPTY_ONE" '{"value":"","sensitive":true}'
expect_status 201 && expect_json .value_set false
api PUT "/v1/apps/$APP/config/_lower_ok9" '{"value":"ünïcödé ✓"}'
expect_status 201 && expect_json .value "ünïcödé ✓"
api GET "/v1/apps/$APP/config"
expect_status 200 && expect_json '[.config[].key] | join(",")' APP_PORT,DB_PASSWORD,EMPTY_ONE,_lower_ok9
grep -qaF -- "$SECRET" "$BODY_FILE" && t_err "the config list contains the sensitive value"
nowhere "after app config"
t_end

t_begin "app config: another tenant gets 404 for everything"
for req in "GET /v1/apps/$APP/config" "GET /v1/apps/$APP/config/APP_PORT" "DELETE /v1/apps/$APP/config/APP_PORT"; do
	api_as "$OTHER" $req
	expect_status 404 && expect_envelope not_found
done
api_as "$OTHER" PUT "/v1/apps/$APP/config/APP_PORT" '{"value":"1"}'
expect_status 404 && expect_envelope not_found
api GET "/v1/apps/$APP/config/APP_PORT"
expect_json .value 9090
t_end

K129=K$(printf 'x%.0s' {1..128})
BIG=$(head -c 65537 /dev/zero | tr '\0' v)
bad_req "config: a key starting with a digit is 400" 400 invalid_request PUT "/v1/apps/$APP/config/1ABC" '{"value":"x"}'
bad_req "config: a key with '-' is 400" 400 invalid_request PUT "/v1/apps/$APP/config/A-B" '{"value":"x"}'
bad_req "config: a 129-character key is 400" 400 invalid_request PUT "/v1/apps/$APP/config/$K129" '{"value":"x"}'
bad_req "config: GET of a bad key is 400" 400 invalid_request GET "/v1/apps/$APP/config/a.b"
bad_req "config: value missing is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" '{"sensitive":true}'
bad_req "config: value a number is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" '{"value":1}'
bad_req "config: value with NUL is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" '{"value":"a\u0000b"}'
bad_req "config: value over 64 KiB is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" "{\"value\":\"$BIG\"}"
bad_req "config: sensitive not a boolean is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" '{"value":"x","sensitive":"yes"}'
bad_req "config: expose_env not a boolean is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" '{"value":"x","expose_env":1}'
bad_req "config: exposing PATH is 400" 400 invalid_request PUT "/v1/apps/$APP/config/PATH" '{"value":"/x","expose_env":true}'
bad_req "config: exposing SANDBOXD_* is 400" 400 invalid_request PUT "/v1/apps/$APP/config/SANDBOXD_X" '{"value":"x","expose_env":true}'
bad_req "config: not JSON is 400" 400 invalid_request PUT "/v1/apps/$APP/config/X" 'value=x'
bad_req "config: a malformed app id is 400" 400 invalid_request GET /v1/apps/nope/config
bad_req "config: an unknown app is 404" 404 not_found PUT /v1/apps/01ARZ3NDEKTSV4RRFFQ69G5FAV/config/X '{"value":"x"}'
bad_req "config: an unknown key is 404" 404 not_found GET "/v1/apps/$APP/config/NOPE"
bad_req "config: DELETE of an unknown key is 404" 404 not_found DELETE "/v1/apps/$APP/config/NOPE"
bad_req "config: POST is 405" 405 method_not_allowed POST "/v1/apps/$APP/config/X" '{"value":"x"}'

t_begin "app config: delete a key, then the app takes the rest with it"
api DELETE "/v1/apps/$APP/config/EMPTY_ONE"
expect_status 204
api GET "/v1/apps/$APP/config/EMPTY_ONE"
expect_status 404
create_app cfg-gone
GONE=${APP_ID:-01ARZ3NDEKTSV4RRFFQ69G5FAV}
api PUT "/v1/apps/$GONE/config/TOKEN" '{"value":"gone-secret","sensitive":true}'
expect_status 201
cli secrets check
before=$(sed -nE 's/^secrets: ([0-9]+) stored.*/\1/p' <<<"$CLI_OUT")
api DELETE "/v1/apps/$GONE"
expect_status 204
# In the trash the sealed value is kept (a restore brings it back) ...
cli secrets check
kept=$(sed -nE 's/^secrets: ([0-9]+) stored.*/\1/p' <<<"$CLI_OUT")
[[ -n $before && $kept == "$before" ]] || t_err "stored secrets before/in the trash: ${before:-?}/${kept:-?} ($CLI_OUT)"
# ... and goes with the purge.
api DELETE "/v1/trash/$(header Sandboxd-Trash-Id)"
expect_status 204
cli secrets check
after=$(sed -nE 's/^secrets: ([0-9]+) stored.*/\1/p' <<<"$CLI_OUT")
[[ -n $before && $after == $((before - 1)) ]] || t_err "stored secrets before/after the app's purge: ${before:-?}/${after:-?} ($CLI_OUT)"
t_end

# --- disconnect ---------------------------------------------------------------

t_begin "disconnect and DELETE api-key are idempotent 204s"
api POST /v1/agents/opencode/api-key "{\"api_key\":\"oc-$(rand_hex 20)\"}"
expect_status 200
api DELETE /v1/agents/opencode/api-key
expect_status 204
api DELETE /v1/agents/opencode/api-key
expect_status 204
api POST /v1/agents/opencode/disconnect
expect_status 204
api GET /v1/agents
expect_json '.agents[] | select(.id=="opencode") | .status' not_connected &&
	expect_json '.agents[] | select(.id=="claude-code") | .status' connected
t_end

# --- rotation -------------------------------------------------------------------

t_begin "secrets check runs next to the daemon; rotate refuses to"
cli secrets check
[[ $CLI_RC == 0 && $CLI_OUT =~ secrets:\ ([0-9]+)\ stored,\ ([0-9]+)\ open,\ 0\ do\ not ]] ||
	t_err "secrets check: status $CLI_RC: $CLI_OUT"
STORED=${BASH_REMATCH[1]:-0}
# claude-code's key and DB_PASSWORD; the rest were deleted.
((STORED == 2)) || t_err "expected 2 stored secrets, got $STORED: $CLI_OUT"
grep -qaF -- "$KEY_MID" <<<"$CLI_OUT" && t_err "secrets check printed the key"
key_before=$(cat "$DATA/secret.key")
cli secrets rotate
[[ $CLI_RC != 0 && $CLI_OUT == *running* ]] || t_err "rotate next to the daemon: status $CLI_RC: $CLI_OUT"
[[ $(cat "$DATA/secret.key") == "$key_before" && ! -e $DATA/secret.key.next ]] ||
	t_err "a refused rotate changed the key files"
t_end

t_begin "secrets rotate twice with the daemon stopped; everything still opens"
stop_daemon
for i in 1 2; do
	prev=$(cat "$DATA/secret.key")
	cli secrets rotate
	[[ $CLI_RC == 0 && $CLI_OUT == *"$STORED re-sealed"* ]] || t_err "rotate $i: status $CLI_RC: $CLI_OUT"
	[[ $(cat "$DATA/secret.key") != "$prev" ]] || t_err "rotate $i did not change secret.key"
	[[ ! -e $DATA/secret.key.next ]] || t_err "rotate $i left secret.key.next"
	[[ $(stat -c %a "$DATA/secret.key") == 600 ]] || t_err "secret.key is not 0600 after rotate $i"
	cli secrets check
	[[ $CLI_RC == 0 && $CLI_OUT == "secrets: $STORED stored, $STORED open, 0 do not"* ]] ||
		t_err "check after rotate $i: status $CLI_RC: $CLI_OUT"
done
nowhere "after rotating"
start_daemon SANDBOXD_API_TOKENS="$TOKENS" || t_err "the daemon did not start after the rotations: $(head -c 300 "$DAEMON_ERR")"
api GET /v1/agents
expect_json '.agents[] | select(.id=="claude-code") | .status' connected &&
	expect_json '.agents[] | select(.id=="claude-code") | .key_hint' "…${KEY: -4}"
api GET "/v1/apps/$APP/config/DB_PASSWORD"
expect_status 200 && expect_json .value_set true
t_end

# --- the key's absence or damage stops the daemon ----------------------------------

# refuses NAME PATTERN [VAR=value…]: the daemon exits non-zero within 10 s
# and its stderr matches PATTERN.
refuses() {
	local name=$1 pat=$2
	shift 2
	t_begin "$name"
	if start_daemon SANDBOXD_API_TOKENS="$TOKENS" "$@"; then
		t_err "the daemon started"
		stop_daemon
	elif [[ -z $DAEMON_RC ]]; then
		t_err "the daemon neither became ready nor exited within 10 s"
		stop_daemon
	else
		[[ $DAEMON_RC != 0 ]] || t_err "the daemon exited with status 0"
		grep -qE -- "$pat" "$DAEMON_ERR" || t_err "stderr does not say /$pat/: $(tail -c 400 "$DAEMON_ERR")"
	fi
	t_end
}

stop_daemon
cp -p "$DATA/secret.key" "$IT_TMP/secret.key.good"
db_sum() { sha256sum "$DATA/state/sandboxd.db" | cut -d' ' -f1; }
DB_BEFORE=$(db_sum)

printf 'this is not a key\n' >"$DATA/secret.key"
refuses "a corrupt secret.key stops the daemon" "secret\.key: not a key.*restore it from a backup"
t_begin "the corrupt secret.key and the data are left as they were"
[[ $(cat "$DATA/secret.key") == "this is not a key" ]] || t_err "secret.key was replaced"
[[ $(db_sum) == "$DB_BEFORE" ]] || t_err "the database changed"
t_end

head -c 32 /dev/urandom | base64 >"$DATA/secret.key"
refuses "another valid key stops the daemon" "stored secrets are sealed with key [0-9a-f]{16}"

rm -f "$DATA/secret.key"
refuses "a missing secret.key with stored secrets stops the daemon" \
	"secret\.key is missing but $STORED secrets are stored"
t_begin "no new key was made in its place"
[[ ! -e $DATA/secret.key ]] || t_err "a new secret.key appeared"
[[ $(db_sum) == "$DB_BEFORE" ]] || t_err "the database changed"
t_end

refuses "SANDBOXD_SECRETS_KEY that is not a key stops the daemon" "SANDBOXD_SECRETS_KEY: not a key" \
	SANDBOXD_SECRETS_KEY=not-base64-at-all
refuses "SANDBOXD_SECRETS_KEY of 16 bytes stops the daemon" "SANDBOXD_SECRETS_KEY: not a key" \
	SANDBOXD_SECRETS_KEY="$(head -c 16 /dev/urandom | base64)"
refuses "SANDBOXD_SECRETS_KEY_PREVIOUS alone stops the daemon" "SANDBOXD_SECRETS_KEY_PREVIOUS" \
	SANDBOXD_SECRETS_KEY_PREVIOUS="$(head -c 32 /dev/urandom | base64)"

t_begin "the restored secret.key works again"
cp -p "$IT_TMP/secret.key.good" "$DATA/secret.key"
start_daemon SANDBOXD_API_TOKENS="$TOKENS" || t_err "no start with the restored key: $(tail -c 300 "$DAEMON_ERR")"
api GET /v1/agents
expect_json '.agents[] | select(.id=="claude-code") | .status' connected
stop_daemon
t_end

# --- SANDBOXD_SECRETS_KEY ---------------------------------------------------------

t_begin "SANDBOXD_SECRETS_KEY: no key file, rotation via _PREVIOUS"
new_data_dir
K1=$(head -c 32 /dev/urandom | base64)
K2=$(head -c 32 /dev/urandom | base64)
start_daemon SANDBOXD_SECRETS_KEY="$K1" || t_err "no start with SANDBOXD_SECRETS_KEY: $(tail -c 300 "$DAEMON_ERR")"
[[ ! -e $DATA/secret.key ]] || t_err "secret.key was made although SANDBOXD_SECRETS_KEY is set"
grep -qaF -- "$K1" "$DAEMON_OUT" "$DAEMON_ERR" && t_err "the daemon printed SANDBOXD_SECRETS_KEY"
if [[ -n $DAEMON_PID ]] && tr '\0' '\n' <"/proc/$DAEMON_PID/environ" | grep -qaF -- "$K1"; then
	t_err "SANDBOXD_SECRETS_KEY is still in the daemon's environment"
fi
api POST /v1/agents/opencode/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
stop_daemon
CLI_ENV=(SANDBOXD_SECRETS_KEY="$K2")
cli secrets rotate
[[ $CLI_RC != 0 && $CLI_OUT == *SANDBOXD_SECRETS_KEY_PREVIOUS* ]] || t_err "rotate without _PREVIOUS: status $CLI_RC: $CLI_OUT"
CLI_ENV=(SANDBOXD_SECRETS_KEY="$K2" SANDBOXD_SECRETS_KEY_PREVIOUS="$K1")
cli secrets rotate
[[ $CLI_RC == 0 && $CLI_OUT == *"1 re-sealed"* ]] || t_err "rotate K1 -> K2: status $CLI_RC: $CLI_OUT"
CLI_ENV=(SANDBOXD_SECRETS_KEY="$K2")
cli secrets check
[[ $CLI_RC == 0 && $CLI_OUT == "secrets: 1 stored, 1 open, 0 do not"* ]] || t_err "check with K2: $CLI_OUT"
CLI_ENV=()
start_daemon SANDBOXD_SECRETS_KEY="$K2" || t_err "no start with the new key: $(tail -c 300 "$DAEMON_ERR")"
api GET /v1/agents
expect_json '.agents[] | select(.id=="opencode") | .status' connected
stop_daemon
nowhere "with SANDBOXD_SECRETS_KEY"
t_end

refuses "the old SANDBOXD_SECRETS_KEY after a rotation stops the daemon" \
	"SANDBOXD_SECRETS_KEY.*start with the key they were sealed with" SANDBOXD_SECRETS_KEY="$K1"

finish
