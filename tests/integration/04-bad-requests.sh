#!/usr/bin/env bash
# Bad requests: a table of malformed, unauthorised and impossible requests.
# Each must get the documented status AND the error envelope
# {"error":{"code","message","retryable"}} and an X-Request-Id header; the
# daemon must still answer /healthz afterwards.  A few boundary cases check
# that valid input right next to an invalid one is accepted.
. "$(dirname "$0")/lib.sh"
need_docker
start_daemon || bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

GOOD=01ARZ3NDEKTSV4RRFFQ69G5FAV  # well-formed, never created
name200=$(printf 'n%.0s' {1..200})
name201=$(printf 'n%.0s' {1..201})

# bad NAME STATUS CODE METHOD PATH [BODY]: with the test token.
bad() {
	local name=$1 st=$2 code=$3
	shift 3
	t_begin "$name"
	api "$@"
	expect_status "$st"
	expect_envelope "$code"
	expect_request_id
	t_end
}

# bad_auth NAME AUTHORIZATION-VALUE METHOD PATH [BODY]: 401 unauthorized.
bad_auth() {
	local name=$1 auth=$2
	shift 2
	t_begin "$name"
	api_auth "$auth" "$@"
	expect_status 401
	expect_envelope unauthorized false
	expect_request_id
	t_end
}

t_begin "setup: an app with a sandbox and an app without"
create_app bad-a && create_sandbox "$APP_ID"
APP=${APP_ID:-$GOOD} SB=${SB_ID:-$GOOD}
create_app bad-b
APP2=${APP_ID:-$GOOD}
t_end

# --- JSON bodies ----------------------------------------------------------------
bad "invalid JSON"                      400 invalid_request POST /v1/apps '{"name":'
bad "invalid JSON: unquoted key"        400 invalid_request POST /v1/apps '{name:"x"}'
bad "invalid JSON: trailing garbage"    400 invalid_request POST /v1/apps '{"name":"x"} junk'
bad "empty body on POST /v1/apps"       400 invalid_request POST /v1/apps ''
bad "no body on POST /v1/apps"          400 invalid_request POST /v1/apps
bad "body is an array"                  400 invalid_request POST /v1/apps '[]'
bad "body is a string"                  400 invalid_request POST /v1/apps '"x"'
bad "body is a number"                  400 invalid_request POST /v1/apps '42'
bad "body is null"                      400 invalid_request POST /v1/apps 'null'
printf '{"name":"\xff\xfe"}' >"$IT_TMP/badutf8.json"
bad "invalid UTF-8 in a string"         400 invalid_request POST /v1/apps "@$IT_TMP/badutf8.json"
bad "name missing"                      400 invalid_request POST /v1/apps '{"description":"no name"}'
bad "name empty"                        400 invalid_request POST /v1/apps '{"name":""}'
bad "name is a number"                  400 invalid_request POST /v1/apps '{"name":42}'
bad "name is null"                      400 invalid_request POST /v1/apps '{"name":null}'
bad "name is an object"                 400 invalid_request POST /v1/apps '{"name":{"a":1}}'
bad "name 201 bytes"                    400 invalid_request POST /v1/apps "{\"name\":\"$name201\"}"
bad "description is a number"           400 invalid_request POST /v1/apps '{"name":"x","description":7}'
bad "runtime_preset unknown"            400 invalid_request POST /v1/apps '{"name":"x","runtime_preset":"rails"}'
bad "runtime_preset is a number"        400 invalid_request POST /v1/apps '{"name":"x","runtime_preset":3}'
bad "tags not an array"                 400 invalid_request POST /v1/apps '{"name":"x","tags":"a,b"}'
bad "tags an array of numbers"          400 invalid_request POST /v1/apps '{"name":"x","tags":[1,2]}'

t_begin "boundary: name of exactly 200 bytes is accepted"
api POST /v1/apps "{\"name\":\"$name200\"}"
expect_status 201 && expect_json .name "$name200"
t_end

