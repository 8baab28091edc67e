/*
 * Unit tests of the activity timeline on a real store: ids ordered as
 * recorded (many in one millisecond), the thread's actor, pages by
 * cursor and type prefix, payloads that are not one small object
 * dropped, the app's owner copied, events of an app that is gone never
 * written and deleted with it, pruning by the cap per app, and a
 * follower that replays after a cursor and is woken by a new event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "store/store.h"
#include "store_fixture.h"
#include "timeline/timeline.h"
#include "unit.h"

static void
make_app(struct store *s, struct app *a, const char *owner)
{
	memset(a, 0, sizeof(*a));
	ulid_new(a->id);
	snprintf(a->owner, sizeof(a->owner), "%s", owner);
	snprintf(a->name, sizeof(a->name), "app-%s", owner);
	snprintf(a->tags_json, sizeof(a->tags_json), "[]");
	a->created_at = a->updated_at = clock_now();
	CHECK(store_app_insert(s, a) == 0);
}

static void
record(struct timeline *tl, const char *app_id, const char *type,
       const char *payload)
{
	struct tl_event ev = {
	    .app_id = app_id, .type = type, .payload_json = payload};

	snprintf(ev.message, sizeof(ev.message), "%s happened", type);
	timeline_record(tl, &ev);
}

struct page {
	struct app_event ev[64];
	int n;
};

static int
collect(const struct app_event *ev, void *arg)
{
	struct page *p = arg;

	if (p->n < 64)
		p->ev[p->n++] = *ev;
	return 0;
}

static void
ids_actor_pages(void)
{
	struct store *s = store_fixture_open();
	struct timeline *tl = timeline_new(s);
	struct page p = {0}, q = {0};
	struct app a, b;

	CHECK(tl != NULL);
	make_app(s, &a, "t1");
	make_app(s, &b, "t2");
	tl_set_actor("alice");
	for (int i = 0; i < 30; i++)
		record(tl, a.id, i % 3 ? "sandbox.started" : "task.started",
		       NULL);
	tl_set_actor(NULL);
	record(tl, a.id, "app.config_changed", "{\"names\":[\"A\"]}");
	record(tl, b.id, "app.created", "[1]");
	record(tl, "01JNOSUCHAPP00000000000000", "app.created", NULL);

	CHECK(store_event_list(s, a.id, NULL, NULL, NULL, 100, collect, &p) ==
	      0);
	CHECK(p.n == 31);
	for (int i = 1; i < p.n; i++)
		CHECK(strcmp(p.ev[i - 1].id, p.ev[i].id) > 0);
	CHECK_STR(p.ev[0].type, "app.config_changed");
	CHECK_STR(p.ev[0].actor, "system");
	CHECK_STR(p.ev[0].payload, "{\"names\":[\"A\"]}");
	CHECK_STR(p.ev[0].owner, "t1");
	CHECK_STR(p.ev[1].actor, "alice");
	CHECK_STR(p.ev[1].severity, "info");
	/* The type prefix, and the page below a cursor. */
	CHECK(store_event_list(s, a.id, p.ev[5].id, NULL, "task.", 100, collect,
	                       &q) == 0);
	CHECK(q.n == 9);
	for (int i = 0; i < q.n; i++) {
		CHECK_STR(q.ev[i].type, "task.started");
		CHECK(strcmp(q.ev[i].id, p.ev[5].id) < 0);
	}
	/* Not an object: the payload goes, the event stays. */
	q.n = 0;
	CHECK(store_event_list(s, b.id, NULL, NULL, NULL, 10, collect, &q) ==
	      0);
	CHECK(q.n == 1);
	CHECK_STR(q.ev[0].payload, "");
	CHECK_STR(q.ev[0].owner, "t2");
	timeline_free(tl);
	store_fixture_close(s);
}

static void
prune_and_delete(void)
{
	struct store *s = store_fixture_open();
	struct timeline *tl = timeline_new(s);
	struct page p = {0};
	struct app a, b;

	make_app(s, &a, "t1");
	make_app(s, &b, "t1");
	for (int i = 0; i < 12; i++) {
		record(tl, a.id, "sandbox.started", NULL);
		record(tl, b.id, "sandbox.started", NULL);
	}
	CHECK(timeline_prune(tl, 90, 5) == 14);
	CHECK(store_event_list(s, a.id, NULL, NULL, NULL, 100, collect, &p) ==
	      0);
	CHECK(p.n == 5);
	CHECK(timeline_prune(tl, 90, 5) == 0);
	CHECK(store_app_delete(s, a.id) == 0);
	p.n = 0;
	CHECK(store_event_list(s, a.id, NULL, NULL, NULL, 100, collect, &p) ==
	      0);
	CHECK(p.n == 0);
	p.n = 0;
	CHECK(store_event_list(s, b.id, NULL, NULL, NULL, 100, collect, &p) ==
	      0);
	CHECK(p.n == 5);
	timeline_free(tl);
	store_fixture_close(s);
}

