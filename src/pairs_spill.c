/*
 * pairs_spill.c
 *	  Rows that did not fit in work_mem (see pairs.h): the partitions of the
 *	  spill file by a hash of a key, each sorted in memory in turn (split once
 *	  more when it comes out too large), and the check that ids are distinct.
 */
#include "pairs.h"

#include <math.h>

#include "miscadmin.h"

/* spill partitions are sized to fill this share of their memory on average */
#define PAIRS_PARTITION_FILL	0.8
/* partition files written in one pass over the spill file */
#define PAIRS_MAX_FANOUT		1024

/*
 * Sizes the partitions of the ntotal spilled rows: the buffers of two levels
 * of partition files take a quarter of the budget, rows and their sort
 * scratch the rest.
 */
void
pairs_spill_layout(PairsState *st)
{
	Size		buffers;
	int64		capacity;

	st->fanout = Min(Max(st->budget / 8 / BLCKSZ, 2), PAIRS_MAX_FANOUT);
	buffers = Min((Size) 2 * st->fanout * BLCKSZ, st->budget / 2);
	capacity = Max((st->budget - buffers) / (2 * st->row_size), 1024);
	st->npartitions = (int) ceil(st->ntotal / (capacity * PAIRS_PARTITION_FILL));
	st->rows_len = capacity;
	st->rows = pairs_resize(st, st->rows, st->rows_len);
	st->scratch_len = capacity;
	st->scratch = pairs_resize(st, st->scratch, st->scratch_len);
}

/* a second split of a partition that came out too large hashes differently */
#define PAIRS_RESPLIT_SEED		UINT64CONST(0x9e3779b97f4a7c15)

/* spreads the keys over nparts partitions */
static inline int
pairs_partition(const PairsKey *key, const PairsRow *row, int nparts, uint64 seed)
{
	uint64		h = pairs_mix(pairs_key(key, row) ^ seed);

	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

/* ---- spilled rows: partitions ---- */

/*
 * Splits the n rows of input into nparts partitions by a hash of key (with
 * seed) and hands each partition file, rewound, to fn; a pass over input
 * writes up to F of them.
 */
void
pairs_split(PairsState *st, const PairsKey *key, BufFile *input, int64 n, int nparts,
			uint64 seed, PairsPartFn fn, void *arg)
{
	BufFile   **files = MemoryContextAlloc(st->cxt, sizeof(BufFile *) * st->fanout);
	int64	   *counts = MemoryContextAlloc(st->cxt, sizeof(int64) * st->fanout);
	int			first;

	for (first = 0; first < nparts; first += st->fanout)
	{
		int			batch = Min(st->fanout, nparts - first);
		int64		done;
		int64		chunk;
		int			p;

		for (p = 0; p < batch; p++)
		{
			files[p] = pairs_file_create(st);
			counts[p] = 0;
		}
		pairs_file_rewind(st, input);
		for (done = 0; done < n; done += chunk)
		{
			int64		i;

			chunk = Min(n - done, st->scratch_len);
			pairs_file_read(st, input, st->scratch, chunk * st->row_size);
			for (i = 0; i < chunk; i++)
			{
				PairsRow   *row = PAIRS_ROW(st, st->scratch, i);
				int			part = pairs_partition(key, row, nparts, seed) - first;

				CHECK_FOR_INTERRUPTS();
				if (part < 0 || part >= batch)
					continue;
				BufFileWrite(files[part], row, st->row_size);
				counts[part]++;
			}
		}
		for (p = 0; p < batch; p++)
		{
			pairs_file_rewind(st, files[p]);
			fn(st, key, files[p], counts[p], arg);
			BufFileClose(files[p]);
		}
	}
	pfree(files);
	pfree(counts);
}

/* ---- the duplicate id check ---- */

static void
pairs_check_unique(PairsState *st, const PairsKey *key, const PairsRow *rows, int64 n)
{
	int64		i;

	for (i = 1; i < n; i++)
	{
		int64		id = PAIRS_ROW(st, rows, i)->id;

		CHECK_FOR_INTERRUPTS();
		if (id == PAIRS_ROW(st, rows, i - 1)->id)
			pairs_duplicate_id(st, id);
	}
}

/* the error of an id that names more than one row */
void
pairs_duplicate_id(PairsState *st, int64 id)
{
	ereport(ERROR,
			(errcode(ERRCODE_CARDINALITY_VIOLATION),
			 errmsg("id %lld appears more than once in the query result",
					(long long) id),
			 errdetail("%s reports rows by their id, and id %lld names more than one row.",
					   st->fname, (long long) id),
			 errhint("The first column of the query must identify its rows, for example a primary key or row_number() OVER ().")));
}

/* ---- spilled rows: sorting partitions ---- */

/* a work_mem whose pairs_spill_layout() holds n rows in memory */
static Size
pairs_budget_for(const PairsState *st, int64 n)
{
	Size		rows = (Size) n * 2 * st->row_size;

	/* the buffers take a quarter, or at least two of each level */
	return Max(rows * 4 / 3, rows + 2 * 2 * BLCKSZ);
}

typedef struct PairsSortArg
{
	PairsGroupFn fn;
	uint64		seed;			/* of the split that made the partition */
} PairsSortArg;

static void pairs_sort_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg);

