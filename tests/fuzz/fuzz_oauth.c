/*
 * libFuzzer target: the token endpoint's answers and the stored login
 * row (src/cred/oauthparse.c).  The endpoint's answer comes from the
 * network: whatever the bytes, parsing must not crash, leak or read out
 * of bounds, a token it accepts is printable ASCII within its bound
 * (it goes into a header line), and a refusal leaves nothing behind.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cred/credentials.h"
#include "cred/oauth_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_token(const char *t, size_t max)
{
	size_t n = strnlen(t, max + 1);

	if (n > max)
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] > 0x7e)
			__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cred_oauth old = {.access_token = "old-access",
	                                      .refresh_token = "old-refresh",
	                                      .scope = "user:inference"};
	const char *text = (const char *)data;
	struct cred_oauth out;
	char why[128];

	for (int pass = 0; pass < 2; pass++) {
		int rc = cred_oauth_parse(text, size, 1000, pass ? &old : NULL,
		                          &out, why, sizeof(why));
		if (rc == 0) {
			check_token(out.access_token, CRED_OAUTH_TOKEN_MAX);
			check_token(out.refresh_token, CRED_OAUTH_TOKEN_MAX);
			if (out.access_token[0] == '\0' || out.expires_at < 0)
				__builtin_trap();
		} else if (out.access_token[0] || why[0] == '\0') {
			__builtin_trap(); /* refused: wiped, and said why */
		}
		cred_oauth_wipe(&out);
	}
	if (cred_oauth_row_parse(text, size, &out) == 0)
		check_token(out.access_token, CRED_OAUTH_TOKEN_MAX);
	cred_oauth_wipe(&out);
	return 0;
}
