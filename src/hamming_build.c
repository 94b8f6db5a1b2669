/*
 * hamming_build.c
 *	  Building a "hamming" index: one pass over the table fills packed pages
 *	  in memory, one page of each kind at a time (so the build needs two
 *	  pages of memory whatever the table's size), writes them in order behind
 *	  the metapage, and WAL-logs the whole index once at the end.
 */
#include "hamming.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

#define HAMMING_PHASE_SCAN	2		/* subphase after PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE */

typedef struct HammingBuildState
{
	Relation	index;
	PGAlignedBlock pages[2];	/* the page being filled, per kind */
	BlockNumber last_written[2];
	double		indtuples;
} HammingBuildState;

static void
flush_page(HammingBuildState *state, int target)
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
	hamming_init_page(page, target == HAMMING_TARGET_DATA ? HAMMING_DATA : HAMMING_NULLS);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	HammingBuildState *state = (HammingBuildState *) arg;
	int			target = isnull[0] ? HAMMING_TARGET_NULLS : HAMMING_TARGET_DATA;
	Page		page = state->pages[target].data;
	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	if (opaque->nentries >= HAMMING_PAGE_CAPACITY)
	{
		flush_page(state, target);
		opaque = HammingPageGetOpaque(page);
	}
	HammingPageFingerprints(page)[opaque->nentries] = isnull[0] ? 0 : DatumGetSimhash(values[0]);
	HammingPageTids(page)[opaque->nentries] = *tid;
	opaque->nentries++;
	state->indtuples += 1;
}

IndexBuildResult *
hamming_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	HammingBuildState *state;
	IndexBuildResult *result;
	double		reltuples;
	Buffer		metabuf;
	Page		metapage;
	int			target;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	/* the metapage first, so that it is block 0 */
	metabuf = hamming_new_buffer(index);
	Assert(BufferGetBlockNumber(metabuf) == HAMMING_METAPAGE_BLKNO);
	hamming_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	state = palloc0(sizeof(HammingBuildState));
	state->index = index;
	hamming_init_page(state->pages[HAMMING_TARGET_DATA].data, HAMMING_DATA);
	hamming_init_page(state->pages[HAMMING_TARGET_NULLS].data, HAMMING_NULLS);
	state->last_written[HAMMING_TARGET_DATA] = InvalidBlockNumber;
	state->last_written[HAMMING_TARGET_NULLS] = InvalidBlockNumber;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_SCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) state, NULL);
	for (target = 0; target < 2; target++)
		flush_page(state, target);

	/* new rows go to the last page of each kind */
	metabuf = ReadBuffer(index, HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	metapage = BufferGetPage(metabuf);
	for (target = 0; target < 2; target++)
		HammingPageGetMeta(metapage)->insert_page[target] = state->last_written[target];
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = state->indtuples;
	pfree(state);
	return result;
}

/* the init fork of an unlogged index: an empty metapage */
void
hamming_build_empty(Relation index)
{
	Buffer		metabuf;
	GenericXLogState *xlog;

	metabuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	xlog = GenericXLogStart(index);
	hamming_init_metapage(GenericXLogRegisterBuffer(xlog, metabuf, GENERIC_XLOG_FULL_IMAGE));
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
}

char *
hamming_build_phase_name(int64 phase)
{
	switch (phase)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case HAMMING_PHASE_SCAN:
			return "loading tuples";
		default:
			return NULL;
	}
}
