/*
 * hamming_insert.c
 *	  Inserting into a "hamming" index of simhash or of text: each entry of
 *	  the row (fingerprint or NULL) goes to the tail (hamming_append.c) on a
 *	  page of its kind; a page that a merge consumed while the insert meant
 *	  to append to it is passed over.  The probe tables never take new
 *	  entries: a merge (hamming_merge.c) moves the tail into new ones, in
 *	  VACUUM, or here when the tail outgrows the index's tail_limit (or,
 *	  unset, a share of the tables).  Every change goes through generic WAL.
 */
#include "hamming.h"

#include "miscadmin.h"
#include "storage/lmgr.h"

/* append to page (exclusively locked, registered for WAL) */
static void
page_append(Page page, const void *entry, ItemPointer tid)
{
	simhash		fp = *(const simhash *) entry;

	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	Assert(opaque->nentries < HAMMING_PAGE_CAPACITY);
	HammingPageFingerprints(page)[opaque->nentries] = fp;
	HammingPageTids(page)[opaque->nentries] = *tid;
	opaque->nentries++;
}

/*
 * Append to the page (exclusively locked) if it takes entries of this kind
 * and has room (an empty page of the other kind is taken over).
 */
static bool
try_append(Relation index, Buffer buffer, uint16 kind, const void *entry, ItemPointer tid)
{
	Page		page = BufferGetPage(buffer);
	bool		fits;
	bool		empty;

	if (hamming_page_is(page, HAMMING_SORTED | HAMMING_KEYS | HAMMING_DIRECTORY | HAMMING_MAP | HAMMING_RETIRED))
		empty = fits = false;	/* consumed by a merge that began since the metapage was read */
	else
	{
		/*
		 * a new page: left by a crash after the index grew, listed by
		 * VACUUM; never a page that was full when VACUUM removed entries
		 * from it, until VACUUM lists it (a full tail page only loses
		 * entries, hamming_tail_cache.c)
		 */
		bool		closed = hamming_page_is(page, HAMMING_CLOSED);

		empty = PageIsNew(page) ||
			(hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS) && !closed &&
			 HammingPageGetOpaque(page)->nentries == 0);
		fits = empty || (hamming_page_is(page, kind) && !closed &&
						 HammingPageGetOpaque(page)->nentries < HAMMING_PAGE_CAPACITY);
	}
	if (fits)
	{
		GenericXLogState *xlog = GenericXLogStart(index);

		uint16		gen = PageIsNew(page) ? 0 : HammingPageGetOpaque(page)->gen;

		page = GenericXLogRegisterBuffer(xlog, buffer, PageIsNew(page) ? GENERIC_XLOG_FULL_IMAGE : 0);
		if (empty)
		{
			hamming_init_page(page, kind);
			HammingPageGetOpaque(page)->gen = gen;
		}
		page_append(page, entry, tid);
		GenericXLogFinish(xlog);
	}
	return fits;
}

/* the tables of the last merge this backend's inserts found too large for memory */
static struct
{
	Oid			relfilenode;
	uint32		nsorted;
	int			budget;
}			no_memory;

/*
 * Is a tail of tail_pages pages over the index's tail_limit, or, when that
 * is unset, over HAMMING_AUTO_TAIL_MIN kB and 1/HAMMING_AUTO_TAIL_SHARE of
 * the nsorted entries of the probe tables?
 */
static bool
tail_over_limit(Relation index, BlockNumber tail_pages, uint32 nsorted)
{
	int			limit = hamming_tail_limit(index);
	double		kb = (double) tail_pages * (BLCKSZ / 1024);

	if (limit >= 0)
		return kb > limit;
	return kb > HAMMING_AUTO_TAIL_MIN &&
		(double) tail_pages * HAMMING_PAGE_CAPACITY > (double) nsorted / HAMMING_AUTO_TAIL_SHARE;
}

bool
hamming_insert(Relation index, Datum *values, bool *isnull,
			   ItemPointer ht_ctid, Relation heapRel,
			   IndexUniqueCheck checkUnique,
			   bool indexUnchanged,
			   IndexInfo *indexInfo)
{
	uint64		fps[HAMMING_MAX_ROW_ENTRIES];
	int			n = hamming_row_fingerprints(index, values[0], isnull[0], fps);
	BlockNumber tail_pages = 0;
	uint32		nsorted = 0;
	int			i;

	if (n == 0)
	{
		fps[0] = 0;
		tail_pages = hamming_insert_entry(index, HAMMING_TARGET_NULLS, HAMMING_NULLS, &fps[0], ht_ctid,
										  try_append, page_append, &nsorted);
	}
	for (i = 0; i < n; i++)
	{
		BlockNumber pages = hamming_insert_entry(index, HAMMING_TARGET_DATA, HAMMING_DATA, &fps[i],
												 ht_ctid, try_append, page_append, &nsorted);

		tail_pages = Max(tail_pages, pages);
	}
	/*
	 * a tail over the index's limit: merged now, unless VACUUM or another
	 * merge is at work, or a merge of these tables needed more memory than
	 * maintenance_work_mem (an insert's merge writes no temporary files:
	 * VACUUM merges that tail; not tried again at each new page, only once
	 * the tables or the setting changed)
	 */
	if (tail_pages > 0 && tail_over_limit(index, tail_pages, nsorted) &&
		!(no_memory.relfilenode == index->rd_rel->relfilenode && no_memory.nsorted == nsorted &&
		  no_memory.budget == maintenance_work_mem) &&
		ConditionalLockRelation(heapRel, ShareUpdateExclusiveLock))
	{
		if (hamming_merge(index, NULL, HAMMING_MERGE_BY_INSERT) == HAMMING_NO_MEMORY)
		{
			no_memory.relfilenode = index->rd_rel->relfilenode;
			no_memory.nsorted = nsorted;
			no_memory.budget = maintenance_work_mem;
		}
		UnlockRelation(heapRel, ShareUpdateExclusiveLock);
	}
	return false;
}
