/*
 * domain: an app's custom domains (publish.h, domain.h): the host's
 * checks, add, remove, verify, the pass over the pending ones, and the
 * in-memory table the edge reads.
 *
 * The rows are the truth (store/domains.c: the host is the primary key,
 * so a name is one app's across every tenant).  The edge never reads the
 * store: after every change the whole table is rebuilt from the rows and
 * swapped in under a short mutex (changes are rare; lookups are every
 * request for a host that is not a label), and the same rebuild writes
 * Traefik's file of the verified hosts.  One table per process: there is
 * one daemon, and serve() fills it (publish_domain_recover) before the
 * edge starts.
 *
 * A domain may be added before the app is published: it verifies the
 * same way, and its host answers "not published" until a release is
 * active.  Verification: DNS first (every address one of this server's,
 * or a CNAME chain through the app's own host), else the HTTP check
 * through each foreign address (a proxy or NAT in front of us); the
 * reason of a pending domain says what is missing.  A verified domain is
 * not checked by the pass again (a flapping resolver must not take a
 * live site down); a verify asked for re-checks it, and the edge
 * answers the HTTP check of a verified domain too (one behind a proxy
 * must pass it again).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <arpa/inet.h>

#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "publish/domain.h"
#include "publish/publish.h"
#include "timeline/timeline.h"

/* --- the host's checks (pure) ----------------------------------------- */

static bool
label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* Whether host is d or a name under it. */
static bool
at_or_under(const char *host, const char *d)
{
	size_t h = strlen(host), n = strlen(d);

	if (n == 0 || h < n || strcasecmp(host + h - n, d) != 0)
		return false;
	return h == n || host[h - n - 1] == '.';
}

/* Lower case, no trailing dot, only [a-z0-9.-] and RFC 1123 labels. */
static int
normalize(const char *in, char *out, struct err *e)
{
	size_t n = strlen(in), labels = 0;
	const char *p;

	if (n > 0 && in[n - 1] == '.')
		n--;
	if (n == 0 || n > DOMAIN_HOST_MAX)
		return ERR_BAD(e, "host must be a DNS name of 1 to %d bytes",
		               DOMAIN_HOST_MAX);
	for (size_t i = 0; i < n; i++)
		out[i] =
		    (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] + 32 : in[i]);
	out[n] = '\0';
	for (p = out;; labels++) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (!label_ok(p, len))
			return ERR_BAD(
			    e,
			    "host \"%.253s\" is not a DNS name: each "
			    "label is 1 to 63 of a-z, 0-9 and '-', not "
			    "starting or ending with '-'",
			    out);
		if (!dot)
			break;
		p = dot + 1;
	}
	if (labels < 1)
		return ERR_BAD(e,
		               "host \"%s\" needs at least two labels "
		               "(shop.example.com)",
		               out);
	return 0;
}

int
domain_host_check(const struct domain_names *n, const char *in,
                  char out[DOMAIN_HOST_MAX + 1], struct err *e)
{
	unsigned char a[sizeof(struct in6_addr)];
	char console[DOMAIN_HOST_MAX + 16], preview[DOMAIN_HOST_MAX + 16];
	const char *last;

	if (inet_pton(AF_INET6, in, a) == 1 || inet_pton(AF_INET, in, a) == 1)
		return ERR_BAD(e,
		               "host \"%s\" is an IP address: a custom "
		               "domain is a DNS name",
		               in);
	if (normalize(in, out, e) < 0)
		return -1;
	last = strrchr(out, '.') + 1;
	if (strspn(last, "0123456789") == strlen(last))
		return ERR_BAD(e,
		               "host \"%s\" is an IP address: a custom "
		               "domain is a DNS name",
		               out);
	if (at_or_under(out, "localhost"))
		return ERR_BAD(e, "host \"%s\" is this machine's own name",
		               out);
	snprintf(console, sizeof(console), "console.%s", n->preview_domain);
	snprintf(preview, sizeof(preview), "preview.%s", n->preview_domain);
	if (strcasecmp(out, console) == 0)
		return ERR_BAD(e, "host \"%s\" is the console's", out);
	if (at_or_under(out, preview))
		return ERR_BAD(e, "host \"%s\" is a preview's (under %s)", out,
		               preview);
	if (at_or_under(out, n->publish_domain))
		return ERR_BAD(e,
		               "host \"%s\" is under the publish domain %s: "
		               "that is the app's label's place (PATCH "
		               "/v1/apps/{id}/publish {\"label\"})",
		               out, n->publish_domain);
	return 0;
}

