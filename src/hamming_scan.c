/*
 * hamming_scan.c
 *	  Scans of a "hamming" index.  A radius scan (bitmap or tuple by tuple)
 *	  either probes the tables (hamming_probe.c) and then reads the tail
 *	  pages (those this backend keeps through hamming_tail_cache.c, in MVCC
 *	  scans and in scans that find each row's entry on its page again before
 *	  they return it), or reads every page, whichever hamming_work.c models
 *	  cheaper; both keep the entries within the radius of every condition:
 *	  exact, no recheck.  An exclusion constraint's check on an index of
 *	  text takes the tables' rows of the last check of the same conditions
 *	  on the same tables (INSERT ... ON CONFLICT checks a row twice) and
 *	  reads the tail.  An ordered scan (ORDER BY fp <-> q) returns rings: every row
 *	  within 1, 3, 5, ... bits not returned yet, found by probes and among the
 *	  tail's rows (read once, kept sorted by distance), sorted; once a ring's
 *	  probes would cost more than a pass (or the tail's rows and the ring's
 *	  outgrow work_mem) it makes passes over the index instead; each
 *	  pass keeps, in a bounded max-heap, the next batch_size entries in
 *	  (distance, heap TID) order after the last one returned, and returns them
 *	  sorted.  The first pass keeps few entries, each later pass eight times
 *	  more (up to work_mem), so that a full ordered scan costs a handful of
 *	  passes.  Rows whose fingerprint is NULL come last, in physical order,
 *	  and only when the scan has no condition.
 */
#include "strategy.h"
#include "ball.h"
#include "hamming.h"
#include "neardup.h"

#include "access/relscan.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/snapmgr.h"

#define HAMMING_BATCH_GROWTH	8
#define HAMMING_RING_STEP		2	/* bits by which an ordered scan's rings widen */
#define HAMMING_TAIL_FIRST		32	/* the tail's nearest rows an ordered scan keeps first */

static void
make_room(HammingScanOpaque so, int n)
{
	if (n > so->max_hits)
	{
		so->hits = repalloc(so->hits, n * sizeof(HammingHit));
		so->max_hits = n;
	}
}

/* does fp satisfy every condition (with any_cond: some condition)? */
static inline bool
matches_conditions(const HammingScanOpaque so, simhash fp)
{
	int			i;

	for (i = 0; i < so->nconds; i++)
		if ((hamming_popcount(fp ^ so->center[i]) <= so->radius[i]) == so->any_cond)
			return so->any_cond;
	return !so->any_cond || so->nconds == 0;
}

/*
 * The entries of a data page that satisfy the conditions, with their
 * distance to the query of an ordered scan, else to the first condition's
 * center (or 0; with any_cond, to the condition's center), into out.
 */
HAMMING_POPCOUNT_CLONES
static int
data_page_matches(const HammingScanOpaque so, Page page, BlockNumber blkno, HammingHit *out)
{
	const uint64 *fps = HammingPageFingerprints(page);
	const ItemPointerData *tids = HammingPageTids(page);
	int			n = HammingPageGetOpaque(page)->nentries;
	int			found = 0;
	int			i;

	if (so->any_cond && so->nconds > 0)
	{
		/* near any condition's center, each entry once */
		uint16		slots[HAMMING_PAGE_CAPACITY];
		bool		taken[HAMMING_PAGE_CAPACITY];
		int			c;

		memset(taken, 0, n * sizeof(bool));
		for (c = 0; c < so->nconds; c++)
		{
			int			nnear = hamming_near_slots(fps, n, so->center[c], 0, so->radius[c], slots);
			int			k;

			for (k = 0; k < nnear; k++)
			{
				i = slots[k];
				if (taken[i] || !ItemPointerIsValid(&tids[i]))
					continue;
				taken[i] = true;
				out[found].tid = tids[i];
				out[found].slot = i;
				out[found].blkno = blkno;
				out[found++].distance = hamming_popcount(fps[i] ^ so->center[c]);
			}
		}
	}
	else if (so->nconds > 0)
	{
		/* near the first condition's center, then the others */
		uint16		slots[HAMMING_PAGE_CAPACITY];
		int			nnear = hamming_near_slots(fps, n, so->center[0], 0, so->radius[0], slots);
		simhash		from = so->ordered ? so->query : so->center[0];
		int			k;

		for (k = 0; k < nnear; k++)
		{
			i = slots[k];
			if (!ItemPointerIsValid(&tids[i]) || (so->nconds > 1 && !matches_conditions(so, fps[i])))
				continue;
			out[found].tid = tids[i];
			out[found].slot = i;
			out[found].blkno = blkno;
			out[found++].distance = hamming_popcount(fps[i] ^ from);
		}
	}
	else
	{
		/* every live entry, with its distance to the query of an ordered scan */
		for (i = 0; i < n; i++)
		{
			if (!ItemPointerIsValid(&tids[i]))
				continue;		/* cleared by VACUUM */
			out[found].tid = tids[i];
			out[found].slot = i;
			out[found].blkno = blkno;
			out[found++].distance = so->ordered ? hamming_popcount(fps[i] ^ so->query) : 0;
		}
	}
	return found;
}

