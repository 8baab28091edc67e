/*
 * Releases: publish, the build's thread, the switch, keep N (docs/
 * publish.md, "Releases"; docs/design.md, "Releases and builds").
 *
 * publish_start checks what it can at once (the source, the plan, the
 * disk, the label), inserts the row "building" (one per app: the
 * store's partial unique index answers 409 publish_in_progress) and
 * starts a thread for the build, tracked so publish_stop can fail and
 * join it.  The thread copies the source into the release's directory,
 * builds it in a container of its own (build.c), and makes the output
 * the release's: a static output copied (no link followed) to site/,
 * its .gz/.br twins written and the files loaded into memory; a server
 * app moved to app/ and its production container started and healthy
 * (runner.c).  Only then is the row "ready", the publication's active
 * release switched (one row) and the host table swapped (one pointer):
 * until that moment the previous release serves, and it keeps serving
 * when anything before fails.  A crash anywhere before the switch
 * leaves the previous release active; publish_recover fails the
 * half-made one.
 *
 * Rollback and unpublish are the switch alone: no build.  Releases
 * beyond SANDBOXD_PUBLISH_KEEP are pruned after each publish, oldest
 * first, never the active one.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "publish/internal.h"
#include "publish/runner.h"
#include "site/site.h"
#include "timeline/timeline.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

struct pub_job {
	struct pub_job *next;
	pthread_t th;
	struct core *c;
	struct release r;
	char sandbox_id[ULID_LEN + 1];
	char preset[32];
	atomic_bool cancel;
	atomic_bool done;
};

/* --- paths ---------------------------------------------------------- */

void
pub_app_dir(const struct core *c, const char *app_id, char *out, size_t len)
{
	snprintf(out, len, "%s/%s/%s", c->cfg->data_dir, PUBLISH_DIR, app_id);
}

void
pub_release_dir(const struct core *c, const char *app_id,
                const char *release_id, char *out, size_t len)
{
	snprintf(out, len, "%s/%s/%s/%s", c->cfg->data_dir, PUBLISH_DIR, app_id,
	         release_id);
}

/* --- the timeline ------------------------------------------------------ */

void
pub_note(struct core *c, const struct release *r, const char *type,
         const char *fmt, ...)
{
	struct jv *pl = jv_obj();
	char buf[STORE_EVENT_PAYLOAD_MAX + 1], msg[256];
	struct tl_event ev = {.app_id = r->app_id, .type = type};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jv_set_str(pl, "release_id", r->id);
	jv_set_int(pl, "number", r->number);
	if (r->kind[0])
		jv_set_str(pl, "kind", r->kind);
	if (strcmp(type, "publish.failed") == 0)
		jv_set_str(pl, "error", r->error);
	ev.payload_json = tl_payload(pl, buf, sizeof(buf));
	timeline_note(c->tl, &ev, "%s", msg);
}

/* --- serving a release --------------------------------------------------- */

static void
site_limits_of(const struct core *c, struct site_limits *l)
{
	l->max_files = PUB_STATIC_FILES;
	l->max_bytes = (size_t)c->cfg->publish_static_max_mb << 20;
	l->max_depth = PUB_STATIC_DEPTH;
}

/* What r's hosts answer, loaded (a static release's files read). */
static int
serve_of(struct core *c, const struct publication *pb, const struct release *r,
         struct pub_serve *s, struct err *e)
{
	char dir[PATH_MAX], why[256];
	struct site_limits lim;

	memset(s, 0, sizeof(*s));
	snprintf(s->release_id, sizeof(s->release_id), "%s", r->id);
	s->private_gate = strcmp(pb->visibility, "private") == 0;
	if (strcmp(r->kind, "server") == 0) {
		s->kind = PUBLISH_SERVER;
		return 0;
	}
	site_limits_of(c, &lim);
	snprintf(dir, sizeof(dir), "%s/site", r->path);
	if (site_load(&s->site, dir, &lim, why, sizeof(why)) < 0)
		return ERR_BAD(e, "the release's files: %s", why);
	s->kind = PUBLISH_STATIC;
	s->spa = r->spa;
	return 0;
}

int
pub_release_serve(struct core *c, const struct publication *pb,
                  const struct release *r, struct err *e)
{
	struct pub_serve s;

	if (serve_of(c, pb, r, &s, e) < 0)
		return -1;
	return pub_hosts_set(c->pub, pb->app_id, pb->label, &s) < 0
	           ? ERR_INTERNAL(e, "out of memory")
	           : 0;
}

