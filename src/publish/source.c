/*
 * What a release is built from, and how (docs/publish.md, "How an app
 * is built").
 *
 * The files: the app's current files (its sandbox's workspace, staged
 * here first when it is on another node: below), or a snapshot's,
 * copied with copytree (a clone or a link of the
 * dependency store's files where it can, a copy otherwise) into the
 * release's own work directory, owned by the sandbox's user: the build
 * container writes there and nowhere else, so the preview's files are
 * never touched and the preview keeps running.  A commit is checked
 * out in the copy by the build container (build.c): the repository is
 * the app's, hostile, and git runs where the app's code runs.
 *
 * The plan: the app's sandbox.yaml `publish:` when it has one; else
 * the publish object of the recipe detected on its files (a preset's
 * template carries its own `publish:`).  The install step is the one
 * the app's sandbox runs (its manifest's `install:`), no other: the
 * copy brings the sandbox's dependencies, and whether they are current
 * is the install key's business (release.c).
 *
 * A sandbox on another node (docs/design.md, "Remote workspaces"): the
 * build runs here as for a local one; only the files come from the
 * node.  In the build's thread (no lock held), its workspace is staged
 * here by wsnode_stage (the node's tar stream, .git kept, bounded by the
 * workspace's size and the data filesystem's free space), the app
 * copied from the stage as from a snapshot's directory, and the stage
 * removed once copied or when the copy fails.  The dependency trees come
 * along, as a local copy brings them: a preset's come with its template
 * and its sandbox installs nothing, so a copy without them could not be
 * built; the install key is read from the node.  A commit is checked
 * out in the copy as in a local one.  Rejected: staging on the API
 * thread (a publish answers 202 once its row is made; a workspace's tar
 * takes as long as it is large); building on the sandbox's node (the
 * release lives where the edge serves it); leaving the dependencies out
 * (above).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "lib/buf.h"
#include "publish/internal.h"
#include "recipe/recipe.h"
#include "sandbox/installkey.h"
#include "sandbox/recipeops.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"

static void
plan_from_manifest(const struct manifest *m, struct pub_plan *out)
{
	const struct manifest_publish *p = &m->publish;

	snprintf(out->build, sizeof(out->build), "%s", p->build);
	snprintf(out->output, sizeof(out->output), "%s", p->output);
	snprintf(out->command, sizeof(out->command), "%s", p->command);
	snprintf(out->health, sizeof(out->health), "%s",
	         p->health_path[0] ? p->health_path : "/");
	out->spa = p->spa;
	out->port = p->port;
	out->timeout_s = p->timeout_s;
}

/* The detected recipe's publish object. */
static int
plan_from_recipe(int appfd, struct pub_plan *out, struct err *e)
{
	struct recipe_publish rp;
	struct detection d;
	char err[256];

	if (recipe_load(err, sizeof(err)) < 0 || recipe_detect(appfd, &d) < 0)
		return ERR_INTERNAL(e, "the app's files cannot be read");
	if (d.recipe[0] == '\0' || recipe_publish(&d, &rp) != 0)
		return err_set(e, 400, "invalid_request", "%s", PUB_NO_PLAN);
	snprintf(out->recipe, sizeof(out->recipe), "%s", d.recipe);
	snprintf(out->build, sizeof(out->build), "%s", rp.build);
	snprintf(out->output, sizeof(out->output), "%s", rp.output);
	snprintf(out->command, sizeof(out->command), "%s", rp.command);
	snprintf(out->health, sizeof(out->health), "%s", rp.health_path);
	out->spa = rp.spa;
	out->port = rp.port;
	return 0;
}

/*
 * The manifest the app's sandbox runs by: its sandbox.yaml, else what
 * the runtime falls back to (recipeops_fallback).  Its install is the
 * build's: the build installs what the sandbox installs, no more.
 */
