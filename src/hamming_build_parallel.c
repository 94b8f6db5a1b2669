/*
 * hamming_build_parallel.c
 *	  CREATE INDEX of a "hamming" index with parallel workers.  The leader
 *	  asks for plan_create_index_workers() workers (max_parallel_maintenance_
 *	  workers, and at least 32 MB of maintenance_work_mem per participant),
 *	  through a parallel context on every version (17 and later decide
 *	  with amcanbuildparallel and hand the number in the IndexInfo).  Each
 *	  participant (the workers, and the leader unless
 *	  parallel_leader_participation is off) scans its share of the table
 *	  through a parallel table scan, sorts it four ways within its share of
 *	  maintenance_work_mem (spilling as a serial build does) and exports the
 *	  sorted entries, the keys of tables 1..3 and its NULL TIDs to a file of
 *	  a shared file set.  The leader then reads the participants' runs back
 *	  merged, and hamming_build.c writes the index from them as from a
 *	  serial build's sort: the probe tables hold the same entries in the
 *	  same order, and the NULL TIDs are merged in block order, as a serial
 *	  scan from the table's first block meets them.  The files go with the
 *	  parallel context's shared memory, on success, error or cancel alike.
 */
#include "hamming.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/sharedfileset.h"
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
	HammingSortRun run;			/* its sorted entries and keys */
	Size		nnulls;			/* and its NULL TIDs after them */
	int			nulls_fileno;
	off_t		nulls_offset;
} Participant;

typedef struct BuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	Size		budget;			/* memory of each participant */
	SharedFileSet fileset;
	slock_t		mutex;
	/* the workers' slots by ParallelWorkerNumber, then the leader's */
	Participant slot[FLEXIBLE_ARRAY_MEMBER];
} BuildShared;

struct HammingParallelBuild
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
};

/* the file of a participant's slot in the shared file set */
static const char *
slot_file(int slot, char *name)
{
	snprintf(name, MAXPGPATH, "hamming.%d", slot);
	return name;
}

/* a participant's share: scanned, sorted and exported to its file */
static void
participate(BuildShared *shared, ParallelTableScanDesc pscan, Relation heap, Relation index,
			IndexInfo *indexInfo, int slot, bool progress)
{
	Participant *p = &shared->slot[slot];
	HammingSort *sort;
	HammingTids *nulls;
	HammingSortRun run;
	double		reltuples;
	double		indtuples = 0;
	char		name[MAXPGPATH];
	BufFile    *file;
	ItemPointerData tid;
	int			nulls_fileno;
	off_t		nulls_offset;
	Size		nnulls;

	hamming_build_sorts(shared->budget, &sort, &nulls);
	reltuples = hamming_build_scan(heap, index, indexInfo, table_beginscan_parallel(heap, pscan),
								   progress, sort, nulls, &indtuples);
	file = BufFileCreateFileSet(&shared->fileset.fs, slot_file(slot, name));
	hamming_sort_export(sort, file, &run);
	BufFileTell(file, &nulls_fileno, &nulls_offset);
	nnulls = hamming_tids_count(nulls);
	while (hamming_tids_next(nulls, &tid))
		BufFileWrite(file, &tid, sizeof(ItemPointerData));
	BufFileClose(file);
	hamming_sort_end(sort);
	hamming_tids_end(nulls);

	SpinLockAcquire(&shared->mutex);
	p->reltuples = reltuples;
	p->indtuples = indtuples;
	p->run = run;
	p->nnulls = nnulls;
	p->nulls_fileno = nulls_fileno;
	p->nulls_offset = nulls_offset;
	p->done = true;
	SpinLockRelease(&shared->mutex);
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

/*
 * Build with parallel workers, if this build asks for them and any start:
 * then the participants' entries are sorted into *sort, their NULL TIDs
 * kept in *nulls, and their tuples counted; the build ends with
 * hamming_parallel_build_end once the sort is ended.  NULL: build serially.
 */
HammingParallelBuild *
hamming_parallel_build_begin(Relation heap, Relation index, IndexInfo *indexInfo,
							 HammingSort **sort, HammingTids **nulls, double *reltuples,
							 double *indtuples)
{
	int			nworkers = requested_workers(heap, index, indexInfo);
	bool		leader_participates = parallel_leader_participation;
	HammingParallelBuild *build;
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		shared_size;
	Size		scan_size;
	Size		query_len = 0;
	BuildShared *shared;
	ParallelTableScanDesc pscan;
	Size		budget = (Size) maintenance_work_mem * 1024;
	const Participant **parts;
	HammingSortRun *runs;
	BufFile   **files;
	int			nparts = 0;
	int			slot;

	if (nworkers <= 0)
		return NULL;

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

	build = palloc(sizeof(HammingParallelBuild));
	build->pcxt = pcxt;
	build->snapshot = snapshot;
	if (pcxt->seg == NULL)
	{
		/* no shared memory to be had: serially */
		hamming_parallel_build_end(build);
		return NULL;
	}

	shared = shm_toc_allocate(pcxt->toc, shared_size);
	memset(shared, 0, shared_size);
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->budget = budget / (nworkers + (leader_participates ? 1 : 0));
	SpinLockInit(&shared->mutex);
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
		hamming_parallel_build_end(build);
		return NULL;
	}

	if (leader_participates)
		participate(shared, pscan, heap, index, indexInfo, nworkers, true);
	/* a worker's error is raised here, in the leader, as it was raised */
	WaitForParallelWorkersToFinish(pcxt);

	parts = palloc((nworkers + 1) * sizeof(Participant *));
	runs = palloc((nworkers + 1) * sizeof(HammingSortRun));
	files = palloc((nworkers + 1) * sizeof(BufFile *));
	*reltuples = 0;
	for (slot = 0; slot <= nworkers; slot++)
	{
		Participant *p = &shared->slot[slot];
		char		name[MAXPGPATH];

		if (slot < nworkers ? slot >= pcxt->nworkers_launched : !leader_participates)
			continue;
		SpinLockAcquire(&shared->mutex);
		if (!p->done)
		{
			SpinLockRelease(&shared->mutex);
			elog(ERROR, "hamming index build participant %d ended without its share", slot);
		}
		SpinLockRelease(&shared->mutex);
		*reltuples += p->reltuples;
		*indtuples += p->indtuples;
		parts[nparts] = p;
		runs[nparts] = p->run;
		files[nparts++] = BufFileOpenFileSet(&shared->fileset.fs, slot_file(slot, name), O_RDONLY, false);
	}
	*nulls = merge_nulls(nparts, parts, files, budget / 16);
	*sort = hamming_sort_import(budget / 16 * 15, nparts, runs, files);
	pfree(parts);
	pfree(runs);
	pfree(files);
	return build;
}

/* the workers' shared memory and files released: after hamming_sort_end of the sort */
void
hamming_parallel_build_end(HammingParallelBuild *build)
{
	if (IsMVCCSnapshot(build->snapshot))
		UnregisterSnapshot(build->snapshot);
	DestroyParallelContext(build->pcxt);
	ExitParallelMode();
	pfree(build);
}
