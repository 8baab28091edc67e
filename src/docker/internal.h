/* Shared by the docker module's own files only. */
#ifndef DOCKER_INTERNAL_H
#define DOCKER_INTERNAL_H

#include "docker/docker.h"

/* One call; the response body (when out is not NULL) parsed into *out. */
int docker_call_json(struct docker *d, const char *method, const char *path,
                     const struct jv *body, long timeout_s, struct jv **out,
                     char msg[DOCKER_MSG_LEN]);

/* The engine's socket path and the API version's prefix ("/v1.41"). */
void docker_endpoint(struct docker *d, char path[4096], char prefix[16]);

#endif
