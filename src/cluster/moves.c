/*
 * The moves' journal resumed at the control plane's start (before the
 * API and the edge run, so nothing else touches the sandboxes named).
 * A move is journaled in its row as it goes (drain.c):
 *
 *   sleeping  the sandbox is being stopped on its source node
 *   copying   its workspace is being copied to the target (the source
 *             copy is kept whole: wsnode_copy with keep_source)
 *   copied    the target holds a whole, checked copy
 *   repinned  the service and the row name the target
 *   done / failed
 *
 * So a crash before "copied" leaves the sandbox on its source, whole
 * (the target's partial <id>.incoming is dropped by the next copy
 * there); one at "copied" only needs the re-pin; one at "repinned" only
 * needs the source's copy moved to its node's trash.  The sandbox stays
 * stopped after a resume: the journal does not know whether it ran, and
 * a wake brings it back on the request that needs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"
#include "lib/log.h"

struct resume {
	struct move_row rows[CLUSTER_NODES_MAX * 4];
	size_t n;
	bool more; /* rows left for another pass */
};

static void
collect(const struct move_row *m, void *arg)
{
	struct resume *r = arg;

	if (r->n < sizeof(r->rows) / sizeof(r->rows[0]))
		r->rows[r->n++] = *m;
	else
		r->more = true;
}

/* The rest of a repinned move: the source's copy to its trash. */
static void
finish(struct store *s, const struct cluster_move_ops *ops, void *arg,
       const struct move_row *m)
{
	struct err e = {0};

	if (ops->trash_source(arg, m, &e) < 0)
		log_warn("move %lld of sandbox %s: the copy on %s stays (%s)",
		         (long long)m->id, m->sandbox_id,
		         m->src[0] ? m->src : "the manager", e.msg);
	store_move_set(s, m->id, "done", m->bytes, "");
	log_info("move %lld of sandbox %s to %s finished after a restart",
	         (long long)m->id, m->sandbox_id,
	         m->dst[0] ? m->dst : "the manager");
}

static void
resume_one(struct store *s, const struct cluster_move_ops *ops, void *arg,
           const struct move_row *m)
{
	struct err e = {0};

	switch (cluster_move_resume_step(m->state)) {
	case CLUSTER_MOVE_NOTHING:
		return;
	case CLUSTER_MOVE_ROLLBACK:
		log_warn("move %lld of sandbox %s (%s -> %s) was interrupted "
		         "while %s: it stays on %s",
		         (long long)m->id, m->sandbox_id, m->src, m->dst,
		         m->state, m->src[0] ? m->src : "the manager");
		store_move_set(s, m->id, "failed", m->bytes,
		               "interrupted before the copy was whole; the "
		               "sandbox stayed on its node");
		return;
	case CLUSTER_MOVE_REPIN:
		if (ops->repin(arg, m, &e) < 0) {
			log_warn("move %lld of sandbox %s: re-pin: %s",
			         (long long)m->id, m->sandbox_id, e.msg);
			store_move_set(s, m->id, "failed", m->bytes, e.msg);
			return;
		}
		store_move_set(s, m->id, "repinned", m->bytes, "");
		finish(s, ops, arg, m);
		return;
	case CLUSTER_MOVE_FINISH:
		finish(s, ops, arg, m);
		return;
	}
}

int
cluster_moves_resume(struct store *s, const struct cluster_move_ops *ops,
                     void *arg, int *n)
{
	struct resume *r = calloc(1, sizeof(*r));
	int passes = 0;

	*n = 0;
	if (r == NULL)
		return -1;
	/* Each pass closes every row it read, so the next reads new ones. */
	do {
		r->n = 0;
		r->more = false;
		if (store_move_open(s, collect, r) != 0) {
			free(r);
			return -1;
		}
		for (size_t i = 0; i < r->n; i++) {
			resume_one(s, ops, arg, &r->rows[i]);
			(*n)++;
		}
	} while (r->more && ++passes < 64);
	free(r);
	return 0;
}
