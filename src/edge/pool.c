/*
 * Pools of the two big things a connection needs only while it moves
 * bytes: I/O buffers (EDGE_MAX_BUFFERED each) and heads (a copy of up to
 * EDGE_MAX_HEADER_BYTES).  A keep-alive connection waiting for its next
 * request holds neither, so a thousand idle browsers cost a couple of
 * kilobytes each; a busy connection takes them back from the pool
 * without calling malloc.  The pools keep at most EDGE_POOL_KEEP free
 * items each and free the rest, so a burst does not pin its peak memory.
 * Only the loop thread uses them.
 */
#include <stdlib.h>

#include "edge/internal.h"

struct edge_free {
	struct edge_free *next;
};

static void *
pool_get(struct edge_pool *p, size_t size)
{
	struct edge_free *f = p->free;

	if (f == NULL)
		return malloc(size);
	p->free = f->next;
	p->n--;
	return f;
}

static void
pool_put(struct edge_pool *p, void *item)
{
	struct edge_free *f = item;

	if (item == NULL)
		return;
	if (p->n >= EDGE_POOL_KEEP) {
		free(item);
		return;
	}
	f->next = p->free;
	p->free = f;
	p->n++;
}

void
edge_pool_release(struct edge_pool *p)
{
	struct edge_free *f;

	while ((f = p->free) != NULL) {
		p->free = f->next;
		free(f);
	}
	p->n = 0;
}

char *
edge_buf_get(struct edge *e)
{
	return pool_get(&e->bufs, EDGE_MAX_BUFFERED);
}

void
edge_buf_put(struct edge *e, char *b)
{
	pool_put(&e->bufs, b);
}

struct edge_head *
edge_head_get(struct edge *e)
{
	return pool_get(&e->heads, sizeof(struct edge_head));
}

void
edge_head_put(struct edge *e, struct edge_head *h)
{
	pool_put(&e->heads, h);
}
