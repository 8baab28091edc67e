/*
 * `sandboxd gc [--yes] [--repo NAME]`: what can go (ops/gc.h says what
 * that is).  Dry run by default (it lists and removes nothing); --yes
 * removes.  This file reads the arguments and prints what gc finds.
 * Exit status: 0, 1 when a removal failed, 2 usage or configuration.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"
#include "ops/gc.h"

static void
print_found(const struct gc_found *f, void *arg)
{
	const bool *yes = arg;

	if (f->kind == GC_RELEASES || f->kind == GC_BUILD) {
		if (f->kind == GC_RELEASES)
			printf("%s releases %s (%lld MiB): their app is gone\n",
			       *yes ? "removing" : "would remove", f->name,
			       (long long)(f->bytes >> 20));
		else
			printf("%s build container %.12s (release %s): left "
			       "over by a build that ended\n",
			       *yes ? "removing" : "would remove", f->name,
			       f->tag);
		if (f->error)
			printf("  not removed: %s\n", f->error);
		return;
	}
	if (f->kind == GC_TRASH) {
		printf("%s trash %s (%lld MiB)\n",
		       *yes ? "removing" : "would remove", f->name,
		       (long long)(f->bytes >> 20));
		return;
	}
	printf("%s image %.19s %s (%lld MiB): %s\n",
	       *yes ? "removing" : "would remove", f->name,
	       f->dangling ? "<dangling>" : f->tag, (long long)(f->bytes >> 20),
	       f->dangling ? "a dangling layer of an old base image"
	                   : "a base image no sandbox uses");
	if (f->error)
		printf("  not removed: %s\n", f->error);
}

static int
gc(const struct config *cfg, bool yes, const char *repo)
{
	struct gc_result r;
	char err[512];
	int done;

	if (gc_run(cfg, yes, repo, print_found, &yes, &r, err, sizeof(err)) <
	    0) {
		if (err[0])
			fprintf(stderr, "sandboxd gc: %s\n", err);
		return 1;
	}
	if (r.kept)
		printf("keeping %d deleted app%s in the trash (%lld MiB): "
		       "purged after SANDBOXD_TRASH_RETENTION_SECONDS "
		       "(%llds), or now with `sandboxd trash purge ID`\n",
		       r.kept, r.kept == 1 ? "" : "s",
		       (long long)(r.kept_bytes >> 20),
		       (long long)cfg->trash_retention_s);
	if (r.store_unreadable)
		fprintf(stderr, "sandboxd gc: cannot read %s/store\n",
		        cfg->data_dir);
	if (r.releases_unreadable)
		fprintf(stderr,
		        "sandboxd gc: cannot read %s/releases or the database: "
		        "no release directory judged\n",
		        cfg->data_dir);
	printf("%s %d release director%s of apps that are gone (%lld MiB) "
	       "and %d build container%s left over\n",
	       yes ? "removed" : "would remove", r.releases,
	       r.releases == 1 ? "y" : "ies",
	       (long long)(r.releases_bytes >> 20), r.builds,
	       r.builds == 1 ? "" : "s");
	if (r.depcache_unreadable)
		fprintf(stderr, "sandboxd gc: cannot read %s/depcache\n",
		        cfg->data_dir);
	printf("%s %d dependency-cache entr%s unused for %lld days (%lld "
	       "KiB)\n",
	       yes ? "removed" : "would remove", r.depcache,
	       r.depcache == 1 ? "y" : "ies",
	       (long long)cfg->depcache_max_age_days,
	       (long long)(r.depcache_bytes >> 10));
	printf("%s %d unused store entr%s (%lld KiB)\n",
	       yes ? "removed" : "would remove", r.store,
	       r.store == 1 ? "y" : "ies", (long long)(r.store_bytes >> 10));
	done = r.images - r.images_failed;
	printf("%s %d image%s (%lld MiB) and %d trash entr%s (%lld MiB)%s\n",
	       yes ? "removed" : "would remove", done, done == 1 ? "" : "s",
	       (long long)(r.image_bytes >> 20), r.trash,
	       r.trash == 1 ? "y" : "ies", (long long)(r.trash_bytes >> 20),
	       yes ? "" : "; run with --yes to remove them");
	return r.images_failed ? 1 : 0;
}

int
cmd_gc(int argc, char **argv)
{
	const char *repo = NULL;
	struct config cfg;
	char err[512];
	bool yes = false;
	int rc;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--yes") == 0) {
			yes = true;
		} else if (strcmp(argv[i], "--repo") == 0 && i + 1 < argc) {
			repo = argv[++i];
		} else {
			fprintf(stderr,
			        "usage: sandboxd gc [--yes] [--repo NAME]\n");
			return 2;
		}
	}
	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	rc = gc(&cfg, yes, repo);
	config_release(&cfg);
	return rc;
}
