/*
 * hamming_vacuum.c
 *	  VACUUM of a "hamming" index: dead entries of tail pages are removed in
 *	  place (the page's last entry fills each hole), dead entries of probe
 *	  table 0 and its NULL pages lose their TID (its order must stay), in
 *	  every page that holds TIDs, also those that a merge replaced but scans
 *	  of its time may still read.  The cleanup merges the tail into new
 *	  probe tables when it has grown enough (hamming_merge.c), then lists the
 *	  tail pages that are at most half full (or new, left by a crash while
 *	  the index grew) in the metapage, for inserts to fill again, and gives
 *	  every block that nothing uses back to the free space map
 *	  (hamming_map.c).  After each tail page it removed entries from, it
 *	  counts one in the metapage (tail_epoch), so that backends drop the
 *	  full tail pages they keep (hamming_tail_cache.c); a page that was full
 *	  takes no entries (HAMMING_CLOSED) until the cleanup lists it, after
 *	  the count, so that a kept copy never lacks an entry of its page.
 *
 *	  Entries are removed from a page under a cleanup lock: no other backend
 *	  holds a pin on it.  A scan that must not see the heap tuple of a TID
 *	  it returns change under it (an index-only scan, which trusts the
 *	  visibility map, or an exclusion constraint's check under a dirty
 *	  snapshot) keeps the page of the entry it returned pinned until the
 *	  executor is done with the row (hamming_scan.c).  The heap frees a dead
 *	  tuple's line pointer, and may then mark its page all-visible, only
 *	  after every index's bulk delete has finished; this one cannot finish
 *	  while such a scan is on a page whose entries it removes, so the scan
 *	  never returns a TID whose tuple was removed or replaced.  Rows that a
 *	  scan read earlier, from pages it no longer holds, are checked against
 *	  their page again, under the pin, before they are returned.
 */
#include "hamming.h"

#include "settings.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/lmgr.h"

/* which entries of page the callback reports dead: into dead[], their count returned */
static int
find_dead(Page page, bool *dead, IndexBulkDeleteCallback callback, void *callback_state)
{
	int			n;
	int			ndead = 0;
	int			i;

	if (!hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
		return 0;
	n = HammingPageGetOpaque(page)->nentries;
	for (i = 0; i < n; i++)
	{
		ItemPointer tid = &HammingPageTids(page)[i];

		dead[i] = ItemPointerIsValid(tid) && callback(tid, callback_state);
		ndead += dead[i];
	}
	return ndead;
}

/*
 * Count a tail page that VACUUM removed entries from, in the metapage,
 * after it did, and without a lock on the page (an insert locks the
 * metapage first): the full tail pages that backends keep
 * (hamming_tail_cache.c) are read again by scans whose view comes later.
 */
static void
count_tail_removal(Relation index)
{
	Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
	GenericXLogState *xlog = GenericXLogStart(index);
	HammingMetaPageData *meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));

	meta->tail_epoch++;
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
}

/*
 * For tests: with simhash.vacuum_test_lock set, wait after the removals of
 * each tail page, before they are counted, for the advisory lock of that
 * number, so that a test can look up and insert into the index there
 */
static void
test_pause(void)
{
	LOCKTAG		tag;

	if (simhash_vacuum_test_lock == 0)
		return;
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) simhash_vacuum_test_lock >> 32),
						 (uint32) simhash_vacuum_test_lock, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

IndexBulkDeleteResult *
hamming_bulk_delete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber blkno;
	bool		dead[HAMMING_PAGE_CAPACITY];

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));

	/* every page: those a merge replaced too, which scans of its time still read */
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;
		GenericXLogState *xlog;
		bool		tail;
		int			n;
		int			ndead;
		int			i;

		hamming_vacuum_delay();
		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_SHARE, info->strategy);
		if (find_dead(BufferGetPage(buffer), dead, callback, callback_state) == 0)
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		LockBufferForCleanup(buffer);
		/* inserts may have appended to the page meanwhile */
		ndead = find_dead(BufferGetPage(buffer), dead, callback, callback_state);
		if (ndead == 0)
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		xlog = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(xlog, buffer, 0);
		n = HammingPageGetOpaque(page)->nentries;
		tail = !hamming_page_is(page, HAMMING_SORTED);
		if (!tail)
		{
			for (i = 0; i < n; i++)
				if (dead[i])
					ItemPointerSetInvalid(&HammingPageTids(page)[i]);
		}
		else
		{
			uint64	   *fps = HammingPageFingerprints(page);
			ItemPointerData *tids = HammingPageTids(page);

			/*
			 * A full page takes no entries until the cleanup lists it, after
			 * this removal was counted: a full tail page that a backend
			 * keeps only ever loses entries, for every view that uses it
			 */
			if (n == HAMMING_PAGE_CAPACITY)
				HammingPageGetOpaque(page)->flags |= HAMMING_CLOSED;
			/* fill each hole with the last live entry */
			for (i = 0; i < n;)
			{
				if (!dead[i])
				{
					i++;
					continue;
				}
				n--;
				fps[i] = fps[n];
				tids[i] = tids[n];
				dead[i] = dead[n];
			}
			HammingPageGetOpaque(page)->nentries = n;
		}
		GenericXLogFinish(xlog);
		stats->tuples_removed += ndead;
		UnlockReleaseBuffer(buffer);
		if (tail)
		{
			test_pause();
			/* counted after the removal: a copy made before it is not used by later views */
			count_tail_removal(index);
		}
	}
	return stats;
}

