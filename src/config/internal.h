/*
 * What the files of src/config/ share, and nobody else: the .env file
 * (envfile.c), the hooks of the table (hooks.c: the parsers and checks
 * of vars[] that no kind covers) and the FAIL macro of both.  config.c
 * holds the table and its loop.  A header of the directory without a
 * .c of its own, as store/internal.h, so that config.c, hooks.c and
 * envfile.c include it without depending on each other.
 *
 * Each hook reads the variables it names from the environment and the
 * file, fills its fields of struct config and returns 0, or writes the
 * error naming the variable to err and returns -1.  Not thread-safe:
 * used only while the configuration loads.
 */
#ifndef CONFIG_INTERNAL_H
#define CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "config/config.h"
#include "lib/buf.h"

/* The .env file: KEY=VALUE lines (envfile.c). */
#define ENV_MAX_ENTRIES 256

/* The file's lines, pointing into text. */
struct envfile {
	struct buf text;
	char *key[ENV_MAX_ENTRIES];
	char *val[ENV_MAX_ENTRIES];
	size_t n;
};

/* Reads path into f (its text initialised by the caller); 0, or -1
 * with the reason in err. */
int envfile_load(struct envfile *f, const char *path, char *err, size_t errlen);
/* A variable's value: the environment's, else the file's last, else
 * NULL. */
const char *envfile_lookup(const struct envfile *f, const char *name);
/* s without its leading and trailing white space (cut in place). */
char *envfile_trim(char *s);

/* In a function with err and errlen: the error, then return -1. */
#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		return -1;                                                     \
	} while (0)

typedef int config_hook(const struct envfile *f, struct config *c, char *err,
                        size_t errlen);

/* Parsers of what no kind covers. */
config_hook config_parse_data_dir, config_parse_addr,
    config_parse_preview_visibility, config_parse_auth_disabled,
    config_parse_tokens, config_parse_git_ca, config_parse_sleep_policy,
    config_parse_console_dir, config_parse_egress, config_parse_docker_host,
    config_parse_mirrors;
/* Checks that run after a row's value is parsed. */
config_hook config_check_agent, config_set_edge_port, config_check_subnet,
    config_check_log_format, config_check_rotation, config_check_domains,
    config_check_orchestrator;

#endif