/* the live entries of a page of NULL fingerprints, into out */
static int
null_page_entries(Page page, BlockNumber blkno, HammingHit *out)
{
	int			found = 0;
	int			i;

	for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
	{
		if (!ItemPointerIsValid(&HammingPageTids(page)[i]))
			continue;			/* cleared by VACUUM (a merged index's NULL pages) */
		out[found].tid = HammingPageTids(page)[i];
		out[found].distance = 0;
		out[found].slot = i;
		out[found++].blkno = blkno;
	}
	return found;
}

/*
 * Position pos of a pass over the view (hamming_pass_block), at blkno,
 * share-locked and checked: a page of the view's tables, or of its tail.
 */
static Buffer
lock_pass_page(IndexScanDesc scan, BlockNumber pos, BlockNumber blkno)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	Buffer		buffer = hamming_lock_page(scan->indexRelation, blkno, BUFFER_LOCK_SHARE, NULL);
	Page		page = BufferGetPage(buffer);

	if (pos < so->tables.table0_pages)
		hamming_check_table_page(scan->indexRelation, &so->tables, page, blkno, HAMMING_DATA);
	else if (pos < so->tables.pass_pages)
		hamming_check_table_page(scan->indexRelation, &so->tables, page, blkno, HAMMING_NULLS);
	else
		hamming_check_tail_page(scan->indexRelation, &so->tables, page, blkno);
	return buffer;
}

/*
 * Read the next page of the index (from pass position so->next_block) that has rows to
 * return into so->hits: data pages when want_data, pages of NULL
 * fingerprints when want_nulls (only for scans without conditions).
 * Returns false at the end of the index.
 */
static bool
load_next_page(IndexScanDesc scan, bool want_data, bool want_nulls)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;

	want_nulls &= so->nconds == 0;
	if (!want_data && !want_nulls)
		return false;
	for (;;)
	{
		BlockNumber pos = so->next_block;
		BlockNumber blkno;
		Buffer		buffer;
		Page		page;

		if (!hamming_pass_block(&so->tables, pos, &blkno))
			break;
		so->next_block = pos + 1;
		CHECK_FOR_INTERRUPTS();
		buffer = lock_pass_page(scan, pos, blkno);
		page = BufferGetPage(buffer);
		so->nhits = 0;
		so->next_hit = 0;
		if (want_data && hamming_page_is(page, HAMMING_DATA))
			so->nhits = data_page_matches(so, page, blkno, so->hits);
		else if (want_nulls && hamming_page_is(page, HAMMING_NULLS))
			so->nhits = null_page_entries(page, blkno, so->hits);
		UnlockReleaseBuffer(buffer);
		if (so->nhits > 0)
			return true;
	}
	return false;
}

/*
 * Offer the entries of a data page to a heap of at most cap hits: those
 * after *after in (distance, heap TID) order (if after is given) that satisfy
 * every condition.  *cutoff is the distance of the heap's root once it is
 * full (no farther entry can enter).
 */
HAMMING_POPCOUNT_CLONES
static int
offer_page(const HammingScanOpaque so, Page page, BlockNumber blkno, HammingHit *heap, int n,
		   int cap, const HammingHit *after, int *cutoff)
{
	const uint64 *fps = HammingPageFingerprints(page);
	const ItemPointerData *tids = HammingPageTids(page);
	int			nentries = HammingPageGetOpaque(page)->nentries;
	int			floor = after ? after->distance : 0;
	simhash		query = so->query;
	uint16		slots[HAMMING_PAGE_CAPACITY];
	int			nnear = hamming_near_slots(fps, nentries, query, floor, *cutoff, slots);
	int			k;

	for (k = 0; k < nnear; k++)
	{
		int			i = slots[k];
		int			d = hamming_popcount(fps[i] ^ query);
		HammingHit	hit;

		if (d > *cutoff)
			continue;			/* the heap filled up since */
		hit.tid = tids[i];
		hit.distance = d;
		hit.slot = i;
		hit.blkno = blkno;
		if (after && hamming_hit_cmp(&hit, after) <= 0)
			continue;
		if (!matches_conditions(so, fps[i]) || !ItemPointerIsValid(&hit.tid))
			continue;
		if (n < cap)
		{
			hamming_heap_push(heap, n++, hit);
			if (n == cap)
				*cutoff = heap[0].distance;
		}
		else if (hamming_hit_cmp(&hit, &heap[0]) < 0)
		{
			heap[0] = hit;
			hamming_heap_sift_down(heap, n, 0);
			*cutoff = heap[0].distance;
		}
	}
	return n;
}

/*
 * Offer the data pages of a pass over the view, from position first to the
 * end, to a heap (offer_page); returns the heap's size, adds the entries
 * read to *entries.
 */
static int
offer_pages(IndexScanDesc scan, BlockNumber first, HammingHit *heap, int n, int cap,
			const HammingHit *after, int *cutoff, double *entries)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	BlockNumber pos;
	BlockNumber blkno;

	for (pos = first; hamming_pass_block(&so->tables, pos, &blkno); pos++)
	{
		Buffer		buffer;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buffer = lock_pass_page(scan, pos, blkno);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_DATA))
		{
			n = offer_page(so, page, blkno, heap, n, cap, after, cutoff);
			*entries += HammingPageGetOpaque(page)->nentries;
		}
		UnlockReleaseBuffer(buffer);
	}
	return n;
}

