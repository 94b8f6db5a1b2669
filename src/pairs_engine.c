/*
 * pairs_engine.c
 *	  The permuted tables of Manku, Jain and Das Sarma (see pairs.h): the
 *	  choice of the number of blocks, the key of each table, and the
 *	  enumeration of every pair within k bits exactly once; then the rows
 *	  read and the per-id tables of the callers.
 */
#include "pairs.h"
#include "pairs_band.h"
#include "ball.h"
#include "mih.h"
#include "settings.h"
#include "simhash128.h"

#include <math.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/*
 * Cost model: a comparison costs 1; sorting and scanning a row for a table
 * costs PAIRS_ROW_COST, and reading or writing it in a temporary file
 * PAIRS_FILE_COST.
 */
#define PAIRS_ROW_COST			8.0
#define PAIRS_FILE_COST			2.0

/* comparisons between two looks at the clock inside one run of equal keys */
#define PAIRS_COMPARISONS_PER_CLOCK (INT64CONST(1) << 24)

/* ---- the tables ---- */

/* chooses the number of blocks b, minimizing the estimated cost */
void
pairs_plan(PairsState *st)
{
	double		n = (double) st->ntotal;
	double		passes = ceil((double) st->npartitions / Max(st->fanout, 1));
	double		row_cost = PAIRS_ROW_COST +
		(st->file != NULL ? (passes + 2) * PAIRS_FILE_COST : 0.0);
	double		best = -1.0;
	int			k = st->max_distance;
	int			b;
	int			i;

	/*
	 * The bands depend on the rows read and the recall alone, not on the
	 * collapse or work_mem: all three functions find the same pairs.
	 */
	if (simhash_pairs_recall < 1.0)
	{
		st->bands = simhash_bands_plan(st->width, k, (double) st->ninput,
									   simhash_pairs_recall, PAIRS_ROW_COST);
		st->ntables = st->bands->nbands;
		elog(DEBUG1, "%s: %lld rows, %d bands of %d bits, recall %.4f at distance %d",
			 st->fname, (long long) st->ntotal, st->ntables, st->bands->bits,
			 st->bands->recall, k);
		return;
	}
	/* 128 and 256 bits: the exact tables as masks */
	if (st->width > SIMHASH_BITS)
	{
		st->bands = simhash_bands_tables(st->width, k, n, row_cost);
		st->ntables = st->bands->nbands;
		elog(DEBUG1, "%s: %lld rows, %d tables of %d blocks",
			 st->fname, (long long) st->ntotal, st->ntables, st->bands->bits);
		return;
	}
	for (b = Max(k, 1); b <= SIMHASH_BITS; b++)
	{
		int			m = b - k;
		double		tables = simhash_binomial(b, m);
		double		keybits = (double) SIMHASH_BITS * m / b;
		double		cost;

		if (tables > SIMHASH_MAX_TABLES)
			break;
		cost = tables * (n * row_cost + n * n / 2.0 * exp2(-keybits));
		if (best < 0 || cost < best)
		{
			best = cost;
			st->nblocks = b;
			st->keyblocks = m;
			st->ntables = (int) tables;
		}
	}
	for (i = 0; i < st->nblocks; i++)
	{
		int			width = simhash_block_width(i, st->nblocks);

		st->block_shift[i] = SIMHASH_BITS - simhash_block_start(i, st->nblocks) - width;
		st->block_mask[i] = width == SIMHASH_BITS ? ~UINT64CONST(0) : (UINT64CONST(1) << width) - 1;
	}
	elog(DEBUG1, "%s: %lld rows, %d blocks, %d tables of %d blocks, %s",
		 st->fname, (long long) st->ntotal, st->nblocks, st->ntables, st->keyblocks,
		 st->file == NULL ? "in memory" :
		 psprintf("%d partitions, %d at a time", st->npartitions, st->fanout));
}

/* the key of the table made of blocks[0..keyblocks), in ascending order */
static void
pairs_table_key(PairsState *st, const int *blocks, PairsKey *key)
{
	int			m = st->keyblocks;
	uint64		bits = 0;
	uint64		chosen = 0;
	int			i;

	for (i = 0; i < m; i++)
	{
		bits |= st->block_mask[blocks[i]] << st->block_shift[blocks[i]];
		chosen |= UINT64CONST(1) << blocks[i];
	}
	pairs_mask_key(&bits, 1, key);
	key->earlier = m > 0 ? ((UINT64CONST(1) << blocks[m - 1]) - 1) & ~chosen : 0;
}

