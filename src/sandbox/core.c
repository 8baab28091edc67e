/*
 * core setup: the instance id, the lock stripes, the activity table,
 * the routing table (filled from the store here, before reconcile and
 * before any thread) and the hooks.  What uses core (the runtime,
 * private previews) is made by serve(), not here: a registry that built
 * the layers above it would call up into them.  The instance id is
 * stored in the database on first start; it labels and names this
 * daemon's containers, so two daemons (say, a test run beside a real
 * install) on one Docker engine never touch each other's sandboxes.
 */
#include "sandbox/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "sandbox/activity.h"
#include "sandbox/routes.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "wsnode/wsnode.h"

int
core_instance(struct store *store, char out[CORE_INSTANCE_LEN + 1])
{
	unsigned char rnd[CORE_INSTANCE_LEN / 2];
	char id[CORE_INSTANCE_LEN + 1];

	if (store_meta_get(store, "instance_id", id, sizeof(id)) == 0 &&
	    strlen(id) == CORE_INSTANCE_LEN) {
		memcpy(out, id, sizeof(id));
		return 0;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	if (store_meta_set(store, "instance_id", id) != 0)
		return -1;
	memcpy(out, id, sizeof(id));
	log_info("new instance id %s", id);
	return 0;
}

int64_t
core_idle_threshold(struct core *c)
{
	return atomic_load(&c->idle_threshold_s);
}

void
core_idle_threshold_apply(struct core *c, int64_t seconds)
{
	atomic_store(&c->idle_threshold_s,
	             seconds > 0 ? seconds : c->cfg->idle_threshold_s);
}

/* The stored threshold, if any, wins over the environment's. */
static void
idle_threshold_load(struct core *c)
{
	char v[32], *end;
	long long n = 0;

	if (store_setting_get(c->store, CORE_IDLE_SETTING, v, sizeof(v)) == 0) {
		n = strtoll(v, &end, 10);
		if (*end != '\0' || n < CORE_IDLE_MIN_S ||
		    n > CORE_IDLE_MAX_S) {
			log_warn("setting %s: \"%s\" is not %d to %d seconds; "
			         "SANDBOXD_IDLE_THRESHOLD_SECONDS applies",
			         CORE_IDLE_SETTING, v, CORE_IDLE_MIN_S,
			         CORE_IDLE_MAX_S);
			n = 0;
		}
	}
	core_idle_threshold_apply(c, n);
}

int
core_init(struct core *c, const struct config *cfg, struct store *store,
          struct docker *docker, struct orch *orch)
{
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->store = store;
	c->docker = docker;
	c->orch = orch;
	for (int i = 0; i < CORE_LOCK_STRIPES; i++)
		pthread_mutex_init(&c->locks[i], NULL);
	pthread_mutex_init(&c->proxy_mu, NULL);
	atomic_init(&c->stopping, false);
	atomic_init(&c->idle_threshold_s, cfg->idle_threshold_s);
	idle_threshold_load(c);
	if ((c->act = activity_new()) == NULL ||
	    (c->routes = routes_new()) == NULL)
		return -1;
	/*
	 * A row the store cannot read fails the whole list; the daemon
	 * starts anyway (as it did when the edge read rows one by one), and
	 * rows written from now on are routed.
	 */
	if (routes_load(c->routes, store) < 0)
		log_error("cannot read the sandboxes for the edge's routing "
		          "table: previews of the others say \"no such "
		          "sandbox\" until they are started or stopped");
	return core_instance(store, c->instance);
}

void
core_release(struct core *c)
{
	activity_free(c->act);
	c->act = NULL;
	routes_free(c->routes);
	c->routes = NULL;
	pthread_mutex_destroy(&c->proxy_mu);
	for (int i = 0; i < CORE_LOCK_STRIPES; i++)
		pthread_mutex_destroy(&c->locks[i]);
}

int
core_hook_add(struct core *c, enum core_event ev, core_hook_fn fn)
{
	for (int i = 0; i < CORE_HOOKS_MAX; i++)
		if (c->hooks[ev][i] == NULL) {
			c->hooks[ev][i] = fn;
			return 0;
		}
	return -1;
}

void
core_hooks_run(struct core *c, enum core_event ev, const char *id)
{
	for (int i = 0; i < CORE_HOOKS_MAX && c->hooks[ev][i]; i++)
		c->hooks[ev][i](c, id);
}

void
core_set_proxy_url(struct core *c, const char *addr, unsigned port)
{
	pthread_mutex_lock(&c->proxy_mu);
	snprintf(c->proxy_url, sizeof(c->proxy_url), "http://%s:%u", addr,
	         port);
	pthread_mutex_unlock(&c->proxy_mu);
}

void
core_proxy_url(struct core *c, char *out, size_t len)
{
	pthread_mutex_lock(&c->proxy_mu);
	snprintf(out, len, "%s", c->proxy_url);
	pthread_mutex_unlock(&c->proxy_mu);
}

bool
core_data_full(const struct core *c, int64_t *free_bytes)
{
	int64_t left = ws_free_bytes(c->cfg->data_dir);

	if (free_bytes)
		*free_bytes = left;
	return left >= 0 && left < WS_DATA_MIN_FREE_BYTES;
}

int
core_workspace_room(struct core *c, const struct sandbox *sb, struct err *e)
{
	int64_t cap = c->cfg->workspace_max_mb << 20, used, left;
	char ws[WORKSPACE_PATH_MAX];

	if (core_data_full(c, &left))
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full (%lld KiB free); "
		               "free some space on %s",
		               (long long)(left >> 10), c->cfg->data_dir);
	if (cap == 0)
		return 0;
	if (!wsnode_remote(sb)) {
		workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
		used = ws_usage(sb->id, ws);
	} else if (wsnode_usage(c->wn, sb, &used, e) < 0) {
		return -1;
	}
	if (used > cap)
		return err_set(e, 507, "workspace_full",
		               "the workspace holds %lld MiB, more than "
		               "SANDBOXD_WORKSPACE_MAX_MB (%lld); delete files "
		               "(node_modules, build output) to go on",
		               (long long)(used >> 20),
		               (long long)c->cfg->workspace_max_mb);
	return 0;
}
