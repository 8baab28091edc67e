/*
 * Private previews: the table of apps' visibility, the codes and the
 * cookies (preview/pvauth.h).
 *
 * Rejected: a session row per viewer in SQLite (the edge would wait on
 * the store's mutex on every request); codes that carry their own HMAC
 * (single use then needs a list of used ones that a restart loses, so a
 * code could be replayed after one); a cookie scoped to the preview
 * domain (one app's page would receive every app's cookie).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preview/pvauth.h"
#include "sandbox/routes.h"
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "vault/vault.h"

struct pvauth_app {
	struct pvauth_app *next;
	char id[ULID_LEN + 1];
	char visibility[8];
	int64_t epoch;
};

struct pvauth_code {
	char hash[VAULT_HASH_HEX + 1]; /* "" : a free slot */
	char app_id[ULID_LEN + 1];
	char owner[64]; /* the tenant that minted it: whose quota */
	int64_t expires_at;
	uint64_t seq; /* mint order: the tenant's oldest goes first */
};

/* Neither table is a lib/idtab: the apps' must hold every app and lose
 * deleted ones; the codes are keyed by a hash, not an id, and leave. */
struct pvauth {
	pthread_rwlock_t mu; /* apps */
	struct pvauth_app *b[PVAUTH_APPS_BUCKETS];
	_Atomic uint64_t generation;
	pthread_mutex_t codes_mu;
	struct pvauth_code *codes; /* PVAUTH_CODES_MAX */
	uint64_t seq;              /* codes minted, under codes_mu */
	unsigned char key[VAULT_KEY_BYTES];
	bool default_private;
};

bool
pvauth_visibility_ok(const char *v)
{
	return strcmp(v, "") == 0 || strcmp(v, "public") == 0 ||
	       strcmp(v, "private") == 0;
}

const char *
pvauth_effective(const struct core *c, const char *visibility)
{
	if (strcmp(visibility, "public") == 0 ||
	    strcmp(visibility, "private") == 0)
		return visibility;
	return strcmp(c->cfg->preview_visibility, "private") == 0 ? "private"
	                                                          : "public";
}

static struct pvauth_app **
find(struct pvauth *p, const char *id)
{
	struct pvauth_app **a = &p->b[hash_fnv1a(id) % PVAUTH_APPS_BUCKETS];

	while (*a && strcmp((*a)->id, id) != 0)
		a = &(*a)->next;
	return a;
}

void
pvauth_put(struct core *c, const char *app_id, const char *visibility,
           int64_t epoch)
{
	struct pvauth *p = c->pa;
	struct pvauth_app *fresh = calloc(1, sizeof(*fresh)), **a;

	if (p == NULL) {
		free(fresh);
		return;
	}
	pthread_rwlock_wrlock(&p->mu);
	a = find(p, app_id);
	if (*a == NULL && fresh) {
		snprintf(fresh->id, sizeof(fresh->id), "%s", app_id);
		*a = fresh;
		fresh = NULL;
	}
	if (*a) {
		snprintf((*a)->visibility, sizeof((*a)->visibility), "%s",
		         visibility);
		(*a)->epoch = epoch;
	}
	atomic_fetch_add(&p->generation, 1);
	pthread_rwlock_unlock(&p->mu);
	free(fresh); /* not needed: the app had a node */
}

void
pvauth_drop(struct core *c, const char *app_id)
{
	struct pvauth *p = c->pa;
	struct pvauth_app **a, *gone = NULL;

	if (p == NULL)
		return;
	pthread_rwlock_wrlock(&p->mu);
	a = find(p, app_id);
	if (*a) {
		gone = *a;
		*a = gone->next;
	}
	atomic_fetch_add(&p->generation, 1);
	pthread_rwlock_unlock(&p->mu);
	free(gone);
	pvauth_forget_codes(c, app_id);
}

uint64_t
pvauth_generation(const struct core *c)
{
	return c->pa ? atomic_load(&c->pa->generation) : 0;
}

bool
pvauth_view(const struct core *c, const char *sandbox_id,
            struct pvauth_view *out)
{
	struct pvauth *p = c->pa;
	struct pvauth_app **a;
	struct route rt;
	const char *vis = "";

