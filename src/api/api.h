/*
 * The /v1 API: what handlers see.  A handler gets a parsed request (path
 * ids already validated and canonical, the caller authenticated, the body
 * complete and within limits) and fills a response.  Handlers run on the
 * server's request threads and may block on Docker.
 */
#ifndef API_API_H
#define API_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/core.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"
#include "lib/ulid.h"

struct api;
struct auth;
struct evlog_sub;

struct req {
	struct auth *auth; /* the server's (api_auth) */
	struct core *core;
	const char *method;
	const char *path;
	char ids[2][ULID_LEN + 1]; /* {id} segments of the path, in order */
	char name[80];             /* a {name} segment, unchecked */
	void *conn;                /* the server's connection, for api_query */
	struct buf body;
	bool body_too_big;
	char owner[64]; /* the tenant: the caller's token name */
	bool operator;  /* may change instance-wide settings (auth_operator) */
	/* Authentication is off and the request came straight from a
	 * loopback client (server.c): it needs no credentials. */
	bool auth_off;
	char request_id[ULID_LEN + 1];
	/* How the caller authenticated (server.c, signin.c). */
	enum api_via { API_VIA_NONE, API_VIA_TOKEN, API_VIA_SESSION } via;
	char session[65]; /* a session's token hash (hex) */
	char csrf[64];    /* its CSRF token */
	int64_t session_expires;
	bool https;           /* PREVIEW_TLS, or X-Forwarded-Proto: https */
	char client[48];      /* the address the login limit counts */
	char set_cookie[256]; /* a Set-Cookie to send, or "" */
	void *upgrade;        /* server.c: a 101 answered, its state */
};

struct resp {
	int status;
	struct buf body;
	const char *content_type;
	char allow[64]; /* for 405 */
	char etag[72];  /* an ETag header ("" none), quotes included */
	struct evlog_sub *stream; /* an event stream to send instead of body */
	/*
	 * Another event stream (events.c): read as evlog_sub_read (bytes,
	 * 0 after suspending the connection, -1 at its end); free once the
	 * response is done.
	 */
	struct api_sse {
		ssize_t (*read)(void *arg, char *buf, size_t max);
		void (*free)(void *arg);
		void *arg;
	} sse;
	/*
	 * A WebSocket (terminal.c): when attach is set, the answer is 101
	 * with accept as Sec-WebSocket-Accept, and once upgraded attach gets
	 * the socket, the bytes read past the head and done(done_arg) to call
	 * once it is finished with the socket; when the connection ends
	 * before the upgrade completes, abandon(arg) instead (if set).
	 */
	struct api_upgrade {
		void (*attach)(void *arg, int fd, const uint8_t *extra,
		               size_t len, void (*done)(void *),
		               void *done_arg);
		void (*abandon)(void *arg);
		void *arg;
		char accept[32];
	} upgrade;
	int retry_after;             /* seconds, for 429; 0: none */
	char trash_id[ULID_LEN + 1]; /* a delete kept in the trash, or "" */
	/*
	 * A body made while it is sent, instead of body (export.c): read
	 * gives up to max bytes (their count), 0 at its end, -1 when it
	 * cannot go on (the response then ends unfinished); free releases
	 * arg once the response is done.  read runs on a server thread, a
	 * bounded step a call, only when the client can take more.
	 */
	struct api_pull {
		ssize_t (*read)(void *arg, char *buf, size_t max);
		void (*free)(void *arg);
		void *arg;
	} pull;
	char disposition[160]; /* a Content-Disposition header, or "" */
};

typedef void (*api_handler)(struct req *, struct resp *);

/*
 * A route: each handler file exports its own table, ended by a row whose
 * method is NULL, and routes.c matches them in one fixed order.
 */
struct route {
	const char *method;
	const char *pattern; /* "{id}" matches one ULID segment */
	api_handler fn;
	bool open;       /* no token needed */
	size_t max_body; /* 0: API_MAX_BODY_BYTES */
	bool raw_body;   /* the body is bytes, not JSON (api/guard.h) */
};

extern const struct route health_routes[], signin_routes[], status_routes[],
    metrics_routes[], presets_routes[], apps_routes[], trash_routes[],
    pvlinks_routes[], sandboxes_routes[], processes_routes[], files_routes[],
    tasks_routes[], agents_routes[], spend_routes[], settings_routes[],
    config_routes[], export_routes[], git_routes[], gitpush_routes[],
    gitcreds_routes[], tokens_routes[], events_routes[], snapshots_routes[],
    terminal_routes[], recipes_routes[], publish_routes[], domains_routes[],
    releaselog_routes[], nodes_routes[];

