/* struct err helpers. */
#include "lib/err.h"

#include <stdarg.h>
#include <stdio.h>

int
err_set(struct err *e, int status, const char *code, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}
