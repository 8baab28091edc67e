/*
 * The API's HTTP server (libmicrohttpd, the only module that includes
 * it).  api_start() binds SANDBOXD_API_ADDR and serves on a bounded pool
 * of threads until api_stop().
 */
#ifndef API_SERVER_H
#define API_SERVER_H

#include "sandbox/core.h"

struct api;

int api_start(struct api **out, struct core *core);
void api_stop(struct api *a);

/*
 * The build logs' followers (releaselog.c): the tick (a periodic job,
 * about a second) has each look again at its file and release; end_all
 * ends them all (before api_stop: libmicrohttpd waits for suspended
 * connections).  Any thread.
 */
void api_releaselog_tick(void);
void api_releaselog_end_all(void);

#endif
