/*
 * fuzz.h
 *	  Shared by the libFuzzer targets: calling the extension's SQL-callable
 *	  functions without a server (see stubs.c).
 */
#ifndef SIMHASH_FUZZ_H
#define SIMHASH_FUZZ_H

#include "postgres.h"

#include <setjmp.h>

#include "fmgr.h"

extern sigjmp_buf *fuzz_error_jump;
extern int	fuzz_error_sqlstate;	/* of the last ereport(ERROR) */

/* frees every palloc'd block still live, as the server resets a context */
extern void fuzz_reset_memory(void);

/* a text datum of len bytes at s */
static inline text *
fuzz_text(const char *s, size_t len)
{
	text	   *t = palloc(VARHDRSZ + len);

	SET_VARSIZE(t, VARHDRSZ + len);
	memcpy(VARDATA(t), s, len);
	return t;
}

/*
 * Calls fn with up to three arguments; false (and fuzz_error_sqlstate set) if
 * it raised an ERROR.
 */
static inline bool
fuzz_call(PGFunction fn, Datum *result, int nargs, Datum a0, Datum a1, Datum a2)
{
	LOCAL_FCINFO(fcinfo, 3);
	sigjmp_buf	jump;

	InitFunctionCallInfoData(*fcinfo, NULL, nargs, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = a0;
	fcinfo->args[1].value = a1;
	fcinfo->args[2].value = a2;
	fcinfo->args[0].isnull = fcinfo->args[1].isnull = fcinfo->args[2].isnull = false;
	fuzz_error_sqlstate = 0;
	if (sigsetjmp(jump, 0) != 0)
	{
		fuzz_error_jump = NULL;
		return false;
	}
	fuzz_error_jump = &jump;
	*result = fn(fcinfo);
	fuzz_error_jump = NULL;
	return true;
}

/* a report that libFuzzer counts as a crash, with the input saved */
#define FUZZ_CHECK(cond) \
	do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)

#endif							/* SIMHASH_FUZZ_H */
