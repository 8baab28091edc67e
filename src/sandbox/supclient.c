/*
 * One request to a sandbox's supervisor (sandbox/supclient.h).
 *
 * Connecting: the socket lives in the workspace, which the sandbox owns,
 * so the path could be swapped for a symlink to any socket on the host
 * (the Docker socket, say).  We open the socket inode itself with
 * openat2(O_PATH | O_NOFOLLOW, RESOLVE_NO_SYMLINKS …), check that it is a
 * socket, and connect through /proc/self/fd/N, which names exactly that
 * inode: what we checked is what we talk to.  Whatever listens there may
 * be the sandbox's own program, so nothing may wait on it unbounded: the
 * connect() is non-blocking, one deadline runs from before it to the end
 * of the answer, and a supervisor that missed one is not asked again for
 * a while (the quiet table below).  Rejected: SO_PEERCRED (the real
 * supervisor and the sandbox's programs are the same uid).
 *
 * The quiet table lives in the handle (runtime.c makes the daemon's
 * one); rejected: a file-scope table, which every caller in the process
 * would share and no owner would free.
 */
#include "sandbox/supclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandbox/supanswer.h"
#include "ws/wsfs.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/ulid.h"

/*
 * Supervisors that did not answer in time, or answered garbage: for
 * SUPCLIENT_QUIET_MS every request to them fails at once, and after that
 * one request at a time finds out whether they answer again, so a
 * hostile sandbox costs each of the threads that ask (the API's pool,
 * the task follower) at most one deadline per window, not one per
 * request.  Keyed by the sandbox id (the workspace's last component); a
 * supervisor that answers, or a sandbox that starts, leaves the table.
 * A full table tracks no more (requests then just wait their deadline).
 * Not a lib/idtab: entries leave it, and a stale one (not the least
 * worth) is reused first, by a scan of 64 slots.
 */
struct quiet {
	char id[ULID_LEN + 1];
	int64_t until; /* monotonic ms; 0: a probe may go */
	bool busy;     /* a probe is in flight */
};

struct supclient {
	pthread_mutex_t mu;
	struct quiet quiet[SUPCLIENT_QUIET_SLOTS];
};

struct supclient *
supclient_new(void)
{
	struct supclient *sc = calloc(1, sizeof(*sc));

	if (sc)
		pthread_mutex_init(&sc->mu, NULL);
	return sc;
}

void
supclient_free(struct supclient *sc)
{
	if (sc == NULL)
		return;
	pthread_mutex_destroy(&sc->mu);
	free(sc);
}

static const char *
ws_id(const char *ws)
{
	const char *slash = strrchr(ws, '/');

	return slash ? slash + 1 : ws;
}

static struct quiet *
quiet_find(struct supclient *sc, const char *id)
{
	for (int i = 0; i < SUPCLIENT_QUIET_SLOTS; i++)
		if (sc->quiet[i].id[0] && strcmp(sc->quiet[i].id, id) == 0)
			return &sc->quiet[i];
	return NULL;
}

/* 0: go ahead; -1 (e set): the supervisor is quiet, do not ask now. */
static int
quiet_enter(struct supclient *sc, const char *id, bool *probe, struct err *e)
{
	struct quiet *q;
	int64_t now = clock_mono_ms();
	int rc = 0;

	*probe = false;
	if (sc == NULL)
		return 0;
	pthread_mutex_lock(&sc->mu);
	q = quiet_find(sc, id);
	if (q && (q->busy || q->until > now))
		rc = err_set(e, 502, "sandbox_unavailable",
		             "the sandbox's supervisor did not answer in time "
		             "(asked again within %d s)",
		             SUPCLIENT_QUIET_MS / 1000);
	else if (q)
		*probe = q->busy = true;
	pthread_mutex_unlock(&sc->mu);
	return rc;
}

