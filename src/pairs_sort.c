/*
 * pairs_sort.c
 *	  The bottom layer of the whole-table functions (see pairs.h): progress
 *	  notices, the memory and temporary files of a call (a row into memory or
 *	  the spill file), and the least significant digit first radix sort of
 *	  rows by a key.
 */
#include "pairs.h"

#include "miscadmin.h"
#include "utils/memutils.h"

/* least significant digit first radix sort, at most this many bits a pass */
#define PAIRS_RADIX_BITS		11

/* ---- progress ---- */

/*
 * A NOTICE every PAIRS_NOTICE_INTERVAL_MS.  It names the work, not the
 * function: the engines also run inside simhash_lineage, the keyed forms and
 * the forms with a linkage, and PostgreSQL's CONTEXT line of the notice names
 * the function the user called.
 */
void
pairs_progress(PairsState *st)
{
	TimestampTz now = GetCurrentTimestamp();

	if (now < st->next_notice)
		return;
	st->next_notice = TimestampTzPlusMilliseconds(now, PAIRS_NOTICE_INTERVAL_MS);
	if (st->checking_ids)
		ereport(NOTICE,
				(errmsg("near-duplicate search: checking that the %lld ids are distinct",
						(long long) st->ntotal)));
	else if (st->collapsing)
		ereport(NOTICE,
				(errmsg("near-duplicate search: grouping the identical fingerprints of %lld rows",
						(long long) st->ninput)));
	else if (st->table == 0)
		ereport(NOTICE,
				(errmsg("near-duplicate search: %lld rows read so far", (long long) st->ntotal)));
	else if (st->workers > 0)
		ereport(NOTICE,
				(errmsg("near-duplicate search: table %d of %d, %lld pairs so far, %d parallel workers",
						st->table, st->ntables, (long long) st->npairs, st->workers)));
	else
		ereport(NOTICE,
				(errmsg("near-duplicate search: table %d of %d, %lld pairs so far",
						st->table, st->ntables, (long long) st->npairs)));
}

/* ---- memory ---- */

PairsRow *
pairs_resize(PairsState *st, PairsRow *array, int64 len)
{
	if (array == NULL)
		return MemoryContextAllocHuge(st->cxt, len * st->row_size);
	return repalloc_huge(array, len * st->row_size);
}

/* a temporary file of the call (also when made while the query runs) */
BufFile *
pairs_file_create(PairsState *st)
{
	MemoryContext old_cxt = MemoryContextSwitchTo(st->cxt);
	BufFile    *file = BufFileCreateTemp(false);

	MemoryContextSwitchTo(old_cxt);
	return file;
}

/* reads n rows (or links) */
void
pairs_file_read(PairsState *st, BufFile *file, void *buf, Size bytes)
{
	if (BufFileRead(file, buf, bytes) != bytes)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from %s temporary file: %m", st->fname)));
}

void
pairs_file_rewind(PairsState *st, BufFile *file)
{
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in %s temporary file: %m", st->fname)));
}

/* a row of the query (or of the workers), into memory or the spill file */
void
pairs_add_row(PairsState *st, int64 id, const uint64 *fp)
{
	PairsRow   *row;
	uint64		h = 0;
	int			i;

	if (st->nrows == st->rows_len)
	{
		int64		capacity = st->budget / (2 * st->row_size);

		if (st->rows_len < capacity)
		{
			st->rows_len = Min(st->rows_len * 2, capacity);
			st->rows = pairs_resize(st, st->rows, st->rows_len);
		}
		else
		{
			/* full: from now on rows[] is the write buffer of the spill file */
			if (st->file == NULL)
				st->file = pairs_file_create(st);
			BufFileWrite(st->file, st->rows, st->nrows * st->row_size);
			st->nrows = 0;
		}
	}
	if (st->collapse)
	{
		for (i = st->words - 1; i > 0; i--)
			h = pairs_mix(h ^ fp[i]);
		addHyperLogLog(&st->distinct, (uint32) pairs_mix(fp[0] ^ h));
	}
	if (st->ntotal > 0 && id <= st->last_id)
		st->ids_ascending = false;
	st->last_id = id;
	row = PAIRS_ROW(st, st->rows, st->nrows);
	row->id = id;
	for (i = 0; i < st->words; i++)
		PAIRS_WORDS(row)[i] = fp[i];
	st->nrows++;
	st->ntotal++;
}

