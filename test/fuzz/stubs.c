/*
 * stubs.c
 *	  The few parts of the PostgreSQL backend that the extension's pure C code
 *	  calls, for the libFuzzer targets and test/bench/fpbench's driver, which run
 *	  without a server.  The rest (unicode_normalize, psprintf, UTF-8
 *	  verification) comes from the installation's libpgcommon.a.
 *
 *	  Memory: palloc and friends are malloc with a registry of live blocks,
 *	  and fuzz_reset_memory() frees what is left, as the server resets the
 *	  memory context of a call; AddressSanitizer still sees every block.
 *	  Errors: ereport(ERROR) longjmps back to the target (fuzz_try()).
 *	  Everything else the linked files reference is unreachable from the
 *	  targets and aborts if reached.
 */
#include "postgres.h"

#include <setjmp.h>

#include "fuzz.h"
#include "common/unicode_norm.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

/* ---- errors ---- */

sigjmp_buf *fuzz_error_jump = NULL;
int			fuzz_error_sqlstate = 0;

bool
errstart(int elevel, const char *domain)
{
	fuzz_error_sqlstate = ERRCODE_INTERNAL_ERROR;	/* PostgreSQL's default */
	return elevel >= ERROR;		/* lower levels are not reported */
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (fuzz_error_jump == NULL)
		abort();				/* an error outside fuzz_try() */
	siglongjmp(*fuzz_error_jump, 1);
}

int
errcode(int sqlerrcode)
{
	fuzz_error_sqlstate = sqlerrcode;
	return 0;
}

int
errmsg(const char *fmt,...)
{
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	return 0;
}

int
errdetail(const char *fmt,...)
{
	return 0;
}

int
errhint(const char *fmt,...)
{
	return 0;
}

/* ---- memory ---- */

static void **live;				/* open addressing, NULL = empty, DELETED = tombstone */
static size_t live_size;
static size_t live_used;
/* the slots filled since the last reset (a slot may repeat): a reset visits
 * only these, not the whole table, which keeps the size of the largest input */
static size_t *filled;
static size_t filled_len;
static size_t filled_cap;

#define DELETED ((void *) 1)

static size_t
live_slot(void *p)
{
	return (size_t) (((uintptr_t) p >> 4) * UINT64CONST(0x9E3779B97F4A7C15)) & (live_size - 1);
}

static void
live_add(void *p)
{
	size_t		i;

	if (2 * (live_used + 1) > live_size)
	{
		void	  **old = live;
		size_t		oldsize = live_size;

		live_size = live_size ? 2 * live_size : 1024;
		live = calloc(live_size, sizeof(void *));
		live_used = 0;
		filled_len = 0;
		for (i = 0; i < oldsize; i++)
			if (old[i] != NULL && old[i] != DELETED)
				live_add(old[i]);
		free(old);
	}
	for (i = live_slot(p); live[i] != NULL && live[i] != DELETED; i = (i + 1) & (live_size - 1))
		;
	live[i] = p;
	live_used++;
	if (filled_len == filled_cap)
	{
		filled_cap = filled_cap ? 2 * filled_cap : 1024;
		filled = realloc(filled, filled_cap * sizeof(size_t));
		if (filled == NULL)
			abort();
	}
	filled[filled_len++] = i;
}

/* forgets p; false if it was not palloc'd (libpgcommon's frontend code mallocs) */
static bool
live_remove(void *p)
{
	size_t		i;

	if (live_size == 0)
		return false;
	for (i = live_slot(p); live[i] != NULL; i = (i + 1) & (live_size - 1))
		if (live[i] == p)
		{
			live[i] = DELETED;
			return true;
		}
	return false;
}

void
fuzz_reset_memory(void)
{
	size_t		k;

	for (k = 0; k < filled_len; k++)
	{
		size_t		i = filled[k];

		if (live[i] != NULL && live[i] != DELETED)
			free(live[i]);
		live[i] = NULL;
	}
	filled_len = 0;
	live_used = 0;
}

void *
palloc_extended(Size size, int flags)
{
	void	   *p;

	if (!(flags & MCXT_ALLOC_HUGE) && !AllocSizeIsValid(size))
		abort();
	p = (flags & MCXT_ALLOC_ZERO) ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
	if (p == NULL)
		abort();
	live_add(p);
	return p;
}

void *
palloc(Size size)
{
	return palloc_extended(size, 0);
}

void *
palloc0(Size size)
{
	return palloc_extended(size, MCXT_ALLOC_ZERO);
}

