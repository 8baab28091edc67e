/*
 * The supervisor's control plane side (protocol in docs/supervisor.md):
 * configuring it, its environment, its status.
 *
 * One request and its answer (the socket, its deadlines, the quiet
 * table) are supclient.c's; the handle made here holds its table, the
 * configure threads' list and the env sends' locks, so nothing of it is
 * in a file-scope variable.
 *
 * Configuring: only the control plane parses YAML.  run.conf is rewritten
 * only when its rendering changed, so a reload is a no-op for unchanged
 * apps.  An invalid manifest is recorded on the sandbox (shown in its
 * status) and run.conf is left alone: the supervisor never runs a
 * guessed-at default in place of a broken declaration.  The default
 * applies only when there is no sandbox.yaml at all.
 *
 * After a container starts, a thread of that sandbox's own configures
 * it: it waits for the supervisor's socket (the supervisor seeds the
 * template first, then listens) so API calls never wait for a boot, and
 * a sandbox that never answers holds up no other sandbox's configure.
 * Rejected: one worker draining a queue (the previous design), on which
 * a sandbox that never answered cost every later one its boot wait.
 *
 * The app's environment (config entries marked expose_env) goes to the
 * supervisor over the socket with `env` after every boot and every
 * change, never through a file: the workspace is the sandbox user's and
 * is copied into backups.  The supervisor holds it in memory only, so a
 * restarted container has none until we send it again, which the
 * configure thread does after every start.  The request is
 * built in vault memory (wiped when freed) straight from the store's
 * callback, which wipes the opened values itself.
 */
#include "sandbox/runtime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "depcache/depcache.h"
#include "disk/dedup.h"
#include "sandbox/installkey.h"
#include "sandbox/manifest.h"
#include "sandbox/recipeops.h"
#include "sandbox/supanswer.h"
#include "sandbox/supclient.h"
#include "sandbox/activity.h"
#include "sandbox/routes.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"
#include "lib/hash.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"

/* "env <N>\n" is written right before the body, in the same buffer. */
#define RUNTIME_ENV_HEAD  32
#define RUNTIME_ENV_LOCKS 16 /* stripes serializing env sends */

/*
 * The daemon's supervisor client, the sandboxes being configured, each on
 * a thread of its own (waiting for a supervisor to come up takes up to
 * RUNTIME_BOOT_WAIT_MS, and one that never does, or a listener the
 * sandbox planted, must hold no one else's configure), and the locks
 * that serialize env sends.  A sandbox scheduled again while its thread
 * runs gets one more pass of that thread.
 */
struct runtime {
	struct supclient *sc;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* n went down */
	char ids[RUNTIME_QUEUE_MAX][ULID_LEN + 1];
	bool again[RUNTIME_QUEUE_MAX];
	int n;
	pthread_mutex_t env_locks[RUNTIME_ENV_LOCKS];
};

/* The supervisor client, or none (no quiet table) before runtime_init. */
static struct supclient *
client(const struct core *c)
{
	return c->rt ? c->rt->sc : NULL;
}

/* The node holding sandbox id ("" this host, or when it has no row). */
static void
node_of(struct core *c, const char *id, char node[64])
{
	struct sandbox sb;

	node[0] = '\0';
	if (store_sandbox_get(c->store, id, &sb) == 0)
		memcpy(node, sb.node, sizeof(sb.node));
}

int
runtime_request(struct core *c, const char *ws, const char *line,
                int timeout_ms, struct jv **answer, struct err *e)
{
	const char *slash = strrchr(ws, '/');
	const char *id = slash ? slash + 1 : ws;
	char node[64];

	node_of(c, id, node);
	return supclient_request(client(c), c->orch, id, node, line,
	                         strlen(line), timeout_ms, answer, NULL, e);
}

/* Finds the manifest: sandbox.yaml, else recipeops_fallback.  0 or -1. */
static int
manifest_load(int appfd, int port, struct manifest *m, const char **source,
              char *err, size_t errlen)
{
	struct err e = {0};
	struct buf text;
	int rc;

	*source = "sandbox.yaml";
	if (wsfs_read(appfd, "sandbox.yaml", MANIFEST_MAX_BYTES, &text, &e) <
	    0) {
		if (e.status != 404) {
			snprintf(err, errlen, "%s", e.msg);
			return -1;
		}
		*source = "default";
		return recipeops_fallback(appfd, port, m, err, errlen);
	}
	rc = manifest_parse(text.data, text.len, m, err, errlen);
	buf_release(&text);
	return rc;
}

