/*
 * The agent's stream ops that join the control plane to something on
 * this node: an exec's raw stream, the supervisor's socket, a
 * sandbox's port (preview), and this engine's container events.
 *
 * Each returns an fd the nodelink server pumps.  preview dials only the
 * address this engine gives the sandbox's container (found by its
 * label), and only inside the sandbox network's subnet: never an
 * address from the wire.  events runs docker_events on a worker that
 * writes one JSON line per event and stops when the control plane goes
 * (a watcher sees the socket's other end close).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "nodeagent/internal.h"
#include "sbnet/sbnet.h"
#include "ws/wsock.h"

int
agent_op_exec_start(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, int *fd, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "id"));
	char msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	(void)ans;
	if (id == NULL || strlen(id) != 64 ||
	    strspn(id, "0123456789abcdef") != 64)
		return ERR_BAD(e, "not an exec id");
	rc = docker_exec_start(a->d, id, jv_is_true(jv_get(req, "tty")), fd,
	                       msg);
	if (rc == DOCKER_NOT_FOUND)
		return ERR_NOTFOUND(e, "%s", msg);
	if (rc != DOCKER_OK)
		return err_set(e, 502, "docker_error", "%s", msg);
	return 0;
}

int
agent_op_sup(void *arg, const struct nl_peer *p, const struct jv *req,
             struct jv **ans, int *fd, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "sandbox"));
	char ws[PATH_MAX];

	(void)p;
	(void)ans;
	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	agent_ws_path(a, id, ws, sizeof(ws));
	*fd = wsock_connect(ws, clock_mono_ms() + AGENT_DIAL_MS, NULL, e);
	return *fd < 0 ? -1 : 0;
}

/* Whether ip lies in the sandbox network's subnet. */
static bool
in_subnet(const struct agent *a, const char *ip)
{
	struct sbnet_cidr c;
	struct in_addr in;

	if (sbnet_cidr_parse(a->net.subnet, &c) < 0 ||
	    inet_pton(AF_INET, ip, &in) != 1)
		return false;
	return (ntohl(in.s_addr) & c.mask) == c.net;
}

/* Connects to ip:port within AGENT_DIAL_MS; the fd (blocking) or -1. */
static int
dial(const char *ip, unsigned port, struct err *e)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port = htons((uint16_t)port)};
	struct pollfd pf;
	int fd, soerr = 0;
	socklen_t len = sizeof(soerr);

	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return ERR_INTERNAL(e, "bad address %s", ip);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ERR_INTERNAL(e, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
	    errno != EINPROGRESS)
		goto refused;
	pf = (struct pollfd){.fd = fd, .events = POLLOUT};
	if (poll(&pf, 1, AGENT_DIAL_MS) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr)
		goto refused;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
refused:
	close(fd);
	return err_set(e, 502, "sandbox_unavailable",
	               "nothing answers on port %u of the sandbox", port);
}

int
agent_op_preview(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, int *fd, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "sandbox"));
	int64_t port = jv_int(jv_get(req, "port"));
	char name[80], cid[72], msg[DOCKER_MSG_LEN];
	struct docker_state st;

	(void)p;
	(void)ans;
	if (!agent_id_ok(id) || port < 1 || port > 65535)
		return ERR_BAD(e, "sandbox and port (1 to 65535)");
	snprintf(name, sizeof(name), "sbx-%s", id);
	if (agent_container(a, name, cid, e) < 0)
		return -1;
	if (docker_inspect(a->d, cid, &st, msg) != DOCKER_OK || !st.running ||
	    st.paused || st.ip[0] == '\0')
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox is not running on this node");
	if (!in_subnet(a, st.ip))
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's address %s is not on its network",
		               st.ip);
	*fd = dial(st.ip, (unsigned)port, e);
	return *fd < 0 ? -1 : 0;
}

/* ---- events ------------------------------------------------------------ */

struct events {
	struct agent *a;
	int fd;
	atomic_bool stop;
	atomic_int refs; /* the events worker's and the watcher's */
};

static void
events_unref(struct events *ev)
{
	if (atomic_fetch_sub(&ev->refs, 1) == 1) {
		close(ev->fd);
		free(ev);
	}
}

static void
on_event(const struct jv *v, void *arg)
{
	struct events *ev = arg;
	const struct jv *attrs = jv_get(jv_get(v, "Actor"), "Attributes");
	const char *sb = jv_str(jv_get(attrs, "sandboxd.sandbox"));
	const char *action = jv_str(jv_get(v, "Action"));
	const char *code = jv_str(jv_get(attrs, "exitCode"));
	struct jv *o;
	struct buf b;
	char name[80];

	if (!agent_id_ok(sb) || action == NULL || atomic_load(&ev->stop))
		return;
	snprintf(name, sizeof(name), "sbx-%s", sb);
	o = jv_obj();
	jv_set_str(o, "name", name);
	jv_set_str(o, "action", action);
	jv_set_int(o, "exit_code", code ? strtol(code, NULL, 10) : 0);
	buf_init(&b, 4096);
	if (jv_dump(o, &b) == 0 && buf_append(&b, "\n", 1) == 0 &&
	    fileio_send_all(ev->fd, b.data, b.len) < 0)
		atomic_store(&ev->stop, true);
	buf_release(&b);
	jv_free(o);
}

static void *
events_main(void *arg)
{
	struct events *ev = arg;

	while (!atomic_load(&ev->stop) && !atomic_load(&ev->a->stop)) {
		int rc =
		    docker_events(ev->a->d, "sandboxd.managed", "true",
		                  (int64_t)time(NULL), on_event, ev, &ev->stop);
		if (rc != DOCKER_OK && !atomic_load(&ev->stop))
			sleep(1); /* the engine restarts: ask again */
	}
	atomic_store(&ev->stop, true);
	shutdown(ev->fd, SHUT_RDWR);
	agent_worker_done(ev->a);
	events_unref(ev);
	return NULL;
}

/* The control plane sends nothing on this stream: its end closing (or
 * the agent stopping) ends the events. */
static void *
watch_main(void *arg)
{
	struct events *ev = arg;
	char drop[256];

	while (!atomic_load(&ev->stop) && !atomic_load(&ev->a->stop)) {
		struct pollfd pf = {.fd = ev->fd, .events = POLLIN};
		if (poll(&pf, 1, 1000) == 1 &&
		    recv(ev->fd, drop, sizeof(drop), MSG_DONTWAIT) <= 0)
			break;
	}
	atomic_store(&ev->stop, true);
	agent_worker_done(ev->a);
	events_unref(ev);
	return NULL;
}

int
agent_op_events(void *arg, const struct nl_peer *p, const struct jv *req,
                struct jv **ans, int *fd, struct err *e)
{
	struct agent *a = arg;
	struct events *ev = calloc(1, sizeof(*ev));
	int sv[2];

	(void)p;
	(void)req;
	(void)ans;
	if (ev == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(ev);
		return ERR_INTERNAL(e, "events: %s", strerror(errno));
	}
	ev->a = a;
	ev->fd = sv[0];
	atomic_store(&ev->refs, 2);
	if (agent_spawn(a, events_main, ev) < 0) {
		close(sv[0]);
		close(sv[1]);
		free(ev);
		return err_set(e, 429, "rate_limited",
		               "the node agent has as many streams as it may");
	}
	if (agent_spawn(a, watch_main, ev) < 0) {
		atomic_store(&ev->stop, true);
		events_unref(ev);
	}
	*fd = sv[1];
	return 0;
}
