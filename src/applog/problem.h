/*
 * problem.h - what the API says is wrong with an app that runs: its web
 * process's health from the supervisor and the last error its dev server
 * printed (logscan.h), as the "problem" member of a sandbox; and the
 * processes a sandbox had when it was last seen, for while it is frozen.
 *
 * Safe from any thread (one mutex around the small tables, never held
 * while reading a file).  Reads at most APPLOG_TAIL bytes of a log per
 * call.
 */
#ifndef APPLOG_PROBLEM_H
#define APPLOG_PROBLEM_H

#include "lib/jv.h"
#include "store/store.h"
#include "wsnode/wsnode.h"

#define APPLOG_TAIL  (32u << 10) /* bytes of the web log scanned */
#define APPLOG_TABLE 256         /* sandboxes remembered (least used go) */
#define APPLOG_PROCS 16          /* processes remembered per sandbox */
#define APPLOG_NAME  33          /* bytes of a remembered name, with NUL */

/*
 * The problem of sandbox id whose workspace is src: a new object
 * {kind, process, summary, lines, since}, or a JSON null.  procs is the
 * supervisor's process list (supanswer.h), NULL when it did not answer;
 * a web process in crashloop or backoff is "crashloop" or "crashed",
 * else the log decides ("compile_error", "runtime_error").  since is when
 * this sandbox was first seen with this problem.
 */
struct jv *applog_problem(const struct wsnode_ref *src, const char *id,
                          const struct jv *procs);

/*
 * The problem the install step (docs/supervisor.md, "Install") makes, or
 * NULL: {kind:"installing"} while it runs (no process runs meanwhile),
 * {kind:"install_failed"} with the last lines of install.log after it
 * failed.  install is the status's "install" object (supanswer.h).
 */
struct jv *applog_install_problem(const struct wsnode_ref *src, const char *id,
                                  const struct jv *install);

/* Remembers the process list of a sandbox that answered. */
void applog_procs_seen(const char *id, const struct jv *procs);

/*
 * The processes sandbox id had when last seen, each with "state":
 * "paused" (a new array; empty when none is remembered).
 */
struct jv *applog_procs_paused(const char *id);

#endif
