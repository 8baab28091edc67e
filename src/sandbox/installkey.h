/*
 * The install key: what decides whether the supervisor runs an app's
 * install step (sandbox.yaml `install:`) before its processes.  The
 * supervisor runs the install whenever `.sandboxd/install.key` in the
 * workspace does not hold the key of run.conf's install record; the
 * dependency cache (src/depcache) keeps a finished install's tree under
 * the same key, so two apps with the same key share one install.
 */
#ifndef SANDBOX_INSTALLKEY_H
#define SANDBOX_INSTALLKEY_H

#include <stdbool.h>

#include "sandbox/manifest.h"

#define INSTALLKEY_MAX_INPUT (16u << 20) /* bytes read of one input */

/*
 * The key (64 lower-case hex and a NUL) of m's install step for the app
 * directory appfd: SHA-256 over the command and a NUL, then for each
 * input in order its path and a NUL and its content (below).  The
 * inputs are m's `install.inputs`, else those of the default names
 * (runtime_install_default_input) present in the app's root.  Each
 * input is read through wsfs (never following a link, never blocking on
 * a FIFO, at most INSTALLKEY_MAX_INPUT bytes within WSFS_READ_MS) and
 * hashed as "file <size>\n" and the SHA-256 (hex) of its bytes, or as the
 * marker "absent\n" (it does not exist) or "unreadable\n" (a link, a FIFO, a
 * directory, too large or too slow).  0, or -1 when m has no install or out of
 * memory.
 */
int runtime_install_key(int appfd, const struct manifest *m, char out[65]);

/* Whether path (app-relative) is one of the default inputs: package.json,
 * package-lock.json, pnpm-lock.yaml, yarn.lock, bun.lock, bun.lockb,
 * requirements.txt, pyproject.toml, poetry.lock, uv.lock. */
bool runtime_install_default_input(const char *path);

#endif
