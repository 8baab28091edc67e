#!/usr/bin/env bash
# Shared tables one tenant cannot fill, and names that are not UTF-8.
# Two tenants (tokens a and b), each with an app and a sandbox:
# - preview links: a mints one more than its quota (PVAUTH_CODES_TENANT,
#   256); its own oldest link no longer opens (the edge's unknown page),
#   its newest does, b's link minted before still opens and b still mints;
# - pending Claude sign-ins (4 per scope): b starts one, a starts 20; b's
#   still finishes against the fake token endpoint, a's oldest is gone;
# - the console's sign-in limiter: a stranger's address failing waits a
#   short, doubling while (Retry-After of a few seconds, not a minute),
#   and the operator's right password from that same address gets in
#   within seconds; strangers failing from 80 addresses (50 and more
#   failures in a minute) do not refuse the operator's right password
#   from another;
# - a file name that is not UTF-8 (written through the files API): the
#   list has its path escaped (\xNN) with path_encoded beside it, which
#   reads the file back, and an error about such a name has its message.
# Client addresses: X-Forwarded-For counts from a loopback peer (the
# edge's own hop in production), so each address here is one header.
. "$(dirname "$0")/lib.sh"
need_docker

TA=tok-a-$RANDOM$RANDOM
TB=tok-b-$RANDOM$RANDOM
OCODE=code-$RANDOM$RANDOM
OACCESS=sk-ant-oat01-it-$RANDOM$RANDOM
start_fake_oauth "$OCODE" "$OACCESS"
start_edge_daemon "SANDBOXD_API_TOKENS=a=$TA,b=$TB" \
	SANDBOXD_CLAUDE_TOKEN_URL="http://127.0.0.1:$OPORT/v1/oauth/token"

# as TOKEN: the next api calls go as that tenant.
as() { TOKEN=$1; }

t_begin "setup: an app and a sandbox for each tenant"
as "$TA"
create_app quota-a && create_sandbox "$APP_ID" || bail "tenant a: ${T_ERRS[*]}"
A=$APP_ID SA=$SB_ID HA=s-${SB_ID,,}-3000.preview.localhost:$EDGE_PORT
as "$TB"
create_app quota-b && create_sandbox "$APP_ID" || bail "tenant b: ${T_ERRS[*]}"
B=$APP_ID HB=s-${SB_ID,,}-3000.preview.localhost:$EDGE_PORT
t_end

# --- preview links ---------------------------------------------------------------

# mint APP -> LINK_PATH (the link's path and query on the app's host)
mint() {
	api POST "/v1/apps/$1/preview-link"
	expect_status 201 || return 1
	LINK_PATH=/$(j .url | sed -E 's#^[a-z]+://[^/]+/##')
}
# opens HOST PATH: the link opens (302 and a preview cookie)
opens() {
	edge_get "$1" "$2"
	[[ $E_STATUS == 302 && $(eh Set-Cookie) == sbx_preview=* ]]
}

