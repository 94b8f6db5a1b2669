/*
 * hamming_tail_cache.c
 *	  The full tail pages of "hamming" indexes, kept by each backend for the
 *	  lookups that probe the tables (and the rings of ordered scans).  Such a
 *	  lookup finds its rows of the tables in a few buckets, but reads every
 *	  page of the tail, which grows between merges; a backend that looks up
 *	  an index again finds the tail pages it read before here, with each
 *	  entry listed under each of its four 16-bit blocks, so that the tail
 *	  costs a few lists, not a read of every page.
 *
 *	  A full tail page does not change until VACUUM removes entries from it
 *	  or a merge replaces it: appends go to pages with room, and a page that
 *	  VACUUM removed entries from takes none until VACUUM counted the
 *	  removal and listed the page for inserts (HAMMING_CLOSED).  VACUUM counts
 *	  in the metapage (tail_epoch) each tail page it removed entries from,
 *	  after it did, and each build and merge gives the tables an identity
 *	  that the index never had before, so the pages kept for an index are
 *	  those of one (relfilenode, tables, epoch), and are dropped when a
 *	  scan's view shows another.  Every page is copied after the view of
 *	  the scan that keeps it was read: a removal counted at or before that
 *	  view had been made, so the copy lacks the removed entries; a removal
 *	  made after the copy is counted after it, so scans whose view comes
 *	  later do not use the copy.  A scan whose view came before a count may
 *	  use a copy made before that removal, which holds every entry of the
 *	  page and maybe some that are gone: an MVCC snapshot does not see a
 *	  row that takes over a TID freed after the view, and scans that need
 *	  the page of a returned row pinned (index-only scans, an exclusion
 *	  constraint's check under a dirty snapshot) find each entry on its
 *	  page again, by the block and place kept with it, before they return
 *	  it (hamming_scan.c).  Pages that entered the tail after a scan's view
 *	  are kept too; their rows came after the scan's snapshot, or, for a
 *	  check, are found on their pages again too.
 *
 *	  Memory: simhash.tail_cache_size in all, per backend, entries and the
 *	  heads of their lists (46 bytes an entry at most, and each page's
 *	  block, for at most
 *	  CACHE_INDEXES indexes); the pages of the least recently used indexes
 *	  make room for others, and a page that does not fit is read by the
 *	  scan itself.
 */
#include "settings.h"
#include "hamming.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/*
 * the lists of each block are found by its top head_bits bits: 8 for a
 * small tail, more as it grows, up to the block's 16 (a list per value)
 */
#define CACHE_MIN_HEAD_BITS		8
#define CACHE_END				PG_UINT32_MAX
/*
 * memory counted for an entry: fingerprint, TID, a link in each block's
 * list, and the lists' heads (fewer than the entries but for the first 256)
 */
#define CACHE_ENTRY_BYTES \
	(sizeof(uint64) + sizeof(ItemPointerData) + 2 * HAMMING_NTABLES * sizeof(uint32))
/* entries of an index kept at most: the lists' numbers stay below CACHE_END */
#define CACHE_MAX_ENTRIES		((uint32) 1 << 30)
/* indexes kept at most */
#define CACHE_INDEXES			8

struct HammingTailCache
{
	struct HammingTailCache *next;
	uint64		serial;			/* this backend's number of these pages, never repeated */
	Oid			relid;
	Oid			relfilenode;
	uint64		tables_id;
	uint32		epoch;
	MemoryContext cxt;
	/* the blocks kept: a bit each */
	uint8	   *kept;
	BlockNumber kept_blocks;
	/* the entries */
	uint32		n;
	uint32		room;
	uint64	   *fps;
	ItemPointerData *tids;
	BlockNumber *blocks;		/* the block of each page of entries */
	uint32	   *link[HAMMING_NTABLES];	/* the next entry with the same top bits of block j */
	int			head_bits;
	uint32	   *head[HAMMING_NTABLES];	/* the first entry of each list of block j */
};

int			simhash_tail_cache_kb = 16384;

static HammingTailCache *caches;	/* the most recently used first */
static uint64 last_serial;		/* the serial of the last kept pages begun */
static Size cache_bytes;		/* the entries' room and the lists' heads, in all caches */

/* the memory of the lists' heads at bits bits */
#define HEADS_BYTES(bits)	(HAMMING_NTABLES * (sizeof(uint32) << (bits)))

/* the memory of the entries' room (whole pages): the entries and their pages' blocks */
#define ROOM_BYTES(room)	((Size) (room) * CACHE_ENTRY_BYTES + (room) / HAMMING_PAGE_CAPACITY * sizeof(BlockNumber))

