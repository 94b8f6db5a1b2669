/*
 * hamming_build.c
 *	  Building a "hamming" index.  One pass over the table
 *	  (hamming_build_scan.c) sorts the entries four ways
 *	  (hamming_sort.c: in maintenance_work_mem, 24 bytes per row, and in
 *	  sorted runs on temporary files beyond it); they are written as the
 *	  probe tables with their directories (hamming_write.c), then the pages of NULL
 *	  fingerprints, and the whole index is WAL-logged once at the end (or
 *	  with parallel workers, hamming_build_parallel.c: the same tables,
 *	  sorted and written by the participants, each WAL-logging its own).  An
 *	  index built WITH (probe_tables = off) is tail pages only (filled one
 *	  page of each kind at a time, as inserts fill them; with parallel
 *	  workers, of the entries that they compute), 14 bytes a row, and
 *	  answers every query by a pass.
 */
#include "hamming.h"

#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"

typedef struct HammingBuildState
{
	Relation	index;
	/* with probe tables: the entries sorted, the TIDs of NULL fingerprints kept */
	HammingSort *sort;
	HammingTids *nulls;
	/* the tail: the page being filled, per kind */
	PGAlignedBlock pages[2];
	BlockNumber last_written[2];
	double		indtuples;
} HammingBuildState;

