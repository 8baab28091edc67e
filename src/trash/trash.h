/*
 * trash: deletes that can be undone.  DELETE /v1/apps/{id} moves the app
 * to the trash when SANDBOXD_TRASH_RETENTION_SECONDS is not 0: its
 * container goes (memory and CPU freed), its preview route and its place
 * in the app list go, its workspace is renamed to <data>/trash/kept/<id>
 * and its rows (app, config, git settings, credential references, tasks)
 * stay, marked.  A restore brings all of it back with a new container;
 * a purge, or the trash pass after the retention, removes it for good.
 *
 * Callers: the API's request threads (trash_app, trash_restore,
 * trash_purge), serve() before the engine is reconciled (trash_recover)
 * and the trash pass (trash_pass, a periodic job of serve()).  Every function
 * takes the sandbox's lock for the steps on its sandbox.
 */
#ifndef TRASH_TRASH_H
#define TRASH_TRASH_H

#include "sandbox/core.h"

/*
 * Deletes the app: into the trash (*trash_id gets the entry's id) or, with
 * a retention of 0, for good (*trash_id "").
 */
int trash_app(struct core *c, const struct app *app,
              char trash_id[ULID_LEN + 1], struct err *e);
/*
 * Deletes the sandbox alone (DELETE /v1/sandboxes/{id}), the same way:
 * its app stays; a restore gives the app this sandbox back while it has
 * no other (409 conflict otherwise).
 */
int trash_sandbox(struct core *c, const char *sandbox_id,
                  char trash_id[ULID_LEN + 1], struct err *e);
/*
 * Restores the entry (owner's; NULL any) under its name, or name when
 * not NULL; fills app and, when it had one, sb (*has_sb), whose
 * container is started (a start that fails leaves it "stopped" and sets
 * start_err).  409 trash_name_taken when a live app has the name.
 */
int trash_restore(struct core *c, const char *owner, const char *id,
                  const char *name, struct app *app, struct sandbox *sb,
                  bool *has_sb, struct err *start_err, struct err *e);
/* Removes the entry for good now. */
int trash_purge(struct core *c, const char *owner, const char *id,
                struct err *e);
/*
 * At start, before core_reconcile: finishes the deletes and purges a
 * crash interrupted and rolls interrupted restores back.
 */
void trash_recover(struct core *c);
/*
 * One pass: purges expired entries and measures new ones.  serve()'s
 * periodic jobs run it at start and every
 * SANDBOXD_TRASH_PASS_INTERVAL_SECONDS, on a lane of its own.
 */
void trash_pass(struct core *c);

#endif
