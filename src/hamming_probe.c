/*
 * hamming_probe.c
 *	  Reading the probe tables of a "hamming" index (layout in hamming.h):
 *	  every row of the tables within k bits of a fingerprint, each once, with
 *	  its heap TID, through the block map of a merged index.  The tail pages
 *	  behind the tables are the scan's business (hamming_scan.c).
 */
#include "hamming.h"

#include "miscadmin.h"

/* one pinned page per stream: a table's entries, its directory */
typedef struct PinnedPage
{
	Buffer		buffer;
	BlockNumber blkno;
} PinnedPage;

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
} ProbeState;

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
		if (BufferIsValid(pp->buffer))
			ReleaseBuffer(pp->buffer);
		pp->buffer = ReadBuffer(ps->index, blkno);
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

/* the rows of bucket b of table j */
static void
probe_bucket(ProbeState *ps, int j, uint32 bucket)
{
	const HammingTables *t = ps->tables;
	uint32		i;
	uint32		end;
	int			rotation = (HAMMING_NTABLES - j) * HAMMING_BLOCK_BITS % 64;
	bool		have_previous = false;
	uint64		previous = 0;
	bool		previous_taken = false;
	int			previous_distance = 0;

	directory_range(ps, j, bucket, &i, &end);
	while (i < end && !ps->stopped)
	{
		CHECK_FOR_INTERRUPTS();
		if (j == 0)
		{
			/* this page's part of the bucket, copied under one share lock */
			Page		page = locked_page(ps, &ps->entries[0],
										   t->table_start[0] + i / HAMMING_PAGE_CAPACITY,
										   HAMMING_SORTED);
			uint64		fps[HAMMING_PAGE_CAPACITY];
			ItemPointerData tids[HAMMING_PAGE_CAPACITY];
			uint32		first = i % HAMMING_PAGE_CAPACITY;
			uint32		n = Min(HAMMING_PAGE_CAPACITY - first, end - i);
			uint32		s;

			memcpy(fps, HammingPageFingerprints(page) + first, n * sizeof(uint64));
			memcpy(tids, HammingPageTids(page) + first, n * sizeof(ItemPointerData));
			unlock_page(&ps->entries[0]);
			i += n;
			for (s = 0; s < n && !ps->stopped; s++)
			{
				/* copies of a fingerprint are neighbours: decided once */
				if (!have_previous || fps[s] != previous)
				{
					previous = fps[s];
					have_previous = true;
					previous_taken = taken_in_table(ps, previous, 0, &previous_distance);
				}
				else if (!previous_taken && fps[n - 1] == previous)
				{
					/* the copies go on after this page: cross them */
					i = past_copies(ps, 0, i - 1, end, previous);
					break;
				}
				if (previous_taken)
					emit_hit(ps, &tids[s], previous_distance, first + s);
			}
		}
		else
		{
			Page		page = locked_page(ps, &ps->entries[j],
										   t->table_start[j] + i / HAMMING_KEYS_CAPACITY,
										   HAMMING_KEYS);
			uint64		keys[HAMMING_KEYS_CAPACITY];
			uint32		slot = i % HAMMING_KEYS_CAPACITY;
			uint32		last = Min(HAMMING_KEYS_CAPACITY, slot + (end - i));

			/* this page's part of the bucket, copied under the lock */
			memcpy(keys + slot, HammingPageKeys(page) + slot, (last - slot) * sizeof(uint64));
			unlock_page(&ps->entries[j]);
			i += last - slot;
			for (; slot < last && !ps->stopped; slot++)
			{
				uint64		fp;
				int			distance;

				/* equal fingerprints are neighbours: their rows come once */
				if (have_previous && keys[slot] == previous)
				{
					if (keys[last - 1] != previous)
						continue;
					/* the copies go on after this page: cross them */
					i = past_copies(ps, j, i - 1, end, previous);
					break;
				}
				previous = keys[slot];
				have_previous = true;
				fp = hamming_rotate_left(keys[slot], rotation);
				if (taken_in_table(ps, fp, j, &distance))
					lookup_table0(ps, fp, distance);
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
	hamming_table_radii(ps.radius, Min(k, SIMHASH_BITS));

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

		/* visited in order, so that neighbours share directory and table pages */
		for (word = 0; word < nwords && !ps.stopped; word++)
		{
			uint64		bits = buckets[word];

			CHECK_FOR_INTERRUPTS();
			while (bits != 0 && !ps.stopped)
			{
				probe_bucket(&ps, j, word * 64 + pg_rightmost_one_pos64(bits));
				bits &= bits - 1;
			}
		}
	}
	pfree(buckets);
	release_pages(&ps);
	return !ps.stopped;
}
