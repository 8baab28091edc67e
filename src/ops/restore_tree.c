/*
 * A tree of a backup copied back out, checked against its list
 * (backup_tree.h; the why of both walks is in backup_tree.c's opening
 * comment).  The list is read in one pass with one line in hand, hashed
 * as it is read, and each line is parsed whole (at most BACKUP_LINE_MAX)
 * before its entry is touched.  A directory's line is consumed before
 * its entries are walked, so only the few fields a directory needs after
 * its walk are kept (struct want) and the stack stays small at any
 * depth.
 */
#include "ops/backup_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "ops/treewalk.h"
#include "ws/workspace.h"

#define FAIL TREEWALK_FAIL

static const char *
line_type_name(char t)
{
	return t == 'd' ? "directory" : t == 'f' ? "file" : "symbolic link";
}

struct rctx {
	struct backup_tree_count *n;
	enum backup_owner own;
	const char *tree; /* its name in the backup, for messages */
	bool lists;
	int listfd;
	struct vault_sha256 *lh; /* of the list's bytes as read */
	char *lbuf;
	size_t llen, loff;
	bool leof;
	int64_t lineno;
	bool have; /* L holds the next line */
	struct backup_entry L;
	char target[BACKUP_PATH_MAX + 1];
	struct treewalk_path p;
	char chunk[TREEWALK_CHUNK];
	char shown[512];
	char *err;
	size_t errlen;
};

/* The entry being copied, fit for a message. */
static const char *
here(struct rctx *c)
{
	return treewalk_shown(c->p.s, c->shown, sizeof(c->shown));
}

/* The small part of a line an entry needs after the list moved on. */
struct want {
	char type;
	unsigned mode;
	int64_t size, mtime;
	char sha256[VAULT_HASH_HEX + 1];
};

#define LBUF (BACKUP_LINE_MAX + TREEWALK_CHUNK)

/* The list's next line into c->L (c->have false at its end); 0 or -1. */
static int
list_next(struct rctx *c)
{
	char *nl;
	ssize_t k;
	char why[128];

	c->have = false;
	while ((nl = memchr(c->lbuf + c->loff, '\n', c->llen - c->loff)) ==
	       NULL) {
		if (c->leof && c->loff == c->llen)
			return 0;
		if (c->leof)
			FAIL("%s.list: its last line has no newline", c->tree);
		memmove(c->lbuf, c->lbuf + c->loff, c->llen - c->loff);
		c->llen -= c->loff;
		c->loff = 0;
		if (c->llen == LBUF)
			FAIL("%s.list: line %lld is longer than %d bytes",
			     c->tree, (long long)c->lineno + 1,
			     BACKUP_LINE_MAX);
		k = read(c->listfd, c->lbuf + c->llen, LBUF - c->llen);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			FAIL("%s.list: %s", c->tree, strerror(errno));
		vault_sha256_update(c->lh, c->lbuf + c->llen, (size_t)k);
		c->llen += (size_t)k;
		c->leof = k == 0;
	}
	c->lineno++;
	if (backup_entry_parse(c->lbuf + c->loff,
	                       (size_t)(nl - c->lbuf) - c->loff, &c->L, why,
	                       sizeof(why)) < 0)
		FAIL("%s.list: line %lld: %s", c->tree, (long long)c->lineno,
		     why);
	c->loff = (size_t)(nl - c->lbuf) + 1;
	c->have = true;
	return 0;
fail:
	return -1;
}

/* The entry at c->p against the list's next line, into *w. */
static int
match(struct rctx *c, const struct stat *st, struct want *w)
{
	const char *where = here(c);
	int cmp = c->have ? backup_path_cmp(c->p.s, c->L.path) : -1;

	if (cmp < 0)
		FAIL("%s/%s is in the backup but not in its list", c->tree,
		     where);
	if (cmp > 0)
		FAIL("%s/%s is listed but missing from the backup", c->tree,
		     treewalk_shown(c->L.path, c->shown, sizeof(c->shown)));
	if (treewalk_type(st->st_mode) != c->L.type)
		FAIL("%s/%s is a %s in the backup, but its list says a %s",
		     c->tree, where, treewalk_type_name(st->st_mode),
		     line_type_name(c->L.type));
	*w = (struct want){.type = c->L.type,
	                   .mode = c->L.mode,
	                   .size = c->L.size,
	                   .mtime = c->L.mtime};
	memcpy(w->sha256, c->L.sha256, sizeof(w->sha256));
	return 0;
fail:
	return -1;
}