/* the memory counted for tc */
static inline Size
tc_bytes(const HammingTailCache *tc)
{
	return ROOM_BYTES(tc->room) + HEADS_BYTES(tc->head_bits);
}

static void
drop_cache(HammingTailCache **link)
{
	HammingTailCache *tc = *link;

	*link = tc->next;
	cache_bytes -= tc_bytes(tc);
	MemoryContextDelete(tc->cxt);
}

/*
 * Room for want entries of tc, with lists' heads of head_bits bits, within
 * simhash.tail_cache_size, making it by dropping the least recently used
 * other indexes' pages if need be; else as many as fit, if at least need
 * do; else 0.
 */
static uint32
fit_room(const HammingTailCache *tc, uint32 need, uint32 want, int head_bits)
{
	Size		limit = (Size) simhash_tail_cache_kb * 1024;

	for (;;)
	{
		Size		others = cache_bytes - tc_bytes(tc) + HEADS_BYTES(head_bits);
		/* whole pages: their entries and their block */
		Size		fits = limit > others ? (limit - others) / ROOM_BYTES(HAMMING_PAGE_CAPACITY) * HAMMING_PAGE_CAPACITY : 0;
		HammingTailCache **link;
		HammingTailCache **last = NULL;

		if (fits >= want)
			return want;
		for (link = &caches; *link; link = &(*link)->next)
			if (*link != tc)
				last = link;
		if (last == NULL)
			return fits >= need ? (uint32) fits : 0;
		drop_cache(last);
	}
}

/* block j of fp: its top 16 bits rotated left by 16 j */
static inline uint32
block_of(uint64 fp, int j)
{
	return (uint32) (hamming_rotate_left(fp, j * HAMMING_BLOCK_BITS) >> (64 - HAMMING_BLOCK_BITS));
}

/* entry e at the head of its list of each block */
static inline void
link_entry(HammingTailCache *tc, uint32 e)
{
	int			j;

	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		uint32		h = block_of(tc->fps[e], j) >> (HAMMING_BLOCK_BITS - tc->head_bits);

		tc->link[j][e] = tc->head[j][h];
		tc->head[j][h] = e;
	}
}

/*
 * The lists by the top bits bits of each block, of every entry: allocated
 * first (an error leaves the old ones), then filled.
 */
static void
relink(HammingTailCache *tc, int bits)
{
	uint32	   *head[HAMMING_NTABLES];
	uint32		e;
	int			j;

	for (j = 0; j < HAMMING_NTABLES; j++)
		head[j] = MemoryContextAlloc(tc->cxt, sizeof(uint32) << bits);
	cache_bytes += HEADS_BYTES(bits) - (tc->head[0] ? HEADS_BYTES(tc->head_bits) : 0);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		if (tc->head[j])
			pfree(tc->head[j]);
		tc->head[j] = head[j];
		memset(head[j], 0xFF, sizeof(uint32) << bits);
	}
	tc->head_bits = bits;
	for (e = 0; e < tc->n; e++)
		link_entry(tc, e);
}

/*
 * The pages this backend keeps of the index, for a scan with this view:
 * emptied when the view shows another merge or VACUUM's removals since;
 * NULL when simhash.tail_cache_size is 0.  Valid until the next call here.
 */
HammingTailCache *
hamming_tail_cache(Relation index, const HammingTables *tables)
{
	HammingTailCache **link;
	HammingTailCache *tc;
	MemoryContext cxt;
	int			kept = 0;

	if (simhash_tail_cache_kb <= 0)
		return NULL;
	/* a setting lowered since: the least recently used go until the rest fit */
	while (caches && cache_bytes > (Size) simhash_tail_cache_kb * 1024)
	{
		for (link = &caches; (*link)->next; link = &(*link)->next)
			;
		drop_cache(link);
	}
	for (link = &caches; *link; link = &(*link)->next)
	{
		tc = *link;
		if (tc->relid != RelationGetRelid(index))
			continue;
		if (tc->relfilenode == index->rd_rel->relfilenode &&
			tc->tables_id == tables->tables_id && tc->epoch == tables->tail_epoch)
		{
			/* the most recently used first */
			*link = tc->next;
			tc->next = caches;
			caches = tc;
			return tc;
		}
		drop_cache(link);
		break;
	}

	/* at most CACHE_INDEXES: the least recently used goes */
	for (link = &caches; *link;)
	{
		if (++kept >= CACHE_INDEXES)
			drop_cache(link);
		else
			link = &(*link)->next;
	}
	cxt = AllocSetContextCreate(TopMemoryContext, "hamming tail cache", ALLOCSET_DEFAULT_SIZES);
	tc = MemoryContextAllocZero(cxt, sizeof(HammingTailCache));
	tc->cxt = cxt;
	tc->serial = ++last_serial;
	tc->relid = RelationGetRelid(index);
	tc->relfilenode = index->rd_rel->relfilenode;
	tc->tables_id = tables->tables_id;
	tc->epoch = tables->tail_epoch;
	relink(tc, CACHE_MIN_HEAD_BITS);
	tc->next = caches;
	caches = tc;
	return tc;
}

