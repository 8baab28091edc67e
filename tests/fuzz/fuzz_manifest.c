/*
 * libFuzzer target: sandbox.yaml as the control plane parses it
 * (sandbox/manifest.c, libyaml).  The file is the sandbox's: the input is
 * its bytes, at most MANIFEST_MAX_BYTES as the daemon reads them.  A
 * parse either fails with a message or gives a manifest within its
 * limits, which must render as run.conf (no TAB or newline inside a
 * field, which would forge another record for the supervisor).  Nothing
 * may crash, leak or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/manifest.h"
#include "lib/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_field(const char *s)
{
	if (strchr(s, '\n') || strchr(s, '\t'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct manifest m;
	char err[384];
	struct buf out;

	if (size > MANIFEST_MAX_BYTES)
		return 0;
	memset(&m, 0, sizeof(m));
	err[0] = '\0';
	if (manifest_parse((const char *)data, size, &m, err, sizeof(err)) <
	    0) {
		if (err[0] == '\0')
			abort(); /* a refusal names what is wrong */
		return 0;
	}
	if (m.nworkers < 0 || m.nworkers > MANIFEST_MAX_WORKERS)
		abort();
	if (m.has_web) {
		check_field(m.web.name);
		check_field(m.web.command);
		check_field(m.web.health_path);
		if (m.web.port < 1 || m.web.port > 65535)
			abort();
	}
	for (int i = 0; i < m.nworkers; i++) {
		check_field(m.workers[i].name);
		check_field(m.workers[i].command);
	}
	if (m.has_build)
		check_field(m.build_command);
	buf_init(&out, 1u << 20);
	if (manifest_runconf(&m, &out) < 0)
		abort();
	buf_release(&out);
	return 0;
}
