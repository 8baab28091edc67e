/* The credential proxy's listener (see proxy.c). */
#ifndef API_PROXY_H
#define API_PROXY_H

#include "core/core.h"

struct proxy;

/*
 * Listens at SANDBOXD_PROXY_PORT on SANDBOXD_PROXY_ADDR or, by default,
 * on the gateway address of the sandboxes' Docker network (found once
 * the engine answers; retried until then).  The address sandboxes use is
 * published with core_set_proxy_url().
 */
int proxy_start(struct proxy **out, struct core *core);
void proxy_stop(struct proxy *px);

#endif