t_begin "boundary: every documented runtime_preset and tags of strings are accepted"
for p in react-vite fastapi node-express static nextjs worker; do
	api POST /v1/apps "{\"name\":\"p-$p\",\"runtime_preset\":\"$p\",\"tags\":[\"a\",\"b\"]}"
	expect_status 201 && expect_json .runtime_preset "$p" && expect_json '.tags | tostring' '["a","b"]'
done
t_end

# Body size: exactly 1 MiB is allowed, one byte more is 413.
# The padding goes in an unknown field (ignored), so the only thing wrong
# with the bigger bodies is their size.
mk_body() { # mk_body FILE TOTAL-BYTES: {"name":"big","padding":"aaa…"}
	local head='{"name":"big","padding":"' tail='"}'
	{
		printf '%s' "$head"
		head -c $(($2 - ${#head} - ${#tail})) /dev/zero | tr '\0' a
		printf '%s' "$tail"
	} >"$1"
}
mk_body "$IT_TMP/over.json" $((1024 * 1024 + 1))
bad "body of 1 MiB + 1 byte"            413 payload_too_large POST /v1/apps "@$IT_TMP/over.json"
mk_body "$IT_TMP/huge.json" $((3 * 1024 * 1024))
bad "body of 3 MiB"                     413 payload_too_large POST /v1/apps "@$IT_TMP/huge.json"
t_begin "boundary: a valid body of exactly 1 MiB is accepted"
mk_body "$IT_TMP/limit.json" $((1024 * 1024))
api POST /v1/apps "@$IT_TMP/limit.json"
expect_status 201 && expect_json .name big
t_end

deep() { printf '{"name":"deep","x":%s%s}' "$(printf '[%.0s' $(seq "$1"))" "$(printf ']%.0s' $(seq "$1"))"; }
bad "JSON nested 100 deep"              400 invalid_request POST /v1/apps "$(deep 100)"
bad "JSON nested 40 deep"               400 invalid_request POST /v1/apps "$(deep 40)"
bad "JSON nested 10000 deep"            400 invalid_request POST /v1/apps "$(deep 10000)"

# --- ids ---------------------------------------------------------------------------
bad "malformed id: short"               400 invalid_request GET /v1/apps/short
bad "malformed id: 27 chars"            400 invalid_request GET "/v1/apps/${GOOD}0"
bad "malformed id: 25 chars"            400 invalid_request GET "/v1/apps/${GOOD:0:25}"
# A path-traversal id is refused; whether the router sees it as a bad id
# (400) or as an unknown path (404) depends on where %2F is decoded.
traversal() {
	t_begin "malformed id: $1"
	api GET "$1"
	[[ $STATUS == 400 || $STATUS == 404 ]] || t_err "$REQ: expected 400 (or 404), got $STATUS; body: $(short_body)"
	if [[ $STATUS == 400 ]]; then expect_envelope invalid_request; else expect_envelope not_found; fi
	expect_header X-Request-Id
	t_end
}
traversal /v1/apps/..%2Fetc
traversal /v1/apps/../etc
traversal /v1/apps/..%2F..%2F..%2Fetc%2Fpasswd
bad "malformed id: U is not Crockford"  400 invalid_request GET /v1/apps/01ARZ3NDEKTSV4RRFFQ69G5FAU
bad "malformed id: I is not Crockford"  400 invalid_request GET /v1/apps/01ARZ3NDEKTSV4RRFFQ69G5FAI
bad "malformed id: O is not Crockford"  400 invalid_request GET /v1/apps/01ARZ3NDEKTSV4RRFFQ69G5FAO
bad "malformed id: first char 8"        400 invalid_request GET /v1/apps/81ARZ3NDEKTSV4RRFFQ69G5FAV
bad "malformed id: %00 inside"          400 invalid_request GET /v1/apps/01ARZ3NDEKTSV4RRFFQ69G5F%00
bad "malformed sandbox id on GET"       400 invalid_request GET /v1/sandboxes/short
bad "malformed sandbox id on stop"      400 invalid_request POST /v1/sandboxes/short/stop
bad "malformed sandbox id on start"     400 invalid_request POST /v1/sandboxes/short/start
bad "malformed sandbox id on DELETE"    400 invalid_request DELETE /v1/sandboxes/short
bad "malformed app id on POST sandbox"  400 invalid_request POST /v1/apps/short/sandbox '{"ports":[3000]}'
bad "malformed app id on PATCH"         400 invalid_request PATCH /v1/apps/short '{"name":"x"}'
bad "malformed app id on DELETE"        400 invalid_request DELETE /v1/apps/short
bad "lower-case well-formed id is 404, not 400" 404 not_found GET "/v1/apps/${GOOD,,}"
bad "unknown app: GET"                  404 not_found GET "/v1/apps/$GOOD"
bad "unknown app: PATCH"                404 not_found PATCH "/v1/apps/$GOOD" '{"name":"x"}'
bad "unknown app: DELETE"               404 not_found DELETE "/v1/apps/$GOOD"
bad "unknown app: POST sandbox"         404 not_found POST "/v1/apps/$GOOD/sandbox" '{"ports":[3000]}'
bad "unknown sandbox: GET"              404 not_found GET "/v1/sandboxes/$GOOD"
bad "unknown sandbox: stop"             404 not_found POST "/v1/sandboxes/$GOOD/stop"
bad "unknown sandbox: start"            404 not_found POST "/v1/sandboxes/$GOOD/start"
bad "unknown sandbox: DELETE"           404 not_found DELETE "/v1/sandboxes/$GOOD"
bad "an app id is not a sandbox id"     404 not_found GET "/v1/sandboxes/$APP"
bad "a sandbox id is not an app id"     404 not_found GET "/v1/apps/$SB"

t_begin "lower-case form of an existing id finds it"
api GET "/v1/apps/${APP,,}"
expect_status 200 && expect_json .id "$APP"
t_end

# --- auth ----------------------------------------------------------------------------
bad_auth "missing token"                ""                       GET /v1/apps
bad_auth "wrong token"                  "Bearer ${TOKEN}x"       GET /v1/apps
bad_auth "token prefix only"            "Bearer ${TOKEN:0:6}"    GET /v1/apps
bad_auth "Bearer with empty token"      "Bearer "                GET /v1/apps
bad_auth "Basic scheme"                 "Basic $(printf 'it:%s' "$TOKEN" | base64 -w0)" GET /v1/apps
bad_auth "token without a scheme"       "$TOKEN"                 GET /v1/apps
bad_auth "missing token on POST"        ""                       POST /v1/apps '{"name":"sneaky"}'
bad_auth "missing token on an app"      ""                       GET "/v1/apps/$APP"
bad_auth "missing token on DELETE"      ""                       DELETE "/v1/apps/$APP"
bad_auth "unknown /v1 path, no token"   ""                       GET /v1/nothing-here
bad_auth "unknown /v1 path, wrong token" "Bearer nope"           GET /v1/nothing/here
bad "unknown /v1 path with a token"     404 not_found GET /v1/nothing-here
bad "unknown path outside /v1"          404 not_found GET /nothing-here

t_begin "the scheme is case-insensitive (bearer, BEARER)"
api_auth "bearer $TOKEN" GET /v1/apps
expect_status 200
api_auth "BEARER $TOKEN" GET /v1/apps
expect_status 200
t_end

t_begin "nothing was created or deleted without a token"
api GET /v1/apps
expect_status 200 && expect_jq '[.apps[] | select(.name == "sneaky")] | length == 0' "no app named sneaky"
api GET "/v1/apps/$APP"
expect_status 200
t_end

# --- methods ---------------------------------------------------------------------------
# bad_method METHOD PATH ALLOWED…: 405, and Allow lists every ALLOWED method.
bad_method() {
	local m=$1 p=$2 a
	shift 2
	t_begin "wrong method: $m $p"
	api "$m" "$p"
	expect_status 405
	expect_envelope method_not_allowed
	expect_header X-Request-Id
	if expect_header Allow; then
		for a in "$@"; do
			header Allow | tr ',' '\n' | tr -d ' ' | grep -qx "$a" ||
				t_err "$REQ: Allow '$(header Allow)' does not list $a"
		done
	fi
	t_end
}
bad_method PUT /v1/apps GET POST
bad_method DELETE /v1/apps GET POST
bad_method PUT "/v1/apps/$APP" GET PATCH DELETE
bad_method POST "/v1/apps/$APP" GET PATCH DELETE
bad_method GET "/v1/sandboxes/$SB/stop" POST
bad_method PUT "/v1/sandboxes/$SB" GET DELETE

# --- state -------------------------------------------------------------------------------
bad "duplicate sandbox for one app"     409 conflict POST "/v1/apps/$APP/sandbox" '{"ports":[3000]}'

t_begin "the duplicate create left the first sandbox alone"
api GET "/v1/sandboxes/$SB"
expect_status 200 && expect_json .status running
api GET "/v1/apps/$APP"
expect_json .current_sandbox_id "$SB"
t_end

# Each of these must be refused before anything is created; if one is taken,
# its sandbox is deleted so the next case still tests validation.
bad_ports() {
	bad "ports: $1" 400 invalid_request POST "/v1/apps/$APP2/sandbox" "$2"
	if [[ $STATUS == 201 ]]; then
		local id
		id=$(j .id)
		api DELETE "/v1/sandboxes/$id"
	fi
}
bad_ports "not an array"       '{"ports":3000}'
bad_ports "a string"           '{"ports":"3000"}'
bad_ports "with 0"             '{"ports":[0]}'
bad_ports "with 70000"         '{"ports":[70000]}'
bad_ports "with 65536"         '{"ports":[65536]}'
bad_ports "with -1"            '{"ports":[-1]}'
bad_ports "with a string"      '{"ports":["3000"]}'
bad_ports "with a fraction"    '{"ports":[3000.5]}'
bad_ports "empty array"        '{"ports":[]}'
bad_ports "nine ports"         '{"ports":[1,2,3,4,5,6,7,8,9]}'
bad_ports "body not an object" '[3000]'
bad_ports "invalid JSON"       '{"ports":[3000'

t_begin "after the refused creates the app has no sandbox"
api GET "/v1/apps/$APP2"
expect_status 200 && expect_jq '.current_sandbox_id == null' "no current_sandbox_id"
left=$(docker ps -aq --filter "label=sandboxd.app=$APP2")
[[ -z $left ]] || t_err "containers exist for $APP2: $left"
t_end

bad "PATCH name empty"                  400 invalid_request PATCH "/v1/apps/$APP" '{"name":""}'
bad "PATCH name is a number"            400 invalid_request PATCH "/v1/apps/$APP" '{"name":5}'
bad "PATCH tags not an array"           400 invalid_request PATCH "/v1/apps/$APP" '{"tags":"x"}'
bad "PATCH name 201 bytes"              400 invalid_request PATCH "/v1/apps/$APP" "{\"name\":\"$name201\"}"
bad "PATCH invalid JSON"                400 invalid_request PATCH "/v1/apps/$APP" '{"name"'

t_begin "the refused PATCHes changed nothing; a valid one works"
api GET "/v1/apps/$APP"
expect_status 200 && expect_json .name bad-a
api PATCH "/v1/apps/$APP" '{"name":"renamed","tags":["x"]}'
expect_status 200 && expect_json .name renamed && expect_json '.tags | tostring' '["x"]'
t_end

t_begin "the daemon is still healthy"
daemon_alive || t_err "the daemon process is gone"
expect_healthz
api GET /v1/apps
expect_status 200
t_end

finish
