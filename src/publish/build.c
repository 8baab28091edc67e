/*
 * The build container and its log.
 *
 * A release is built in a container of its own, never the preview's:
 * the sandbox's image, user, network (so the egress policy applies),
 * memory, pids and open-file limits, a read-only root and a tmpfs /tmp,
 * with the release's work directory as its home (/home/sandbox, the app
 * at workspace/app as in a sandbox).  Its main process only sleeps; the
 * steps run in it one after the other as execs whose output the daemon
 * reads (docker's multiplexed stream, demuxed here) into build.log:
 *   1. prepare: a commit checked out (git, hooks off), HEAD read;
 *   2. install: when the plan has one and the key is not current;
 *   3. build: the plan's build command.
 * One deadline covers them all (publish.timeout_seconds, else
 * SANDBOXD_PUBLISH_BUILD_TIMEOUT_SECONDS): past it, or when the daemon
 * stops, the container is removed, which ends the exec's stream.
 *
 * build.log is bounded: its first PUB_LOG_MAX bytes are written as they
 * come (a follower reads them live), the rest is dropped but for the
 * last PUB_LOG_TAIL bytes, appended at the end after a line that says
 * how much was left out.  The file only grows, so a follower's offset
 * stays good.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "publish/internal.h"
#include "sbnet/sbnet.h"

#define BUILD_POLL_MS  500
#define BUILD_READ     (64u << 10)
#define BUILD_CAPTURE  512 /* bytes of the prepare step kept */
#define BUILD_APP_DIR  "/home/sandbox/workspace/app"
#define EXEC_TIMED_OUT (-1000)
#define EXEC_CANCELLED (-1001)
#define EXEC_DOCKER    (-1002)

struct pub_log {
	int fd;
	size_t written;
	uint64_t dropped;
	char ring[PUB_LOG_TAIL];
	size_t rpos, rlen; /* the ring's next write and fill */
};

