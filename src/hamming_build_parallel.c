/*
 * hamming_build_parallel.c
 *	  CREATE INDEX of a "hamming" index with parallel workers.  The leader
 *	  asks for plan_create_index_workers() workers (max_parallel_maintenance_
 *	  workers, and at least 32 MB of maintenance_work_mem per participant),
 *	  through a parallel context on every version (17 and later decide
 *	  with amcanbuildparallel and hand the number in the IndexInfo).
 *
 *	  First each participant (the workers, and the leader unless
 *	  parallel_leader_participation is off) scans its share of the table
 *	  through a parallel table scan, sorts it four ways within its share of
 *	  maintenance_work_mem (spilling as a serial build does) and exports the
 *	  sorted entries, the keys of tables 1..3 and its NULL TIDs to a file of
 *	  a shared file set.  Once every share is exported, the number of
 *	  entries gives each probe table the blocks that a serial build writes
 *	  it on; the leader extends the index over them, and the workers and the
 *	  leader take the tables one at a time: each reads its table back merged
 *	  from every participant's run, writes its pages and its directory on
 *	  its blocks and WAL-logs them.  The leader then writes the NULL TIDs
 *	  (merged in block order, as a serial scan from the table's first block
 *	  meets them) to the tail and the metapage, as a serial build does: the
 *	  index is the serial build's, page for page.
 *
 *	  An index without probe tables (WITH (probe_tables = off), and every
 *	  index of simhash128, hamming128.c) is its tail only: each worker
 *	  exports its share's entries unsorted, as the scan meets them, and is
 *	  done; the leader streams its own share onto the tail pages as it scans
 *	  it, then every worker's, and the index is WAL-logged as a serial
 *	  build's.  The work that parallelism spreads is the scan and the
 *	  fingerprints (of every text in an index of texts).
 *
 *	  The files go with the parallel context's shared memory, on success,
 *	  error or cancel alike.
 */
#include "hamming.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lmgr.h"
#include "storage/sharedfileset.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"

/* keys of the parallel context's table of contents */
#define KEY_SHARED			UINT64CONST(0x48414D0000000001)
#define KEY_TABLE_SCAN		UINT64CONST(0x48414D0000000002)
#define KEY_QUERY_TEXT		UINT64CONST(0x48414D0000000003)

/* what a participant left for the leader */
typedef struct Participant
{
	bool		done;
	double		reltuples;
	double		indtuples;
	HammingSortRun run;			/* its sorted entries and keys (tail_only: its TailEntry count) */
	Size		nnulls;			/* and its NULL TIDs after them */
	int			nulls_fileno;
	off_t		nulls_offset;
} Participant;

typedef struct BuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	bool		tail_only;		/* no probe tables: the workers export their entries, unsorted */
	bool		needs_wal;		/* the leader's RelationNeedsWAL() */
	Size		budget;			/* memory of each participant */
	SharedFileSet fileset;
	ConditionVariable cv;		/* a share exported, the tables' blocks ready */
	pg_atomic_uint32 next_table;	/* the next probe table to write */
	slock_t		mutex;
	/* under mutex: */
	int			nparticipants;	/* 0 until the leader knows them */
	int			nexported;
	bool		tables_ready;	/* the index extended over the tables' blocks */
	/* set by the leader before tables_ready: */
	Size		nentries;		/* in the tables: the participants' entries */
	HammingMetaPageData layout;	/* where each table and directory begins */
	/* the workers' slots by ParallelWorkerNumber, then the leader's */
	int			nslots;
	Participant slot[FLEXIBLE_ARRAY_MEMBER];
} BuildShared;

/* a probe table's sink: its blocks, in order from the first */
typedef struct TableSink
{
	Relation	index;
	BlockNumber next;
} TableSink;

/* an entry of a build without probe tables, as a worker exports it */
typedef struct TailEntry
{
	uint64		key[2];			/* a uint64, or a Simhash128 */
	ItemPointerData tid;
	bool		isnull;
} TailEntry;

/* a worker's entries to its file (a build without probe tables) */
typedef struct ExportSink
{
	BufFile    *file;
	Size		count;
} ExportSink;

