/* Unit tests of the lib/ leaves: ulid, buf, jv, utf8, clock, err, meminfo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jv.h"
#include "lib/meminfo.h"
#include "lib/ulid.h"
#include "lib/utf8.h"
#include "unit.h"

static void
ulid_new_is_valid_and_unique(void)
{
	char a[ULID_LEN + 1], b[ULID_LEN + 1], canon[ULID_LEN + 1];

	ulid_new(a);
	ulid_new(b);
	CHECK(strlen(a) == ULID_LEN);
	CHECK(ulid_parse(a, canon));
	CHECK_STR(canon, a);
	CHECK(strcmp(a, b) != 0);
}

static void
ulid_parse_is_strict(void)
{
	static const char *const bad[] = {
	    "",
	    "short",
	    "..",
	    "../etc",
	    "a/b",
	    "/abs",
	    "0",
	    "01ARZ3NDEKTSV4RRFFQ69G5FA",   /* 25 */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAVV", /* 27 */
	    "81ARZ3NDEKTSV4RRFFQ69G5FAV",  /* first char > 7 */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAU",  /* U is not Crockford */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAI",  /* nor I */
	    "01ARZ3NDEKTSV4RRFFQ69G5F/V",
	};
	char canon[ULID_LEN + 1];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!ulid_parse(bad[i], NULL));
	CHECK(ulid_parse("01arz3ndektsv4rrffq69g5fav", canon));
	CHECK_STR(canon, "01ARZ3NDEKTSV4RRFFQ69G5FAV");
}

static void
buf_respects_its_cap(void)
{
	struct buf b;

	buf_init(&b, 8);
	CHECK(buf_append(&b, "12345678", 8) == 0);
	CHECK(buf_append(&b, "9", 1) == -1);
	CHECK(b.len == 8);
	CHECK_STR(b.data, "12345678");
	buf_reset(&b);
	CHECK(buf_appendf(&b, "%d-%s", 42, "x") == 0);
	CHECK_STR(b.data, "42-x");
	CHECK(buf_appendf(&b, "%s", "toolongtext") == -1);
	buf_release(&b);
}

static void
jv_refuses_deep_nesting(void)
{
	char text[256], err[128];
	struct jv *v;
	int d = 40;

	for (int i = 0; i < d; i++)
		text[i] = '[';
	for (int i = 0; i < d; i++)
		text[d + i] = ']';
	v = jv_parse(text, (size_t)(2 * d), 32, err, sizeof(err));
	CHECK(v == NULL);
	CHECK(strstr(err, "deeper") != NULL);
	/* Brackets inside strings do not count. */
	const char *s = "{\"a\":\"[[[[[[[[[[[[\"}";
	v = jv_parse(s, strlen(s), 2, err, sizeof(err));
	CHECK(v != NULL);
	jv_free(v);
}

static void
jv_rejects_bad_text(void)
{
	static const char *const bad[] = {
	    "", "{", "{\"a\":}", "{} x", "{\"a\":1,\"a\":2}", "\"\xff\""};
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jv *v =
		    jv_parse(bad[i], strlen(bad[i]), 32, err, sizeof(err));
		CHECK(v == NULL);
		jv_free(v);
	}
}

static void
jv_dump_is_compact_and_ordered(void)
{
	struct jv *o = jv_obj(), *a = jv_arr();
	struct buf b;

	jv_set_str(o, "id", "X");
	jv_set_int(o, "n", 3);
	jv_push(a, jv_new_str("t"));
	jv_set(o, "tags", a);
	jv_set_bool(o, "ok", true);
	jv_set_str(o, "skipped", NULL);
	buf_init(&b, 0);
	CHECK(jv_dump(o, &b) == 0);
	CHECK_STR(b.data,
	          "{\"id\":\"X\",\"n\":3,\"tags\":[\"t\"],\"ok\":true}");
	buf_release(&b);
	jv_free(o);
}