/* Whether the entry at c->p is the sandbox user's (backup_tree.h). */
static bool
sandbox_owned(const struct rctx *c)
{
	const char *a, *b;

	if (c->own == BACKUP_OWN_SANDBOX)
		return true;
	a = strchr(c->p.s, '/');
	b = a ? strchr(a + 1, '/') : NULL;
	return b && strncmp(b + 1, "app", 3) == 0 &&
	       (b[4] == '\0' || b[4] == '/');
}

/* Owner, mode and time of what fd (or dfd/name, a link) is. */
static int
settle(const struct rctx *c, int fd, int dfd, const char *name,
       const struct want *w)
{
	struct timespec ts[2] = {{.tv_sec = w->mtime}, {.tv_sec = w->mtime}};
	bool sb = sandbox_owned(c);
	uid_t uid = sb ? (uid_t)WORKSPACE_UID : geteuid();
	gid_t gid = sb ? (gid_t)WORKSPACE_GID : getegid();

	if (fd < 0)
		return fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		               utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0
		           ? -1
		           : 0;
	return fchown(fd, uid, gid) < 0 || fchmod(fd, w->mode & 0777) < 0 ||
	               futimens(fd, ts) < 0
	           ? -1
	           : 0;
}

static int
restore_file(struct rctx *c, int sfd, int dfd, const char *name,
             const struct want *w)
{
	int in = openat(sfd, name,
	                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
	    out = -1, rc = -1;
	char hex[VAULT_HASH_HEX + 1] = "";
	const char *where = here(c);
	struct stat st;
	int64_t total = 0;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		FAIL("%s/%s: cannot open it as a file", c->tree, where);
	out =
	    openat(dfd, name,
	           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	switch (treewalk_copy(in, out, c->chunk, c->lists ? w->size : -1,
	                      &total, hex)) {
	case TREEWALK_COPIED:
		break;
	case TREEWALK_OVER:
		FAIL("%s/%s is larger than its list says (%lld bytes)", c->tree,
		     where, (long long)w->size);
	case TREEWALK_WRITE:
		FAIL("writing %s/%s: %s", c->tree, where, strerror(errno));
	case TREEWALK_READ:
		FAIL("reading %s/%s: %s", c->tree, where, strerror(errno));
	}
	if (c->lists && (total != w->size || strcmp(hex, w->sha256) != 0))
		FAIL("%s/%s does not match its checksum in the list", c->tree,
		     where);
	if (settle(c, out, dfd, name, w) < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	c->n->bytes += total;
	rc = 0;
fail:
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return rc;
}

static int
restore_link(struct rctx *c, int sfd, int dfd, const char *name,
             const struct want *w)
{
	const char *where = here(c);
	ssize_t k = readlinkat(sfd, name, c->target, sizeof(c->target));

	if (k <= 0 || k >= (ssize_t)sizeof(c->target))
		FAIL("%s/%s: an unreadable link, or longer than %d bytes",
		     c->tree, where, BACKUP_PATH_MAX);
	c->target[k] = '\0';
	if (c->lists && strcmp(c->target, c->L.target) != 0)
		FAIL("%s/%s points elsewhere than its list says", c->tree,
		     where);
	if (symlinkat(c->target, dfd, name) < 0 ||
	    settle(c, -1, dfd, name, w) < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	return 0;
fail:
	return -1;
}

static int restore_dir(struct rctx *c, int sfd, int dfd, int depth);

static int
restore_subdir(struct rctx *c, int sfd, int dfd, const char *name,
               const struct want *w, int depth)
{
	int sub = openat(sfd, name,
	                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
	    dsub = -1, rc = -1;
	const char *where = here(c);

	if (sub < 0 || mkdirat(dfd, name, 0700) < 0 ||
	    (dsub = openat(dfd, name,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	if ((c->lists && list_next(c) < 0) ||
	    restore_dir(c, sub, dsub, depth + 1) < 0)
		goto fail;
	if (settle(c, dsub, dfd, name, w) < 0)
		FAIL("%s/%s: %s", c->tree, here(c), strerror(errno));
	rc = 0;
fail:
	if (dsub >= 0)
		close(dsub);
	if (sub >= 0)
		close(sub);
	return rc;
}

/* One entry of sfd (a directory depth deep) into dfd. */
static int
restore_entry(struct rctx *c, int sfd, int dfd, const char *name, int depth)
{
	struct stat st;
	struct want w;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		FAIL("%s/%s: %s", c->tree, here(c), strerror(errno));
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		FAIL("%s/%s is a device: a backup never holds one", c->tree,
		     here(c));
	if (depth == 0 && !S_ISDIR(st.st_mode))
		FAIL("%s/%s is a %s: every entry of %s/ must be a "
		     "workspace's directory",
		     c->tree, here(c), treewalk_type_name(st.st_mode), c->tree);
	if (depth >= BACKUP_TREE_DEPTH)
		FAIL("%s/%s is deeper than %d directories", c->tree, here(c),
		     BACKUP_TREE_DEPTH);
	if (c->lists && match(c, &st, &w) < 0)
		goto fail;
	if (!c->lists && treewalk_type(st.st_mode) == '?') {
		c->n->skipped++; /* a socket or a FIFO, of a format-1 backup */
		return 0;
	}
	if (!c->lists) {
		c->n->setid += (st.st_mode & 07000) != 0;
		w = (struct want){.type = treewalk_type(st.st_mode),
		                  .mode = st.st_mode & 0777,
		                  .mtime = st.st_mtime};
	}
	c->n->entries++;
	if (w.type == 'd')
		return restore_subdir(c, sfd, dfd, name, &w, depth);
	if ((w.type == 'f' ? restore_file(c, sfd, dfd, name, &w)
	                   : restore_link(c, sfd, dfd, name, &w)) < 0)
		goto fail;
	return c->lists ? list_next(c) : 0;
fail:
	return -1;
}

static int
restore_dir(struct rctx *c, int sfd, int dfd, int depth)
{
	struct treewalk_names s;
	int rc = 0;

	if (treewalk_names_read(sfd, &s) < 0)
		FAIL("%s/%s: %s", c->tree, here(c), strerror(errno));
	for (size_t i = 0; rc == 0 && i < s.n; i++) {
		ssize_t old = treewalk_path_push(&c->p, s.v[i]);
		if (old < 0) {
			snprintf(c->err, c->errlen,
			         "%s/%s/%s: a path longer than %d bytes",
			         c->tree, here(c), s.v[i], BACKUP_PATH_MAX);
			rc = -1;
			break;
		}
		rc = restore_entry(c, sfd, dfd, s.v[i], depth);
		treewalk_path_pop(&c->p, old);
	}
	treewalk_names_free(&s);
	return rc;
fail:
	return -1;
}

/* The list open, hashed as it is read, and its first line in hand. */
static int
list_open(struct rctx *c, int bkfd, const char *list)
{
	struct stat st;

	c->listfd =
	    openat(bkfd, list, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (c->listfd < 0 || fstat(c->listfd, &st) < 0 || !S_ISREG(st.st_mode))
		FAIL("%s: not a file: %s", list, strerror(errno));
	if ((c->lh = vault_sha256_new()) == NULL ||
	    (c->lbuf = malloc(LBUF)) == NULL)
		FAIL("out of memory");
	return list_next(c);
fail:
	return -1;
}

/* The list ended with the tree, and is the list the manifest names. */
static int
list_close(struct rctx *c, const char *list, const char *sha256)
{
	char hex[VAULT_HASH_HEX + 1];

	if (c->have)
		FAIL("%s/%s is listed but missing from the backup", c->tree,
		     treewalk_shown(c->L.path, c->shown, sizeof(c->shown)));
	vault_sha256_end(c->lh, hex);
	c->lh = NULL;
	if (strcmp(hex, sha256) != 0)
		FAIL("%s does not match its checksum in the manifest", list);
	return 0;
fail:
	return -1;
}

int
backup_tree_restore(int bkfd, const char *name, const char *list,
                    const char *sha256, int dstfd, const char *dst,
                    mode_t root_mode, enum backup_owner own,
                    struct backup_tree_count *n, char *err, size_t errlen)
{
	struct rctx *c = calloc(1, sizeof(*c));
	int sfd = -1, dfd = -1, rc = -1;
	char hex[VAULT_HASH_HEX + 1];

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->n = n;
	c->own = own;
	c->tree = name;
	c->lists = list != NULL && sha256 != NULL;
	c->listfd = -1;
	c->err = err;
	c->errlen = errlen;
	sfd =
	    openat(bkfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		FAIL("%s: not a directory: %s", name, strerror(errno));
	if (c->lists && list_open(c, bkfd, list) < 0)
		goto fail;
	if (mkdirat(dstfd, dst, root_mode) < 0 ||
	    (dfd = openat(dstfd, dst,
	                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0 ||
	    fchmod(dfd, root_mode) < 0)
		FAIL("cannot make %s: %s", dst, strerror(errno));
	if (restore_dir(c, sfd, dfd, 0) < 0 ||
	    (c->lists && sha256 && list_close(c, list, sha256) < 0))
		goto fail;
	if (syncfs(dfd) < 0)
		FAIL("sync %s: %s", dst, strerror(errno));
	rc = 0;
fail:
	if (c->lh)
		vault_sha256_end(c->lh, hex);
	if (c->listfd >= 0)
		close(c->listfd);
	if (dfd >= 0)
		close(dfd);
	if (sfd >= 0)
		close(sfd);
	free(c->lbuf);
	free(c);
	return rc;
}
