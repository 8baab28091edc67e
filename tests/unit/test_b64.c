/* lib/b64: base64 both ways, strict on what it reads. */
#include <string.h>

#include "lib/b64.h"
#include "unit.h"

static void
b64_rfc4648_vectors(void)
{
	const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	const char *text[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
	                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	unsigned char back[16];
	char enc[16];

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		b64_encode(plain[i], strlen(plain[i]), enc);
		CHECK(strcmp(enc, text[i]) == 0);
		CHECK(b64_decode(text[i], strlen(text[i]), back) ==
		      (long)strlen(plain[i]));
		CHECK(memcmp(back, plain[i], strlen(plain[i])) == 0);
	}
}

static void
b64_round_trips_every_byte(void)
{
	unsigned char in[256], out[256];
	char enc[B64_ENC_LEN(256) + 1];

	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)(255 - i);
	for (size_t n = 250; n <= 256; n++) {
		b64_encode(in, n, enc);
		CHECK(strlen(enc) == B64_ENC_LEN(n));
		CHECK(b64_decode(enc, strlen(enc), out) == (long)n);
		CHECK(memcmp(in, out, n) == 0);
	}
}

static void
b64_refuses_what_is_not_base64(void)
{
	const char *bad[] = {
	    "Zg=",    "Zg=a", "Z===", "Zh==",     "Zm9=", "Zm 9v",
	    "Zm9v\n", "=Zm9", "Zm-v", "Zg==Zm9v", "Zm9_"};
	unsigned char out[16];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(b64_decode(bad[i], strlen(bad[i]), out) == -1);
}

static const struct unit_test tests[] = {
    {"the RFC 4648 vectors", b64_rfc4648_vectors},
    {"every byte round trips", b64_round_trips_every_byte},
    {"refuses what is not padded base64", b64_refuses_what_is_not_base64},
};

int
main(void)
{
	return UNIT_RUN("b64", tests);
}
