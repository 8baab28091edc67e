/*
 * recipeops.c - detection on import, the runtime-inspect API's work, and
 * the manifest of an app without a sandbox.yaml (recipeops.h).
 *
 * The manifest sandboxd writes starts with RECIPE_MANIFEST_MARK, so a
 * later detection may replace it; any other sandbox.yaml is the user's
 * and is replaced only when asked with force.  The write and the commit
 * run on the host (wsfs, the git helper) as the workspace user, before
 * the sandbox's first boot on import, so the supervisor finds the
 * manifest and the install step on its first read.  A sandbox on another
 * node is read through a shadow copy (struct appdir), its manifest
 * written through wsnode and committed by a git helper on its node
 * (gitws_commit_at, wsnode_git_dial_ref).
 */
#include "sandbox/recipeops.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "timeline/timeline.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"
#include "lib/limits.h"
#include "lib/log.h"

#define RECIPEOPS_PKG_MAX (1u << 20) /* bytes of package.json read */
/* The last line of a manifest sandboxd wrote: which recipe it is. */
#define RECIPEOPS_RECIPE_LINE "# sandboxd recipe: "

/*
 * A sandbox's app directory as detection reads it: the local one, or for
 * a sandbox on another node a shadow copy (wsnode_shadow) of what
 * detection looks at: the root's small files, the root's directories
 * (empty), and the few paths below them it probes (shadow_extra).  A
 * monorepo app deeper than those is not seen remotely.
 */
struct appdir {
	int fd;
	bool remote;
	struct sandbox sb;
	char ws[WORKSPACE_PATH_MAX];
	char shadow[WORKSPACE_PATH_MAX];
};

#define RECIPEOPS_SHADOW_DIRS 64 /* root directories made in the copy */

static const char *const shadow_extra[] = {"app/main.py",
                                           "src/main.py",
                                           ".storybook/main.js",
                                           ".storybook/main.ts",
                                           "frontend/package.json",
                                           "web/package.json",
                                           "client/package.json",
                                           "backend/package.json",
                                           "server/package.json",
                                           "backend/requirements.txt",
                                           "server/requirements.txt"};

/* The root's directories, empty, in the shadow copy. */
static void
shadow_dirs(struct core *c, struct appdir *ad)
{
	struct jv *list = NULL;
	struct err e = {0};
	int n = 0;

	if (wsnode_list(c->wn, &ad->sb, "workspace/app", &list, &e) < 0)
		return;
	for (size_t i = 0; i < jv_len(list) && n < RECIPEOPS_SHADOW_DIRS; i++) {
		const struct jv *o = jv_at(list, i);
		const char *name = jv_str(jv_get(o, "name"));

		if (name &&
		    strcmp(jv_str(jv_get(o, "type")) ?: "", "dir") == 0 &&
		    strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
		    strcmp(name, "..") != 0 && mkdirat(ad->fd, name, 0700) == 0)
			n++;
	}
	jv_free(list);
}

/* The app directory of a sandbox's workspace (ad filled), or -1 with e. */
static int
open_app(struct core *c, const char *sandbox_id, struct appdir *ad,
         struct err *e)
{
	ad->fd = -1;
	ad->shadow[0] = '\0';
	ad->remote = store_sandbox_get(c->store, sandbox_id, &ad->sb) == 0 &&
	             wsnode_remote(&ad->sb);
	workspace_path(c->cfg->data_dir, sandbox_id, ad->ws, sizeof(ad->ws));
	if (ad->remote) {
		ad->fd = wsnode_shadow(
		    c->wn, &ad->sb, "workspace/app", shadow_extra,
		    sizeof(shadow_extra) / sizeof(shadow_extra[0]), ad->shadow,
		    sizeof(ad->shadow), e);
		if (ad->fd >= 0)
			shadow_dirs(c, ad);
		return ad->fd;
	}
	ad->fd = wsfs_open_dir(ad->ws, "workspace/app", e);
	if (ad->fd < 0 && e->status == 0)
		ERR_INTERNAL(e, "cannot open the app directory");
	return ad->fd;
}

