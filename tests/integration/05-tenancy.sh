#!/usr/bin/env bash
# Tenancy: with two tokens a=… and b=…, an app (and its sandbox)
# made with token a does not exist for token b: 404 on every call, absent
# from b's list, and b's attempts change nothing for a.
. "$(dirname "$0")/lib.sh"
need_docker
# (The daemon refuses tokens shorter than 8 characters, so not "tok-a-tenant".)
start_daemon SANDBOXD_API_TOKENS=a=tok-a-tenant,b=tok-b-tenant ||
	bail "the daemon did not come up (exit status ${DAEMON_RC:-none})"

TOKEN=tok-a-tenant
t_begin "token a creates an app with a sandbox"
create_app tenant-a && create_sandbox "$APP_ID"
t_end
A_APP=${APP_ID:-01ARZ3NDEKTSV4RRFFQ69G5FAV}
A_SB=${SB_ID:-01ARZ3NDEKTSV4RRFFQ69G5FAV}

TOKEN=tok-b-tenant
t_begin "token b creates its own app"
create_app tenant-b
B_APP=${APP_ID:-}
t_end

# as_b NAME STATUS METHOD PATH [BODY]: a call with token b must get STATUS.
as_b() {
	local name=$1 st=$2
	shift 2
	t_begin "token b: $name"
	api_as tok-b-tenant "$@"
	expect_status "$st"
	[[ $st == 404 ]] && expect_envelope not_found
	t_end
}
as_b "GET a's app is 404"               404 GET "/v1/apps/$A_APP"
as_b "PATCH a's app is 404"             404 PATCH "/v1/apps/$A_APP" '{"name":"stolen"}'
as_b "POST a's app sandbox is 404"      404 POST "/v1/apps/$A_APP/sandbox" '{"ports":[3000]}'
as_b "GET a's sandbox is 404"           404 GET "/v1/sandboxes/$A_SB"
as_b "stop a's sandbox is 404"          404 POST "/v1/sandboxes/$A_SB/stop"
as_b "start a's sandbox is 404"         404 POST "/v1/sandboxes/$A_SB/start"
as_b "DELETE a's sandbox is 404"        404 DELETE "/v1/sandboxes/$A_SB"
as_b "DELETE a's app is 404"            404 DELETE "/v1/apps/$A_APP"

t_begin "token b's list has only b's app"
api_as tok-b-tenant GET /v1/apps
expect_status 200 && expect_jq "[.apps[].id] == [\"$B_APP\"]" "apps == [$B_APP]"
t_end

t_begin "token a's list has only a's app"
api_as tok-a-tenant GET /v1/apps
expect_status 200 && expect_jq "[.apps[].id] == [\"$A_APP\"]" "apps == [$A_APP]"
t_end

t_begin "token a's app and sandbox are untouched by b"
api_as tok-a-tenant GET "/v1/apps/$A_APP"
expect_status 200 && expect_json .name tenant-a && expect_json .current_sandbox_id "$A_SB"
api_as tok-a-tenant GET "/v1/sandboxes/$A_SB"
expect_status 200 && expect_json .status running
if c=$(container_of "$A_SB"); then
	container_running "$c" || t_err "a's container is not running any more"
else
	t_err "a's container is gone"
fi
t_end

t_begin "token a cannot see b's app either"
api_as tok-a-tenant GET "/v1/apps/$B_APP"
expect_status 404 && expect_envelope not_found
t_end

finish
