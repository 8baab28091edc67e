/*
 * doctor: the checks of `sandboxd doctor` (docs/operations.md).  Each
 * check gives ok, warn or fail, what it saw and, unless ok, the fix.
 * The pure parts (the /proc/net/tcp reader, the thresholds, the path
 * walk's permission rule, the time parser) are exported for the tests.
 */
#ifndef OPS_DOCTOR_H
#define OPS_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

enum doctor_level {
	DOCTOR_OK,
	DOCTOR_WARN,
	DOCTOR_FAIL,
};

#define DOCTOR_CHECKS_MAX 16

struct doctor_check {
	char name[16];
	enum doctor_level level;
	char msg[320];
	char fix[320];
};

struct doctor_report {
	struct doctor_check c[DOCTOR_CHECKS_MAX];
	size_t n;
};

/* Runs every check against cfg; never fails (a check that cannot run
 * says so). */
void doctor_run(const struct config *cfg, struct doctor_report *r);
/*
 * The `provider` check (doctor_providers.c): each configured model
 * provider's base URL resolves and answers from this host (TLS for
 * https); a failure names the host, the step and the fix.
 */
void doctor_providers(const struct config *cfg, struct doctor_check *c);
/*
 * The `releases` check (doctor_publish.c): what <data>/releases holds,
 * that it is root's and no link, and the directories of apps that are
 * gone (`sandboxd gc` removes them).
 */
void doctor_releases(const struct config *cfg, struct doctor_check *c);
/*
 * The `swarm` check (doctor_swarm.c), with SANDBOXD_ORCHESTRATOR=swarm
 * only: the engine a swarm manager, the nodes' labels and state, each
 * enrolled node's agent answering with an engine of API 1.41 or later.
 */
void doctor_swarm(const struct config *cfg, struct doctor_check *c);
/* "ok", "warn", "fail". */
const char *doctor_level_name(enum doctor_level l);
/* The worst level of the report. */
enum doctor_level doctor_worst(const struct doctor_report *r);

/*
 * One line of /proc/net/tcp{,6}: true when it is a listening socket;
 * port and inode filled.  The header line and anything else: false.
 */
bool doctor_tcp_listen_line(const char *line, unsigned *port,
                            unsigned long *inode);
/* Free space of the data filesystem: ok, warn (< 10 % or < 5 GiB),
 * fail (< 2 % or < 1 GiB). */
enum doctor_level doctor_disk_level(uint64_t free_bytes, uint64_t total_bytes);
/*
 * Memory for the sandboxes: warn when what is available would not hold
 * one more sandbox of memory_mb, or is under headroom_pct of the total;
 * fail when under a quarter of one.
 */
enum doctor_level doctor_mem_level(int64_t avail_mb, int64_t total_mb,
                                   int64_t memory_mb, int64_t headroom_pct);
/* Whether uid:gid may pass through a directory of this owner and mode. */
bool doctor_can_traverse(mode_t mode, uid_t owner, gid_t group, uid_t uid,
                         gid_t gid);
/* An RFC 3339 time ("2026-12-01T22:30:00.123456789Z", offsets too) to
 * unix seconds; -1 when it does not parse. */
int64_t doctor_parse_time(const char *s);
/* A compose version string ("1.29.2", "v2.20.3", "2.20.3+ds1") to its
 * major number; 0 when it does not parse. */
int doctor_compose_major(const char *version);

#endif