static void
close_app(struct appdir *ad)
{
	if (ad->remote)
		wsnode_shadow_drop(ad->fd, ad->shadow);
	else if (ad->fd >= 0)
		close(ad->fd);
	ad->fd = -1;
}

/* The sandbox's first port, or 3000. */
static int
sandbox_port(struct core *c, const char *sandbox_id)
{
	struct sandbox sb;

	if (store_sandbox_get(c->store, sandbox_id, &sb) == 0 && sb.nports)
		return sb.ports[0];
	return 3000;
}

static int
recipes_ready(struct err *e)
{
	char msg[256];

	if (recipe_load(msg, sizeof(msg)) == 0)
		return 0;
	log_warn("recipes: %s", msg);
	return ERR_INTERNAL(e, "the recipe table is broken: %s", msg);
}

/*
 * The app's sandbox.yaml: 1 with its text in text (released by the
 * caller), 0 when there is none, -1 with e when it cannot be read.  A
 * remote app's is read from its node, not from the shadow copy (which
 * leaves files out past its bounds: a user's manifest must never look
 * absent, or a detection would replace it).
 */
static int
manifest_text(struct core *c, const struct appdir *ad, struct buf *text,
              struct err *e)
{
	bool eof = false;
	int rc;

	if (ad->remote) {
		buf_init(text, MANIFEST_MAX_BYTES + 1);
		rc = wsnode_read(c->wn, &ad->sb, "workspace/app/sandbox.yaml",
		                 0, MANIFEST_MAX_BYTES + 1, text, &eof, e);
		if (rc == 0 && text->len > MANIFEST_MAX_BYTES)
			rc = err_set(e, 413, "payload_too_large",
			             "sandbox.yaml is larger than %u bytes",
			             MANIFEST_MAX_BYTES);
	} else {
		rc = wsfs_read(ad->fd, "sandbox.yaml", MANIFEST_MAX_BYTES, text,
		               e);
	}
	if (rc == 0)
		return 1;
	buf_release(text);
	if (e->status != 404)
		return -1;
	memset(e, 0, sizeof(*e));
	return 0;
}

static bool
ours(const struct buf *text)
{
	size_t n = strlen(RECIPE_MANIFEST_MARK);

	return text->len >= n &&
	       memcmp(text->data, RECIPE_MANIFEST_MARK, n) == 0;
}

static void
note_detected(struct core *c, const struct app *a, const char *sandbox_id,
              const struct detection *d)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct jv *o = jv_obj();
	struct tl_event ev = {.app_id = a->id, .sandbox_id = sandbox_id};

	if (d->recipe[0] == '\0') {
		jv_set_str(o, "looked_for", d->looked_for);
		ev.type = "runtime.undetected";
		ev.severity = "warning";
		ev.payload_json = tl_payload(o, pl, sizeof(pl));
		timeline_note(c->tl, &ev, "No framework was detected: %.200s",
		              d->looked_for);
		return;
	}
	jv_set_str(o, "recipe", d->recipe);
	jv_set_str(o, "dir", d->dir);
	jv_set_int(o, "confidence", d->confidence);
	jv_set_str(o, "package_manager", d->pm);
	ev.type = "runtime.detected";
	ev.payload_json = tl_payload(o, pl, sizeof(pl));
	timeline_note(c->tl, &ev,
	              "Detected %.60s%s%.100s; sandbox.yaml written.",
	              d->recipe, d->dir[0] ? " in " : "", d->dir);
}

