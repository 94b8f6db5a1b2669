/*
 * hamming_utils.c
 *	  Helpers of the "hamming" access method: index options, page and
 *	  metapage initialisation, new pages, reading and checking pages.
 */
#include "hamming.h"

#include "access/reloptions.h"
#include "storage/lmgr.h"

/*
 * The method has no options yet: WITH (...) is parsed only to reject
 * unknown parameters.
 */
bytea *
hamming_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, RELOPT_KIND_LOCAL,
									  sizeof(int32), NULL, 0);
}

void
hamming_init_page(Page page, uint16 kind)
{
	HammingPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(HammingPageOpaqueData));
	opaque = HammingPageGetOpaque(page);
	opaque->flags = kind;
	opaque->nentries = 0;
	opaque->page_id = HAMMING_PAGE_ID;
	/* the whole array area counts as used: no hole for full-page images */
	if (kind != HAMMING_META)
		((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

void
hamming_init_metapage(Page page)
{
	HammingMetaPageData *meta;

	hamming_init_page(page, HAMMING_META);
	meta = HammingPageGetMeta(page);
	meta->magic = HAMMING_MAGIC;
	meta->version = HAMMING_VERSION;
	meta->insert_page[HAMMING_TARGET_DATA] = InvalidBlockNumber;
	meta->insert_page[HAMMING_TARGET_NULLS] = InvalidBlockNumber;
	meta->nfree = 0;
	((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
}

/* a new page at the end of the index, pinned and exclusively locked */
Buffer
hamming_new_buffer(Relation index)
{
	Buffer		buffer;

	LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}

/* complain about a page that this method did not write */
void
hamming_check_page(Relation index, Page page, BlockNumber blkno)
{
	if (PageIsNew(page))
		return;
	if (HammingPageGetOpaque(page)->page_id != HAMMING_PAGE_ID ||
		HammingPageGetOpaque(page)->nentries > HAMMING_PAGE_CAPACITY ||
		(blkno == HAMMING_METAPAGE_BLKNO) != ((HammingPageGetOpaque(page)->flags & HAMMING_META) != 0) ||
		(blkno == HAMMING_METAPAGE_BLKNO && HammingPageGetMeta(page)->magic != HAMMING_MAGIC))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains an unexpected page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
}

/* page blkno, pinned, locked in mode and checked */
Buffer
hamming_lock_page(Relation index, BlockNumber blkno, int mode, BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, mode);
	hamming_check_page(index, BufferGetPage(buffer), blkno);
	return buffer;
}
