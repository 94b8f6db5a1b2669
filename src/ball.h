/*
 * ball.h
 *	  The simhash_ball type (every fingerprint within a radius of a center;
 *	  ball.c, ball_io.c) and the range check of a threshold or distance.
 */
#ifndef SIMHASH_BALL_H
#define SIMHASH_BALL_H

#include "simhash.h"

/* a ball: every fingerprint within radius bits of center */
typedef struct SimhashBall
{
	simhash		center;
	int32		radius;
	int32		padding;
} SimhashBall;

#define BALL_MIN_RADIUS		(-1)	/* the empty ball */

#define DatumGetSimhashBallP(X)		((SimhashBall *) DatumGetPointer(X))
#define PG_GETARG_SIMHASH_BALL_P(n) DatumGetSimhashBallP(PG_GETARG_DATUM(n))

extern void simhash_check_threshold(const char *name, int32 value, int32 bits);
extern void simhash_check_distance(int32 k);

/* ball_io.c: the text form of a ball of bits-bit fingerprints */
extern bool simhash_read_ball_text(FunctionCallInfo fcinfo, const char *str, const char *typname,
								   int bits, const char *example, const char **center,
								   int32 *radius);

#endif							/* SIMHASH_BALL_H */
