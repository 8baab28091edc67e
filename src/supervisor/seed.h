/*
 * seed.h - seeding a new app from its preset's template (docs/supervisor.md,
 * "Seeding").
 */
#ifndef SUPERVISOR_SEED_H
#define SUPERVISOR_SEED_H

#include <sys/types.h>

#define SEED_TEMPLATES "/opt/sandboxd/templates"

/*
 * At boot: when $home/.sandboxd/seeded is missing, decides whether
 * $home/workspace/app is to be seeded from <templates>/<preset> (preset
 * NULL or "": no) and if so starts the copy.  Returns the copying child's
 * pid, for seed_finish(); 0 when there is nothing to copy (the marker is
 * then written, if missing).  Problems are logged, never fatal.
 */
pid_t seed_start(const char *home, const char *preset, const char *templates);

/* The copy ended with status: writes the marker when it succeeded. */
void seed_finish(const char *home, int status);

#endif
