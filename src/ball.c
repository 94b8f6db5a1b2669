/*
 * ball.c
 *	  Near-duplicate predicates and their building blocks: the simhash_ball
 *	  operators (the type's I/O is in ball_io.c), simhash_within(), the %
 *	  operator with its simhash.max_distance setting, the block functions, and
 *	  the arithmetic of multi-index hashing that the GIN and hamming classes
 *	  share (probe counts, radii per block).
 */
#include "radius.h"
#include "hamming.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

int			simhash_max_distance_guc = SIMHASH_DEFAULT_MAX_DISTANCE;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("simhash.max_distance",
							"Largest Hamming distance at which the % operator considers two fingerprints near-duplicates.",
							NULL,
							&simhash_max_distance_guc,
							SIMHASH_DEFAULT_MAX_DISTANCE, 0, SIMHASH_BITS,
							PGC_USERSET, 0,
							NULL, simhash_max_distance_assign, NULL);
	simhash_similar_init();
	hamming_init_reloptions();
	MarkGUCPrefixReserved("simhash");
}

void
simhash_check_distance(int32 k)
{
	if (k < 0 || k > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("Hamming distance %d is out of range", k),
				 errhint("A distance between two simhash values is between 0 and 64.")));
}

void
simhash_check_blocks(int nblocks)
{
	if (nblocks < SIMHASH_MIN_BLOCKS || nblocks > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of blocks must be between %d and %d, not %d",
						SIMHASH_MIN_BLOCKS, SIMHASH_BITS, nblocks)));
}

/* the share of uniformly random fingerprints of "bits" bits within k bits of a given one */
double
simhash_random_within_fraction_of(int k, int bits)
{
	double		term = 1.0;		/* C(bits, i) */
	double		sum = 0.0;
	int			i;

	if (k < 0)
		return 0.0;
	if (k >= bits)
		return 1.0;
	for (i = 0; i <= k; i++)
	{
		sum += term;
		term = term * (bits - i) / (i + 1);
	}
	return sum / ldexp(1.0, bits);
}

/* the same for 64-bit fingerprints */
double
simhash_random_within_fraction(int k)
{
	return simhash_random_within_fraction_of(k, SIMHASH_BITS);
}

/* values of width bits within r bits of a given one: sum of C(width, i), i <= r */
int64
simhash_probe_count(int width, int r)
{
	int64		term = 1;
	int64		sum = 0;
	int			i;

	for (i = 0; i <= r && i <= width; i++)
	{
		sum += term;
		term = term * (width - i) / (i + 1);
	}
	return sum;
}

/*
 * Radii per block whose sum(radius + 1) is total: a row within total - 1 bits
 * of the query is then within radius[i] bits of it in some block i (a radius
 * of -1 probes nothing).  Spread evenly, the remainder to the last blocks
 * (the narrowest, when widths differ).
 */
void
simhash_spread_radii(int *radius, int nblocks, int total)
{
	int			base = total / nblocks;
	int			extra = total % nblocks;
	int			i;

	for (i = 0; i < nblocks; i++)
		radius[i] = base - 1 + (i >= nblocks - extra ? 1 : 0);
}

/* ---- predicates ---- */

PG_FUNCTION_INFO_V1(simhash_in_ball);
Datum
simhash_in_ball(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(1);

	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), ball->center) <= ball->radius);
}

PG_FUNCTION_INFO_V1(simhash_ball_contains);
Datum
simhash_ball_contains(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);

	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(1), ball->center) <= ball->radius);
}

PG_FUNCTION_INFO_V1(simhash_within);
Datum
simhash_within(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <= PG_GETARG_INT32(2));
}

PG_FUNCTION_INFO_V1(simhash_at_distance);
Datum
simhash_at_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) == PG_GETARG_INT32(2));
}

PG_FUNCTION_INFO_V1(simhash_similar);
Datum
simhash_similar(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <= simhash_similar_threshold());
}

/* distance comparisons; the planner support rewrites them when it can */
#define DISTANCE_CMP_FUNC(name, op) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(PG_GETARG_INT32(0) op PG_GETARG_INT32(1)); \
}

DISTANCE_CMP_FUNC(simhash_distance_lt, <)
DISTANCE_CMP_FUNC(simhash_distance_le, <=)
DISTANCE_CMP_FUNC(simhash_distance_eq, ==)
DISTANCE_CMP_FUNC(simhash_distance_gt, >)
DISTANCE_CMP_FUNC(simhash_distance_ge, >=)

/* ---- blocks ---- */

static void
check_block(int32 i, int32 nblocks)
{
	simhash_check_blocks(nblocks);
	if (i < 1 || i > nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block number %d is out of range", i),
				 errhint("Blocks are numbered from 1 (most significant bits) to %d.", nblocks)));
}

PG_FUNCTION_INFO_V1(simhash_block);
Datum
simhash_block(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	int32		i = PG_GETARG_INT32(1);
	int32		nblocks = PG_GETARG_INT32(2);

	check_block(i, nblocks);
	PG_RETURN_INT64((int64) simhash_block_value(fp, i - 1, nblocks));
}

PG_FUNCTION_INFO_V1(simhash_blocks);
Datum
simhash_blocks(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	int32		nblocks = PG_GETARG_INT32(1);
	Datum	   *values;
	int			i;

	simhash_check_blocks(nblocks);
	values = palloc(nblocks * sizeof(Datum));
	for (i = 0; i < nblocks; i++)
		values[i] = Int64GetDatum((int64) simhash_block_value(fp, i, nblocks));
	PG_RETURN_ARRAYTYPE_P(construct_array(values, nblocks, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

PG_FUNCTION_INFO_V1(simhash_block_bits);
Datum
simhash_block_bits(PG_FUNCTION_ARGS)
{
	int32		i = PG_GETARG_INT32(0);
	int32		nblocks = PG_GETARG_INT32(1);

	check_block(i, nblocks);
	PG_RETURN_INT32(simhash_block_width(i - 1, nblocks));
}
