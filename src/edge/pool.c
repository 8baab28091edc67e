/*
 * Pools of the two big things a connection needs only while it moves
 * bytes: I/O buffers (EDGE_MAX_BUFFERED each) and heads (a copy of up to
 * EDGE_MAX_HEADER_BYTES).  A keep-alive connection waiting for its next
 * request holds neither, so a thousand idle browsers cost a couple of
 * kilobytes each; a busy connection takes them back from the pool
 * without a system call.  Only the loop thread uses them.
 *
 * Both are mapped pages of their own (mmap), not malloc's: a buffer
 * costs memory only for the pages bytes were read into, and what is
 * unmapped goes back to the system at once, where freed heap chunks
 * would keep a burst's peak resident.  e->mem counts what the edge
 * holds: the touched part of every buffer (in use or kept; the high-
 * water mark of bytes read into it, which conn.c reports through
 * edge_buf_touched) and every head whole.  That is the figure
 * EDGE_MEMORY_BUDGET_BYTES bounds: reads that would touch more wait
 * (conn.c), a head is not taken past it, and a pool keeps at most
 * EDGE_POOL_KEEP items and nothing once the budget is near.
 *
 * Rejected: malloc with a counter (freed chunks stay resident, so the
 * count would not be the memory); MADV_DONTNEED on every return to the
 * pool (two system calls and fresh page faults per request).
 */
#include <sys/mman.h>

#include "edge/internal.h"

struct edge_free {
	struct edge_free *next;
	size_t touched;
};

static void *
pool_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The pool is near the budget: items go back to the system. */
static bool
pool_full(const struct edge *e, const struct edge_pool *p)
{
	return p->n >= EDGE_POOL_KEEP ||
	       e->mem > EDGE_MEMORY_BUDGET_BYTES / 8 * 7;
}

void
edge_pool_release(struct edge *e, struct edge_pool *p, size_t size)
{
	struct edge_free *f;

	while ((f = p->free) != NULL) {
		p->free = f->next;
		e->mem -= f->touched;
		munmap(f, size);
	}
	p->n = 0;
}

char *
edge_buf_get(struct edge *e, size_t *touched)
{
	struct edge_free *f = e->bufs.free;

	if (f == NULL) {
		*touched = 0;
		return pool_map(EDGE_MAX_BUFFERED);
	}
	e->bufs.free = f->next;
	e->bufs.n--;
	*touched = f->touched;
	return (char *)f;
}

void
edge_buf_touched(struct edge *e, size_t *touched, size_t len)
{
	len = (len + EDGE_PAGE_SIZE - 1) / EDGE_PAGE_SIZE * EDGE_PAGE_SIZE;
	if (len <= *touched)
		return;
	e->mem += len - *touched;
	*touched = len;
}

/* The free-list node is written into the buffer's first page. */
void
edge_buf_put(struct edge *e, char *b, size_t touched)
{
	struct edge_free *f = (struct edge_free *)b;

	if (b == NULL)
		return;
	if (pool_full(e, &e->bufs)) {
		e->mem -= touched;
		munmap(b, EDGE_MAX_BUFFERED);
		return;
	}
	edge_buf_touched(e, &touched, sizeof(*f));
	f->touched = touched;
	f->next = e->bufs.free;
	e->bufs.free = f;
	e->bufs.n++;
}

size_t
edge_buf_budget(const struct edge *e)
{
	return e->mem < EDGE_MEMORY_BUDGET_BYTES
	           ? EDGE_MEMORY_BUDGET_BYTES - e->mem
	           : 0;
}

struct edge_head *
edge_head_get(struct edge *e)
{
	struct edge_free *f = e->heads.free;
	struct edge_head *h;

	if (f != NULL) {
		e->heads.free = f->next;
		e->heads.n--;
		return (struct edge_head *)f;
	}
	if (edge_buf_budget(e) < sizeof(*h))
		return NULL;
	if ((h = pool_map(sizeof(*h))) != NULL)
		e->mem += sizeof(*h);
	return h;
}

void
edge_head_put(struct edge *e, struct edge_head *h)
{
	struct edge_free *f = (struct edge_free *)h;

	if (h == NULL)
		return;
	if (pool_full(e, &e->heads)) {
		e->mem -= sizeof(*h);
		munmap(h, sizeof(*h));
		return;
	}
	f->touched = sizeof(*h);
	f->next = e->heads.free;
	e->heads.free = f;
	e->heads.n++;
}