/* Bytes that are not UTF-8 are escaped, never a dropped key. */
static void
jv_strings_not_utf8_are_escaped(void)
{
	struct jv *o = jv_obj();
	struct buf b;

	jv_set_str(o, "path", "caf\xe9/\xc3(\xe2\x82\xac");
	jv_set_str(o, "ok", "caf\xc3\xa9");
	jv_set(o, "arr", jv_new_str("\xff"));
	buf_init(&b, 0);
	CHECK(jv_dump(o, &b) == 0);
	CHECK_STR(b.data, "{\"path\":\"caf\\\\xe9/\\\\xc3(\xe2\x82\xac\","
	                  "\"ok\":\"caf\xc3\xa9\",\"arr\":\"\\\\xff\"}");
	buf_release(&b);
	jv_free(o);
}

static void
jv_lossy_strings_are_utf8(void)
{
	struct jv *v = jv_new_str_lossy("ok\xff\xc3(\xe2\x82\xac\0z", 10);
	struct buf b;

	CHECK(v != NULL);
	buf_init(&b, 0);
	jv_dump(v, &b);
	CHECK_STR(b.data, "\"ok\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac"
	                  "\xef\xbf\xbdz\"");
	buf_release(&b);
	jv_free(v);
}

static void
utf8_valid_takes_shortest_forms_only(void)
{
	static const char *const good[] = {
	    "",
	    "plain ascii",
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "\xed\x9f\xbf",     /* U+D7FF, below the surrogates */
	    "\xee\x80\x80",     /* U+E000, above them */
	    "\xf4\x8f\xbf\xbf", /* U+10FFFF */
	};
	static const char *const bad[] = {
	    "\xff",             /* never a lead byte */
	    "\x80",             /* a continuation alone */
	    "\xc3",             /* cut short */
	    "x\xe2\x82",        /* cut short */
	    "\xc3(",            /* not a continuation */
	    "\xc0\xaf",         /* overlong '/' */
	    "\xe0\x80\xaf",     /* overlong '/' */
	    "\xf0\x80\x80\xaf", /* overlong '/' */
	    "\xed\xa0\x80",     /* the surrogate U+D800 */
	    "\xf4\x90\x80\x80", /* U+110000 */
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!utf8_valid(good[i], strlen(good[i])))
			fprintf(stderr, "  good[%zu] was refused\n", i);
		CHECK(utf8_valid(good[i], strlen(good[i])));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (utf8_valid(bad[i], strlen(bad[i])))
			fprintf(stderr, "  bad[%zu] was taken\n", i);
		CHECK(!utf8_valid(bad[i], strlen(bad[i])));
	}
	/* NUL is U+0000; len, not a terminator, says where the text ends. */
	CHECK(utf8_valid("a\0b", 3));
	CHECK(!utf8_valid("\xe2\x82\xac", 2));
	CHECK(utf8_char_len("\xe2\x82\xac", 3) == 3);
	CHECK(utf8_char_len("\xe2\x82\xac", 2) == 0);
}

static void
utf8_clip_cuts_on_boundaries(void)
{
	const char *s = "a\xc3\xa9\xe2\x82\xac"; /* a, e acute, euro */

	CHECK(utf8_clip(s, 6, 10) == 6);
	CHECK(utf8_clip(s, 6, 6) == 6);
	CHECK(utf8_clip(s, 6, 5) == 3);
	CHECK(utf8_clip(s, 6, 4) == 3);
	CHECK(utf8_clip(s, 6, 3) == 3);
	CHECK(utf8_clip(s, 6, 2) == 1);
	CHECK(utf8_clip(s, 6, 1) == 1);
	CHECK(utf8_clip(s, 6, 0) == 0);
	CHECK(utf8_clip("\xe2\x82\xac", 3, 2) == 0);
}

static void
utf8_slug_keeps_ascii_words(void)
{
	char out[32];

	utf8_slug("A Shopping List!", 40, out, sizeof(out));
	CHECK(strcmp(out, "a-shopping-list") == 0);
	utf8_slug("  --Caf\xc3\xa9 au lait  ", 40, out, sizeof(out));
	CHECK(strcmp(out, "caf-au-lait") == 0);
	utf8_slug("\xe2\x82\xac ?! ", 40, out, sizeof(out));
	CHECK(strcmp(out, "app") == 0);
	utf8_slug("abcdefghij", 4, out, sizeof(out));
	CHECK(strcmp(out, "abcd") == 0);
	utf8_slug("abcdefghijklmnopqrstuvwxyz", 40, out, 8);
	CHECK(strlen(out) < 8 && strncmp(out, "abcdef", 6) == 0);
}

