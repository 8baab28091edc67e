/*
 * publish: an app's production build as a release, served at its own
 * host names (docs/publish.md, docs/design.md "Publish").
 *
 * A release is built from the app's current files, a commit of its
 * repository or a snapshot, in a build container of its own (the
 * sandbox's image, limits and egress; never the preview's container),
 * into <data>/releases/<app id>/<release id>/.  A static release
 * (an output directory of files) is served by the edge from memory
 * (src/site); a server release runs in a production container from
 * its files, read-only, always on.  The app's publication names its
 * active release; switching it (publish, rollback) is one row and one
 * pointer, never a rebuild.
 *
 * Host names: "<label>.<SANDBOXD_PUBLISH_DOMAIN>" for every published
 * app, and the app's verified custom domains.  The edge asks
 * publish_route() for every request whose Host is neither the console
 * nor a preview; the table it reads is in memory under its own short
 * lock (hosts.c), never the store.
 *
 * Callers: the API's request threads, serve() (publish_init,
 * publish_recover, publish_stop, the periodic jobs), the edge's loop
 * (publish_route, publish_verify_token: no store, no Docker, no wait).
 * Errors are for the API's envelope (struct err).
 */
#ifndef PUBLISH_PUBLISH_H
#define PUBLISH_PUBLISH_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "sandbox/core.h"

struct site; /* site/site.h */

#define PUBLISH_DIR "releases" /* under the data directory */

/* Made by serve() before the edge and the API start (c->pub). */
int publish_init(struct core *c);
/*
 * At start, after core_reconcile: releases left "building" by a crash
 * are "failed" ("the daemon stopped during the build"), their build
 * containers and half-made directories removed; every publication's
 * active release is loaded (static) or its container made running
 * (server); verified domains are in the host table.
 */
void publish_recover(struct core *c);
/* Stops the builds under way (they fail) and frees c->pub. */
void publish_stop(struct core *c);

/* --- releases (release.c, build.c, source.c) --------------------------- */

struct publish_request {
	const char *commit;   /* NULL: the current files; else a commit */
	const char *snapshot; /* NULL; else a snapshot id of the app */
	const char *label;    /* NULL: keep/derive; else the host label */
	const char *actor;    /* who asked (a token's name) */
};
/*
 * Starts a release of app: 202 with out "building"; the build runs on a
 * thread of its own and, when it succeeds, the release becomes the
 * active one (the previous keeps serving until then, and when the build
 * fails).  409 publish_in_progress while one builds, 409 host_taken when
 * the label is another app's, 400 for a bad commit, snapshot or label,
 * 507 insufficient_storage.
 */
int publish_start(struct core *c, const struct app *app,
                  const struct publish_request *r, struct release *out,
                  struct err *e);
/*
 * PATCH …/publish: visibility "public" or "private" (NULL keeps it), the
 * label (NULL keeps it; 409 host_taken, 400 for a bad one).  The
 * publication is made when the app has none yet.  out: the new row.
 */
int publish_configure(struct core *c, const struct app *app,
                      const char *visibility, const char *label,
                      struct publication *out, struct err *e);
/* Makes release (a kept "ready" one of app) the active one: no build. */
int publish_rollback(struct core *c, const struct app *app,
                     const char *release_id, const char *actor, struct err *e);
/* Stops serving app (its host names answer "not published"); the
 * releases are kept. */
int publish_unpublish(struct core *c, const struct app *app, const char *actor,
                      struct err *e);
/* The app is gone for good (CORE_APP_DELETED, the trash's purge):
 * its containers, releases, domains and rows. */
void publish_app_gone(struct core *c, const char *app_id);
/* The app went to the trash / came back: stop / start serving it. */
void publish_app_trashed(struct core *c, const char *app_id);
void publish_app_restored(struct core *c, const char *app_id);
/* The release's build log: its path (for the API's reader). */
int publish_log_path(struct core *c, const struct release *r, char *out,
                     size_t len);
/* Bytes every release of app holds on disk (disk use, budgets). */
int64_t publish_app_bytes(struct core *c, const char *app_id);

/* --- the edge's view (hosts.c) ----------------------------------------- */

