/*
 * libFuzzer target: what the git helper sends the daemon (git/frame.c,
 * git/spawn.c) and the remote URLs a client gives (git/hostcheck.c).
 * The helper works on the sandbox's repository, so its frames are
 * treated as hostile: the input is written to one end of a socketpair
 * and read back as frames (a length, then the bytes) until the end,
 * each frame read as the helper's answer.  Every frame fits the
 * buffer's cap, an answer is an object, GITWS_NOT_REPO, or a refusal
 * with a 4xx/5xx status and a message.  The input's text is also an
 * http(s) URL whose authority must come out without a path, a query or
 * a fragment, and a message to redact.  Nothing may crash,
 * leak or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "git/internal.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
frames(const uint8_t *data, size_t size)
{
	struct buf b;
	struct jv *out;
	struct err e;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		__builtin_trap();
	/* at most a few KiB: the socket's buffer holds it all */
	if (size && write(sv[0], data, size) != (ssize_t)size)
		__builtin_trap();
	close(sv[0]);
	buf_init(&b, 1024);
	while ((rc = gitws_frame_recv(sv[1], &b, gitws_now_ms() + 1000)) == 0) {
		if (b.len > 1024)
			__builtin_trap();
		memset(&e, 0, sizeof(e));
		out = NULL;
		rc = gitws_helper_answer(&b, &out, &e);
		if (rc == 0 && (out == NULL || jv_type(out) != JV_OBJECT))
			__builtin_trap();
		if (rc < 0 && (e.status < 400 || e.status >= 600 ||
		               e.msg[0] == '\0' || e.code[0] == '\0'))
			__builtin_trap();
		if (rc != 0 && rc != -1 && rc != GITWS_NOT_REPO)
			__builtin_trap();
		jv_free(out);
	}
	if (rc == 1) /* late: the writer is closed, so never */
		__builtin_trap();
	buf_release(&b);
	close(sv[1]);
}

static void
urls(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), auth[256], red[512];
	size_t half = size / 2;

	memcpy(s, data, size);
	s[size] = '\0';
	gitws_url_authority(s, auth, sizeof(auth));
	if (memchr(auth, '\0', sizeof(auth)) == NULL || strchr(auth, '/') ||
	    strchr(auth, '?') || strchr(auth, '#'))
		__builtin_trap();
	s[half] = '\0';
	gitws_redact(s, s + half + (half < size), red, sizeof(red));
	if (memchr(red, '\0', sizeof(red)) == NULL)
		__builtin_trap();
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	frames(data, size);
	urls(data, size);
	return 0;
}
