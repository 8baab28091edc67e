/*
 * Unit tests of publish/'s pure and in-memory parts: host names as the
 * edge gives them, the host table (labels, a label's move, an
 * unpublished app, request counts), and the build log's bounds (its
 * head kept as written, the tail appended past the cap, a printable
 * tail for a release's error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/utf8.h"
#include "publish/internal.h"
#include "unit.h"

#define APP1 "01J0000000000000000000APP1"
#define APP2 "01J0000000000000000000APP2"
#define REL1 "01J000000000000000000REL01"

static void
host_names_normalize(void)
{
	char out[64];

	CHECK(pub_host_norm("Shop.Apps.Example.COM:8080", 26, out,
	                    sizeof(out)) == 0);
	CHECK_STR(out, "shop.apps.example.com");
	CHECK(pub_host_norm("shop.apps.example.com.", 22, out, sizeof(out)) ==
	      0);
	CHECK_STR(out, "shop.apps.example.com");
	CHECK(pub_host_norm("", 0, out, sizeof(out)) < 0);
	CHECK(pub_host_norm(":80", 3, out, sizeof(out)) < 0);
	CHECK(pub_host_norm("[::1]:80", 8, out, sizeof(out)) < 0);
	CHECK(pub_host_norm("a b", 3, out, sizeof(out)) < 0);
	CHECK(pub_host_norm("a\x01", 2, out, sizeof(out)) < 0);
	CHECK(pub_host_norm("averyveryverylonghostnamethatdoesnotfit.example."
	                    "com.example.com",
	                    63, out, 16) < 0);
}

static struct core *
core_of(struct config *cfg, char *dir)
{
	struct core *c = calloc(1, sizeof(*c));

	snprintf(dir, 64, "/tmp/sandboxd-unit-pub-XXXXXX");
	if (c == NULL || mkdtemp(dir) == NULL)
		return NULL;
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->data_dir, sizeof(cfg->data_dir), "%s", dir);
	snprintf(cfg->preview_domain, sizeof(cfg->preview_domain),
	         "Example.com");
	c->cfg = cfg;
	return publish_init(c) == 0 ? c : NULL;
}

static void
core_done(struct core *c, const char *dir)
{
	char p[128];

	publish_stop(c);
	snprintf(p, sizeof(p), "%s/%s", dir, PUBLISH_DIR);
	rmdir(p);
	rmdir(dir);
	free(c);
}

static enum publish_kind
route(struct core *c, const char *host, struct publish_target *t)
{
	publish_route(c, host, strlen(host), t);
	return t->kind;
}

static void
host_table_routes_labels(void)
{
	struct config cfg;
	char dir[64], host[128];
	struct core *c = core_of(&cfg, dir);
	struct pub_serve s = {.kind = PUBLISH_DOWN, .retry_after_s = 7};
	struct publish_stat st[4];
	struct publish_target t;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	/* The default domain: apps.<PREVIEW_DOMAIN>, lower case. */
	publish_app_host(c, "shop", host, sizeof(host));
	CHECK_STR(host, "shop.apps.example.com");
	CHECK(route(c, "shop.apps.example.com", &t) == PUBLISH_NONE);

	snprintf(s.release_id, sizeof(s.release_id), REL1);
	snprintf(s.message, sizeof(s.message), "starting");
	CHECK(pub_hosts_set(c->pub, APP1, "shop", &s) == 0);
	CHECK(route(c, "SHOP.apps.example.com:8480", &t) == PUBLISH_DOWN);
	CHECK_STR(t.app_id, APP1);
	CHECK_STR(t.release_id, REL1);
	CHECK_STR(t.message, "starting");
	CHECK(t.retry_after_s == 7);
	/* Not a label: no custom domain is linked here. */
	CHECK(route(c, "shop.example.com", &t) == PUBLISH_NONE);
	CHECK(route(c, "apps.example.com", &t) == PUBLISH_NONE);
	CHECK(route(c, "x.shop.apps.example.com", &t) == PUBLISH_NONE);

	/* The label moves: the old host is nobody's. */
	CHECK(pub_hosts_set(c->pub, APP1, "store", &s) == 0);
	CHECK(route(c, "shop.apps.example.com", &t) == PUBLISH_NONE);
	CHECK(route(c, "store.apps.example.com", &t) == PUBLISH_DOWN);
	/* "" keeps the label. */
	CHECK(pub_hosts_set(c->pub, APP1, "", &s) == 0);
	CHECK(route(c, "store.apps.example.com", &t) == PUBLISH_DOWN);

	/* Unpublished: NONE, the label kept for the next publish. */
	s.kind = PUBLISH_NONE;
	CHECK(pub_hosts_set(c->pub, APP1, "store", &s) == 0);
	CHECK(route(c, "store.apps.example.com", &t) == PUBLISH_NONE);
	CHECK(pub_hosts_get(c->pub, APP1, &s) && s.kind == PUBLISH_NONE);

	s.kind = PUBLISH_DOWN;
	CHECK(pub_hosts_set(c->pub, APP2, "blog", &s) == 0);
	CHECK(route(c, "blog.apps.example.com", &t) == PUBLISH_DOWN);
	CHECK(route(c, "blog.apps.example.com", &t) == PUBLISH_DOWN);
	CHECK(publish_stats(c, st, 4) == 2);
	for (int i = 0; i < 2; i++)
		if (strcmp(st[i].app_id, APP2) == 0)
			CHECK(st[i].requests == 2 &&
			      strcmp(st[i].label, "blog") == 0);
	pub_hosts_drop(c->pub, APP2);
	CHECK(route(c, "blog.apps.example.com", &t) == PUBLISH_NONE);
	CHECK(!pub_hosts_get(c->pub, APP2, &s));
	core_done(c, dir);
}

