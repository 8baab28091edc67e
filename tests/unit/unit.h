/*
 * A unit test harness small enough to read in one sitting.  Each test file
 * defines test functions, lists them in a table and calls unit_main().  A
 * test prints "ok - name" or "not ok - name" (TAP-like lines) and the
 * binary exits non-zero when any test failed.  tests/run-unit adds up the
 * lines of every binary.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",         \
			        __FILE__, __LINE__, #cond);                    \
			unit_failed = 1;                                       \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {         \
			fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n",         \
			        __FILE__, __LINE__, a_ ? a_ : "(null)",        \
			        b_ ? b_ : "(null)");                           \
			unit_failed = 1;                                       \
		}                                                              \
	} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

static inline int
unit_main(const char *suite, const struct unit_test *tests, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		unit_failed = 0;
		tests[i].fn();
		printf("%s - %s: %s\n", unit_failed ? "not ok" : "ok", suite,
		       tests[i].name);
		bad += unit_failed;
	}
	return bad ? 1 : 0;
}

#define UNIT_RUN(suite, table)                                                 \
	unit_main(suite, table, sizeof(table) / sizeof(table[0]))

/* A shell command line, printf-style (4 KiB at most), run: its status
 * as system() returns it. */
static inline int
sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* dir/name made (or emptied) with text in it; a failure is a check's. */
static inline void
unit_put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

#endif
