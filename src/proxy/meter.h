/*
 * The proxy's meter: the tokens of one model answer, read from the
 * provider's own usage fields as the answer's bytes go by (pure; one
 * meter per answer, used by the thread that feeds it).
 *
 * Bounded and incremental: the meter keeps a few counters, the key
 * names of the two outermost JSON levels, and the bytes of one "usage"
 * object (at most METER_CAPTURE_MAX); it never holds the answer.  The
 * same scanner reads a request's few fields that decide how it is
 * metered (meter_request).
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
/* Bytes a token when the provider reports no usage: conservative, as
 * English and code run about 4 bytes a token. */
#define METER_BYTES_PER_TOKEN 3

struct meter_usage {
	int64_t input;       /* uncached input tokens */
	int64_t output;      /* output tokens (reasoning included) */
	int64_t cache_write; /* input tokens written to the cache */
	int64_t cache_read;  /* input tokens read from the cache */
};

/* What a request's body says of the call (meter_request). */
struct meter_req {
	char model[METER_MODEL_MAX + 1];
	bool stream;         /* "stream": true */
	bool background;     /* "background": true (a Responses call) */
	bool stream_options; /* a "stream_options" key */
	bool include_usage;  /* "stream_options": {"include_usage": true} */
	int64_t max_tokens;  /* max_tokens, max_completion_tokens or
	                        max_output_tokens; -1 none */
	int64_t choices; /* "n": answers asked for (1 to METER_CHOICES_MAX) */
	bool object;     /* the body is a JSON object, its '{' at open_at */
	size_t open_at;
};

#define METER_SCALAR_MAX  32  /* a longer number or literal is ignored */
#define METER_CHOICES_MAX 128 /* "n" above is clamped: providers cap it */

struct meter {
	bool sse; /* text/event-stream: JSON per "data:" line */
	bool req; /* a request: its outer scalars are read (meter_request) */
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
	int64_t bytes;      /* every byte fed */
	/* A request's scalar being read, and what the request said. */
	char sval[METER_SCALAR_MAX + 1];
	size_t sval_n;
	bool sval_over;
	struct meter_req rq;
};

void meter_init(struct meter *m, bool sse);
/* Whether a response head's Content-Type line (n bytes) is a stream. */
bool meter_is_stream(const char *line, size_t n);
/* The next n bytes of the answer's body. */
void meter_feed(struct meter *m, const char *p, size_t n);
/*
 * What the answer counts: what the usage fields said.  When no final
 * usage came (a stream cut off midway, a provider or a request that
 * does not report it), what passed is charged: the input as a usage
 * object said (message_start's) or else from the request's size
 * (request_bytes), and the output as the larger of what was said and
 * the bytes of the text and tool-input deltas received (of the whole
 * answer when none was recognised), one token per METER_BYTES_PER_TOKEN
 * bytes, rounded up.  true when the provider's final usage was seen.
 */
bool meter_result(const struct meter *m, int64_t request_bytes,
                  struct meter_usage *out);
/* Tokens n bytes count by that rule. */
int64_t meter_tokens_of_bytes(int64_t n);
/*
 * What a request's body (n bytes) says: the model, the output cap,
 * whether it streams, runs in the background or asks for the usage of
 * a stream.  Bounded like the answer's scan.
 */
void meter_request(const char *body, size_t n, struct meter_req *out);

#endif
