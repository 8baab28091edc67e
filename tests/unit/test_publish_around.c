/*
 * Unit tests of what releases count in (docs/publish.md, "Disk, backups,
 * the trash, the timeline and metrics"): the releases' figures the
 * metrics read, on a real database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_fixture.h"
#include "unit.h"

#define APP1 "01J0000000000000000000APP1"
#define APP2 "01J0000000000000000000APP2"

static void
insert(struct store *s, const char *app, int i, const char *status)
{
	struct release r;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "01J00000000000000000REL%03d", i);
	snprintf(r.owner, sizeof(r.owner), "t1");
	snprintf(r.app_id, sizeof(r.app_id), "%s", app);
	snprintf(r.source, sizeof(r.source), "files");
	r.created_at = 100 + i;
	CHECK(store_release_insert(s, &r) == 0);
	if (strcmp(status, "building") == 0)
		return;
	snprintf(r.status, sizeof(r.status), "%s", status);
	r.finished_at = 200 + i;
	CHECK(store_release_finish(s, &r) == 0);
}

static void
release_stats(void)
{
	struct store *s = store_fixture_open();
	struct release_stats st;
	struct publication p = {0};

	CHECK(store_release_stats(s, &st) == 0);
	CHECK(st.building == 0 && st.ready == 0 && st.failed == 0 &&
	      st.published == 0);
	insert(s, APP1, 1, "ready");
	insert(s, APP1, 2, "failed");
	insert(s, APP1, 3, "ready");
	insert(s, APP1, 4, "building");
	insert(s, APP2, 5, "failed");
	/* APP1 serves release 3; APP2 has a label but nothing serving. */
	snprintf(p.app_id, sizeof(p.app_id), APP1);
	snprintf(p.owner, sizeof(p.owner), "t1");
	snprintf(p.label, sizeof(p.label), "one");
	snprintf(p.release_id, sizeof(p.release_id),
	         "01J00000000000000000REL003");
	snprintf(p.visibility, sizeof(p.visibility), "public");
	CHECK(store_publication_put(s, &p) == 0);
	snprintf(p.app_id, sizeof(p.app_id), APP2);
	snprintf(p.label, sizeof(p.label), "two");
	p.release_id[0] = '\0';
	CHECK(store_publication_put(s, &p) == 0);
	CHECK(store_release_stats(s, &st) == 0);
	CHECK(st.building == 1);
	CHECK(st.ready == 2);
	CHECK(st.failed == 2);
	CHECK(st.published == 1);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"release stats: by status, and the apps serving one", release_stats},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("publish_around", tests);
}
