/*
 * hamming_vacuum.c
 *	  VACUUM of a "hamming" index: dead entries of tail pages are removed in
 *	  place (the page's last entry fills each hole), dead entries of probe
 *	  table 0 lose their TID (its order must stay), and the cleanup lists the
 *	  tail pages that are at most half full in the metapage, for inserts to
 *	  fill again.
 */
#include "hamming.h"

#include "commands/vacuum.h"
#include "miscadmin.h"

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

	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;
		int			n;
		int			ndead = 0;
		int			i;

		vacuum_delay_point();
		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_EXCLUSIVE, info->strategy);
		page = BufferGetPage(buffer);
		if (!hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
		{
			UnlockReleaseBuffer(buffer);
			continue;
		}
		n = HammingPageGetOpaque(page)->nentries;
		for (i = 0; i < n; i++)
		{
			ItemPointer tid = &HammingPageTids(page)[i];

			dead[i] = ItemPointerIsValid(tid) && callback(tid, callback_state);
			ndead += dead[i];
		}
		if (ndead > 0 && hamming_page_is(page, HAMMING_SORTED))
		{
			GenericXLogState *xlog = GenericXLogStart(index);
			ItemPointerData *tids;

			page = GenericXLogRegisterBuffer(xlog, buffer, 0);
			tids = HammingPageTids(page);
			for (i = 0; i < n; i++)
				if (dead[i])
					ItemPointerSetInvalid(&tids[i]);
			GenericXLogFinish(xlog);
			stats->tuples_removed += ndead;
		}
		else if (ndead > 0)
		{
			GenericXLogState *xlog = GenericXLogStart(index);
			uint64	   *fps;
			ItemPointerData *tids;

			page = GenericXLogRegisterBuffer(xlog, buffer, 0);
			fps = HammingPageFingerprints(page);
			tids = HammingPageTids(page);
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
			GenericXLogFinish(xlog);
			stats->tuples_removed += ndead;
		}
		UnlockReleaseBuffer(buffer);
	}
	return stats;
}

IndexBulkDeleteResult *
hamming_vacuum_cleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BlockNumber nblocks;
	BlockNumber blkno;
	BlockNumber free_page[HAMMING_MAX_FREE_PAGES];
	int			nfree = 0;
	Buffer		metabuf;
	GenericXLogState *xlog;
	HammingMetaPageData *meta;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));

	/* count the entries, and list the pages at most half full */
	nblocks = RelationGetNumberOfBlocks(index);
	stats->num_index_tuples = 0;
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;

		vacuum_delay_point();
		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_SHARE, info->strategy);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_SORTED))
		{
			int			n = HammingPageGetOpaque(page)->nentries;
			int			i;

			for (i = 0; i < n; i++)
				stats->num_index_tuples += ItemPointerIsValid(&HammingPageTids(page)[i]);
		}
		else if (hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
		{
			int			n = HammingPageGetOpaque(page)->nentries;

			stats->num_index_tuples += n;
			if (n <= HAMMING_PAGE_CAPACITY / 2 && nfree < HAMMING_MAX_FREE_PAGES)
				free_page[nfree++] = blkno;
		}
		UnlockReleaseBuffer(buffer);
	}
	stats->num_pages = nblocks;
	stats->estimated_count = false;

	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, info->strategy);
	xlog = GenericXLogStart(index);
	meta = HammingPageGetMeta(GenericXLogRegisterBuffer(xlog, metabuf, 0));
	/* the insert pages are in use already; listed pages come out last first */
	meta->nfree = 0;
	while (nfree > 0)
	{
		BlockNumber page = free_page[--nfree];

		if (page != meta->insert_page[HAMMING_TARGET_DATA] &&
			page != meta->insert_page[HAMMING_TARGET_NULLS])
			meta->free_page[meta->nfree++] = page;
	}
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
	return stats;
}
