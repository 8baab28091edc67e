/*
 * Unit tests of the publishing rows (migration 17) on a real database:
 * release numbers per app, one build at a time per app, the finish
 * writing every figure, tenancy of a release, the publication's label
 * unique across apps (a conflict, never a takeover), and custom domains
 * unique across apps.
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
release_of(struct release *r, const char *app, int i)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "01J00000000000000000REL%03d", i);
	snprintf(r->owner, sizeof(r->owner), "t1");
	snprintf(r->app_id, sizeof(r->app_id), "%s", app);
	snprintf(r->source, sizeof(r->source), "files");
	snprintf(r->path, sizeof(r->path), "/d/releases/%s/%s", app, r->id);
	snprintf(r->created_by, sizeof(r->created_by), "admin");
	r->created_at = 100 + i;
}

static int
count_rel(const struct release *r, void *arg)
{
	int *n = arg;

	/* Newest first: numbers come down. */
	if (n[1] != 0 && r->number >= n[1])
		n[0] = -1000;
	n[1] = (int)r->number;
	n[0]++;
	return 0;
}

static int
count_any(const struct release *r, void *arg)
{
	(void)r;
	(*(int *)arg)++;
	return 0;
}

static void
release_rows(void)
{
	struct store *s = store_fixture_open();
	struct release r, r2, got;
	int n[2] = {0, 0};

	release_of(&r, APP1, 1);
	CHECK(store_release_insert(s, &r) == 0);
	CHECK(r.number == 1);
	CHECK_STR(r.status, "building");
	release_of(&r2, APP1, 2);
	CHECK(store_release_insert(s, &r2) == STORE_CONFLICT);
	/* Another app builds at the same time, numbered on its own. */
	release_of(&r2, APP2, 3);
	CHECK(store_release_insert(s, &r2) == 0 && r2.number == 1);

	snprintf(r.status, sizeof(r.status), "ready");
	snprintf(r.kind, sizeof(r.kind), "static");
	snprintf(r.commit, sizeof(r.commit), "abc123");
	snprintf(r.recipe, sizeof(r.recipe), "react-vite");
	r.spa = true;
	r.size_bytes = 4096;
	r.files = 3;
	r.build_ms = 1500;
	r.finished_at = 200;
	CHECK(store_release_finish(s, &r) == 0);
	CHECK(store_release_get(s, "t1", r.id, &got) == 0);
	CHECK_STR(got.status, "ready");
	CHECK_STR(got.kind, "static");
	CHECK_STR(got.commit, "abc123");
	CHECK(got.spa && got.size_bytes == 4096 && got.files == 3 &&
	      got.build_ms == 1500 && got.finished_at == 200);
	CHECK(store_release_get(s, "t2", r.id, &got) == STORE_NOT_FOUND);
	CHECK(store_release_get(s, NULL, r.id, &got) == 0);

	/* The build is over: the next one may start, numbered 2. */
	release_of(&r2, APP1, 4);
	CHECK(store_release_insert(s, &r2) == 0 && r2.number == 2);
	CHECK(store_release_list(s, APP1, count_rel, n) == 0 && n[0] == 2);
	/* Both apps' builds, whatever their numbers. */
	n[0] = 0;
	CHECK(store_release_building(s, count_any, n) == 0 && n[0] == 2);
	CHECK(store_release_delete(s, r2.id) == 0);
	CHECK(store_release_delete(s, r2.id) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static int
count_pub(const struct publication *p, void *arg)
{
	(void)p;
	(*(int *)arg)++;
	return 0;
}

static void
publication_rows(void)
{
	struct store *s = store_fixture_open();
	struct publication p = {0}, q = {0}, got;
	int n = 0;

	snprintf(p.app_id, sizeof(p.app_id), APP1);
	snprintf(p.owner, sizeof(p.owner), "t1");
	snprintf(p.label, sizeof(p.label), "shop");
	snprintf(p.release_id, sizeof(p.release_id),
	         "01J00000000000000000REL001");
	p.published_at = p.updated_at = 10;
	CHECK(store_publication_put(s, &p) == 0);
	CHECK(store_publication_get(s, APP1, &got) == 0);
	CHECK_STR(got.label, "shop");
	CHECK_STR(got.visibility, "public");
	CHECK_STR(got.release_id, p.release_id);

	/* Another tenant's app asks for the same label: refused, and the
	 * first app keeps it. */
	snprintf(q.app_id, sizeof(q.app_id), APP2);
	snprintf(q.owner, sizeof(q.owner), "t2");
	snprintf(q.label, sizeof(q.label), "shop");
	CHECK(store_publication_put(s, &q) == STORE_CONFLICT);
	CHECK(store_publication_by_label(s, "shop", &got) == 0);
	CHECK_STR(got.app_id, APP1);
	snprintf(q.label, sizeof(q.label), "blog");
	CHECK(store_publication_put(s, &q) == 0);

	/* An update: unpublished, private, same label. */
	p.release_id[0] = '\0';
	snprintf(p.visibility, sizeof(p.visibility), "private");
	p.updated_at = 20;
	CHECK(store_publication_put(s, &p) == 0);
	CHECK(store_publication_get(s, APP1, &got) == 0);
	CHECK_STR(got.release_id, "");
	CHECK_STR(got.visibility, "private");
	CHECK(got.published_at == 10 && got.updated_at == 20);
	CHECK(store_publication_each(s, count_pub, &n) == 0 && n == 2);
	CHECK(store_publication_delete(s, APP1) == 0);
	CHECK(store_publication_by_label(s, "shop", &got) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static int
count_dom(const struct domain *d, void *arg)
{
	(void)d;
	(*(int *)arg)++;
	return 0;
}

static void
domain_rows(void)
{
	struct store *s = store_fixture_open();
	struct domain d = {0}, got;
	int n = 0;

	snprintf(d.host, sizeof(d.host), "www.example.test");
	snprintf(d.owner, sizeof(d.owner), "t1");
	snprintf(d.app_id, sizeof(d.app_id), APP1);
	snprintf(d.token, sizeof(d.token), "tok");
	d.created_at = 5;
	CHECK(store_domain_insert(s, &d) == 0);
	CHECK(store_domain_get(s, d.host, &got) == 0);
	CHECK_STR(got.status, "pending");
	CHECK_STR(got.token, "tok");
	/* The same name for another app (any tenant): a conflict. */
	snprintf(d.app_id, sizeof(d.app_id), APP2);
	snprintf(d.owner, sizeof(d.owner), "t2");
	CHECK(store_domain_insert(s, &d) == STORE_CONFLICT);

	snprintf(d.status, sizeof(d.status), "verified");
	snprintf(d.method, sizeof(d.method), "dns");
	d.checked_at = d.verified_at = 9;
	CHECK(store_domain_update(s, &d) == 0);
	CHECK(store_domain_get(s, d.host, &got) == 0);
	CHECK_STR(got.status, "verified");
	CHECK_STR(got.method, "dns");
	CHECK_STR(got.app_id, APP1);
	CHECK(got.verified_at == 9);
	snprintf(d.status, sizeof(d.status), "bogus");
	CHECK(store_domain_update(s, &d) != 0);
	CHECK(store_domain_list(s, APP1, count_dom, &n) == 0 && n == 1);
	n = 0;
	CHECK(store_domain_list(s, APP2, count_dom, &n) == 0 && n == 0);
	CHECK(store_domain_list(s, NULL, count_dom, &n) == 0 && n == 1);
	CHECK(store_domain_delete(s, d.host) == 0);
	CHECK(store_domain_get(s, d.host, &got) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"release rows: numbers per app, one build at a time, finish, tenancy",
     release_rows},
    {"publication rows: a label is one app's, updates keep it",
     publication_rows},
    {"domain rows: a host is one app's, verification is written", domain_rows},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("publish_store", tests);
}
