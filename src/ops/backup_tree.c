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
#include "ws/workspace.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(c->err, c->errlen, __VA_ARGS__);                      \
		goto fail;                                                     \
	} while (0)

#define CHUNK 65536

/* --- what both walks share ---------------------------------------------- */

struct names {
	char **v;
	size_t n;
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* The entries of dirfd but . and .., sorted; -1 with errno. */
static int
names_read(int dirfd, struct names *s)
{
	int fd = dup(dirfd);
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	s->v = NULL;
	s->n = 0;
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (s->n == cap) {
			char **v = NULL;
			cap = cap ? cap * 2 : 64;
			if (cap <= BACKUP_DIR_ENTRIES)
				v = realloc(s->v, cap * sizeof(*v));
			if (v == NULL)
				break;
			s->v = v;
		}
		if ((s->v[s->n] = strdup(de->d_name)) == NULL)
			break;
		s->n++;
	}
	closedir(d);
	if (de != NULL) {
		names_free(s);
		errno = ENOMEM;
		return -1;
	}
	qsort(s->v, s->n, sizeof(*s->v), by_name);
	return 0;
}

/* The path being walked: components joined by '/'. */
struct path {
	char s[BACKUP_PATH_MAX + 1];
	size_t len;
};

/* Appends name; its old length, or -1 (unchanged) when too long. */
static ssize_t
path_push(struct path *p, const char *name)
{
	size_t old = p->len, n = strlen(name) + (old ? 1 : 0);

	if (old + n > BACKUP_PATH_MAX)
		return -1;
	snprintf(p->s + old, sizeof(p->s) - old, "%s%s", old ? "/" : "", name);
	p->len = old + n;
	return (ssize_t)old;
}

static void
path_pop(struct path *p, ssize_t old)
{
	p->len = (size_t)old;
	p->s[old] = '\0';
}

/* A path fit for a message: bytes a terminal would act on as '?'. */
static const char *
shown(const char *path, char *out, size_t len)
{
	size_t i = 0;

	for (; path[i] && i + 1 < len; i++)
		out[i] = (unsigned char)path[i] < 0x20 || path[i] == 0x7f
		             ? '?'
		             : path[i];
	out[i] = '\0';
	return out;
}

static char
type_of(mode_t m)
{
	return S_ISDIR(m) ? 'd' : S_ISREG(m) ? 'f' : S_ISLNK(m) ? 'l' : '?';
}

static const char *
type_name(mode_t m)
{
	return S_ISDIR(m)    ? "directory"
	       : S_ISREG(m)  ? "file"
	       : S_ISLNK(m)  ? "symbolic link"
	       : S_ISFIFO(m) ? "FIFO"
	       : S_ISSOCK(m) ? "socket"
	                     : "device";
}

static const char *
line_type_name(char t)
{
	return t == 'd' ? "directory" : t == 'f' ? "file" : "symbolic link";
}

/* --- backup: a tree and its list ----------------------------------------- */

struct wctx {
	struct backup_tree_count *n;
	const struct backup_tree_hooks *h;
	int64_t max_file;
	dev_t dev; /* of the tree: no other filesystem is entered */
	int listfd;
	struct buf line;
	struct backup_entry e;
	struct path p;
	char chunk[CHUNK];
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
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
	    out = -1, rc = -1;
	struct vault_sha256 *h = NULL;
	struct stat st;
	ssize_t k = 0;

	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = in < 0 && errno != ENOENT ? -1 : 1; /* gone or changed */
		goto out;
	}
	if (c->max_file > 0 && st.st_size > c->max_file) {
		c->n->too_big++;
		rc = 1;
		goto out;
	}
	out = openat(dfd, name,
	             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	             0600);
	if (out < 0 || (h = vault_sha256_new()) == NULL)
		goto out;
	c->e.size = 0;
	while ((k = read(in, c->chunk, sizeof(c->chunk))) > 0 ||
	       (k < 0 && errno == EINTR)) {
		if (k < 0)
			continue;
		if (fileio_write_all(out, c->chunk, (size_t)k) < 0)
			break;
		vault_sha256_update(h, c->chunk, (size_t)k);
		c->e.size += k;
	}
	if (k == 0 && fchmod(out, st.st_mode & 0777) == 0)
		rc = 0;
	c->e.mtime = st.st_mtime;
	c->e.mode = st.st_mode & 0777;
	c->n->setid += (st.st_mode & 07000) != 0;
