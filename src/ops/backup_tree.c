/*
 * Workspace trees into and out of a backup (backup_tree.h).
 *
 * A workspace is written by code in a sandbox, and a backup directory is
 * input like any other, so neither walk trusts what it finds.  Both go
 * from directory descriptor to directory descriptor (openat with
 * O_NOFOLLOW|O_DIRECTORY), read each entry with fstatat(AT_SYMLINK_
 * NOFOLLOW) and open a file O_NOFOLLOW|O_NONBLOCK (a FIFO put in place of
 * a file cannot block the open) before checking with fstat that it is a
 * file.  What they write goes into directories they made themselves,
 * each entry made new (mkdirat, openat O_CREAT|O_EXCL, symlinkat), so
 * nothing is ever written through a link.
 *
 * The list is written and read in one order, that of a walk visiting
 * each directory's entries sorted by name, so restore checks a tree in
 * one pass with one line in hand: the entry it meets is the next line,
 * or it is not in the list (it sorts before that line), or that line is
 * missing from the tree (it sorts after).  A file is hashed as it is
 * copied, so what was checked is what was written.
 *
 * Links are kept as links wherever a sandbox could have made them: a
 * sandbox may make any link in its workspace at any time (a Python venv
 * holds absolute ones), nothing on the host follows a link in a
 * workspace (ws/wsfs.h resolves with RESOLVE_NO_SYMLINKS, the git
 * helper is confined to the workspace), and refusing them would let one
 * tenant make the instance's backups unrestorable.  Where a sandbox
 * cannot make one, the top of a tree, a link is refused: the top's
 * entries are the directories Docker mounts, and a link there would
 * mount whatever it names.  Everything restored is owned by the sandbox
 * user (a dependency store link, root's, becomes the sandbox's own copy
 * until the next deduplication pass links it again).
 *
 * Rejected: hard links kept (the restored tree would share inodes with
 * nothing the store knows), and refusing a format-1 backup (the upgrade
 * path restores backups of the release before).
 */
#include "ops/backup_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/fileio.h"
#include "ops/treewalk.h"
#include "ws/workspace.h"

struct wctx {
	struct backup_tree_count *n;
	const struct backup_tree_hooks *h;
	int64_t max_file;
	dev_t dev; /* of the tree: no other filesystem is entered */
	int listfd;
	struct buf line;
	struct backup_entry e;
	struct treewalk_path p;
	char chunk[TREEWALK_CHUNK];
	char *err;
	size_t errlen;
};

static int
emit(struct wctx *c)
{
	int rc;

	buf_reset(&c->line);
	snprintf(c->e.path, sizeof(c->e.path), "%s", c->p.s);
	rc = backup_entry_format(&c->e, &c->line) < 0 ||
	             fileio_write_all(c->listfd, c->line.data, c->line.len) < 0
	         ? -1
	         : 0;
	if (rc < 0)
		snprintf(c->err, c->errlen, "cannot write the list: %s",
		         strerror(errno));
	c->n->entries++;
	return rc;
}