	memset(out, 0, sizeof(*out));
	if (!routes_get(c->routes, sandbox_id, &rt))
		return false;
	memcpy(out->app_id, rt.app_id, sizeof(out->app_id));
	/* A route without its app cannot be checked: closed, not open. */
	out->private_ = rt.app_id[0] == '\0';
	if (p == NULL || out->private_)
		return true;
	pthread_rwlock_rdlock(&p->mu);
	a = find(p, rt.app_id);
	if (*a) {
		vis = (*a)->visibility;
		out->epoch = (*a)->epoch;
	}
	/* An app not in the table yet (a row written before the table
	 * knew it) follows the default, as "" does. */
	out->private_ =
	    strcmp(vis, "private") == 0 || (*vis == '\0' && p->default_private);
	pthread_rwlock_unlock(&p->mu);
	return true;
}

int64_t
pvauth_app_epoch(const struct core *c, const char *app_id)
{
	struct pvauth *p = c->pa;
	struct pvauth_app **a;
	int64_t epoch = 0;

	if (p == NULL)
		return 0;
	pthread_rwlock_rdlock(&p->mu);
	a = find(p, app_id);
	if (*a)
		epoch = (*a)->epoch;
	pthread_rwlock_unlock(&p->mu);
	return epoch;
}

/* --- codes ------------------------------------------------------------ */

/*
 * The slot for a new code of owner, under codes_mu: a free one, else
 * owner's oldest when owner holds PVAUTH_CODES_TENANT; -1 when the
 * table is full of codes that owner may not take.  Expired codes are
 * freed on the way.
 */
static int
code_slot(struct pvauth *p, const char *owner, int64_t now)
{
	int free_slot = -1, oldest = -1, mine = 0;

	for (int i = 0; i < PVAUTH_CODES_MAX; i++) {
		struct pvauth_code *k = &p->codes[i];
		if (k->hash[0] && k->expires_at <= now)
			k->hash[0] = '\0'; /* expired: free again */
		if (k->hash[0] == '\0') {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (strcmp(k->owner, owner) != 0)
			continue;
		mine++;
		if (oldest < 0 || k->seq < p->codes[oldest].seq)
			oldest = i;
	}
	if (mine >= PVAUTH_CODES_TENANT)
		return oldest;
	return free_slot;
}

int
pvauth_mint(struct core *c, const char *owner, const char *app_id,
            int64_t expires_at, char code[PVAUTH_CODE_LEN + 1])
{
	struct pvauth *p = c->pa;
	int slot;

	if (p == NULL)
		return -1;
	vault_random_b64url(code);
	pthread_mutex_lock(&p->codes_mu);
	slot = code_slot(p, owner, clock_now());
	if (slot >= 0) {
		struct pvauth_code *k = &p->codes[slot];
		vault_hash_hex(code, PVAUTH_CODE_LEN, k->hash);
		snprintf(k->app_id, sizeof(k->app_id), "%s", app_id);
		snprintf(k->owner, sizeof(k->owner), "%s", owner);
		k->expires_at = expires_at;
		k->seq = ++p->seq;
	}
	pthread_mutex_unlock(&p->codes_mu);
	return slot >= 0 ? 0 : -1;
}

bool
pvauth_redeem(struct core *c, const char *code, size_t len, const char *app_id,
              int64_t *expires_at)
{
	struct pvauth *p = c->pa;
	char h[VAULT_HASH_HEX + 1];
	int64_t now = clock_now();
	bool ok = false;

	if (p == NULL || len != PVAUTH_CODE_LEN)
		return false;
	/* The hash of a guess says nothing of a stored code: compared as
	 * is, like the API's token hashes. */
	vault_hash_hex(code, len, h);
	pthread_mutex_lock(&p->codes_mu);
	for (int i = 0; i < PVAUTH_CODES_MAX; i++) {
		struct pvauth_code *k = &p->codes[i];
		if (k->hash[0] == '\0' || strcmp(k->hash, h) != 0)
			continue;
		/* Another app's code stays unused: its viewer may still
		 * open it on the right host. */
		if (strcmp(k->app_id, app_id) != 0)
			break;
		ok = k->expires_at > now;
		*expires_at = k->expires_at;
		k->hash[0] = '\0'; /* once, and an expired one goes too */
		break;
	}
	pthread_mutex_unlock(&p->codes_mu);
	return ok;
}

void
pvauth_forget_codes(struct core *c, const char *app_id)
{
	struct pvauth *p = c->pa;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->codes_mu);
	for (int i = 0; i < PVAUTH_CODES_MAX; i++)
		if (p->codes[i].hash[0] &&
		    strcmp(p->codes[i].app_id, app_id) == 0)
			p->codes[i].hash[0] = '\0';
	pthread_mutex_unlock(&p->codes_mu);
}

/* --- cookies ---------------------------------------------------------- */

