/*
 * container: a sandbox's container (or swarm service) through the
 * orchestrator driver (orch/orch.h), for lifecycle.c and watch.c: its
 * name both ways, its spec, its making, its start.  Called with the
 * sandbox's lock held.  Internal to src/sandbox/.
 */
#ifndef SANDBOX_CONTAINER_H
#define SANDBOX_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/core.h"

/* Maps a driver result (DOCKER_*, ORCH_*) to an API error; -1. */
int container_err(int rc, const char *msg, struct err *e);
/*
 * The sandbox id (ULID_LEN + 1 bytes) whose container name is name
 * (core_container_name's inverse); false for another name.
 */
bool container_sandbox_of(const struct core *c, const char *name, char *id,
                          size_t len);
/*
 * Makes the container (orch_create): sb->container_id and sb->node are
 * set, the node also on the row (a workspace placed elsewhere is copied
 * there first).  A DOCKER_* or ORCH_* result; msg says what.
 */
int container_make(struct core *c, struct sandbox *sb, char *msg);
/* Starts it, making it first when missing, then container_started. */
int container_run(struct core *c, struct sandbox *sb, char *msg);
/* After a start: its address, the start time, the STARTED hooks. */
void container_started(struct core *c, struct sandbox *sb);

#endif
