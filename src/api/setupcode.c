/*
 * The console's setup code on disk: <data>/console-setup-code (0600),
 * made at first start while no password is set, read by the setup,
 * removed once a password is set.  Created with O_EXCL, so a second
 * writer (the daemon and `sandboxd setup-code` at once) reads the first
 * one's code instead of replacing it; never followed through a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/session.h"
#include "lib/limits.h"
#include "lib/log.h"

static void
code_path(const char *data_dir, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", data_dir, SESSION_CODE_FILE);
}

int
session_code_read(const char *data_dir, char out[SESSION_CODE_LEN + 1])
{
	char path[WORKSPACE_PATH_MAX], text[64];
	ssize_t n;
	int fd;

	code_path(data_dir, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	text[strcspn(text, "\r\n")] = '\0';
	if (strlen(text) != SESSION_CODE_LEN ||
	    !session_code_normalize(text, (char[SESSION_CODE_CHARS + 1]){0}))
		return -1;
	memcpy(out, text, SESSION_CODE_LEN + 1);
	return 0;
}

/* Writes a new code; 0, 1 when one exists already (out has it), -1. */
static int
code_make(const char *data_dir, char out[SESSION_CODE_LEN + 1])
{
	char path[WORKSPACE_PATH_MAX], line[SESSION_CODE_LEN + 2];
	int fd, rc = 0;

	code_path(data_dir, path, sizeof(path));
	session_code_new(out);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	          0600);
	if (fd < 0 && errno == EEXIST)
		return session_code_read(data_dir, out) == 0 ? 1 : -1;
	if (fd < 0) {
		log_error("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(line, sizeof(line), "%s\n", out);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) ||
	    fsync(fd) < 0) {
		log_error("cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	close(fd);
	if (rc < 0)
		unlink(path);
	return rc;
}

static int
password_state(struct store *st, bool *set)
{
	char hash[VAULT_PWHASH_LEN];
	int rc = store_console_password(st, hash, sizeof(hash));

	*set = rc == 0;
	return rc < 0 ? -1 : 0;
}

int
session_code_init(struct store *st, const char *data_dir)
{
	char code[SESSION_CODE_LEN + 1], path[WORKSPACE_PATH_MAX];
	bool set;
	int rc;

	if (password_state(st, &set) < 0)
		return -1;
	if (set) {
		code_path(data_dir, path, sizeof(path));
		unlink(path);
		return 0;
	}
	rc = code_make(data_dir, code);
	if (rc < 0)
		return -1;
	if (rc == 0)
		printf("Console setup code (shown once): %s\n", code);
	else
		printf("Console setup code: made at first start; "
		       "`sandboxd setup-code` prints it\n");
	fflush(stdout);
	return 0;
}

int
session_code_print(struct store *st, const char *data_dir)
{
	char code[SESSION_CODE_LEN + 1];
	bool set;

	if (password_state(st, &set) < 0)
		return 1;
	if (set) {
		fprintf(stderr, "sandboxd: a console password is already set; "
		                "no setup code is needed\n");
		return 1;
	}
	if (code_make(data_dir, code) < 0)
		return 1;
	printf("%s\n", code);
	return 0;
}
