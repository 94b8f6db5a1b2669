/*
 * hamming128.c
 *	  The "hamming" access method over simhash128 (the operator class
 *	  simhash128_hamming_ops): build, insert, vacuum, scans and cost, which
 *	  hamming_handler.c calls for an index whose key is 16 bytes wide.
 *
 * Layout: the metapage of hamming.h (without probe tables), then packed
 * pages of unordered entries, each page HAMMING128_PAGE_CAPACITY 128-bit
 * fingerprints followed by their heap TIDs, and pages of the TIDs of rows
 * whose fingerprint is NULL.  Every scan reads every page (a pass): at the
 * radii 128-bit fingerprints are used at (a quarter of the bits, k = 28 to
 * 30), probes of blocks do not pay -- multi-index hashing over 8 blocks of
 * 16 bits needs radii 3,3,3,3,3,2,2,2 for k = 28, 3,896 probes that match
 * about 6% of uniformly random fingerprints -- while a pass costs an XOR
 * and two popcounts per entry over 22 bytes an entry, a fraction of a
 * sequential scan of the table.  Inserts append to the insert page of their
 * kind, else to a page that VACUUM listed as at most half full, else to a
 * new page; VACUUM removes dead entries in place (the page's last entry
 * moves into the hole).  A build fills one page of each kind at a time,
 * with parallel workers of the entries that they scan
 * (hamming_build_parallel.c), and WAL-logs the index whole; every change
 * after it goes through generic WAL.  An ordered scan ("ORDER BY fp <-> q") makes passes that each keep
 * the next batch of entries in (distance, heap TID) order after the last
 * one returned (a bounded heap), the batch growing eightfold up to
 * work_mem; rows with a NULL fingerprint come last.
 */
#include "hamming.h"
#include "simhash128.h"
#include "strategy.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/selfuncs.h"
#include "utils/snapmgr.h"

#define HAMMING128_PAGE_CAPACITY \
	(HAMMING_PAGE_SPACE / (sizeof(Simhash128) + sizeof(ItemPointerData)))
#define Page128Fingerprints(page)	((Simhash128 *) HammingPageContents(page))
#define Page128Tids(page) \
	((ItemPointerData *) (HammingPageContents(page) + HAMMING128_PAGE_CAPACITY * sizeof(Simhash128)))

#define FIRST_BATCH		((int) HAMMING128_PAGE_CAPACITY)

/* the planner's cost of an entry in a pass, in cpu_operator_cost (as hamming_cost.c) */
#define ENTRY_COST_FRACTION	0.1

/* the kind of page an entry goes to */
static inline uint16
entry_kind(bool isnull)
{
	return HAMMING_WIDE | (isnull ? HAMMING_NULLS : HAMMING_DATA);
}

/* append an entry (NULL: of a NULL fingerprint) to page, which has room */
static void
page128_append(Page page, const void *entry, ItemPointer tid)
{
	HammingPageOpaque opaque = HammingPageGetOpaque(page);
	const Simhash128 *fp = entry;

	Assert(opaque->nentries < HAMMING128_PAGE_CAPACITY);
	if (fp != NULL)
		Page128Fingerprints(page)[opaque->nentries] = *fp;
	Page128Tids(page)[opaque->nentries] = *tid;
	opaque->nentries++;
}

/* ---- build ---- */

typedef struct Build128State
{
	Relation	index;
	PGAlignedBlock pages[2];	/* being filled, per target */
	BlockNumber last_written[2];
	double		indtuples;
} Build128State;

/* append the page of target behind the index's last page, start a new one */
static void
build_flush(Build128State *state, int target)
{
	Page		page = state->pages[target].data;
	Buffer		buffer;

	if (HammingPageGetOpaque(page)->nentries == 0)
		return;
	buffer = hamming_new_buffer(state->index);
	memcpy(BufferGetPage(buffer), page, BLCKSZ);
	MarkBufferDirty(buffer);
	state->last_written[target] = BufferGetBlockNumber(buffer);
	UnlockReleaseBuffer(buffer);
	hamming_init_page(page, entry_kind(target == HAMMING_TARGET_NULLS));
}

