/*
 * hamming_append.c
 *	  Appending an entry to the tail of a "hamming" index of either width
 *	  (hamming_insert.c, hamming128.c): to an insert page of its kind
 *	  (fingerprint or NULL; of fingerprints, one of HAMMING_INSERT_SLOTS, so
 *	  that concurrent writers append to pages of their own); when that one
 *	  is full, the next page of the metapage's free list becomes the insert
 *	  page, or the next page of a range that a merge freed, or a new page.
 *	  The caller's functions append to a page of its width.  Every change
 *	  goes through generic WAL.
 */
#include "hamming.h"

#include "miscadmin.h"

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