static void
clock_formats_rfc3339(void)
{
	char t[CLOCK_RFC3339_LEN];

	clock_rfc3339(0, t);
	CHECK_STR(t, "1970-01-01T00:00:00Z");
	clock_rfc3339(1795935600, t);
	CHECK_STR(t, "2026-11-29T07:00:00Z");
}

static const struct err_code *
err_row(const char *code)
{
	for (size_t i = 0; i < err_ncodes; i++)
		if (strcmp(err_codes[i].code, code) == 0)
			return &err_codes[i];
	return NULL;
}

static void
err_codes_are_unique_sorted_and_sane(void)
{
	const struct err_code *a, *b;

	CHECK(err_ncodes > 0);
	for (size_t i = 0; i < err_ncodes; i++) {
		a = &err_codes[i];
		CHECK(a->status >= 400 && a->status <= 599);
		CHECK(a->code[0] != '\0' &&
		      strlen(a->code) < sizeof(((struct err *)0)->code));
		CHECK(strspn(a->code, "abcdefghijklmnopqrstuvwxyz_") ==
		      strlen(a->code));
		CHECK(a->meaning != NULL && a->meaning[0] != '\0');
		if (i == 0)
			continue;
		/* By status, then code: so no code is there twice either. */
		b = &err_codes[i - 1];
		CHECK(b->status < a->status ||
		      (b->status == a->status && strcmp(b->code, a->code) < 0));
	}
}

static void
err_macros_answer_their_rows(void)
{
	struct err e = {0};
	const struct err_code *row;

	CHECK(ERR_BAD(&e, "x %d", 1) == -1);
	CHECK_STR(e.msg, "x 1");
	row = err_row(e.code);
	CHECK(row != NULL && row->status == e.status);
	ERR_NOTFOUND(&e, "x");
	row = err_row(e.code);
	CHECK(row != NULL && row->status == e.status);
	ERR_CONFLICT(&e, "x");
	row = err_row(e.code);
	CHECK(row != NULL && row->status == e.status);
	ERR_INTERNAL(&e, "x");
	row = err_row(e.code);
	CHECK(row != NULL && row->status == e.status);
	ERR_DOCKER(&e, "x");
	row = err_row(e.code);
	CHECK(row != NULL && row->status == e.status);
	CHECK(ERR_BAD(NULL, "nothing to fill") == -1);
}

static void
meminfo_reads_the_host_and_refuses_odd_ids(void)
{
	int pct = meminfo_available_pct();

	CHECK(pct >= 0 && pct <= 100);
	/* No cgroup of these: a bad id never leaves the cgroup directory. */
	CHECK(meminfo_container_bytes(NULL) == -1);
	CHECK(meminfo_container_bytes("") == -1);
	CHECK(meminfo_container_bytes("../../..") == -1);
	CHECK(meminfo_container_bytes("0000000000000000000000000000000000000"
	                              "000000000000000000000000000") == -1);
}

static const struct unit_test tests[] = {
    {"ulid_new is valid and unique", ulid_new_is_valid_and_unique},
    {"ulid_parse is strict", ulid_parse_is_strict},
    {"buf respects its cap", buf_respects_its_cap},
    {"jv refuses deep nesting", jv_refuses_deep_nesting},
    {"jv rejects bad text", jv_rejects_bad_text},
    {"jv dump is compact and ordered", jv_dump_is_compact_and_ordered},
    {"lossy strings are UTF-8", jv_lossy_strings_are_utf8},
    {"jv: strings that are not UTF-8 are escaped, never dropped",
     jv_strings_not_utf8_are_escaped},
    {"utf8_valid takes shortest forms only",
     utf8_valid_takes_shortest_forms_only},
    {"utf8_clip cuts on boundaries", utf8_clip_cuts_on_boundaries},
    {"utf8_slug keeps ASCII words", utf8_slug_keeps_ascii_words},
    {"clock formats RFC 3339", clock_formats_rfc3339},
    {"err codes are unique, sorted and sane",
     err_codes_are_unique_sorted_and_sane},
    {"err macros answer their rows", err_macros_answer_their_rows},
    {"meminfo reads the host and refuses odd ids",
     meminfo_reads_the_host_and_refuses_odd_ids},
};

int
main(void)
{
	return UNIT_RUN("lib", tests);
}