/* one pass of an ordered scan: the next batch, sorted, into so->hits */
static void
ordered_pass(IndexScanDesc scan)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	int			cutoff = SIMHASH_BITS;
	double		entries = 0;
	int			n;

	n = offer_pages(scan, 0, so->hits, 0, so->batch_size,
					so->have_last ? &so->last : NULL, &cutoff, &entries);

	qsort(so->hits, n, sizeof(HammingHit), hamming_hit_qsort_cmp);
	so->nhits = n;
	so->next_hit = 0;
	if (n < so->batch_size)
		so->done = true;		/* every fingerprint has been returned after these */
	else
	{
		/* the next pass keeps more, within work_mem */
		int			limit = hamming_hits_limit();
		int			next = Min((Size) so->batch_size * HAMMING_BATCH_GROWTH, (Size) limit);

		if (next > so->batch_size)
		{
			make_room(so, next);
			so->batch_size = next;
		}
	}
}

/*
 * Rows that probes of the tables (and reads of the tail) find: into so->hits
 * (up to limit rows; more is an overflow) or into a bitmap.
 */
typedef struct Collector
{
	HammingScanOpaque so;
	int			above;			/* only rows farther than this */
	int			limit;
	bool		overflow;
	TIDBitmap  *tbm;
	int64		ntids;
	int			nbuffered;
	ItemPointerData buffered[HAMMING_PAGE_CAPACITY];
} Collector;

static bool
collector_match(void *arg, simhash fp, int distance)
{
	Collector  *c = (Collector *) arg;

	return distance > c->above && matches_conditions(c->so, fp);
}

static void
collector_flush(Collector *c)
{
	/* the rows of an index of text are rechecked */
	tbm_add_tuples(c->tbm, c->buffered, c->nbuffered, c->so->any_cond);
	c->ntids += c->nbuffered;
	c->nbuffered = 0;
}

static bool
collector_emit(void *arg, const HammingHit *hit)
{
	Collector  *c = (Collector *) arg;
	HammingScanOpaque so = c->so;

	if (c->tbm)
	{
		c->buffered[c->nbuffered++] = hit->tid;
		if (c->nbuffered == lengthof(c->buffered))
			collector_flush(c);
		return true;
	}
	if (so->nhits >= c->limit)
	{
		c->overflow = true;
		return false;
	}
	if (so->nhits >= so->max_hits)
		make_room(so, Min((Size) so->max_hits * 2, (Size) c->limit));
	so->hits[so->nhits++] = *hit;
	return true;
}

static void
collector_init(Collector *c, HammingScanOpaque so, int above, TIDBitmap *tbm)
{
	memset(c, 0, offsetof(Collector, buffered));
	c->so = so;
	c->above = above;
	c->limit = hamming_hits_limit();
	c->tbm = tbm;
	so->nhits = 0;
	so->next_hit = 0;
}

/*
 * The tail pages of a scan that probed that this backend does not keep:
 * read, kept when full, their rows collected when not (an ordered scan's
 * ring takes the rows farther than the collector's above bits and within
 * radius).  False when the collector said stop.
 */
static bool
tail_not_kept(IndexScanDesc scan, HammingTailCache *tc, Collector *c, int radius)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	HammingHit	found[HAMMING_PAGE_CAPACITY];
	BlockNumber pos;
	BlockNumber blkno;

	for (pos = so->tables.pass_pages; hamming_pass_block(&so->tables, pos, &blkno); pos++)
	{
		Buffer		buffer;
		Page		page;
		int			n = 0;
		int			i;

		if (hamming_tail_cache_has(tc, blkno))
			continue;
		CHECK_FOR_INTERRUPTS();
		buffer = lock_pass_page(scan, pos, blkno);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_DATA) && !hamming_tail_cache_add(tc, page, blkno))
			n = data_page_matches(so, page, blkno, found);
		UnlockReleaseBuffer(buffer);
		for (i = 0; i < n; i++)
		{
			if (so->ordered && (found[i].distance <= c->above || found[i].distance > radius))
				continue;
			if (!collector_emit(c, &found[i]))
				return false;
		}
	}
	return true;
}

/*
 * The rows of the kept tail pages within radius[j] of center[j] for each of
 * the ncenters, from the kept entry numbered from on (until they outgrow
 * the collector)
 */
static void
tail_kept(HammingTailCache *tc, Collector *c, uint32 from, const simhash *center,
		  const int *radius, int ncenters)
{
	int			j;

	for (j = 0; j < ncenters; j++)
		if (!hamming_tail_cache_probe(tc, from, center[j], radius[j], collector_match, collector_emit, c))
			return;
}

/*
 * The tail of a scan that probed, through the full tail pages this backend
 * keeps (hamming_tail_cache.c): the pages it does not keep yet, then the
 * kept pages' rows within radius of center
 */
static void
tail_from_cache(IndexScanDesc scan, HammingTailCache *tc, Collector *c, simhash center, int radius)
{
	if (tail_not_kept(scan, tc, c, radius))
		tail_kept(tc, c, 0, &center, &radius, 1);
}

/*
 * May the scan take the tail pages this backend keeps?  An MVCC scan may,
 * and so may a scan that finds each entry on its page again before it
 * returns the row (keep_pins: hit_still_indexed), not a bitmap scan under
 * another snapshot.
 */
