/*
 * hamming_probe.c
 *	  Reading the probe tables of a "hamming" index (layout in hamming.h):
 *	  every row of the tables within k bits of a fingerprint, each once, with
 *	  its heap TID, through the block map of a merged index.  A table's
 *	  buckets are read in order, each bucket's page pinned a few buckets
 *	  ahead (through the buffer that last held it, when it still does), and
 *	  a page's keys within k bits found eight at a time where the CPU can.
 *	  The tail pages behind the tables are the scan's business
 *	  (hamming_scan.c).
 */
#include "settings.h"
#include "hamming.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"

/* one pinned page per stream: a table's entries, its directory */
typedef struct PinnedPage
{
	Buffer		buffer;
	BlockNumber blkno;
} PinnedPage;

/*
 * Pages of the tables pinned ahead of their buckets, their lines asked of
 * the memory at once: a probe visits thousands of buckets, each on a page
 * of its own, and waits less when the next ones are on their way.
 */
#define PROBE_AHEAD 8

/*
 * The buffer that last held a page of the tables, by a hash of its block,
 * as a hint: ReadRecentBuffer() pins it when it still holds that page, with
 * no lookup in the shared buffer table (the probe's largest cost after the
 * pages themselves); otherwise the page is read as usual and the hint
 * replaced.  A hint is never trusted, so it needs no invalidation.  A
 * sixteenth of simhash.tail_cache_size (none when 0; never more numbers
 * than shared buffers), per backend, sized as each probe begins; not for the
 * local buffers of a temporary index.
 */
static Buffer *hints = NULL;
static uint32 nhints = 0;

/* the numbers as the setting sizes them now: called once a probe */
static void
size_hints(void)
{
	uint32		want = 0;

	if (simhash_tail_cache_kb > 0)
	{
		/* never more numbers than shared buffers, nor than one allocation holds */
		Size		numbers = Min(Min((Size) simhash_tail_cache_kb * 1024 / 16 / sizeof(Buffer), (Size) NBuffers),
								  MaxAllocSize / sizeof(Buffer));

		want = pg_prevpower2_32((uint32) Max(numbers, 1024));
	}
	if (want != nhints)
	{
		Buffer	   *old = hints;

		/* none until the new ones are allocated: that may fail */
		hints = NULL;
		nhints = 0;
		if (old)
			pfree(old);
		if (want > 0)
		{
			hints = MemoryContextAllocZero(TopMemoryContext, want * sizeof(Buffer));
			nhints = want;
		}
	}
}

static Buffer
read_table_page(Relation index, BlockNumber blkno)
{
	uint32		h;
	Buffer		buffer;

	if (nhints == 0 || RelationUsesLocalBuffers(index))
		return ReadBuffer(index, blkno);
	h = hash_combine(murmurhash32(index->rd_rel->relfilenode), murmurhash32(blkno)) & (nhints - 1);
	buffer = hints[h];
#if PG_VERSION_NUM >= 160000
	if (BufferIsValid(buffer) && ReadRecentBuffer(index->rd_locator, MAIN_FORKNUM, blkno, buffer))
#else
	if (BufferIsValid(buffer) && ReadRecentBuffer(index->rd_node, MAIN_FORKNUM, blkno, buffer))
#endif
	{
		/* counted in pg_statio_*_indexes as ReadBuffer() counts a hit */
		pgstat_count_buffer_read(index);
		pgstat_count_buffer_hit(index);
		return buffer;
	}
	buffer = ReadBuffer(index, blkno);
	hints[h] = buffer;
	return buffer;
}

typedef struct ProbeState
{
	Relation	index;
	const HammingTables *tables;
	simhash		query;
	int			k;
	int			radius[HAMMING_NTABLES];
	HammingProbeMatch match;	/* the caller's other conditions */
	HammingProbeEmit emit;
	void	   *arg;
	bool		stopped;		/* emit said stop */
	PinnedPage entries[HAMMING_NTABLES];
	PinnedPage directory[HAMMING_NTABLES];
	PinnedPage ahead[PROBE_AHEAD];	/* pinned, not locked, nor yet read */
	int			next_ahead;		/* the slot of ahead[] to fill next */
} ProbeState;

