/*
 * The terminal's sessions and tickets (terminal.h).  A session starts
 * its process when its first ticket is handed out, and its thread
 * (relay.c) runs until the process ends or a limit ends it; tickets
 * bind one WebSocket to one session, once, for TERMINAL_TICKET_S.
 */
#include "terminal/terminal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "docker/docker.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "orch/orch.h"
#include "sandbox/runtime.h"
#include "store/store.h"
#include "timeline/timeline.h"
#include "terminal/internal.h"

/* The app directory, inside the container (the workspace is its home). */
#define TERMINAL_APP_DIR "/home/sandbox/workspace/app"
#define TERMINAL_ENV_MAX 280

static const char *const login_shell[] = {
    "/bin/sh", "-c",
    "if command -v bash >/dev/null 2>&1; then exec bash -l; "
    "else exec sh -l; fi",
    NULL};

int
terminal_init(struct terminal **out, struct core *c)
{
	struct terminal *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	t->c = c;
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	return 0;
}

void
terminal_free(struct terminal *t)
{
	uint64_t one = 1;
	bool busy = true;

	if (t == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	t->stopping = true;
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++)
		if (t->sessions[i] && t->sessions[i]->live &&
		    write(t->sessions[i]->wake, &one, sizeof(one)) < 0)
			log_warn("terminal: wake: %s", strerror(errno));
	pthread_mutex_unlock(&t->mu);
	for (int n = 0; busy && n < 50; n++) { /* up to 5 s */
		busy = terminal_count(t) > 0;
		if (busy)
			usleep(100000);
	}
	for (int i = 0; !busy && i < TERMINAL_TABLE_MAX; i++) {
		if (t->sessions[i])
			close(t->sessions[i]->wake);
		free(t->sessions[i]);
	}
	pthread_mutex_destroy(&t->mu);
	if (!busy)
		free(t); /* else a thread still holds it: leaked at exit */
}

int
terminal_count(struct terminal *t)
{
	int n = 0;

	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++)
		n += t->sessions[i] && t->sessions[i]->live;
	pthread_mutex_unlock(&t->mu);
	return n;
}

/* Under t->mu. */
static void
count_open(struct terminal *t, const char *owner, const char *sandbox,
           int *per_sb, int *per_tenant)
{
	*per_sb = *per_tenant = 0;
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++) {
		struct term_session *s = t->sessions[i];
		if (s == NULL || !s->live)
			continue;
		*per_tenant += strcmp(s->owner, owner) == 0;
		*per_sb += strcmp(s->sandbox, sandbox) == 0;
	}
}

/* Under t->mu: a free slot (allocated when new), or NULL. */
static struct term_session *
slot_free(struct terminal *t)
{
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++) {
		struct term_session *s = t->sessions[i];
		if (s && !s->live && s->pending == 0)
			return s;
		if (s == NULL) {
			s = calloc(1, sizeof(*s));
			if (s == NULL)
				return NULL;
			s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (s->wake < 0) {
				free(s);
				return NULL;
			}
			t->sessions[i] = s;
			return s;
		}
	}
	return NULL;
}

struct env_list {
	char *items[TERMINAL_ENV_MAX + 1];
	int n;
};

static int
env_add(const char *name, const char *value, size_t len, void *arg)
{
	struct env_list *l = arg;
	size_t nl = strlen(name);
	char *p;

	if (l->n >= TERMINAL_ENV_MAX || runtime_env_reserved(name))
		return 0;
	p = malloc(nl + len + 2);
	if (p == NULL)
		return 1;
	memcpy(p, name, nl);
	p[nl] = '=';
	memcpy(p + nl + 1, value, len);
	p[nl + 1 + len] = '\0';
	l->items[l->n++] = p;
	return 0;
}

static void
env_wipe(struct env_list *l)
{
	for (int i = 0; i < l->n; i++) {
		explicit_bzero(l->items[i], strlen(l->items[i]));
		free(l->items[i]);
	}
}

/*
 * Makes and starts the session's process: the sandbox user, the app
 * directory, the container's environment and then the app's (as its web
 * and worker processes have it), then HOME, PATH, LANG and TERM.
 */
