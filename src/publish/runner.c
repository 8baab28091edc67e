/*
 * Server releases' production containers.
 *
 * A server release runs in a container of its own, "sandboxd-rel-<id>",
 * made from the release's files and nothing else: <release>/app bound
 * read-only at /app, a read-only root filesystem with a tmpfs /tmp
 * (HOME), the sandboxes' network (their egress policy applies), user
 * and limits, the app's own configuration as its environment, and the
 * command under "/bin/sh -c" in /app, below the engine's init (which
 * passes a stop's SIGTERM on and reaps).  The image's init (the
 * supervisor) is bypassed, so no agent, dev server or credential proxy
 * token is in it; the agents' directory is masked by an empty tmpfs.
 * The engine restarts it on a crash (restart policy unless-stopped), and
 * it keeps running while the daemon restarts: a daemon that comes back
 * finds it running and routes to it at once (publish_runner_recover).
 *
 * The health checks (publish_health_pass, a periodic job on a lane of
 * its own) GET every active server release's health path, a connect
 * and an answer within RUNNER_HEALTH_TIMEOUT_MS each.  After
 * RUNNER_HEALTH_FAILS in a row the release is DOWN (the edge answers a
 * page saying why, with Retry-After) and its container restarted; a
 * container that is gone (removed by hand, an engine that lost its
 * state) is made again.  The address is read from the engine on every
 * pass, so an engine that gave a restarted container another one is
 * followed.
 *
 * The runner's table (release → address, up or DOWN and why) is what
 * the edge reads for a SERVER host (publish_runner_route): a short
 * mutex, no store, no Docker.  It is file-scope, like the daemon it
 * serves there is one per process; its failure counts are touched by the
 * health lane only.  Rejected: the address in the host table alone
 * (hosts.c), which would then need a write from here on every pass and
 * a second copy of up/DOWN; and checks from the edge's loop, which must
 * never wait on a container.
 *
 * The app's configuration is passed as the container's environment:
 * gathered in vault memory (runtime_app_env, the same entries and rules
 * a sandbox's supervisor gets), it then goes into the engine's create
 * request, so `docker inspect` shows it to whoever holds the engine's
 * socket (root).  A sandbox keeps it in its supervisor's memory only; a
 * production container has no supervisor to hand it to.
 */
#include "publish/runner.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/http.h"
#include "publish/internal.h"
#include "publish/publish.h"
#include "sandbox/runtime.h"
#include "vault/vault.h"
#include "ws/workspace.h"
#include "lib/clock.h"
#include "lib/log.h"

struct runner_ent {
	char release_id[ULID_LEN + 1];
	char app_id[ULID_LEN + 1];
	struct sockaddr_in addr;
	bool down;
	char reason[200];
	int failures; /* health checks failed in a row (health lane) */
};

struct runner_tab {
	pthread_mutex_t mu;
	struct runner_ent *v;
	int n, cap;
};

static struct runner_tab tab = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* What the host of a release without a port answers. */
#define RUNNER_NO_WEB                                                          \
	"this app has no web process: its release runs workers only"

/* --- the table -------------------------------------------------------- */

/* Under tab.mu. */
static struct runner_ent *
tab_find(const char *release_id)
{
	for (int i = 0; i < tab.n; i++)
		if (strcmp(tab.v[i].release_id, release_id) == 0)
			return &tab.v[i];
	return NULL;
}

/* Adds (add) or updates the release's row; down with why, or up.  The
 * health checks only update: a release a switch has just dropped stays
 * out. */