static inline bool
may_keep_tail(IndexScanDesc scan)
{
	return ((HammingScanOpaque) scan->opaque)->keep_pins || IsMVCCSnapshot(scan->xs_snapshot);
}

/* heap TID order */
static int
hit_tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const HammingHit *) a)->tid,
							  (ItemPointer) &((const HammingHit *) b)->tid);
}

/*
 * The rows that the last exclusion check of an index of text found in the
 * tables, and in the tail pages its backend keeps.  PostgreSQL checks the
 * row of an INSERT ... ON CONFLICT twice, before and after it inserts it,
 * each time by a scan under a dirty snapshot with the same conditions.
 * Between the two scans only the tail gains rows: a merge writes new tables
 * under a new tables_id, and VACUUM only takes the TID off a table entry,
 * in place, which the scan checks again as it returns the row
 * (hit_still_indexed).  So a scan with the conditions of the last one, on
 * tables of the same identity, takes its rows from the tables without
 * probing them.  The kept tail pages likewise only lose entries while
 * their backend keeps them under one serial (hamming_tail_cache.c): the
 * scan takes the rows of the entries kept then, and reads the tail pages
 * that are not kept and looks among the entries kept since.  Kept within
 * work_mem, until the transaction ends.
 */
typedef struct CheckMemo
{
	Oid			relid;			/* InvalidOid: nothing kept */
	Oid			relfilenode;
	uint64		tables_id;
	int			nconds;
	simhash		center[NEARDUP_QUARTERS];
	int			radius[NEARDUP_QUARTERS];
	uint64		tail_serial;	/* of the kept tail pages the rows include; 0: none */
	uint32		tail_entries;	/* the kept entries they include */
	int			nhits;
	HammingHit *hits;
} CheckMemo;

static CheckMemo check_memo;
static MemoryContext check_memo_cxt = NULL;

static void
forget_check_memo(XactEvent event, void *arg)
{
	check_memo.relid = InvalidOid;
	if (check_memo_cxt != NULL)
		MemoryContextReset(check_memo_cxt);
}

static bool
check_memo_holds(IndexScanDesc scan)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;

	return check_memo.relid == RelationGetRelid(scan->indexRelation) &&
		check_memo.relfilenode == scan->indexRelation->rd_rel->relfilenode &&
		check_memo.tables_id == so->tables.tables_id &&
		check_memo.nconds == so->nconds &&
		memcmp(check_memo.center, so->center, so->nconds * sizeof(simhash)) == 0 &&
		memcmp(check_memo.radius, so->radius, so->nconds * sizeof(int)) == 0;
}

/*
 * Keep the scan's rows of the tables, so->hits[0, ntables), and with tc
 * those of its first tail_entries entries, so->hits[kept, nhits), if they
 * fit in work_mem
 */
static void
remember_check(IndexScanDesc scan, int ntables, HammingTailCache *tc, uint32 tail_entries, int kept)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	int			nkept = tc ? so->nhits - kept : 0;

	if (check_memo_cxt == NULL)
	{
		check_memo_cxt = AllocSetContextCreate(TopMemoryContext, "simhash exclusion check rows",
											   ALLOCSET_SMALL_SIZES);
		RegisterXactCallback(forget_check_memo, NULL);
	}
	forget_check_memo(XACT_EVENT_COMMIT, NULL);
	if (so->nconds > NEARDUP_QUARTERS ||
		(Size) (ntables + nkept) * sizeof(HammingHit) > (Size) work_mem * 1024)
		return;
	check_memo.hits = MemoryContextAlloc(check_memo_cxt, Max(ntables + nkept, 1) * sizeof(HammingHit));
	memcpy(check_memo.hits, so->hits, ntables * sizeof(HammingHit));
	if (nkept > 0)
		memcpy(check_memo.hits + ntables, so->hits + kept, nkept * sizeof(HammingHit));
	check_memo.nhits = ntables + nkept;
	check_memo.tail_serial = tc ? hamming_tail_cache_serial(tc) : 0;
	check_memo.tail_entries = tc ? tail_entries : 0;
	check_memo.nconds = so->nconds;
	memcpy(check_memo.center, so->center, so->nconds * sizeof(simhash));
	memcpy(check_memo.radius, so->radius, so->nconds * sizeof(int));
	check_memo.tables_id = so->tables.tables_id;
	check_memo.relfilenode = scan->indexRelation->rd_rel->relfilenode;
	check_memo.relid = RelationGetRelid(scan->indexRelation);
}

/*
 * The scan of an index of text (any_cond): every entry within the radius
 * of any of the query's quarters, by probes for each quarter and the tail,
 * or by a pass (without conditions: every row, NULLs too); into the
 * bitmap, or into so->hits, each row once, in heap TID order (its four
 * entries may all match).  A plain scan keeps all its rows in memory (few:
 * a text's near-duplicates), to return each once.
 */