/*
 * The serial of the pages kept: another for pages kept again (after a view
 * that showed a merge or VACUUM's removals, or when the least recently used
 * made room), so that the entries up to a count are the same while it is
 */
uint64
hamming_tail_cache_serial(const HammingTailCache *tc)
{
	return tc->serial;
}

/* the entries kept, in the order their pages were kept */
uint32
hamming_tail_cache_entries(const HammingTailCache *tc)
{
	return tc->n;
}

/* could simhash.tail_cache_size hold the whole tail of the view? */
bool
hamming_tail_cache_fits(const HammingTables *tables)
{
	return (double) hamming_tail_pages(tables) * ROOM_BYTES(HAMMING_PAGE_CAPACITY) <=
		(double) simhash_tail_cache_kb * 1024;
}

/* is the page at blkno kept? */
bool
hamming_tail_cache_has(const HammingTailCache *tc, BlockNumber blkno)
{
	return blkno < tc->kept_blocks && (tc->kept[blkno / 8] & (1 << (blkno % 8))) != 0;
}

/*
 * Keep a tail page of fingerprints read (share-locked, checked) at blkno, if
 * it is full and fits in simhash.tail_cache_size; false if not (the scan
 * reads it itself).
 */
bool
hamming_tail_cache_add(HammingTailCache *tc, Page page, BlockNumber blkno)
{
	const uint64 *fps = HammingPageFingerprints(page);
	const ItemPointerData *tids = HammingPageTids(page);
	int			n = HammingPageGetOpaque(page)->nentries;
	uint32		room;
	int			bits;
	int			i;
	int			j;

	if (n != HAMMING_PAGE_CAPACITY)
		return false;

	/* lists of about two entries each, at most a list per value */
	bits = tc->head_bits;
	while (bits < HAMMING_BLOCK_BITS && tc->n + n > (2u << bits))
		bits++;

	/* room first: nothing below fails, so the lists and the bits always agree */
	if (tc->n + n > tc->room || bits != tc->head_bits)
	{
		uint32		want = tc->room;

		if (tc->n + n > tc->room)
		{
			if (tc->room >= CACHE_MAX_ENTRIES / 2)
				return false;
			want = Max(tc->room * 2, 16 * HAMMING_PAGE_CAPACITY);
		}
		room = fit_room(tc, tc->n + n, want, bits);
		if (room == 0 || room < tc->room)
			return false;
	}
	else
		room = tc->room;
	if (room != tc->room)
	{
		if (tc->room == 0)
		{
			tc->fps = MemoryContextAllocHuge(tc->cxt, room * sizeof(uint64));
			tc->tids = MemoryContextAllocHuge(tc->cxt, room * sizeof(ItemPointerData));
			tc->blocks = MemoryContextAllocHuge(tc->cxt, room / HAMMING_PAGE_CAPACITY * sizeof(BlockNumber));
			for (j = 0; j < HAMMING_NTABLES; j++)
				tc->link[j] = MemoryContextAllocHuge(tc->cxt, room * sizeof(uint32));
		}
		else
		{
			tc->fps = repalloc_huge(tc->fps, room * sizeof(uint64));
			tc->tids = repalloc_huge(tc->tids, room * sizeof(ItemPointerData));
			tc->blocks = repalloc_huge(tc->blocks, room / HAMMING_PAGE_CAPACITY * sizeof(BlockNumber));
			for (j = 0; j < HAMMING_NTABLES; j++)
				tc->link[j] = repalloc_huge(tc->link[j], room * sizeof(uint32));
		}
		cache_bytes += ROOM_BYTES(room) - ROOM_BYTES(tc->room);
		tc->room = room;
	}
	if (blkno >= tc->kept_blocks)
	{
		BlockNumber blocks = Max(tc->kept_blocks * 2, 1024);

		while (blocks <= blkno)
			blocks *= 2;
		if (tc->kept == NULL)
			tc->kept = MemoryContextAllocZero(tc->cxt, blocks / 8);
		else
		{
			tc->kept = repalloc(tc->kept, blocks / 8);
			memset(tc->kept + tc->kept_blocks / 8, 0, (blocks - tc->kept_blocks) / 8);
		}
		tc->kept_blocks = blocks;
	}
	if (bits != tc->head_bits)
		relink(tc, bits);

	tc->blocks[tc->n / HAMMING_PAGE_CAPACITY] = blkno;
	for (i = 0; i < n; i++)
	{
		tc->fps[tc->n] = fps[i];
		tc->tids[tc->n] = tids[i];
		link_entry(tc, tc->n++);
	}
	tc->kept[blkno / 8] |= 1 << (blkno % 8);
	return true;
}