static void
tab_set(const struct release *r, const struct sockaddr_in *addr,
        const char *down_why, bool add)
{
	struct runner_ent *e;

	pthread_mutex_lock(&tab.mu);
	e = tab_find(r->id);
	if (e == NULL && !add) {
		pthread_mutex_unlock(&tab.mu);
		return;
	}
	if (e == NULL && tab.n == tab.cap) {
		int cap = tab.cap ? tab.cap * 2 : 16;
		struct runner_ent *v = realloc(tab.v, (size_t)cap * sizeof(*v));

		if (v == NULL) {
			pthread_mutex_unlock(&tab.mu);
			log_warn("release %s: out of memory for its route",
			         r->id);
			return;
		}
		tab.v = v;
		tab.cap = cap;
	}
	if (e == NULL) {
		e = &tab.v[tab.n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->release_id, sizeof(e->release_id), "%s", r->id);
		snprintf(e->app_id, sizeof(e->app_id), "%s", r->app_id);
	}
	if (addr)
		e->addr = *addr;
	e->down = down_why != NULL;
	snprintf(e->reason, sizeof(e->reason), "%s", down_why ? down_why : "");
	if (!e->down)
		e->failures = 0;
	pthread_mutex_unlock(&tab.mu);
}

static void
tab_put(const struct release *r, const struct sockaddr_in *addr,
        const char *down_why)
{
	tab_set(r, addr, down_why, true);
}

static void
tab_update(const struct release *r, const struct sockaddr_in *addr,
           const char *down_why)
{
	tab_set(r, addr, down_why, false);
}

static void
tab_drop(const char *release_id)
{
	struct runner_ent *e;

	pthread_mutex_lock(&tab.mu);
	if ((e = tab_find(release_id)) != NULL)
		*e = tab.v[--tab.n];
	pthread_mutex_unlock(&tab.mu);
}

/* One more failed check of the release; how many in a row now. */
static int
tab_failed(const char *release_id)
{
	struct runner_ent *e;
	int n = 0;

	pthread_mutex_lock(&tab.mu);
	if ((e = tab_find(release_id)) != NULL)
		n = ++e->failures;
	pthread_mutex_unlock(&tab.mu);
	return n;
}

static bool
tab_has(const char *release_id)
{
	bool has;

	pthread_mutex_lock(&tab.mu);
	has = tab_find(release_id) != NULL;
	pthread_mutex_unlock(&tab.mu);
	return has;
}

/* Its container was restarted: as many checks again before the next. */
static void
tab_restarted(const char *release_id)
{
	struct runner_ent *e;

	pthread_mutex_lock(&tab.mu);
	if ((e = tab_find(release_id)) != NULL)
		e->failures = 0;
	pthread_mutex_unlock(&tab.mu);
}

bool
publish_runner_route(struct core *c, const char *release_id,
                     struct publish_target *t)
{
	struct runner_ent *e;
	bool known;

	(void)c;
	pthread_mutex_lock(&tab.mu);
	e = tab_find(release_id);
	known = e != NULL;
	if (known && e->down) {
		t->kind = PUBLISH_DOWN;
		t->retry_after_s = RUNNER_HEALTH_PERIOD_S;
		snprintf(t->message, sizeof(t->message), "%s", e->reason);
	} else if (known) {
		t->kind = PUBLISH_SERVER;
		t->addr = e->addr;
	}
	pthread_mutex_unlock(&tab.mu);
	return known;
}

/* --- the container's spec --------------------------------------------- */

void
publish_runner_name(const char *release_id, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "sandboxd-rel-%s", release_id);

	for (size_t i = 0; i < n && i < len; i++)
		if (out[i] >= 'A' && out[i] <= 'Z')
			out[i] = (char)(out[i] - 'A' + 'a');
}

/*
 * A simple command runs as "exec <command>", so the server itself is
 * the init's child (no shell between, one process less, the stop's
 * SIGTERM reaches it); a list, a pipeline or a compound command is left
 * to the shell as it is.
 */
void
publish_runner_command(const char *cmd, char *out, size_t len)
{
	static const char *const words[] = {"if ",    "for ",  "while ",
	                                    "until ", "case ", "exec ",
	                                    "{",      "(",     NULL};
	bool simple = strpbrk(cmd, ";&|\n") == NULL;

	for (int i = 0; simple && words[i]; i++)
		if (strncmp(cmd, words[i], strlen(words[i])) == 0)
			simple = false;
	snprintf(out, len, "%s%s", simple ? "exec " : "", cmd);
}

