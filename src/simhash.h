/*
 * simhash.h
 *	  The simhash type: a 64-bit fingerprint passed by value, its Datum
 *	  conversions and the Hamming distance between two.  Installed with the
 *	  extension (HEADERS), for C code that uses the type; everything else of
 *	  the extension is internal.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "postgres.h"

#include "fmgr.h"
#include "port/pg_bitutils.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"				/* VARSIZE and friends left postgres.h in 16 */
#endif

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

/* type I/O, callable through DirectFunctionCall */
extern Datum simhash_in(PG_FUNCTION_ARGS);
extern Datum simhash_out(PG_FUNCTION_ARGS);

#endif							/* SIMHASH_H */
