/*
 * The production containers of server releases (runner.c), beyond what
 * publish.h gives every caller: what the rest of publish/ (the host
 * table, recovery) and the unit tests use.
 */
#ifndef PUBLISH_RUNNER_H
#define PUBLISH_RUNNER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "docker/docker.h"
#include "store/store.h"

struct core;
struct publish_target;

/* How long a start waits for the health path to answer. */
#define RUNNER_START_WAIT_S 60
/* … unless it finds the server not running at this many of its polls
 * (a quarter of a second apart): one that exits at once has failed. */
#define RUNNER_START_DOWN_POLLS 8
/* The health checks: one every RUNNER_HEALTH_PERIOD_S; each connect and
 * answer within RUNNER_HEALTH_TIMEOUT_MS; after RUNNER_HEALTH_FAILS in a
 * row the release is DOWN and its container restarted. */
#define RUNNER_HEALTH_PERIOD_S   5
#define RUNNER_HEALTH_TIMEOUT_MS 2000
#define RUNNER_HEALTH_FAILS      3
/* A server that fails its start: the last RUNNER_TAIL_LINES lines of
 * its output, at most RUNNER_TAIL_LOG bytes in the daemon's log and the
 * last RUNNER_TAIL_ERROR - 1 in the release's error. */
#define RUNNER_TAIL_LINES 20
#define RUNNER_TAIL_LOG   2048
#define RUNNER_TAIL_ERROR 160
/* Bytes of a health answer's body read (the rest is not waited for). */
#define RUNNER_HEALTH_BODY_MAX 4096
/* The writable /tmp of a production container (HOME is there). */
#define RUNNER_TMP_MB 256
/* Where the image keeps the agents' CLIs: masked by an empty tmpfs. */
#define RUNNER_AGENTS_DIR "/opt/sandboxd/agents"

/* Every production container carries it (and sandboxd.release): the
 * recovery removes only what carries it, never a build's container. */
#define RUNNER_LABEL "sandboxd.production"

/* "sandboxd-rel-<release id, lower case>". */
void publish_runner_name(const char *release_id, char *out, size_t len);

/* The shell command of r->command: "exec <command>" for a simple one. */
void publish_runner_command(const char *cmd, char *out, size_t len);

/* The strings a production container's spec points into. */
struct runner_spec_buf {
	char name[64];
	char user[24];
	char bind[300];
	char port[24];
	char tmp[64];
	char cmd[sizeof(((struct release *)0)->command) + 8];
	char release[ULID_LEN + 1];
	char app[ULID_LEN + 1];
};
/*
 * Fills s for release r (no I/O): the release's image, WORKSPACE_UID,
 * the sandboxes' network and limits, <r->path>/app read-only at /app,
 * a read-only root with a tmpfs /tmp (HOME) and the agents' directory
 * masked, "/bin/sh -c <command>" in /app (the image's init, the
 * supervisor, is bypassed), restarted by the engine on a crash.  env
 * (NULL or NULL-ended "NAME=value") is the app's own configuration.
 */
void publish_runner_spec(const struct config *cfg, const char *instance,
                         const struct release *r, const char *const *env,
                         struct runner_spec_buf *b, struct docker_spec *s);

/*
 * The edge's view of a server release (publish_route, hosts.c): SERVER
 * with its address, DOWN with why, or false when the runner does not
 * know it (not started in this daemon).  Thread-safe, no wait.
 */
bool publish_runner_route(struct core *c, const char *release_id,
                          struct publish_target *t);

/*
 * At start (publish_recover): every active server release's container
 * is running again (one running from before is kept as it is) and
 * sandboxd-rel-* containers of this instance whose release is not an
 * active one are removed.  Waits for no health answer: the health
 * checks tell the host table when each answers.
 */
void publish_runner_recover(struct core *c);

#endif