static int
manifest_of(int appfd, struct manifest *m, struct err *e)
{
	struct err re = {0};
	struct buf text;
	char err[256];
	int rc = 0;

	if (wsfs_read(appfd, "sandbox.yaml", MANIFEST_MAX_BYTES, &text, &re) ==
	    0) {
		if (manifest_parse(text.data, text.len, m, err, sizeof(err)) <
		    0)
			rc = err_set(e, 400, "invalid_request",
			             "the app's sandbox.yaml: %s", err);
		buf_release(&text);
		return rc;
	}
	if (re.status != 404)
		return err_set(e, 400, "invalid_request",
		               "the app's sandbox.yaml: %s", re.msg);
	if (recipeops_fallback(appfd, 3000, m, err, sizeof(err)) < 0)
		memset(m, 0, sizeof(*m)); /* no install; the plan decides */
	return 0;
}

int
pub_plan(struct core *c, int appfd, const char *preset, struct pub_plan *out,
         struct err *e)
{
	struct manifest *m = calloc(1, sizeof(*m));
	int rc;

	(void)c;
	memset(out, 0, sizeof(*out));
	if (m == NULL)
		return ERR_INTERNAL(e, "out of memory");
	rc = manifest_of(appfd, m, e);
	if (rc == 0 && m->has_publish) {
		plan_from_manifest(m, out);
		snprintf(out->recipe, sizeof(out->recipe), "%s",
		         preset && preset[0] ? preset : "sandbox.yaml");
	} else if (rc == 0) {
		rc = plan_from_recipe(appfd, out, e);
		/* A server on the web process's port answers its health
		 * path, as a manifest's publish: would default to. */
		if (rc == 0 && !out->output[0] && m->has_web &&
		    m->web.port == out->port)
			snprintf(out->health, sizeof(out->health), "%s",
			         m->web.health_path);
	}
	if (rc == 0 && m->has_install) {
		snprintf(out->install, sizeof(out->install), "%s",
		         m->install_command);
		if (runtime_install_key(appfd, m, out->install_key) < 0)
			out->install_key[0] = '\0';
	}
	free(m);
	return rc;
}

bool
pub_remote_of(struct core *c, const char *sandbox_id, struct sandbox *sb)
{
	if (sandbox_id == NULL || sandbox_id[0] == '\0' || c->wn == NULL)
		return false;
	return store_sandbox_get(c->store, sandbox_id, sb) == 0 &&
	       wsnode_remote(sb);
}

bool
pub_remote_seeded(struct core *c, const struct sandbox *sb)
{
	struct err e = {0};
	int64_t size, mtime;
	char type[8];

	return wsnode_stat(c->wn, sb, ".sandboxd/seeded", type, &size, &mtime,
	                   &e) == 0;
}

bool
pub_seeded(struct core *c, const char *sandbox_id)
{
	char ws[PATH_MAX];
	struct err e = {0};
	struct sandbox sb;
	int fd;
	bool ok;

	if (pub_remote_of(c, sandbox_id, &sb))
		return pub_remote_seeded(c, &sb);
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	fd = wsfs_open_dir(ws, ".sandboxd", &e);
	if (fd < 0)
		return false;
	ok = wsfs_exists(fd, "seeded");
	close(fd);
	return ok;
}

/* The install key in key's text, when it is one (64 hex digits). */
static void
key_of(const struct buf *key, char out[65])
{
	size_t n = strspn(key->data ? key->data : "", "0123456789abcdef");

	if (n == 64)
		snprintf(out, 65, "%.64s", key->data);
}