/* Commits sandbox.yaml alone; its sha into sha ("" when git made none). */
static void
commit_manifest(struct core *c, const struct app *a, const struct appdir *ad,
                const struct detection *d, char sha[41])
{
	const struct recipe *r = recipe_find(d->recipe);
	struct wsnode_ref ref = {.ws = ad->ws, .wn = c->wn, .sb = &ad->sb};
	struct gitws_at at = {.ws = ad->ws,
	                      .dial = ad->remote ? wsnode_git_dial_ref : NULL,
	                      .arg = &ref};
	char msg[200];
	struct jv *paths = jv_arr(), *out = NULL;
	struct err e = {0};

	sha[0] = '\0';
	snprintf(msg, sizeof(msg),
	         "sandboxd: add sandbox.yaml for %s (detected)",
	         r ? recipe_display_name(r) : d->recipe);
	jv_push(paths, jv_new_str("sandbox.yaml"));
	if (gitws_commit_at(a->id, &at, msg, paths, &out, &e) == 0 &&
	    jv_is_true(jv_get(out, "committed")))
		snprintf(sha, 41, "%s", jv_str(jv_get(out, "sha")) ?: "");
	else
		log_warn("app %s: sandbox.yaml not committed: %s", a->id,
		         e.msg[0] ? e.msg : "no change");
	jv_free(paths);
	jv_free(out);
}

/* Writes the detection's manifest into the app and commits it. */
static int
write_manifest(struct core *c, const struct app *a, const char *sandbox_id,
               const struct appdir *ad, const struct detection *d, char sha[41],
               struct err *e)
{
	char msg[256];
	struct buf text;
	int rc;

	buf_init(&text, MANIFEST_MAX_BYTES);
	if (recipe_manifest(d, sandbox_port(c, sandbox_id), &text, msg,
	                    sizeof(msg)) < 0 ||
	    buf_appendf(&text, "%s%s\n", RECIPEOPS_RECIPE_LINE, d->recipe) <
	        0) {
		buf_release(&text);
		return ERR_INTERNAL(e, "cannot render the manifest: %s", msg);
	}
	if (ad->remote)
		rc = wsnode_write(c->wn, &ad->sb, "workspace/app/sandbox.yaml",
		                  text.data, text.len, 0644, e);
	else
		rc = wsfs_write(ad->fd, "sandbox.yaml", text.data, text.len,
		                WORKSPACE_UID, WORKSPACE_GID, e);
	buf_release(&text);
	if (rc < 0)
		return -1;
	commit_manifest(c, a, ad, d, sha);
	return 0;
}

int
recipeops_import(struct core *c, const struct app *a, const char *sandbox_id,
                 struct err *e)
{
	struct appdir ad;
	char sha[41];
	struct detection d;
	struct buf text;
	struct err we = {0};
	int has;

	if (open_app(c, sandbox_id, &ad, e) < 0)
		return -1;
	has = manifest_text(c, &ad, &text, &we);
	if (has > 0)
		buf_release(&text);
	if (has != 0 || recipes_ready(&we) < 0 || recipe_detect(ad.fd, &d) < 0)
		goto out; /* the app's own, or no detection: runtime.c says */
	if (d.recipe[0] &&
	    write_manifest(c, a, sandbox_id, &ad, &d, sha, &we) < 0)
		log_warn("app %s: sandbox.yaml not written: %s", a->id, we.msg);
	else
		note_detected(c, a, sandbox_id, &d);
	log_info("app %s: detected %s%s%s (%d)", a->id,
	         d.recipe[0] ? d.recipe : "nothing", d.dir[0] ? " in " : "",
	         d.dir, d.confidence);
out:
	close_app(&ad);
	return 0;
}

