/*
 * pairs_collapse.c
 *	  Collapsing identical fingerprints for simhash_clusters() and
 *	  simhash_dedup() (see pairs.h): one row per distinct fingerprint (its
 *	  smallest id) goes on to the tables, the others become links to it; by a
 *	  sort in memory, or by hash tables over partitions when spilled.
 */
#include "pairs.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

/* bytes of a hash table entry (fingerprint -> smallest id), for sizing */
#define PAIRS_COLLAPSE_ENTRY_BYTES	64
/* partitions of the spilled collapse are sized for this many times the estimate */
#define PAIRS_HLL_MARGIN		1.25

/* ---- collapsing identical fingerprints ---- */

/* the first word of the fingerprint (all of a simhash) as the key */
static const PairsKey pairs_fp_key = {.nsegs = 1,.mask = {~UINT64CONST(0)},.bits = SIMHASH_BITS};

/* sorts rows[0..n) by the whole fingerprint; returns the buffer that holds them */
static PairsRow *
pairs_sort_by_fp(PairsState *st, PairsRow *rows, PairsRow *tmp, int64 n)
{
	PairsRow   *sorted = rows;
	int			w;

	/* least significant word first: the sort is stable */
	for (w = st->words - 1; w >= 0; w--)
	{
		PairsKey	key = pairs_fp_key;

		key.word[0] = w;
		key.wide = w > 0;
		sorted = pairs_sort(st, &key, sorted, sorted == rows ? tmp : rows, n);
	}
	return sorted;
}

/*
 * In memory: sorts the rows by fingerprint, moves one row per fingerprint
 * (with its smallest id) to the other buffer and writes the links of the
 * others over the sorted rows (a link is written at an index no greater than
 * that of the row being read).
 */
static void
pairs_collapse_memory(PairsState *st)
{
	int64		n = st->nrows;
	PairsRow   *sorted = pairs_sort_by_fp(st, st->rows, st->scratch, n);
	PairsRow   *reps = sorted == st->rows ? st->scratch : st->rows;
	PairsLink  *links = (PairsLink *) sorted;
	int64		nreps = 0;
	int64		nlinks = 0;
	int64		start;
	int64		end;

	for (start = 0; start < n; start = end)
	{
		const PairsRow *first = PAIRS_ROW(st, sorted, start);
		int64		rep = first->id;
		PairsRow   *out = PAIRS_ROW(st, reps, nreps);
		int64		i;

		CHECK_FOR_INTERRUPTS();
		for (end = start + 1; end < n && pairs_same_fp(st, PAIRS_ROW(st, sorted, end), first); end++)
			rep = Min(rep, PAIRS_ROW(st, sorted, end)->id);
		pairs_row_copy(st, out, first);
		out->id = rep;
		nreps++;
		/* a link is no larger than a row: it overwrites rows already read */
		for (i = start; i < end; i++)
		{
			int64		id = PAIRS_ROW(st, sorted, i)->id;

			if (id == rep)
				continue;
			links[nlinks].id = id;
			links[nlinks].rep = rep;
			nlinks++;
		}
	}

	/* give back what the links and the representatives do not use */
	if (nlinks > 0)
		st->links = repalloc_huge(links, nlinks * sizeof(PairsLink));
	else
		pfree(links);
	st->nlinks = nlinks;
	st->rows = pairs_resize(st, reps, Max(nreps, 1));
	st->rows_len = Max(nreps, 1);
	st->nrows = nreps;
	st->ntotal = nreps;
	st->scratch_len = Max(nreps, 1);
	st->scratch = pairs_resize(st, NULL, st->scratch_len);
}

typedef struct CollapseEntry
{
	uint64		fp[PAIRS_MAX_WORDS];	/* hash key: the fingerprint's words */
	int64		rep;			/* its smallest id */
} CollapseEntry;

typedef struct PairsCollapse
{
	MemoryContext cxt;			/* of the hash table of one partition */
	BufFile    *reps;			/* the representatives */
	int64		nreps;
} PairsCollapse;

/*
 * Spilled: the smallest id of each fingerprint of a partition in a hash
 * table (one entry per distinct fingerprint, however many rows share it),
 * then a second read writes the links.
 */
