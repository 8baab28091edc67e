/*
 * A node's own engine joining and leaving a swarm (swarm.h): what
 * `sandboxd node join` does on the node, with the worker token the
 * control plane gave it in the enroll answer (never on a command line).
 */
#include <stdio.h>

#include "docker/internal.h"
#include "docker/swarm.h"

/* Joining waits for the manager's first answer. */
#define SWARM_JOIN_TIMEOUT_S 60

int
docker_swarm_join(struct docker *d, const char *advertise, const char *remote,
                  const char *token, char msg[DOCKER_MSG_LEN])
{
	struct jv *body = jv_obj(), *addrs = jv_arr();
	char listen[96];
	int rc;

	snprintf(listen, sizeof(listen), "%s:2377", advertise);
	jv_set_str(body, "ListenAddr", listen);
	jv_set_str(body, "AdvertiseAddr", advertise);
	jv_set_str(body, "DataPathAddr", advertise);
	jv_push(addrs, jv_new_str(remote));
	jv_set(body, "RemoteAddrs", addrs);
	jv_set_str(body, "JoinToken", token);
	rc = docker_call_json(d, "POST", "/swarm/join", body,
	                      SWARM_JOIN_TIMEOUT_S, NULL, msg);
	jv_free(body);
	return rc;
}

int
docker_swarm_leave(struct docker *d, char msg[DOCKER_MSG_LEN])
{
	return docker_call_json(d, "POST", "/swarm/leave?force=true", NULL,
	                        SWARM_JOIN_TIMEOUT_S, NULL, msg);
}

int
docker_engine_facts(struct docker *d, char api[16], char runtime[64],
                    char msg[DOCKER_MSG_LEN])
{
	char path[4096], prefix[16];
	struct jv *info = NULL;
	int rc;

	docker_endpoint(d, path, prefix);
	snprintf(api, 16, "%s", prefix[0] == '/' ? prefix + 2 : "");
	runtime[0] = '\0';
	rc = docker_call_json(d, "GET", "/info", NULL, 10, &info, msg);
	if (rc == DOCKER_OK)
		snprintf(runtime, 64, "%s",
		         jv_str(jv_get(info, "DefaultRuntime"))
		             ? jv_str(jv_get(info, "DefaultRuntime"))
		             : "");
	jv_free(info);
	return rc;
}
