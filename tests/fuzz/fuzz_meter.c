/*
 * libFuzzer target: the proxy's meter on a hostile provider's answer.
 * The first byte picks SSE or JSON and the size of the pieces the answer
 * is fed in; the rest is the answer.  Whatever the bytes, the counts
 * stay within [0, METER_TOKENS_MAX], the model name is a string of
 * printable bytes, the nesting depth never goes negative, and feeding
 * the same bytes in other pieces gives the same counts.  The same bytes
 * read as a request (meter_request) give a model of printable bytes, an
 * output cap within [-1, METER_TOKENS_MAX] and, when the body is an
 * object, the offset of its '{'.
 */
#include <stdint.h>
#include <string.h>

#include "proxy/meter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
run(struct meter *m, bool sse, const uint8_t *p, size_t n, size_t step)
{
	meter_init(m, sse);
	for (size_t i = 0; i < n; i += step)
		meter_feed(m, (const char *)p + i, n - i < step ? n - i : step);
}

static void
check(const struct meter *m)
{
	struct meter_usage u;

	meter_result(m, 1000, &u);
	if (u.input < 0 || u.input > METER_TOKENS_MAX || u.output < 0 ||
	    u.output > METER_TOKENS_MAX || u.cache_read < 0 ||
	    u.cache_read > METER_TOKENS_MAX || u.cache_write < 0 ||
	    u.cache_write > METER_TOKENS_MAX || m->depth < 0 ||
	    m->model_n > METER_MODEL_MAX ||
	    memchr(m->model, '\0', sizeof(m->model)) == NULL)
		__builtin_trap();
	for (size_t i = 0; i < m->model_n; i++)
		if ((unsigned char)m->model[i] < 0x20)
			__builtin_trap();
}

static void
check_request(const char *p, size_t n)
{
	struct meter_req rq;

	meter_request(p, n, &rq);
	if (rq.max_tokens < -1 || rq.max_tokens > METER_TOKENS_MAX ||
	    rq.choices < 1 || rq.choices > METER_CHOICES_MAX ||
	    memchr(rq.model, '\0', sizeof(rq.model)) == NULL ||
	    (rq.object && (rq.open_at >= n || p[rq.open_at] != '{')))
		__builtin_trap();
	for (size_t i = 0; rq.model[i]; i++)
		if ((unsigned char)rq.model[i] < 0x20)
			__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct meter a, b;
	struct meter_usage ua, ub;
	bool sse;
	size_t step;

	if (size == 0)
		return 0;
	sse = data[0] & 1;
	step = 1 + (data[0] >> 1) % 16;
	run(&a, sse, data + 1, size - 1, size);
	run(&b, sse, data + 1, size - 1, step);
	check(&a);
	check(&b);
	meter_result(&a, 1000, &ua);
	meter_result(&b, 1000, &ub);
	if (memcmp(&ua, &ub, sizeof(ua)) != 0)
		__builtin_trap();
	check_request((const char *)data + 1, size - 1);
	return 0;
}
