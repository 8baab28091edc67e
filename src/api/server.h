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

#endif
