/*
 * A task's events on its app's timeline.  The end of a task is written
 * by the follower's thread, whose actor is the daemon's: a cancel's
 * asker is kept here from task_cancel until then, in a small ring (the
 * oldest forgotten past TLNOTE_CANCELS: that end then says "system").
 */
#include "task/tlnote.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "timeline/timeline.h"

#define TLNOTE_CANCELS 16
static struct {
	char id[ULID_LEN + 1];
	char actor[STORE_EVENT_ACTOR_MAX + 1];
} cancels[TLNOTE_CANCELS];
static unsigned cancels_next;
static pthread_mutex_t cancels_mu = PTHREAD_MUTEX_INITIALIZER;

void
tlnote_cancel_by(const char *id)
{
	pthread_mutex_lock(&cancels_mu);
	snprintf(cancels[cancels_next].id, sizeof(cancels[0].id), "%s", id);
	snprintf(cancels[cancels_next].actor, sizeof(cancels[0].actor), "%s",
	         tl_actor());
	cancels_next = (cancels_next + 1) % TLNOTE_CANCELS;
	pthread_mutex_unlock(&cancels_mu);
}

/* The actor of the cancel of id, forgotten; "" when none was asked. */
static void
cancel_take(const char *id, char actor[STORE_EVENT_ACTOR_MAX + 1])
{
	actor[0] = '\0';
	pthread_mutex_lock(&cancels_mu);
	for (unsigned i = 0; i < TLNOTE_CANCELS; i++)
		if (strcmp(cancels[i].id, id) == 0) {
			memcpy(actor, cancels[i].actor,
			       sizeof(cancels[i].actor));
			cancels[i].id[0] = '\0';
		}
	pthread_mutex_unlock(&cancels_mu);
}

void
tlnote(struct core *c, const char *sandbox_id, const char *task_id,
       const char *type, const char *payload, const char *message)
{
	struct sandbox sb;

	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0)
		return;
	timeline_note(c->tl,
	              &(struct tl_event){.app_id = sb.app_id,
	                                 .type = type,
	                                 .sandbox_id = sandbox_id,
	                                 .task_id = task_id,
	                                 .payload_json = payload},
	              "%s", message);
}

/* {"key": value} as a payload in out (STORE_EVENT_PAYLOAD_MAX + 1). */
static const char *
one_field(const char *key, const char *value, char *out)
{
	struct jv *o = jv_obj();

	jv_set_str(o, key, value);
	return tl_payload(o, out, STORE_EVENT_PAYLOAD_MAX + 1);
}

void
tlnote_started(struct core *c, const struct task *t)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];

	tlnote(c, t->sandbox_id, t->id, "task.started",
	       one_field("agent", t->agent, pl), "A task was started.");
}

void
tlnote_end(struct core *c, const struct task *row, enum task_state st,
           const char *reason)
{
	char actor[STORE_EVENT_ACTOR_MAX + 1], pl[STORE_EVENT_PAYLOAD_MAX + 1],
	    msg[128];

	cancel_take(row->id, actor);
	if (st == TASK_SUCCEEDED) {
		tlnote(c, row->sandbox_id, row->id, "task.succeeded", NULL,
		       "The task succeeded.");
		return;
	}
	if (st == TASK_CANCELLED) {
		/* Who asked, though the follower's thread ends it. */
		tl_set_actor(actor);
		tlnote(c, row->sandbox_id, row->id, "task.cancelled", NULL,
		       "The task was cancelled.");
		tl_set_actor(NULL);
		return;
	}
	reason = reason && *reason ? reason : "unknown";
	snprintf(msg, sizeof(msg), "The task failed (%.64s).", reason);
	tlnote(c, row->sandbox_id, row->id, "task.failed",
	       one_field("reason", reason, pl), msg);
}