void
publish_runner_spec(const struct config *cfg, const char *instance,
                    const struct release *r, const char *const *env,
                    struct runner_spec_buf *b, struct docker_spec *s)
{
	publish_runner_name(r->id, b->name, sizeof(b->name));
	snprintf(b->user, sizeof(b->user), "%d:%d", WORKSPACE_UID,
	         WORKSPACE_GID);
	snprintf(b->bind, sizeof(b->bind), "%s/app:/app:ro", r->path);
	snprintf(b->port, sizeof(b->port), "PORT=%d", r->port);
	snprintf(b->release, sizeof(b->release), "%s", r->id);
	snprintf(b->app, sizeof(b->app), "%s", r->app_id);
	snprintf(b->tmp, sizeof(b->tmp),
	         "/tmp:rw,nosuid,nodev,size=%dm,mode=1777", RUNNER_TMP_MB);
	memset(s, 0, sizeof(*s));
	s->name = b->name;
	s->image = r->image[0] ? r->image : cfg->image;
	s->hostname = b->name;
	s->user = b->user;
	s->runtime = strcmp(cfg->runtime, "runc") ? cfg->runtime : "";
	s->network = cfg->network;
	s->binds[0] = b->bind;
	s->env[0] = b->port;
	s->env[1] = "HOST=0.0.0.0";
	s->env[2] = "NODE_ENV=production";
	s->env[3] = "HOME=/tmp";
	s->env_more = env;
	s->labels[0] = (struct docker_kv){"sandboxd.instance", instance};
	s->labels[1] = (struct docker_kv){"sandboxd.release", b->release};
	s->labels[2] = (struct docker_kv){"sandboxd.app", b->app};
	s->labels[3] = (struct docker_kv){RUNNER_LABEL, "true"};
	s->labels[4] = (struct docker_kv){"sandboxd.managed", "true"};
	s->tmpfs[0] = b->tmp;
	s->tmpfs[1] = RUNNER_AGENTS_DIR ":ro,nosuid,nodev,size=4k,mode=0555";
	s->memory_bytes = cfg->memory_mb * 1024 * 1024;
	s->pids_limit = cfg->pids_limit;
	s->nofile = cfg->nofile_limit;
	s->read_only = true;
	s->entrypoint[0] = "/bin/sh";
	s->entrypoint[1] = "-c";
	publish_runner_command(r->command, b->cmd, sizeof(b->cmd));
	s->cmd[0] = b->cmd;
	s->workdir = "/app";
	s->restart = "unless-stopped";
	s->init = true;
}

/* --- making it run ---------------------------------------------------- */

#define RUNNER_ENV_MAX (APP_CONFIG_MAX_KEYS + 1)

/* Splits "NAME=value\0"… (len bytes at p) into v, NULL-ended. */
static void
env_split(char *p, size_t len, const char **v, int max)
{
	int n = 0;

	for (size_t off = 0; off < len && n < max - 1;
	     off += strlen(p + off) + 1)
		v[n++] = p + off;
	v[n] = NULL;
}

static int
docker_fail(int rc, const char *msg, struct err *e)
{
	if (rc == DOCKER_DOWN)
		return ERR_DOCKER(e, "%s", msg);
	return err_set(e, 502, "docker_error", "%s", msg);
}

/* Creates and starts the release's container (one of the same name that
 * is there already is removed first). */