/*
 * is this table the first one whose bits all agree, for a pair whose
 * fingerprints differ in the bits of x[0..words) (x[0]: of fp)?
 */
static inline bool
pairs_first_table(const PairsState *st, const PairsKey *key, const uint64 *x)
{
	uint64		e;

	if (st->bands != NULL)
		return simhash_band_first(st->bands, st->table - 1, x);
	for (e = key->earlier; e != 0; e &= e - 1)
	{
		int			blk = pg_rightmost_one_pos64(e);

		if (((x[0] >> st->block_shift[blk]) & st->block_mask[blk]) == 0)
			return false;
	}
	return true;
}

/* compares every pair in a run of n rows of equal key */
static void
pairs_compare_run(PairsState *st, const PairsKey *key, const PairsRow *run, int64 n)
{
	int			words = st->words;
	int64		i;
	int64		j;

	for (i = 0; i < n - 1; i++)
	{
		const PairsRow *a = PAIRS_ROW(st, run, i);

		CHECK_FOR_INTERRUPTS();
		for (j = i + 1; j < n; j++)
		{
			const PairsRow *b = PAIRS_ROW(st, run, j);
			uint64		x[PAIRS_MAX_WORDS];
			int			d;
			int			w;

			x[0] = a->fp ^ b->fp;
			d = pg_popcount64(x[0]);
			for (w = 1; w < words; w++)
			{
				x[w] = a->lo[w - 1] ^ b->lo[w - 1];
				d += pg_popcount64(x[w]);
			}
			if (d > st->max_distance || !pairs_first_table(st, key, x))
				continue;
			if (a->id < b->id)
				st->emit(a->id, b->id, d, st->emit_arg);
			else
				st->emit(b->id, a->id, d, st->emit_arg);
			st->npairs++;
		}
		st->comparisons += n - 1 - i;
		if (st->comparisons >= PAIRS_COMPARISONS_PER_CLOCK)
		{
			st->comparisons = 0;
			pairs_progress(st);
		}
	}
}

static void
pairs_scan_runs(PairsState *st, const PairsKey *keyp, const PairsRow *rows, int64 n)
{
	const PairsKey key_copy = *keyp;
	const PairsKey *key = &key_copy;
	int64		start;
	int64		end;

	for (start = 0; start < n; start = end)
	{
		uint64		k = pairs_key(key, PAIRS_ROW(st, rows, start));

		CHECK_FOR_INTERRUPTS();
		for (end = start + 1; end < n && pairs_key(key, PAIRS_ROW(st, rows, end)) == k; end++)
			;
		if (end - start > 1)
			pairs_compare_run(st, key, PAIRS_ROW(st, rows, start), end - start);
	}
}

/*
 * Is the current table one this process enumerates?  With shares > 1, only
 * the tables of its share (simhash_pairs_share); each pair is emitted by its
 * first table only, so the shares of a plan emit disjoint sets of pairs
 * whose union is every pair.  With parallel workers, of those only the
 * tables it claims from the shared counter: the counter numbers the tables
 * of the share (1, 2, ...), and a process that reaches a table of the share
 * after the last one it claimed claims the next number.  It passes every
 * table of the share in order, so the number it claims is never below the
 * table it reaches, and each table goes to exactly one process.
 */
static inline bool
pairs_table_mine(PairsState *st)
{
	int			number = st->table;	/* among the tables of the share */

	if (st->shares > 1)
	{
		if ((st->table - 1) % st->shares != st->share)
			return false;
		number = (st->table - 1) / st->shares + 1;
	}
	if (st->next_table == NULL)
		return true;
	if (st->claimed < number)
		st->claimed = (int) pg_atomic_fetch_add_u32(st->next_table, 1) + 1;
	return st->claimed == number;
}

/* the rows grouped by the current table's key, their pairs emitted */
static void
pairs_table(PairsState *st, const PairsKey *key)
{
	pairs_group(st, key, pairs_scan_runs);
	if (st->table_done != NULL)
		st->table_done(st);
}