/* Writes run.conf when its text changed; 1 if written, 0 if not, -1. */
static int
runconf_update(int wsfd, const struct manifest *m)
{
	struct buf want, have;
	struct err e = {0};
	int rc = 0;

	buf_init(&want, 1u << 20);
	buf_init(&have, 0);
	if (manifest_runconf(m, &want) < 0) {
		buf_release(&want);
		return -1;
	}
	if (wsfs_read(wsfd, ".sandboxd/run.conf", 1u << 20, &have, &e) < 0 ||
	    have.len != want.len || memcmp(have.data, want.data, want.len)) {
		rc = wsfs_write_secret(wsfd, ".sandboxd/run.conf", want.data,
		                       want.len, WORKSPACE_UID, WORKSPACE_GID,
		                       &e) < 0
		         ? -1
		         : 1;
		if (rc < 0)
			log_warn("run.conf: %s", e.msg);
	}
	buf_release(&have);
	buf_release(&want);
	return rc;
}

/* Tells the edge whether a web process will answer (routes.h). */
static void
note_procs(struct core *c, const char *id, const struct manifest *m)
{
	char names[ROUTES_WORKERS_MAX] = "";
	size_t n = 0;

	for (int i = 0; i < m->nworkers && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
		                      i ? ", " : "", m->workers[i].name);
	routes_set_procs(c->routes, id, m->has_web, names);
}

/*
 * The trees of a finished install with the same key, from the
 * dependency cache (depcache.h), before run.conf carries the install
 * record: the supervisor then finds the key written and installs
 * nothing.  Every app gets them here, an imported one as much as one
 * made from a preset or uploaded (its first configure comes before the
 * supervisor has an install record to run).  Silent when
 * the workspace has its trees (the usual case once installed).  A
 * failure leaves the install to run.
 */
static void
install_seed(struct core *c, const char *id, const char *ws,
             const struct manifest *m)
{
	struct depcache_stats st;

	if (m->has_install &&
	    depcache_seed(c->cfg, ws, m->install_key, &st) == 1)
		log_info("sandbox %s: install %.12s: its dependencies seeded "
		         "from the cache (%lld files)",
		         id, m->install_key, (long long)st.files);
}

/* What every configure ends with: the reload (when run.conf changed),
 * the app's environment, the error logged. */
static void
configure_end(struct core *c, const char *id, const char *ws, int rc,
              bool reload, const char *err)
{
	struct jv *ans = NULL;
	struct err e = {0};

	if (rc > 0 && reload &&
	    runtime_request(c, ws, "reload\n", RUNTIME_TIMEOUT_MS, &ans, &e) ==
	        0) {
		if (jv_is_true(jv_get(ans, "ok")))
			activity_started(c->act,
			                 id); /* its web process restarts */
		else
			log_warn("sandbox %s: reload refused: %s", id,
			         jv_str(jv_get(ans, "error")) ?: "?");
	}
	/* After every start too: the supervisor forgot it.  Also with an
	 * invalid manifest: the processes of the last valid one run. */
	if (reload)
		runtime_send_env(c, id);
	jv_free(ans);
	if (err[0])
		log_warn("sandbox %s: %s", id, err);
}

/* runconf_update for a sandbox on another node (wsnode). */
static int
runconf_update_remote(struct core *c, const struct sandbox *sb,
                      const struct manifest *m)
{
	struct buf want, have;
	struct err e = {0};
	bool eof;
	int rc = 0;

	buf_init(&want, 1u << 20);
	buf_init(&have, (1u << 20) + 1);
	if (manifest_runconf(m, &want) < 0) {
		buf_release(&want);
		return -1;
	}
	if (wsnode_read(c->wn, sb, ".sandboxd/run.conf", 0, 1u << 20, &have,
	                &eof, &e) < 0 ||
	    have.len != want.len || memcmp(have.data, want.data, want.len)) {
		e = (struct err){0};
		rc = wsnode_write(c->wn, sb, ".sandboxd/run.conf",
		                  want.data ? want.data : "", want.len, 0600,
		                  &e) < 0
		         ? -1
		         : 1;
		if (rc < 0)
			log_warn("run.conf: %s", e.msg);
	}
	buf_release(&have);
	buf_release(&want);
	return rc;
}

