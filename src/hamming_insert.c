/*
 * hamming_insert.c
 *	  Inserting into a "hamming" index: the entry is appended to an insert
 *	  page of its kind (fingerprint or NULL) in the tail (of fingerprints,
 *	  one of HAMMING_INSERT_SLOTS, so that concurrent writers append to
 *	  pages of their own); when that one is full, the next page of the
 *	  metapage's free list becomes the insert page, or the next page of a
 *	  range that a merge freed, or a new page.  The probe tables never take
 *	  new entries: a merge (hamming_merge.c) moves the tail into new
 *	  ones, in VACUUM, or here when the tail outgrows the index's
 *	  tail_limit (or, unset, a share of the tables); a page that a merge
 *	  consumed while the insert meant to append to it is passed over.
 *	  Every change goes through generic WAL.
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

/* the insert page of a target's slot, as the metapage says now */
static BlockNumber
insert_target(Relation index, int target, int slot)
{
	Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	BlockNumber blkno;

	blkno = hamming_get_insert_page(HammingPageGetMeta(BufferGetPage(metabuf)), target, slot);
	UnlockReleaseBuffer(metabuf);
	return blkno;
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
		/* a new page: left by a crash after the index grew, listed by VACUUM */
		empty = PageIsNew(page) ||
			(hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS) &&
			 HammingPageGetOpaque(page)->nentries == 0);
		fits = empty || (hamming_page_is(page, kind) &&
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

/*
 * A page for the tail, exclusively locked: the next page of a range that a
 * merge freed (the metapage, registered for WAL and locked, says which),
 * else a new page at the end.
 */
static Buffer
new_tail_buffer(Relation index, HammingMetaPageData *meta)
{
	uint32		r;

	for (r = 0; meta->version >= 3 && r < meta->nranges; r++)
		if (meta->range[r].fill < meta->range[r].end)
			return ReadBufferExtended(index, MAIN_FORKNUM, meta->range[r].fill++, RBM_ZERO_AND_LOCK, NULL);
	return hamming_new_buffer(index);
}

/* the slot of the insert pages of fingerprints that this backend appended to last */
static int	my_slot = 0;

/*
 * Append an entry to the tail: to an insert page of its kind, else to the
 * next page of the metapage's free list, else to a new page.  Of the insert
 * pages of fingerprints, the backend takes the one it took last, or the
 * next one when another backend holds that one locked (the first free one
 * it finds, else it waits for its own).  try_append appends to a page if it
 * takes the entry, append to a new page; both for the index's width
 * (hamming128.c has its own).  Returns the tail's pages when it added one
 * (and the entries of the probe tables in *nsorted), else 0.
 */
BlockNumber
hamming_insert_entry(Relation index, int target, uint16 kind, const void *entry, ItemPointer tid,
					 HammingTryAppend try_append, HammingAppend append, uint32 *nsorted)
{
	int			nslots = hamming_insert_slots(target);
	int			busy = 0;		/* insert pages found locked by another backend */

	for (;;)
	{
		int			slot = target == HAMMING_TARGET_DATA ? my_slot : 0;
		BlockNumber blkno = insert_target(index, target, slot);
		Buffer		metabuf;
		Buffer		buffer;
		GenericXLogState *xlog;
		HammingMetaPageData *meta;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		if (blkno != InvalidBlockNumber)
		{
			bool		fits;

			buffer = ReadBuffer(index, blkno);
			if (busy == nslots - 1)
				LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);	/* every other slot was busy */
			else if (!ConditionalLockBuffer(buffer))
			{
				/* another writer appends there: the next slot */
				ReleaseBuffer(buffer);
				my_slot = (my_slot + 1) % nslots;
				busy++;
				continue;
			}
			hamming_check_page(index, BufferGetPage(buffer), blkno);
			fits = try_append(index, buffer, kind, entry, tid);
			UnlockReleaseBuffer(buffer);
			if (fits)
				return 0;
		}
		/* the insert page is full: the next one, unless another backend was faster */
		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
		if (hamming_get_insert_page(HammingPageGetMeta(BufferGetPage(metabuf)), target, slot) != blkno)
		{
			UnlockReleaseBuffer(metabuf);
			continue;
		}
		xlog = GenericXLogStart(index);
		meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));
		if (meta->nfree > 0)
		{
			/* a page that VACUUM emptied; the next round tries it */
			hamming_set_insert_page(meta, target, slot, meta->free_page[--meta->nfree]);
			GenericXLogFinish(xlog);
			UnlockReleaseBuffer(metabuf);
			continue;
		}
		buffer = new_tail_buffer(index, meta);
		page = GenericXLogRegisterBuffer(xlog, buffer, GENERIC_XLOG_FULL_IMAGE);
		hamming_init_page(page, kind);
		/* a page of the tail carries the generation of the tables it goes with */
		HammingPageGetOpaque(page)->gen = meta->version >= 3 ? (uint16) meta->gen : 0;
		append(page, entry, tid);
		hamming_set_insert_page(meta, target, slot, BufferGetBlockNumber(buffer));
		{
			BlockNumber seg_start[HAMMING_MAX_SEGMENTS];
			BlockNumber seg_end[HAMMING_MAX_SEGMENTS];
			int			n = hamming_tail_segments(meta, RelationGetNumberOfBlocks(index), seg_start, seg_end);
			BlockNumber tail = 0;

			while (n-- > 0)
				tail += seg_end[n] - seg_start[n];
			*nsorted = meta->ntables > 0 ? meta->nsorted : 0;
			GenericXLogFinish(xlog);
			UnlockReleaseBuffer(buffer);
			UnlockReleaseBuffer(metabuf);
			return tail;
		}
	}
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