void
pub_installed_key(struct core *c, const char *sandbox_id, char out[65])
{
	char ws[PATH_MAX];
	struct err e = {0};
	struct sandbox sb;
	struct buf key;
	bool eof;
	int fd;

	out[0] = '\0';
	if (sandbox_id == NULL || sandbox_id[0] == '\0')
		return;
	if (pub_remote_of(c, sandbox_id, &sb)) {
		buf_init(&key, 128);
		if (wsnode_read(c->wn, &sb, ".sandboxd/install.key", 0, 128,
		                &key, &eof, &e) == 0)
			key_of(&key, out);
		buf_release(&key);
		return;
	}
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	fd = wsfs_open_dir(ws, ".sandboxd", &e);
	if (fd < 0)
		return;
	if (wsfs_read(fd, "install.key", 128, &key, &e) == 0) {
		key_of(&key, out);
		buf_release(&key);
	}
	close(fd);
}

static int
copy_err(int err, struct err *e)
{
	if (err == ENOSPC || err == EDQUOT)
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full");
	if (err == EMLINK || err == EFBIG)
		return err_set(e, 413, "too_large",
		               "the app's files are nested deeper than %d "
		               "directories or number over %d",
		               COPYTREE_MAX_DEPTH, COPYTREE_MAX_FILES);
	return ERR_INTERNAL(e, "cannot copy the app's files (%s)",
	                    strerror(err));
}

/* <dir>/work/workspace, owned by the sandbox's user: the build's home. */
static int
make_home(const char *dir, struct err *e)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/work", dir);
	if (mkdir(p, 0755) < 0 || chown(p, WORKSPACE_UID, WORKSPACE_GID) < 0)
		return copy_err(errno, e);
	snprintf(p, sizeof(p), "%s/work/workspace", dir);
	if (mkdir(p, 0755) < 0 || chown(p, WORKSPACE_UID, WORKSPACE_GID) < 0)
		return copy_err(errno, e);
	return 0;
}

/* src's app directory copied into <dir>/work/workspace/app. */
static int
copy_app(struct core *c, const char *src, const char *dir, struct err *e)
{
	char dst[PATH_MAX], store[PATH_MAX];
	struct ws_inoset set = {0};
	struct copytree_opts o = {.uid = WORKSPACE_UID, .gid = WORKSPACE_GID};
	struct copytree_stats st;
	int sfd = -1, dfd = -1, rc, err;

	snprintf(dst, sizeof(dst), "%s/work/workspace", dir);
	snprintf(store, sizeof(store), "%s/store", c->cfg->data_dir);
	ws_inoset_load(store, &set);
	o.store = &set;
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || dfd < 0) {
		rc = -1;
		errno = sfd < 0 ? ENOENT : errno;
	} else {
		rc = copytree_at(sfd, "app", dfd, &o, &st);
	}
	err = errno;
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	ws_inoset_release(&set);
	if (rc < 0 && err == ENOENT)
		return ERR_CONFLICT(e, "the app has no files yet");
	return rc < 0 ? copy_err(err, e) : 0;
}

/*
 * A sandbox on another node: its workspace staged here first (the head
 * of this file), the app copied from the stage as from a snapshot's
 * directory, the stage removed at once.
 */
int
pub_source_copy(struct core *c, const struct release *r, const char *sandbox_id,
                const char *dir, struct err *e)
{
	char src[PATH_MAX], ws[PATH_MAX], stage[PATH_MAX] = "";
	struct sandbox sb;
	int stagefd = -1, rc;

	if (make_home(dir, e) < 0)
		return -1;
	if (strcmp(r->source, "snapshot") == 0) {
		snprintf(src, sizeof(src), "%s/snapshots/%s", c->cfg->data_dir,
		         r->source_ref);
	} else if (pub_remote_of(c, sandbox_id, &sb)) {
		stagefd =
		    wsnode_stage(c->wn, &sb, false, stage, sizeof(stage), e);
		if (stagefd < 0)
			return -1;
		snprintf(src, sizeof(src), "%s/workspace", stage);
	} else {
		workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
		snprintf(src, sizeof(src), "%s/workspace", ws);
	}
	rc = copy_app(c, src, dir, e);
	if (stage[0])
		wsnode_shadow_drop(stagefd, stage);
	return rc;
}
