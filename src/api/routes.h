/*
 * The API's router (routes.c), for the server (server.c): which route a
 * request is for, and running its handler once the body is in.
 */
#ifndef API_ROUTES_H
#define API_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api.h"

/*
 * Finds the route for r->method and r->path, filling r->ids and r->name
 * from the path.  NULL when none: then *path_known says whether another
 * method would match, and allow (when not NULL) lists those methods.
 * *bad_id: the route's path has a malformed id.
 */
const struct route *api_route_find(struct req *r, bool *path_known,
                                   bool *bad_id, char *allow, size_t allowlen);

/*
 * Routing and the handler, once the body is in: 404, 405 with Allow,
 * 400 for a malformed id, 413 for a body over the cap, 507 for a write
 * while the data filesystem is full, else the handler's answer.
 */
void api_dispatch(struct req *r, struct resp *w);

#endif