static int
exec_begin(struct terminal *t, struct term_session *s,
           const struct terminal_open *o, struct err *e)
{
	struct env_list env = {0};
	struct docker_exec_spec spec = {0};
	char name[128], msg[DOCKER_MSG_LEN];
	int rc;

	if (store_app_config_env(t->c->store, s->app, env_add, &env) != 0) {
		env_wipe(&env);
		return err_set(e, 500, "internal",
		               "the app's environment cannot be read");
	}
	env.items[env.n] = NULL;
	{
		const char *fixed[] = {"HOME=/home/sandbox",
		                       "PATH=/usr/local/sbin:/usr/local/bin:"
		                       "/usr/sbin:/usr/bin:/sbin:/bin",
		                       "LANG=C.UTF-8", "TERM=xterm-256color"};
		for (size_t i = 0; i < 4 && env.n < TERMINAL_ENV_MAX; i++)
			env.items[env.n++] = strdup(fixed[i]);
		env.items[env.n] = NULL;
	}
	core_container_name(t->c, s->sandbox, name, sizeof(name));
	spec.container = name;
	spec.cmd = o->argv ? o->argv : login_shell;
	spec.env = (const char *const *)env.items;
	spec.user = "1000:1000";
	spec.workdir = TERMINAL_APP_DIR;
	spec.tty = s->tty;
	rc = orch_exec_create(t->c->orch, &spec, s->exec_id, msg);
	env_wipe(&env);
	if (rc == DOCKER_OK)
		rc = orch_exec_start(t->c->orch, s->exec_id, s->tty, &s->dfd,
		                     msg);
	if (rc == DOCKER_OK && s->tty && o->cols > 0 && o->rows > 0)
		orch_exec_resize(t->c->orch, s->exec_id, o->cols, o->rows, msg);
	if (rc == DOCKER_DOWN)
		return ERR_DOCKER(e, "%s", msg);
	if (rc != DOCKER_OK)
		return err_set(e, 502, "docker_error", "%s", msg);
	return 0;
}

static void
ticket_make(char out[TERMINAL_TICKET_LEN + 1])
{
	static const char b64u[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                           "abcdefghijklmnopqrstuvwxyz0123456789-_";
	uint8_t r[32];
	size_t o = 0;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		abort(); /* no randomness: nothing may be handed out */
	for (size_t i = 0; i < 32; i += 3) {
		uint32_t v = (uint32_t)r[i] << 16 |
		             (uint32_t)(i + 1 < 32 ? r[i + 1] : 0) << 8 |
		             (i + 2 < 32 ? r[i + 2] : 0);
		for (int k = 0; k < 4 && o < TERMINAL_TICKET_LEN; k++)
			out[o++] = b64u[(v >> (18 - 6 * k)) & 63];
	}
	out[TERMINAL_TICKET_LEN] = '\0';
	explicit_bzero(r, sizeof(r));
}

/* Under t->mu: records a ticket for s; -1 when the table is full. */
static int
ticket_put(struct terminal *t, struct term_session *s,
           struct terminal_ticket *tk)
{
	int64_t now = clock_mono_ms();

	for (int i = 0; i < TERMINAL_TABLE_MAX; i++) {
		struct term_ticket *k = &t->tickets[i];
		if (k->s != NULL && k->expires_ms > now)
			continue;
		ticket_make(k->ticket);
		k->s = s;
		k->expires_ms = now + TERMINAL_TICKET_S * 1000;
		snprintf(tk->ticket, sizeof(tk->ticket), "%s", k->ticket);
		snprintf(tk->session_id, sizeof(tk->session_id), "%s", s->id);
		tk->expires_at = clock_now() + TERMINAL_TICKET_S;
		return 0;
	}
	return -1;
}

/* Under t->mu: the live session id names, the tenant's, on sb. */
static struct term_session *
session_find(struct terminal *t, const char *id, const char *owner,
             const char *sandbox)
{
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++) {
		struct term_session *s = t->sessions[i];
		if (s && s->live && strcmp(s->id, id) == 0 &&
		    strcmp(s->owner, owner) == 0 &&
		    strcmp(s->sandbox, sandbox) == 0)
			return s;
	}
	return NULL;
}