out:
	if (h)
		vault_sha256_end(h, c->e.sha256);
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
	c->e.type = type_of(st.st_mode);
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
	sub = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if (mkdirat(dfd, name, 0700) < 0 ||
	    (dsub = openat(dfd, name,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
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
	struct names s;
	char msg[256];
	int rc = 0;

	if (names_read(sfd, &s) < 0) {
		snprintf(c->err, c->errlen, "cannot read %s: %s",
		         shown(c->p.s, msg, sizeof(msg)), strerror(errno));
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < s.n; i++) {
		ssize_t old = path_push(&c->p, s.v[i]);
		struct stat st;
		bool top = depth == 0;

		if (old < 0) {
			c->n->too_deep++;
			continue;
		}
		if (top && (s.v[i][0] == '.' ||
		            fstatat(sfd, s.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		            !S_ISDIR(st.st_mode))) {
			path_pop(&c->p, old);
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
			         shown(c->p.s, msg, sizeof(msg)),
			         strerror(errno));
		path_pop(&c->p, old);
	}
	names_free(&s);
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
	*c = (struct wctx){.n = n, .h = h, .max_file = max_file, .err = err,
	                   .errlen = errlen, .listfd = -1};
	err[0] = '\0';
	buf_init(&c->line, BACKUP_LINE_MAX);
	if (fstat(srcfd, &st) < 0 || mkdirat(bkfd, name, 0700) < 0 ||
	    (dfd = openat(bkfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	                                  O_CLOEXEC)) < 0 ||
	    (c->listfd = openat(bkfd, list,
	                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	                            O_CLOEXEC,
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

/* --- restore: a tree checked against its list ---------------------------- */

struct rctx {
	struct backup_tree_count *n;
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
	struct path p;
	char chunk[CHUNK];
	char shown[512];
	char *err;
	size_t errlen;
};

/* The small part of a line an entry needs after the list moved on. */
struct want {
	char type;
	unsigned mode;
	int64_t size, mtime;
	char sha256[VAULT_HASH_HEX + 1];
};

#define LBUF (BACKUP_LINE_MAX + CHUNK)

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
			     c->tree, (long long)c->lineno + 1, BACKUP_LINE_MAX);
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
	if (backup_entry_parse(c->lbuf + c->loff, (size_t)(nl - c->lbuf) - c->loff,
	                       &c->L, why, sizeof(why)) < 0)
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
	const char *where = shown(c->p.s, c->shown, sizeof(c->shown));
	int cmp = c->have ? backup_path_cmp(c->p.s, c->L.path) : -1;

	if (cmp < 0)
		FAIL("%s/%s is in the backup but not in its list", c->tree,
		     where);
	if (cmp > 0)
		FAIL("%s/%s is listed but missing from the backup", c->tree,
		     shown(c->L.path, c->shown, sizeof(c->shown)));
	if (type_of(st->st_mode) != c->L.type)
		FAIL("%s/%s is a %s in the backup, but its list says a %s",
		     c->tree, where, type_name(st->st_mode),
		     line_type_name(c->L.type));
	*w = (struct want){.type = c->L.type, .mode = c->L.mode,
	                   .size = c->L.size, .mtime = c->L.mtime};
	memcpy(w->sha256, c->L.sha256, sizeof(w->sha256));
	return 0;
fail:
	return -1;
}

/* Owner, mode and time of what fd (or dfd/name, a link) is. */
static int
settle(int fd, int dfd, const char *name, const struct want *w)
{
	struct timespec ts[2] = {{.tv_sec = w->mtime}, {.tv_sec = w->mtime}};

	if (fd < 0)
		return fchownat(dfd, name, WORKSPACE_UID, WORKSPACE_GID,
		                AT_SYMLINK_NOFOLLOW) < 0 ||
		               utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0
		           ? -1
		           : 0;
	return fchown(fd, WORKSPACE_UID, WORKSPACE_GID) < 0 ||
	               fchmod(fd, w->mode & 0777) < 0 || futimens(fd, ts) < 0
	           ? -1
	           : 0;
}

static int
restore_file(struct rctx *c, int sfd, int dfd, const char *name,
             const struct want *w)
{
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
	    out = -1, rc = -1;
	struct vault_sha256 *h = vault_sha256_new();
	char hex[VAULT_HASH_HEX + 1] = "";
	const char *where = shown(c->p.s, c->shown, sizeof(c->shown));
	struct stat st;
	int64_t total = 0;
	ssize_t k = 0;

	if (h == NULL || in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		FAIL("%s/%s: cannot open it as a file", c->tree, where);
	out = openat(dfd, name,
	             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	             0600);
	if (out < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	while ((k = read(in, c->chunk, sizeof(c->chunk))) > 0 ||
	       (k < 0 && errno == EINTR)) {
		if (k < 0)
			continue;
		total += k;
		if (c->lists && total > w->size)
			FAIL("%s/%s is larger than its list says (%lld bytes)",
			     c->tree, where, (long long)w->size);
		if (fileio_write_all(out, c->chunk, (size_t)k) < 0)
			FAIL("writing %s/%s: %s", c->tree, where,
			     strerror(errno));
		vault_sha256_update(h, c->chunk, (size_t)k);
	}
	vault_sha256_end(h, hex);
	h = NULL;
	if (k < 0)
		FAIL("reading %s/%s: %s", c->tree, where, strerror(errno));
	if (c->lists && (total != w->size || strcmp(hex, w->sha256) != 0))
		FAIL("%s/%s does not match its checksum in the list", c->tree,
		     where);
	if (settle(out, dfd, name, w) < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	c->n->bytes += total;
	rc = 0;
fail:
	if (h)
		vault_sha256_end(h, hex);
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
	const char *where = shown(c->p.s, c->shown, sizeof(c->shown));
	ssize_t k = readlinkat(sfd, name, c->target, sizeof(c->target));

	if (k <= 0 || k >= (ssize_t)sizeof(c->target))
		FAIL("%s/%s: an unreadable link, or longer than %d bytes",
		     c->tree, where, BACKUP_PATH_MAX);
	c->target[k] = '\0';
	if (c->lists && strcmp(c->target, c->L.target) != 0)
		FAIL("%s/%s points elsewhere than its list says", c->tree,
		     where);
	if (symlinkat(c->target, dfd, name) < 0 || settle(-1, dfd, name, w) < 0)
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
	int sub = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
	    dsub = -1, rc = -1;
	const char *where = shown(c->p.s, c->shown, sizeof(c->shown));

	if (sub < 0 || mkdirat(dfd, name, 0700) < 0 ||
	    (dsub = openat(dfd, name,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		FAIL("%s/%s: %s", c->tree, where, strerror(errno));
	if ((c->lists && list_next(c) < 0) ||
	    restore_dir(c, sub, dsub, depth + 1) < 0)
		goto fail;
	if (settle(dsub, dfd, name, w) < 0)
		FAIL("%s/%s: %s", c->tree, shown(c->p.s, c->shown, sizeof(c->shown)),
		     strerror(errno));
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
		FAIL("%s/%s: %s", c->tree,
		     shown(c->p.s, c->shown, sizeof(c->shown)), strerror(errno));
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		FAIL("%s/%s is a device: a backup never holds one", c->tree,
		     shown(c->p.s, c->shown, sizeof(c->shown)));
	if (depth == 0 && !S_ISDIR(st.st_mode))
		FAIL("%s/%s is a %s: every entry of %s/ must be a "
		     "workspace's directory",
		     c->tree, shown(c->p.s, c->shown, sizeof(c->shown)),
		     type_name(st.st_mode), c->tree);
	if (depth >= BACKUP_TREE_DEPTH)
		FAIL("%s/%s is deeper than %d directories", c->tree,
		     shown(c->p.s, c->shown, sizeof(c->shown)),
		     BACKUP_TREE_DEPTH);
	if (c->lists && match(c, &st, &w) < 0)
		goto fail;
	if (!c->lists && type_of(st.st_mode) == '?') {
		c->n->skipped++; /* a socket or a FIFO, of a format-1 backup */
		return 0;
	}
	if (!c->lists) {
		c->n->setid += (st.st_mode & 07000) != 0;
		w = (struct want){.type = type_of(st.st_mode),
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
	struct names s;
	int rc = 0;

	if (names_read(sfd, &s) < 0)
		FAIL("%s/%s: %s", c->tree,
		     shown(c->p.s, c->shown, sizeof(c->shown)), strerror(errno));
	for (size_t i = 0; rc == 0 && i < s.n; i++) {
		ssize_t old = path_push(&c->p, s.v[i]);
		if (old < 0) {
			snprintf(c->err, c->errlen,
			         "%s/%s/%s: a path longer than %d bytes",
			         c->tree, shown(c->p.s, c->shown, sizeof(c->shown)),
			         s.v[i], BACKUP_PATH_MAX);
			rc = -1;
			break;
		}
		rc = restore_entry(c, sfd, dfd, s.v[i], depth);
		path_pop(&c->p, old);
	}
	names_free(&s);
	return rc;
fail:
	return -1;
}

/* The list open, hashed as it is read, and its first line in hand. */
static int
list_open(struct rctx *c, int bkfd, const char *list)
{
	struct stat st;

	c->listfd = openat(bkfd, list,
	                   O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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
		     shown(c->L.path, c->shown, sizeof(c->shown)));
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
                    mode_t root_mode, struct backup_tree_count *n,
                    char *err, size_t errlen)
{
	struct rctx *c = calloc(1, sizeof(*c));
	int sfd = -1, dfd = -1, rc = -1;
	char hex[VAULT_HASH_HEX + 1];

	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->n = n;
	c->tree = name;
	c->lists = list != NULL && sha256 != NULL;
	c->listfd = -1;
	c->err = err;
	c->errlen = errlen;
	sfd = openat(bkfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		FAIL("%s: not a directory: %s", name, strerror(errno));
	if (c->lists && list_open(c, bkfd, list) < 0)
		goto fail;
	if (mkdirat(dstfd, dst, root_mode) < 0 ||
	    (dfd = openat(dstfd, dst,
	                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
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
