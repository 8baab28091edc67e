/* nodelink/frame: the node channel's length + JSON frame, hostile input
 * too. */
#include <string.h>

#include "nodelink/frame.h"
#include "nodelink/nodelink.h"
#include "unit.h"

static void
frame_length_is_bounded(void)
{
	const unsigned char zero[4] = {0, 0, 0, 0};
	const unsigned char one[4] = {0, 0, 0, 1};
	const unsigned char max[4] = {0, 1, 0, 0}; /* 64 KiB */
	const unsigned char over[4] = {0, 1, 0, 1};
	const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};

	CHECK(nl_frame_len(zero, NL_HDR_MAX) == -1);
	CHECK(nl_frame_len(one, NL_HDR_MAX) == 1);
	CHECK(nl_frame_len(max, NL_HDR_MAX) == (long)NL_HDR_MAX);
	CHECK(nl_frame_len(over, NL_HDR_MAX) == -1);
	CHECK(nl_frame_len(over, NL_ANS_MAX) == 65537);
	CHECK(nl_frame_len(huge, NL_ANS_MAX) == -1);
}

static void
frame_round_trips_a_request(void)
{
	struct jv *v = jv_obj(), *got;
	struct buf b;
	char op[NL_OP_LEN], err[128];

	jv_set_str(v, "op", "ws_read");
	jv_set_str(v, "path", "src/a.c");
	buf_init(&b, 0);
	CHECK(nl_frame_put(v, NL_HDR_MAX, &b) == 0);
	CHECK(b.len > 4);
	CHECK(nl_frame_len((const unsigned char *)b.data, NL_HDR_MAX) ==
	      (long)(b.len - 4));
	got = nl_frame_get(b.data + 4, b.len - 4, op, err, sizeof(err));
	CHECK(got != NULL);
	CHECK_STR(op, "ws_read");
	CHECK_STR(jv_str(jv_get(got, "path")), "src/a.c");
	jv_free(got);
	jv_free(v);
	buf_release(&b);
}

static void
frame_put_refuses_over_the_cap(void)
{
	struct jv *v = jv_obj();
	struct buf b;
	char big[200];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jv_set_str(v, "data", big);
	buf_init(&b, 0);
	buf_append(&b, "ab", 2);
	CHECK(nl_frame_put(v, 100, &b) == -1);
	CHECK(b.len == 2); /* left as it was */
	CHECK(nl_frame_put(v, 300, &b) == 0);
	jv_free(v);
	/* Only objects are frames. */
	v = jv_arr();
	CHECK(nl_frame_put(v, 300, &b) == -1);
	jv_free(v);
	buf_release(&b);
}

static int
get_req(const char *text, char op[NL_OP_LEN])
{
	char err[128];
	struct jv *v = nl_frame_get(text, strlen(text), op, err, sizeof(err));

	jv_free(v);
	return v != NULL ? 0 : -1;
}

static void
frame_get_wants_a_valid_op(void)
{
	char op[NL_OP_LEN], err[128];
	struct jv *v;

	CHECK(get_req("{\"op\":\"facts\"}", op) == 0);
	CHECK_STR(op, "facts");
	CHECK(get_req("{}", op) == -1);
	CHECK(get_req("{\"op\":\"\"}", op) == -1);
	CHECK(get_req("{\"op\":\"Facts\"}", op) == -1);
	CHECK(get_req("{\"op\":\"fa cts\"}", op) == -1);
	CHECK(get_req("{\"op\":\"fa\\u0000cts\"}", op) == -1);
	CHECK(get_req("{\"op\":7}", op) == -1);
	CHECK(get_req("{\"op\":\"abcdefghijklmnopqrstuvwxyzabcdef\"}", op) ==
	      0); /* 32 */
	CHECK(get_req("{\"op\":\"abcdefghijklmnopqrstuvwxyzabcdefg\"}", op) ==
	      -1); /* 33 */
	CHECK(get_req("[\"op\"]", op) == -1);
	CHECK(get_req("{\"op\":\"facts\"} x", op) == -1);
	CHECK(get_req("{\"op\":\"facts\"", op) == -1);
	CHECK(get_req("{\"op\":\"facts\",\"a\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]"
	              "]]]]]]}",
	              op) == -1); /* deeper than NL_FRAME_DEPTH */
	/* An answer needs no op. */
	v = nl_frame_get("{\"ok\":true}", 11, NULL, err, sizeof(err));
	CHECK(v != NULL && jv_is_true(jv_get(v, "ok")));
	jv_free(v);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"frame length is bounded", frame_length_is_bounded},
	    {"frame round trips a request", frame_round_trips_a_request},
	    {"frame put refuses over the cap", frame_put_refuses_over_the_cap},
	    {"frame get wants a valid op", frame_get_wants_a_valid_op},
	};

	return UNIT_RUN("nodelink_frame", tests);
}