/* What an unpublished (or trashed) app's hosts answer. */
void
pub_serve_none(struct core *c, const char *app_id, const char *label)
{
	/* NONE: the edge's 404, as for a host no app has; the label stays
	 * the app's. */
	struct pub_serve s = {.kind = PUBLISH_NONE};

	pub_hosts_set(c->pub, app_id, label, &s);
}

/* The switch, under pmu: r's row "ready" (finish), the publication's
 * row, the host table.  The previous release's id in old. */
static int
switch_to(struct core *c, struct release *r, bool finish, struct pub_serve *s,
          char old[ULID_LEN + 1], struct err *e)
{
	struct publication pb;

	if (store_publication_get(c->store, r->app_id, &pb) != 0)
		return err_set(e, 409, "not_published",
		               "the app has no publication (it is being "
		               "deleted)");
	snprintf(old, ULID_LEN + 1, "%s", pb.release_id);
	s->private_gate = strcmp(pb.visibility, "private") == 0;
	if (finish && store_release_finish(c->store, r) != 0)
		return ERR_INTERNAL(e, "the release's row cannot be written");
	snprintf(pb.release_id, sizeof(pb.release_id), "%s", r->id);
	pb.updated_at = clock_now();
	if (pb.published_at == 0)
		pb.published_at = pb.updated_at;
	if (store_publication_put(c->store, &pb) != 0)
		return ERR_INTERNAL(e, "the publication cannot be written");
	pub_hosts_set(c->pub, pb.app_id, pb.label, s);
	return 0;
}

int
pub_activate(struct core *c, struct release *r, bool finish, struct err *e)
{
	char old[ULID_LEN + 1] = "";
	struct publication pb = {.visibility = "public"};
	struct sockaddr_in addr;
	struct release prev;
	struct pub_serve s;
	bool server = strcmp(r->kind, "server") == 0;
	int rc;

	/* The slow part first, no lock held: a server started and
	 * answering, a static release's files in memory. */
	if (server && publish_runner_start(c, r, &addr, e) < 0)
		return -1;
	if (serve_of(c, &pb, r, &s, e) < 0) {
		if (server)
			publish_runner_stop(c, r->id);
		return -1;
	}
	pthread_mutex_lock(&c->pub->pmu);
	rc = switch_to(c, r, finish, &s, old, e);
	pthread_mutex_unlock(&c->pub->pmu);
	if (rc < 0) {
		if (s.site != NULL)
			site_unref(s.site);
		if (server && strcmp(old, r->id) != 0)
			publish_runner_stop(c, r->id);
		return -1;
	}
	if (old[0] && strcmp(old, r->id) != 0 &&
	    store_release_get(c->store, NULL, old, &prev) == 0 &&
	    strcmp(prev.kind, "server") == 0)
		publish_runner_stop(c, old);
	return 0;
}

/* --- keep N ------------------------------------------------------------ */

struct prune {
	struct core *c;
	const char *active;
	int64_t kept;
};

static int
prune_one(const struct release *r, void *arg)
{
	struct prune *p = arg;

	if (strcmp(r->status, "building") == 0 ||
	    strcmp(r->id, p->active) == 0 ||
	    p->kept++ < p->c->cfg->publish_keep)
		return 0;
	/* The row first: a crash before the files go leaves a directory
	 * no row names, which the next start removes. */
	if (store_release_delete(p->c->store, r->id) == 0)
		copytree_remove(r->path);
	return 0;
}

static void
prune(struct core *c, const char *app_id, const char *active)
{
	struct prune p = {.c = c, .active = active, .kept = active[0] ? 1 : 0};

	store_release_list(c->store, app_id, prune_one, &p);
}

static void
prune_failed(struct core *c, const char *app_id)
{
	struct publication pb;

	if (store_publication_get(c->store, app_id, &pb) != 0)
		pb.release_id[0] = '\0';
	prune(c, app_id, pb.release_id);
}

/* --- the build's thread ---------------------------------------------- */

int
pub_dir_err(int err, const char *what, struct err *e)
{
	if (err == ENOSPC || err == EDQUOT)
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full (%s)", what);
	return ERR_BAD(e, "%s: %s", what, strerror(err));
}

/*
 * The static output: plan->output of the built app copied (no link
 * followed, owned by root, at most the static limit) to <dir>/site.
 */