/* an entry (key NULL: of a NULL fingerprint) onto the page of its kind */
static void
build128_add(void *arg, Relation index, bool isnull, const void *key, ItemPointer tid)
{
	Build128State *state = (Build128State *) arg;
	int			target = isnull ? HAMMING_TARGET_NULLS : HAMMING_TARGET_DATA;
	Page		page = state->pages[target].data;

	if (HammingPageGetOpaque(page)->nentries == HAMMING128_PAGE_CAPACITY)
		build_flush(state, target);
	page128_append(page, key, tid);
}

IndexBuildResult *
hamming128_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	Build128State *state = palloc0(sizeof(Build128State));
	HammingEntrySink sink = {build128_add, state};
	IndexBuildResult *result;
	Buffer		metabuf;
	double		reltuples;
	int			target;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	state->index = index;
	metabuf = hamming_new_buffer(index);
	hamming_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);
	for (target = 0; target < 2; target++)
	{
		hamming_init_page(state->pages[target].data, entry_kind(target == HAMMING_TARGET_NULLS));
		state->last_written[target] = InvalidBlockNumber;
	}

	/* the entries of parallel workers' shares and of the leader's (if workers run), or of a serial scan */
	if (!hamming_parallel_build(heap, index, indexInfo, &sink, NULL, NULL, &reltuples, &state->indtuples))
		reltuples = hamming_build_scan_into(heap, index, indexInfo, NULL, true, &sink, &state->indtuples);
	for (target = 0; target < 2; target++)
		build_flush(state, target);

	/* new rows go to the last page of each kind */
	metabuf = ReadBuffer(index, HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	for (target = 0; target < 2; target++)
		HammingPageGetMeta(BufferGetPage(metabuf))->insert_page[target] = state->last_written[target];
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = state->indtuples;
	return result;
}

/* ---- insert ---- */

/*
 * Append to page blkno if it takes entries of this kind and has room (an
 * empty page of the other kind is taken over).
 */
static bool
try_append128(Relation index, Buffer buffer, uint16 kind, const void *fp, ItemPointer tid)
{
	Page		page = BufferGetPage(buffer);
	bool		empty = hamming_page_is(page, HAMMING_WIDE) && HammingPageGetOpaque(page)->nentries == 0;
	bool		fits = empty ||
		(hamming_page_is(page, HAMMING_WIDE) &&
		 (HammingPageGetOpaque(page)->flags & kind) == kind &&
		 HammingPageGetOpaque(page)->nentries < HAMMING128_PAGE_CAPACITY);

	if (fits)
	{
		GenericXLogState *xlog = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlog, buffer, 0);
		if (empty)
			hamming_init_page(page, kind);
		page128_append(page, fp, tid);
		GenericXLogFinish(xlog);
	}
	return fits;
}

bool
hamming128_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid)
{
	uint32		nsorted;		/* no probe tables here: no merges */

	hamming_insert_entry(index, isnull[0] ? HAMMING_TARGET_NULLS : HAMMING_TARGET_DATA, entry_kind(isnull[0]),
						 isnull[0] ? NULL : DatumGetSimhash128P(values[0]), ht_ctid, try_append128, page128_append,
						 &nsorted);
	return false;
}

/* ---- vacuum ---- */

IndexBulkDeleteResult *
hamming128_bulk_delete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber *thinned = palloc(sizeof(BlockNumber) * HAMMING_MAX_FREE_PAGES);
	int			nthinned = 0;
	BlockNumber blkno;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;
		GenericXLogState *xlog = NULL;
		int			n;
		int			i;

		hamming_vacuum_delay();
		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_EXCLUSIVE, info->strategy);
		page = BufferGetPage(buffer);
		if (!hamming_page_is(page, HAMMING_WIDE))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		n = HammingPageGetOpaque(page)->nentries;
		for (i = 0; i < n; i++)
		{
			if (!callback(&Page128Tids(page)[i], callback_state))
				continue;
			if (xlog == NULL)
			{
				xlog = GenericXLogStart(index);
				page = GenericXLogRegisterBuffer(xlog, buffer, 0);
			}
			/* the last entry fills the hole, and is looked at next */
			n--;
			Page128Fingerprints(page)[i] = Page128Fingerprints(page)[n];
			Page128Tids(page)[i] = Page128Tids(page)[n];
			i--;
			stats->tuples_removed++;
		}
		if (xlog != NULL)
		{
			HammingPageGetOpaque(page)->nentries = n;
			GenericXLogFinish(xlog);
			if (n <= HAMMING128_PAGE_CAPACITY / 2 && nthinned < HAMMING_MAX_FREE_PAGES)
				thinned[nthinned++] = blkno;
		}
		stats->num_index_tuples += n;
		UnlockReleaseBuffer(buffer);
	}

	/* list the thinned pages for inserts (not the insert pages, not twice) */
	if (nthinned > 0)
	{
		Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
		GenericXLogState *xlog = GenericXLogStart(index);
		HammingMetaPageData *meta = HammingPageGetMeta(GenericXLogRegisterBuffer(xlog, metabuf, 0));
		int			i,
					j;

		for (i = 0; i < nthinned && meta->nfree < HAMMING_MAX_FREE_PAGES; i++)
		{
			bool		listed = hamming_is_insert_page(meta, thinned[i]);

			for (j = 0; j < (int) meta->nfree && !listed; j++)
				listed = meta->free_page[j] == thinned[i];
			if (!listed)
				meta->free_page[meta->nfree++] = thinned[i];
		}
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(metabuf);
	}
	stats->num_pages = nblocks;
	return stats;
}