/* --- the edge's table -------------------------------------------------- */

struct dom_entry {
	char host[DOMAIN_HOST_MAX + 1]; /* "" an empty slot */
	char app_id[ULID_LEN + 1];
	char token[DOMAIN_TOKEN_HEX + 1];
	bool verified;
};

struct dom_table {
	size_t mask; /* slots - 1, a power of two minus one */
	struct dom_entry *slots;
};

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dom_table *table; /* under table_mu */
/* One rebuild at a time: two interleaved could swap in the older rows
 * last (and write Traefik's file from them). */
static pthread_mutex_t reload_mu = PTHREAD_MUTEX_INITIALIZER;

struct dom_list {
	struct domain *d;
	size_t n, cap;
};

static int
collect(const struct domain *d, void *arg)
{
	struct dom_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct domain *p = realloc(l->d, cap * sizeof(*p));
		if (!p)
			return -1;
		l->d = p;
		l->cap = cap;
	}
	l->d[l->n++] = *d;
	return 0;
}

static void
table_put(struct dom_table *t, const struct domain *d)
{
	size_t i = hash_fnv1a(d->host) & t->mask;

	while (t->slots[i].host[0])
		i = (i + 1) & t->mask;
	snprintf(t->slots[i].host, sizeof(t->slots[i].host), "%s", d->host);
	snprintf(t->slots[i].app_id, sizeof(t->slots[i].app_id), "%s",
	         d->app_id);
	snprintf(t->slots[i].token, sizeof(t->slots[i].token), "%s", d->token);
	t->slots[i].verified = strcmp(d->status, "verified") == 0;
}

static struct dom_table *
table_build(const struct dom_list *l)
{
	struct dom_table *t = calloc(1, sizeof(*t));
	size_t slots = 16;

	while (slots < l->n * 2)
		slots *= 2;
	if (t)
		t->slots = calloc(slots, sizeof(*t->slots));
	if (!t || !t->slots) {
		free(t);
		return NULL;
	}
	t->mask = slots - 1;
	for (size_t i = 0; i < l->n; i++)
		table_put(t, &l->d[i]);
	return t;
}

static void
table_free(struct dom_table *t)
{
	if (t) {
		free(t->slots);
		free(t);
	}
}

/* Traefik's file from the verified hosts of l. */
static void
write_traefik(struct core *c, const struct dom_list *l)
{
	const char **hosts = calloc(l->n + 1, sizeof(*hosts));
	int n = 0;

	if (!hosts)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->d[i].status, "verified") == 0)
			hosts[n++] = l->d[i].host;
	domain_traefik_write(c->cfg, hosts, n);
	free(hosts);
}

/* The table and Traefik's file, again from the rows. */
static int
domains_reload(struct core *c)
{
	struct dom_list l = {0};
	struct dom_table *t, *old;

	pthread_mutex_lock(&reload_mu);
	if (store_domain_list(c->store, NULL, collect, &l) < 0 ||
	    (t = table_build(&l)) == NULL) {
		pthread_mutex_unlock(&reload_mu);
		free(l.d);
		log_error("domains: cannot read the custom domains");
		return -1;
	}
	pthread_mutex_lock(&table_mu);
	old = table;
	table = t;
	pthread_mutex_unlock(&table_mu);
	table_free(old);
	write_traefik(c, &l);
	pthread_mutex_unlock(&reload_mu);
	free(l.d);
	return 0;
}