static int
collect_static(struct core *c, const struct pub_plan *plan, const char *dir,
               struct err *e)
{
	char work[PATH_MAX], out[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	char parent[MANIFEST_OUTPUT_LEN + 1];
	const char *name, *slash = strrchr(plan->output, '/');
	struct copytree_opts o = {.uid = 0, .gid = 0};
	struct copytree_stats st;
	int pfd = -1, ofd = -1, rc, err;

	o.max_own_bytes = c->cfg->publish_static_max_mb << 20;
	o.max_entries = PUB_STATIC_FILES;
	snprintf(work, sizeof(work), "%s/work/workspace", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	if (strcmp(plan->output, ".") == 0) {
		snprintf(parent, sizeof(parent), "app");
		name = "app";
		pfd =
		    open(work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} else {
		snprintf(parent, sizeof(parent), "app/%.*s",
		         slash ? (int)(slash - plan->output) : 0, plan->output);
		name = slash ? slash + 1 : plan->output;
		pfd =
		    open(work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd >= 0) {
			int sub =
			    wsfs_openat(pfd, parent, O_RDONLY | O_DIRECTORY, 0);

			close(pfd);
			pfd = sub;
		}
	}
	if (pfd < 0 || !wsfs_exists(pfd, name)) {
		if (pfd >= 0)
			close(pfd);
		return ERR_BAD(e,
		               "the build made no %s directory (publish."
		               "output)",
		               plan->output);
	}
	if (mkdir(out, 0700) < 0 ||
	    (ofd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -1;
	else
		rc = copytree_at(pfd, name, ofd, &o, &st);
	err = errno;
	close(pfd);
	if (ofd >= 0)
		close(ofd);
	if (rc < 0 && err == ENOTDIR)
		return ERR_BAD(e, "publish.output %s is not a directory",
		               plan->output);
	if (rc < 0 && err == EFBIG)
		return ERR_BAD(e,
		               "the output is larger than %lld MB or %d "
		               "files (SANDBOXD_PUBLISH_STATIC_MAX_MB)",
		               (long long)c->cfg->publish_static_max_mb,
		               PUB_STATIC_FILES);
	if (rc < 0)
		return pub_dir_err(err, "the output's copy", e);
	snprintf(from, sizeof(from), "%s/%s", out, name);
	snprintf(to, sizeof(to), "%s/site", dir);
	if (rename(from, to) < 0 || rmdir(out) < 0)
		return pub_dir_err(errno, "the output's copy", e);
	return 0;
}

/* The server app: the built app directory is the release's app/. */
static int
collect_server(const char *dir, struct err *e)
{
	char from[PATH_MAX], to[PATH_MAX];

	snprintf(from, sizeof(from), "%s/work/workspace/app", dir);
	snprintf(to, sizeof(to), "%s/app", dir);
	if (rename(from, to) < 0)
		return pub_dir_err(errno, "the built app", e);
	return 0;
}

/* The plan of the copied app, and whether its install must run. */
static int
job_plan(struct pub_job *j, struct pub_plan *plan, bool *install, struct err *e)
{
	char dir[PATH_MAX], have[65];
	int fd;

	snprintf(dir, sizeof(dir), "%s/work/workspace", j->r.path);
	fd = wsfs_open_dir(dir, "app", e);
	if (fd < 0)
		return -1;
	if (pub_plan(j->c, fd, j->preset, plan, e) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	/* The copy's dependencies are the sandbox's: current when its
	 * install key is the plan's (a commit or a snapshot may differ). */
	pub_installed_key(j->c, j->sandbox_id, have);
	*install = plan->install[0] && (strcmp(j->r.source, "files") != 0 ||
	                                plan->install_key[0] == '\0' ||
	                                strcmp(plan->install_key, have) != 0);
	return 0;
}

/*
 * A sandbox's first boot copies its preset's template into the app
 * while the sandbox already runs: its files are whole once the
 * supervisor's marker is there.
 */
static int
wait_seeded(struct pub_job *j, struct pub_log *log, struct err *e)
{
	int64_t until = clock_mono_ms() + PUB_SEED_WAIT_S * 1000LL;
	bool said = false;

	while (!pub_seeded(j->c, j->sandbox_id)) {
		if (atomic_load(&j->cancel))
			return ERR_BAD(e,
			               "the daemon stopped during the build");
		if (clock_mono_ms() > until)
			return ERR_CONFLICT(e,
			                    "the sandbox's first boot did "
			                    "not make the app's files within "
			                    "%d s",
			                    PUB_SEED_WAIT_S);
		if (!said)
			pub_log_printf(log, "== sandboxd: waiting for the "
			                    "sandbox's first boot to make the "
			                    "app's files\n");
		said = true;
		usleep(250 * 1000);
	}
	return 0;
}

/* The release's kind and how it runs, from the plan. */
static void
release_fill(struct release *r, const struct pub_plan *plan)
{
	bool server = plan->output[0] == '\0';

	snprintf(r->kind, sizeof(r->kind), "%s", server ? "server" : "static");
	snprintf(r->recipe, sizeof(r->recipe), "%s", plan->recipe);
	snprintf(r->command, sizeof(r->command), "%s",
	         server ? plan->command : "");
	r->port = server ? plan->port : 0;
	snprintf(r->health, sizeof(r->health), "%s",
	         server ? plan->health : "");
	r->spa = !server && plan->spa;
}

/* Source, plan, build, output: 0 with r filled, or -1 with e. */
static int
job_build(struct pub_job *j, struct pub_log *log, struct pub_plan *plan,
          struct err *e)
{
	struct pub_build b = {.r = &j->r,
	                      .plan = plan,
	                      .dir = j->r.path,
	                      .cancel = &j->cancel,
	                      .log = log};
	char why[256], dir[PATH_MAX];
	int rc;

	pub_log_printf(log,
	               "== sandboxd: release %lld of the app, from %s%s%s\n",
	               (long long)j->r.number, j->r.source,
	               j->r.source_ref[0] ? " " : "", j->r.source_ref);
	if (strcmp(j->r.source, "snapshot") != 0 && wait_seeded(j, log, e) < 0)
		return -1;
	if (pub_source_copy(j->c, &j->r, j->sandbox_id, j->r.path, e) < 0 ||
	    job_plan(j, plan, &b.install, e) < 0)
		return -1;
	release_fill(&j->r, plan);
	pub_log_printf(log, "== sandboxd: a %s release (%s)%s\n", j->r.kind,
	               plan->recipe,
	               plan->install[0] && !b.install
	                   ? "; the dependencies are current: no install"
	                   : "");
	if (pub_build_run(j->c, &b, e) < 0)
		return -1;
	snprintf(j->r.commit, sizeof(j->r.commit), "%s", b.commit);
	if (strcmp(j->r.kind, "server") == 0)
		return collect_server(j->r.path, e);
	rc = collect_static(j->c, plan, j->r.path, e);
	if (rc == 0) {
		snprintf(dir, sizeof(dir), "%s/site", j->r.path);
		pub_log_printf(log, "== sandboxd: compressing the files\n");
		if (site_precompress(dir, why, sizeof(why)) < 0)
			rc = ERR_BAD(e, "the output's compression: %s", why);
	}
	return rc;
}

static _Thread_local int64_t counted;

static int
count_file(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)st;
	(void)f;
	if (flag == FTW_F || flag == FTW_SL)
		counted++;
	return counted > COPYTREE_MAX_FILES;
}

/* The release's figures on disk (its work directory gone). */
static void
measure(struct release *r)
{
	char sub[PATH_MAX];
	bool partial;

	r->size_bytes = ws_usage_walk(r->path, &partial);
	if (r->size_bytes < 0)
		r->size_bytes = 0;
	snprintf(sub, sizeof(sub), "%s/%s", r->path,
	         strcmp(r->kind, "server") == 0 ? "app" : "site");
	counted = 0;
	nftw(sub, count_file, 16, FTW_PHYS | FTW_MOUNT);
	r->files = counted;
}

/* The release failed: why, with the log's tail; its files but the log
 * removed. */
static void
job_failed(struct pub_job *j, struct pub_log *log, const struct err *e)
{
	struct core *c = j->c;
	char tail[PUB_TAIL_ERROR + 1], path[PATH_MAX];

	pub_log_printf(log, "== sandboxd: the release failed: %s\n", e->msg);
	pub_log_tail(log, tail, sizeof(tail));
	snprintf(j->r.status, sizeof(j->r.status), "failed");
	snprintf(j->r.error, sizeof(j->r.error), "%.*s", 120, e->msg);
	if (tail[0] && strstr(tail, e->msg) != tail) {
		size_t n = strlen(j->r.error);

		snprintf(j->r.error + n, sizeof(j->r.error) - n, "\n…%s", tail);
	}
	/* Cut on a whole character: the error goes into JSON. */
	j->r.error[utf8_clip(j->r.error, strlen(j->r.error),
	                     sizeof(j->r.error) - 1)] = '\0';
	j->r.finished_at = clock_now();
	if (store_release_finish(c->store, &j->r) != 0)
		log_error("publish: release %s: the row cannot be written",
		          j->r.id);
	for (int i = 0; i < 3; i++) {
		static const char *const sub[] = {"site", "app", "out"};

		snprintf(path, sizeof(path), "%s/%s", j->r.path, sub[i]);
		copytree_remove(path);
	}
	/* Failed releases count in keep N too (never the active one). */
	prune_failed(c, j->r.app_id);
	pub_note(c, &j->r, "publish.failed", "Release %lld failed: %s",
	         (long long)j->r.number, e->msg);
}

static int
job_succeeded(struct pub_job *j, struct pub_log *log, struct err *e)
{
	struct core *c = j->c;

	measure(&j->r);
	snprintf(j->r.status, sizeof(j->r.status), "ready");
	j->r.finished_at = clock_now();
	if (pub_activate(c, &j->r, true, e) < 0)
		return -1;
	pub_log_printf(log,
	               "== sandboxd: release %lld is live (%lld files, %lld "
	               "bytes, %lld ms)\n",
	               (long long)j->r.number, (long long)j->r.files,
	               (long long)j->r.size_bytes, (long long)j->r.build_ms);
	prune(c, j->r.app_id, j->r.id);
	pub_note(c, &j->r, "publish.succeeded", "Release %lld is live",
	         (long long)j->r.number);
	return 0;
}

static void *
job_main(void *arg)
{
	struct pub_job *j = arg;
	struct pub_plan *plan = calloc(1, sizeof(*plan));
	struct pub_log *log = pub_log_open(j->r.path);
	struct err e = {0};
	char work[PATH_MAX];
	int64_t t0 = clock_mono_ms();
	int rc;

	tl_set_actor(j->r.created_by);
	if (plan == NULL || log == NULL)
		rc = ERR_INTERNAL(&e, "out of memory, or the log cannot be "
		                      "made");
	else
		rc = job_build(j, log, plan, &e);
	j->r.build_ms = clock_mono_ms() - t0;
	snprintf(work, sizeof(work), "%s/work", j->r.path);
	copytree_remove(work);
	if (rc == 0 && atomic_load(&j->cancel))
		rc = ERR_BAD(&e, "the daemon stopped during the build");
	if (rc == 0)
		rc = job_succeeded(j, log, &e);
	if (rc < 0)
		job_failed(j, log, &e);
	pub_log_close(log);
	free(plan);
	atomic_store(&j->done, true);
	return NULL;
}

/* Joins and frees the builds that ended (all of them when wait). */
static void
jobs_reap(struct publish *p, bool wait)
{
	struct pub_job **pp, *done = NULL, *j;

	pthread_mutex_lock(&p->jmu);
	for (pp = &p->jobs; (j = *pp) != NULL;) {
		if (wait || atomic_load(&j->done)) {
			*pp = j->next;
			j->next = done;
			done = j;
		} else {
			pp = &j->next;
		}
	}
	pthread_mutex_unlock(&p->jmu);
	while ((j = done) != NULL) {
		done = j->next;
		pthread_join(j->th, NULL);
		free(j);
	}
}

/* Asks the builds of app_id (NULL: every app's) to stop. */
void
pub_jobs_cancel(struct publish *p, const char *app_id, bool join)
{
	pthread_mutex_lock(&p->jmu);
	for (struct pub_job *j = p->jobs; j != NULL; j = j->next)
		if (app_id == NULL || strcmp(j->r.app_id, app_id) == 0)
			atomic_store(&j->cancel, true);
	pthread_mutex_unlock(&p->jmu);
	if (!join)
		return;
	for (;;) {
		bool busy = false;

		pthread_mutex_lock(&p->jmu);
		for (struct pub_job *j = p->jobs; j != NULL; j = j->next)
			if ((app_id == NULL ||
			     strcmp(j->r.app_id, app_id) == 0) &&
			    !atomic_load(&j->done))
				busy = true;
		pthread_mutex_unlock(&p->jmu);
		if (!busy)
			break;
		usleep(50 * 1000);
	}
	jobs_reap(p, app_id == NULL);
}

int
pub_job_start(struct core *c, const struct app *app, const struct release *r,
              struct err *e)
{
	struct pub_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return ERR_INTERNAL(e, "out of memory");
	j->c = c;
	j->r = *r;
	snprintf(j->sandbox_id, sizeof(j->sandbox_id), "%s",
	         app->current_sandbox_id);
	snprintf(j->preset, sizeof(j->preset), "%s", app->runtime_preset);
	pthread_mutex_lock(&c->pub->jmu);
	if (pthread_create(&j->th, NULL, job_main, j) != 0) {
		pthread_mutex_unlock(&c->pub->jmu);
		free(j);
		return ERR_INTERNAL(e, "cannot start the build's thread");
	}
	j->next = c->pub->jobs;
	c->pub->jobs = j;
	pthread_mutex_unlock(&c->pub->jmu);
	return 0;
}

void
pub_jobs_reap(struct publish *p)
{
	jobs_reap(p, false);
}
