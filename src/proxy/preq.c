/*
 * The credential proxy's request (struct preq, proxy/internal.h): made
 * by the connection side (proxy.c) when a request's head arrives, shared
 * with its upstream worker (upstream.c), freed by whichever lets go of
 * it last.  In a file of its own so that the upstream side drops its
 * reference without calling into proxy.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/limits.h"
#include "proxy/internal.h"

void
preq_unref(struct preq *r)
{
	bool last;

	pthread_mutex_lock(&r->mu);
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	for (size_t i = 0; i < r->nhdrs; i++) {
		explicit_bzero(r->hdrs[i], strlen(r->hdrs[i]));
		free(r->hdrs[i]);
	}
	free(r->hdrs);
	/* A call refused or failed before its worker settled it. */
	if (r->hold.held)
		spend_release(&r->hold);
	proxy_addr_release(r);
	buf_release(&r->body);
	buf_release(&r->head);
	buf_release(&r->ring);
	pthread_cond_destroy(&r->space);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct preq *
preq_new(struct proxy *px, struct MHD_Connection *conn, const char *method)
{
	struct preq *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->space, NULL);
	r->refs = 1;
	r->px = px;
	r->conn = conn;
	r->ip = proxy_conn_ip(conn);
	proxy_conn_node(conn, r->node);
	snprintf(r->method, sizeof(r->method), "%s", method);
	buf_init(&r->body, PROXY_MAX_BODY_BYTES);
	buf_init(&r->head, PROXY_MAX_HEAD_BYTES);
	buf_init(&r->ring, 0);
	return r;
}
