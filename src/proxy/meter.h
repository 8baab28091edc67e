/*
 * The proxy's meter: the tokens of one model answer, read from the
 * provider's own usage fields as the answer's bytes go by (pure; one
 * meter per answer, used by the thread that feeds it).
 *
 * Bounded and incremental: the meter keeps a few counters, the key
 * names of the two outermost JSON levels, and the bytes of one "usage"
 * object (at most METER_CAPTURE_MAX); it never holds the answer.
 */
#ifndef PROXY_METER_H
#define PROXY_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METER_CAPTURE_MAX 4096 /* one usage object */
#define METER_KEY_MAX     24   /* longer keys are none of ours */
#define METER_MODEL_MAX   128
#define METER_DEPTH_MAX   64 /* deeper levels are counted, not tracked */
#define METER_TOKENS_MAX  1000000000000LL /* a count above is clamped */

struct meter_usage {
	int64_t input;       /* uncached input tokens */
	int64_t output;      /* output tokens (reasoning included) */
	int64_t cache_write; /* input tokens written to the cache */
	int64_t cache_read;  /* input tokens read from the cache */
};

struct meter {
	bool sse; /* text/event-stream: JSON per "data:" line */
	/* The SSE line: its first bytes, whether it is a data line. */
	char lead[6];
	size_t lead_n;
	bool in_data, skip_line;
	/* The JSON scanner. */
	int depth;
	bool in_str, esc;
	bool str_is_key, str_is_model, str_is_text;
	uint64_t is_obj;   /* bit d: level d+1 is an object */
	uint64_t want_key; /* bit d: level d+1 expects a key next */
	char key[3][METER_KEY_MAX + 1]; /* the current key at levels 1, 2 */
	char kbuf[METER_KEY_MAX + 1];
	size_t klen;
	bool kover;
	/* The usage object being captured. */
	char cap[METER_CAPTURE_MAX];
	size_t cap_n;
	int cap_depth; /* 0: none */
	bool cap_provisional, cap_over;
	/* What the answer said. */
	char model[METER_MODEL_MAX + 1];
	size_t model_n;
	struct meter_usage u;
	bool seen;          /* any usage object */
	bool final_seen;    /* a final one (not message_start's) */
	int64_t text_bytes; /* bytes of text and tool-input deltas */
};

void meter_init(struct meter *m, bool sse);
/* Whether a response head's Content-Type line (n bytes) is a stream. */
bool meter_is_stream(const char *line, size_t n);
/* The next n bytes of the answer's body. */
void meter_feed(struct meter *m, const char *p, size_t n);
/*
 * What the answer counts: what the usage fields said; when no final
 * usage came (a stream cut off midway), the output is the larger of
 * what message_start said and the estimate from the received deltas,
 * one token per 4 bytes (rounded up).  false when nothing was seen at
 * all (no usage and no text).
 */
bool meter_result(const struct meter *m, struct meter_usage *out);

#endif