/* Replies: set status and body.  reply_json steals v. */
void api_reply_json(struct resp *w, int status, struct jv *v);
void api_reply_text(struct resp *w, int status, const char *text);
void api_reply_empty(struct resp *w, int status);
void api_reply_err(struct resp *w, const struct err *e);
/* o[key] = t (Unix seconds) as an RFC 3339 UTC string. */
void api_set_time(struct jv *o, const char *key, int64_t t);
/* body[key] (body may be NULL): absent or null gives *out NULL; a string
 * of 1..max bytes without NUL gives it (borrowed from body); anything
 * else is answered 400 invalid_request and gives -1. */
int api_opt_str(struct resp *w, const struct jv *body, const char *key,
                size_t max, const char **out);
/* The same, or null when t is 0 (never happened). */
void api_set_time_or_null(struct jv *o, const char *key, int64_t t);
void api_fail(struct resp *w, int status, const char *code, const char *fmt,
              ...) __attribute__((format(printf, 4, 5)));

/*
 * A query parameter, decoded; NULL when absent.  A value containing NUL
 * is answered 400 here and returns NULL with *bad set.
 */
const char *api_query(struct req *r, struct resp *w, const char *key,
                      bool *bad);
/*
 * The scope a credential or settings call acts on, from ?scope=: the
 * caller's tenant (*owner = r->owner; no scope, or scope=tenant) or the
 * instance-wide defaults (*owner = "", scope=instance, operators only).
 * -1 with the answer in w: 400 for another value, 403 operator_only for
 * a non-operator's scope=instance.
 */
int api_scope(struct req *r, struct resp *w, const char **owner);
/* A raw reply body (copied). */
void api_reply_bytes(struct resp *w, int status, const char *content_type,
                     const void *data, size_t len);

/*
 * The body as a JSON object.  An empty body gives NULL with no error when
 * optional; anything else that is not one JSON object is answered with
 * 400 (or 413) and returns -1.
 */
int api_body_object(struct req *r, struct resp *w, bool optional,
                    struct jv **out);

/* A request header's value; NULL when absent. */
const char *api_header(struct req *r, const char *name);
/* Suspend/resume of a streaming response's connection (arg: r->conn). */
void api_stream_suspend(void *conn);
void api_stream_resume(void *conn);

/*
 * An event of the app app_id on its timeline (timeline/timeline.h), by
 * the caller (api_dispatch set the thread's actor): payload (freed;
 * NULL none) and a message made by fmt.
 */