/*
 * The app's root of a remote sandbox as a local directory (wsnode's
 * shadow copy), with the manifest's install inputs when it names its
 * own; the manifest loaded from it.  The fd, or -1 with err.
 */
static int
remote_app(struct core *c, const struct sandbox *sb, struct manifest *m,
           const char **source, char *shadow, size_t len, char *err,
           size_t errlen)
{
	const char *inputs[MANIFEST_MAX_INPUTS];
	int port = sb->nports ? sb->ports[0] : 3000;
	struct err e = {0};
	int fd;

	fd =
	    wsnode_shadow(c->wn, sb, "workspace/app", NULL, 0, shadow, len, &e);
	if (fd < 0) {
		snprintf(err, errlen, "the app directory: %s", e.msg);
		return -1;
	}
	if (manifest_load(fd, port, m, source, err, errlen) < 0 ||
	    !m->has_install || !m->install_inputs_set)
		return fd;
	for (int i = 0; i < m->ninstall_inputs; i++)
		inputs[i] = m->install_inputs[i];
	wsnode_shadow_drop(fd, shadow);
	fd = wsnode_shadow(c->wn, sb, "workspace/app", inputs,
	                   (size_t)m->ninstall_inputs, shadow, len, &e);
	if (fd < 0)
		snprintf(err, errlen, "the app directory: %s", e.msg);
	return fd;
}

/* runtime_configure for a sandbox on another node: no dependency cache
 * or dedup there (node-local), the rest as for a local one. */
static int
configure_remote(struct core *c, const struct sandbox *sb, bool reload)
{
	char ws[WORKSPACE_PATH_MAX], shadow[WORKSPACE_PATH_MAX], err[384] = "";
	const char *source = "";
	struct manifest m;
	struct err e = {0};
	char type[8];
	int64_t size, mtime;
	int appfd, rc = -1;

	if (wsnode_stat(c->wn, sb, ".sandboxd/seeded", type, &size, &mtime,
	                &e) < 0)
		return e.status == 404 ? 0 : -1;
	appfd = remote_app(c, sb, &m, &source, shadow, sizeof(shadow), err,
	                   sizeof(err));
	if (appfd >= 0 && err[0] == '\0') {
		if (m.has_install &&
		    runtime_install_key(appfd, &m, m.install_key) < 0)
			snprintf(err, sizeof(err),
			         "install: the key cannot be computed (out "
			         "of memory)");
		else
			rc = runconf_update_remote(c, sb, &m);
		note_procs(c, sb->id, &m);
	}
	wsnode_shadow_drop(appfd, shadow);
	store_sandbox_set_manifest(c->store, sb->id, source, err);
	workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
	configure_end(c, sb->id, ws, rc, reload, err);
	return err[0] ? -1 : 0;
}

int
runtime_configure(struct core *c, const char *id, bool reload)
{
	char ws[WORKSPACE_PATH_MAX], err[384] = "";
	const char *source = "";
	struct manifest m;
	struct sandbox sb;
	int wsfd, appfd, rc = -1;

	if (store_sandbox_get(c->store, id, &sb) != 0)
		return -1;
	if (wsnode_remote(&sb))
		return configure_remote(c, &sb, reload);
	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	wsfd = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0)
		return -1;
	if (!wsfs_exists(wsfd, ".sandboxd/seeded")) {
		close(wsfd);
		return 0; /* first boot still to come: nothing to read yet */
	}
	/* Seeded: the preset's dependencies are there to share. */
	if (reload)
		dedup_kick(c->dedup, id);
	appfd = wsfs_openat(wsfd, "workspace/app", O_PATH | O_DIRECTORY, 0);
	if (appfd < 0)
		snprintf(err, sizeof(err),
		         "the app directory is missing or a "
		         "symbolic link");
	else if (manifest_load(appfd, sb.nports ? sb.ports[0] : 3000, &m,
	                       &source, err, sizeof(err)) == 0) {
		/* The key is computed each time: a changed lockfile is a
		 * changed record, so the supervisor installs again. */
		if (m.has_install &&
		    runtime_install_key(appfd, &m, m.install_key) < 0)
			snprintf(err, sizeof(err),
			         "install: the key cannot be computed (out "
			         "of memory)");
		else {
			install_seed(c, id, ws, &m);
			rc = runconf_update(wsfd, &m);
		}
		note_procs(c, id, &m);
		/* A finished install's tree is kept for the next app with
		 * the same key (depcache.h). */
		if (rc >= 0 && m.has_install)
			depcache_watch(c->dc, id, m.install_key,
			               m.install_timeout_s);
	}
	store_sandbox_set_manifest(c->store, id, source, err);
	configure_end(c, id, ws, rc, reload, err);
	if (appfd >= 0)
		close(appfd);
	close(wsfd);
	return err[0] ? -1 : 0;
}