void
publish_domain_recover(struct core *c)
{
	domains_reload(c);
}

void
publish_domain_stop(struct core *c)
{
	(void)c;
	pthread_mutex_lock(&table_mu);
	table_free(table);
	table = NULL;
	pthread_mutex_unlock(&table_mu);
}

/* A Host header's name: lower case, no port, no trailing dot. */
static bool
host_key(const char *host, size_t len, char out[DOMAIN_HOST_MAX + 1])
{
	const char *colon = memchr(host, ':', len);

	if (colon)
		len = (size_t)(colon - host);
	if (len && host[len - 1] == '.')
		len--;
	if (len == 0 || len > DOMAIN_HOST_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		out[i] =
		    (char)((host[i] >= 'A' && host[i] <= 'Z') ? host[i] + 32
		                                              : host[i]);
	out[len] = '\0';
	return true;
}

/* Finds key under table_mu: a copy into out. */
static bool
table_find(const char *key, struct dom_entry *out)
{
	bool found = false;

	pthread_mutex_lock(&table_mu);
	if (table) {
		size_t i = hash_fnv1a(key) & table->mask;
		for (; table->slots[i].host[0]; i = (i + 1) & table->mask)
			if (strcmp(table->slots[i].host, key) == 0) {
				*out = table->slots[i];
				found = true;
				break;
			}
	}
	pthread_mutex_unlock(&table_mu);
	return found;
}

bool
publish_domain_app(struct core *c, const char *host, size_t len,
                   char app_id[ULID_LEN + 1])
{
	char key[DOMAIN_HOST_MAX + 1];
	struct dom_entry e;

	(void)c;
	if (!host_key(host, len, key) || !table_find(key, &e) || !e.verified)
		return false;
	memcpy(app_id, e.app_id, ULID_LEN + 1);
	return true;
}

bool
publish_verify_token(struct core *c, const char *host, size_t hostlen,
                     const char *token, size_t toklen, char *out, size_t outlen)
{
	char key[DOMAIN_HOST_MAX + 1];
	struct dom_entry e;

	(void)c;
	if (!host_key(host, hostlen, key) || !table_find(key, &e) ||
	    toklen != strlen(e.token) || memcmp(token, e.token, toklen) != 0 ||
	    outlen <= toklen)
		return false;
	/* The answer is the token: what proves the way is that the check's
	 * request, sent to where the name points, reached this table. */
	snprintf(out, outlen, "%s", e.token);
	return true;
}

/* --- checks ------------------------------------------------------------ */

/*
 * The effective PUBLISH_DOMAIN, as publish_init makes it: the setting,
 * else "apps.<PREVIEW_DOMAIN>".  Read from the configuration here, not
 * asked of publish.c, which calls this file (no call cycle).
 */
static void
publish_domain_name(struct core *c, char *out, size_t len)
{
	if (c->cfg->publish_domain[0])
		snprintf(out, len, "%s", c->cfg->publish_domain);
	else
		snprintf(out, len, "apps.%s", c->cfg->preview_domain);
}

/* The app's "<label>.<PUBLISH_DOMAIN>", "" when it was never published. */
static void
app_host(struct core *c, const char *app_id, char *out, size_t len)
{
	char pub[DOMAIN_HOST_MAX + 1];
	struct publication p;

	out[0] = '\0';
	if (store_publication_get(c->store, app_id, &p) != 0 || !p.label[0])
		return;
	publish_domain_name(c, pub, sizeof(pub));
	snprintf(out, len, "%s.%s", p.label, pub);
}

/* The HTTP check through each foreign address of dns. */
static bool
check_http(struct core *c, const struct domain *d, const struct domain_dns *dns,
           char *why, size_t len)
{
	for (int i = 0; i < dns->naddrs && i < 2; i++)
		if (domain_http_check(c->cfg, d->host, dns->addrs[i], d->token,
		                      why, len))
			return true;
	return false;
}

/* Checks d now: its status, method, reason and times. */
static void
check(struct core *c, struct domain *d)
{
	char ours[DOMAIN_ADDRS_MAX][46], target[DOMAIN_HOST_MAX + 1];
	char why[160];
	struct domain_dns dns;
	int nours = domain_public_addrs(c->cfg, ours, DOMAIN_ADDRS_MAX);
	bool ok;

	app_host(c, d->app_id, target, sizeof(target));
	domain_resolve(c->cfg, d->host, &dns);
	ok = domain_dns_verdict(d->host, &dns, (const char(*)[46])ours, nours,
	                        target, d->reason, sizeof(d->reason));
	snprintf(d->method, sizeof(d->method), "dns");
	if (!ok && dns.status == DOMAIN_DNS_OK && dns.naddrs > 0) {
		ok = check_http(c, d, &dns, why, sizeof(why));
		if (ok) {
			snprintf(d->method, sizeof(d->method), "http");
		} else {
			size_t n = strlen(d->reason);
			snprintf(d->reason + n, sizeof(d->reason) - n,
			         "; and the HTTP check: %s", why);
		}
	}
	d->checked_at = clock_now();
	if (ok) {
		d->reason[0] = '\0';
		if (strcmp(d->status, "verified") != 0)
			d->verified_at = d->checked_at;
		snprintf(d->status, sizeof(d->status), "verified");
	} else {
		d->method[0] = '\0';
		d->verified_at = 0;
		snprintf(d->status, sizeof(d->status), "pending");
	}
}

/* A timeline event of d's app: "<host> <what>". */
static void
note(struct core *c, const struct domain *d, const char *type, const char *what)
{
	struct tl_event ev = {.app_id = d->app_id, .type = type};
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct jv *o = jv_obj();

	jv_set_str(o, "host", d->host);
	if (d->method[0])
		jv_set_str(o, "method", d->method);
	ev.payload_json = tl_payload(o, pl, sizeof(pl));
	timeline_note(c->tl, &ev, "%s %s", d->host, what);
}

/* Checks d, writes the row, and on a change of status the table. */
static int
check_and_save(struct core *c, struct domain *d, struct err *e)
{
	char was[sizeof(d->status)];

	snprintf(was, sizeof(was), "%s", d->status);
	check(c, d);
	if (store_domain_update(c->store, d) != 0)
		return ERR_INTERNAL(e, "cannot write the domain");
	if (strcmp(was, d->status) != 0) {
		domains_reload(c);
		if (strcmp(d->status, "verified") == 0)
			note(c, d, "domain.verified",
			     strcmp(d->method, "http") == 0
			         ? "verified (the HTTP check)"
			         : "verified (DNS)");
		else
			log_warn("domains: %s no longer points here: %s",
			         d->host, d->reason);
	}
	return 0;
}

/* --- add, remove, verify, the pass ------------------------------------ */

static int
count_one(const struct domain *d, void *arg)
{
	(void)d;
	++*(int *)arg;
	return 0;
}

static void
new_token(char out[DOMAIN_TOKEN_HEX + 1])
{
	unsigned char r[DOMAIN_TOKEN_HEX / 2];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* 409 host_taken, naming whose. */
static int
taken(struct core *c, const struct app *app, const char *host, struct err *e)
{
	struct domain o;

	if (store_domain_get(c->store, host, &o) == 0 &&
	    strcmp(o.app_id, app->id) == 0)
		return err_set(e, 409, "host_taken",
		               "%s is already a domain of this app", host);
	return err_set(e, 409, "host_taken",
	               "%s is another app's custom domain", host);
}

int
publish_domain_add(struct core *c, const struct app *app, const char *host,
                   const char *actor, struct domain *out, struct err *e)
{
	char pub[DOMAIN_HOST_MAX + 1];
	struct domain_names names = {.preview_domain = c->cfg->preview_domain,
	                             .publish_domain = pub};
	struct domain d = {0};
	int n = 0, rc;

	(void)actor;
	publish_domain_name(c, pub, sizeof(pub));
	if (domain_host_check(&names, host, d.host, e) < 0)
		return -1;
	if (store_domain_list(c->store, app->id, count_one, &n) < 0)
		return ERR_INTERNAL(e, "cannot read the domains");
	if (n >= DOMAIN_MAX_PER_APP)
		return ERR_CONFLICT(e, "an app has at most %d custom domains",
		                    DOMAIN_MAX_PER_APP);
	snprintf(d.owner, sizeof(d.owner), "%s", app->owner);
	snprintf(d.app_id, sizeof(d.app_id), "%s", app->id);
	snprintf(d.status, sizeof(d.status), "pending");
	new_token(d.token);
	d.created_at = clock_now();
	rc = store_domain_insert(c->store, &d);
	if (rc == STORE_CONFLICT)
		return taken(c, app, d.host, e);
	if (rc != 0)
		return ERR_INTERNAL(e, "cannot write the domain");
	/* In the table before the first check: the edge answers its HTTP
	 * check from there. */
	domains_reload(c);
	note(c, &d, "domain.added", "added");
	if (check_and_save(c, &d, e) < 0)
		return -1;
	*out = d;
	return 0;
}

/* The row of host, when it is app's: 0, or -1 with 404. */
static int
app_domain(struct core *c, const struct app *app, const char *host,
           struct domain *d, struct err *e)
{
	char key[DOMAIN_HOST_MAX + 1];

	if (!host_key(host, strlen(host), key) ||
	    store_domain_get(c->store, key, d) != 0 ||
	    strcmp(d->app_id, app->id) != 0)
		return ERR_NOTFOUND(e, "no such domain");
	return 0;
}

int
publish_domain_remove(struct core *c, const struct app *app, const char *host,
                      const char *actor, struct err *e)
{
	struct domain d;

	(void)actor;
	if (app_domain(c, app, host, &d, e) < 0)
		return -1;
	if (store_domain_delete(c->store, d.host) != 0)
		return ERR_INTERNAL(e, "cannot delete the domain");
	domains_reload(c);
	note(c, &d, "domain.removed", "removed");
	return 0;
}

int
publish_domain_verify(struct core *c, const struct app *app, const char *host,
                      struct domain *out, struct err *e)
{
	if (app_domain(c, app, host, out, e) < 0)
		return -1;
	return check_and_save(c, out, e);
}

static int
collect_pending(const struct domain *d, void *arg)
{
	struct dom_list *l = arg;

	if (strcmp(d->status, "pending") != 0 || l->n >= DOMAIN_PENDING_MAX)
		return 0;
	return collect(d, arg);
}

void
publish_domain_pass(struct core *c)
{
	struct dom_list l = {0};
	struct err e = {0};

	/* Read first, check after: a check waits on DNS and HTTP, never
	 * inside the store's callback. */
	if (store_domain_list(c->store, NULL, collect_pending, &l) < 0) {
		log_error("domains: cannot read the pending domains");
		free(l.d);
		return;
	}
	for (size_t i = 0; i < l.n; i++)
		if (check_and_save(c, &l.d[i], &e) < 0)
			log_error("domains: %s: %s", l.d[i].host, e.msg);
	free(l.d);
}

/* The app is gone for good: its rows (publish_app_gone calls it). */
void
publish_domain_app_gone(struct core *c, const char *app_id)
{
	struct dom_list l = {0};

	if (store_domain_list(c->store, app_id, collect, &l) == 0)
		for (size_t i = 0; i < l.n; i++)
			store_domain_delete(c->store, l.d[i].host);
	free(l.d);
	if (l.n)
		domains_reload(c);
}

void
publish_domain_records(struct core *c, const struct domain *d, char a[46],
                       char cname[DOMAIN_HOST_MAX + 1])
{
	char ours[1][46];

	a[0] = '\0';
	if (domain_public_addrs(c->cfg, ours, 1) == 1)
		snprintf(a, 46, "%s", ours[0]);
	app_host(c, d->app_id, cname, DOMAIN_HOST_MAX + 1);
}