/* the rows of the pass's pages [pos, end) into the collector */
static void
collect_pass(IndexScanDesc scan, Collector *c, BlockNumber pos, BlockNumber end)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	HammingHit	found[HAMMING_PAGE_CAPACITY];
	BlockNumber blkno;
	int			i;

	for (; pos < end && hamming_pass_block(&so->tables, pos, &blkno); pos++)
	{
		Buffer		buffer;
		Page		page;
		int			n = 0;

		CHECK_FOR_INTERRUPTS();
		buffer = lock_pass_page(scan, pos, blkno);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_DATA))
			n = data_page_matches(so, page, blkno, found);
		else if (so->nconds == 0 && hamming_page_is(page, HAMMING_NULLS))
			n = null_page_entries(page, blkno, found);
		UnlockReleaseBuffer(buffer);
		for (i = 0; i < n; i++)
			collector_emit(c, &found[i]);
	}
}

static void
start_any(IndexScanDesc scan, TIDBitmap *tbm, int64 *ntids)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	Collector	c;
	BlockNumber pos = 0;
	bool		probed = false; /* the tables' rows found without a pass */
	bool		remembered = false; /* they and the kept tail's come from the last check */
	int			i;

	/* an exclusion check's scan (it holds the page of each row it returns) */
	bool		check = tbm == NULL && so->nconds > 0 && !IsMVCCSnapshot(scan->xs_snapshot);

	collector_init(&c, so, -1, tbm);
	c.limit = INT_MAX;
	if (check && check_memo_holds(scan))
	{
		/* the rows of the last check, which had these conditions */
		make_room(so, check_memo.nhits);
		memcpy(so->hits, check_memo.hits, check_memo.nhits * sizeof(HammingHit));
		so->nhits = check_memo.nhits;
		pos = so->tables.pass_pages;
		probed = remembered = true;
	}
	else if (so->nconds > 0 && hamming_probe_pays(&so->tables, so->radius[so->nconds - 1], so->nconds, 0, 0))
	{
		for (i = 0; i < so->nconds; i++)
			hamming_probe(scan->indexRelation, &so->tables, so->center[i], so->radius[i],
						  collector_match, collector_emit, &c);
		pos = so->tables.pass_pages;
		probed = true;
	}
	else if (check)
	{
		/* a pass: table 0's rows, kept, then the tail's */
		collect_pass(scan, &c, 0, so->tables.pass_pages);
		remember_check(scan, so->nhits, NULL, 0, 0);
		pos = so->tables.pass_pages;
	}
	if (probed)
	{
		/* the tail through the pages this backend keeps, when the scan may */
		HammingTailCache *tc = may_keep_tail(scan) ? hamming_tail_cache(scan->indexRelation, &so->tables) : NULL;
		int			ntables = so->nhits;

		if (tc)
		{
			/* the rows of the entries kept when the last check kept its rows are among them */
			uint32		from = remembered && check_memo.tail_serial == hamming_tail_cache_serial(tc) ?
				check_memo.tail_entries : 0;

			if (tail_not_kept(scan, tc, &c, 0))
			{
				int			kept = so->nhits;
				uint32		entries = hamming_tail_cache_entries(tc);

				tail_kept(tc, &c, from, so->center, so->radius, so->nconds);
				if (check && !remembered)
					remember_check(scan, ntables, tc, entries, kept);
			}
			pos += hamming_tail_pages(&so->tables);
		}
		else if (check && !remembered)
			remember_check(scan, ntables, NULL, 0, 0);
	}
	/* the rest of a pass: the tail, or every page */
	collect_pass(scan, &c, pos, InvalidBlockNumber);
	if (tbm)
	{
		collector_flush(&c);
		*ntids += c.ntids;
		return;
	}
	if (so->nhits > 1)
	{
		int			kept = 1;

		qsort(so->hits, so->nhits, sizeof(HammingHit), hit_tid_cmp);
		for (i = 1; i < so->nhits; i++)
			if (!ItemPointerEquals(&so->hits[i].tid, &so->hits[kept - 1].tid))
				so->hits[kept++] = so->hits[i];
		so->nhits = kept;
	}
}

/*
 * An unordered scan starts: probe the tables when that pays, for the
 * condition of the smallest radius; the tail comes next, at once through
 * the tail pages this backend keeps when the scan may use them.  Otherwise
 * (or when the rows found outgrow work_mem) the scan reads every page.
 */
static void
start_unordered(IndexScanDesc scan, TIDBitmap *tbm, int64 *ntids)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	int			best = 0;
	int			i;

	so->next_block = 0;
	so->probing = false;
	hamming_reread_tables(scan->indexRelation, &so->tables);
	if (so->any_cond)
	{
		start_any(scan, tbm, ntids);
		return;
	}
	if (so->nconds == 0)
		return;
	for (i = 1; i < so->nconds; i++)
		if (so->radius[i] < so->radius[best])
			best = i;
	if (hamming_probe_pays(&so->tables, so->radius[best], 1, 0, 0))
	{
		Collector	c;
		HammingTailCache *tc = NULL;

		/* rows found on their page again, or MVCC scans (hamming_tail_cache.c) */
		if (may_keep_tail(scan))
			tc = hamming_tail_cache(scan->indexRelation, &so->tables);
		collector_init(&c, so, -1, tbm);
		hamming_probe(scan->indexRelation, &so->tables, so->center[best], so->radius[best],
					  collector_match, collector_emit, &c);
		if (!c.overflow && tc)
			tail_from_cache(scan, tc, &c, so->center[best], so->radius[best]);
		if (c.overflow)
		{
			so->nhits = 0;
			return;
		}
		if (tbm)
		{
			collector_flush(&c);
			*ntids += c.ntids;
		}
		so->probing = true;
		/* the tail next, unless it was read */
		so->next_block = so->tables.pass_pages + (tc ? hamming_tail_pages(&so->tables) : 0);
	}
}