static int
container_make(struct core *c, const struct release *r, struct err *e)
{
	struct vault_secret mem = {0};
	const char *env[RUNNER_ENV_MAX];
	struct runner_spec_buf b;
	struct docker_spec s;
	char id[72], msg[DOCKER_MSG_LEN], who[64];
	size_t len = 0;
	int rc;

	if (vault_secret_alloc(&mem, RUNTIME_ENV_BYTES) < 0)
		return ERR_INTERNAL(e, "out of memory");
	snprintf(who, sizeof(who), "release %s", r->id);
	if (runtime_app_env(c, r->app_id, who, mem.data, RUNTIME_ENV_BYTES,
	                    &len) < 0) {
		vault_secret_free(&mem);
		return ERR_INTERNAL(e, "the app's configuration cannot be "
		                       "given to the server (the daemon's log "
		                       "says why)");
	}
	env_split(mem.data, len, env, RUNNER_ENV_MAX);
	publish_runner_spec(c->cfg, c->instance, r, env, &b, &s);
	docker_remove(c->docker, b.name, msg);
	rc = docker_create(c->docker, &s, id, msg);
	vault_secret_free(&mem);
	if (rc == DOCKER_OK)
		rc = docker_start(c->docker, b.name, msg);
	if (rc != DOCKER_OK) {
		char ignored[DOCKER_MSG_LEN];

		docker_remove(c->docker, b.name, ignored);
		return docker_fail(rc, msg, e);
	}
	return 0;
}

/* The container's address on the sandboxes' network, with the release's
 * port; -1 when it has none (not running). */
static int
container_addr(const struct docker_state *st, const struct release *r,
               struct sockaddr_in *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_port = htons((uint16_t)r->port);
	return st->ip[0] && inet_pton(AF_INET, st->ip, &addr->sin_addr) == 1
	           ? 0
	           : -1;
}

/* Reads at most RUNNER_HEALTH_BODY_MAX bytes of an answer. */
static size_t
health_body(const char *p, size_t n, void *arg)
{
	size_t *got = arg;

	(void)p;
	*got += n;
	return *got > RUNNER_HEALTH_BODY_MAX ? 0 : n;
}

/*
 * GET the health path at addr (Host: localhost, as the supervisor asks
 * a preview's): 0 on an answer below 500, as the supervisor's check;
 * else -1 and why.  Bounded by RUNNER_HEALTH_TIMEOUT_MS for the connect and
 * again for the answer; the body is not read past RUNNER_HEALTH_BODY_MAX.
 */
static int
health_get(const struct sockaddr_in *addr, const char *path, char *why,
           size_t len)
{
	static const char *const headers[] = {"Host: localhost", NULL};
	const char *p = path[0] == '/' ? path : "/";
	char ip[INET_ADDRSTRLEN], url[256];
	size_t got = 0;
	struct http_call call = {
	    .method = "GET",
	    .url = url,
	    .headers = headers,
	    .connect_timeout_ms = RUNNER_HEALTH_TIMEOUT_MS,
	    .timeout_s = (RUNNER_HEALTH_TIMEOUT_MS + 999) / 1000,
	    .on_body = health_body,
	    .arg = &got,
	};

	inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof(ip));
	snprintf(url, sizeof(url), "http://%s:%d%s", ip, ntohs(addr->sin_port),
	         p);
	http_perform(&call);
	if (call.status > 0 && call.status < 500)
		return 0;
	if (call.status)
		snprintf(why, len, "GET %s answered %ld", p, call.status);
	else
		snprintf(why, len, "GET %s: %s", p,
		         call.fail == HTTP_FAIL_CONNECT
		             ? "nothing listens on its port"
		             : http_fail_words(call.fail));
	return -1;
}

/* Running, and not between two runs (the engine counts a container it
 * is restarting as running). */
static bool
up(const struct docker_state *st)
{
	return st->running && strcmp(st->status, "restarting") != 0;
}

/* What the container is now, for a message ("exited (code 1)"). */
static void
state_words(const struct docker_state *st, char *out, size_t len)
{
	if (up(st))
		snprintf(out, len, "running");
	else
		snprintf(out, len, "%s (code %d%s)", st->status, st->exit_code,
		         st->oom_killed ? ", out of memory" : "");
}

/*
 * Waits until the release's health path answers, up to
 * RUNNER_START_WAIT_S; *addr its address then.  -1 with why.
 */