/*
 * A partition of n rows that do not fit in rows[]: split once more with
 * another hash, or fail when that did not help (rows of one key, which must
 * be compared in memory, exceed it).
 */
static void
pairs_part_overflow(PairsState *st, const PairsKey *key, BufFile *file, int64 n, PairsSortArg *arg)
{
	/*
	 * By the pigeonhole principle, the first rows_len rows of a partition
	 * with fewer distinct ids repeat one: name it.
	 */
	if (key->by_id)
	{
		pairs_file_read(st, file, st->rows, st->rows_len * st->row_size);
		pairs_sort_and_call(st, key, st->rows_len, pairs_check_unique);
		pairs_file_rewind(st, file);
	}
	/* as many parts as the file buffers allow: rows of other keys spread out */
	if (arg->seed == 0)
	{
		PairsSortArg sub = {arg->fn, PAIRS_RESPLIT_SEED};

		elog(DEBUG1, "%s: a partition of %lld rows is split again", st->fname, (long long) n);
		pairs_split(st, key, file, n, st->fanout, sub.seed, pairs_sort_part, &sub);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s needs more than work_mem to compare the rows of one key", st->fname),
			 key->by_id ?
			 errdetail("%lld ids fall into one partition of the id check, and work_mem holds %lld.",
					   (long long) n, (long long) st->rows_len) :
			 st->collapsed ?
			 errdetail("%lld of the %lld distinct fingerprints fall into one partition of table %d, agreeing on its blocks, and work_mem holds %lld.",
					   (long long) n, (long long) st->ntotal, st->table, (long long) st->rows_len) :
			 errdetail("%lld of the %lld rows fall into one partition of table %d, agreeing on its blocks, and work_mem holds %lld.",
					   (long long) n, (long long) st->ntotal, st->table, (long long) st->rows_len),
			 errhint("Raise work_mem to at least %lld kB for this query, or lower max_distance.",
					 (long long) pairs_budget_for(st, n) / 1024 + 1)));
}

/* loads a partition and hands it sorted to the PairsGroupFn of arg */
static void
pairs_sort_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg)
{
	PairsSortArg *sort_arg = (PairsSortArg *) arg;

	if (n > st->rows_len)
	{
		pairs_part_overflow(st, key, file, n, sort_arg);
		return;
	}
	pairs_file_read(st, file, st->rows, n * st->row_size);
	pairs_sort_and_call(st, key, n, sort_arg->fn);
}

/*
 * Hands the rows sorted by key to fn: all at once when they are in memory,
 * else one partition at a time.
 */
void
pairs_group(PairsState *st, const PairsKey *key, PairsGroupFn fn)
{
	PairsSortArg arg = {fn, 0};

	if (st->file == NULL)
		pairs_sort_and_call(st, key, st->nrows, fn);
	else
		pairs_split(st, key, st->file, st->ntotal, st->npartitions, 0, pairs_sort_part, &arg);
}

void
pairs_check_ids(PairsState *st)
{
	PairsKey	key = {.by_id = true,.bits = 64};

	if (st->ids_ascending)
		return;
	st->checking_ids = true;
	pairs_group(st, &key, pairs_check_unique);
	st->checking_ids = false;
}