/* After a request: unresponsive marks it quiet, an answer forgets it. */
static void
quiet_leave(struct supclient *sc, const char *id, bool probe, bool unresponsive)
{
	struct quiet *q, *slots;
	int64_t now = clock_mono_ms();

	if (sc == NULL)
		return;
	slots = sc->quiet;
	pthread_mutex_lock(&sc->mu);
	q = quiet_find(sc, id);
	if (q == NULL && unresponsive)
		for (int i = 0; i < SUPCLIENT_QUIET_SLOTS && q == NULL; i++)
			if (slots[i].id[0] == '\0' ||
			    (!slots[i].busy && slots[i].until + 60000 < now))
				q = &slots[i];
	if (q && unresponsive) {
		snprintf(q->id, sizeof(q->id), "%s", id);
		q->until = now + SUPCLIENT_QUIET_MS;
		if (probe)
			q->busy = false;
	} else if (q && (probe || !q->busy)) {
		memset(q, 0, sizeof(*q));
	}
	pthread_mutex_unlock(&sc->mu);
}

void
supclient_forget(struct supclient *sc, const char *id)
{
	struct quiet *q;

	if (sc == NULL)
		return;
	pthread_mutex_lock(&sc->mu);
	if ((q = quiet_find(sc, id)) != NULL && !q->busy)
		memset(q, 0, sizeof(*q));
	pthread_mutex_unlock(&sc->mu);
}

/* Waits for fd to be ready for events until deadline (monotonic ms). */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int64_t left;
	int n;

	do {
		left = deadline - clock_mono_ms();
		if (left <= 0)
			return -1;
		n = poll(&p, 1, (int)left);
	} while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/*
 * Connects without blocking: a listener the sandbox planted that never
 * accepts fills its backlog, and a unix socket's connect() then waits
 * for room (blocking) or fails with EAGAIN (non-blocking, with no event
 * to poll for), so EAGAIN is retried every few ms until the deadline.
 * The fd; -1 with e, *unresponsive when it was the deadline.
 */
static int
sock_connect(const char *ws, int64_t deadline, bool *unresponsive,
             struct err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	socklen_t sl = sizeof(int);
	int dfd, sfd, fd = -1, soerr = 0, rc;

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
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	while (fd >= 0 &&
	       (rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && clock_mono_ms() < deadline) {
			usleep(SUPCLIENT_CONNECT_RETRY_MS * 1000);
			continue;
		}
		if (errno == EINPROGRESS) {
			if (wait_fd(fd, POLLOUT, deadline) < 0)
				errno = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr,
			                    &sl) == 0 &&
			         soerr == 0)
				break;
			else
				errno = soerr ? soerr : ECONNREFUSED;
		}
		*unresponsive = errno == EAGAIN || errno == ETIMEDOUT;
		close(fd);
		fd = -1;
	}
	close(sfd);
	if (fd < 0 && *unresponsive)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor does not accept "
		               "connections");
	if (fd < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor is not listening");
	return fd;
}

/* Sends len bytes and reads the answer until EOF, all by deadline. */
static int
exchange(int fd, const char *line, size_t len, int64_t deadline,
         struct buf *out)
{
	size_t off = 0;
	char chunk[4096];
	ssize_t n;

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

int
supclient_request(struct supclient *sc, const char *ws, const char *req,
                  size_t len, int timeout_ms, struct jv **answer, bool *broken,
                  struct err *e)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	const char *id = ws_id(ws);
	bool probe, unresponsive = false, ignored;
	struct buf out;
	int fd, rc;

	*answer = NULL;
	if (broken == NULL)
		broken = &ignored;
	*broken = true;
	if (quiet_enter(sc, id, &probe, e) < 0)
		return -1;
	fd = sock_connect(ws, deadline, &unresponsive, e);
	if (fd < 0) {
		quiet_leave(sc, id, probe, unresponsive);
		*broken = unresponsive;
		return -1;
	}
	buf_init(&out, SUPCLIENT_ANSWER_MAX);
	rc = exchange(fd, req, len, deadline, &out);
	close(fd);
	if (rc == 0)
		*answer = supanswer_parse(out.data, out.len);
	buf_release(&out);
	quiet_leave(sc, id, probe, *answer == NULL);
	if (*answer == NULL)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor gave no valid answer "
		               "within %d ms",
		               timeout_ms);
	return 0;
}