static void
build_log_is_bounded(void)
{
	char dir[64] = "/tmp/sandboxd-unit-log-XXXXXX", path[128], tail[64];
	char *chunk = malloc(1u << 20);
	struct pub_log *l;
	struct stat st;
	FILE *f;

	CHECK(chunk != NULL && mkdtemp(dir) != NULL);
	if (chunk == NULL)
		return;
	l = pub_log_open(dir);
	CHECK(l != NULL);
	if (l == NULL)
		return;
	memset(chunk, 'a', 1u << 20);
	for (int i = 0; i < 9; i++) /* 9 MiB: 1 MiB past the head */
		pub_log_write(l, chunk, 1u << 20);
	pub_log_printf(l, "last line \x1b[31mred\x01\n");
	pub_log_tail(l, tail, sizeof(tail));
	/* Printable: control bytes as '?', the line's end dropped. */
	CHECK(strstr(tail, "last line ?[31mred?") != NULL);
	CHECK(strchr(tail, '\x1b') == NULL);
	pub_log_close(l);
	snprintf(path, sizeof(path), "%s/build.log", dir);
	CHECK(stat(path, &st) == 0);
	/* The head, a line saying what was left out, the last 64 KiB. */
	CHECK(st.st_size > PUB_LOG_MAX + PUB_LOG_TAIL &&
	      st.st_size < PUB_LOG_MAX + PUB_LOG_TAIL + 200);
	f = fopen(path, "r");
	if (f != NULL) {
		char *text = malloc((size_t)st.st_size + 1);
		size_t n = fread(text, 1, (size_t)st.st_size, f);

		text[n] = '\0';
		CHECK(strstr(text, "bytes of output past 8 MiB left out") !=
		      NULL);
		CHECK(strstr(text + n - 40, "last line") != NULL);
		free(text);
		fclose(f);
	}
	unlink(path);
	rmdir(dir);
	free(chunk);
}

static void
log_tail_is_whole_characters(void)
{
	char dir[64] = "/tmp/sandboxd-unit-log-XXXXXX", path[128], tail[8];
	struct pub_log *l;

	CHECK(mkdtemp(dir) != NULL);
	l = pub_log_open(dir);
	if (l == NULL)
		return;
	pub_log_printf(l, "x\xc3\xa9\xc3\xa9\xc3\xa9\xff");
	pub_log_tail(l, tail, sizeof(tail));
	/* Ill-formed bytes as '?', never half a character. */
	CHECK(utf8_valid(tail, strlen(tail)));
	CHECK(strlen(tail) < sizeof(tail));
	pub_log_close(l);
	snprintf(path, sizeof(path), "%s/build.log", dir);
	unlink(path);
	rmdir(dir);
}

static const struct unit_test tests[] = {
    {"host names: case, port and a trailing dot", host_names_normalize},
    {"the host table: labels, a move, unpublished, counts",
     host_table_routes_labels},
    {"the build log: its head, then its tail", build_log_is_bounded},
    {"the log's tail: printable, whole characters",
     log_tail_is_whole_characters},
};

int
main(void)
{
	return UNIT_RUN("publish", tests);
}