static void
export_sink_add(void *arg, Relation index, bool isnull, const void *key, ItemPointer tid)
{
	ExportSink *es = (ExportSink *) arg;
	TailEntry	e;

	memset(&e, 0, sizeof(e));
	if (!isnull)
		memcpy(e.key, key, hamming_index_is_wide(index) ? sizeof(e.key) : sizeof(uint64));
	e.tid = *tid;
	e.isnull = isnull;
	BufFileWrite(es->file, &e, sizeof(e));
	es->count++;
}

/* the file of a participant's slot in the shared file set */
static const char *
slot_file(int slot, char *name)
{
	snprintf(name, MAXPGPATH, "hamming.%d", slot);
	return name;
}

/*
 * A participant's share: scanned, sorted and exported to its file (without
 * probe tables: its entries exported as scanned)
 */
static void
participate(BuildShared *shared, ParallelTableScanDesc pscan, Relation heap, Relation index,
			IndexInfo *indexInfo, int slot, bool progress)
{
	Participant *p = &shared->slot[slot];
	TableScanDesc scan = table_beginscan_parallel(heap, pscan);
	HammingSortRun run;
	double		reltuples;
	double		indtuples = 0;
	char		name[MAXPGPATH];
	BufFile    *file = BufFileCreateFileSet(&shared->fileset.fs, slot_file(slot, name));
	int			nulls_fileno = 0;
	off_t		nulls_offset = 0;
	Size		nnulls = 0;

	if (shared->tail_only)
	{
		ExportSink	es = {file, 0};
		HammingEntrySink sink = {export_sink_add, &es};

		reltuples = hamming_build_scan_into(heap, index, indexInfo, scan, progress, &sink, &indtuples);
		memset(&run, 0, sizeof(run));
		run.count = es.count;
	}
	else
	{
		HammingSort *sort;
		HammingTids *nulls;
		ItemPointerData tid;

		hamming_build_sorts(shared->budget, &sort, &nulls);
		reltuples = hamming_build_scan(heap, index, indexInfo, scan, progress, sort, nulls, &indtuples);
		hamming_sort_export(sort, file, &run);
		BufFileTell(file, &nulls_fileno, &nulls_offset);
		nnulls = hamming_tids_count(nulls);
		while (hamming_tids_next(nulls, &tid))
			BufFileWrite(file, &tid, sizeof(ItemPointerData));
		hamming_sort_end(sort);
		hamming_tids_end(nulls);
	}
	BufFileClose(file);

	SpinLockAcquire(&shared->mutex);
	p->reltuples = reltuples;
	p->indtuples = indtuples;
	p->run = run;
	p->nnulls = nnulls;
	p->nulls_fileno = nulls_fileno;
	p->nulls_offset = nulls_offset;
	p->done = true;
	shared->nexported++;
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);
}

