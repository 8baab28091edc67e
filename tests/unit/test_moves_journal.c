/*
 * The moves' journal resumed after a crash (cluster/moves.c), on a real
 * store: one move left in each state, then cluster_moves_resume with
 * steps that do real work of their own (the re-pin moves the sandbox's
 * row with store_sandbox_set_node; the trash removes a real directory
 * standing for the source's copy).  What each state must come to:
 *
 *   sleeping, copying  failed; the row still on its source; the source
 *                      copy untouched
 *   copied             re-pinned to the target, the source copy gone,
 *                      done
 *   repinned           the source copy gone, done (no second re-pin)
 *   done, failed       untouched
 * and a re-pin that fails leaves the move failed on its source.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/ulid.h"
#include "store_fixture.h"
#include "unit.h"

struct steps {
	struct store *s;
	char dir[128]; /* the sources' copies: <dir>/<sandbox id> */
	int repins, trashes;
	const char *refuse; /* a sandbox whose re-pin fails */
};

static int
repin(void *arg, const struct move_row *m, struct err *e)
{
	struct steps *st = arg;

	st->repins++;
	if (st->refuse && strcmp(st->refuse, m->sandbox_id) == 0)
		return err_set(e, 502, "docker_error", "the engine refused");
	return store_sandbox_set_node(st->s, m->sandbox_id, m->dst) == 0
	           ? 0
	           : ERR_INTERNAL(e, "database error");
}

static int
trash(void *arg, const struct move_row *m, struct err *e)
{
	struct steps *st = arg;
	char path[256];

	st->trashes++;
	snprintf(path, sizeof(path), "%s/%s", st->dir, m->sandbox_id);
	return rmdir(path) == 0 ? 0 : ERR_INTERNAL(e, "%s", strerror(errno));
}

static const struct cluster_move_ops ops = {.repin = repin,
                                            .trash_source = trash};

/* An app, its sandbox on src, its source copy, and a move in state. */
static void
sandbox_on(struct steps *st, const char *src, const char *state,
           struct move_row *m, char id[ULID_LEN + 1])
{
	struct app a = {0};
	struct sandbox sb = {0};
	char path[256];

	ulid_new(a.id);
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "app-%s", state);
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	a.created_at = a.updated_at = clock_now();
	CHECK(store_app_insert(st->s, &a) == 0);
	ulid_new(sb.id);
	snprintf(sb.app_id, sizeof(sb.app_id), "%s", a.id);
	sb.status = SANDBOX_STOPPED;
	snprintf(sb.image, sizeof(sb.image), "img:1");
	snprintf(sb.idle_policy, sizeof(sb.idle_policy), "sleep");
	sb.ports[0] = 3000;
	sb.nports = 1;
	sb.created_at = sb.updated_at = clock_now();
	CHECK(store_sandbox_insert(st->s, &sb) == 0);
	CHECK(store_sandbox_set_node(st->s, sb.id, src) == 0);
	snprintf(path, sizeof(path), "%s/%s", st->dir, sb.id);
	CHECK(mkdir(path, 0700) == 0);
	memset(m, 0, sizeof(*m));
	snprintf(m->sandbox_id, sizeof(m->sandbox_id), "%s", sb.id);
	snprintf(m->src, sizeof(m->src), "%s", src);
	snprintf(m->dst, sizeof(m->dst), "n1");
	snprintf(m->state, sizeof(m->state), "%s", state);
	m->bytes = 4096;
	CHECK(store_move_add(st->s, m) == 0);
	snprintf(id, ULID_LEN + 1, "%s", sb.id);
}

static void
expect(struct steps *st, const char *id, const char *node, bool copy_left)
{
	struct sandbox sb;
	struct stat sbuf;
	char path[256];

	CHECK(store_sandbox_get(st->s, id, &sb) == 0);
	CHECK_STR(sb.node, node);
	snprintf(path, sizeof(path), "%s/%s", st->dir, id);
	CHECK((stat(path, &sbuf) == 0) == copy_left);
}

/* The copies left, then their directory, so the fixture's goes too. */
static void
copies_remove(struct steps *st, char (*id)[ULID_LEN + 1], size_t n)
{
	char path[256];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", st->dir, id[i]);
		rmdir(path);
	}
	rmdir(st->dir);
}