void api_note(struct req *r, const char *app_id, const char *type,
              const char *sandbox_id, struct jv *payload, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The server's authentication (api/auth.h): its tokens, its operators. */
struct auth *api_auth(const struct req *r);

/* Loads the sandbox named in the path for this tenant, or answers 404. */
int api_load_sandbox(struct req *r, struct resp *w, struct sandbox *sb);
/*
 * Loads the app named in the path (r->ids[0]) for this tenant into a:
 * 0, or -1 with 404 not_found "no such app" (none, or another tenant's)
 * or 500 internal "cannot read the app" in w.
 */
int api_load_app(struct req *r, struct resp *w, struct app *a);
/*
 * api_load_app, then the app's sandbox into sb: 1 when it has one, 0
 * when it has none (nothing answered), -1 answered (404, or 500
 * internal "cannot read the app").
 */
int api_load_app_sandbox(struct req *r, struct resp *w, struct app *a,
                         struct sandbox *sb);

/* Handlers, one file per resource. */
void health_get(struct req *, struct resp *);
void status_get(struct req *, struct resp *);
void metrics_get(struct req *, struct resp *);
void apps_create(struct req *, struct resp *);
void apps_list(struct req *, struct resp *);
void apps_get(struct req *, struct resp *);
void apps_patch(struct req *, struct resp *);
void apps_delete(struct req *, struct resp *);
void apps_export(struct req *, struct resp *);
void trash_list(struct req *, struct resp *);
void trash_get(struct req *, struct resp *);
void trash_restore_post(struct req *, struct resp *);
void trash_delete(struct req *, struct resp *);
void snapshots_create(struct req *, struct resp *);
void snapshots_create_ref(struct req *, struct resp *);
void snapshots_list_app(struct req *, struct resp *);
void snapshots_list(struct req *, struct resp *);
void snapshots_get(struct req *, struct resp *);
void snapshots_delete(struct req *, struct resp *);
void apps_restore(struct req *, struct resp *);
void apps_fork(struct req *, struct resp *);
void sandboxes_create(struct req *, struct resp *);
void sandboxes_get(struct req *, struct resp *);
void sandboxes_delete(struct req *, struct resp *);
void sandboxes_stop(struct req *, struct resp *);
void sandboxes_start(struct req *, struct resp *);
void sandboxes_freeze(struct req *, struct resp *);
void sandboxes_patch(struct req *, struct resp *);
void presets_list(struct req *, struct resp *);
void recipes_list(struct req *, struct resp *);
void recipes_inspect(struct req *, struct resp *);
void recipes_apply(struct req *, struct resp *);
void processes_logs(struct req *, struct resp *);
void events_list(struct req *, struct resp *);
void events_stream(struct req *, struct resp *);
void processes_restart(struct req *, struct resp *);
void files_list(struct req *, struct resp *);
void files_content(struct req *, struct resp *);
void files_put(struct req *, struct resp *);
void files_delete(struct req *, struct resp *);
void files_move(struct req *, struct resp *);
void tasks_create(struct req *, struct resp *);
void tasks_list(struct req *, struct resp *);
void tasks_get(struct req *, struct resp *);
void tasks_cancel(struct req *, struct resp *);
void tasks_revert(struct req *, struct resp *);
void tasks_events(struct req *, struct resp *);
void agents_list(struct req *, struct resp *);
void agents_set_key(struct req *, struct resp *);
void agents_delete_key(struct req *, struct resp *);
void agents_disconnect(struct req *, struct resp *);
void agents_oauth_start(struct req *, struct resp *);
void agents_oauth_finish(struct req *, struct resp *);
void spend_get(struct req *, struct resp *);
void spend_patch(struct req *, struct resp *);
/* {"spent":…,"budget":…|null,"budget_source":…} of an app (spend.c). */
struct jv *api_app_spend_json(struct core *c, const char *app_id);
/* PATCH /v1/apps/{id} "own_model_calls": a budget with a limit, or null
 * (opted out).  0, or -1 with e set. */
int api_own_calls_parse(const struct jv *v, struct store_budget *out,
                        struct err *e);
void settings_get(struct req *, struct resp *);
void settings_patch(struct req *, struct resp *);
void config_list(struct req *, struct resp *);
void config_get(struct req *, struct resp *);
void config_put(struct req *, struct resp *);
void config_delete(struct req *, struct resp *);
void apps_git_status(struct req *, struct resp *);
void apps_git_diff(struct req *, struct resp *);
void apps_git_commit(struct req *, struct resp *);
void apps_preview_link(struct req *, struct resp *);
void apps_preview_revoke(struct req *, struct resp *);
void apps_git_push(struct req *, struct resp *);
void gitcreds_create(struct req *, struct resp *);
void gitcreds_list(struct req *, struct resp *);
void gitcreds_delete(struct req *, struct resp *);
void signin_status(struct req *, struct resp *);
void signin_setup(struct req *, struct resp *);
void signin_login(struct req *, struct resp *);
void signin_logout(struct req *, struct resp *);
void signin_password(struct req *, struct resp *);

/*
 * Console sessions for server.c (signin.c).  signin_session: the live
 * session of a Cookie header (one of its session cookies, whichever the
 * store knows: a forged one beside it does not sign out), into r (via,
 * owner "default",
 * session, csrf; renewed when due, with a new Set-Cookie); 0, or -1
 * when none.  signin_csrf: a cookie-authenticated write carries the
 * session's X-CSRF-Token and a matching Origin (0), else -1 with
 * 403 csrf_failed in w.  signin_origin: only the Origin part.
 */
int signin_session(struct req *r, const char *cookie);
int signin_csrf(struct req *r, struct resp *w);
int signin_origin(struct req *r, struct resp *w);
void domains_list(struct req *, struct resp *);
void domains_add(struct req *, struct resp *);
void domains_get(struct req *, struct resp *);
void domains_delete(struct req *, struct resp *);
void domains_verify(struct req *, struct resp *);
void tokens_list(struct req *, struct resp *);
void tokens_create(struct req *, struct resp *);
void tokens_delete(struct req *, struct resp *);

/*
 * Git checks shared by apps, credentials and push (gitcreds.c).  A host
 * is a DNS name or an IPv4 address with an optional :port.  A URL is
 * https:// (http:// too with SANDBOXD_GIT_ALLOW_HTTP=1, for tests) with
 * a host, no user information, no whitespace, at most GIT_URL_MAX bytes
 * (0, or -1 with a 400 in e).  A branch matches
 * [A-Za-z0-9][A-Za-z0-9._/-]{0,254} without "..", and is a valid ref.
 */
bool api_git_host_ok(const char *host, size_t len);
int api_git_url_check(const char *url, size_t len, struct err *e);
bool api_git_branch_ok(const char *branch, size_t len);
#define GIT_CRED_BODY_BYTES (16u << 10) /* a git-credentials body */

/* Input limits of the agents and settings handlers (docs/limits.md). */
#define AGENT_KEY_MAX_BYTES        4096        /* an API key */
#define AGENT_KEY_BODY_BYTES       (64u << 10) /* the body that carries it */
#define AGENT_OAUTH_CODE_MAX_BYTES 4096        /* an authorization code */
#define AGENT_OAUTH_STATE_MAX      128         /* a state as pasted back */
#define AGENT_OAUTH_URL_MAX        8192        /* the authorize URL */
#define AGENT_OAUTH_PENDING_MAX    64  /* sign-ins started, not finished */
#define AGENT_OAUTH_PENDING_SCOPE  4   /* of those, one scope's */
#define AGENT_OAUTH_PENDING_S      900 /* how long one stays pending */

/* Limits of a release's build log as the API gives it (releaselog.c,
 * docs/limits.md). */
#define RELEASELOG_LINE_MAX      4096         /* a line's bytes; more: cut */
#define RELEASELOG_READ_BYTES    (4u << 10)   /* of the file, a step */
#define RELEASELOG_OUT_MAX       (256u << 10) /* a step's events, held */
#define RELEASELOG_SKIP_STEPS    64 /* steps a read, none making an event */
#define RELEASELOG_TEXT_MAX      (4u << 20) /* text/plain: the last bytes */
#define RELEASELOG_FOLLOWERS_MAX 64         /* open log streams, in all */
#define RELEASELOG_HEARTBEAT_MS  15000      /* a quiet stream's comment */
#define RELEASELOG_POLL_MS       500 /* the release's row, read at most */

/*
 * A build log made into text/event-stream events, one `event: log` a
 * line (its id the file offset after it, for Last-Event-ID): loglines.c,
 * pure, for releaselog.c, the unit tests and a fuzz target.  Lines end at LF,
 * CR or CRLF; escape sequences are dropped and other control bytes shown as
 * '?', so a build cannot drive a terminal that prints them; a line past
 * RELEASELOG_LINE_MAX bytes is cut (" [cut]") and its rest skipped.
 */
struct api_loglines {
	char line[RELEASELOG_LINE_MAX + 1];
	size_t len;
	bool cut;    /* the line passed the limit: skip to its end */
	bool cr;     /* the last byte was CR (a following LF is the same end) */
	int esc;     /* 0; 1 after ESC; 2 in a CSI sequence */
	int64_t off; /* the file offset of the next byte */
};
/* Feeds n bytes; events go to out.  -1 when out is full (nothing of
 * this call is then consumed: l and out are as before). */
int api_loglines_feed(struct api_loglines *l, const char *p, size_t n,
                      struct buf *out);
/* The last line, when it has no end yet (the log is finished). */
int api_loglines_flush(struct api_loglines *l, struct buf *out);

/*
 * Whether an If-Match or If-None-Match value lists the entity tag whose
 * opaque part (between the quotes) is etag: 1 yes, 0 no, -1 when the
 * value is malformed.  "*" lists every tag.  A weak tag (W/"...") is
 * listed only when weak (If-None-Match compares weakly, If-Match
 * strongly: RFC 9110, 13.1).
 */
int api_etag_listed(const char *value, const char *etag, bool weak);

/* JSON of the objects, shared by handlers. */
/* A release as docs/api.md shows it; active: whether it serves
 * (publish.c; the build log's end event too). */
struct jv *api_release_json(const struct release *r, bool active);
struct jv *api_app_json(const struct core *c, const struct app *a);
/* A preview URL of sandbox id on port (the edge's host name). */
void api_preview_url(const struct core *c, const char *id, int port, char *out,
                     size_t len);
/* Asks a running sandbox's supervisor for its processes and health. */
struct jv *api_sandbox_json(struct core *c, const struct sandbox *sb);

#endif
