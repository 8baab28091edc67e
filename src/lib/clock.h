/* Wall-clock helpers: unix seconds and RFC 3339 UTC text. */
#ifndef LIB_CLOCK_H
#define LIB_CLOCK_H

#include <stdint.h>

#define CLOCK_RFC3339_LEN 21 /* "2026-11-29T07:00:00Z" and NUL */

int64_t clock_now(void);
int64_t clock_now_ms(void);
/* Monotonic milliseconds, for timeouts and measurements. */
int64_t clock_mono_ms(void);
/* "" for a time outside years 0-9999 (times can come from a sandbox). */
void clock_rfc3339(int64_t unix_s, char out[CLOCK_RFC3339_LEN]);

#endif