void *
repalloc(void *pointer, Size size)
{
	void	   *p;

	if (!AllocSizeIsValid(size) || !live_remove(pointer))
		abort();
	p = realloc(pointer, size ? size : 1);
	if (p == NULL)
		abort();
	live_add(p);
	return p;
}

/* the huge variants: the table of distinct features of a fingerprint */
MemoryContext CurrentMemoryContext = NULL;

void *
MemoryContextAllocHuge(MemoryContext context, Size size)
{
	return palloc_extended(size, MCXT_ALLOC_HUGE);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return palloc0(size);
}

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return palloc_extended(size, flags);
}

/* earlier revisions grow their feature table so (test/bench/fpbench) */
void *
repalloc_huge(void *pointer, Size size)
{
	void	   *p;

	if (!AllocHugeSizeIsValid(size) || !live_remove(pointer))
		abort();
	p = realloc(pointer, size ? size : 1);
	if (p == NULL)
		abort();
	live_add(p);
	return p;
}

void
pfree(void *pointer)
{
	live_remove(pointer);
	free(pointer);
}

char *
pstrdup(const char *in)
{
	size_t		len = strlen(in) + 1;

	return memcpy(palloc(len), in, len);
}

/* ---- the server's state ---- */

volatile sig_atomic_t InterruptPending = false;
int			work_mem = 4096;	/* kB: the default */

void
ProcessInterrupts(void)
{
}

int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

/*
 * Exact, if slower than PostgreSQL's: YES when the text is normalized, NO
 * otherwise (the quick check may answer MAYBE, which callers treat as NO;
 * the frontend libpgcommon does not have it).
 */
UnicodeNormalizationQC
unicode_is_normalized_quickcheck(UnicodeNormalizationForm form, const pg_wchar *input)
{
	pg_wchar   *normalized = unicode_normalize(form, input);
	size_t		i;
	bool		same = true;

	for (i = 0; same && (input[i] != 0 || normalized[i] != 0); i++)
		same = input[i] == normalized[i];
	free(normalized);			/* frontend unicode_normalize() mallocs */
	return same ? UNICODE_NORM_QC_YES : UNICODE_NORM_QC_NO;
}

/* the callers pass plain, uncompressed, inline values */
struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum) && !VARATT_IS_SHORT(datum))
		abort();
	return datum;
}

struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum))
		abort();
	return datum;
}

/* one-dimensional arrays (test/bench/fpbench) */
int
ArrayGetNItems(int ndim, const int *dims)
{
	if (ndim > 1)
		abort();
	return ndim == 1 ? dims[0] : 0;
}

char *
text_to_cstring(const text *t)
{
	int			len = VARSIZE_ANY_EXHDR(t);
	char	   *s = palloc(len + 1);

	memcpy(s, VARDATA_ANY(t), len);
	s[len] = '\0';
	return s;
}

/* ---- unreachable from the targets ---- */

#define UNREACHABLE(decl) decl { abort(); }

UNREACHABLE(char *pg_server_to_any(const char *s, int len, int encoding))
UNREACHABLE(Tuplesortstate *tuplesort_begin_datum(Oid datumType, Oid sortOperator, Oid sortCollation,
												  bool nullsFirstFlag, int workMem,
												  SortCoordinate coordinate, int sortopt))
UNREACHABLE(void tuplesort_putdatum(Tuplesortstate *state, Datum val, bool isNull))
UNREACHABLE(void tuplesort_performsort(Tuplesortstate *state))
UNREACHABLE(bool tuplesort_getdatum(Tuplesortstate *state, bool forward, Datum *val, bool *isNull,
									Datum *abbrev))
UNREACHABLE(void tuplesort_end(Tuplesortstate *state))
UNREACHABLE(int AggCheckCallContext(FunctionCallInfo fcinfo, MemoryContext *aggcontext))
UNREACHABLE(int64 pq_getmsgint64(StringInfo msg))
UNREACHABLE(unsigned int pq_getmsgint(StringInfo msg, int b))
UNREACHABLE(void pq_begintypsend(StringInfo buf))
UNREACHABLE(bytea *pq_endtypsend(StringInfo buf))
UNREACHABLE(void enlargeStringInfo(StringInfo str, int needed))
UNREACHABLE(void *MemoryContextAlloc(MemoryContext context, Size size))
UNREACHABLE(void simhash_check_threshold(const char *name, int32 value, int32 bits))
