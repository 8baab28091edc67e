/* lib/num: a decimal number read whole, or the default. */
#include <limits.h>

#include "lib/num.h"
#include "unit.h"

static void
num_reads_whole_numbers(void)
{
	CHECK(num_long("0", -1) == 0);
	CHECK(num_long("137", -1) == 137);
	CHECK(num_long("-5", 0) == -5);
	CHECK(num_long("+20", 0) == 20);
	CHECK(num_long("9223372036854775807", 0) == LONG_MAX);
}

static void
num_refuses_the_rest(void)
{
	CHECK(num_long(NULL, -1) == -1);
	CHECK(num_long("", -1) == -1);
	CHECK(num_long(" 1", -1) == -1);
	CHECK(num_long("1 ", -1) == -1);
	CHECK(num_long("12x", -1) == -1);
	CHECK(num_long("-", -1) == -1);
	CHECK(num_long("0x10", -1) == -1);
	CHECK(num_long("99999999999999999999", -1) == -1);
}

static const struct unit_test tests[] = {
    {"reads whole numbers", num_reads_whole_numbers},
    {"refuses the rest, with the default", num_refuses_the_rest},
};

int
main(void)
{
	return UNIT_RUN("num", tests);
}