static int suspends, resumes;

static void
on_suspend(void *arg)
{
	(void)arg;
	suspends++;
}

static void
on_resume(void *arg)
{
	(void)arg;
	resumes++;
}

static void
follower(void)
{
	struct store *s = store_fixture_open();
	struct timeline *tl = timeline_new(s);
	struct page p = {0};
	struct tl_sub *sub, *live;
	char buf[65536];
	ssize_t n;
	struct app a;

	make_app(s, &a, "t1");
	for (int i = 0; i < 3; i++)
		record(tl, a.id, "task.started", NULL);
	CHECK(store_event_list(s, a.id, NULL, NULL, NULL, 100, collect, &p) ==
	      0);
	/* After the oldest: the two newer ones, oldest first. */
	CHECK(timeline_sub_open(tl, a.id, p.ev[2].id, NULL, on_suspend,
	                        on_resume, NULL, &sub) == 0);
	CHECK(timeline_sub_open(tl, a.id, NULL, NULL, on_suspend, on_resume,
	                        NULL, &live) == 0);
	n = timeline_sub_read(sub, buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strstr(buf, p.ev[2].id) == NULL);
	CHECK(strstr(buf, p.ev[1].id) != NULL);
	CHECK(strstr(buf, p.ev[0].id) > strstr(buf, p.ev[1].id));
	CHECK(strstr(buf, "event: app_event\nid: ") == buf);
	CHECK(timeline_sub_read(sub, buf, sizeof(buf)) == 0);
	CHECK(timeline_sub_read(live, buf, sizeof(buf)) == 0);
	CHECK(suspends == 2);
	record(tl, a.id, "git.committed", NULL);
	CHECK(resumes == 2);
	n = timeline_sub_read(live, buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strstr(buf, "\"type\":\"git.committed\"") != NULL);
	CHECK(strstr(buf, "task.started") == NULL);
	/* Quiet: a heartbeat, which resumes a suspended follower. */
	CHECK(timeline_sub_read(live, buf, sizeof(buf)) == 0);
	timeline_subs_heartbeat(tl, 0);
	CHECK(resumes == 3);
	n = timeline_sub_read(live, buf, sizeof(buf) - 1);
	CHECK(n == 14 && memcmp(buf, ": keep-alive\n\n", 14) == 0);
	timeline_subs_end_all(tl);
	CHECK(timeline_sub_read(sub, buf, sizeof(buf)) == -1);
	timeline_sub_close(sub);
	timeline_sub_close(live);
	/* One opened after the stop ends at once. */
	CHECK(timeline_sub_open(tl, a.id, NULL, NULL, on_suspend, on_resume,
	                        NULL, &sub) == 0);
	CHECK(timeline_sub_read(sub, buf, sizeof(buf)) == -1);
	timeline_sub_close(sub);
	timeline_free(tl);
	store_fixture_close(s);
}

/* Publishing's events take their severity from their type, and the
 * type prefixes the console filters by find them. */
static void
publish_severities(void)
{
	struct store *s = store_fixture_open();
	struct timeline *tl = timeline_new(s);
	struct tl_event ev = {0};
	struct page p = {0};
	struct app a;

	make_app(s, &a, "t1");
	ev.app_id = a.id;
	ev.type = "publish.started";
	timeline_note(tl, &ev, "Release %d is building.", 2);
	ev.type = "publish.failed";
	timeline_note(tl, &ev, "Release %d failed.", 2);
	ev.type = "release.rolled_back";
	timeline_note(tl, &ev, "Release %d serves again.", 1);
	ev.type = "domain.verified";
	timeline_note(tl, &ev, "www.example.com points here.");
	CHECK(store_event_list(s, a.id, NULL, NULL, NULL, 10, collect, &p) ==
	      0);
	CHECK(p.n == 4);
	/* Newest first. */
	CHECK_STR(p.ev[0].type, "domain.verified");
	CHECK_STR(p.ev[0].severity, "info");
	CHECK_STR(p.ev[1].severity, "info");
	CHECK_STR(p.ev[2].type, "publish.failed");
	CHECK_STR(p.ev[2].severity, "error");
	CHECK_STR(p.ev[2].message, "Release 2 failed.");
	CHECK_STR(p.ev[3].severity, "info");
	p.n = 0;
	CHECK(store_event_list(s, a.id, NULL, NULL, "publish.", 10, collect,
	                       &p) == 0);
	CHECK(p.n == 2);
	timeline_free(tl);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"ids, actor, pages and payloads", ids_actor_pages},
    {"publishing's events: severities and prefixes", publish_severities},
    {"prune by the cap, delete with the app", prune_and_delete},
    {"a follower replays, is woken, beats and ends", follower},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("timeline", tests);
}