/* --- the app's environment ------------------------------------------------ */

bool
runtime_env_reserved(const char *name)
{
	return strcmp(name, "PATH") == 0 || strcmp(name, "HOME") == 0 ||
	       strcmp(name, "LANG") == 0 || strcmp(name, "HOST") == 0 ||
	       strcmp(name, "PORT") == 0 || strncmp(name, "LD_", 3) == 0 ||
	       strncmp(name, "SANDBOXD_", 9) == 0;
}

static pthread_mutex_t *
env_lock(struct runtime *rt, const char *id)
{
	return &rt->env_locks[hash_fnv1a(id) % RUNTIME_ENV_LOCKS];
}

/* The entries being gathered: "NAME=value\0"… at p, of at most cap. */
struct env_req {
	const char *who; /* "sandbox <id>", "release <id>": for messages */
	char *p;         /* vault memory */
	size_t cap, len;
	bool too_big;
};

static int
env_add(const char *name, const char *value, size_t len, void *arg)
{
	struct env_req *r = arg;
	size_t nl = strlen(name);
	char *d;

	if (runtime_env_reserved(name)) {
		log_warn("%s: config key %s is not given to the app's "
		         "processes: the name is reserved (set before the "
		         "rule was)",
		         r->who, name);
		return 0;
	}
	if (nl + len + 2 > r->cap - r->len) {
		r->too_big = true;
		return 1;
	}
	d = r->p + r->len;
	memcpy(d, name, nl);
	d[nl] = '=';
	memcpy(d + nl + 1, value, len);
	d[nl + 1 + len] = '\0';
	r->len += nl + len + 2;
	return 0;
}

int
runtime_app_env(struct core *c, const char *app_id, const char *who, char *p,
                size_t cap, size_t *len)
{
	struct env_req r = {.who = who, .p = p, .cap = cap};
	int rc = store_app_config_env(c->store, app_id, env_add, &r);

	*len = r.len;
	if (r.too_big) {
		log_warn("%s: the app's environment is not sent: its exposed "
		         "config takes more than %zu bytes",
		         who, cap);
		return -1;
	}
	if (rc != 0) {
		log_warn("%s: the app's environment is not sent: a value "
		         "cannot be opened",
		         who);
		return -1;
	}
	return 0;
}

/* Reads the app's environment into p (after RUNTIME_ENV_HEAD bytes for
 * the head) and sends it; the caller holds the sandbox's env lock. */
static int
env_send(struct core *c, const struct sandbox *sb, char *p)
{
	char head[RUNTIME_ENV_HEAD], who[64];
	struct jv *ans = NULL;
	struct err e = {0};
	size_t len;
	int n, rc;

	snprintf(who, sizeof(who), "sandbox %s", sb->id);
	if (runtime_app_env(c, sb->app_id, who, p + RUNTIME_ENV_HEAD,
	                    RUNTIME_ENV_BYTES, &len) < 0)
		return -1; /* the processes keep the one they have */
	n = snprintf(head, sizeof(head), "env %zu\n", len);
	memcpy(p + RUNTIME_ENV_HEAD - n, head, (size_t)n);
	if (supclient_request(client(c), c->orch, sb->id, sb->node,
	                      p + RUNTIME_ENV_HEAD - n, (size_t)n + len,
	                      RUNTIME_TIMEOUT_MS, &ans, NULL, &e) < 0) {
		log_warn("sandbox %s: env: %s", sb->id, e.msg);
		return -1;
	}
	rc = jv_is_true(jv_get(ans, "ok")) ? 0 : -1;
	if (rc < 0)
		log_warn("sandbox %s: env refused: %s", sb->id,
		         jv_str(jv_get(ans, "error")) ?: "?");
	else if (jv_is_true(jv_get(ans, "changed")))
		activity_started(c->act, sb->id); /* its web process restarts */
	jv_free(ans);
	return rc;
}