/* entries of table j on a page: table 0 keeps fingerprints and TIDs, the others keys */
static inline uint32
entries_per_page(int j)
{
	return j == 0 ? HAMMING_PAGE_CAPACITY : HAMMING_KEYS_CAPACITY;
}

/* block j of x: the top 16 bits of x rotated left by 16 j */
static inline int
block_distance(uint64 x, int j)
{
	return pg_popcount64((hamming_rotate_left(x, j * HAMMING_BLOCK_BITS) >> (64 - HAMMING_BLOCK_BITS)));
}

/*
 * Logical page lblk of the tables in a stream, pinned (the previous page of
 * the stream is released) and share-locked, its kind and generation
 * checked under the lock; the caller unlocks it once it copied what it
 * reads.  Pages of the probe tables do not change while a view can read
 * them, but for the TIDs of table 0, which VACUUM may clear, and but on a
 * standby, whose redo may reuse a page that a query older than the
 * primary's snapshots still reads: the check under each lock finds that.
 */
static Page
locked_page(ProbeState *ps, PinnedPage *pp, BlockNumber lblk, uint16 kind)
{
	BlockNumber blkno = hamming_table_block(ps->tables, lblk);
	Page		page;

	if (pp->blkno != blkno)
	{
		int			a;

		if (BufferIsValid(pp->buffer))
			ReleaseBuffer(pp->buffer);
		pp->buffer = InvalidBuffer;
		for (a = 0; a < PROBE_AHEAD; a++)
			if (ps->ahead[a].blkno == blkno)
			{
				/* pinned ahead: the pin moves here */
				pp->buffer = ps->ahead[a].buffer;
				ps->ahead[a].buffer = InvalidBuffer;
				ps->ahead[a].blkno = InvalidBlockNumber;
				break;
			}
		if (!BufferIsValid(pp->buffer))
			pp->buffer = read_table_page(ps->index, blkno);
		pp->blkno = blkno;
	}
	LockBuffer(pp->buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(pp->buffer);
	hamming_check_table_page(ps->index, ps->tables, page, blkno, kind);
	return page;
}

static inline void
unlock_page(PinnedPage *pp)
{
	LockBuffer(pp->buffer, BUFFER_LOCK_UNLOCK);
}

static void
release_pages(ProbeState *ps)
{
	int			j;

	for (j = 0; j < PROBE_AHEAD; j++)
		if (BufferIsValid(ps->ahead[j].buffer))
			ReleaseBuffer(ps->ahead[j].buffer);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		if (BufferIsValid(ps->entries[j].buffer))
			ReleaseBuffer(ps->entries[j].buffer);
		if (BufferIsValid(ps->directory[j].buffer))
			ReleaseBuffer(ps->directory[j].buffer);
	}
}

/*
 * The entries of bucket b of table j, [*start, *end), from the directory:
 * under one lock unless b is the last slot of its page
 */
static void
directory_range(ProbeState *ps, int j, uint32 bucket, uint32 *start, uint32 *end)
{
	BlockNumber first = ps->tables->dir_start[j];
	uint32		slot = bucket % HAMMING_DIRECTORY_CAPACITY;
	Page		page = locked_page(ps, &ps->directory[j], first + bucket / HAMMING_DIRECTORY_CAPACITY,
								   HAMMING_DIRECTORY);

	*start = HammingPageDirectory(page)[slot];
	if (slot + 1 < HAMMING_DIRECTORY_CAPACITY)
	{
		*end = HammingPageDirectory(page)[slot + 1];
		unlock_page(&ps->directory[j]);
		return;
	}
	unlock_page(&ps->directory[j]);
	page = locked_page(ps, &ps->directory[j], first + (bucket + 1) / HAMMING_DIRECTORY_CAPACITY,
					   HAMMING_DIRECTORY);
	*end = HammingPageDirectory(page)[0];
	unlock_page(&ps->directory[j]);
}

