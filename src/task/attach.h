/*
 * Images attached to a task: checked by their first bytes, stored in the
 * sandbox's home beside the task's other files, outside the app
 * directory (so neither git nor an export sees them), at
 * .sandboxd/attachments/<task id>/<n>-<name>, and listed back from
 * there.  That directory is the sandbox's to write, so what a listing
 * shows is only what the directory holds (bounded, no symlinks).
 */
#ifndef TASK_ATTACH_H
#define TASK_ATTACH_H

#include <stddef.h>

#include "lib/err.h"
#include "lib/jv.h"
#include "wsnode/wsnode.h"

#define TASK_IMAGES_MAX      4          /* images of one task */
#define TASK_IMAGE_MAX_BYTES (5u << 20) /* one image, decoded */
#define TASK_IMAGE_NAME_MAX  100        /* bytes of a stored name */
#define TASK_ATTACH_DIR      ".sandboxd/attachments"
#define TASK_ATTACH_HOME     "/home/sandbox" /* the workspace, inside */

struct task_image {
	const char *name; /* as given; made safe when stored */
	const unsigned char *data;
	size_t len;
};

/* "image/png", "image/jpeg", "image/gif", "image/webp" by the first
 * bytes, or NULL for anything else. */
const char *task_image_type(const unsigned char *p, size_t n);
/*
 * Stores the images of task id in the workspace at (0, or -1 with e):
 * each as "<index>-<name>", the name reduced to [A-Za-z0-9._-] (other
 * bytes '_', no leading dot, at most TASK_IMAGE_NAME_MAX bytes).
 */
int task_attach_write(const struct wsnode_ref *at, const char *id,
                      const struct task_image *im, size_t n, struct err *e);
/* Removes what task_attach_write stored (a task that did not start). */
void task_attach_remove(const struct wsnode_ref *at, const char *id);
/*
 * The task's attachments, [{"name","path","bytes"}] (path inside the
 * sandbox), sorted by name; an empty array when it has none.
 */
struct jv *task_attach_list(const struct wsnode_ref *at, const char *id);

#endif