enum publish_kind {
	PUBLISH_NONE,   /* no published app has this host */
	PUBLISH_STATIC, /* answer from t->site */
	PUBLISH_SERVER, /* proxy to t->addr */
	PUBLISH_DOWN,   /* published, but cannot answer now: t->message */
};

struct publish_target {
	enum publish_kind kind;
	char app_id[ULID_LEN + 1];
	char release_id[ULID_LEN + 1];
	struct site *site;       /* STATIC: a reference, site_unref() it */
	bool spa;                /* STATIC: unknown paths get /index.html */
	struct sockaddr_in addr; /* SERVER: the production container */
	bool private_gate;       /* the private-preview gate applies */
	int retry_after_s;       /* DOWN */
	char message[256];       /* DOWN: what is wrong, for the page */
};
/* Resolves a Host (any case, ":port" ignored).  Thread-safe, no wait;
 * counts a request for the app's metrics. */
void publish_route(struct core *c, const char *host, size_t len,
                   struct publish_target *t);
/*
 * The HTTP check of a custom domain: "/.well-known/sandboxd-domain/"
 * followed by the token.  True (and the token's answer in out: the
 * token itself, text/plain) when host is a custom domain with that
 * token (pending or verified).
 */
bool publish_verify_token(struct core *c, const char *host, size_t hostlen,
                          const char *token, size_t toklen, char *out,
                          size_t outlen);

/* Requests answered per published app (the host table's counters, from
 * the start): for /metrics.  Fills at most max; the count. */
struct publish_stat {
	char app_id[ULID_LEN + 1];
	char label[64];
	uint64_t requests;
};
size_t publish_stats(struct core *c, struct publish_stat *out, size_t max);

/* --- server releases (runner.c) ---------------------------------------- */

/* Makes release's production container running and answering (waits up
 * to its health timeout); *addr its address. */
int publish_runner_start(struct core *c, const struct release *r,
                         struct sockaddr_in *addr, struct err *e);
void publish_runner_stop(struct core *c, const char *release_id);
/* One pass of the health checks (a periodic job). */
void publish_health_pass(struct core *c);

/* --- custom domains (domain.c, verify.c, traefik.c) -------------------- */

/* 400 invalid_request (not a DNS name, an IP literal, the console's or a
 * preview's host, under PUBLISH_DOMAIN), 409 host_taken. Starts "pending"
 * and checks at once. */
int publish_domain_add(struct core *c, const struct app *app, const char *host,
                       const char *actor, struct domain *out, struct err *e);
int publish_domain_remove(struct core *c, const struct app *app,
                          const char *host, const char *actor, struct err *e);
/* Checks a domain now (DNS, else the HTTP check); out its new state. */
int publish_domain_verify(struct core *c, const struct app *app,
                          const char *host, struct domain *out, struct err *e);
/* One pass over the pending domains (a periodic job). */
void publish_domain_pass(struct core *c);
/*
 * The edge's table of custom domains, from the rows, and Traefik's file
 * (at start, before the edge; publish_recover calls it), and its end
 * (publish_stop).
 */
void publish_domain_recover(struct core *c);
void publish_domain_stop(struct core *c);
/*
 * The app whose verified custom domain host is (any case, ":port"
 * ignored): true and its id in app_id.  Thread-safe, no wait: the host
 * table (publish_route) asks it for a host that is no label.
 */
bool publish_domain_app(struct core *c, const char *host, size_t len,
                        char app_id[ULID_LEN + 1]);
/*
 * The DNS records that make d point here: a the A (or AAAA) record's
 * value (this server's first public address), cname the CNAME's (the
 * app's "<label>.<PUBLISH_DOMAIN>"); "" when not known.
 */
void publish_domain_records(struct core *c, const struct domain *d, char a[46],
                            char cname[DOMAIN_HOST_MAX + 1]);
/* The app is gone for good: its domains (publish_app_gone calls it). */
void publish_domain_app_gone(struct core *c, const char *app_id);

/* "<label>.<PUBLISH_DOMAIN>" of app, for URLs (no scheme). */
void publish_app_host(struct core *c, const char *label, char *out, size_t len);

#endif