/*
 * The entries of every bucket of table j in the bitmap, [start, end) into
 * ranges in the buckets' order, empty ones left out; returns how many.
 * Each directory page is read under one lock.
 */
static uint32
directory_ranges(ProbeState *ps, int j, const uint64 *buckets, uint32 nwords, uint32 *ranges)
{
	PinnedPage *pp = &ps->directory[j];
	Page		page = NULL;
	BlockNumber locked = InvalidBlockNumber;
	uint32		n = 0;
	uint32		word;

	for (word = 0; word < nwords; word++)
	{
		uint64		bits;

		for (bits = buckets[word]; bits != 0; bits &= bits - 1)
		{
			uint32		bucket = word * 64 + pg_rightmost_one_pos64(bits);
			BlockNumber dir_page = ps->tables->dir_start[j] + bucket / HAMMING_DIRECTORY_CAPACITY;
			uint32		slot = bucket % HAMMING_DIRECTORY_CAPACITY;
			uint32		start;
			uint32		end;

			if (slot + 1 == HAMMING_DIRECTORY_CAPACITY)
			{
				/* its end is on the next page */
				if (page != NULL)
					unlock_page(pp);
				page = NULL;
				locked = InvalidBlockNumber;
				directory_range(ps, j, bucket, &start, &end);
			}
			else
			{
				if (locked != dir_page)
				{
					if (page != NULL)
						unlock_page(pp);
					page = locked_page(ps, pp, dir_page, HAMMING_DIRECTORY);
					locked = dir_page;
				}
				start = HammingPageDirectory(page)[slot];
				end = HammingPageDirectory(page)[slot + 1];
			}
			if (start < end)
			{
				ranges[2 * n] = start;
				ranges[2 * n + 1] = end;
				n++;
			}
		}
	}
	if (page != NULL)
		unlock_page(pp);
	return n;
}

/* the fingerprint of entry i of table 0 */
static uint64
table0_fingerprint(ProbeState *ps, uint32 i)
{
	Page		page = locked_page(ps, &ps->entries[0],
								   ps->tables->table_start[0] + i / HAMMING_PAGE_CAPACITY,
								   HAMMING_SORTED);
	uint64		fp = HammingPageFingerprints(page)[i % HAMMING_PAGE_CAPACITY];

	unlock_page(&ps->entries[0]);
	return fp;
}

/* emit a row of table 0 (slot of the pinned page) if VACUUM did not clear its TID */
static void
emit_hit(ProbeState *ps, const ItemPointerData *tid, int distance, uint32 slot)
{
	HammingHit	hit;

	if (!ItemPointerIsValid(tid))
		return;
	hit.tid = *tid;
	hit.distance = distance;
	hit.slot = slot;
	hit.blkno = ps->entries[0].blkno;
	if (!ps->emit(ps->arg, &hit))
		ps->stopped = true;
}

/* emit entry i of table 0, its TID read under a share lock */
static void
emit_table0(ProbeState *ps, uint32 i, int distance)
{
	Page		page = locked_page(ps, &ps->entries[0],
								   ps->tables->table_start[0] + i / HAMMING_PAGE_CAPACITY,
								   HAMMING_SORTED);
	ItemPointerData tid = HammingPageTids(page)[i % HAMMING_PAGE_CAPACITY];

	unlock_page(&ps->entries[0]);
	emit_hit(ps, &tid, distance, i % HAMMING_PAGE_CAPACITY);
}