IndexBulkDeleteResult *
hamming128_vacuum_cleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	BlockNumber nblocks;
	BlockNumber blkno;

	if (info->analyze_only || stats != NULL)
		return stats;
	/* no bulk delete ran: count the entries */
	stats = palloc0(sizeof(IndexBulkDeleteResult));
	nblocks = RelationGetNumberOfBlocks(info->index);
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer = hamming_lock_page(info->index, blkno, BUFFER_LOCK_SHARE, info->strategy);

		hamming_vacuum_delay();
		if (hamming_page_is(BufferGetPage(buffer), HAMMING_WIDE))
			stats->num_index_tuples += HammingPageGetOpaque(BufferGetPage(buffer))->nentries;
		UnlockReleaseBuffer(buffer);
	}
	stats->num_pages = nblocks;
	return stats;
}

/* ---- scans ---- */

typedef struct Hamming128ScanData
{
	/* conditions: a row matches when it is within radius[i] of center[i] for every i */
	int			nconds;
	Simhash128 *center;
	int		   *radius;
	bool		nothing;		/* some condition can match no row */

	bool		ordered;
	Simhash128	query;

	/* rows found and not yet returned: one page's, or one ordered batch */
	HammingHit *hits;
	int			nhits;
	int			next_hit;
	int			max_hits;
	int			batch_size;		/* ordered: entries kept per pass */

	BlockNumber next_block;		/* next page of a page-by-page scan */
	BlockNumber nblocks;		/* index size when the scan began */
	bool		started;
	bool		data_done;		/* ordered: every matching fingerprint is in hits */
	bool		nulls_phase;	/* ordered: NULL rows now */
	bool		have_last;		/* ordered: the last row returned */
	HammingHit	last;

	IndexTuple	null_itup;		/* what an index-only scan gets (no column is returned) */
} Hamming128ScanData;

typedef Hamming128ScanData *Hamming128Scan;

static inline bool
matches_all(const Hamming128Scan so, const Simhash128 *fp)
{
	int			i;

	for (i = 0; i < so->nconds; i++)
		if (simhash128_distance_of(fp, &so->center[i]) > so->radius[i])
			return false;
	return true;
}

/* the most hits an ordered batch may hold: work_mem */
static int
batch_limit(void)
{
	return (int) Min((Size) work_mem * 1024 / sizeof(HammingHit), (Size) MaxAllocSize / sizeof(HammingHit));
}

IndexScanDesc
hamming128_begin_scan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	Hamming128Scan so = palloc0(sizeof(Hamming128ScanData));

	so->center = palloc(sizeof(Simhash128) * Max(nkeys, 1));
	so->radius = palloc(sizeof(int) * Max(nkeys, 1));
	so->max_hits = FIRST_BATCH;
	so->hits = palloc(sizeof(HammingHit) * so->max_hits);
	hamming_scan_init_orderbys(scan, norderbys);
	scan->opaque = so;
	return scan;
}