int
recipeops_apply(struct core *c, const struct app *a, const char *sandbox_id,
                const char *recipe, bool force, struct detection *d,
                bool *written, char commit[41], struct err *e)
{
	struct appdir ad;
	struct buf text;
	int has, rc = -1;

	*written = false;
	commit[0] = '\0';
	if (recipes_ready(e) < 0)
		return -1;
	if (recipe && recipe_find(recipe) == NULL)
		return ERR_BAD(e,
		               "no recipe \"%.40s\"; the ids are listed by GET "
		               "/v1/runtime/recipes (sandboxd recipes)",
		               recipe);
	if (open_app(c, sandbox_id, &ad, e) < 0)
		return -1;
	has = manifest_text(c, &ad, &text, e);
	if (has < 0)
		goto out;
	if (has > 0 && !ours(&text) && !force) {
		buf_release(&text);
		rc = err_set(e, 409, "manifest_is_users",
		             "the app's sandbox.yaml was not written by "
		             "sandboxd; send \"force\":true to replace it");
		goto out;
	}
	if (has > 0)
		buf_release(&text);
	if ((recipe ? recipe_detect_as(ad.fd, recipe, d)
	            : recipe_detect(ad.fd, d)) < 0) {
		rc = ERR_INTERNAL(e, "cannot read the app directory");
		goto out;
	}
	rc = 0;
	if (d->recipe[0] &&
	    (rc = write_manifest(c, a, sandbox_id, &ad, d, commit, e)) == 0)
		*written = true;
	if (rc == 0)
		note_detected(c, a, sandbox_id, d);
out:
	close_app(&ad);
	return rc;
}

/* The recipe a manifest of ours names on its RECIPEOPS_RECIPE_LINE. */
static void
set_recipe(struct jv *o, const struct buf *text)
{
	const char *p = memmem(text->data, text->len, RECIPEOPS_RECIPE_LINE,
	                       strlen(RECIPEOPS_RECIPE_LINE));
	const struct recipe *r;
	char id[RECIPE_ID_LEN + 1];
	size_t n = 0;

	if (p == NULL)
		return;
	p += strlen(RECIPEOPS_RECIPE_LINE);
	while (n < RECIPE_ID_LEN && p + n < text->data + text->len &&
	       p[n] != '\n')
		n++;
	snprintf(id, sizeof(id), "%.*s", (int)n, p);
	if ((r = recipe_find(id)) == NULL)
		return;
	jv_set_str(o, "recipe", recipe_id(r));
	jv_set_str(o, "display_name", recipe_display_name(r));
}

/* existing_manifest of the inspect answer. */
static struct jv *
existing_json(const struct buf *text, int has)
{
	struct jv *o = jv_obj(), *errs, *ws;
	struct manifest m;
	char err[384];

	jv_set_bool(o, "present", has > 0);
	if (has <= 0)
		return o;
	jv_set_bool(o, "written_by_sandboxd", ours(text));
	if (ours(text))
		set_recipe(o, text);
	if (manifest_parse(text->data, text->len, &m, err, sizeof(err)) < 0) {
		jv_set_bool(o, "valid", false);
		errs = jv_arr();
		jv_push(errs, jv_new_str(err));
		jv_set(o, "errors", errs);
		return o;
	}
	jv_set_bool(o, "valid", true);
	if (m.has_web) {
		jv_set_str(o, "web_command", m.web.command);
		jv_set_int(o, "web_port", m.web.port);
		jv_set_str(o, "health_path", m.web.health_path);
	}
	ws = jv_arr();
	for (int i = 0; i < m.nworkers; i++)
		jv_push(ws, jv_new_str(m.workers[i].name));
	jv_set(o, "workers", ws);
	return o;
}

static const char *
confidence_label(int n)
{
	return n >= 80 ? "high" : n >= 50 ? "medium" : "low";
}

static struct jv *
suggestions_json(const struct detection *d)
{
	struct jv *arr = jv_arr(), *o;
	const struct recipe *r;

	for (int i = 0; i < d->ncands; i++) {
		r = recipe_find(d->cands[i].recipe);
		o = jv_obj();
		jv_set_str(o, "recipe", d->cands[i].recipe);
		jv_set_str(o, "display_name",
		           r ? recipe_display_name(r) : d->cands[i].recipe);
		jv_set_int(o, "confidence", d->cands[i].confidence);
		jv_set_str(o, "confidence_label",
		           confidence_label(d->cands[i].confidence));
		jv_set_str(o, "dir", d->cands[i].dir);
		jv_push(arr, o);
	}
	return arr;
}

