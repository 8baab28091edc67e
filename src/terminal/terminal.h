/*
 * terminal: shells and commands in a sandbox over a WebSocket
 * (docs/api.md, "Terminal"; docs/design.md, "The terminal").
 *
 * A session is a process made by the engine's exec API in the sandbox's
 * container, as the sandbox user, in the app directory.  A ticket (one
 * use, TERMINAL_TICKET_S) opens a WebSocket onto a session; one thread
 * per session relays between the two with a bounded buffer each way and
 * keeps the last TERMINAL_RING_BYTES of output for a reconnect.  Every
 * function may be called from any thread.
 */
#ifndef TERMINAL_TERMINAL_H
#define TERMINAL_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/ulid.h"
#include "sandbox/core.h"

#define TERMINAL_TICKET_S    30
#define TERMINAL_RING_BYTES  (64u << 10) /* replayed on a reconnect */
#define TERMINAL_CHUNK_BYTES (64u << 10) /* read from the process at once */
#define TERMINAL_IN_BYTES    (64u << 10) /* a message from the client */
#define TERMINAL_TABLE_MAX   256         /* sessions and tickets, all */
#define TERMINAL_ARGV_MAX    64
#define TERMINAL_TICKET_LEN  43 /* 32 random bytes, base64url */

struct terminal;
struct term_session;

struct terminal_open {
	const char *owner;       /* the tenant */
	const char *actor;       /* who, for the timeline */
	const char *session_id;  /* reattach to it, or NULL */
	const char *const *argv; /* NULL: a login shell */
	bool tty;
	int cols, rows;
};

struct terminal_ticket {
	char ticket[TERMINAL_TICKET_LEN + 1];
	char session_id[ULID_LEN + 1];
	int64_t expires_at; /* unix seconds */
};

int terminal_init(struct terminal **out, struct core *c);
/* Ends every session (reason "closed") and frees the table. */
void terminal_free(struct terminal *t);

/*
 * A ticket for sandbox sb (running: the caller woke it) as o asks: a new
 * session, or o->session_id's (the same tenant's and sandbox's, else
 * 404).  409 terminal_limit past the caps.
 */
int terminal_ticket(struct terminal *t, const struct sandbox *sb,
                    const struct terminal_open *o, struct terminal_ticket *tk,
                    struct err *e);

/* Takes a ticket (once): its session, or NULL with e (403). */
struct term_session *terminal_redeem(struct terminal *t, const char *ticket,
                                     struct err *e);

/*
 * Hands the WebSocket fd (upgraded, extra: bytes read past its head) to
 * the session; done(arg) is called once the session is finished with
 * the fd (the caller then closes it).  Never blocks on the network.
 */
void terminal_attach(struct term_session *s, int fd, const uint8_t *extra,
                     size_t extra_len, void (*done)(void *), void *arg);

/*
 * The connection of a ticket taken ended before its upgrade: a session
 * never attached ends now (its slot is free again), else it stays
 * detached for its reattach window.
 */
void terminal_abandon(struct term_session *s);

/*
 * The core hook CORE_SANDBOX_STOPPING: ends the sandbox's sessions
 * (reason sandbox_stopped), and waits up to 2 s for them to let go of
 * their processes' streams (the hangup ends an interactive shell, which
 * would hold the stop for its grace period).
 */
void terminal_sandbox_stopping(struct core *c, const char *id);

/* Sessions open (attached or detached), for tests and metrics. */
int terminal_count(struct terminal *t);

#endif