static int
wait_healthy(struct core *c, const struct release *r, const char *name,
             struct sockaddr_in *addr, char *why, size_t len)
{
	int64_t end = clock_mono_ms() + RUNNER_START_WAIT_S * 1000;
	char msg[DOCKER_MSG_LEN], what[96];
	struct docker_state st;
	int down = 0; /* polls that found it not running */

	snprintf(why, len, "it did not start");
	while (!c->stopping) {
		int rc = docker_inspect(c->docker, name, &st, msg);

		if (rc != DOCKER_OK) {
			snprintf(why, len, "its container: %s", msg);
			return -1;
		}
		if (up(&st) && container_addr(&st, r, addr) == 0 &&
		    health_get(addr, r->health, why, len) == 0)
			return 0;
		if (!up(&st)) {
			state_words(&st, what, sizeof(what));
			snprintf(why, len, "the server %s", what);
			/* Exits again and again (the engine restarts it):
			 * no use waiting the whole minute. */
			if (++down >= RUNNER_START_DOWN_POLLS)
				return -1;
		}
		if (clock_mono_ms() >= end)
			return -1;
		usleep(250 * 1000);
	}
	snprintf(why, len, "the daemon is stopping");
	return -1;
}

/*
 * The end of what a server that failed its start wrote, for the
 * release's error (its last RUNNER_TAIL_ERROR - 1 bytes, lines joined by
 * '/') and, longer, the daemon's log.
 */