struct jv *
recipeops_inspect(struct core *c, const char *sandbox_id, struct err *e)
{
	struct appdir ad;
	struct detection d;
	struct buf text;
	struct jv *o, *warn = jv_arr();
	int has;

	if (recipes_ready(e) < 0 || open_app(c, sandbox_id, &ad, e) < 0) {
		jv_free(warn);
		return NULL;
	}
	has = manifest_text(c, &ad, &text, e);
	if (has < 0) {
		jv_push(warn, jv_new_str(e->msg));
		memset(e, 0, sizeof(*e));
	}
	o = jv_obj();
	jv_set(o, "existing_manifest", existing_json(&text, has));
	if (has > 0)
		buf_release(&text);
	if (recipe_detect(ad.fd, &d) == 0) {
		jv_set(o, "detection", detection_json(&d));
		jv_set(o, "suggestions", suggestions_json(&d));
		for (int i = 0; i < d.nwarnings; i++)
			jv_push(warn, jv_new_str(d.warnings[i]));
		if (d.recipe[0] == '\0')
			jv_push(warn, jv_new_str(d.looked_for));
	} else {
		jv_set(o, "detection", jv_new_null());
		jv_set(o, "suggestions", jv_arr());
		jv_push(warn, jv_new_str("the app directory cannot be read"));
	}
	jv_set(o, "warnings", warn);
	close_app(&ad);
	return o;
}

/* package.json is JSON with a "dev" script. */
static bool
has_dev_script(int appfd)
{
	struct buf text;
	struct err e = {0};
	struct jv *v;
	char err[128];
	bool yes;

	if (wsfs_read(appfd, "package.json", RECIPEOPS_PKG_MAX, &text, &e) <
	    0) {
		buf_release(&text);
		return false;
	}
	v = jv_parse(text.data, text.len, 32, err, sizeof(err));
	buf_release(&text);
	yes = jv_str(jv_get(jv_get(v, "scripts"), "dev")) != NULL;
	jv_free(v);
	return yes;
}

/* Nothing in the app but dot files (.git): a blank app being built, to
 * which the default static server keeps answering as files appear. */
static bool
blank(int appfd)
{
	struct jv *list = NULL;
	struct err e = {0};
	bool trunc, none = true;
	const char *p;

	if (wsfs_list(appfd, "", false, &list, &trunc, &e) < 0)
		return false;
	for (size_t i = 0; i < jv_len(list) && none; i++) {
		p = jv_str(jv_get(jv_at(list, i), "path"));
		none = p && p[0] == '.';
	}
	jv_free(list);
	return none;
}

int
recipeops_fallback(int appfd, int port, struct manifest *m, char *err,
                   size_t errlen)
{
	struct detection d;
	struct buf text;
	bool pkg = has_dev_script(appfd);
	int rc;

	if (pkg || wsfs_exists(appfd, "index.html") || blank(appfd)) {
		manifest_default(m, port, pkg);
		return 0;
	}
	if (recipe_load(err, errlen) < 0 || recipe_detect(appfd, &d) < 0) {
		snprintf(err, errlen,
		         "no sandbox.yaml, and the app directory "
		         "cannot be read");
		return -1;
	}
	if (d.recipe[0] == '\0') {
		snprintf(err, errlen,
		         "no sandbox.yaml, and no framework detected: %s%s%s%s",
		         d.looked_for, d.nwarnings ? " (" : "",
		         d.nwarnings ? d.warnings[0] : "",
		         d.nwarnings ? ")" : "");
		return -1;
	}
	buf_init(&text, MANIFEST_MAX_BYTES);
	rc = recipe_manifest(&d, port, &text, err, errlen);
	if (rc == 0)
		rc = manifest_parse(text.data, text.len, m, err, errlen);
	buf_release(&text);
	return rc;
}
