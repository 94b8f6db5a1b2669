/*
 * ball.c
 *	  Near-duplicate predicates: the simhash_ball operators (the type's I/O
 *	  is in ball_io.c), simhash_within(), the % operator (its threshold is
 *	  simhash.max_distance, fixed at planning by similar_hook.c), the range
 *	  checks of distances and block counts, and the block functions.
 */
#include "mih.h"
#include "ball.h"
#include "settings.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

/*
 * The range check of every threshold or distance argument (a function's, a
 * batch function's, the hamming index's max_distance option): SQLSTATE 22023
 * and the range in the message, as for min_similarity.  No argument is
 * clamped; "fp <~> q <= k" is an integer comparison and takes any k (the
 * planner support keeps it exact, see support.c).
 */
void
simhash_check_threshold(const char *name, int32 value, int32 bits)
{
	if (value < 0 || value > bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and %d, not %d", name, bits, value),
				 errhint("A distance between two %d-bit fingerprints is between 0 and %d bits.",
						 bits, bits)));
}

void
simhash_check_distance(int32 k)
{
	simhash_check_threshold("max_distance", k, SIMHASH_BITS);
}

static void
simhash_check_blocks(int nblocks)
{
	if (nblocks < SIMHASH_MIN_BLOCKS || nblocks > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of blocks must be between %d and %d, not %d",
						SIMHASH_MIN_BLOCKS, SIMHASH_BITS, nblocks)));
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
	simhash_check_threshold("max_distance", PG_GETARG_INT32(2), SIMHASH_BITS);
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <= PG_GETARG_INT32(2));
}

PG_FUNCTION_INFO_V1(simhash_at_distance);
Datum
simhash_at_distance(PG_FUNCTION_ARGS)
{
	simhash_check_threshold("distance", PG_GETARG_INT32(2), SIMHASH_BITS);
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
