/*
 * simhash128.h
 *	  The 128-bit fingerprint type simhash128: 16 bytes passed by reference,
 *	  two 64-bit halves, the most significant first.  The text form is 32
 *	  hexadecimal digits, the binary form and the bytea cast 16 bytes, both
 *	  most significant byte first.
 */
#ifndef SIMHASH128_H
#define SIMHASH128_H

#include "simhash.h"

typedef struct Simhash128
{
	uint64		hi;				/* bits 127..64: what simhash() gives for text */
	uint64		lo;				/* bits 63..0 */
} Simhash128;

#define SIMHASH128_BITS			128
#define SIMHASH128_HEX_DIGITS	32

#define DatumGetSimhash128P(X)		((Simhash128 *) DatumGetPointer(X))
#define Simhash128PGetDatum(X)		PointerGetDatum(X)
#define PG_GETARG_SIMHASH128_P(n)	DatumGetSimhash128P(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH128_P(x)	return Simhash128PGetDatum(x)

static inline int
simhash128_distance_of(const Simhash128 *a, const Simhash128 *b)
{
	return pg_popcount64(a->hi ^ b->hi) + pg_popcount64(a->lo ^ b->lo);
}

/* a palloc'd value */
static inline Simhash128 *
simhash128_make(uint64 hi, uint64 lo)
{
	Simhash128 *result = palloc(sizeof(Simhash128));

	result->hi = hi;
	result->lo = lo;
	return result;
}

/* the text form (type128.c) */
extern void simhash128_parse_hex(const char *digits, Simhash128 *result);
extern void simhash128_format_hex(const Simhash128 *v, char *out);

/* a ball: every 128-bit fingerprint within radius bits of center */
typedef struct Simhash128Ball
{
	Simhash128	center;
	int32		radius;			/* -1 (empty) to 128 */
	int32		padding;
} Simhash128Ball;

#define DatumGetSimhash128BallP(X)		((Simhash128Ball *) DatumGetPointer(X))
#define PG_GETARG_SIMHASH128_BALL_P(n)	DatumGetSimhash128BallP(PG_GETARG_DATUM(n))

#endif							/* SIMHASH128_H */
