/*
 * Logging: one line per event on stderr, "time level message".  Safe to
 * call from any thread.  Never pass secrets.
 */
#ifndef LIB_LOG_H
#define LIB_LOG_H

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