static void
pairs_collapse_part(PairsState *st, const PairsKey *key, BufFile *file, int64 n, void *arg)
{
	PairsCollapse *pc = (PairsCollapse *) arg;
	HASHCTL		ctl;
	HTAB	   *groups;
	HASH_SEQ_STATUS seq;
	CollapseEntry *entry;
	int			pass;

	/* the fingerprint's words are adjacent in a row */
	ctl.keysize = st->width / BITS_PER_BYTE;
	ctl.entrysize = sizeof(CollapseEntry);
	ctl.hcxt = pc->cxt;
	groups = hash_create("simhash identical fingerprints", 1024, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (pass = 0; pass < 2; pass++)
	{
		int64		done;
		int64		chunk;

		pairs_file_rewind(st, file);
		for (done = 0; done < n; done += chunk)
		{
			int64		i;

			chunk = Min(n - done, st->scratch_len);
			pairs_file_read(st, file, st->scratch, chunk * st->row_size);
			for (i = 0; i < chunk; i++)
			{
				const PairsRow *row = PAIRS_ROW(st, st->scratch, i);
				bool		found;

				CHECK_FOR_INTERRUPTS();
				if (pass == 0)
				{
					entry = hash_search(groups, &row->fp, HASH_ENTER, &found);
					if (!found || row->id < entry->rep)
						entry->rep = row->id;
				}
				else
				{
					entry = hash_search(groups, &row->fp, HASH_FIND, NULL);
					if (row->id != entry->rep)
					{
						PairsLink	link = {row->id, entry->rep};

						BufFileWrite(st->links_file, &link, sizeof(PairsLink));
						st->nlinks++;
					}
				}
			}
		}
	}
	hash_seq_init(&seq, groups);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		uint64		buf[1 + PAIRS_MAX_WORDS];
		PairsRow   *row = (PairsRow *) buf;
		int			i;

		row->id = entry->rep;
		for (i = 0; i < st->words; i++)
			PAIRS_WORDS(row)[i] = entry->fp[i];
		BufFileWrite(pc->reps, row, st->row_size);
		pc->nreps++;
	}
	MemoryContextReset(pc->cxt);
	pairs_progress(st);
}

/*
 * Spilled: partitions by a hash of the fingerprint, sized by the estimated
 * number of distinct fingerprints so that the hash table of one takes the
 * memory of rows[], which is freed meanwhile.  The representatives go to a
 * new spill file, or to memory when they fit.
 */
static void
pairs_collapse_spilled(PairsState *st)
{
	PairsCollapse pc;
	double		per_partition = (double) st->rows_len * st->row_size / PAIRS_COLLAPSE_ENTRY_BYTES;
	double		distinct = Min(estimateHyperLogLog(&st->distinct) * PAIRS_HLL_MARGIN,
							   (double) st->ntotal);

	pfree(st->rows);
	st->rows = NULL;
	pc.cxt = AllocSetContextCreate(st->cxt, "simhash identical fingerprints", ALLOCSET_DEFAULT_SIZES);
	pc.reps = pairs_file_create(st);
	pc.nreps = 0;
	st->links_file = pairs_file_create(st);
	elog(DEBUG1, "%s: about %.0f distinct fingerprints in %lld rows",
		 st->fname, distinct / PAIRS_HLL_MARGIN, (long long) st->ntotal);
	pairs_split(st, &pairs_fp_key, st->file, st->ntotal,
				(int) Max(ceil(distinct / per_partition), 1), 0, pairs_collapse_part, &pc);
	MemoryContextDelete(pc.cxt);
	BufFileClose(st->file);
	st->ntotal = pc.nreps;
	pairs_file_rewind(st, pc.reps);
	if (pc.nreps <= (int64) (st->budget / (2 * st->row_size)))
	{
		/* few distinct fingerprints: in memory from now on */
		st->file = NULL;
		st->rows_len = Max(pc.nreps, 1);
		st->rows = pairs_resize(st, NULL, st->rows_len);
		st->nrows = pc.nreps;
		pairs_file_read(st, pc.reps, st->rows, pc.nreps * st->row_size);
		BufFileClose(pc.reps);
		st->scratch_len = st->rows_len;
		st->scratch = pairs_resize(st, st->scratch, st->scratch_len);
	}
	else
	{
		st->file = pc.reps;
		pairs_spill_layout(st);
	}
}

/* keeps one row per distinct fingerprint, the others as links */
void
pairs_collapse(PairsState *st)
{
	st->collapsing = true;
	if (st->file == NULL)
		pairs_collapse_memory(st);
	else
		pairs_collapse_spilled(st);
	st->collapsing = false;
	st->collapsed = true;
}
