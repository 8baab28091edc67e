/*
 * libFuzzer target: what a browser (or anyone) sends the console's
 * sign-in: the Cookie header, Origin and Host, X-Forwarded-For, a typed
 * setup code, a console Host.  None may crash or read past its input;
 * a cookie token found is always 43 base64url characters, and a code
 * that normalizes has exactly 16 symbols.
 */
#include <stdint.h>
#include <string.h>

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
	if (session_cookie_token(s, tok) && strlen(tok) != SESSION_TOKEN_LEN)
		__builtin_trap();
	half = s + size / 2;
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