/* Copies the file sfd/name to dfd/name, hashing it into c->e. */
static int
write_file(struct wctx *c, int sfd, int dfd, const char *name)
{
	int in = openat(sfd, name,
	                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
	    out = -1, rc = -1;
	struct stat st;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* gone, or a link since fstatat: left out */
		rc = in < 0 && errno != ENOENT && errno != ELOOP ? -1 : 1;
		goto out;
	}
	if (c->max_file > 0 && st.st_size > c->max_file) {
		c->n->too_big++;
		rc = 1;
		goto out;
	}
	out =
	    openat(dfd, name,
	           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		goto out;
	if (treewalk_copy(in, out, c->chunk, -1, &c->e.size, c->e.sha256) ==
	        TREEWALK_COPIED &&
	    fchmod(out, st.st_mode & 0777) == 0)
		rc = 0;
	c->e.mtime = st.st_mtime;
	c->e.mode = st.st_mode & 0777;
	c->n->setid += (st.st_mode & 07000) != 0;
out:
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return rc;
}

static int write_dir(struct wctx *c, int sfd, int dfd, int depth);

/* One entry of sfd; 0 (copied or left out) or -1. */
static int
write_entry(struct wctx *c, int sfd, int dfd, const char *name, int depth)
{
	struct stat st;
	int sub = -1, dsub = -1, rc = -1;
	ssize_t k;

	if (depth >= BACKUP_TREE_DEPTH) {
		c->n->too_deep++;
		return 0;
	}
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	memset(&c->e, 0, sizeof(c->e));
	c->e.type = treewalk_type(st.st_mode);
	c->e.mode = st.st_mode & 0777;
	c->e.mtime = st.st_mtime;
	if (c->e.type == '?' || st.st_dev != c->dev) {
		c->n->skipped++;
		return 0;
	}
	if (c->e.type == 'f') {
		rc = write_file(c, sfd, dfd, name);
		if (rc != 0)
			return rc > 0 ? 0 : -1;
		c->n->bytes += c->e.size;
		return emit(c);
	}
	if (c->e.type == 'l') {
		k = readlinkat(sfd, name, c->e.target, sizeof(c->e.target));
		if (k <= 0 || k >= (ssize_t)sizeof(c->e.target)) {
			c->n->too_deep += k > 0;
			return k < 0 && errno != ENOENT ? -1 : 0;
		}
		c->e.target[k] = '\0';
		c->e.size = k;
		return symlinkat(c->e.target, dfd, name) < 0 ? -1 : emit(c);
	}
	c->n->setid += (st.st_mode & 07000) != 0;
	sub =
	    openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (mkdirat(dfd, name, 0700) < 0 ||
	    (dsub = openat(dfd, name,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0)
		goto out;
	if (emit(c) == 0 && write_dir(c, sub, dsub, depth + 1) == 0)
		rc = 0;
	if (rc == 0 && depth > 0 && fchmod(dsub, st.st_mode & 0777) < 0)
		rc = -1;
out:
	if (dsub >= 0)
		close(dsub);
	close(sub);
	return rc;
}

/* Each entry of sfd (a directory depth deep) into dfd. */
static int
write_dir(struct wctx *c, int sfd, int dfd, int depth)
{
	struct treewalk_names s;
	char msg[256];
	int rc = 0;

	if (treewalk_names_read(sfd, &s) < 0) {
		snprintf(c->err, c->errlen, "cannot read %s: %s",
		         treewalk_shown(c->p.s, msg, sizeof(msg)),
		         strerror(errno));
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < s.n; i++) {
		ssize_t old = treewalk_path_push(&c->p, s.v[i]);
		struct stat st;
		bool top = depth == 0;

		if (old < 0) {
			c->n->too_deep++;
			continue;
		}
		if (top &&
		    (s.v[i][0] == '.' ||
		     fstatat(sfd, s.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     !S_ISDIR(st.st_mode))) {
			treewalk_path_pop(&c->p, old);
			continue; /* not a workspace */
		}
		if (top && c->h && c->h->before)
			c->h->before(s.v[i], c->h->arg);
		rc = write_entry(c, sfd, dfd, s.v[i], depth);
		if (top && c->h && c->h->after)
			c->h->after(s.v[i], c->h->arg);
		c->n->top += top && rc == 0;
		if (rc < 0 && c->err[0] == '\0')
			snprintf(c->err, c->errlen, "copying %s: %s",
			         treewalk_shown(c->p.s, msg, sizeof(msg)),
			         strerror(errno));
		treewalk_path_pop(&c->p, old);
	}
	treewalk_names_free(&s);
	return rc;
}

int
backup_tree_write(int srcfd, int bkfd, const char *name, const char *list,
                  int64_t max_file, const struct backup_tree_hooks *h,
                  struct backup_tree_count *n, char *err, size_t errlen)
{
	struct wctx *c = calloc(1, sizeof(*c));
	struct stat st;
	int dfd = -1, rc = -1;

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*c = (struct wctx){.n = n,
	                   .h = h,
	                   .max_file = max_file,
	                   .err = err,
	                   .errlen = errlen,
	                   .listfd = -1};
	err[0] = '\0';
	buf_init(&c->line, BACKUP_LINE_MAX);
	if (fstat(srcfd, &st) < 0 || mkdirat(bkfd, name, 0700) < 0 ||
	    (dfd = openat(bkfd, name,
	                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0 ||
	    (c->listfd =
	         openat(bkfd, list,
	                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	                0600)) < 0) {
		snprintf(err, errlen, "cannot make %s and %s: %s", name, list,
		         strerror(errno));
		goto out;
	}
	c->dev = st.st_dev;
	if (write_dir(c, srcfd, dfd, 0) == 0 && fsync(c->listfd) == 0 &&
	    syncfs(dfd) == 0)
		rc = 0;
	else if (err[0] == '\0')
		snprintf(err, errlen, "copying %s: %s", name, strerror(errno));
out:
	if (c->listfd >= 0)
		close(c->listfd);
	if (dfd >= 0)
		close(dfd);
	buf_release(&c->line);
	free(c);
	return rc;
}