t_begin "preview links: a tenant past its quota loses its own oldest, never another's"
as "$TB"
mint "$B" && LB=$LINK_PATH
as "$TA"
mint "$A" && LA_FIRST=$LINK_PATH
# 255 more in one connection, then the last one: 257 in all.
made=$(curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $TA" \
	$(printf "$API_URL/v1/apps/$A/preview-link %.0s" {1..255}) | grep -c '^201$')
((made == 255)) || t_err "tenant a minted $made of 255 links"
mint "$A" && LA_LAST=$LINK_PATH
opens "$HA" "$LA_FIRST" && t_err "tenant a's oldest link still opens past its quota"
[[ $E_STATUS == 404 ]] || t_err "tenant a's oldest link: $E_STATUS, not the unknown page"
opens "$HA" "$LA_LAST" || t_err "tenant a's newest link does not open: $E_STATUS"
opens "$HB" "$LB" || t_err "tenant b's link was evicted by tenant a's: $E_STATUS"
as "$TB"
api POST "/v1/apps/$B/preview-link"
expect_status 201
t_end

# --- pending sign-ins -------------------------------------------------------------

t_begin "pending sign-ins: one tenant's 20 starts leave another's sign-in pending"
as "$TB"
api POST /v1/agents/claude-code/oauth/start
expect_status 200
SB_STATE=$(j .state)
as "$TA"
A_STATES=()
for ((i = 0; i < 20; i++)); do
	api POST /v1/agents/claude-code/oauth/start
	[[ $STATUS == 200 ]] || t_err "tenant a's start $i: $STATUS $(short_body)"
	A_STATES+=("$(j .state)")
done
as "$TB"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$OCODE#$SB_STATE\"}"
expect_status 200 && expect_json .status connected
as "$TA"
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$OCODE#${A_STATES[0]}\"}"
expect_status 400 && expect_envelope invalid_request
api POST /v1/agents/claude-code/oauth/finish "{\"code\":\"$OCODE#${A_STATES[19]}\"}"
expect_status 200 && expect_json .status connected
t_end

# --- the console's sign-in --------------------------------------------------------

PW='correct horse battery'
# login_from ADDRESS PASSWORD: a console sign-in from that client address.
login_from() {
	API_EXTRA_HEADER="X-Forwarded-For: $1"
	api_auth "" POST /v1/auth/login "{\"password\":\"$2\"}"
	API_EXTRA_HEADER=
}
signed_in_from() { login_from "$1" "$PW"; [[ $STATUS == 200 ]]; }

t_begin "setup: the console's password"
code=$(cat "$DATA/console-setup-code" 2>/dev/null)
api_auth "" POST /v1/auth/setup "{\"setup_code\":\"$code\",\"password\":\"$PW\"}"
expect_status 200 && expect_json .via session
t_end

t_begin "sign-in: a failing address waits seconds, and the right password gets in from it"
for i in 1 2 3 4 5; do
	login_from 203.0.113.77 'guess guess'
	[[ $STATUS == 401 ]] || t_err "failure $i: $STATUS $(short_body)"
done
login_from 203.0.113.77 'guess guess'
expect_status 429 && expect_envelope rate_limited
ra=$(header Retry-After)
[[ $ra =~ ^[0-9]+$ ]] && ((ra >= 1 && ra <= 5)) ||
	t_err "Retry-After after 5 failures is '$ra': a minute-long lockout, not a short wait"
start=$SECONDS
wait_until 10 signed_in_from 203.0.113.77 ||
	t_err "the right password from the stranger's address was refused for 10 s: $STATUS $(short_body)"
note "the right password got in from the failing address after $((SECONDS - start)) s"
t_end

t_begin "sign-in: strangers failing from 80 addresses do not refuse the operator"
# Two at once (SESSION_HASHING_MAX: a third would find both hashing
# slots busy, and a busy try is not counted), one wrong password from
# each address, so that over SESSION_LOGIN_GLOBAL_MAX (50) fail within
# the minute even on a slow machine.
fails=$(seq 1 80 | xargs -P 2 -I{} curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 \
	-X POST -H 'X-Forwarded-For: 198.51.100.{}' -H 'Content-Type: application/json' --data-binary '{"password":"wrong password"}' \
	"$API_URL/v1/auth/login" | grep -c '^401$')
note "$fails wrong passwords from the strangers' addresses"
((fails >= 50)) || t_err "only $fails of the strangers' tries were counted failures"
login_from 192.0.2.200 "$PW"
expect_status 200 && expect_json .via session
t_end

# --- names that are not UTF-8 -----------------------------------------------------

t_begin "files: a name that is not UTF-8 is listed escaped, read back, and named in errors"
as "$TA"
api PUT "/v1/sandboxes/$SA/files?path=caf%E9.txt" 'bytes of a Latin-1 name'
expect_status 200
api GET "/v1/sandboxes/$SA/files"
expect_status 200 &&
	expect_jq '.entries | any(.path == "caf\\xe9.txt" and .path_encoded == "caf%E9.txt" and .type == "file")' \
		'an entry with path "caf\\xe9.txt" and path_encoded "caf%E9.txt"'
expect_jq '.entries | all(has("path"))' 'every entry has its path'
enc=$(j '.entries[] | select(.path_encoded) | .path_encoded')
api GET "/v1/sandboxes/$SA/files/content?path=$enc"
expect_status 200
[[ $BODY == 'bytes of a Latin-1 name' ]] || t_err "read back by path_encoded: $(short_body)"
api GET "/v1/sandboxes/$SA/files/content?path=gone-%E9.txt"
expect_status 404 && expect_envelope not_found &&
	expect_jq '.error.message | contains("gone-\\xe9.txt")' 'the message names gone-\xe9.txt'
t_end

finish
