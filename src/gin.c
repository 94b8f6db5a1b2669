/*
 * gin.c
 *	  Support functions of the GIN operator class simhash_ops (layout and
 *	  query logic in gin_plan.h): key extraction, probe generation, and the
 *	  consistent functions that bound each candidate's distance.
 */
#include "mih.h"
#include "strategy.h"
#include "ball.h"
#include "settings.h"
#include "gin_plan.h"

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "miscadmin.h"

#define KEY_BLOCK_SHIFT 56

static inline int64
make_key(int block, uint64 value)
{
	return (int64) (((uint64) block << KEY_BLOCK_SHIFT) | value);
}

static inline int
key_block(int64 key)
{
	return (int) ((uint64) key >> KEY_BLOCK_SHIFT);
}

static inline uint64
key_value(int64 key)
{
	return (uint64) key & ((UINT64CONST(1) << KEY_BLOCK_SHIFT) - 1);
}

static int
index_blocks(FunctionCallInfo fcinfo)
{
	if (PG_HAS_OPCLASS_OPTIONS())
		return ((SimhashGinOptions *) PG_GET_OPCLASS_OPTIONS())->blocks;
	return SIMHASH_GIN_DEFAULT_BLOCKS;
}

PG_FUNCTION_INFO_V1(simhash_gin_options);
Datum
simhash_gin_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(SimhashGinOptions));
	add_local_int_reloption(relopts, "blocks",
							"number of blocks the 64 bits are split into",
							SIMHASH_GIN_DEFAULT_BLOCKS,
							SIMHASH_GIN_MIN_BLOCKS, SIMHASH_GIN_MAX_BLOCKS,
							offsetof(SimhashGinOptions, blocks));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_value);
Datum
simhash_gin_extract_value(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	int32	   *nentries = (int32 *) PG_GETARG_POINTER(1);
	int			nblocks = index_blocks(fcinfo);
	Datum	   *keys = palloc(nblocks * sizeof(Datum));
	int			i;

	for (i = 0; i < nblocks; i++)
		keys[i] = Int64GetDatum(make_key(i, simhash_block_value(fp, i, nblocks)));
	*nentries = nblocks;
	PG_RETURN_POINTER(keys);
}

/* append every value within radius bits of base (in a width-bit block) */
static void
add_probes(Datum *keys, int32 *n, int block, uint64 base, int width, int radius,
		   int from_bit)
{
	int			bit;

	keys[(*n)++] = Int64GetDatum(make_key(block, base));
	if (radius == 0)
		return;
	for (bit = from_bit; bit < width; bit++)
		add_probes(keys, n, block, base ^ (UINT64CONST(1) << bit), width, radius - 1, bit + 1);
}

PG_FUNCTION_INFO_V1(simhash_gin_extract_query);
Datum
simhash_gin_extract_query(PG_FUNCTION_ARGS)
{
	int32	   *nentries = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *search_mode = (int32 *) PG_GETARG_POINTER(6);
	SimhashProbePlan *plan = palloc(sizeof(SimhashProbePlan));
	simhash		query;
	int			k;
	Datum	   *keys;
	int			i;

	switch (strategy)
	{
		case SIMHASH_STRATEGY_IN_BALL:
			{
				SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);

				query = ball->center;
				k = ball->radius;
				break;
			}
		case SIMHASH_STRATEGY_SIMILAR:
			query = PG_GETARG_SIMHASH(0);
			k = simhash_similar_threshold();
			break;
		case SIMHASH_STRATEGY_EQUAL:
			query = PG_GETARG_SIMHASH(0);
			k = 0;
			break;
		default:
			elog(ERROR, "simhash_ops: unrecognized strategy number %d", strategy);
	}

	*nentries = 0;
	if (k < 0)
		PG_RETURN_POINTER(NULL);	/* the empty ball: nothing can match */

	simhash_plan_probes(plan, query, k, index_blocks(fcinfo));
	if (plan->nprobes > SIMHASH_GIN_MAX_PROBES || plan->cheaper_to_scan)
	{
		/* too many probes: read the whole index and check every row */
		*search_mode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}

	keys = palloc(plan->nprobes * sizeof(Datum));
	for (i = 0; i < plan->nblocks; i++)
		add_probes(keys, nentries, i, plan->query_block[i],
				   simhash_block_width(i, plan->nblocks), plan->radius[i], 0);
	Assert(*nentries == plan->nprobes);
	for (i = 0; i < *nentries; i++)
	{
		int64		key = DatumGetInt64(keys[i]);
		int			b = key_block(key);

		plan->key_block[i] = (uint8) b;
		plan->key_distance[i] = (uint8) pg_popcount64(key_value(key) ^ plan->query_block[b]);
	}

	/* every key shares the plan */
	*extra_data = palloc(*nentries * sizeof(Pointer));
	for (i = 0; i < *nentries; i++)
		(*extra_data)[i] = (Pointer) plan;
	PG_RETURN_POINTER(keys);
}