/* wait for every share exported (leader) or for the tables' blocks (workers) */
static void
wait_for(BuildShared *shared, bool tables)
{
	for (;;)
	{
		bool		ready;

		SpinLockAcquire(&shared->mutex);
		ready = tables ? shared->tables_ready :
			shared->nparticipants > 0 && shared->nexported == shared->nparticipants;
		SpinLockRelease(&shared->mutex);
		if (ready)
			break;
		ConditionVariableSleep(&shared->cv, WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();
}

/* the files of the participants' shares, opened */
static int
open_shares(BuildShared *shared, const Participant **parts, BufFile **files)
{
	int			n = 0;
	int			slot;

	for (slot = 0; slot < shared->nslots; slot++)
	{
		char		name[MAXPGPATH];

		if (!shared->slot[slot].done)
			continue;
		parts[n] = &shared->slot[slot];
		files[n++] = BufFileOpenFileSet(&shared->fileset.fs, slot_file(slot, name), O_RDONLY, false);
	}
	return n;
}

/* the sink of a table: its next block (the leader extended the index over it) */
static BlockNumber
table_sink(void *arg, Page page)
{
	TableSink  *sink = (TableSink *) arg;
	Buffer		buffer = ReadBufferExtended(sink->index, MAIN_FORKNUM, sink->next, RBM_ZERO_AND_LOCK, NULL);

	memcpy(BufferGetPage(buffer), page, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	return sink->next++;
}

/*
 * Take probe tables until none is left: each read back merged from every
 * share, written on its blocks (with its directory) and WAL-logged
 */
static void
write_tables(BuildShared *shared, Relation index)
{
	const Participant **parts = palloc(shared->nslots * sizeof(Participant *));
	HammingSortRun *runs = palloc(shared->nslots * sizeof(HammingSortRun));
	BufFile   **files = palloc(shared->nslots * sizeof(BufFile *));
	HammingMetaPageData *meta = palloc0(sizeof(HammingMetaPageData));
	uint32		table;

	while (shared->nentries > 0 &&
		   (table = pg_atomic_fetch_add_u32(&shared->next_table, 1)) < HAMMING_NTABLES)
	{
		BlockNumber first = shared->layout.table_start[table];
		TableSink	sink = {index, first};
		HammingSort *sort;
		int			n = open_shares(shared, parts, files);
		int			i;

		for (i = 0; i < n; i++)
			runs[i] = parts[i]->run;
		sort = hamming_sort_import(shared->budget / 16 * 15, n, runs, files);
		hamming_write_sorted_table(sort, (int) table, table_sink, &sink, meta);
		hamming_sort_end(sort);
		if (meta->table_start[table] != first ||
			meta->dir_start[table] != shared->layout.dir_start[table])
			elog(ERROR, "hamming index probe table %u written at block %u, not %u",
				 table, meta->table_start[table], first);
		if (shared->needs_wal)
			log_newpage_range(index, MAIN_FORKNUM, first, sink.next, true);
	}
	pfree(parts);
	pfree(runs);
	pfree(files);
	pfree(meta);
}

/* a parallel worker of the build: its share, as the leader's */
PGDLLEXPORT void hamming_parallel_build_main(dsm_segment *seg, shm_toc *toc);

void
hamming_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	BuildShared *shared = shm_toc_lookup(toc, KEY_SHARED, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, KEY_TABLE_SCAN, false);
	LOCKMODE	heap_mode = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	index_mode = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap;
	Relation	index;
	IndexInfo  *indexInfo;

	debug_query_string = shm_toc_lookup(toc, KEY_QUERY_TEXT, true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	/* the leader holds these locks: the lock group shares them */
	heap = table_open(shared->heaprelid, heap_mode);
	index = index_open(shared->indexrelid, index_mode);
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;
	SharedFileSetAttach(&shared->fileset, seg);

	participate(shared, pscan, heap, index, indexInfo, ParallelWorkerNumber, false);
	if (!shared->tail_only)
	{
		wait_for(shared, true);
		write_tables(shared, index);
	}

	index_close(index, index_mode);
	table_close(heap, heap_mode);
}

/* the workers this build asks for: none on a serial build */
static int
requested_workers(Relation heap, Relation index, IndexInfo *indexInfo)
{
#if PG_VERSION_NUM >= 170000
	/* index_build() planned them, as amcanbuildparallel allows */
	return indexInfo->ii_ParallelWorkers;
#else
	if (!IsNormalProcessingMode())
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
#endif
}

/*
 * The NULL TIDs of the participants' files, into a collection of budget
 * bytes, in block order: a participant met them in the order of its
 * blocks, and each block was one participant's
 */
static HammingTids *
merge_nulls(int n, const Participant *const *parts, BufFile **files, Size budget)
{
	HammingTids *nulls = hamming_tids_begin(budget);
	ItemPointerData *head = palloc(n * sizeof(ItemPointerData));
	Size	   *left = palloc(n * sizeof(Size));
	Size		count = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		left[i] = parts[i]->nnulls;
		ItemPointerSetInvalid(&head[i]);
		if (left[i] > 0 &&
			BufFileSeek(files[i], parts[i]->nulls_fileno, parts[i]->nulls_offset, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not seek in hamming index temporary file: %m")));
	}
	for (;;)
	{
		int			least = -1;

		for (i = 0; i < n; i++)
		{
			if (left[i] == 0)
				continue;
			if (!ItemPointerIsValid(&head[i]))
			{
				/* the first of the file, or the previous one taken: read the next */
				if (BufFileRead(files[i], &head[i], sizeof(ItemPointerData)) != sizeof(ItemPointerData))
					ereport(ERROR,
							(errcode_for_file_access(),
							 errmsg("could not read from hamming index temporary file: %m")));
			}
			if (least < 0 ||
				ItemPointerGetBlockNumber(&head[i]) < ItemPointerGetBlockNumber(&head[least]))
				least = i;
		}
		if (least < 0)
			break;
		hamming_tids_add(nulls, &head[least]);
		ItemPointerSetInvalid(&head[least]);
		left[least]--;
		if (++count % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(head);
	pfree(left);
	return nulls;
}

/* the entries of the workers' files to sink (a build without probe tables) */
static void
stream_shares(int n, const Participant *const *parts, BufFile **files, Relation index,
			  const HammingEntrySink *sink)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		Size		k;

		for (k = 0; k < parts[i]->run.count; k++)
		{
			TailEntry	e;

			CHECK_FOR_INTERRUPTS();
			if (BufFileRead(files[i], &e, sizeof(e)) != sizeof(e))
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read from hamming index temporary file: %m")));
			sink->add(sink->arg, index, e.isnull, e.isnull ? NULL : e.key, &e.tid);
		}
	}
}

/*
 * The index extended to end blocks, all new (zero) pages, at once: the
 * participants write them through the buffer manager, each its own table
 */
static void
extend_to(Relation index, BlockNumber end)
{
	BlockNumber nblocks;

	LockRelationForExtension(index, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(index);
	if (end > nblocks)
	{
#if PG_VERSION_NUM >= 160000
		smgrzeroextend(RelationGetSmgr(index), MAIN_FORKNUM, nblocks, end - nblocks, false);
#else
		PGAlignedBlock zero;

		/* the blocks before the last read as zeros */
		memset(zero.data, 0, BLCKSZ);
		smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, end - 1, zero.data, false);
#endif
	}
	UnlockRelationForExtension(index, ExclusiveLock);
}

/*
 * The leader's part once every share is exported, with probe tables: their
 * blocks laid out from the number of entries and the index extended over
 * them, the tables written with the workers, the NULL TIDs merged into
 * *nulls (of nulls_budget bytes)
 */
static void
write_all_tables(BuildShared *shared, Relation index, int nparts, const Participant *const *parts,
				 BufFile **files, Size nulls_budget, HammingMetaPageData *meta, HammingTids **nulls)
{
	BlockNumber end;

	if (shared->nentries >= PG_UINT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("hamming index \"%s\" cannot hold more than %u rows in its probe tables",
						RelationGetRelationName(index), PG_UINT32_MAX - 1),
				 errhint("Create it WITH (probe_tables = off), or partition the table.")));
	end = shared->nentries > 0 ? hamming_build_layout(shared->nentries, &shared->layout) :
		HAMMING_METAPAGE_BLKNO + 1;
	extend_to(index, end);
	SpinLockAcquire(&shared->mutex);
	shared->tables_ready = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, HAMMING_PHASE_WRITE);
	write_tables(shared, index);

	if (shared->nentries > 0)
		memcpy(meta, &shared->layout, sizeof(HammingMetaPageData));
	meta->tail_start = end;
	*nulls = merge_nulls(nparts, parts, files, nulls_budget);
}

/* the end of a parallel build, or of its attempt */
static void
end_parallel(ParallelContext *pcxt, Snapshot snapshot)
{
	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
}

/*
 * Build the probe tables with parallel workers, if this build asks for
 * them and any start: then they are written (and WAL-logged if the index
 * needs it) on the blocks after the metapage, meta says where (tail_start:
 * the first block after them), the NULL TIDs are in *nulls, in the order of
 * a serial build, and the tuples counted; true.  false: build serially.
 * With tail (an index without probe tables, or of simhash128), every entry
 * goes to tail instead, in no particular order, and meta and nulls are left
 * alone.
 */
bool
hamming_parallel_build(Relation heap, Relation index, IndexInfo *indexInfo,
					   const HammingEntrySink *tail, HammingMetaPageData *meta,
					   HammingTids **nulls, double *reltuples, double *indtuples)
{
	int			nworkers = requested_workers(heap, index, indexInfo);
	bool		leader_participates = parallel_leader_participation;
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		shared_size;
	Size		scan_size;
	Size		query_len = 0;
	BuildShared *shared;
	ParallelTableScanDesc pscan;
	Size		budget = (Size) maintenance_work_mem * 1024;
	const Participant **parts;
	BufFile   **files;
	double		leader_reltuples = 0;
	int			nparts;
	int			i;

	if (nworkers <= 0)
		return false;

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "hamming_parallel_build_main", nworkers);
	/* a concurrent build sees the rows of its snapshot, any other every row */
	snapshot = indexInfo->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	shared_size = add_size(offsetof(BuildShared, slot), mul_size(nworkers + 1, sizeof(Participant)));
	scan_size = table_parallelscan_estimate(heap, snapshot);
	shm_toc_estimate_chunk(&pcxt->estimator, shared_size);
	shm_toc_estimate_chunk(&pcxt->estimator, scan_size);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	if (debug_query_string)
	{
		query_len = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, query_len + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* no shared memory to be had: serially */
		end_parallel(pcxt, snapshot);
		return false;
	}

	shared = shm_toc_allocate(pcxt->toc, shared_size);
	memset(shared, 0, shared_size);
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->tail_only = tail != NULL;
	shared->needs_wal = RelationNeedsWAL(index);
	shared->budget = budget / (nworkers + (leader_participates ? 1 : 0));
	shared->nslots = nworkers + 1;
	SpinLockInit(&shared->mutex);
	ConditionVariableInit(&shared->cv);
	pg_atomic_init_u32(&shared->next_table, 0);
	PrepareTempTablespaces();
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	shm_toc_insert(pcxt->toc, KEY_SHARED, shared);
	pscan = shm_toc_allocate(pcxt->toc, scan_size);
	table_parallelscan_initialize(heap, pscan, snapshot);
	shm_toc_insert(pcxt->toc, KEY_TABLE_SCAN, pscan);
	if (debug_query_string)
	{
		char	   *query = shm_toc_allocate(pcxt->toc, query_len + 1);

		memcpy(query, debug_query_string, query_len + 1);
		shm_toc_insert(pcxt->toc, KEY_QUERY_TEXT, query);
	}

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg("building hamming index \"%s\" on table \"%s\" with %d of %d requested parallel workers",
					RelationGetRelationName(index), RelationGetRelationName(heap),
					pcxt->nworkers_launched, nworkers)));
	if (pcxt->nworkers_launched == 0)
	{
		/* none started: serially, with all the memory */
		WaitForParallelWorkersToFinish(pcxt);
		end_parallel(pcxt, snapshot);
		return false;
	}
	/* the shares exported: the workers', and the leader's unless it streams it onto the tail */
	SpinLockAcquire(&shared->mutex);
	shared->nparticipants = pcxt->nworkers_launched + (leader_participates && !tail ? 1 : 0);
	SpinLockRelease(&shared->mutex);

	if (leader_participates && tail)
		leader_reltuples = hamming_build_scan_into(heap, index, indexInfo,
												   table_beginscan_parallel(heap, pscan), true,
												   tail, indtuples);
	else if (leader_participates)
		participate(shared, pscan, heap, index, indexInfo, nworkers, true);
	/* a worker that failed to start is an error here (it would export nothing) */
	WaitForParallelWorkersToAttach(pcxt);
	wait_for(shared, false);

	parts = palloc(shared->nslots * sizeof(Participant *));
	files = palloc(shared->nslots * sizeof(BufFile *));
	nparts = open_shares(shared, parts, files);
	*reltuples = leader_reltuples;
	for (i = 0; i < nparts; i++)
	{
		*reltuples += parts[i]->reltuples;
		*indtuples += parts[i]->indtuples;
		shared->nentries += parts[i]->run.count;
	}
	if (tail)
		stream_shares(nparts, parts, files, index, tail);
	else
		write_all_tables(shared, index, nparts, parts, files, budget / 16, meta, nulls);
	WaitForParallelWorkersToFinish(pcxt);
	for (i = 0; i < nparts; i++)
		BufFileClose(files[i]);
	pfree(parts);
	pfree(files);
	end_parallel(pcxt, snapshot);
	return true;
}