/* "<app>.<epoch>.<expiry>": what the HMAC covers, after a label. */
static int
cookie_claims(char *out, size_t len, const char *app_id, int64_t epoch,
              int64_t expires_at)
{
	return snprintf(out, len, "%s.%" PRId64 ".%" PRId64, app_id, epoch,
	                expires_at);
}

static void
cookie_mac(const struct pvauth *p, const char *claims, size_t n,
           char mac[VAULT_B64URL_32_LEN + 1])
{
	char m[PVAUTH_COOKIE_MAX + 32];
	int k = snprintf(m, sizeof(m), "sandboxd preview cookie 1 %.*s", (int)n,
	                 claims);

	vault_hmac_b64url(p->key, m, (size_t)k, mac);
}

void
pvauth_cookie(struct core *c, const char *app_id, int64_t epoch,
              int64_t expires_at, char out[PVAUTH_COOKIE_MAX])
{
	char mac[VAULT_B64URL_32_LEN + 1];
	int n =
	    cookie_claims(out, PVAUTH_COOKIE_MAX, app_id, epoch, expires_at);

	cookie_mac(c->pa, out, (size_t)n, mac);
	snprintf(out + n, PVAUTH_COOKIE_MAX - (size_t)n, ".%s", mac);
}

bool
pvauth_cookie_ok(struct core *c, const char *app_id, int64_t epoch,
                 const char *v, size_t len, int64_t now, int64_t *expires_at)
{
	char want[PVAUTH_COOKIE_MAX], mac[VAULT_B64URL_32_LEN + 1];
	const char *dot;
	int64_t exp = 0;
	size_t n, clen;

	if (c->pa == NULL || len < ULID_LEN + 6 || len >= PVAUTH_COOKIE_MAX ||
	    memcmp(v, app_id, ULID_LEN) != 0 || v[ULID_LEN] != '.')
		return false;
	/* The expiry: the third field, digits. */
	dot = memchr(v + ULID_LEN + 1, '.', len - ULID_LEN - 1);
	if (dot == NULL)
		return false;
	for (dot++; dot < v + len && *dot >= '0' && *dot <= '9'; dot++) {
		if (exp > (INT64_MAX - 9) / 10)
			return false;
		exp = exp * 10 + (*dot - '0');
	}
	if (dot >= v + len || *dot != '.' || exp <= now)
		return false;
	clen = (size_t)(dot - v);
	n = (size_t)cookie_claims(want, sizeof(want), app_id, epoch, exp);
	/* The claims as we would write them: the epoch is ours, so a
	 * cookie of an older epoch differs here already. */
	if (n != clen || memcmp(want, v, n) != 0 ||
	    len - clen - 1 != VAULT_B64URL_32_LEN)
		return false;
	cookie_mac(c->pa, want, n, mac);
	if (!vault_equal(mac, dot + 1, VAULT_B64URL_32_LEN))
		return false;
	if (expires_at)
		*expires_at = exp;
	return true;
}

/* --- start ------------------------------------------------------------ */

static int
load_one(const struct app *a, void *arg)
{
	pvauth_put(arg, a->id, a->preview_visibility, a->preview_epoch);
	return 0;
}

int
pvauth_init(struct core *c)
{
	struct pvauth *p = calloc(1, sizeof(*p));

	if (p == NULL ||
	    (p->codes = calloc(PVAUTH_CODES_MAX, sizeof(*p->codes))) == NULL) {
		free(p);
		return -1;
	}
	pthread_rwlock_init(&p->mu, NULL);
	pthread_mutex_init(&p->codes_mu, NULL);
	atomic_init(&p->generation, 1);
	p->default_private = strcmp(c->cfg->preview_visibility, "private") == 0;
	if (store_derive_key(c->store, "sandboxd preview cookies", p->key) < 0)
		vault_key_random(p->key); /* no vault (tests): per run */
	c->pa = p;
	if (store_app_list(c->store, NULL, load_one, c) < 0)
		log_error("cannot read the apps' preview visibility: their "
		          "previews follow SANDBOXD_PREVIEW_VISIBILITY until "
		          "changed");
	return 0;
}

void
pvauth_release(struct core *c)
{
	struct pvauth *p = c->pa;

	if (p == NULL)
		return;
	for (int i = 0; i < PVAUTH_APPS_BUCKETS; i++)
		while (p->b[i]) {
			struct pvauth_app *n = p->b[i];
			p->b[i] = n->next;
			free(n);
		}
	vault_wipe(p->key, sizeof(p->key));
	free(p->codes);
	pthread_rwlock_destroy(&p->mu);
	pthread_mutex_destroy(&p->codes_mu);
	free(p);
	c->pa = NULL;
}
