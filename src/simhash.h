/*
 * simhash.h
 *	  Declarations shared by the simhash extension's C files: the 64-bit
 *	  fingerprint type, the block layout used by indexes and batch joins, and
 *	  the fingerprint builder.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"

/* A fingerprint is a plain uint64, passed by value. */
typedef uint64 simhash;

#define DatumGetSimhash(X)		((simhash) DatumGetInt64(X))
#define SimhashGetDatum(X)		Int64GetDatum((int64) (X))
#define PG_GETARG_SIMHASH(n)	DatumGetSimhash(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH(x)	return SimhashGetDatum(x)

#define SIMHASH_BITS			64

static inline int
simhash_distance(simhash a, simhash b)
{
	return pg_popcount64(a ^ b);
}

/*
 * Block layout: the 64 bits are split into nblocks contiguous blocks, block 0
 * holding the most significant bits.  The first (64 % nblocks) blocks are one
 * bit wider than the others.
 */
#define SIMHASH_MIN_BLOCKS		1

static inline int
simhash_block_width(int i, int nblocks)
{
	return SIMHASH_BITS / nblocks + (i < SIMHASH_BITS % nblocks ? 1 : 0);
}

/* first bit of block i, counted from the most significant bit */
static inline int
simhash_block_start(int i, int nblocks)
{
	int			extra = SIMHASH_BITS % nblocks;

	return i * (SIMHASH_BITS / nblocks) + (i < extra ? i : extra);
}

static inline uint64
simhash_block_value(simhash fp, int i, int nblocks)
{
	int			width = simhash_block_width(i, nblocks);
	int			shift = SIMHASH_BITS - simhash_block_start(i, nblocks) - width;

	return (fp >> shift) & (width == 64 ? ~UINT64CONST(0) : ((UINT64CONST(1) << width) - 1));
}

extern void simhash_check_blocks(int nblocks);

/* type I/O, callable through DirectFunctionCall */
extern Datum simhash_in(PG_FUNCTION_ARGS);
extern Datum simhash_out(PG_FUNCTION_ARGS);

/* the text form, shared by the input and output of simhash and simhash_ball */
#define SIMHASH_HEX_DIGITS		16

extern size_t simhash_parse_hex(const char *s, simhash *result);
extern void simhash_format_hex(simhash fp, char *out);
extern bool simhash_read_hex_text(FunctionCallInfo fcinfo, const char *str, const char *typname,
								  const char *example, const char **digits);

/* white space around a value, as int8in skips it (isspace in the C locale) */
static inline bool
simhash_isspace(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * An input function's error: on PostgreSQL 16 and later a soft error when the
 * caller passed an ErrorSaveContext (pg_input_is_valid(), COPY ... ON_ERROR),
 * and the function returns; otherwise (and always before 16) an ERROR.  Only
 * usable in the input function itself.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#define SIMHASH_INPUT_ERROR(fcinfo, rest) ereturn((fcinfo)->context, (Datum) 0, rest)
#else
#define SIMHASH_INPUT_ERROR(fcinfo, rest) ereport(ERROR, rest)
#endif

/*
 * Fingerprint builder: 64 vote counters.  Features of integer weight go
 * through a carry-save bit-plane counter (bit i of planes[p] is bit p of
 * counter i); weighted features through float8 sums.  simhash_acc_finish()
 * takes the sign of each counter (bit i set when counter i > 0; ties give 0).
 */
#define SIMHASH_PLANES 20

typedef struct SimhashAcc
{
	uint64		planes[SIMHASH_PLANES]; /* bit-sliced counts of set bits */
	uint64		nunit;			/* total integer weight added */
	uint32		pending;		/* weight added to planes since their flush */
	bool		flushed;		/* counts[] in use (zeroed at the first flush) */
	bool		has_weighted;	/* weighted[] in use (zeroed at the first) */
	int64		counts[64];		/* flushed counts of set bits */
	double		weighted[64];	/* signed sums of weighted features */
} SimhashAcc;

extern void simhash_acc_init(SimhashAcc *acc);
extern void simhash_acc_add_units(SimhashAcc *acc, const uint64 *hashes, int n);
extern void simhash_acc_add_times(SimhashAcc *acc, uint64 hash, uint32 weight);
extern void simhash_acc_add_weighted(SimhashAcc *acc, uint64 hash, double weight);
extern simhash simhash_acc_finish(SimhashAcc *acc);

/* tokenizer: see tokenize.c */
typedef enum SimhashFeatureKind
{
	SIMHASH_FEATURE_WORDS,		/* shingles of n tokens (words, CJK bigrams) */
	SIMHASH_FEATURE_CHARS,		/* n-grams of characters */
	SIMHASH_FEATURE_UNITS,		/* shingles of n tokens (words with '_', CJK
								 * characters) */
	SIMHASH_FEATURE_LETTERS		/* shingles of n letters, digits and CJK
								 * characters */
} SimhashFeatureKind;

typedef void (*SimhashFeatureCallback) (uint64 hash, void *arg);

/* s (*len bytes) in UTF-8: s itself, or a palloc'd conversion (fingerprint.c) */
extern char *simhash_as_utf8(const char *s, int *len);

extern void simhash_tokenize(const char *utf8, size_t len, SimhashFeatureKind kind,
							 int n, SimhashFeatureCallback emit, void *arg);

/* shingle sets: see similarity.c */
typedef struct Shingling
{
	int			n;				/* units in a shingle */
	SimhashFeatureKind kind;	/* SIMHASH_FEATURE_UNITS or _LETTERS */
} Shingling;

extern Shingling shingle_get_shingling(int32 n, text *units);
extern int64 *shingle_sorted_set(const char *data, int len, const Shingling *sh, Size *count);
extern double shingle_sorted_jaccard(const int64 *a, Size na, const int64 *b, Size nb);
struct ArrayType;
extern int64 *shingle_set_elements(struct ArrayType *arr, Size *count, const char *what);
/* the same features, handed over in batches (of a few hundred; faster) */
typedef void (*SimhashFeatureBatchCallback) (const uint64 *hashes, int n, void *arg);

extern void simhash_tokenize_batch(const char *utf8, size_t len, SimhashFeatureKind kind,
								   int n, SimhashFeatureBatchCallback emit, void *arg);

#endif							/* SIMHASH_H */
