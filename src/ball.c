/*
 * ball.c
 *	  Near-duplicate predicates and their building blocks: the simhash_ball
 *	  operators (the type itself is in ball_io.c), simhash_within(),
 *	  the % operator with its simhash.max_distance setting, the block
 *	  functions, and the probe planner shared by the GIN opclass and the
 *	  planner support.
 */
#include "simhash_gin.h"

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
							NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("simhash");
#else
	EmitWarningsOnPlaceholders("simhash");
#endif
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

/* the share of uniformly random fingerprints within k bits of a given one */
double
simhash_random_within_fraction(int k)
{
	double		term = 1.0;		/* C(64, i) */
	double		sum = 0.0;
	int			i;

	if (k < 0)
		return 0.0;
	if (k >= SIMHASH_BITS)
		return 1.0;
	for (i = 0; i <= k; i++)
	{
		sum += term;
		term = term * (SIMHASH_BITS - i) / (i + 1);
	}
	return sum / ldexp(1.0, SIMHASH_BITS);
}

static int64
binomial_prefix_sum(int n, int r)
{
	int64		term = 1;
	int64		sum = 0;
	int			i;

	for (i = 0; i <= r && i <= n; i++)
	{
		sum += term;
		term = term * (n - i) / (i + 1);
	}
	return sum;
}

/*
 * Choosing the probe radii.  Any radii with sum(radius + 1) >= k + 1 give
 * exact answers; they differ in cost.  The minimal sum probes least, but a
 * larger one can make the distance bound reject far more rows inside the
 * index (for k = 6 with 5 blocks, radius 1 everywhere lets only rows that
 * match two blocks through, instead of every row that matches one).  Radii
 * are spread evenly, the remainder to the narrowest (last) blocks, and the
 * sum is chosen by a cost model of uniformly random fingerprints: probes,
 * posting-list items read (each costs a pass over the probes), and
 * candidates fetched from the heap.
 */
#define PLAN_ROWS			4194304.0	/* table size the model assumes */
#define COST_PROBE			1.0 /* one entry-tree descent */
#define COST_POSTING_ITEM	0.03	/* one item pointer read */
#define COST_ITEM_PER_PROBE	0.001	/* the scan revisits every probe per item */
#define COST_CANDIDATE		1.0 /* one heap fetch and recheck */
#define COST_SEQ_ROW		0.05	/* one row of a sequential scan */

static void
spread_radii(int *radius, int nblocks, int total)
{
	int			base = total / nblocks;
	int			extra = total % nblocks;
	int			i;

	for (i = 0; i < nblocks; i++)
		radius[i] = base - 1 + (i >= nblocks - extra ? 1 : 0);
}

static double
plan_cost(const int *radius, int nblocks, int k, int64 *nprobes)
{
	double		bound[SIMHASH_BITS + 2] = {1.0};	/* P(distance bound = x), x > k lumped */
	double		matched = 0.0;	/* expected probe matches per row */
	double		candidates = 0.0;
	int			i,
				x,
				c;

	*nprobes = 0;
	for (i = 0; i < nblocks; i++)
	{
		int			width = simhash_block_width(i, nblocks);
		int			r = Min(radius[i], width);
		double		p[SIMHASH_BITS + 2];
		double		next[SIMHASH_BITS + 2] = {0.0};
		double		term = 1.0; /* C(width, c) */
		double		within = 0.0;

		for (c = 0; c <= r; c++)
		{
			p[c] = term / ldexp(1.0, width);
			within += p[c];
			term = term * (width - c) / (c + 1);
		}
		p[r + 1] = Max(0.0, 1.0 - within);
		matched += within;
		*nprobes += binomial_prefix_sum(width, r);
		for (x = 0; x <= k + 1; x++)
			for (c = 0; c <= r + 1; c++)
				next[Min(x + c, k + 1)] += bound[x] * p[c];
		memcpy(bound, next, sizeof(bound));
	}
	for (x = 0; x <= k; x++)
		candidates += bound[x];
	return *nprobes * COST_PROBE +
		PLAN_ROWS * (matched * (COST_POSTING_ITEM + *nprobes * COST_ITEM_PER_PROBE) +
					 candidates * COST_CANDIDATE);
}

/* the cost model's choice for one (k, nblocks), computed once per backend */
typedef struct RadiusChoice
{
	bool		known;
	int			total;			/* sum of (radius + 1) */
	int64		nprobes;
	bool		cheaper_to_scan;
} RadiusChoice;

static RadiusChoice radius_choices[SIMHASH_GIN_MAX_BLOCKS + 1][SIMHASH_BITS + 1];

static const RadiusChoice *
choose_radii(int k, int nblocks)
{
	RadiusChoice *choice = &radius_choices[nblocks][k];
	int			minimal = Max(nblocks, k + 1);
	int			radius[SIMHASH_GIN_MAX_BLOCKS];
	double		best_cost = -1.0;
	int			total;

	if (choice->known)
		return choice;
	choice->total = minimal;
	spread_radii(radius, nblocks, minimal);
	plan_cost(radius, nblocks, k, &choice->nprobes);
	for (total = minimal; total <= minimal + 2 * nblocks; total++)
	{
		int64		nprobes;
		double		cost;

		spread_radii(radius, nblocks, total);
		cost = plan_cost(radius, nblocks, k, &nprobes);
		if (nprobes <= SIMHASH_GIN_MAX_PROBES && (best_cost < 0 || cost < best_cost))
		{
			best_cost = cost;
			choice->total = total;
			choice->nprobes = nprobes;
		}
	}
	/* probing would cost more than reading every row: say so */
	choice->cheaper_to_scan = best_cost < 0 || best_cost > PLAN_ROWS * COST_SEQ_ROW;
	choice->known = true;
	return choice;
}

void
simhash_plan_probes(SimhashProbePlan *plan, simhash query, int k, int nblocks)
{
	const RadiusChoice *choice;
	int			i;

	Assert(k >= 0 && k <= SIMHASH_BITS);
	Assert(nblocks >= 1 && nblocks <= SIMHASH_GIN_MAX_BLOCKS);
	choice = choose_radii(k, nblocks);
	plan->query = query;
	plan->max_distance = k;
	plan->nblocks = nblocks;
	spread_radii(plan->radius, nblocks, choice->total);
	plan->nprobes = choice->nprobes;
	plan->cheaper_to_scan = choice->cheaper_to_scan;
	for (i = 0; i < nblocks; i++)
		plan->query_block[i] = simhash_block_value(query, i, nblocks);
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
	PG_RETURN_BOOL(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <= simhash_max_distance_guc);
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