int
runtime_send_env(struct core *c, const char *id)
{
	struct vault_secret mem = {0};
	pthread_mutex_t *mu;
	struct sandbox sb;
	int rc;

	if (store_sandbox_get(c->store, id, &sb) != 0)
		return -1;
	if (vault_secret_alloc(&mem, RUNTIME_ENV_HEAD + RUNTIME_ENV_BYTES) <
	    0) {
		log_warn("sandbox %s: env: out of memory", id);
		return -1;
	}
	mu = env_lock(c->rt, id);
	pthread_mutex_lock(mu);
	rc = env_send(c, &sb, mem.data);
	pthread_mutex_unlock(mu);
	vault_secret_free(&mem);
	return rc;
}

/* --- configuring after a start ---------------------------------------------
 */

struct rt_job {
	struct core *c;
	char id[ULID_LEN + 1];
};

int
runtime_init(struct core *c)
{
	struct runtime *rt = calloc(1, sizeof(*rt));

	if (rt == NULL || (rt->sc = supclient_new()) == NULL) {
		free(rt);
		return -1;
	}
	pthread_mutex_init(&rt->mu, NULL);
	pthread_cond_init(&rt->cv, NULL);
	for (int i = 0; i < RUNTIME_ENV_LOCKS; i++)
		pthread_mutex_init(&rt->env_locks[i], NULL);
	c->rt = rt;
	return 0;
}

void
runtime_free(struct core *c)
{
	struct runtime *rt = c->rt;

	if (rt == NULL)
		return;
	for (int i = 0; i < RUNTIME_ENV_LOCKS; i++)
		pthread_mutex_destroy(&rt->env_locks[i]);
	pthread_cond_destroy(&rt->cv);
	pthread_mutex_destroy(&rt->mu);
	supclient_free(rt->sc);
	free(rt);
	c->rt = NULL;
}

static int
rt_slot(const struct runtime *rt, const char *id)
{
	for (int i = 0; i < rt->n; i++)
		if (strcmp(rt->ids[i], id) == 0)
			return i;
	return -1;
}

/* Another pass when scheduled meanwhile; else leaves the list. */
static bool
rt_done(struct runtime *rt, const char *id, bool stopping)
{
	bool again = false;
	int i;

	pthread_mutex_lock(&rt->mu);
	i = rt_slot(rt, id);
	if (i >= 0 && rt->again[i] && !stopping) {
		rt->again[i] = false;
		again = true;
	} else if (i >= 0) {
		rt->n--;
		memcpy(rt->ids[i], rt->ids[rt->n], sizeof(rt->ids[i]));
		rt->again[i] = rt->again[rt->n];
		pthread_cond_broadcast(&rt->cv);
	}
	pthread_mutex_unlock(&rt->mu);
	return again;
}

static void *
rt_main(void *arg)
{
	struct rt_job *j = arg;
	struct core *c = j->c;

	do {
		if (runtime_wait(c, j->id, RUNTIME_BOOT_WAIT_MS))
			runtime_configure(c, j->id, true);
		else if (!c->stopping)
			log_warn("sandbox %s: its supervisor did not come up "
			         "within %d ms",
			         j->id, RUNTIME_BOOT_WAIT_MS);
	} while (rt_done(c->rt, j->id, c->stopping));
	free(j);
	return NULL;
}

void
runtime_schedule(struct core *c, const char *id)
{
	struct runtime *rt = c->rt;
	struct rt_job *j;
	pthread_attr_t at;
	pthread_t t;
	int i;

	supclient_forget(rt->sc, id); /* a new container: a new supervisor */
	pthread_mutex_lock(&rt->mu);
	if (c->stopping)
		goto out;
	if ((i = rt_slot(rt, id)) >= 0) {
		rt->again[i] = true;
		goto out;
	}
	if (rt->n == RUNTIME_QUEUE_MAX || (j = calloc(1, sizeof(*j))) == NULL) {
		log_warn("sandbox %s: %d sandboxes are being configured; its "
		         "supervisor is not configured now",
		         id, RUNTIME_QUEUE_MAX);
		goto out;
	}
	j->c = c;
	snprintf(j->id, sizeof(j->id), "%s", id);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, rt_main, j) != 0) {
		log_warn("sandbox %s: cannot start a thread to configure it",
		         id);
		free(j);
	} else {
		snprintf(rt->ids[rt->n], ULID_LEN + 1, "%s", id);
		rt->again[rt->n] = false;
		rt->n++;
	}
	pthread_attr_destroy(&at);
