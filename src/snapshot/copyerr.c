/*
 * A failed copy's errno as the API's error: the one wording every copy
 * of an app's files (take, restore, fork, a remote fetch) answers with.
 */
#include <errno.h>
#include <string.h>

#include "disk/copytree.h"
#include "lib/err.h"
#include "snapshot/internal.h"

int
snap_copy_err(int err, const char *what, struct err *e)
{
	if (err == ENOSPC || err == EDQUOT)
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full; %s", what);
	if (err == EMLINK || err == EFBIG)
		return err_set(e, 413, "too_large",
		               "the app's files are nested deeper than %d "
		               "directories or number over %d; %s",
		               COPYTREE_MAX_DEPTH, COPYTREE_MAX_FILES, what);
	return ERR_INTERNAL(e, "cannot copy the app's files (%s); %s",
	                    strerror(err), what);
}