static int
ticket_reattach(struct terminal *t, const struct sandbox *sb,
                const struct terminal_open *o, struct terminal_ticket *tk,
                struct err *e)
{
	struct term_session *s;
	int rc = 0;

	pthread_mutex_lock(&t->mu);
	s = session_find(t, o->session_id, o->owner, sb->id);
	if (s == NULL)
		rc = ERR_NOTFOUND(e, "no terminal session %s", o->session_id);
	else if (ticket_put(t, s, tk) < 0)
		rc = err_set(e, 409, "terminal_limit", "too many tickets");
	pthread_mutex_unlock(&t->mu);
	return rc;
}

/* Under t->mu: a slot for a new session within the caps, or NULL. */
static struct term_session *
session_reserve(struct terminal *t, const struct sandbox *sb,
                const struct terminal_open *o, struct err *e)
{
	const struct config *cfg = t->c->cfg;
	struct term_session *s;
	int per_sb, per_tenant;

	count_open(t, o->owner, sb->id, &per_sb, &per_tenant);
	if (per_sb >= cfg->term_per_sandbox) {
		err_set(e, 409, "terminal_limit",
		        "%d terminals are open on this sandbox already",
		        per_sb);
		return NULL;
	}
	if (per_tenant >= cfg->term_per_tenant) {
		err_set(e, 409, "terminal_limit",
		        "%d terminals are open already", per_tenant);
		return NULL;
	}
	s = slot_free(t);
	if (s == NULL) {
		err_set(e, 409, "terminal_limit", "too many terminals");
		return NULL;
	}
	s->live = true; /* counted from now on */
	s->sandbox_stopping = false;
	s->abandoned = false;
	s->pending = 0;
	s->new_fd = -1;
	s->t = t;
	ulid_new(s->id);
	snprintf(s->owner, sizeof(s->owner), "%s", o->owner);
	snprintf(s->sandbox, sizeof(s->sandbox), "%s", sb->id);
	snprintf(s->app, sizeof(s->app), "%s", sb->app_id);
	snprintf(s->actor, sizeof(s->actor), "%s", o->actor ? o->actor : "");
	s->tty = o->argv == NULL || o->tty;
	s->dfd = -1;
	return s;
}

int
terminal_ticket(struct terminal *t, const struct sandbox *sb,
                const struct terminal_open *o, struct terminal_ticket *tk,
                struct err *e)
{
	struct term_session *s;
	char payload[96];
	struct tl_event ev = {.app_id = sb->app_id,
	                      .type = "terminal.opened",
	                      .sandbox_id = sb->id};
	int rc;

	if (o->session_id && o->session_id[0])
		return ticket_reattach(t, sb, o, tk, e);
	pthread_mutex_lock(&t->mu);
	s = t->stopping ? NULL : session_reserve(t, sb, o, e);
	pthread_mutex_unlock(&t->mu);
	if (s == NULL)
		return -1;
	if (exec_begin(t, s, o, e) < 0) {
		pthread_mutex_lock(&t->mu);
		s->live = false;
		pthread_mutex_unlock(&t->mu);
		return -1;
	}
	s->started_ms = clock_mono_ms();
	pthread_mutex_lock(&t->mu);
	rc = ticket_put(t, s, tk);
	pthread_mutex_unlock(&t->mu);
	if (rc < 0 ||
	    pthread_create(&s->thread, NULL, terminal_relay, s) != 0) {
		close(s->dfd);
		pthread_mutex_lock(&t->mu);
		s->live = false;
		pthread_mutex_unlock(&t->mu);
		return err_set(e, 409, "terminal_limit", "too many terminals");
	}
	pthread_detach(s->thread);
	snprintf(payload, sizeof(payload),
	         "{\"session_id\":\"%s\",\"kind\":\"%s\"}", s->id,
	         o->argv ? "command" : "shell");
	ev.payload_json = payload;
	timeline_note(t->c->tl, &ev, "terminal %s opened (%s)", s->id,
	              o->argv ? "a command" : "a shell");
	return 0;
}