/* ---- sorting and grouping by a key ---- */

/*
 * The key made of the bits set in mask[0..words), the most significant word
 * (of fp) first: one segment per run of adjacent bits, in that order.
 */
void
pairs_mask_key(const uint64 *masks, int words, PairsKey *key)
{
	int			out;
	int			s;
	int			word;

	memset(key, 0, sizeof(PairsKey));
	for (word = 0; word < words; word++)
	{
		uint64		mask = masks[word];

		while (mask != 0)
		{
			int			at = pg_rightmost_one_pos64(mask);
			uint64		run = mask >> at;
			int			width = run == ~UINT64CONST(0) ? SIMHASH_BITS : pg_rightmost_one_pos64(~run);

			Assert(key->nsegs < PAIRS_MAX_SEGMENTS);
			key->word[key->nsegs] = word;
			key->wide |= word > 0;
			key->shift[key->nsegs] = at;
			key->mask[key->nsegs] = width == SIMHASH_BITS ? ~UINT64CONST(0) : (UINT64CONST(1) << width) - 1;
			key->outshift[key->nsegs] = width;	/* width, for now */
			key->nsegs++;
			key->bits += width;
			mask = width == SIMHASH_BITS ? 0 : mask & ~(key->mask[key->nsegs - 1] << at);
		}
	}
	Assert(key->bits <= 64);
	/* the first segment is the most significant */
	out = key->bits;
	for (s = 0; s < key->nsegs; s++)
	{
		out -= key->outshift[s];
		key->outshift[s] = out;
	}
}

/*
 * Sorts rows[0..n) by key, least significant digit first, with tmp[0..n) as
 * the other buffer; returns the one that holds the result.  Hot loops read a
 * local copy of the key, which no store can alias (fp and id are int64s).
 */
PairsRow *
pairs_sort(PairsState *st, const PairsKey *keyp, PairsRow *rows, PairsRow *tmp, int64 n)
{
	const PairsKey key_copy = *keyp;
	const PairsKey *key = &key_copy;
	int			npasses = (key->bits + PAIRS_RADIX_BITS - 1) / PAIRS_RADIX_BITS;
	int			width;
	uint64		digit_mask;
	int64	   *counts;
	int64		i;
	int			p;

	if (npasses == 0 || n < 2)
		return rows;
	width = (key->bits + npasses - 1) / npasses;
	digit_mask = (UINT64CONST(1) << width) - 1;
	counts = MemoryContextAllocZero(st->cxt, (sizeof(int64) * npasses) << width);

	/* the histograms of all digits in one read */
	for (i = 0; i < n; i++)
	{
		uint64		k = pairs_key(key, PAIRS_ROW(st, rows, i));

		CHECK_FOR_INTERRUPTS();
		for (p = 0; p < npasses; p++)
			counts[((int64) p << width) + ((k >> (p * width)) & digit_mask)]++;
	}

	for (p = 0; p < npasses; p++)
	{
		int64	   *offset = counts + ((int64) p << width);
		int			shift = p * width;
		int64		sum = 0;
		int64		d;
		PairsRow   *swap;

		/* every row has the same digit: nothing would move */
		if (offset[(pairs_key(key, rows) >> shift) & digit_mask] == n)
			continue;
		for (d = 0; d <= digit_mask; d++)
		{
			int64		c = offset[d];

			offset[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
		{
			const PairsRow *row = PAIRS_ROW(st, rows, i);

			CHECK_FOR_INTERRUPTS();
			pairs_row_copy(st, PAIRS_ROW(st, tmp, offset[(pairs_key(key, row) >> shift) & digit_mask]++), row);
		}
		swap = rows;
		rows = tmp;
		tmp = swap;
	}
	pfree(counts);
	return rows;
}

/* sorts rows[0..n) and hands them to fn */
void
pairs_sort_and_call(PairsState *st, const PairsKey *key, int64 n, PairsGroupFn fn)
{
	PairsRow   *sorted = pairs_sort(st, key, st->rows, st->scratch, n);

	/* the buffer that holds the sorted rows becomes rows[] */
	if (sorted != st->rows)
	{
		int64		len = st->rows_len;

		st->scratch = st->rows;
		st->rows = sorted;
		st->rows_len = st->scratch_len;
		st->scratch_len = len;
	}
	fn(st, key, st->rows, n);
	pairs_progress(st);
}
