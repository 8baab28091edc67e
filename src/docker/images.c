/*
 * Images, pauses and the engine's clock: what `sandboxd doctor`, `gc`
 * and `backup --workspaces` ask the engine (docker.h).  Same rules as
 * docker.c: synchronous, any thread, DOCKER_* results.
 */
#include <stdio.h>
#include <string.h>

#include "docker/internal.h"
#include "lib/limits.h"
#include "net/http.h"

static void
copy(char *out, size_t len, const char *s)
{
	snprintf(out, len, "%s", s ? s : "");
}

int
docker_image_id(struct docker *d, const char *name, char id[80],
                char msg[DOCKER_MSG_LEN])
{
	char q[600], path[700];
	struct jv *resp = NULL;
	int rc;

	id[0] = '\0';
	if (http_escape(name, q, sizeof(q)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/images/%s/json", q);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc == DOCKER_OK)
		copy(id, 80, jv_str(jv_get(resp, "Id")));
	jv_free(resp);
	return rc;
}

int
docker_images(struct docker *d, void (*fn)(const struct docker_image *, void *),
              void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	int rc;

	rc = docker_call_json(d, "GET", "/images/json?all=false", NULL,
	                      DOCKER_CALL_TIMEOUT_S, &resp, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *im = jv_at(resp, i), *tags = jv_get(im, "RepoTags");
		struct docker_image di = {0};

		copy(di.id, sizeof(di.id), jv_str(jv_get(im, "Id")));
		if (jv_len(tags) > 0)
			copy(di.tag, sizeof(di.tag), jv_str(jv_at(tags, 0)));
		di.dangling =
		    di.tag[0] == '\0' || strcmp(di.tag, "<none>:<none>") == 0;
		if (di.dangling)
			di.tag[0] = '\0';
		di.size = jv_int(jv_get(im, "Size"));
		di.created = jv_int(jv_get(im, "Created"));
		copy(di.label, sizeof(di.label),
		     jv_str(jv_get(jv_get(im, "Labels"), "sandboxd.image")));
		fn(&di, arg);
	}
	jv_free(resp);
	return rc;
}

int
docker_image_remove(struct docker *d, const char *id, char msg[DOCKER_MSG_LEN])
{
	char path[200];

	/* Never force: an image a container still uses stays (409). */
	snprintf(path, sizeof(path), "/images/%.100s?noprune=false", id);
	return docker_call_json(d, "DELETE", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                        NULL, msg);
}

int
docker_containers_all(struct docker *d,
                      void (*fn)(const struct docker_container *, void *),
                      void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	int rc;

	rc = docker_call_json(d, "GET", "/containers/json?all=true", NULL,
	                      DOCKER_CALL_TIMEOUT_S, &resp, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *c = jv_at(resp, i), *lb = jv_get(c, "Labels");
		struct docker_container dc = {0};

		copy(dc.id, sizeof(dc.id), jv_str(jv_get(c, "Id")));
		copy(dc.image_id, sizeof(dc.image_id),
		     jv_str(jv_get(c, "ImageID")));
		copy(dc.state, sizeof(dc.state), jv_str(jv_get(c, "State")));
		copy(dc.instance, sizeof(dc.instance),
		     jv_str(jv_get(lb, "sandboxd.instance")));
		copy(dc.sandbox, sizeof(dc.sandbox),
		     jv_str(jv_get(lb, "sandboxd.sandbox")));
		copy(dc.build, sizeof(dc.build),
		     jv_str(jv_get(lb, "sandboxd.build")));
		fn(&dc, arg);
	}
	jv_free(resp);
	return rc;
}

int
docker_pause(struct docker *d, const char *id, bool pause,
             char msg[DOCKER_MSG_LEN])
{
	char path[200];

	snprintf(path, sizeof(path), "/containers/%.100s/%s", id,
	         pause ? "pause" : "unpause");
	return docker_call_json(d, "POST", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                        NULL, msg);
}

int
docker_system_time(struct docker *d, char out[64], char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	int rc;

	out[0] = '\0';
	rc = docker_call_json(d, "GET", "/info", NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc == DOCKER_OK)
		copy(out, 64, jv_str(jv_get(resp, "SystemTime")));
	jv_free(resp);
	return rc;
}