/* append a copy of page behind the index's last page */
static BlockNumber
write_page(Relation index, Page page)
{
	Buffer		buffer = hamming_new_buffer(index);
	BlockNumber blkno = BufferGetBlockNumber(buffer);

	memcpy(BufferGetPage(buffer), page, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	return blkno;
}

static void
flush_page(HammingBuildState *state, int target)
{
	Page		page = state->pages[target].data;

	if (HammingPageGetOpaque(page)->nentries == 0)
		return;
	state->last_written[target] = write_page(state->index, page);
	hamming_init_page(page, target == HAMMING_TARGET_DATA ? HAMMING_DATA : HAMMING_NULLS);
}

static void
stream_entry(HammingBuildState *state, int target, simhash fp, ItemPointer tid)
{
	Page		page = state->pages[target].data;
	HammingPageOpaque opaque = HammingPageGetOpaque(page);

	if (opaque->nentries >= HAMMING_PAGE_CAPACITY)
	{
		flush_page(state, target);
		opaque = HammingPageGetOpaque(page);
	}
	HammingPageFingerprints(page)[opaque->nentries] = fp;
	HammingPageTids(page)[opaque->nentries] = *tid;
	opaque->nentries++;
}

/* a build without probe tables: each row's entries onto the tail pages */
static void
tail_sink_add(void *arg, Relation index, bool isnull, const void *key, ItemPointer tid)
{
	stream_entry((HammingBuildState *) arg, isnull ? HAMMING_TARGET_NULLS : HAMMING_TARGET_DATA,
				 isnull ? 0 : *(const uint64 *) key, tid);
}

static BlockNumber
build_sink(void *arg, Page page)
{
	return write_page((Relation) arg, page);
}

IndexBuildResult *
hamming_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	HammingBuildState *state;
	IndexBuildResult *result;
	double		reltuples;
	Buffer		metabuf;
	HammingMetaPageData *meta = palloc0(sizeof(HammingMetaPageData));
	BlockNumber logged_from = HAMMING_METAPAGE_BLKNO;	/* WAL-logs the blocks from here at the end */
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
	if (index->rd_options == NULL || ((HammingOptions *) index->rd_options)->probe_tables)
	{
		ItemPointerData tid;

		/* the probe tables: by parallel workers if they run (WAL-logged as written), else here */
		if (hamming_parallel_build(heap, index, indexInfo, NULL, meta, &state->nulls, &reltuples,
								   &state->indtuples))
			logged_from = meta->tail_start;
		else
		{
			hamming_build_sorts((Size) maintenance_work_mem * 1024, &state->sort, &state->nulls);
			reltuples = hamming_build_scan(heap, index, indexInfo, NULL, true, state->sort,
										   state->nulls, &state->indtuples);
			if (hamming_sort_count(state->sort) > 0)
			{
				hamming_write_sorted(state->sort, NULL, true, 0, build_sink, index, meta);
				meta->tail_start = RelationGetNumberOfBlocks(index);
				if (hamming_sort_runs(state->sort) > 0)
					ereport(DEBUG1,
							(errmsg("hamming index \"%s\" was built of %zu entries sorted in %d runs on temporary files",
									RelationGetRelationName(index), hamming_sort_count(state->sort),
									hamming_sort_runs(state->sort))));
			}
			hamming_sort_end(state->sort);
		}
		if (meta->ntables > 0 &&
			!hamming_tables_mappable((meta->nsorted + HAMMING_PAGE_CAPACITY - 1) / HAMMING_PAGE_CAPACITY))
			ereport(NOTICE,
					(errmsg("hamming index \"%s\" has more rows than a merge can rewrite",
							RelationGetRelationName(index)),
					 errdetail("Rows added later stay in its tail, which every query reads, until it is rebuilt."),
					 errhint("Partition the table, so that each index holds fewer rows (about 110 million at most).")));
		while (hamming_tids_next(state->nulls, &tid))
			stream_entry(state, HAMMING_TARGET_NULLS, 0, &tid);
		hamming_tids_end(state->nulls);
	}
	else
	{
		HammingEntrySink sink;

		sink.add = tail_sink_add;
		sink.arg = state;
		/* the entries of the workers' shares (if they run) and of the leader's, or of a serial scan */
		if (!hamming_parallel_build(heap, index, indexInfo, &sink, NULL, NULL, &reltuples,
									&state->indtuples))
			reltuples = hamming_build_scan_into(heap, index, indexInfo, NULL, true, &sink,
												&state->indtuples);
	}

	for (target = 0; target < 2; target++)
		flush_page(state, target);

	/* new rows go to the last tail page of each kind */
	metabuf = ReadBuffer(index, HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	{
		HammingMetaPageData *m = HammingPageGetMeta(BufferGetPage(metabuf));

		for (target = 0; target < 2; target++)
			m->insert_page[target] = state->last_written[target];
		if (meta->ntables > 0)
		{
			m->ntables = meta->ntables;
			m->dir_bits = meta->dir_bits;
			m->nsorted = meta->nsorted;
			memcpy(m->table_start, meta->table_start, sizeof(m->table_start));
			memcpy(m->dir_start, meta->dir_start, sizeof(m->dir_start));
			m->tail_start = meta->tail_start;
		}
	}
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
	{
		if (logged_from > HAMMING_METAPAGE_BLKNO + 1)
			log_newpage_range(index, MAIN_FORKNUM, HAMMING_METAPAGE_BLKNO, HAMMING_METAPAGE_BLKNO + 1, true);
		log_newpage_range(index, MAIN_FORKNUM, logged_from, RelationGetNumberOfBlocks(index), true);
	}

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = state->indtuples;
	return result;
}

/*
 * The init fork of an unlogged index: an empty metapage, WAL-logged whole
 * (generic WAL writes nothing for an unlogged relation), so that recovery
 * and a standby have it: at the end of recovery the init fork becomes the
 * index.
 */
void
hamming_build_empty(Relation index)
{
	Buffer		metabuf;

	metabuf = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	Assert(BufferGetBlockNumber(metabuf) == HAMMING_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	hamming_init_metapage(BufferGetPage(metabuf));
	MarkBufferDirty(metabuf);
	log_newpage_buffer(metabuf, true);
	END_CRIT_SECTION();
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
		case HAMMING_PHASE_SORT:
			return "sorting";
		case HAMMING_PHASE_WRITE:
			return "writing probe tables";
		default:
			return NULL;
	}
}
