/*
 * diskuse: each app's disk use (its sandbox's workspace, and its
 * published releases under <data>/releases/<app id>), measured in the
 * background every SANDBOXD_DISK_USAGE_INTERVAL_SECONDS by its own
 * thread with the bounded walk of ws/usage.h, so no request ever waits
 * for a walk.  The API shows the last figure in the app object.
 */
#ifndef DISK_DISKUSE_H
#define DISK_DISKUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "disk/dedup.h"
#include "store/store.h"

#define DISKUSE_SLOTS 8192 /* apps whose figure is kept */
/* An app's releases, under the data directory (publish/publish.h's
 * PUBLISH_DIR: this layer cannot include it). */
#define DISKUSE_RELEASES_DIR "releases"

/*
 * The figures and their thread: diskuse_new (NULL: out of memory) holds
 * cfg, store and dedup (kicked after each workspace's walk; NULL: none),
 * which outlive it.  serve() makes, starts, stops and frees the one of
 * the daemon, and runs diskuse_pass as a periodic job (a first pass
 * soon after start, then one per SANDBOXD_DISK_USAGE_INTERVAL_SECONDS);
 * diskuse_stop (NULL is fine) ends a pass in flight at the next
 * workspace and every later one at once; diskuse_free stops and frees.
 */
struct diskuse;
struct diskuse *diskuse_new(const struct config *cfg, struct store *store,
                            struct dedup *dedup);
void diskuse_stop(struct diskuse *du);
void diskuse_free(struct diskuse *du);
/* One pass over every sandbox and every app's releases, on the caller's
 * thread. */
void diskuse_pass(struct diskuse *du);

struct diskuse_figure {
	int64_t bytes;          /* the workspace's; 0 without a sandbox */
	int64_t shared;         /* of bytes: links of the dependency store */
	int64_t releases;       /* release directories kept on disk */
	int64_t releases_bytes; /* what they hold, build logs included */
	int64_t measured_at;    /* unix seconds */
	bool workspace;         /* bytes and shared were measured */
	bool partial;           /* a walk hit its bound: a lower bound */
};

/* The app's last figure; false when it has none (no sandbox and no
 * release, or not yet). */
bool diskuse_get(struct diskuse *du, const char *app_id,
                 struct diskuse_figure *out);

#endif