struct term_session *
terminal_redeem(struct terminal *t, const char *ticket, struct err *e)
{
	int64_t now = clock_mono_ms();
	struct term_session *s = NULL;
	size_t n = strnlen(ticket, TERMINAL_TICKET_LEN + 1);

	pthread_mutex_lock(&t->mu);
	for (int i = 0; n == TERMINAL_TICKET_LEN && i < TERMINAL_TABLE_MAX;
	     i++) {
		struct term_ticket *k = &t->tickets[i];
		unsigned char d = 0;
		if (k->s == NULL)
			continue;
		for (size_t j = 0; j < TERMINAL_TICKET_LEN; j++)
			d |= (unsigned char)(k->ticket[j] ^ ticket[j]);
		if (d != 0)
			continue;
		if (k->expires_ms > now && k->s->live) {
			s = k->s;
			s->pending++;
		}
		k->s = NULL; /* used, or expired: never again */
		explicit_bzero(k->ticket, sizeof(k->ticket));
		break;
	}
	pthread_mutex_unlock(&t->mu);
	if (s == NULL)
		err_set(e, 403, "ticket_invalid",
		        "the terminal ticket is unknown, used or expired");
	return s;
}

void
terminal_attach(struct term_session *s, int fd, const uint8_t *extra,
                size_t extra_len, void (*done)(void *), void *arg)
{
	struct terminal *t = s->t;
	uint64_t one = 1;
	uint8_t *copy = NULL;
	void (*old_done)(void *) = NULL;
	void *old_arg = NULL;

	if (extra_len) {
		copy = malloc(extra_len);
		if (copy)
			memcpy(copy, extra, extra_len);
	}
	pthread_mutex_lock(&t->mu);
	s->pending--;
	if (!s->live || (extra_len && copy == NULL)) {
		pthread_mutex_unlock(&t->mu);
		free(copy);
		done(arg);
		return;
	}
	if (s->new_fd >= 0) { /* one handed over and not yet taken */
		old_done = s->new_done;
		old_arg = s->new_arg;
		free(s->new_extra);
	}
	s->new_fd = fd;
	s->new_extra = copy;
	s->new_extra_len = extra_len;
	s->new_done = done;
	s->new_arg = arg;
	if (write(s->wake, &one, sizeof(one)) < 0)
		log_warn("terminal: wake: %s", strerror(errno));
	pthread_mutex_unlock(&t->mu);
	if (old_done)
		old_done(old_arg);
}

void
terminal_abandon(struct term_session *s)
{
	struct terminal *t = s->t;
	uint64_t one = 1;

	log_info("terminal %s: the upgrade did not happen", s->id);
	pthread_mutex_lock(&t->mu);
	s->pending--;
	if (s->live && s->pending == 0 && s->new_fd < 0) {
		s->abandoned = true;
		if (write(s->wake, &one, sizeof(one)) < 0)
			log_warn("terminal: wake: %s", strerror(errno));
	}
	pthread_mutex_unlock(&t->mu);
}

void
terminal_sandbox_stopping(struct core *c, const char *id)
{
	struct terminal *t = c->term;
	uint64_t one = 1;
	int left = 1;

	if (t == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++) {
		struct term_session *s = t->sessions[i];
		if (s && s->live && strcmp(s->sandbox, id) == 0) {
			s->sandbox_stopping = true;
			if (write(s->wake, &one, sizeof(one)) < 0)
				log_warn("terminal: wake: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&t->mu);
	for (int n = 0; left && n < 40; n++) { /* up to 2 s */
		left = 0;
		pthread_mutex_lock(&t->mu);
		for (int i = 0; i < TERMINAL_TABLE_MAX; i++)
			left += t->sessions[i] && t->sessions[i]->live &&
			        strcmp(t->sessions[i]->sandbox, id) == 0;
		pthread_mutex_unlock(&t->mu);
		if (left)
			usleep(50000);
	}
}