/* a closed tail page (pinned, not locked) takes entries again */
static void
reopen_page(Relation index, Buffer buffer)
{
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (hamming_page_is(BufferGetPage(buffer), HAMMING_CLOSED))
	{
		GenericXLogState *xlog = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(xlog, buffer, 0);

		HammingPageGetOpaque(page)->flags &= ~HAMMING_CLOSED;
		GenericXLogFinish(xlog);
	}
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
}

IndexBulkDeleteResult *
hamming_vacuum_cleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BlockNumber pos;
	BlockNumber blkno;
	BlockNumber free_page[HAMMING_MAX_FREE_PAGES];
	int			nfree = 0;
	HammingTables tables;
	Buffer		metabuf;
	HammingMetaPageData *meta;
	int			i;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));

	/* the tail into new probe tables, when it has grown enough */
	hamming_merge(index, info->strategy, HAMMING_MERGE_BY_VACUUM);
	/* blocks that nothing uses, for the next merge */
	hamming_record_unused(index);

	/* count the entries, and list the tail pages at most half full, or new */
	hamming_read_tables(index, &tables);
	stats->num_index_tuples = 0;
	for (pos = 0; hamming_pass_block(&tables, pos, &blkno); pos++)
	{
		Buffer		buffer;
		Page		page;

		hamming_vacuum_delay();
		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_SHARE, info->strategy);
		page = BufferGetPage(buffer);
		if (pos < tables.pass_pages)
		{
			int			n = HammingPageGetOpaque(page)->nentries;

			hamming_check_table_page(index, &tables, page, blkno, HAMMING_DATA | HAMMING_NULLS);
			for (i = 0; i < n; i++)
				stats->num_index_tuples += ItemPointerIsValid(&HammingPageTids(page)[i]);
		}
		else if (PageIsNew(page) ||
				 (hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS) &&
				  !hamming_page_is(page, HAMMING_RETIRED)))
		{
			int			n = PageIsNew(page) ? 0 : HammingPageGetOpaque(page)->nentries;

			stats->num_index_tuples += n;
			if (n <= HAMMING_PAGE_CAPACITY / 2 && nfree < HAMMING_MAX_FREE_PAGES)
			{
				free_page[nfree++] = blkno;
				if (hamming_page_is(page, HAMMING_CLOSED))
				{
					/* its removals were counted: it takes entries again */
					LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
					reopen_page(index, buffer);
					ReleaseBuffer(buffer);
					continue;
				}
			}
		}
		UnlockReleaseBuffer(buffer);
	}
	stats->num_pages = RelationGetNumberOfBlocks(index);
	hamming_free_tables(&tables);
	stats->estimated_count = false;

	/*
	 * The new list, last pages first, without the insert pages (in use
	 * already); the metapage is written only when the list changed.
	 */
	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, info->strategy);
	meta = HammingPageGetMeta(BufferGetPage(metabuf));
	{
		BlockNumber listed[HAMMING_MAX_FREE_PAGES];
		int			nlisted = 0;

		while (nfree > 0)
		{
			BlockNumber page = free_page[--nfree];

			if (!hamming_is_insert_page(meta, page))
				listed[nlisted++] = page;
		}
		if (nlisted != (int) meta->nfree ||
			memcmp(listed, meta->free_page, nlisted * sizeof(BlockNumber)) != 0)
		{
			GenericXLogState *xlog = GenericXLogStart(index);

			meta = HammingPageGetMeta(GenericXLogRegisterBuffer(xlog, metabuf, 0));
			memcpy(meta->free_page, listed, nlisted * sizeof(BlockNumber));
			meta->nfree = nlisted;
			GenericXLogFinish(xlog);
		}
	}
	UnlockReleaseBuffer(metabuf);
	return stats;
}
