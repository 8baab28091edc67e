/*
 * gc: what `sandboxd gc` may remove (images of ours no container uses,
 * the trash of interrupted removals, the dependency store's unlinked
 * entries, release directories of apps that are gone, build containers
 * left over), found and, with yes, removed.  The command line (cli/gc.c)
 * prints what it is told; the rules are in gc.c's opening comment.
 * Runs without the daemon, on one thread.
 */
#ifndef OPS_GC_H
#define OPS_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

struct docker; /* docker/docker.h */

enum gc_kind {
	GC_IMAGE,    /* an image of ours that nothing uses */
	GC_TRASH,    /* an entry of <data>/trash */
	GC_RELEASES, /* <data>/releases/<id> of an app with no row */
	GC_BUILD,    /* a stopped build container of this instance */
};

/* One thing found, told as it is found (an image after its removal). */
struct gc_found {
	enum gc_kind kind;
	const char *name;  /* the image's or container's id, or a path */
	const char *tag;   /* the image's tag; a build's release id */
	bool dangling;     /* an untagged image */
	int64_t bytes;     /* its size (a trash entry's: 0 when unknown) */
	const char *error; /* why the image was not removed, or NULL */
};

typedef void gc_note_fn(const struct gc_found *f, void *arg);

struct gc_result {
	int images, images_failed;
	int64_t image_bytes;
	int trash;
	int64_t trash_bytes;
	int kept; /* deleted apps' workspaces, counted, never removed */
	int64_t kept_bytes;
	int store; /* unlinked entries of the dependency store */
	int64_t store_bytes;
	bool store_unreadable;
	int depcache; /* dependency-cache entries unused for too long */
	int64_t depcache_bytes;
	bool depcache_unreadable;
	int releases; /* release directories of apps that are gone */
	int64_t releases_bytes;
	bool releases_unreadable; /* or the database: nothing judged */
	int builds;               /* build containers left over */
};

/*
 * Finds (and, with yes, removes) what can go: images (of repo only,
 * unless NULL), then the trash, then the dependency cache, then the
 * store; note is called for each image and trash entry, r filled.  0;
 * or -1 when the engine could not be asked (err says why, "" when there
 * is nothing to say), r then partly filled.
 */
int gc_run(const struct config *cfg, bool yes, const char *repo,
           gc_note_fn *note, void *arg, struct gc_result *r, char *err,
           size_t errlen);

/* gc_publish.c: the release directories of apps that are gone, and the
 * stopped build containers of this instance (gc_run calls both). */
void gc_releases(const struct config *cfg, bool yes, gc_note_fn *note,
                 void *arg, struct gc_result *r);
int gc_builds(struct docker *d, const struct config *cfg, bool yes,
              gc_note_fn *note, void *arg, struct gc_result *r, char *err,
              size_t errlen);

#endif