out:
	pthread_mutex_unlock(&rt->mu);
}

/* Waits until the supervisor answers a ping (it seeds before listening). */
bool
runtime_wait(struct core *c, const char *id, int64_t wait_ms)
{
	int64_t deadline = clock_mono_ms() + wait_ms;
	char ws[WORKSPACE_PATH_MAX];
	struct jv *ans;
	struct err e;

	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	while (!c->stopping && clock_mono_ms() < deadline) {
		if (runtime_request(c, ws, "ping\n", RUNTIME_PING_MS, &ans,
		                    &e) == 0) {
			jv_free(ans);
			return true;
		}
		usleep(20 * 1000);
	}
	return false;
}

int
runtime_manifest(struct core *c, const char *id, struct manifest *m)
{
	char ws[WORKSPACE_PATH_MAX], err[384];
	const char *source;
	struct sandbox sb;
	int appfd, rc;

	if (store_sandbox_get(c->store, id, &sb) != 0)
		return -1;
	if (wsnode_remote(&sb)) {
		appfd = remote_app(c, &sb, m, &source, ws, sizeof(ws), err,
		                   sizeof(err));
		rc = appfd >= 0 && err[0] == '\0' ? 0 : -1;
		wsnode_shadow_drop(appfd, ws);
		return rc;
	}
	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	appfd = wsfs_open_dir(ws, "workspace/app", NULL);
	if (appfd < 0)
		return -1;
	rc = manifest_load(appfd, sb.nports ? sb.ports[0] : 3000, m, &source,
	                   err, sizeof(err));
	close(appfd);
	return rc;
}

void
runtime_note_manifest(struct core *c, const char *id)
{
	struct manifest m;

	if (runtime_manifest(c, id, &m) == 0)
		note_procs(c, id, &m);
}

/* Nothing to start: each configure runs on its own thread. */
int
runtime_start(struct core *c)
{
	(void)c;
	return 0;
}

/* Waits for the configure threads, which watch c->stopping. */
void
runtime_stop(struct core *c)
{
	struct runtime *rt = c->rt;

	if (rt == NULL)
		return;
	pthread_mutex_lock(&rt->mu);
	c->stopping = true;
	while (rt->n > 0)
		pthread_cond_wait(&rt->cv, &rt->mu);
	pthread_mutex_unlock(&rt->mu);
}

struct jv *
runtime_status(struct core *c, const char *id, struct err *e)
{
	struct jv *ans, *out;
	char node[64];
	bool broken;

	node_of(c, id, node);
	if (supclient_request(client(c), c->orch, id, node, "status\n", 7,
	                      RUNTIME_STATUS_MS, &ans, &broken, e) < 0) {
		if (!broken)
			memset(e, 0, sizeof(*e)); /* not up (yet) */
		return NULL;
	}
	out = supanswer_status(ans);
	jv_free(ans);
	return out;
}

bool
runtime_install_running(struct core *c, const char *id)
{
	struct err e = {0};
	struct jv *st = runtime_status(c, id, &e);
	const char *state = jv_str(jv_get(jv_get(st, "install"), "state"));
	bool running = state && strcmp(state, "running") == 0;

	jv_free(st);
	return running;
}

bool
runtime_wait_install(struct core *c, const char *id, int64_t wait_ms,
                     bool (*go_on)(void *), void *arg)
{
	int64_t deadline = clock_mono_ms() + wait_ms;

	while (runtime_install_running(c, id)) {
		if (c->stopping || clock_mono_ms() >= deadline ||
		    (go_on && !go_on(arg)))
			return false;
		usleep(250 * 1000);
	}
	return true;
}

void
runtime_after_task(struct core *c, const char *id)
{
	struct sandbox sb;

	if (store_sandbox_get(c->store, id, &sb) == 0 &&
	    sb.status == SANDBOX_RUNNING && !sb.frozen)
		runtime_schedule(c, id);
}
