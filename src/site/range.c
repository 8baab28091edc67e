/*
 * The pure parts of answering a static file: a Range header, an
 * Accept-Encoding header, a file name's Content-Type.  No allocation,
 * no state: the fuzz target (tests/fuzz/fuzz_site_range.c) runs them on
 * anything.
 *
 * Ranges: one "bytes=" range is served (206); several ranges, another
 * unit or a range that does not parse are answered with the whole body
 * (200: RFC 9110 lets a server ignore Range), which is what nginx does
 * for several ranges too; a multipart/byteranges answer is rejected as
 * complexity no browser or download tool needs.  A range that starts at
 * or past the end, or a zero suffix, is unsatisfiable (416).
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "site/site.h"

static bool
lws(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Digits at p[*i, n) into *v, advancing *i: false when none or overflow. */
static bool
number(const char *p, size_t n, size_t *i, uint64_t *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < n && p[*i] >= '0' && p[*i] <= '9') {
		if (*v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(p[*i] - '0');
		(*i)++;
	}
	return *i > start;
}

int
site_range(const char *v, size_t n, size_t size, size_t *off, size_t *len)
{
	size_t i = 0;
	uint64_t a = 0, b = 0;
	bool has_a, has_b;

	while (n > 0 && lws(v[n - 1]))
		n--;
	while (i < n && lws(v[i]))
		i++;
	if (n - i < 6 || strncasecmp(v + i, "bytes=", 6) != 0)
		return 0;
	i += 6;
	if (memchr(v + i, ',', n - i) != NULL)
		return 0;
	while (i < n && lws(v[i]))
		i++;
	has_a = number(v, n, &i, &a);
	if (i >= n || v[i] != '-')
		return 0;
	i++;
	has_b = number(v, n, &i, &b);
	if (i != n || (!has_a && !has_b) || (has_a && has_b && b < a))
		return 0;
	if (!has_a) { /* the last b bytes */
		if (b == 0 || size == 0)
			return -1;
		*len = b < size ? (size_t)b : size;
		*off = size - *len;
		return 1;
	}
	if (a >= size)
		return -1;
	if (!has_b || b >= size)
		b = size - 1;
	*off = (size_t)a;
	*len = (size_t)(b - a + 1);
	return 1;
}

/* q at p[0, n) ("q=0.5") is zero: "q=0", "q=0.", "q=0.000". */
static bool
q_zero(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && lws(p[i]))
		i++;
	if (n - i < 3 || (p[i] != 'q' && p[i] != 'Q') || p[i + 1] != '=' ||
	    p[i + 2] != '0')
		return false;
	for (i += 3; i < n && !lws(p[i]); i++)
		if (p[i] != '.' && p[i] != '0')
			return false;
	return true;
}

bool
site_accepts(const char *v, size_t n, const char *coding)
{
	size_t k = strlen(coding), i = 0;
	int star = -1; /* "*": -1 absent, 0 refused, 1 accepted */

	while (i < n) {
		size_t s, e, end = i;
		bool zero = false;
		while (end < n && v[end] != ',')
			end++;
		for (s = i; s < end && lws(v[s]); s++)
			;
		for (e = s; e < end && v[e] != ';' && !lws(v[e]); e++)
			;
		/* parameters: only q matters */
		for (size_t p = e; p < end; p++)
			if (v[p] == ';')
				zero |= q_zero(v + p + 1, end - p - 1);
		if (e - s == k && strncasecmp(v + s, coding, k) == 0)
			return !zero;
		if (e - s == 1 && v[s] == '*')
			star = !zero;
		i = end + 1;
	}
	return star == 1;
}

static const struct {
	const char *ext;
	const char *type;
} site_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".htm", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".cjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".webmanifest", "application/manifest+json"},
    {".xml", "application/xml"},
    {".rss", "application/rss+xml"},
    {".atom", "application/atom+xml"},
    {".txt", "text/plain; charset=utf-8"},
    {".md", "text/markdown; charset=utf-8"},
    {".csv", "text/csv; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},
    {".webp", "image/webp"},
    {".avif", "image/avif"},
    {".ico", "image/x-icon"},
    {".bmp", "image/bmp"},
    {".woff2", "font/woff2"},
    {".woff", "font/woff"},
    {".ttf", "font/ttf"},
    {".otf", "font/otf"},
    {".eot", "application/vnd.ms-fontobject"},
    {".wasm", "application/wasm"},
    {".pdf", "application/pdf"},
    {".zip", "application/zip"},
    {".gz", "application/gzip"},
    {".br", "application/octet-stream"},
    {".mp4", "video/mp4"},
    {".webm", "video/webm"},
    {".mp3", "audio/mpeg"},
    {".ogg", "audio/ogg"},
    {".wav", "audio/wav"},
};

const char *
site_type(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t n;

	base = base ? base + 1 : name;
	n = strlen(base);
	for (size_t i = 0; i < sizeof(site_types) / sizeof(*site_types); i++) {
		size_t k = strlen(site_types[i].ext);
		if (n >= k && strcasecmp(base + n - k, site_types[i].ext) == 0)
			return site_types[i].type;
	}
	return "application/octet-stream";
}
