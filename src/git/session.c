/*
 * session.c - status, diff and commit go to the app's own helper: a
 * long-lived child, confined to the app's workspace without a network
 * (helper.c, confine.c), that keeps the repository open between calls.
 *
 * Why long-lived: a helper per call costs an exec of the daemon's binary
 * and its libraries, the box, and opening the repository again (its
 * config, index and ignore rules: a third of a status on 10,000 files),
 * which together would more than double a status.  A kept helper costs
 * one socket round trip per call.
 *
 * A helper is bound to an app id and a workspace path; a call for the
 * same app with another workspace (the app got a new sandbox) ends the
 * old one.  At most SESSION_SLOTS helpers live at once (the least
 * recently used one is ended for a new one); one idle for SESSION_IDLE_S
 * is ended by gitws_cache_trim (the reaper's tick), one older than
 * SESSION_LIFE_S at its next use, so its CPU time limit
 * (GITWS_HELPER_CPU_S over its whole life) is never what ends it.  A
 * call that has not answered in GITWS_LOCAL_TIMEOUT_S kills its helper
 * and fails; one whose helper had died is retried once on a new one.
 *
 * A helper is taken out of the table while it works, under the app's
 * lock, so no two threads ever talk to one.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

#define SESSION_SLOTS  8
#define SESSION_IDLE_S 120
#define SESSION_LIFE_S 300

struct session {
	char key[64];
	char ws[4096];
	struct gitws_helper h;
	time_t born, used;
};

static struct session table[SESSION_SLOTS];
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static bool
alive(struct session *s)
{
	int st;

	return waitpid(s->h.pid, &st, WNOHANG) == 0;
}

/* key's helper for ws, taken out of the table; false when none fits. */
static bool
take(const char *key, const char *ws, struct session *out)
{
	struct session stale = {.h = {-1, -1}};
	time_t now = time(NULL);
	bool found = false;

	pthread_mutex_lock(&table_mu);
	for (int i = 0; i < SESSION_SLOTS; i++) {
		struct session *s = &table[i];

		if (s->h.pid <= 0 || strcmp(s->key, key) != 0)
			continue;
		if (strcmp(s->ws, ws) == 0 && now - s->born < SESSION_LIFE_S)
			*out = *s, found = true;
		else
			stale = *s;
		s->h.pid = -1;
		s->h.fd = -1;
		break;
	}
	pthread_mutex_unlock(&table_mu);
	if (stale.h.pid > 0)
		gitws_helper_end(&stale.h, true);
	if (found && !alive(out)) {
		gitws_helper_end(&out->h, true);
		found = false;
	}
	return found;
}

static void
put(struct session *s)
{
	struct session *pick = &table[0], evicted;

	s->used = time(NULL);
	pthread_mutex_lock(&table_mu);
	for (int i = 0; i < SESSION_SLOTS; i++) {
		if (table[i].h.pid <= 0) {
			pick = &table[i];
			break;
		}
		if (table[i].used < pick->used)
			pick = &table[i];
	}
	evicted = *pick;
	*pick = *s;
	pthread_mutex_unlock(&table_mu);
	if (evicted.h.pid > 0)
		gitws_helper_end(&evicted.h, true);
}

static int
start(const char *key, const char *ws, struct session *s, struct err *e)
{
	struct jv *hello;
	struct buf b;
	int rc;

	if (strlen(key) >= sizeof(s->key) || strlen(ws) >= sizeof(s->ws))
		return ERR_INTERNAL(e, "git: the workspace path is too long");
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->ws, sizeof(s->ws), "%s", ws);
	s->born = time(NULL);
	if (gitws_helper_spawn(&s->h, e) < 0)
		return -1;
	hello = jv_obj();
	jv_set_str(hello, "op", "session");
	jv_set_str(hello, "key", key);
	jv_set_str(hello, "ws", ws);
	buf_init(&b, 0);
	rc = jv_dump(hello, &b);
	jv_free(hello);
	if (rc == 0)
		rc = gitws_frame_send(s->h.fd, b.data, b.len);
	buf_release(&b);
	if (rc < 0) {
		gitws_helper_end(&s->h, true);
		return ERR_INTERNAL(e, "git: cannot start the helper");
	}
	return 0;
}

/*
 * One request to s: 0 with the answer in ans, 1 when the helper had
 * died before it (worth a retry), -1 with e filled (the helper ended).
 */
static int
ask(struct session *s, const struct buf *req, struct buf *ans, struct err *e)
{
	int64_t deadline =
	    gitws_now_ms() + (int64_t)GITWS_LOCAL_TIMEOUT_S * 1000;
	int rc = gitws_frame_send(s->h.fd, req->data, req->len);
	int st;

	if (rc == 0 && (rc = gitws_frame_recv(s->h.fd, ans, deadline)) == 0)
		return 0;
	st = gitws_helper_end(&s->h, true);
	if (rc == 1)
		return ERR_INTERNAL(e,
		                    "git: the repository did not answer within "
		                    "%d s",
		                    GITWS_LOCAL_TIMEOUT_S);
	gitws_helper_died(st, e);
	return 1;
}

int
gitws_session_call(const char *key, const char *ws, const struct jv *req,
                   struct jv **out, struct err *e)
{
	struct session s;
	struct buf q, ans;
	int rc = -1;

	*out = NULL;
	buf_init(&q, 0);
	if (jv_dump(req, &q) < 0) {
		buf_release(&q);
		return ERR_INTERNAL(e, "git: the request is too large");
	}
	buf_init(&ans, GITWS_HELPER_OUT_MAX);
	gitws_lock(key);
	for (int attempt = 0; attempt < 2; attempt++) {
		bool reused = take(key, ws, &s);

		if (!reused && start(key, ws, &s, e) < 0)
			break;
		rc = ask(&s, &q, &ans, e);
		if (rc == 0) {
			put(&s);
			rc = gitws_helper_answer(&ans, out, e);
			break;
		}
		if (rc < 0 || !reused) {
			rc = -1;
			break;
		}
		*e = (struct err){0}; /* a helper that had died: once more */
		rc = -1;
	}
	gitws_unlock(key);
	buf_release(&ans);
	buf_release(&q);
	return rc;
}

/* Ends the helpers idle too long. */
static void
sessions_trim(void)
{
	struct session idle[SESSION_SLOTS];
	time_t now = time(NULL);
	int n = 0;

	pthread_mutex_lock(&table_mu);
	for (int i = 0; i < SESSION_SLOTS; i++)
		if (table[i].h.pid > 0 &&
		    now - table[i].used >= SESSION_IDLE_S) {
			idle[n++] = table[i];
			table[i].h.pid = -1;
			table[i].h.fd = -1;
		}
	pthread_mutex_unlock(&table_mu);
	for (int i = 0; i < n; i++)
		gitws_helper_end(&idle[i].h, true);
}

/* The reaper's tick: the repositories and the helpers idle too long. */
void
gitws_cache_trim(void)
{
	gitws_repo_cache_trim();
	sessions_trim();
}
