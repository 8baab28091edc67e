/*
 * edge: the preview listener on HTTP_PORT.  One thread runs an epoll loop
 * that accepts browsers' connections, parses requests with http_parser,
 * routes them by Host to sandboxes (preview/preview.h) and proxies bytes
 * both ways, streaming: keep-alive, chunked bodies, WebSocket upgrades,
 * server-sent events.  It never blocks on anything but epoll.
 */
#ifndef EDGE_EDGE_H
#define EDGE_EDGE_H

#include "sandbox/core.h"

struct edge;

/* Binds SANDBOXD_EDGE_ADDR:HTTP_PORT and starts the loop thread. */
int edge_start(struct edge **out, struct core *core);
void edge_stop(struct edge *e);

#endif