/* every live row of fingerprint fp, found through table 0's directory */
static void
lookup_table0(ProbeState *ps, uint64 fp, int distance)
{
	uint32		bucket = (uint32) (fp >> (64 - ps->tables->dir_bits));
	uint32		lo;
	uint32		hi;
	uint32		end;

	directory_range(ps, 0, bucket, &lo, &hi);
	end = hi;

	/* the first entry >= fp */
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (table0_fingerprint(ps, mid) < fp)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < end && !ps->stopped && table0_fingerprint(ps, lo) == fp; lo++)
	{
		CHECK_FOR_INTERRUPTS();
		emit_table0(ps, lo, distance);
	}
}

/* the sort key of entry i of table j (in table 0, the fingerprint) */
static uint64
table_key(ProbeState *ps, int j, uint32 i)
{
	Page		page;
	uint64		key;

	if (j == 0)
		return table0_fingerprint(ps, i);
	page = locked_page(ps, &ps->entries[j],
					   ps->tables->table_start[j] + i / HAMMING_KEYS_CAPACITY, HAMMING_KEYS);
	key = HammingPageKeys(page)[i % HAMMING_KEYS_CAPACITY];
	unlock_page(&ps->entries[j]);
	return key;
}

/*
 * The first entry of table j after i, below end, whose key is not key
 * (entry i's): a run of copies is crossed in steps that double, then halve,
 * so that a fingerprint of which one bucket holds millions of copies costs
 * a probe that does not take it a few dozen reads, not millions.
 */
