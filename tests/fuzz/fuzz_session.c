/*
 * libFuzzer target: what a browser (or anyone) sends the console's
 * sign-in: the Cookie header, Origin and Host, X-Forwarded-For, a typed
 * setup code, a console Host, the cross-site walls' headers.  None may crash or
 * read past its input; a cookie token found is always 43 base64url characters,
 * and a code that normalizes has exactly 16 symbols.
 */
#include <stdint.h>
#include <string.h>

#include "api/guard.h"
#include "api/session.h"
#include "config/hosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[SESSION_COOKIE_MAX_BYTES + 64], tok[SESSION_TOKEN_LEN + 1];
	char addr[48], code[SESSION_CODE_CHARS + 1];
	const char *half;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	half = s + size / 2;
	for (size_t pos = 0, n = 0;
	     session_cookie_next(s, SESSION_COOKIE, &pos, tok) && n < 64; n++)
		if (strlen(tok) != SESSION_TOKEN_LEN || pos > size)
			__builtin_trap();
	(void)guard_check(&(struct guard_head){.method = "POST",
	                                       .host = half,
	                                       .origin = s,
	                                       .sec_fetch_site = half,
	                                       .ctype = s,
	                                       .https = size & 1,
	                                       .has_body = size & 2});
	(void)session_origin_ok(s, half, size & 1);
	session_client_addr("127.0.0.1", true, s, addr, sizeof(addr));
	if (strlen(addr) >= sizeof(addr))
		__builtin_trap();
	if (session_code_normalize(s, code) &&
	    strlen(code) != SESSION_CODE_CHARS)
		__builtin_trap();
	(void)console_host_match("localhost", (const char *)data, size);
	(void)console_host_match("", (const char *)data, size);
	return 0;
}
