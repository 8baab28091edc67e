/*
 * The supervisor's control plane side (protocol in docs/supervisor.md).
 *
 * Connecting: the socket lives in the workspace, which the sandbox owns,
 * so the path could be swapped for a symlink to any socket on the host
 * (the Docker socket, say).  We open the socket inode itself with
 * openat2(O_PATH | O_NOFOLLOW, RESOLVE_NO_SYMLINKS …), check that it is a
 * socket, and connect through /proc/self/fd/N, which names exactly that
 * inode: what we checked is what we talk to.
 *
 * Configuring: only the control plane parses YAML.  run.conf is rewritten
 * only when its rendering changed, so a reload is a no-op for unchanged
 * apps.  An invalid manifest is recorded on the sandbox (shown in its
 * status) and run.conf is left alone: the supervisor never runs a
 * guessed-at default in place of a broken declaration.  The default
 * applies only when there is no sandbox.yaml at all.
 *
 * The worker thread configures sandboxes after their container starts:
 * it waits for the supervisor's socket (the supervisor seeds the
 * template first, then listens) so API calls never wait for a boot.
 *
 * The app's environment (config entries marked expose_env) goes to the
 * supervisor over the socket with `env` after every boot and every
 * change, never through a file: the workspace is the sandbox user's and
 * is copied into backups.  The supervisor holds it in memory only, so a
 * restarted container has none until we send it again, which the worker
 * thread does with the configure after every start.  The request is
 * built in vault memory (wiped when freed) straight from the store's
 * callback, which wipes the opened values itself.
 */
#include "core/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/manifest.h"
#include "core/activity.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "lib/hash.h"
#include "lib/clock.h"
#include "lib/log.h"

/* "env <N>\n" is written right before the body, in the same buffer. */
#define RUNTIME_ENV_HEAD  32
#define RUNTIME_ENV_LOCKS 16 /* stripes serializing env sends */

static int
sock_connect(const char *ws, struct err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int dfd, sfd, fd = -1;

	dfd = wsfs_open_dir(ws, ".sandboxd", e);
	if (dfd < 0)
		return -1;
	sfd = wsfs_openat(dfd, "sock", O_PATH | O_NOFOLLOW, 0);
	close(dfd);
	if (sfd < 0 || fstat(sfd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		if (sfd >= 0)
			close(sfd);
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor is not listening");
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	close(sfd);
	if (fd < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor does not answer");
	return fd;
}

/* Waits for fd to be ready for events until deadline (monotonic ms). */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int64_t left = deadline - clock_mono_ms();

	if (left <= 0)
		return -1;
	return poll(&p, 1, (int)left) == 1 ? 0 : -1;
}

static int
exchange(int fd, const char *line, size_t len, int timeout_ms, struct buf *out)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	size_t off = 0;
	char chunk[4096];
	ssize_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (off < len) {
		if (wait_fd(fd, POLLOUT, deadline) < 0)
			return -1;
		n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		off += n > 0 ? (size_t)n : 0;
	}
	for (;;) {
		if (wait_fd(fd, POLLIN, deadline) < 0)
			return -1;
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n == 0)
			return 0;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0 || buf_append(out, chunk, (size_t)n) < 0)
			return -1;
	}
}

/* A request of len bytes (a line, and for env its body). */
static int
request_bytes(const char *ws, const char *req, size_t len, int timeout_ms,
              struct jv **answer, struct err *e)
{
	struct buf out;
	char perr[128];
	int fd = sock_connect(ws, e), rc;

	*answer = NULL;
	if (fd < 0)
		return -1;
	buf_init(&out, RUNTIME_ANSWER_MAX);
	rc = exchange(fd, req, len, timeout_ms, &out);
	close(fd);
	if (rc == 0 && out.len)
		*answer = jv_parse(out.data, out.len, 8, perr, sizeof(perr));
	buf_release(&out);
	if (*answer == NULL || jv_type(*answer) != JV_OBJECT) {
		jv_free(*answer);
		*answer = NULL;
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor gave no valid answer");
	}
	return 0;
}

int
runtime_request(const char *ws, const char *line, int timeout_ms,
                struct jv **answer, struct err *e)
{
	return request_bytes(ws, line, strlen(line), timeout_ms, answer, e);
}

