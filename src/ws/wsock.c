/*
 * wsock: connecting to the supervisor in a workspace (ws/wsock.h).
 *
 * We open the socket inode itself with openat2(O_PATH | O_NOFOLLOW,
 * RESOLVE_NO_SYMLINKS …) through wsfs, check that it is a socket, and
 * connect through /proc/self/fd/N, which names exactly that inode: what
 * we checked is what we talk to.  The connect() is non-blocking and
 * bounded by the caller's deadline.  Rejected: SO_PEERCRED (the real
 * supervisor and the sandbox's programs are the same uid).
 */
#include "ws/wsock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ws/wsfs.h"
#include "lib/clock.h"

int
wsock_wait(int fd, short events, int64_t deadline)
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

/* The socket's inode, O_PATH, checked to be a socket; -1 with e. */
static int
sock_open(const char *ws, struct err *e)
{
	struct stat st;
	int dfd, sfd;

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
	return sfd;
}

/*
 * Connects without blocking: a listener the sandbox planted that never
 * accepts fills its backlog, and a unix socket's connect() then waits
 * for room (blocking) or fails with EAGAIN (non-blocking, with no event
 * to poll for), so EAGAIN is retried every few ms until the deadline.
 */
int
wsock_connect(const char *ws, int64_t deadline, bool *unresponsive,
              struct err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t sl = sizeof(int);
	int sfd, fd = -1, soerr = 0, rc;
	bool late = false;

	if (unresponsive)
		*unresponsive = false;
	if ((sfd = sock_open(ws, e)) < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	while (fd >= 0 &&
	       (rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0) {
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && clock_mono_ms() < deadline) {
			usleep(WSOCK_CONNECT_RETRY_MS * 1000);
			continue;
		}
		if (errno == EINPROGRESS) {
			if (wsock_wait(fd, POLLOUT, deadline) < 0)
				errno = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr,
			                    &sl) == 0 &&
			         soerr == 0)
				break;
			else
				errno = soerr ? soerr : ECONNREFUSED;
		}
		late = errno == EAGAIN || errno == ETIMEDOUT;
		close(fd);
		fd = -1;
	}
	close(sfd);
	if (unresponsive)
		*unresponsive = late;
	if (fd < 0 && late)
		return err_set(e, WSOCK_UNRESPONSIVE, "sandbox_unavailable",
		               "the sandbox's supervisor does not accept "
		               "connections");
	if (fd < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor is not listening");
	return fd;
}
