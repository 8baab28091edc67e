/*
 * The credential proxy (see proxy.c): its own server, on the sandboxes'
 * side of the host.  proxy_start and proxy_stop are called by the
 * daemon's main thread only.
 */
#ifndef PROXY_PROXY_H
#define PROXY_PROXY_H

#include "sandbox/core.h"

struct proxy;

/*
 * Listens at SANDBOXD_PROXY_PORT on SANDBOXD_PROXY_ADDR or, by default,
 * on the gateway address of the sandbox network (waited for; a failed
 * bind is retried).  The address sandboxes use is published with
 * core_set_proxy_url(), the state with sbnet_proxy_state().  0, or -1
 * when the binder thread cannot start.
 */
int proxy_start(struct proxy **out, struct core *core);
/*
 * Stops the binder, aborts every transfer and waits for its worker,
 * stops the server and frees px (NULL is fine).  Returns within about a
 * second however slow a provider is.
 */
void proxy_stop(struct proxy *px);

#endif