static void
free_tail(HammingScanOpaque so)
{
	if (so->tail)
		pfree(so->tail);
	so->tail = NULL;
	so->ntail = 0;
	so->next_tail = 0;
}

/*
 * The nearest rows of the tail farther than above bits that satisfy the
 * scan's conditions, sorted, into so->tail: as many as limit allows, all of
 * those within so->tail_covered bits.  The rings of an ordered scan take
 * them from there; the tail is read again only when a ring goes beyond
 * so->tail_covered.
 */
static void
read_tail(IndexScanDesc scan, int above, int limit)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	HammingHit	after;
	int			cap;
	int			cutoff = SIMHASH_BITS;

	free_tail(so);
	so->tail_pages = hamming_tail_pages(&so->tables);
	so->tail_entries = 0;
	cap = (int) Min((Size) limit, (Size) so->tail_pages * HAMMING_PAGE_CAPACITY);
	so->tail = palloc(Max(cap, 1) * sizeof(HammingHit));
	/* after every row at distance above (if any): a TID past every heap TID */
	after.distance = Max(above, 0);
	ItemPointerSet(&after.tid, InvalidBlockNumber, PG_UINT16_MAX);
	so->ntail = offer_pages(scan, so->tables.pass_pages, so->tail, 0, cap,
							above >= 0 ? &after : NULL, &cutoff, &so->tail_entries);
	/* a full heap may hold only some rows at its farthest distance */
	so->tail_covered = so->ntail == cap && cap > 0 ? so->tail[0].distance - 1 : SIMHASH_BITS;
	qsort(so->tail, so->ntail, sizeof(HammingHit), hamming_hit_qsort_cmp);
	while (so->ntail > 0 && so->tail[so->ntail - 1].distance > so->tail_covered)
		so->ntail--;
}

/*
 * The next ring of an ordered scan into so->hits, sorted: the rows farther
 * than so->ring bits and within the next ring's, from the tables and the
 * tail.  Returns false when rings no longer pay (passes from then on), or
 * when the tail's rows and a ring's outgrow work_mem.
 */
static bool
next_ring(IndexScanDesc scan)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;

	if (so->rings_over)
		return false;
	if (so->ring == -1)
	{
		hamming_reread_tables(scan->indexRelation, &so->tables);
		if (so->tables.ntables == 0)
		{
			so->rings_over = true;
			return false;
		}
		/* until the tail is read: its size as its pages tell */
		so->tail_pages = hamming_tail_pages(&so->tables);
		so->tail_entries = (double) so->tail_pages * HAMMING_PAGE_CAPACITY;
		so->tail_covered = -1;
		so->tail_cap = 0;
	}
	for (;;)
	{
		int			ring = Min(so->ring + HAMMING_RING_STEP, SIMHASH_BITS);
		Collector	c;
		HammingTailCache *tc;

		CHECK_FOR_INTERRUPTS();
		if (!hamming_probe_pays(&so->tables, ring, 1, so->tail_pages, so->tail_entries))
			break;
		if (may_keep_tail(scan) &&
			hamming_tail_cache_fits(&so->tables) &&
			(tc = hamming_tail_cache(scan->indexRelation, &so->tables)) != NULL)
		{
			/*
			 * The tail's rows of the ring through the pages this backend
			 * keeps, when they can hold it (else each ring would read the
			 * rest again: the rings read the tail once for several, below)
			 */
			collector_init(&c, so, so->ring, NULL);
			hamming_probe(scan->indexRelation, &so->tables, so->query, ring,
						  collector_match, collector_emit, &c);
			if (!c.overflow)
				tail_from_cache(scan, tc, &c, so->query, ring);
		}
		else
		{
			/*
			 * The tail's nearest rows, as many as a ring needs: a few first (a
			 * LIMIT 10 needs no more, and keeping and sorting more costs more
			 * than reading the tail again), 8 times more at each read, up to
			 * half of work_mem
			 */
			while (ring > so->tail_covered && so->tail_cap < hamming_hits_limit() / 2)
			{
				so->tail_cap = so->tail_cap == 0 ? HAMMING_TAIL_FIRST :
					(int) Min((Size) so->tail_cap * HAMMING_BATCH_GROWTH, (Size) hamming_hits_limit() / 2);
				read_tail(scan, so->ring, so->tail_cap);
			}
			if (ring > so->tail_covered)
				break;			/* the tail's rows of this ring outgrow work_mem */
			collector_init(&c, so, so->ring, NULL);
			c.limit -= so->ntail;
			hamming_probe(scan->indexRelation, &so->tables, so->query, ring,
						  collector_match, collector_emit, &c);
			while (!c.overflow && so->next_tail < so->ntail &&
				   so->tail[so->next_tail].distance <= ring)
				collector_emit(&c, &so->tail[so->next_tail++]);
		}
		if (c.overflow)
			break;
		so->ring = ring;
		if (ring == SIMHASH_BITS)
			so->done = true;	/* every fingerprint is in these hits */
		if (so->nhits > 0 || so->done)
		{
			qsort(so->hits, so->nhits, sizeof(HammingHit), hamming_hit_qsort_cmp);
			return true;
		}
	}
	/* passes from now on: they read the tail */
	so->nhits = 0;
	so->rings_over = true;
	free_tail(so);
	return false;
}

