/*
 * struct err helpers, and the table of every error code of the API.
 *
 * The table is data for people and for scripts/lint, which reads the
 * .code fields of this file: it is sorted by status, then code, and says
 * once what each code means, as docs/api.md does at more length.
 * err_set() does not look codes up: the lint check sees every literal
 * at build time, and a code the git helper forwards from its own
 * err_set() is one of them.  Rejected: an enum of codes at every call
 * site (about 100 sites to rewrite for what a grep already proves).
 */
#include "lib/err.h"

#include <stdarg.h>
#include <stdio.h>

const struct err_code err_codes[] = {
    {.code = "invalid_request",
     .status = 400,
     .meaning = "bad JSON, a wrong type, a missing field or a bad value"},
    {.code = "invalid_password",
     .status = 401,
     .meaning = "a console sign-in or password change with the wrong "
                "password"},
    {.code = "unauthorized",
     .status = 401,
     .meaning = "a missing or wrong API token"},
    {.code = "csrf_failed",
     .status = 403,
     .meaning = "a write from another origin or site (Origin, "
                "Sec-Fetch-Site), or a cookie-signed one without the "
                "session's X-CSRF-Token"},
    {.code = "host_not_allowed",
     .status = 403,
     .meaning = "with authentication off, a Host that is not loopback "
                "(DNS rebinding)"},
    {.code = "join_token_invalid",
     .status = 403,
     .meaning = "a node's enrollment with a join token that is unknown, "
                "used already or expired"},
    {.code = "operator_only",
     .status = 403,
     .meaning = "scope=instance (the instance-wide agent credentials "
                "and default models), a lifecycle setting or an API "
                "token call from a token that is no operator's"},
    {.code = "setup_code_invalid",
     .status = 403,
     .meaning = "the console's first password with a wrong or no setup "
                "code"},
    {.code = "ticket_invalid",
     .status = 403,
     .meaning = "a terminal's WebSocket with a ticket that is unknown, "
                "used already or expired"},
    {.code = "node_not_found",
     .status = 404,
     .meaning = "a node name no node of the cluster has"},
    {.code = "not_found",
     .status = 404,
     .meaning = "an unknown path or id, or another tenant's"},
    {.code = "unknown_op",
     .status = 404,
     .meaning = "a node channel op the node or control plane does not "
                "serve (a version mismatch)"},
    {.code = "method_not_allowed",
     .status = 405,
     .meaning = "a known path with the wrong method"},
    {.code = "conflict",
     .status = 409,
     .meaning = "a duplicate, or the wrong state for the action"},
    {.code = "host_taken",
     .status = 409,
     .meaning = "a host name (a publish label or a custom domain) "
                "another app has"},
    {.code = "manifest_is_users",
     .status = 409,
     .meaning = "a detection that would replace a sandbox.yaml sandboxd "
                "did not write"},
    {.code = "no_checkpoint",
     .status = 409,
     .meaning = "a revert of a task that has no checkpoint"},
    {.code = "no_snapshot",
     .status = 409,
     .meaning = "a restore elsewhere of a sandbox whose app has no "
                "snapshot"},
    {.code = "node_busy",
     .status = 409,
     .meaning = "a node being drained or joined, or not ready for "
                "what was asked (also 504: a join that did not finish)"},
    {.code = "node_not_down",
     .status = 409,
     .meaning = "a restore elsewhere of a sandbox whose node is up"},
    {.code = "not_published",
     .status = 409,
     .meaning = "an unpublish of an app that serves no release"},
    {.code = "not_swarm",
     .status = 409,
     .meaning = "a nodes call with SANDBOXD_ORCHESTRATOR=docker (one "
                "server), or a swarm start on an engine that is no "
                "swarm manager"},
    {.code = "password_set",
     .status = 409,
     .meaning = "a console setup when a password is set already"},
    {.code = "preview_no_sandbox",
     .status = 409,
     .meaning = "a preview link for an app that has no sandbox"},
    {.code = "publish_in_progress",
     .status = 409,
     .meaning = "a release of the app is being built"},
    {.code = "refuses_default_branch",
     .status = 409,
     .meaning = "a push to main, master or the import branch"},
    {.code = "release_not_ready",
     .status = 409,
     .meaning = "a rollback to a release that failed or is building"},
    {.code = "revert_failed",
     .status = 409,
     .meaning = "the supervisor refused or failed a task's revert"},
    {.code = "sandbox_not_running",
     .status = 409,
     .meaning = "a task for a sandbox that is creating or in error"},
    {.code = "sandbox_remote",
     .status = 409,
     .meaning = "an operation not yet done across nodes, on a sandbox "
                "whose workspace is on another node"},
    {.code = "snapshot_busy",
     .status = 409,
     .meaning = "a snapshot that is still being taken or restored"},
    {.code = "snapshot_limit",
     .status = 409,
     .meaning = "the app keeps SANDBOXD_SNAPSHOTS_MAX_PER_APP snapshots "
                "already"},
    {.code = "task_in_progress",
     .status = 409,
     .meaning = "a task already runs in the sandbox"},
    {.code = "terminal_limit",
     .status = 409,
     .meaning = "a terminal past SANDBOXD_TERMINAL_MAX_PER_SANDBOX or "
                "SANDBOXD_TERMINAL_MAX_PER_TENANT sessions open"},
    {.code = "trash_busy",
     .status = 409,
     .meaning = "a restore or purge of a trash entry another call is "
                "moving"},
    {.code = "trash_name_taken",
     .status = 409,
     .meaning = "a restore whose app name a newer app has; restore "
                "with another name"},
    {.code = "unsafe_repo",
     .status = 409,
     .meaning = "the app's repository is not laid out as it should be"},
    {.code = "unsafe_repo_config",
     .status = 409,
     .meaning = "the app's repository config sets a key that runs code"},
    {.code = "precondition_failed",
     .status = 412,
     .meaning = "a file write whose If-Match or If-None-Match does not "
                "hold"},
    {.code = "payload_too_large",
     .status = 413,
     .meaning = "a request body or a file over its limit"},
    {.code = "too_large",
     .status = 413,
     .meaning = "a task's prompt over TASK_MAX_PROMPT_BYTES"},
    {.code = "unsupported_media_type",
     .status = 415,
     .meaning = "a write whose body is not JSON (a file's content: of a "
                "type a web page may send anywhere, text/plain, a form, "
                "multipart or none)"},
    {.code = "rate_limited",
     .status = 429,
     .meaning = "too many failed console sign-ins, or too many "
                "connections to the API through the console host (the "
                "edge answers it; Retry-After says when to try again)"},
    {.code = "internal",
     .status = 500,
     .meaning = "a bug or a failed disk write"},
    {.code = "docker_error",
     .status = 502,
     .meaning = "the Docker engine refused the operation"},
    {.code = "git_import_failed",
     .status = 502,
     .meaning = "an app's repository could not be cloned (also 400, 409, "
                "504 by reason)"},
    {.code = "oauth_failed",
     .status = 502,
     .meaning = "the OAuth token endpoint refused or did not answer"},
    {.code = "sandbox_unavailable",
     .status = 502,
     .meaning = "the sandbox's supervisor does not answer"},
    {.code = "docker_unavailable",
     .status = 503,
     .meaning = "the Docker engine does not answer"},
    {.code = "event_streams_full",
     .status = 503,
     .meaning = "TL_SUBS_MAX event streams of apps' timelines are open"},
    {.code = "network_unavailable",
     .status = 503,
     .meaning = "the sandbox network or its egress rules are not in place"},
    {.code = "no_headroom",
     .status = 503,
     .meaning = "too little host memory to start the sandbox"},
    {.code = "node_down",
     .status = 503,
     .meaning = "a node agent (or, from a node, the control plane) does "
                "not answer on the node channel, or not with a "
                "certificate of this cluster"},
    {.code = "oauth_pending_full",
     .status = 503,
     .meaning = "AGENT_OAUTH_PENDING_MAX subscription sign-ins of all "
                "tenants are pending"},
    {.code = "preview_links_full",
     .status = 503,
     .meaning = "PVAUTH_CODES_MAX preview links of all tenants wait to "
                "be opened"},
    {.code = "revert_timeout",
     .status = 504,
     .meaning = "a task's revert did not finish within TASK_REVERT_WAIT_MS"},
    {.code = "insufficient_storage",
     .status = 507,
     .meaning = "the data filesystem is full"},
    {.code = "workspace_full",
     .status = 507,
     .meaning = "the workspace holds more than SANDBOXD_WORKSPACE_MAX_MB"},
};
const size_t err_ncodes = sizeof(err_codes) / sizeof(err_codes[0]);

int
err_set(struct err *e, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}