/* entry e, at distance d from the query: to match, then to emit; false when emit said stop */
static inline bool
offer_entry(const HammingTailCache *tc, uint32 e, int d, HammingProbeMatch match, HammingProbeEmit emit,
			void *arg)
{
	HammingHit	hit;

	if (!ItemPointerIsValid(&tc->tids[e]) || !match(arg, tc->fps[e], d))
		return true;
	memset(&hit, 0, sizeof(hit));
	hit.tid = tc->tids[e];
	hit.distance = d;
	/* where the scan finds the entry again (hit_still_indexed) */
	hit.blkno = tc->blocks[e / HAMMING_PAGE_CAPACITY];
	hit.slot = e % HAMMING_PAGE_CAPACITY;
	return emit(arg, &hit);
}

/*
 * Every kept entry within k bits of query, from the entry numbered from on
 * (0: all), each once, offered to match and then emit as hamming_probe()
 * offers rows of the tables: through the lists of its blocks when each
 * table's radius (hamming_table_radii) is at most 1 (k <= 7: at most 17
 * lists a table), else by reading every entry (the lists of a larger radius
 * cost more random reads than that).  False when emit said stop.
 */
HAMMING_POPCOUNT_CLONES
bool
hamming_tail_cache_probe(const HammingTailCache *tc, uint32 from, simhash query, int k,
						 HammingProbeMatch match, HammingProbeEmit emit, void *arg)
{
	int			radius[HAMMING_NTABLES];
	uint32		qblock[HAMMING_NTABLES];
	int			j;

	hamming_table_radii(radius, k);
	for (j = 0; j < HAMMING_NTABLES; j++)
		if (radius[j] > 1)
			break;
	if (j < HAMMING_NTABLES)
	{
		uint16		slots[HAMMING_PAGE_CAPACITY];
		uint32		first;

		for (first = from; first < tc->n; first += HAMMING_PAGE_CAPACITY)
		{
			int			n = (int) Min(tc->n - first, HAMMING_PAGE_CAPACITY);
			int			nnear = hamming_near_slots(tc->fps + first, n, query, 0, k, slots);
			int			i;

			CHECK_FOR_INTERRUPTS();
			for (i = 0; i < nnear; i++)
			{
				uint32		e = first + slots[i];

				if (!offer_entry(tc, e, hamming_popcount(tc->fps[e] ^ query), match, emit, arg))
					return false;
			}
		}
		return true;
	}

	for (j = 0; j < HAMMING_NTABLES; j++)
		qblock[j] = block_of(query, j);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		uint32		qhead = qblock[j] >> (HAMMING_BLOCK_BITS - tc->head_bits);
		int			h;

		/* the list of the query's top bits, then, at radius 1, each one flipped */
		for (h = -1; h < (radius[j] == 1 ? tc->head_bits : 0); h++)
		{
			uint32		e;

			/* newest first: the entries from "from" on lead each list */
			for (e = tc->head[j][h < 0 ? qhead : qhead ^ (1u << h)]; e != CACHE_END && e >= from; e = tc->link[j][e])
			{
				uint64		fp = tc->fps[e];
				int			d;
				int			i;

				if (hamming_popcount(block_of(fp, j) ^ qblock[j]) > radius[j])
					continue;
				/* found in an earlier table */
				for (i = 0; i < j; i++)
					if (hamming_popcount(block_of(fp, i) ^ qblock[i]) <= radius[i])
						break;
				d = hamming_popcount(fp ^ query);
				if (i < j || d > k)
					continue;
				if (!offer_entry(tc, e, d, match, emit, arg))
					return false;
			}
		}
	}
	return true;
}