/*
 * Lower bound of a candidate's distance, given which probes it matched.
 * Each row has exactly one key per block, so at most one probe per block is
 * true.  Probes reported as "maybe" (GIN_MAYBE) count with their distance
 * but leave the block unresolved.  Returns the bound; *exact tells whether
 * every block was resolved, in which case the bound is the distance.
 */
static int
distance_lower_bound(const SimhashProbePlan *plan, const GinTernaryValue *check,
					 int nkeys, bool *exact)
{
	int			block_dist[SIMHASH_GIN_MAX_BLOCKS];
	bool		resolved[SIMHASH_GIN_MAX_BLOCKS];
	int			bound = 0;
	int			i;

	if (nkeys == plan->nblocks)
	{
		/*
		 * One exact probe per block (k < nblocks, the common case): key i is
		 * block i, and the bound is the number of blocks that did not match.
		 */
		*exact = true;
		for (i = 0; i < nkeys; i++)
		{
			bound += (check[i] == GIN_FALSE);
			*exact &= (check[i] == GIN_TRUE);
		}
		return bound;
	}
	for (i = 0; i < plan->nblocks; i++)
	{
		block_dist[i] = plan->radius[i] + 1;
		resolved[i] = false;
	}
	for (i = 0; i < nkeys; i++)
	{
		int			b;
		int			d;

		if (check[i] == GIN_FALSE)
			continue;
		b = plan->key_block[i];
		d = plan->key_distance[i];
		if (check[i] == GIN_TRUE)
		{
			block_dist[b] = d;
			resolved[b] = true;
		}
		else if (!resolved[b] && d < block_dist[b])
			block_dist[b] = d;
	}
	*exact = true;
	for (i = 0; i < plan->nblocks; i++)
	{
		bound += block_dist[i];
		*exact &= resolved[i];
	}
	return bound;
}

PG_FUNCTION_INFO_V1(simhash_gin_consistent);
Datum
simhash_gin_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);
	GinTernaryValue tcheck[SIMHASH_GIN_MAX_PROBES];
	SimhashProbePlan *plan;
	bool		exact;
	int			bound;
	int			i;

	if (nkeys == 0)
	{
		/* whole-index scan: the heap tuple decides */
		*recheck = true;
		PG_RETURN_BOOL(true);
	}
	plan = (SimhashProbePlan *) extra_data[0];
	for (i = 0; i < nkeys; i++)
		tcheck[i] = check[i] ? GIN_TRUE : GIN_FALSE;
	bound = distance_lower_bound(plan, tcheck, nkeys, &exact);
	*recheck = !exact;
	PG_RETURN_BOOL(bound <= plan->max_distance);
}

PG_FUNCTION_INFO_V1(simhash_gin_triconsistent);
Datum
simhash_gin_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	SimhashProbePlan *plan;
	bool		exact;
	int			bound;

	if (nkeys == 0)
		PG_RETURN_GIN_TERNARY_VALUE(GIN_MAYBE);
	plan = (SimhashProbePlan *) extra_data[0];
	bound = distance_lower_bound(plan, check, nkeys, &exact);
	if (bound > plan->max_distance)
		PG_RETURN_GIN_TERNARY_VALUE(GIN_FALSE);
	PG_RETURN_GIN_TERNARY_VALUE(exact ? GIN_TRUE : GIN_MAYBE);
}