static void
release_pin(HammingScanOpaque so)
{
	if (BufferIsValid(so->pinned))
		ReleaseBuffer(so->pinned);
	so->pinned = InvalidBuffer;
}

/*
 * Before a scan that keeps pins returns a hit: is its entry still on its
 * page, with a fingerprint that the scan takes at the hit's distance?  (It
 * was read, maybe with other pages' entries, without the pin that is taken
 * now; VACUUM may have removed it since, and a new row may even have taken
 * its heap TID and an entry on that page.)  The page stays pinned until
 * the scan returns a row of another page or reads more pages, so VACUUM
 * cannot remove the entry, nor the heap tuple behind it, before the
 * executor has looked at the row.
 */
static bool
hit_still_indexed(IndexScanDesc scan, const HammingHit *hit)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	Page		page;
	bool		found = false;

	if (!BufferIsValid(so->pinned) || BufferGetBlockNumber(so->pinned) != hit->blkno)
	{
		release_pin(so);
		so->pinned = ReadBuffer(scan->indexRelation, hit->blkno);
	}
	LockBuffer(so->pinned, BUFFER_LOCK_SHARE);
	page = BufferGetPage(so->pinned);
	if (hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
	{
		const ItemPointerData *tids = HammingPageTids(page);
		int			n = HammingPageGetOpaque(page)->nentries;
		int			i;

		/* its place when read first, else anywhere on the page */
		for (i = -1; i < n && !found; i++)
		{
			int			slot = i < 0 ? hit->slot : i;
			simhash		fp;

			if (slot >= n || !ItemPointerEquals((ItemPointer) &tids[slot], (ItemPointer) &hit->tid))
				continue;
			fp = HammingPageFingerprints(page)[slot];
			if (hamming_page_is(page, HAMMING_NULLS))
				found = so->nconds == 0 && (!so->ordered || so->nulls_phase);
			else
				found = !so->nulls_phase && matches_conditions(so, fp) &&
					(!so->ordered || hamming_popcount(fp ^ so->query) == hit->distance);
		}
	}
	LockBuffer(so->pinned, BUFFER_LOCK_UNLOCK);
	return found;
}

IndexScanDesc
hamming_begin_scan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	HammingScanOpaque so = palloc0(sizeof(HammingScanOpaqueData));

	so->center = palloc(sizeof(simhash) * Max(nkeys, HAMMING_MAX_ROW_ENTRIES));
	so->radius = palloc(sizeof(int) * Max(nkeys, HAMMING_MAX_ROW_ENTRIES));
	so->batch_size = HAMMING_PAGE_CAPACITY;
	so->max_hits = HAMMING_PAGE_CAPACITY;
	so->hits = palloc(sizeof(HammingHit) * so->max_hits);
	hamming_scan_init_orderbys(scan, norderbys);
	so->pinned = InvalidBuffer;
	scan->opaque = so;
	return scan;
}

void
hamming_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	int			i;

	hamming_scan_set_keys(scan, keys, orderbys);

	so->nconds = 0;
	so->nothing = false;
	so->any_cond = hamming_keeps_text(scan->indexRelation);
	for (i = 0; so->any_cond && i < scan->numberOfKeys; i++)
	{
		/*
		 * An index of text: the entries within radius[j] bits of the
		 * query's quarter j for some j (neardup_quarter_radii), whichever
		 * quarter of their row they are, for the first condition (the
		 * executor rechecks them all)
		 */
		ScanKey		key = &scan->keyData[i];
		uint64		quarters[NEARDUP_QUARTERS];
		int			radius;
		int			j;

		if (key->sk_flags & SK_ISNULL)
			so->nothing = true; /* strict operators: no row matches NULL */
		else if (so->nconds == 0)
		{
			if (!neardup_query(key->sk_argument, key->sk_strategy == SIMHASH_STRATEGY_IN_BALL,
							   quarters, &radius))
				so->nothing = true; /* a text without shingles */
			neardup_quarter_radii(radius, so->radius);
			for (j = 0; j < NEARDUP_QUARTERS; j++)
				so->center[j] = quarters[j];
			so->nconds = NEARDUP_QUARTERS;
		}
	}
	for (i = 0; !so->any_cond && i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		simhash		center;
		int			radius;

		if (key->sk_flags & SK_ISNULL)
		{
			so->nothing = true; /* strict operators: no row matches NULL */
			continue;
		}
		switch (key->sk_strategy)
		{
			case SIMHASH_STRATEGY_IN_BALL:
				center = DatumGetSimhashBallP(key->sk_argument)->center;
				radius = DatumGetSimhashBallP(key->sk_argument)->radius;
				break;
			case SIMHASH_STRATEGY_SIMILAR:
				center = DatumGetSimhash(key->sk_argument);
				radius = hamming_similar_radius(scan->indexRelation);
				break;
			case SIMHASH_STRATEGY_EQUAL:
				center = DatumGetSimhash(key->sk_argument);
				radius = 0;
				break;
			default:
				elog(ERROR, "hamming: unrecognized strategy number %d", key->sk_strategy);
		}
		if (radius < 0)
			so->nothing = true;
		so->center[so->nconds] = center;
		so->radius[so->nconds++] = radius;
	}

	/* an ordering by the distance to NULL orders nothing: a plain scan */
	so->ordered = scan->numberOfOrderBys > 0 && !(scan->orderByData[0].sk_flags & SK_ISNULL);
	if (so->ordered)
	{
		if (scan->orderByData[0].sk_strategy != SIMHASH_STRATEGY_NEAREST)
			elog(ERROR, "hamming: unrecognized ordering strategy %d", scan->orderByData[0].sk_strategy);
		so->query = DatumGetSimhash(scan->orderByData[0].sk_argument);
	}

	release_pin(so);
	so->nhits = 0;
	so->next_hit = 0;
	so->next_block = 0;
	so->started = false;
	so->done = false;
	so->nulls_phase = false;
	so->have_last = false;
	so->batch_size = HAMMING_PAGE_CAPACITY;
	so->probing = false;
	so->ring = -1;
	so->rings_over = false;
	free_tail(so);
}

