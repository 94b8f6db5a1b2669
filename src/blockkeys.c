/*
 * blockkeys.c
 *	  Manku et al.'s permuted tables as rows, so that whole-table
 *	  near-duplicate detection can run where the rows are (a Citus table
 *	  distributed by key): simhash_block_keys() gives a fingerprint's key in
 *	  every table, simhash_first_common_table() names the one table that
 *	  emits a pair, so that a self-join on the keys gives every pair once.
 *
 * The 64 bits are cut into nblocks blocks (the layout of simhash_block()).
 * Two fingerprints within max_distance bits agree exactly on at least
 * m = nblocks - max_distance blocks.  A table is a choice of m blocks; the
 * C(nblocks, m) tables are numbered from 1 in lexicographic order of their
 * blocks (the order of simhash_pairs()).  A row's key in a table is the
 * concatenation of its values in the table's blocks, most significant block
 * first.  Two rows within max_distance bits have equal keys in every table
 * whose blocks they agree on, and the first of those tables, made of the
 * first m blocks on which they agree, is the one that emits the pair.
 */
#include "mih.h"

#include "funcapi.h"
#include "miscadmin.h"

/* each row is stored once per table: more tables than this is a mistake */
#define BLOCK_KEYS_MAX_TABLES 1000

/* C(n, r) when at most BLOCK_KEYS_MAX_TABLES, else some larger number */
static uint64
choose(int n, int r)
{
	uint64		c = 1;
	int			i;

	if (r < 0 || r > n)
		return 0;
	/* the intermediate values C(n - r + i, i) are exact and never decrease */
	for (i = 1; i <= r && c <= BLOCK_KEYS_MAX_TABLES; i++)
		c = c * (n - r + i) / i;
	return c;
}

/* checks the arguments; returns m, the number of blocks of a table */
static int
check_layout(int32 max_distance, int32 nblocks)
{
	if (max_distance < 0 || max_distance >= SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance must be between 0 and %d, not %d",
						SIMHASH_BITS - 1, max_distance)));
	if (nblocks <= max_distance || nblocks > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nblocks must be between max_distance + 1 and %d, not %d",
						SIMHASH_BITS, nblocks),
				 errhint("Two fingerprints within max_distance bits agree on nblocks - max_distance blocks, which must be at least one; max_distance + 2 is a good start.")));
	if (choose(nblocks, max_distance) > BLOCK_KEYS_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d blocks for max_distance %d make more than %d tables",
						nblocks, max_distance, BLOCK_KEYS_MAX_TABLES),
				 errdetail("Every row is stored once per table, C(nblocks, max_distance) times."),
				 errhint("Use fewer blocks.")));
	return nblocks - max_distance;
}

PG_FUNCTION_INFO_V1(simhash_block_keys);
Datum
simhash_block_keys(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	int32		nblocks = PG_GETARG_INT32(2);
	int			m = check_layout(PG_GETARG_INT32(1), nblocks);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			blocks[SIMHASH_BITS];
	int32		table;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	/* the m-subsets of the blocks, in lexicographic order */
	for (i = 0; i < m; i++)
		blocks[i] = i;
	for (table = 1;; table++)
	{
		uint64		key = 0;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < m; i++)
		{
			int			width = simhash_block_width(blocks[i], nblocks);

			key = (width == SIMHASH_BITS ? 0 : key << width) |
				simhash_block_value(fp, blocks[i], nblocks);
		}
		values[0] = Int32GetDatum(table);
		values[1] = Int64GetDatum((int64) key);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

		for (i = m - 1; i >= 0 && blocks[i] == nblocks - m + i; i--)
			;
		if (i < 0)
			break;
		blocks[i]++;
		for (i++; i < m; i++)
			blocks[i] = blocks[i - 1] + 1;
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(simhash_first_common_table);
Datum
simhash_first_common_table(PG_FUNCTION_ARGS)
{
	uint64		x = PG_GETARG_SIMHASH(0) ^ PG_GETARG_SIMHASH(1);
	int32		nblocks = PG_GETARG_INT32(3);
	int			m = check_layout(PG_GETARG_INT32(2), nblocks);
	uint64		rank = 0;
	int			chosen = 0;
	int			prev = -1;
	int			i;

	/*
	 * The table is made of the first m blocks on which a and b agree.  Its
	 * rank counts the m-subsets that come before it: for the j-th chosen
	 * block c, those whose j-th block is smaller than c (and greater than
	 * the previous chosen block), with any m - 1 - j blocks after it.
	 */
	for (i = 0; i < nblocks && chosen < m; i++)
	{
		int			v;

		if (simhash_block_value(x, i, nblocks) != 0)
			continue;
		for (v = prev + 1; v < i; v++)
			rank += choose(nblocks - 1 - v, m - 1 - chosen);
		prev = i;
		chosen++;
	}
	if (chosen < m)
		PG_RETURN_NULL();		/* more than max_distance bits apart */
	PG_RETURN_INT32((int32) rank + 1);
}
