/*
 * One request to a sandbox's supervisor (sandbox/supclient.h).
 *
 * Connecting is the orchestrator's (orch_sup_connect): on this host the
 * socket in the workspace, opened without following links and connected
 * without blocking (ws/wsock.c); on another node, its agent's stream.
 * Whatever listens there may be the sandbox's own program, so nothing
 * may wait on it unbounded: one deadline runs from before the connect
 * to the end of the answer, and a supervisor that missed one is not
 * asked again for a while (the quiet table below).
 *
 * The quiet table lives in the handle (runtime.c makes the daemon's
 * one); rejected: a file-scope table, which every caller in the process
 * would share and no owner would free.
 */
#include "sandbox/supclient.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "orch/orch.h"
#include "sandbox/supanswer.h"
#include "ws/wsock.h"
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

/* Sends len bytes and reads the answer until EOF, all by deadline. */
static int
exchange(int fd, const char *line, size_t len, int64_t deadline,
         struct buf *out)
{
	size_t off = 0;
	char chunk[4096];
	ssize_t n;

	while (off < len) {
		if (wsock_wait(fd, POLLOUT, deadline) < 0)
			return -1;
		n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		off += n > 0 ? (size_t)n : 0;
	}
	for (;;) {
		if (wsock_wait(fd, POLLIN, deadline) < 0)
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

/*
 * The connection, by the orchestrator (the O_PATH connect of ws/wsock.c
 * here, a node agent's stream elsewhere); its deadline is a refusal of
 * its own (WSOCK_UNRESPONSIVE), answered as 502 like the rest.
 */
static int
sup_connect(struct orch *o, const char *id, const char *node, int64_t deadline,
            bool *unresponsive, struct err *e)
{
	int fd = -1;

	*unresponsive = false;
	if (orch_sup_connect(o, id, node, deadline, &fd, e) == 0 && fd >= 0)
		return fd;
	if (e->status == WSOCK_UNRESPONSIVE) {
		*unresponsive = true;
		e->status = 502;
	}
	return -1;
}

int
supclient_request(struct supclient *sc, struct orch *o, const char *id,
                  const char *node, const char *req, size_t len, int timeout_ms,
                  struct jv **answer, bool *broken, struct err *e)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	bool probe, unresponsive = false, ignored;
	struct buf out;
	int fd, rc;

	*answer = NULL;
	if (broken == NULL)
		broken = &ignored;
	*broken = true;
	if (quiet_enter(sc, id, &probe, e) < 0)
		return -1;
	fd = sup_connect(o, id, node, deadline, &unresponsive, e);
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
