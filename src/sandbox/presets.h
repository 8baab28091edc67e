/*
 * Runtime presets: the kinds of app a sandbox can be seeded as.  A const
 * table; the templates themselves live in the sandbox image.
 */
#ifndef SANDBOX_PRESETS_H
#define SANDBOX_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

struct preset {
	const char *id;
	const char *label;
	const char *description;
	int port; /* of its web process; 0: it has none (workers only) */
};

const struct preset *preset_find(const char *id);
/* The i-th preset in display order, NULL past the end. */
const struct preset *preset_at(size_t i);
/* "react-vite, fastapi, …" for error messages. */
const char *preset_names(void);
/*
 * The idle policy a new sandbox of the preset gets: "always_on" for one
 * without a web process (a worker is its work: put to sleep for want of
 * preview traffic it would never run), else "sleep".
 */
const char *preset_idle_policy(const char *id);

#endif