struct finals {
	char state[8][16];
	char sandbox[8][ULID_LEN + 1];
	size_t n;
};

static void
open_one(const struct move_row *m, void *arg)
{
	struct finals *f = arg;

	if (f->n < 8) {
		snprintf(f->state[f->n], 16, "%s", m->state);
		snprintf(f->sandbox[f->n++], ULID_LEN + 1, "%s", m->sandbox_id);
	}
}

static void
resumes_each_state(void)
{
	static const char *const states[] = {"sleeping", "copying", "copied",
	                                     "repinned", "done",    "failed"};
	struct steps st = {.s = store_fixture_open()};
	char id[6][ULID_LEN + 1];
	struct move_row m[6];
	struct finals left = {0};
	int n = -1;

	CHECK(st.s != NULL);
	snprintf(st.dir, sizeof(st.dir), "%s/copies", store_fixture_dir);
	CHECK(mkdir(st.dir, 0700) == 0);
	for (size_t i = 0; i < 6; i++)
		sandbox_on(&st, "n2", states[i], &m[i], id[i]);
	/* A re-pinned move's row names the target already. */
	CHECK(store_sandbox_set_node(st.s, id[3], "n1") == 0);

	CHECK(cluster_moves_resume(st.s, &ops, &st, &n) == 0);
	CHECK(n == 4); /* done and failed are not open */
	CHECK(st.repins == 1);
	CHECK(st.trashes == 2);
	expect(&st, id[0], "n2", true);  /* sleeping: stays, whole */
	expect(&st, id[1], "n2", true);  /* copying: stays, whole */
	expect(&st, id[2], "n1", false); /* copied: re-pinned, finished */
	expect(&st, id[3], "n1", false); /* repinned: finished */
	expect(&st, id[4], "n2", true);  /* done: untouched */
	expect(&st, id[5], "n2", true);  /* failed: untouched */
	CHECK(store_move_open(st.s, open_one, &left) == 0);
	CHECK(left.n == 0);

	/* A second resume finds nothing open and does nothing. */
	CHECK(cluster_moves_resume(st.s, &ops, &st, &n) == 0);
	CHECK(n == 0);
	CHECK(st.repins == 1 && st.trashes == 2);
	copies_remove(&st, id, 6);
	store_fixture_close(st.s);
}

static void
failed_repin_stays_on_source(void)
{
	struct steps st = {.s = store_fixture_open()};
	char id[ULID_LEN + 1];
	struct move_row m;
	struct finals left = {0};
	int n = -1;

	CHECK(st.s != NULL);
	snprintf(st.dir, sizeof(st.dir), "%s/copies", store_fixture_dir);
	CHECK(mkdir(st.dir, 0700) == 0);
	sandbox_on(&st, "", "copied", &m, id);
	st.refuse = id;
	CHECK(cluster_moves_resume(st.s, &ops, &st, &n) == 0);
	CHECK(n == 1);
	CHECK(st.repins == 1 && st.trashes == 0);
	expect(&st, id, "", true);
	CHECK(store_move_open(st.s, open_one, &left) == 0);
	CHECK(left.n == 0); /* failed is final */
	copies_remove(&st, &id, 1);
	store_fixture_close(st.s);
}

static void
resume_table(void)
{
	CHECK(cluster_move_resume_step("sleeping") == CLUSTER_MOVE_ROLLBACK);
	CHECK(cluster_move_resume_step("copying") == CLUSTER_MOVE_ROLLBACK);
	CHECK(cluster_move_resume_step("copied") == CLUSTER_MOVE_REPIN);
	CHECK(cluster_move_resume_step("repinned") == CLUSTER_MOVE_FINISH);
	CHECK(cluster_move_resume_step("done") == CLUSTER_MOVE_NOTHING);
	CHECK(cluster_move_resume_step("failed") == CLUSTER_MOVE_NOTHING);
	/* A state this build does not know: the source is the safe side. */
	CHECK(cluster_move_resume_step("teleported") == CLUSTER_MOVE_ROLLBACK);
}

static const struct unit_test tests[] = {
    {"the resume's table", resume_table},
    {"resumes a move from each state", resumes_each_state},
    {"a re-pin that fails stays on the source", failed_repin_stays_on_source},
};

int
main(void)
{
	return UNIT_RUN("moves journal", tests);
}
