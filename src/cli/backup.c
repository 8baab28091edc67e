/*
 * `sandboxd backup DIR [--workspaces]` and `sandboxd restore DIR
 * [--force]` (ops/backup.h does the work).  Backup runs next to the
 * daemon and takes the secrets lock shared, as the daemon does, so no
 * `secrets rotate` changes the key between the database and the key
 * file; restore takes it exclusively, so it refuses while a daemon (or
 * anything else of ours) has the data directory open.  Restore checks
 * that none of the data directory's own directories is a link before it
 * makes the missing ones (and the lock file in state/).
 * Exit status: 0 done, 1 failed, 2 usage or configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ops/backup.h"
#include "config/config.h"
#include "docker/docker.h"
#include "lib/log.h"
#include "vault/vault.h"
#include "ws/workspace.h"

static int
load(struct config *cfg)
{
	char err[512];

	if (config_load(cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return -1;
	}
	return 0;
}

/* DIR and the flags; -1 (usage printed) on anything else. */
static int
args(int argc, char **argv, const char *flag, const char **dir, bool *set)
{
	*dir = NULL;
	*set = false;
	bool bad = false;

	for (int i = 2; i < argc && !bad; i++) {
		if (strcmp(argv[i], flag) == 0)
			*set = true;
		else if (argv[i][0] != '-' && *dir == NULL)
			*dir = argv[i];
		else
			bad = true;
	}
	if (bad || *dir == NULL || (*dir)[0] == '\0') {
		fprintf(stderr, "usage: sandboxd %s DIR [%s]\n", argv[1], flag);
		return -1;
	}
	return 0;
}

int
cmd_backup(int argc, char **argv)
{
	struct backup_opts o = {0};
	struct config cfg;
	char err[1024];
	int rc = 1;

	if (args(argc, argv, "--workspaces", &o.dir, &o.workspaces) < 0)
		return 2;
	if (load(&cfg) < 0)
		return 2;
	o.cfg = &cfg;
	if (vault_lock(cfg.data_dir, false) < 0) {
		if (errno == EWOULDBLOCK)
			log_error("`sandboxd secrets rotate` or `restore` is "
			          "running on %s; back up when it has finished",
			          cfg.data_dir);
		else
			log_error("cannot lock %s/%s: %s (is SANDBOXD_DATA_DIR "
			          "right?)",
			          cfg.data_dir, VAULT_LOCK_FILE,
			          strerror(errno));
		goto out;
	}
	if (o.workspaces && docker_new(&o.docker, cfg.docker_socket) < 0)
		o.docker = NULL;
	if (backup_run(&o, stdout, err, sizeof(err)) == 0)
		rc = 0;
	else
		log_error("backup: %s", err);
	docker_free(o.docker);
out:
	config_release(&cfg);
	return rc;
}

int
cmd_restore(int argc, char **argv)
{
	struct config cfg;
	const char *dir;
	char err[1024];
	bool force;
	int rc = 1;

	if (args(argc, argv, "--force", &dir, &force) < 0)
		return 2;
	if (load(&cfg) < 0)
		return 2;
	/* Before anything is made there: never through a link. */
	if (restore_target_check(cfg.data_dir, err, sizeof(err)) < 0) {
		log_error("restore: %s", err);
		goto out;
	}
	if (workspace_init_dirs(cfg.data_dir) < 0) {
		log_error("SANDBOXD_DATA_DIR: cannot prepare %s", cfg.data_dir);
		goto out;
	}
	if (vault_lock(cfg.data_dir, true) < 0) {
		if (errno == EWOULDBLOCK)
			log_error("sandboxd is running on %s: stop it first "
			          "(restore never runs next to the daemon)",
			          cfg.data_dir);
		else
			log_error("cannot lock %s/%s: %s", cfg.data_dir,
			          VAULT_LOCK_FILE, strerror(errno));
		goto out;
	}
	if (restore_run(&cfg, dir, force, stdout, err, sizeof(err)) == 0)
		rc = 0;
	else
		log_error("restore: %s", err);
out:
	config_release(&cfg);
	return rc;
}