void
hamming128_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;
	int			i;

	hamming_scan_set_keys(scan, keys, orderbys);

	so->nconds = 0;
	so->nothing = false;
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];

		if (key->sk_flags & SK_ISNULL)
		{
			so->nothing = true; /* strict operators: no row matches NULL */
			continue;
		}
		switch (key->sk_strategy)
		{
			case SIMHASH_STRATEGY_IN_BALL:
				so->center[so->nconds] = DatumGetSimhash128BallP(key->sk_argument)->center;
				so->radius[so->nconds] = DatumGetSimhash128BallP(key->sk_argument)->radius;
				break;
			case SIMHASH_STRATEGY_EQUAL:
				so->center[so->nconds] = *DatumGetSimhash128P(key->sk_argument);
				so->radius[so->nconds] = 0;
				break;
			default:
				elog(ERROR, "hamming: unrecognized strategy number %d for simhash128", key->sk_strategy);
		}
		if (so->radius[so->nconds] < 0)
			so->nothing = true;
		so->nconds++;
	}

	/* an ordering by the distance to NULL orders nothing: a plain scan */
	so->ordered = scan->numberOfOrderBys > 0 && !(scan->orderByData[0].sk_flags & SK_ISNULL);
	if (so->ordered)
	{
		if (scan->orderByData[0].sk_strategy != SIMHASH_STRATEGY_NEAREST)
			elog(ERROR, "hamming: unrecognized ordering strategy %d", scan->orderByData[0].sk_strategy);
		so->query = *DatumGetSimhash128P(scan->orderByData[0].sk_argument);
	}

	so->nhits = 0;
	so->next_hit = 0;
	so->next_block = HAMMING_METAPAGE_BLKNO + 1;
	so->nblocks = InvalidBlockNumber;
	so->started = false;
	so->data_done = false;
	so->nulls_phase = false;
	so->have_last = false;
	so->batch_size = FIRST_BATCH;
}

/*
 * Read the next page of a page-by-page scan into hits: the matching entries
 * of a data page, the rows of a NULL page when wanted.  False at the end.
 */
static bool
load_next_page(IndexScanDesc scan, bool want_data, bool want_nulls)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;

	if (so->nblocks == InvalidBlockNumber)
		so->nblocks = RelationGetNumberOfBlocks(scan->indexRelation);
	so->nhits = 0;
	so->next_hit = 0;
	while (so->nhits == 0)
	{
		Buffer		buffer;
		Page		page;
		int			n,
					i;

		if (so->next_block >= so->nblocks)
			return false;
		CHECK_FOR_INTERRUPTS();
		buffer = hamming_lock_page(scan->indexRelation, so->next_block++, BUFFER_LOCK_SHARE, NULL);
		page = BufferGetPage(buffer);
		n = hamming_page_is(page, HAMMING_WIDE) ? HammingPageGetOpaque(page)->nentries : 0;
		if (want_data && hamming_page_is(page, HAMMING_DATA))
		{
			const Simhash128 *fps = Page128Fingerprints(page);

			for (i = 0; i < n; i++)
			{
				so->hits[so->nhits].tid = Page128Tids(page)[i];
				so->hits[so->nhits].distance = 0;
				so->nhits += matches_all(so, &fps[i]);
			}
		}
		else if (want_nulls && hamming_page_is(page, HAMMING_NULLS))
		{
			for (i = 0; i < n; i++)
			{
				so->hits[so->nhits].tid = Page128Tids(page)[i];
				so->hits[so->nhits++].distance = 0;
			}
		}
		UnlockReleaseBuffer(buffer);
	}
	return true;
}

/*
 * One pass for an ordered scan: the batch_size smallest matching entries in
 * (distance, TID) order after the last one returned, sorted, into hits.
 */
static void
ordered_pass(IndexScanDesc scan)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;
	BlockNumber nblocks = RelationGetNumberOfBlocks(scan->indexRelation);
	BlockNumber blkno;
	int			n = 0;
	int			i;

	if (so->max_hits < so->batch_size)
	{
		so->hits = repalloc_huge(so->hits, sizeof(HammingHit) * so->batch_size);
		so->max_hits = so->batch_size;
	}
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		buffer = hamming_lock_page(scan->indexRelation, blkno, BUFFER_LOCK_SHARE, NULL);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_WIDE) && hamming_page_is(page, HAMMING_DATA))
		{
			const Simhash128 *fps = Page128Fingerprints(page);
			int			count = HammingPageGetOpaque(page)->nentries;

			for (i = 0; i < count; i++)
			{
				HammingHit	hit;

				hit.distance = (uint16) simhash128_distance_of(&fps[i], &so->query);
				/* not better than the worst kept of a full batch: skip */
				if (n == so->batch_size && hit.distance > so->hits[0].distance)
					continue;
				if (!matches_all(so, &fps[i]))
					continue;
				hit.tid = Page128Tids(page)[i];
				if (so->have_last && hamming_hit_cmp(&hit, &so->last) <= 0)
					continue;
				if (n < so->batch_size)
					hamming_heap_push(so->hits, n++, hit);
				else if (hamming_hit_cmp(&hit, &so->hits[0]) < 0)
				{
					so->hits[0] = hit;
					hamming_heap_sift_down(so->hits, n, 0);
				}
			}
		}
		UnlockReleaseBuffer(buffer);
	}
	qsort(so->hits, n, sizeof(HammingHit), hamming_hit_qsort_cmp);
	so->data_done = n < so->batch_size;
	so->nhits = n;
	so->next_hit = 0;
	so->batch_size = Min((Size) so->batch_size * 8, (Size) Max(batch_limit(), FIRST_BATCH));
}

