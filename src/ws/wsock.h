/*
 * wsock: a connection to the supervisor's socket in a workspace
 * (<ws>/.sandboxd/sock).  The workspace is the sandbox's, so the path
 * may have been swapped for a link to any socket on the host, and what
 * listens there may be the sandbox's own program: the socket's inode is
 * opened without following anything and connected through
 * /proc/self/fd, and the connect() never waits past the deadline.
 * Any thread.
 */
#ifndef WS_WSOCK_H
#define WS_WSOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

/* A full listen backlog gives no event to poll for: connect() is
 * tried again this often until the deadline. */
#define WSOCK_CONNECT_RETRY_MS 10

/*
 * The status of an err whose cause was the deadline (a listener that
 * does not accept), with code sandbox_unavailable: the caller tells it
 * from "nothing listens" by it and answers 502 either way.  A remote
 * driver's supervisor stream sets it the same way.
 */
#define WSOCK_UNRESPONSIVE 504

/*
 * A connected stream socket (non-blocking, CLOEXEC) to ws's supervisor
 * by deadline (monotonic ms), or -1 with e (502 sandbox_unavailable, or
 * WSOCK_UNRESPONSIVE); *unresponsive (may be NULL) is then whether it
 * was the deadline.
 */
int wsock_connect(const char *ws, int64_t deadline, bool *unresponsive,
                  struct err *e);
/* Waits for fd to be ready for events until deadline (monotonic ms). */
int wsock_wait(int fd, short events, int64_t deadline);

#endif
