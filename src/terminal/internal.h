/* Shared by the terminal module's own files only. */
#ifndef TERMINAL_INTERNAL_H
#define TERMINAL_INTERNAL_H

#include <pthread.h>

#include "terminal/terminal.h"

struct term_session {
	struct terminal *t;
	/* Under t->mu: */
	bool live;   /* its thread runs (or is about to) */
	int pending; /* tickets redeemed, not yet attached */
	int new_fd;  /* a WebSocket handed over, not yet taken, or -1 */
	uint8_t *new_extra;
	size_t new_extra_len;
	void (*new_done)(void *);
	void *new_arg;
	/* Set before the thread starts, then read only: */
	char id[ULID_LEN + 1];
	char owner[64];
	char sandbox[ULID_LEN + 1];
	char app[ULID_LEN + 1];
	char actor[64];
	char exec_id[160]; /* orch_exec_create's (opaque) */
	bool tty;
	int dfd;  /* the process's stream */
	int wake; /* an eventfd: a WebSocket was handed over, or stop */
	pthread_t thread;
	int64_t started_ms;
	bool sandbox_stopping; /* under t->mu: end, reason sandbox_stopped */
	bool abandoned;        /* under t->mu: an upgrade did not happen */
};

struct term_ticket {
	char ticket[TERMINAL_TICKET_LEN + 1];
	struct term_session *s;
	int64_t expires_ms;
};

struct terminal {
	struct core *c;
	pthread_mutex_t mu;
	struct term_session *sessions[TERMINAL_TABLE_MAX];
	struct term_ticket tickets[TERMINAL_TABLE_MAX];
	bool stopping;
};

/* relay.c: the session's thread (arg: the session). */
void *terminal_relay(void *arg);

#endif