struct pub_log *
pub_log_open(const char *dir)
{
	struct pub_log *l = calloc(1, sizeof(*l));
	char path[PATH_MAX];

	if (l == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/build.log", dir);
	l->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (l->fd < 0) {
		free(l);
		return NULL;
	}
	return l;
}

static void
ring_put(struct pub_log *l, const char *data, size_t len)
{
	if (len >= sizeof(l->ring)) {
		data += len - sizeof(l->ring);
		len = sizeof(l->ring);
	}
	for (size_t i = 0; i < len; i++) {
		l->ring[l->rpos] = data[i];
		l->rpos = (l->rpos + 1) % sizeof(l->ring);
	}
	l->rlen =
	    l->rlen + len > sizeof(l->ring) ? sizeof(l->ring) : l->rlen + len;
}

void
pub_log_write(struct pub_log *l, const char *data, size_t len)
{
	size_t room;

	if (l == NULL || len == 0)
		return;
	ring_put(l, data, len);
	room = l->written < PUB_LOG_MAX ? PUB_LOG_MAX - l->written : 0;
	if (len > room) {
		l->dropped += len - room;
		len = room;
	}
	/* A write error (a full disk) loses log lines, not the build. */
	if (len > 0 && fileio_write_all(l->fd, data, len) == 0)
		l->written += len;
}

void
pub_log_printf(struct pub_log *l, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		pub_log_write(l, line,
		              (size_t)n < sizeof(line) ? (size_t)n
		                                       : sizeof(line) - 1);
}

/* The ring's last n bytes in order. */
static size_t
ring_last(const struct pub_log *l, char *out, size_t n)
{
	size_t start;

	if (n > l->rlen)
		n = l->rlen;
	start = (l->rpos + sizeof(l->ring) - n) % sizeof(l->ring);
	for (size_t i = 0; i < n; i++)
		out[i] = l->ring[(start + i) % sizeof(l->ring)];
	return n;
}

void
pub_log_tail(struct pub_log *l, char *out, size_t len)
{
	char raw[PUB_TAIL_ERROR];
	size_t n, o = 0, i = 0;

	out[0] = '\0';
	if (l == NULL || len == 0)
		return;
	n = ring_last(l, raw, len - 1 < sizeof(raw) ? len - 1 : sizeof(raw));
	while (n > 0 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		n--;
	/* Printable and well-formed: it goes into JSON and onto pages. */
	while (i < n && o + 1 < len) {
		size_t k = utf8_char_len(raw + i, n - i);
		unsigned char ch = (unsigned char)raw[i];

		if (k == 0 || (k == 1 && ch < 0x20 && ch != '\n') ||
		    ch == 0x7f) {
			out[o++] = k == 0 && i == 0 ? ' ' : '?';
			i++;
			continue;
		}
		if (o + k >= len)
			break;
		memcpy(out + o, raw + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
}

void
pub_log_close(struct pub_log *l)
{
	char *tail;
	size_t n;

	if (l == NULL)
		return;
	if (l->dropped > 0 && (tail = malloc(PUB_LOG_TAIL)) != NULL) {
		n = ring_last(l, tail,
		              l->dropped < PUB_LOG_TAIL ? l->dropped
		                                        : PUB_LOG_TAIL);
		dprintf(l->fd,
		        "\n== sandboxd: %llu bytes of output past %u MiB left "
		        "out; the last %zu follow ==\n",
		        (unsigned long long)l->dropped, PUB_LOG_MAX >> 20, n);
		fileio_write_all(l->fd, tail, n);
		free(tail);
	}
	close(l->fd);
	free(l);
}

void
pub_build_name(const struct core *c, const char *release_id, char *out,
               size_t len)
{
	size_t n = (size_t)snprintf(out, len, "sandboxd-%s-build-%s",
	                            c->instance, release_id);

	for (size_t i = 0; i < n && i < len; i++)
		if (out[i] >= 'A' && out[i] <= 'Z')
			out[i] = (char)(out[i] - 'A' + 'a');
}

/* --- the container ------------------------------------------------------ */

static int
container_make(struct core *c, const struct pub_build *b, const char *name,
               struct err *e)
{
	char bind[PATH_MAX + 32], id[72], msg[DOCKER_MSG_LEN];
	char lbl_app[ULID_LEN + 1], lbl_rel[ULID_LEN + 1];
	struct docker_spec s = {0};
	struct docker_state st;
	int rc;

	snprintf(bind, sizeof(bind), "%s/work:/home/sandbox", b->dir);
	snprintf(lbl_app, sizeof(lbl_app), "%s", b->r->app_id);
	snprintf(lbl_rel, sizeof(lbl_rel), "%s", b->r->id);
	s.name = name;
	s.image = c->cfg->image;
	s.hostname = "build";
	s.user = "1000:1000";
	s.runtime = strcmp(c->cfg->runtime, "runc") ? c->cfg->runtime : "";
	s.network = c->cfg->network;
	s.binds[0] = bind;
	s.env[0] = "HOME=/home/sandbox";
	s.env[1] = "NO_COLOR=1";
	config_mirror_env(c->cfg, &s.env[2], DOCKER_MAX_KV - 3);
	s.labels[0] = (struct docker_kv){"sandboxd.managed", "true"};
	s.labels[1] = (struct docker_kv){"sandboxd.instance", c->instance};
	s.labels[2] = (struct docker_kv){"sandboxd.build", lbl_rel};
	s.labels[3] = (struct docker_kv){"sandboxd.app", lbl_app};
	s.tmpfs[0] = "/tmp:rw,nosuid,nodev,size=512m,mode=1777";
	s.tmpfs[1] = "/var/tmp:rw,nosuid,nodev,size=128m,mode=1777";
	s.memory_bytes = c->cfg->memory_mb * 1024 * 1024;
	s.pids_limit = c->cfg->pids_limit;
	s.nofile = c->cfg->nofile_limit;
	s.read_only = true;
	s.entrypoint[0] = "/bin/sh";
	s.entrypoint[1] = "-c";
	s.cmd[0] = "exec sleep infinity";
	s.workdir = BUILD_APP_DIR;
	docker_remove(c->docker, name, msg); /* a leftover of a crash */
	rc = docker_create(c->docker, &s, id, msg);
	if (rc == DOCKER_OK)
		rc = docker_start(c->docker, name, msg);
	if (rc != DOCKER_OK)
		return err_set(e, rc == DOCKER_DOWN ? 503 : 502,
		               rc == DOCKER_DOWN ? "docker_unavailable"
		                                 : "docker_error",
		               "the build container: %s", msg);
	if (docker_inspect(c->docker, name, &st, msg) == DOCKER_OK)
		sbnet_container_started(c->net, st.ip);
	return 0;
}

void
pub_build_remove(struct core *c, const char *release_id)
{
	char name[128], msg[DOCKER_MSG_LEN];

	pub_build_name(c, release_id, name, sizeof(name));
	docker_remove(c->docker, name, msg);
}

/* --- one step: an exec and its output ----------------------------------- */

struct step {
	const char *name; /* the container */
	const char *script;
	const char *const *env;
	int64_t deadline_ms; /* monotonic */
	const atomic_bool *cancel;
	struct pub_log *log;
	char *capture; /* NULL, or BUILD_CAPTURE bytes */
	size_t captured;
};

/* The multiplexed stream: 8-byte heads, then that many bytes. */
struct demux {
	unsigned char head[DOCKER_MUX_HEAD];
	size_t have;    /* of the head */
	size_t payload; /* bytes left of the frame */
};

static void
demux_feed(struct demux *m, struct step *s, const char *p, size_t n)
{
	while (n > 0) {
		size_t k;

		if (m->payload == 0) {
			k = DOCKER_MUX_HEAD - m->have;
			k = k < n ? k : n;
			memcpy(m->head + m->have, p, k);
			m->have += k;
			p += k;
			n -= k;
			if (m->have == DOCKER_MUX_HEAD) {
				m->payload = (size_t)m->head[4] << 24 |
				             (size_t)m->head[5] << 16 |
				             (size_t)m->head[6] << 8 |
				             m->head[7];
				m->have = 0;
			}
			continue;
		}
		k = m->payload < n ? m->payload : n;
		pub_log_write(s->log, p, k);
		if (s->capture && s->captured < BUILD_CAPTURE - 1) {
			size_t c = BUILD_CAPTURE - 1 - s->captured;

			c = c < k ? c : k;
			memcpy(s->capture + s->captured, p, c);
			s->captured += c;
			s->capture[s->captured] = '\0';
		}
		m->payload -= k;
		p += k;
		n -= k;
	}
}

/* Reads the exec's output until it ends, the deadline or a cancel. */
static int
step_follow(struct core *c, struct step *s, int fd)
{
	char *buf = malloc(BUILD_READ);
	struct demux m = {0};
	int rc = 0;

	if (buf == NULL)
		return EXEC_DOCKER;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (atomic_load(s->cancel)) {
			rc = EXEC_CANCELLED;
			break;
		}
		if (clock_mono_ms() >= s->deadline_ms) {
			rc = EXEC_TIMED_OUT;
			break;
		}
		if (poll(&p, 1, BUILD_POLL_MS) <= 0)
			continue;
		n = read(fd, buf, BUILD_READ);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		demux_feed(&m, s, buf, (size_t)n);
	}
	free(buf);
	if (rc != 0) {
		char msg[DOCKER_MSG_LEN];

		/* Removing the container ends every process in it. */
		docker_remove(c->docker, s->name, msg);
	}
	return rc;
}

/* The step's exit code, or EXEC_*. */
static int
step_run(struct core *c, struct step *s)
{
	const char *argv[] = {"/bin/sh", "-c", s->script, NULL};
	struct docker_exec_spec x = {.container = s->name,
	                             .cmd = argv,
	                             .env = s->env,
	                             .user = "1000:1000",
	                             .workdir = BUILD_APP_DIR};
	char id[72], msg[DOCKER_MSG_LEN];
	bool running = true;
	int fd = -1, rc, code = -1;

	if (docker_exec_create(c->docker, &x, id, msg) != DOCKER_OK ||
	    docker_exec_start(c->docker, id, false, &fd, msg) != DOCKER_OK) {
		pub_log_printf(s->log, "== sandboxd: %s\n", msg);
		return EXEC_DOCKER;
	}
	rc = step_follow(c, s, fd);
	close(fd);
	if (rc != 0)
		return rc;
	for (int i = 0; i < 50 && running; i++) {
		if (docker_exec_inspect(c->docker, id, &running, &code, msg) !=
		    DOCKER_OK)
			return EXEC_DOCKER;
		if (running)
			usleep(100 * 1000);
	}
	return running ? EXEC_DOCKER : code;
}

/* --- the steps ---------------------------------------------------------- */

static const char prepare_sh[] =
    "if [ -n \"$SANDBOXD_COMMIT\" ]; then "
    "printf '$ git checkout %s\\n' \"$SANDBOXD_COMMIT\"; "
    "git -c core.hooksPath=/dev/null -c advice.detachedHead=false "
    "checkout --quiet --detach --force \"$SANDBOXD_COMMIT\" 2>&1 || exit 3; "
    "fi; "
    "h=$(git -c core.hooksPath=/dev/null rev-parse --verify -q HEAD "
    "2>/dev/null) && printf 'sandboxd-head: %s\\n' \"$h\"; exit 0";

static const char step_sh[] =
    "printf '$ %s\\n' \"$SANDBOXD_STEP\"; exec /bin/sh -c \"$SANDBOXD_STEP\"";

/* HEAD as the prepare step printed it, 40 hex digits, or "". */
static void
head_of(const char *out, char *commit, size_t len)
{
	const char *p = out ? strstr(out, "sandboxd-head: ") : NULL;

	commit[0] = '\0';
	if (p == NULL)
		return;
	p += strlen("sandboxd-head: ");
	if (strspn(p, "0123456789abcdef") >= 40)
		snprintf(commit, len, "%.40s", p);
}

static int
step_fail(struct core *c, const char *name, const char *what, int rc,
          int timeout_s, struct err *e)
{
	char msg[DOCKER_MSG_LEN];
	struct docker_state st;

	if (rc == EXEC_TIMED_OUT)
		return ERR_BAD(e,
		               "the build took longer than %d seconds "
		               "(publish.timeout_seconds) and was stopped",
		               timeout_s);
	if (rc == EXEC_CANCELLED)
		return ERR_BAD(e, "the daemon stopped during the build");
	if (rc == EXEC_DOCKER)
		return ERR_BAD(e, "the build container failed (the Docker "
		                  "engine)");
	if (rc == 137 &&
	    docker_inspect(c->docker, name, &st, msg) == DOCKER_OK &&
	    st.oom_killed)
		return ERR_BAD(e,
		               "%s ran out of memory (the limit is %lld "
		               "MB, SANDBOXD_MEMORY_MB)",
		               what, (long long)c->cfg->memory_mb);
	if (rc == 137)
		return ERR_BAD(e,
		               "%s was killed (exit 137): most likely out "
		               "of memory (the limit is %lld MB, "
		               "SANDBOXD_MEMORY_MB)",
		               what, (long long)c->cfg->memory_mb);
	return ERR_BAD(e, "%s failed (exit %d)", what, rc);
}

static int
run_steps(struct core *c, struct pub_build *b, struct step *s, int timeout_s,
          struct err *e)
{
	char env1[MANIFEST_MAX_COMMAND + 32], capture[BUILD_CAPTURE];
	const char *env[] = {env1, NULL};
	const char *commit =
	    strcmp(b->r->source, "commit") == 0 ? b->r->source_ref : "";
	int rc;

	snprintf(env1, sizeof(env1), "SANDBOXD_COMMIT=%s", commit);
	s->env = env;
	s->script = prepare_sh;
	s->capture = capture;
	capture[0] = '\0';
	rc = step_run(c, s);
	s->capture = NULL;
	if (rc == 3)
		return ERR_BAD(e, "commit %s is not in the app's repository",
		               commit);
	if (rc != 0)
		return step_fail(c, s->name, "the checkout", rc, timeout_s, e);
	head_of(capture, b->commit, sizeof(b->commit));
	s->script = step_sh;
	if (b->install && b->plan->install[0]) {
		snprintf(env1, sizeof(env1), "SANDBOXD_STEP=%s",
		         b->plan->install);
		pub_log_printf(b->log, "== sandboxd: the install\n");
		rc = step_run(c, s);
		if (rc != 0)
			return step_fail(c, s->name, "the install", rc,
			                 timeout_s, e);
	}
	if (b->plan->build[0]) {
		snprintf(env1, sizeof(env1), "SANDBOXD_STEP=%s",
		         b->plan->build);
		pub_log_printf(b->log, "== sandboxd: the build\n");
		rc = step_run(c, s);
		if (rc != 0)
			return step_fail(c, s->name, "the build command", rc,
			                 timeout_s, e);
	}
	return 0;
}

int
pub_build_run(struct core *c, struct pub_build *b, struct err *e)
{
	int timeout_s = b->plan->timeout_s > 0
	                    ? b->plan->timeout_s
	                    : (int)c->cfg->publish_build_timeout_s;
	char name[128], msg[DOCKER_MSG_LEN];
	struct step s = {.name = name,
	                 .deadline_ms = clock_mono_ms() + timeout_s * 1000LL,
	                 .cancel = b->cancel,
	                 .log = b->log};
	int rc;

	pub_build_name(c, b->r->id, name, sizeof(name));
	pub_log_printf(b->log,
	               "== sandboxd: a build container (%s, %lld MB, at most "
	               "%d s)\n",
	               c->cfg->image, (long long)c->cfg->memory_mb, timeout_s);
	if (container_make(c, b, name, e) < 0)
		return -1;
	rc = run_steps(c, b, &s, timeout_s, e);
	docker_remove(c->docker, name, msg);
	return rc;
}