bool
hamming_get_tuple(IndexScanDesc scan, ScanDirection dir)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;

	if (so->nothing)
		return false;
	if (!so->started)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->started = true;

		/*
		 * An index-only scan trusts the visibility map for the TIDs it
		 * returns, and a scan under a non-MVCC snapshot (an exclusion
		 * constraint's check) any tuple at the TID: both need the heap tuple
		 * of the TID to stay the row that was indexed until they have
		 * looked at it.  An MVCC scan's snapshot does not see a row that
		 * takes over a TID after VACUUM freed it.
		 */
		so->keep_pins = scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot);
		if (!so->ordered)
			start_unordered(scan, NULL, NULL);
	}
	for (;;)
	{
		if (so->next_hit < so->nhits)
		{
			HammingHit *hit = &so->hits[so->next_hit++];

			if (so->keep_pins && !hit_still_indexed(scan, hit))
				continue;		/* VACUUM removed it: its row is dead to everyone */
			scan->xs_heaptid = hit->tid;
			scan->xs_recheck = so->any_cond;	/* an index of text */
			if (scan->xs_want_itup)
			{
				/*
				 * An index-only scan that needs no column (count(*)): the
				 * fingerprint is not returned, a NULL stands for it.
				 */
				if (so->null_itup == NULL)
				{
					Datum		value = (Datum) 0;
					bool		isnull = true;

					so->null_itup = index_form_tuple(RelationGetDescr(scan->indexRelation), &value, &isnull);
				}
				scan->xs_itup = so->null_itup;
				scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
			}
			if (scan->numberOfOrderBys > 0)
			{
				bool		null_distance = !so->ordered || so->nulls_phase;
				int			i;

				scan->xs_orderbyvals[0] = Int32GetDatum(null_distance ? 0 : hit->distance);
				scan->xs_orderbynulls[0] = null_distance;

				/*
				 * The scan follows the first ordering only.  For the others
				 * (ORDER BY fp <-> a, fp <-> b) it reports 0, a lower bound
				 * (NULL for a NULL fingerprint), and asks for a recheck: the
				 * executor computes them and sorts the rows of equal first
				 * distance.
				 */
				for (i = 1; i < scan->numberOfOrderBys; i++)
				{
					scan->xs_orderbyvals[i] = Int32GetDatum(0);
					scan->xs_orderbynulls[i] = so->nulls_phase;
				}
				scan->xs_recheckorderby = scan->numberOfOrderBys > 1;
				if (!null_distance)
				{
					so->last = *hit;
					so->have_last = true;
				}
			}
			return true;
		}
		release_pin(so);		/* the executor is done with the last row */
		if (!so->ordered)
		{
			/* rows in physical order, a page at a time (an index of text: all at once) */
			if (so->any_cond || !load_next_page(scan, true, true))
				return false;
		}
		else if (so->nulls_phase)
		{
			if (!load_next_page(scan, false, true))
				return false;
		}
		else if (so->done)
		{
			/* every fingerprint returned: NULL fingerprints last */
			so->nulls_phase = true;
			so->next_block = 0;
		}
		else if (!next_ring(scan))
			ordered_pass(scan);
	}
}

int64
hamming_get_bitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;
	ItemPointerData tids[HAMMING_PAGE_CAPACITY];
	int64		ntids = 0;

	if (so->nothing)
		return 0;
	pgstat_count_index_scan(scan->indexRelation);
	start_unordered(scan, tbm, &ntids);
	while (!so->any_cond && load_next_page(scan, true, true))
	{
		int			i;

		for (i = 0; i < so->nhits; i++)
			tids[i] = so->hits[i].tid;
		tbm_add_tuples(tbm, tids, so->nhits, false);
		ntids += so->nhits;
	}
	so->nhits = 0;
	return ntids;
}

void
hamming_end_scan(IndexScanDesc scan)
{
	HammingScanOpaque so = (HammingScanOpaque) scan->opaque;

	release_pin(so);
	free_tail(so);
	hamming_free_tables(&so->tables);
	pfree(so->hits);
	if (so->null_itup)
		pfree(so->null_itup);
	pfree(so->center);
	pfree(so->radius);
	pfree(so);
	scan->opaque = NULL;
}
