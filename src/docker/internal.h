/* Shared by the docker module's own files only. */
#ifndef DOCKER_INTERNAL_H
#define DOCKER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "docker/docker.h"

/* One call; the response body (when out is not NULL) parsed into *out. */
int docker_call_json(struct docker *d, const char *method, const char *path,
                     const struct jv *body, long timeout_s, struct jv **out,
                     char msg[DOCKER_MSG_LEN]);

/* The URL-encoded {"label":["label=value"]} of a ?filters= query (with
 * events, ,"type":["container"] too); -1 when it does not fit out. */
int docker_label_filter(const char *label, const char *value, bool events,
                        char *out, size_t len);
/* GET of a list the engine filters by label=value: base is the path up
 * to its query's "filters=" ("/services?filters="); *resp the array. */
int docker_get_labelled(struct docker *d, const char *base, const char *label,
                        const char *value, struct jv **resp,
                        char msg[DOCKER_MSG_LEN]);

/* A connected socket to the engine's unix socket sock, or -1 (msg). */
int docker_dial(const char *sock, char msg[DOCKER_MSG_LEN]);

/* The engine's socket path and the API version's prefix ("/v1.41"). */
void docker_endpoint(struct docker *d, char path[4096], char prefix[16]);

#endif