bool
hamming128_get_tuple(IndexScanDesc scan, ScanDirection dir)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;

	if (so->nothing)
		return false;
	if (!so->started)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->started = true;
	}
	/*
	 * The TIDs of a page are returned after letting go of it: under an MVCC
	 * snapshot a line pointer that VACUUM freed and a new row took since is
	 * invisible, under another (an exclusion constraint's check) the row is
	 * checked against the condition again.
	 */
	scan->xs_recheck = !IsMVCCSnapshot(scan->xs_snapshot);
	scan->xs_recheckorderby = false;
	while (so->next_hit >= so->nhits)
	{
		if (!so->ordered)
		{
			/* NULL rows only when nothing is asked of the fingerprint */
			if (!load_next_page(scan, true, so->nconds == 0))
				return false;
		}
		else if (!so->data_done)
			ordered_pass(scan);
		else
		{
			if (so->nconds > 0)
				return false;
			so->nulls_phase = true;
			if (!load_next_page(scan, false, true))
				return false;
		}
	}
	scan->xs_heaptid = so->hits[so->next_hit].tid;
	if (scan->xs_want_itup)
	{
		/* an index-only scan that needs no column (count(*)): a NULL stands for it */
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
		scan->xs_orderbynulls[0] = !so->ordered || so->nulls_phase;
		scan->xs_orderbyvals[0] = Int32GetDatum(so->hits[so->next_hit].distance);
	}
	if (so->ordered && !so->nulls_phase)
	{
		so->last = so->hits[so->next_hit];
		so->have_last = true;
	}
	so->next_hit++;
	return true;
}

int64
hamming128_get_bitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;
	int64		ntids = 0;

	if (so->nothing)
		return 0;
	pgstat_count_index_scan(scan->indexRelation);
	while (load_next_page(scan, true, so->nconds == 0))
	{
		int			i;

		for (i = 0; i < so->nhits; i++)
			tbm_add_tuples(tbm, &so->hits[i].tid, 1, false);
		ntids += so->nhits;
	}
	return ntids;
}

void
hamming128_end_scan(IndexScanDesc scan)
{
	Hamming128Scan so = (Hamming128Scan) scan->opaque;

	if (so->null_itup)
		pfree(so->null_itup);
	pfree(so->hits);
	pfree(so->center);
	pfree(so->radius);
	pfree(so);
}

/*
 * ---- cost: a pass, as hamming_cost.c charges one ----
 *
 * Not as an index-only scan, though (the planner offers one for count(*),
 * which needs no column): a scan copies a page's TIDs and lets go of it, and
 * VACUUM does not wait for it, so a TID read before VACUUM removed its entry
 * could point at a reused line pointer on a page the visibility map calls
 * all-visible, which only a visit of the heap would catch.  Such a path
 * costs more than any plan that visits the heap, even a disabled one.
 */

void
hamming128_cost_estimate(PlannerInfo *root, IndexPath *path, double loop_count,
						 Cost *indexStartupCost, Cost *indexTotalCost,
						 Selectivity *indexSelectivity, double *indexCorrelation,
						 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);
	*indexStartupCost = 0;
	*indexTotalCost = index->pages * seq_page_cost +
		index->tuples * cpu_operator_cost * ENTRY_COST_FRACTION;
	if (path->path.pathtype == T_IndexOnlyScan)
		*indexTotalCost += 2 * disable_cost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
	*indexPages = index->pages;
}