/* the pairs of the tables this process enumerates (pairs_table_mine) */
void
pairs_tables(PairsState *st)
{
	int			blocks[SIMHASH_BITS];
	int			m = st->keyblocks;
	int			i;

	if (st->bands != NULL)
	{
		for (st->table = 1; st->table <= st->ntables; st->table++)
		{
			PairsKey	key;

			const uint64 *mask = st->bands->masks + (Size) (st->table - 1) * st->bands->words;

			if (!pairs_table_mine(st))
				continue;
			pairs_mask_key(mask, st->bands->words, &key);
			pairs_table(st, &key);
		}
		return;
	}

	/* the m-subsets of the blocks, in lexicographic order */
	for (i = 0; i < m; i++)
		blocks[i] = i;
	for (st->table = 1;; st->table++)
	{
		PairsKey	key;

		if (pairs_table_mine(st))
		{
			pairs_table_key(st, blocks, &key);
			pairs_table(st, &key);
		}

		for (i = m - 1; i >= 0 && blocks[i] == st->nblocks - m + i; i--)
			;
		if (i < 0)
			break;
		blocks[i]++;
		for (i++; i < m; i++)
			blocks[i] = blocks[i - 1] + 1;
	}
}

/*
 * calls fn(id, rep, arg) for every row read from the query: for the
 * representatives (rep = id), then for the links
 */
void
pairs_for_each_row(PairsState *st, PairsRowCallback fn, void *arg)
{
	int64		done;
	int64		chunk;
	int64		i;

	if (st->file == NULL)
	{
		for (i = 0; i < st->nrows; i++)
		{
			int64		id = PAIRS_ROW(st, st->rows, i)->id;

			CHECK_FOR_INTERRUPTS();
			fn(id, id, arg);
		}
	}
	else
	{
		pairs_file_rewind(st, st->file);
		for (done = 0; done < st->ntotal; done += chunk)
		{
			chunk = Min(st->ntotal - done, st->scratch_len);
			pairs_file_read(st, st->file, st->scratch, chunk * st->row_size);
			for (i = 0; i < chunk; i++)
			{
				int64		id = PAIRS_ROW(st, st->scratch, i)->id;

				CHECK_FOR_INTERRUPTS();
				fn(id, id, arg);
			}
		}
	}

	if (st->links_file == NULL)
	{
		for (i = 0; i < st->nlinks; i++)
		{
			CHECK_FOR_INTERRUPTS();
			fn(st->links[i].id, st->links[i].rep, arg);
		}
		return;
	}
	pairs_file_rewind(st, st->links_file);
	for (done = 0; done < st->nlinks; done += chunk)
	{
		PairsLink  *links = (PairsLink *) st->scratch;

		chunk = Min(st->nlinks - done, st->scratch_len);
		pairs_file_read(st, st->links_file, links, chunk * sizeof(PairsLink));
		for (i = 0; i < chunk; i++)
		{
			CHECK_FOR_INTERRUPTS();
			fn(links[i].id, links[i].rep, arg);
		}
	}
}

/*
 * Enters id in a per-id table of simhash_clusters or simhash_dedup, within
 * work_mem * hash_mem_multiplier.
 */
void *
pairs_map_enter(PairsState *st, HTAB *map, int64 id, bool *found)
{
	void	   *entry = hash_search(map, &id, HASH_ENTER, found);

	if (!*found && MemoryContextMemAllocated(st->map_cxt, true) > st->map_limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s needs more than work_mem * hash_mem_multiplier for its table of fingerprints with near-duplicates",
						st->fname),
				 errdetail("The table holds %ld of the %lld distinct fingerprints in %zu kB.",
						   hash_get_num_entries(map), (long long) st->ntotal,
						   st->map_limit / 1024),
				 errhint("Raise work_mem or hash_mem_multiplier for this query.")));
	return entry;
}

HTAB *
pairs_id_map(PairsState *st, const char *name, Size entrysize)
{
	HASHCTL		ctl;

	st->map_cxt = AllocSetContextCreate(st->cxt, "simhash per-id table", ALLOCSET_DEFAULT_SIZES);
	st->map_limit = get_hash_memory_limit();
	ctl.keysize = sizeof(int64);
	ctl.entrysize = entrysize;
	ctl.hcxt = st->map_cxt;
	return hash_create(name, 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}