static bool
exists(int dirfd, const char *rel)
{
	int fd = wsfs_openat(dirfd, rel, O_PATH | O_NOFOLLOW, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Finds the manifest: sandbox.yaml, else the default.  0 or -1 (err). */
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
			snprintf(err, errlen, "sandbox.yaml: %s", e.msg);
			return -1;
		}
		*source = "default";
		manifest_default(m, port, exists(appfd, "package.json"));
		return 0;
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
		rc = wsfs_write(wsfd, ".sandboxd/run.conf", want.data, want.len,
		                WORKSPACE_UID, WORKSPACE_GID, &e) < 0
		         ? -1
		         : 1;
		if (rc < 0)
			log_warn("run.conf: %s", e.msg);
	}
	buf_release(&have);
	buf_release(&want);
	return rc;
}

int
runtime_configure(struct core *c, const char *id, bool reload)
{
	char ws[4200], err[384] = "";
	const char *source = "";
	struct manifest m;
	struct sandbox sb;
	struct err e = {0};
	struct jv *ans = NULL;
	int wsfd, appfd, rc = -1;

	if (store_sandbox_get(c->store, id, &sb) != 0)
		return -1;
	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	wsfd = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0)
		return -1;
	if (!exists(wsfd, ".sandboxd/seeded")) {
		close(wsfd);
		return 0; /* first boot still to come: nothing to read yet */
	}
	appfd = wsfs_openat(wsfd, "workspace/app", O_PATH | O_DIRECTORY, 0);
	if (appfd < 0)
		snprintf(err, sizeof(err),
		         "the app directory is missing or a "
		         "symbolic link");
	else if (manifest_load(appfd, sb.nports ? sb.ports[0] : 3000, &m,
	                       &source, err, sizeof(err)) == 0)
		rc = runconf_update(wsfd, &m);
	store_sandbox_set_manifest(c->store, id, source, err);
	if (rc > 0 && reload &&
	    runtime_request(ws, "reload\n", RUNTIME_TIMEOUT_MS, &ans, &e) ==
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
	if (appfd >= 0)
		close(appfd);
	close(wsfd);
	if (err[0])
		log_warn("sandbox %s: %s", id, err);
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

static pthread_mutex_t env_locks[RUNTIME_ENV_LOCKS];
static pthread_once_t env_locks_once = PTHREAD_ONCE_INIT;

static void
env_locks_init(void)
{
	for (int i = 0; i < RUNTIME_ENV_LOCKS; i++)
		pthread_mutex_init(&env_locks[i], NULL);
}

static pthread_mutex_t *
env_lock(const char *id)
{
	pthread_once(&env_locks_once, env_locks_init);
	return &env_locks[hash_fnv1a(id) % RUNTIME_ENV_LOCKS];
}

/* The request being built: "env <N>\n" goes in the head's last bytes. */
struct env_req {
	const char *id; /* the sandbox, for messages */
	char *p;        /* RUNTIME_ENV_HEAD + RUNTIME_ENV_BYTES, vault memory */
	size_t len;     /* of the body, after the head */
	bool too_big;
};

static int
env_add(const char *name, const char *value, size_t len, void *arg)
{
	struct env_req *r = arg;
	size_t nl = strlen(name);
	char *d;

	if (runtime_env_reserved(name)) {
		log_warn("sandbox %s: config key %s is not given to the app's "
		         "processes: the name is reserved (set before the "
		         "rule was)",
		         r->id, name);
		return 0;
	}
	if (nl + len + 2 > RUNTIME_ENV_BYTES - r->len) {
		r->too_big = true;
		return 1;
	}
	d = r->p + RUNTIME_ENV_HEAD + r->len;
	memcpy(d, name, nl);
	d[nl] = '=';
	memcpy(d + nl + 1, value, len);
	d[nl + 1 + len] = '\0';
	r->len += nl + len + 2;
	return 0;
}

/* Reads the app's environment into r and sends it; the caller holds the
 * sandbox's env lock. */
static int
env_send(struct core *c, const struct sandbox *sb, struct env_req *r)
{
	char ws[4200], head[RUNTIME_ENV_HEAD];
	struct jv *ans = NULL;
	struct err e = {0};
	int n, rc;

	rc = store_app_config_env(c->store, sb->app_id, env_add, r);
	if (r->too_big) {
		log_warn("sandbox %s: the app's environment is not sent: its "
		         "exposed config takes more than %u bytes (the "
		         "processes keep the one they have)",
		         sb->id, RUNTIME_ENV_BYTES);
		return -1;
	}
	if (rc != 0) {
		log_warn("sandbox %s: the app's environment is not sent: a "
		         "value cannot be opened (the processes keep the one "
		         "they have)",
		         sb->id);
		return -1;
	}
	n = snprintf(head, sizeof(head), "env %zu\n", r->len);
	memcpy(r->p + RUNTIME_ENV_HEAD - n, head, (size_t)n);
	workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
	if (request_bytes(ws, r->p + RUNTIME_ENV_HEAD - n, (size_t)n + r->len,
	                  RUNTIME_TIMEOUT_MS, &ans, &e) < 0) {
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
	struct env_req r = {.id = id};
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
	r.p = mem.data;
	mu = env_lock(id);
	pthread_mutex_lock(mu);
	rc = env_send(c, &sb, &r);
	pthread_mutex_unlock(mu);
	vault_secret_free(&mem);
	return rc;
}

void
runtime_app_config_changed(struct core *c, const char *app_id)
{
	struct sandbox sb;

	if (store_sandbox_by_app(c->store, app_id, &sb) == 0 &&
	    sb.status == SANDBOX_RUNNING)
		runtime_send_env(c, sb.id);
}

/* --- the worker thread -----------------------------------------------------
 */

/* Sandboxes whose supervisor is to be configured once it answers. */
struct runtime {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char ids[RUNTIME_QUEUE_MAX][ULID_LEN + 1];
	int n;
	pthread_t thread;
	bool started;
};

int
runtime_init(struct core *c)
{
	struct runtime *rt = calloc(1, sizeof(*rt));

	if (rt == NULL)
		return -1;
	pthread_mutex_init(&rt->mu, NULL);
	pthread_cond_init(&rt->cv, NULL);
	c->rt = rt;
	return 0;
}

void
runtime_free(struct core *c)
{
	struct runtime *rt = c->rt;

	if (rt == NULL)
		return;
	pthread_cond_destroy(&rt->cv);
	pthread_mutex_destroy(&rt->mu);
	free(rt);
	c->rt = NULL;
}

void
runtime_schedule(struct core *c, const char *id)
{
	struct runtime *rt = c->rt;

	pthread_mutex_lock(&rt->mu);
	for (int i = 0; i < rt->n; i++)
		if (strcmp(rt->ids[i], id) == 0)
			goto out;
	if (rt->n < RUNTIME_QUEUE_MAX) {
		snprintf(rt->ids[rt->n], ULID_LEN + 1, "%s", id);
		rt->n++;
		pthread_cond_signal(&rt->cv);
	} else {
		log_warn("sandbox %s: the runtime queue is full; its "
		         "supervisor is not configured now",
		         id);
	}
out:
	pthread_mutex_unlock(&rt->mu);
}

/* Waits until the supervisor answers a ping (it seeds before listening). */
bool
runtime_wait(struct core *c, const char *id, int64_t wait_ms)
{
	int64_t deadline = clock_mono_ms() + wait_ms;
	char ws[4200];
	struct jv *ans;
	struct err e;

	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	while (!c->stopping && clock_mono_ms() < deadline) {
		if (runtime_request(ws, "ping\n", 500, &ans, &e) == 0) {
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
	char ws[4200], err[384];
	const char *source;
	struct sandbox sb;
	int appfd, rc;

	if (store_sandbox_get(c->store, id, &sb) != 0)
		return -1;
	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	appfd = wsfs_open_dir(ws, "workspace/app", NULL);
	if (appfd < 0)
		return -1;
	rc = manifest_load(appfd, sb.nports ? sb.ports[0] : 3000, m, &source,
	                   err, sizeof(err));
	close(appfd);
	return rc;
}

static void *
rq_main(void *arg)
{
	struct core *c = arg;
	struct runtime *rt = c->rt;
	char id[ULID_LEN + 1];

	for (;;) {
		pthread_mutex_lock(&rt->mu);
		while (rt->n == 0 && !c->stopping)
			pthread_cond_wait(&rt->cv, &rt->mu);
		if (c->stopping) {
			pthread_mutex_unlock(&rt->mu);
			return NULL;
		}
		memcpy(id, rt->ids[0], sizeof(id));
		memmove(rt->ids[0], rt->ids[1],
		        (size_t)(rt->n - 1) * sizeof(rt->ids[0]));
		rt->n--;
		pthread_mutex_unlock(&rt->mu);
		if (runtime_wait(c, id, RUNTIME_BOOT_WAIT_MS))
			runtime_configure(c, id, true);
		else if (!c->stopping)
			log_warn("sandbox %s: its supervisor did not come up "
			         "within %d ms",
			         id, RUNTIME_BOOT_WAIT_MS);
	}
}

int
runtime_start(struct core *c)
{
	if (pthread_create(&c->rt->thread, NULL, rq_main, c) != 0)
		return -1;
	c->rt->started = true;
	return 0;
}

void
runtime_stop(struct core *c)
{
	struct runtime *rt = c->rt;

	if (rt == NULL || !rt->started)
		return;
	pthread_mutex_lock(&rt->mu);
	c->stopping = true;
	pthread_cond_broadcast(&rt->cv);
	pthread_mutex_unlock(&rt->mu);
	pthread_join(rt->thread, NULL);
	rt->started = false;
}

static const char *
one_of(const char *s, const char *const *allowed)
{
	for (; s && *allowed; allowed++)
		if (strcmp(s, *allowed) == 0)
			return *allowed;
	return "unknown";
}

/* Copies one process entry, keeping only known fields and values. */
static struct jv *
process_json(const struct jv *p)
{
	static const char *const kinds[] = {"web", "worker", NULL};
	static const char *const states[] = {"starting",  "running", "backoff",
	                                     "crashloop", "stopped", "exited",
	                                     NULL};
	const char *name = jv_str(jv_get(p, "name"));
	struct jv *o = jv_obj(), *v;

	jv_set_str(o, "name", name && strlen(name) <= 32 ? name : "?");
	jv_set_str(o, "kind", one_of(jv_str(jv_get(p, "kind")), kinds));
	jv_set_str(o, "state", one_of(jv_str(jv_get(p, "state")), states));
	v = jv_get(p, "pid");
	if (v && jv_type(v) == JV_INT && jv_int(v) > 0)
		jv_set_int(o, "pid", jv_int(v));
	jv_set_int(o, "restarts",
	           jv_type(jv_get(p, "restarts")) == JV_INT
	               ? jv_int(jv_get(p, "restarts"))
	               : 0);
	v = jv_get(p, "exit_code");
	if (v && jv_type(v) == JV_INT)
		jv_set_int(o, "exit_code", jv_int(v));
	v = jv_get(p, "port");
	if (v && jv_type(v) == JV_INT)
		jv_set_int(o, "port", jv_int(v));
	return o;
}

struct jv *
runtime_status(struct core *c, const char *id)
{
	static const char *const health[] = {"none", "starting", "ready",
	                                     "error", NULL};
	struct jv *ans, *out, *procs, *list;
	const char *detail;
	char ws[4200];
	struct err e;

	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	if (runtime_request(ws, "status\n", 1000, &ans, &e) < 0)
		return NULL;
	out = jv_obj();
	jv_set_str(out, "health",
	           one_of(jv_str(jv_get(ans, "health")), health));
	detail = jv_str(jv_get(ans, "health_detail"));
	if (detail && *detail && strlen(detail) < 300)
		jv_set_str(out, "health_detail", detail);
	procs = jv_get(ans, "processes");
	list = jv_arr();
	for (size_t i = 0;
	     procs && jv_type(procs) == JV_ARRAY && i < jv_len(procs) && i < 32;
	     i++)
		jv_push(list, process_json(jv_at(procs, i)));
	jv_set(out, "processes", list);
	jv_free(ans);
	return out;
}