static uint32
past_copies(ProbeState *ps, int j, uint32 i, uint32 end, uint64 key)
{
	uint64		step = 1;
	uint32		lo = i;
	uint32		hi;

	while (end - lo > step && table_key(ps, j, lo + step) == key)
	{
		CHECK_FOR_INTERRUPTS();
		lo += step;
		step *= 2;
	}
	/* entry lo is a copy, entry lo + step (if below end) is not */
	hi = (uint32) Min((uint64) lo + step, (uint64) end);
	lo++;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (table_key(ps, j, mid) == key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Is fp to be taken from table j?  It is within radius[j] of the query in
 * block j, in no earlier table's block within that table's radius, within k
 * bits of the query, and it satisfies the scan's conditions.
 */
static inline bool
taken_in_table(ProbeState *ps, uint64 fp, int j, int *distance)
{
	uint64		x = fp ^ ps->query;
	int			i;

	/* most rows of a bucket are farther than k: one popcount rejects them */
	*distance = pg_popcount64(x);
	if (*distance > ps->k || block_distance(x, j) > ps->radius[j])
		return false;
	for (i = 0; i < j; i++)
		if (block_distance(x, i) <= ps->radius[i])
			return false;
	return ps->match(ps->arg, fp, *distance);
}

/*
 * The page of table j that holds entry i, pinned now (unless it is pinned
 * already) for a bucket probed later, and the lines that the probe reads
 * first (the page's kind and generation, entry i) asked of the memory
 * without waiting for them
 */
static void
pin_ahead(ProbeState *ps, int j, uint32 i, uint32 end)
{
	uint32		line;
	uint32		capacity = entries_per_page(j);
	BlockNumber blkno = hamming_table_block(ps->tables, ps->tables->table_start[j] + i / capacity);
	PinnedPage *slot;
	Page		page;
	int			a;

	if (ps->entries[j].blkno == blkno)
		return;
	for (a = 0; a < PROBE_AHEAD; a++)
		if (ps->ahead[a].blkno == blkno)
			return;
	slot = &ps->ahead[ps->next_ahead];
	ps->next_ahead = (ps->next_ahead + 1) % PROBE_AHEAD;
	if (BufferIsValid(slot->buffer))
		ReleaseBuffer(slot->buffer);
	slot->buffer = read_table_page(ps->index, blkno);
	slot->blkno = blkno;
	page = BufferGetPage(slot->buffer);
	__builtin_prefetch(page);
	__builtin_prefetch((char *) page + BLCKSZ - MAXALIGN(sizeof(HammingPageOpaqueData)));
	/*
	 * the bucket's keys on the page, a line of eight at a time: the CPU's own
	 * prefetcher stops at each 4 kB of memory, and a bucket of ten million
	 * rows' tables fills most of a page
	 */
	for (line = i % capacity; line < Min(capacity, i % capacity + (end - i)); line += 8)
		__builtin_prefetch(HammingPageKeys(page) + line);
}

/*
 * The rows of table j in entries [i, end): a bucket.  Its keys within k
 * bits of the query are found in the page itself (hamming_near_slots, eight
 * at a time where the CPU can) and copied under the lock with their TIDs
 * (table 0) for the rest of the checks.  Equal keys are neighbours: a
 * fingerprint is decided once, and a run of its copies that goes on past a
 * page is crossed at once (past_copies) unless its rows are to be emitted
 * one by one (taken, in table 0): table j's keys lead to table 0, which
 * gives every row of a fingerprint at once.
 */
static void
probe_bucket(ProbeState *ps, int j, uint32 i, uint32 end)
{
	const HammingTables *t = ps->tables;
	uint32		capacity = entries_per_page(j);
	int			rotation = (HAMMING_NTABLES - j) * HAMMING_BLOCK_BITS % 64;
	simhash		query = hamming_rotate_left(ps->query, j * HAMMING_BLOCK_BITS % 64);
	bool		have_previous = false;
	uint64		previous = 0;	/* the last key decided */
	bool		previous_taken = false;
	int			previous_distance = 0;
	bool		have_page_last = false;
	uint64		page_last = 0;	/* the last key of the previous page */

	while (i < end && !ps->stopped)
	{
		Page		page = locked_page(ps, &ps->entries[j], t->table_start[j] + i / capacity,
									   j == 0 ? HAMMING_SORTED : HAMMING_KEYS);
		const uint64 *keys = HammingPageKeys(page);
		uint32		first = i % capacity;
		uint32		n = Min(capacity - first, end - i);
		uint16		slots[HAMMING_KEYS_CAPACITY];
		uint64		near[HAMMING_KEYS_CAPACITY];
		ItemPointerData tids[HAMMING_PAGE_CAPACITY];
		int			nnear;
		int			s;
		uint64		last;
		bool		run_goes_on;

		CHECK_FOR_INTERRUPTS();
		nnear = hamming_near_slots(keys + first, n, query, 0, ps->k, slots);
		for (s = 0; s < nnear; s++)
		{
			near[s] = keys[first + slots[s]];
			if (j == 0)
				tids[s] = HammingPageTids(page)[first + slots[s]];
		}
		last = keys[first + n - 1];
		run_goes_on = n > 1 ? keys[first + n - 2] == last : (have_page_last && page_last == last);
		unlock_page(&ps->entries[j]);
		i += n;
		page_last = last;
		have_page_last = true;

		for (s = 0; s < nnear && !ps->stopped; s++)
		{
			bool		same = have_previous && near[s] == previous;

			if (j > 0 && same)
				continue;		/* its rows came with the first copy */
			if (!same)
			{
				previous = near[s];
				have_previous = true;
				previous_taken = taken_in_table(ps, j == 0 ? previous : hamming_rotate_left(previous, rotation),
												j, &previous_distance);
				if (j > 0 && previous_taken)
					lookup_table0(ps, hamming_rotate_left(previous, rotation), previous_distance);
			}
			if (j == 0 && previous_taken)
				emit_hit(ps, &tids[s], previous_distance, first + slots[s]);
		}

		/* the copies of the page's last key go on after it: cross them */
		if (run_goes_on && i < end && !ps->stopped &&
			!(j == 0 && have_previous && previous == last && previous_taken))
		{
			i = past_copies(ps, j, i - 1, end, last);
			if (!(have_previous && previous == last))
			{
				/* far from the query: not taken */
				previous = last;
				have_previous = true;
				previous_taken = false;
			}
		}
	}
}

/*
 * Emit every row of the probe tables within k bits of query that match()
 * accepts, once each, with its distance; stop early when emit() returns
 * false.  Returns false if stopped.
 */
bool
hamming_probe(Relation index, const HammingTables *tables, simhash query, int k,
			  HammingProbeMatch match, HammingProbeEmit emit, void *arg)
{
	ProbeState	ps;
	int			dir_bits = tables->dir_bits;
	uint32		nwords;
	uint64	   *buckets;
	uint32	   *ranges;			/* [start, end) of each bucket of a table */
	uint32		nranges;
	uint32		b;
	int			j;

	Assert(tables->ntables == HAMMING_NTABLES);
	memset(&ps, 0, sizeof(ps));
	ps.index = index;
	ps.tables = tables;
	ps.query = query;
	ps.k = k;
	ps.match = match;
	ps.emit = emit;
	ps.arg = arg;
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		ps.entries[j].buffer = ps.directory[j].buffer = InvalidBuffer;
		ps.entries[j].blkno = ps.directory[j].blkno = InvalidBlockNumber;
	}
	for (j = 0; j < PROBE_AHEAD; j++)
	{
		ps.ahead[j].buffer = InvalidBuffer;
		ps.ahead[j].blkno = InvalidBlockNumber;
	}
	hamming_table_radii(ps.radius, Min(k, SIMHASH_BITS));
	size_hints();

	nwords = (((uint32) 1 << dir_bits) + 63) / 64;
	buckets = palloc(nwords * sizeof(uint64));
	for (j = 0; j < HAMMING_NTABLES && !ps.stopped; j++)
	{
		/* the buckets within radius[j] bits of the query's prefix of block j */
		uint32		prefix = (uint32) (hamming_rotate_left(query, j * HAMMING_BLOCK_BITS) >> (64 - dir_bits));
		int			r = Min(ps.radius[j], dir_bits);
		int			w;
		uint32		word;

		if (r < 0)
			continue;
		memset(buckets, 0, nwords * sizeof(uint64));
		for (w = 0; w <= r; w++)
		{
			/* every mask of w bits out of dir_bits (Gosper's hack) */
			uint32		mask = ((uint32) 1 << w) - 1;

			while (mask < ((uint32) 1 << dir_bits))
			{
				uint32		bucket = prefix ^ mask;
				uint32		c = mask & -mask;
				uint32		next = mask + c;

				buckets[bucket / 64] |= UINT64CONST(1) << (bucket % 64);
				if (w == 0)
					break;
				mask = (((next ^ mask) >> 2) / c) | next;
			}
		}

		/*
		 * their entries, in order, so that neighbours share directory and
		 * table pages; each bucket's page pinned a few buckets ahead
		 */
		nranges = 0;
		for (word = 0; word < nwords; word++)
			nranges += pg_popcount64(buckets[word]);
		ranges = palloc(Max(nranges, 1) * 2 * sizeof(uint32));
		nranges = directory_ranges(&ps, j, buckets, nwords, ranges);
		for (b = 0; b < nranges && b < PROBE_AHEAD; b++)
			pin_ahead(&ps, j, ranges[2 * b], ranges[2 * b + 1]);
		for (b = 0; b < nranges && !ps.stopped; b++)
		{
			CHECK_FOR_INTERRUPTS();
			probe_bucket(&ps, j, ranges[2 * b], ranges[2 * b + 1]);
			/* after it, so that the pin it took over is not the one replaced */
			if (b + PROBE_AHEAD < nranges)
				pin_ahead(&ps, j, ranges[2 * (b + PROBE_AHEAD)], ranges[2 * (b + PROBE_AHEAD) + 1]);
		}
		pfree(ranges);
	}
	pfree(buckets);
	release_pages(&ps);
	return !ps.stopped;
}