static void
output_tail(struct core *c, const struct release *r, const char *name,
            char *out, size_t len)
{
	char all[RUNNER_TAIL_LOG], msg[DOCKER_MSG_LEN];
	size_t n, skip;

	out[0] = '\0';
	if (docker_logs_tail(c->docker, name, RUNNER_TAIL_LINES, all,
	                     sizeof(all), msg) != DOCKER_OK)
		return;
	n = strlen(all);
	while (n > 0 && (all[n - 1] == '\n' || all[n - 1] == ' '))
		all[--n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (all[i] == '\n' || all[i] == '\t')
			all[i] = all[i] == '\n' ? '/' : ' ';
	if (n == 0)
		return;
	log_warn("release %s: its server's last output: %s", r->id, all);
	skip = n >= len ? n - (len - 1) : 0;
	snprintf(out, len, "%s", all + skip);
}

int
publish_runner_start(struct core *c, const struct release *r,
                     struct sockaddr_in *addr, struct err *e)
{
	char name[64], msg[DOCKER_MSG_LEN], why[200], tail[RUNNER_TAIL_ERROR];
	struct docker_state st;

	if (strcmp(r->kind, "server") != 0 || r->command[0] == '\0')
		return ERR_BAD(e,
		               "release %s is not a server release with a "
		               "command",
		               r->id);
	publish_runner_name(r->id, name, sizeof(name));
	memset(addr, 0, sizeof(*addr));
	/* One running from before (a daemon restart) is kept. */
	if (docker_inspect(c->docker, name, &st, msg) != DOCKER_OK ||
	    !st.running) {
		if (container_make(c, r, e) < 0)
			return -1;
		log_info("release %s: production container %s started", r->id,
		         name);
	}
	if (r->port <= 0) { /* workers only: nothing to ask */
		tab_put(r, NULL, RUNNER_NO_WEB);
		return 0;
	}
	if (wait_healthy(c, r, name, addr, why, sizeof(why)) < 0) {
		output_tail(c, r, name, tail, sizeof(tail));
		docker_remove(c->docker, name, msg);
		tab_drop(r->id);
		return err_set(e, 502, "sandbox_unavailable",
		               "the server did not answer GET %s on port %d "
		               "within %d s: %s%s%s",
		               r->health, r->port, RUNNER_START_WAIT_S, why,
		               tail[0] ? "; its last output: " : "", tail);
	}
	tab_put(r, addr, NULL);
	return 0;
}

void
publish_runner_stop(struct core *c, const char *release_id)
{
	char name[64], msg[DOCKER_MSG_LEN];

	publish_runner_name(release_id, name, sizeof(name));
	tab_drop(release_id);
	if (docker_stop(c->docker, name, 5, msg) == DOCKER_NOT_FOUND)
		return;
	if (docker_remove(c->docker, name, msg) != DOCKER_OK)
		log_warn("release %s: its container %s: %s", release_id, name,
		         msg);
}

/* --- the health checks and the recovery -------------------------------- */

/* The active releases' ids, copied out of the store's walk so no Docker
 * call runs inside it. */
struct active {
	struct core *c;
	char (*ids)[ULID_LEN + 1];
	int n, cap;
};

static int
active_add(const struct publication *p, void *arg)
{
	struct active *a = arg;
	struct app app;

	/* An app in the trash keeps its publication but runs nothing: its
	 * restore starts its container again (publish_app_restored).  Left
	 * out here, a container of it still there at the start (a kill -9
	 * during the delete) is removed with the stale ones. */
	if (p->release_id[0] == '\0' ||
	    store_app_get(a->c->store, NULL, p->app_id, &app) ==
	        STORE_NOT_FOUND)
		return 0;
	if (a->n == a->cap) {
		int cap = a->cap ? a->cap * 2 : 16;
		char(*v)[ULID_LEN + 1] =
		    realloc(a->ids, (size_t)cap * sizeof(*v));

		if (v == NULL)
			return 1;
		a->ids = v;
		a->cap = cap;
	}
	snprintf(a->ids[a->n++], ULID_LEN + 1, "%s", p->release_id);
	return 0;
}

/* Every active server release: fn(c, release) for each; -1 when the
 * store cannot say (then nothing is done on a guess). */
static int
each_active_server(struct core *c, struct active *a,
                   void (*fn)(struct core *, const struct release *))
{
	struct release r;
	struct app app;

	a->c = c;
	if (store_publication_each(c->store, active_add, a) != 0)
		return -1;
	for (int i = 0; i < a->n && !c->stopping; i++)
		if (store_release_get(c->store, NULL, a->ids[i], &r) == 0 &&
		    strcmp(r.kind, "server") == 0 &&
		    strcmp(r.status, "ready") == 0 &&
		    store_app_get(c->store, NULL, r.app_id, &app) == 0)
			fn(c, &r); /* a trashed app's is not got */
	return 0;
}

/*
 * Whether r is still its app's active release and the runner's: under
 * pmu, which every switch (publish, rollback, unpublish, the trash)
 * holds, so a restart or a remake never brings back a container that a
 * switch has just stopped.
 */
static bool
still_serving(struct core *c, const struct release *r)
{
	struct publication pb;

	return tab_has(r->id) &&
	       store_publication_get(c->store, r->app_id, &pb) == 0 &&
	       strcmp(pb.release_id, r->id) == 0;
}

/* Makes the container again (it is gone), or restarts it. */
static void
revive(struct core *c, const struct release *r, const char *name, bool make)
{
	char msg[DOCKER_MSG_LEN];
	struct err e = {0};

	pthread_mutex_lock(&c->pub->pmu);
	if (still_serving(c, r) && make) {
		if (container_make(c, r, &e) < 0)
			log_warn("release %s: %s", r->id, e.msg);
	} else if (still_serving(c, r)) {
		docker_stop(c->docker, name, 5, msg);
		if (docker_start(c->docker, name, msg) != DOCKER_OK)
			log_warn("release %s: restarting %s: %s", r->id, name,
			         msg);
		tab_restarted(r->id);
	}
	pthread_mutex_unlock(&c->pub->pmu);
}

/* A failed check: DOWN after RUNNER_HEALTH_FAILS in a row, and then the
 * container is restarted (and given as many checks again). */
static void
check_failed(struct core *c, const struct release *r, const char *name,
             const struct sockaddr_in *addr, const char *why)
{
	char reason[200];

	if (tab_failed(r->id) < RUNNER_HEALTH_FAILS)
		return;
	snprintf(reason, sizeof(reason),
	         "the app's server does not answer: %s; restarting it", why);
	log_warn("release %s: %s", r->id, reason);
	tab_update(r, addr, reason);
	revive(c, r, name, false);
}

/* One release the runner serves (one it does not know, being started or
 * stopped by a switch, is the switch's). */
static void
check_one(struct core *c, const struct release *r)
{
	char name[64], msg[DOCKER_MSG_LEN], why[200];
	struct sockaddr_in addr = {0};
	struct docker_state st;
	int rc;

	if (!tab_has(r->id))
		return;
	publish_runner_name(r->id, name, sizeof(name));
	rc = docker_inspect(c->docker, name, &st, msg);
	if (rc == DOCKER_NOT_FOUND) {
		log_warn("release %s: its container %s is gone; making it "
		         "again",
		         r->id, name);
		tab_update(r, NULL,
		           r->port > 0 ? "the app's server is starting again"
		                       : RUNNER_NO_WEB);
		revive(c, r, name, true);
		return;
	}
	if (rc != DOCKER_OK || r->port <= 0)
		return; /* the engine's trouble: nothing done on a guess */
	if (!up(&st)) {
		state_words(&st, why, sizeof(why));
		check_failed(c, r, name, NULL, why);
		return;
	}
	if (container_addr(&st, r, &addr) < 0)
		snprintf(why, sizeof(why), "its container has no address");
	else if (health_get(&addr, r->health, why, sizeof(why)) == 0) {
		tab_update(r, &addr, NULL);
		return;
	}
	check_failed(c, r, name, &addr, why);
}

void
publish_health_pass(struct core *c)
{
	struct active a = {0};

	if (c->pub != NULL && docker_is_up(c->docker))
		each_active_server(c, &a, check_one);
	free(a.ids);
}

/* At start: a running container is routed to at once, else made. */
static void
recover_one(struct core *c, const struct release *r)
{
	char name[64], msg[DOCKER_MSG_LEN];
	struct sockaddr_in addr;
	struct docker_state st;
	struct err e = {0};

	publish_runner_name(r->id, name, sizeof(name));
	if (docker_inspect(c->docker, name, &st, msg) == DOCKER_OK &&
	    st.running && container_addr(&st, r, &addr) == 0) {
		tab_put(r, &addr, r->port > 0 ? NULL : RUNNER_NO_WEB);
		return;
	}
	tab_put(r, NULL,
	        r->port > 0 ? "the app's server is starting" : RUNNER_NO_WEB);
	if (container_make(c, r, &e) < 0)
		log_warn("release %s: %s", r->id, e.msg);
	else
		log_info("release %s: production container %s started", r->id,
		         name);
}

struct stale_scan {
	struct core *c;
	const struct active *a;
	int removed;
};

static void
stale_one(const char *id, const struct jv *labels, void *arg)
{
	struct stale_scan *s = arg;
	const char *rid = jv_str(jv_get(labels, "sandboxd.release"));
	char msg[DOCKER_MSG_LEN];
	struct release r;

	if (rid == NULL || jv_str(jv_get(labels, RUNNER_LABEL)) == NULL)
		return; /* not a production container */
	for (int i = 0; i < s->a->n; i++)
		if (strcmp(s->a->ids[i], rid) == 0 &&
		    store_release_get(s->c->store, NULL, rid, &r) == 0 &&
		    strcmp(r.kind, "server") == 0)
			return;
	if (docker_remove(s->c->docker, id, msg) == DOCKER_OK) {
		s->removed++;
		log_info("publish: removed the container of release %s (not "
		         "an active one)",
		         rid);
	}
}

void
publish_runner_recover(struct core *c)
{
	struct active a = {0};
	struct stale_scan s = {.c = c, .a = &a};
	char msg[DOCKER_MSG_LEN];

	if (each_active_server(c, &a, recover_one) == 0 &&
	    docker_list(c->docker, "sandboxd.instance", c->instance, stale_one,
	                &s, msg) != DOCKER_OK)
		log_warn("publish: the production containers: %s", msg);
	free(a.ids);
}
