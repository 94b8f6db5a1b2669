/*
 * pairs_parallel.c
 *	  The tables (or bands) of the whole-table functions shared among
 *	  parallel workers (see pairs.h): each table groups every row by its key
 *	  and compares the rows of equal keys, independently of the others, and
 *	  a pair is emitted by the first table on which it agrees only, so the
 *	  tables can be split among processes as simhash_pairs_share() splits
 *	  them among nodes.
 *
 * pairs_enumerate() runs the tables so when workers are to run, else in
 * this process alone (pairs_tables(), pairs_engine.c).
 *
 * The leader asks for simhash.band_workers workers: by default (-1) as many
 * as max_parallel_workers_per_gather when the rows times the tables reach
 * PAIRS_PARALLEL_MIN_WORK, a positive number that many whatever the work
 * (for tests), 0 none; never more than the tables.  It puts the plan (the
 * tables' masks or blocks) and the rows in the parallel context's shared
 * memory once.  Each worker copies the rows, then claims the tables one at a
 * time from a shared counter and emits the pairs of each one into its queue,
 * in batches; the leader claims tables from the same counter (unless
 * parallel_leader_participation is off), emits the pairs of its own tables
 * as a serial run does, and between two of them hands the pairs that came
 * from the workers to the same callback.  The set of pairs is a serial
 * run's, each pair once, with its distance; the order they come in differs
 * (the integer forms promise no order; the clusters, the dedup and the
 * verified forms do not depend on it).
 *
 * Rows that spilled to a temporary file (pairs_spill.c) are shared as a
 * file: the leader copies its spill file once into a file of a shared file
 * set, which every worker opens read-only and splits, table by table, into
 * partition files of its own, as the leader splits its own spill file.
 * Memory: a worker holds its copy of the rows and a buffer to sort them, as
 * the leader does (within work_mem), and the shared memory one more copy of
 * the rows; when they spilled, a worker holds one partition, its sort buffer
 * and its files' buffers within work_mem, as the leader does, and the rows
 * are twice on disk (the spill file and its shared copy).  Each worker has a
 * queue of PAIRS_QUEUE_SIZE in the shared memory.
 *
 * An error in a worker reaches the leader through the parallel context with
 * its SQLSTATE; a cancel or an error in the leader ends the parallel context
 * and so the workers.  Every table claimed is counted once its pairs are
 * sent: a worker that exits without finishing its tables is an error, never
 * a missing pair.
 */
#include "pairs.h"
#include "pairs_band.h"
#include "verify_parallel.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/sharedfileset.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/memutils.h"

/* below this many rows times tables, no worker by default */
#define PAIRS_PARALLEL_MIN_WORK		((double) 10000000)
/* the queue of each worker's pairs, and the pairs of one message */
#define PAIRS_QUEUE_SIZE			((Size) 512 * 1024)
#define PAIRS_BATCH					1024
/* the shared copy of the spill file */
#define PAIRS_SHARED_ROWS			"simhash-pairs-rows"

/* keys of the parallel context's table of contents */
#define KEY_SHARED			UINT64CONST(0x5348504100000001)
#define KEY_MASKS			UINT64CONST(0x5348504100000002)
#define KEY_QUEUES			UINT64CONST(0x5348504100000003)
#define KEY_ROWS			UINT64CONST(0x5348504100000004)

int			simhash_band_workers = -1;
int			simhash_band_test_error = 0;

/* the plan and the rows of the leader, as a worker needs them */
typedef struct PairsShared
{
	pg_atomic_uint32 next_table;	/* the last table claimed */
	pg_atomic_uint32 tables_done;	/* tables whose pairs are all sent */
	char		fname[NAMEDATALEN];
	int			max_distance;
	int			width;
	int64		nrows;			/* under KEY_ROWS, or 0 when spilled */
	int64		ntotal;
	/* the rows spilled: PAIRS_SHARED_ROWS in fileset, split within budget */
	bool		spilled;
	bool		collapsed;
	Size		budget;
	SharedFileSet fileset;
	int			ntables;
	int			share;
	int			shares;
	/* the tables of 64 bits */
	int			nblocks;
	int			keyblocks;
	int			block_shift[SIMHASH_BITS];
	uint64		block_mask[SIMHASH_BITS];
	/* or the bands (masks under KEY_MASKS) */
	bool		banded;
	int			band_bits;
	int			band_nbands;
} PairsShared;

/* a pair in a message of a worker */
typedef struct PairsSent
{
	int64		id_a;
	int64		id_b;
	int32		distance;
} PairsSent;

/* a worker's pairs not sent yet */
typedef struct PairsSender
{
	PairsShared *shared;
	shm_mq_handle *mq;
	int			n;
	PairsSent	batch[PAIRS_BATCH];
} PairsSender;

/* the leader's view of its workers */
typedef struct PairsWorkers
{
	PairsState *st;
	ParallelContext *pcxt;
	PairsShared *shared;
	int			nworkers;		/* launched */
	shm_mq_handle **mq;
	bool	   *finished;		/* worker i detached from its queue */
	int			by_leader;		/* tables */
	int64		received;		/* pairs */
} PairsWorkers;

PGDLLEXPORT void pairs_parallel_main(dsm_segment *seg, shm_toc *toc);

static shm_mq *
pairs_queue(char *queues, int worker)
{
	return (shm_mq *) (queues + (Size) worker * PAIRS_QUEUE_SIZE);
}

/* ---- in a worker ---- */

static void
pairs_send_batch(PairsSender *s)
{
	if (s->n == 0)
		return;
	if (shm_mq_send(s->mq, s->n * sizeof(PairsSent), s->batch, false, true) != SHM_MQ_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the leader of a parallel near-duplicate search stopped reading its workers' pairs")));
	s->n = 0;
}

static void
pairs_send_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	PairsSender *s = (PairsSender *) arg;

	s->batch[s->n].id_a = id_a;
	s->batch[s->n].id_b = id_b;
	s->batch[s->n].distance = distance;
	if (++s->n == PAIRS_BATCH)
		pairs_send_batch(s);
}

/* a worker's table is done once its last pairs are in the queue */
static void
pairs_worker_table_done(PairsState *st)
{
	PairsSender *s = (PairsSender *) st->table_done_arg;

	pairs_send_batch(s);
	pg_atomic_fetch_add_u32(&s->shared->tables_done, 1);
	if (st->table == simhash_band_test_error)
		ereport(ERROR,
				(errcode(ERRCODE_RAISE_EXCEPTION),
				 errmsg("a parallel worker of the near-duplicate search fails after table %d, as simhash.band_test_error asks",
						st->table)));
}

/* a worker: its copy of the rows, then the tables it claims */
void
pairs_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	PairsShared *shared = shm_toc_lookup(toc, KEY_SHARED, false);
	char	   *queues = shm_toc_lookup(toc, KEY_QUEUES, false);
	shm_mq	   *mq = pairs_queue(queues, ParallelWorkerNumber);
	PairsSender *sender = palloc0(sizeof(PairsSender));
	PairsState	st;

	shm_mq_set_sender(mq, MyProc);
	sender->shared = shared;
	sender->mq = shm_mq_attach(mq, seg, NULL);

	memset(&st, 0, sizeof(PairsState));
	st.fname = shared->fname;
	st.cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash pairs worker", ALLOCSET_DEFAULT_SIZES);
	st.max_distance = shared->max_distance;
	st.width = shared->width;
	st.words = shared->width / 64;
	st.row_size = offsetof(PairsRow, lo) + sizeof(uint64) * (st.words - 1);
	st.ntotal = st.nrows = st.rows_len = st.scratch_len = shared->nrows;
	st.ntables = shared->ntables;
	st.share = shared->share;
	st.shares = shared->shares;
	st.nblocks = shared->nblocks;
	st.keyblocks = shared->keyblocks;
	memcpy(st.block_shift, shared->block_shift, sizeof(st.block_shift));
	memcpy(st.block_mask, shared->block_mask, sizeof(st.block_mask));
	if (shared->banded)
	{
		st.bands = palloc0(sizeof(SimhashBands));
		st.bands->width = st.width;
		st.bands->words = st.words;
		st.bands->bits = shared->band_bits;
		st.bands->nbands = shared->band_nbands;
		st.bands->masks = shm_toc_lookup(toc, KEY_MASKS, false);
	}
	/* progress notices come from the leader alone */
	st.next_notice = DT_NOEND;
	st.collapsed = shared->collapsed;
	if (shared->spilled)
	{
		/* the shared copy of the spill file, split as the leader splits its own */
		SharedFileSetAttach(&shared->fileset, seg);
		PrepareTempTablespaces();
		st.file = BufFileOpenFileSet(&shared->fileset.fs, PAIRS_SHARED_ROWS, O_RDONLY, false);
		st.ntotal = shared->ntotal;
		st.budget = shared->budget;
		pairs_spill_layout(&st);
	}
	else
	{
		const PairsRow *rows = shm_toc_lookup(toc, KEY_ROWS, false);

		st.rows = pairs_resize(&st, NULL, st.nrows);
		memcpy(st.rows, rows, st.nrows * st.row_size);
		st.scratch = pairs_resize(&st, NULL, st.nrows);
	}

	st.emit = pairs_send_pair;
	st.emit_arg = sender;
	st.next_table = &shared->next_table;
	st.table_done = pairs_worker_table_done;
	st.table_done_arg = sender;
	pairs_tables(&st);
	if (st.file != NULL)
		BufFileClose(st.file);
	shm_mq_detach(sender->mq);
	MemoryContextDelete(st.cxt);
}

/* ---- in the leader ---- */

/* a message of pairs from a worker, to st->emit */
static void
pairs_receive(const void *data, Size nbytes, void *arg)
{
	PairsWorkers *w = (PairsWorkers *) arg;
	PairsState *st = w->st;
	const PairsSent *p = (const PairsSent *) data;
	Size		n = nbytes / sizeof(PairsSent);
	Size		j;

	for (j = 0; j < n; j++)
	{
		CHECK_FOR_INTERRUPTS();
		st->emit(p[j].id_a, p[j].id_b, p[j].distance, st->emit_arg);
	}
	st->npairs += n;
	w->received += n;
}

/* the leader's table is done: the workers' pairs so far */
static void
pairs_leader_table_done(PairsState *st)
{
	PairsWorkers *w = (PairsWorkers *) st->table_done_arg;

	pg_atomic_fetch_add_u32(&w->shared->tables_done, 1);
	w->by_leader++;
	(void) simhash_queues_collect(w->mq, w->finished, w->nworkers, pairs_receive, w);
}

/*
 * The spilled rows copied to the file that the workers read, in a file set
 * of the parallel context's segment: deleted when the last process detaches
 * from it, after an error too.
 */
static void
pairs_share_spill(PairsState *st, PairsShared *shared, dsm_segment *seg)
{
	BufFile    *copy;
	int64		done;
	int64		chunk;

	PrepareTempTablespaces();
	SharedFileSetInit(&shared->fileset, seg);
	copy = BufFileCreateFileSet(&shared->fileset.fs, PAIRS_SHARED_ROWS);
	pairs_file_rewind(st, st->file);
	for (done = 0; done < st->ntotal; done += chunk)
	{
		CHECK_FOR_INTERRUPTS();
		chunk = Min(st->ntotal - done, st->scratch_len);
		pairs_file_read(st, st->file, st->scratch, chunk * st->row_size);
		BufFileWrite(copy, st->scratch, chunk * st->row_size);
	}
	BufFileClose(copy);
	shared->spilled = true;
	shared->budget = st->budget;
}

/*
 * The parallel context with the plan, the rows (or their file) and the queues, for the
 * ntables tables of the call's share; NULL if no worker started.
 */
static PairsWorkers *
pairs_workers_begin(PairsState *st, int nworkers, int ntables)
{
	PairsWorkers *w = palloc0(sizeof(PairsWorkers));
	PairsShared *shared;
	Size		rows_size = st->file != NULL ? 0 : mul_size(st->nrows, st->row_size);
	Size		masks_size = st->bands != NULL ? sizeof(uint64) * st->bands->words * st->bands->nbands : 0;
	char	   *queues;
	int			i;

	w->st = st;
	EnterParallelMode();
	w->pcxt = CreateParallelContext("simhash", "pairs_parallel_main", nworkers);
	shm_toc_estimate_chunk(&w->pcxt->estimator, sizeof(PairsShared));
	shm_toc_estimate_chunk(&w->pcxt->estimator, Max(masks_size, sizeof(uint64)));
	shm_toc_estimate_chunk(&w->pcxt->estimator, mul_size(nworkers, PAIRS_QUEUE_SIZE));
	shm_toc_estimate_chunk(&w->pcxt->estimator, rows_size);
	shm_toc_estimate_keys(&w->pcxt->estimator, 4);
	if (!simhash_parallel_dsm(w->pcxt))
		return NULL;			/* no dynamic shared memory: serially */

	shared = shm_toc_allocate(w->pcxt->toc, sizeof(PairsShared));
	memset(shared, 0, sizeof(PairsShared));
	pg_atomic_init_u32(&shared->next_table, 0);
	pg_atomic_init_u32(&shared->tables_done, 0);
	strlcpy(shared->fname, st->fname, NAMEDATALEN);
	shared->max_distance = st->max_distance;
	shared->width = st->width;
	shared->nrows = st->file != NULL ? 0 : st->nrows;
	shared->ntotal = st->ntotal;
	shared->collapsed = st->collapsed;
	shared->ntables = st->ntables;
	shared->share = st->share;
	shared->shares = st->shares;
	shared->nblocks = st->nblocks;
	shared->keyblocks = st->keyblocks;
	memcpy(shared->block_shift, st->block_shift, sizeof(st->block_shift));
	memcpy(shared->block_mask, st->block_mask, sizeof(st->block_mask));
	shm_toc_insert(w->pcxt->toc, KEY_SHARED, shared);
	if (st->bands != NULL)
	{
		uint64	   *masks = shm_toc_allocate(w->pcxt->toc, masks_size);

		memcpy(masks, st->bands->masks, masks_size);
		shm_toc_insert(w->pcxt->toc, KEY_MASKS, masks);
		shared->banded = true;
		shared->band_bits = st->bands->bits;
		shared->band_nbands = st->bands->nbands;
	}
	queues = shm_toc_allocate(w->pcxt->toc, mul_size(nworkers, PAIRS_QUEUE_SIZE));
	shm_toc_insert(w->pcxt->toc, KEY_QUEUES, queues);
	if (st->file != NULL)
		pairs_share_spill(st, shared, w->pcxt->seg);
	else
	{
		char	   *rows = shm_toc_allocate(w->pcxt->toc, rows_size);

		memcpy(rows, st->rows, rows_size);
		shm_toc_insert(w->pcxt->toc, KEY_ROWS, rows);
	}
	w->shared = shared;
	w->mq = palloc0(nworkers * sizeof(shm_mq_handle *));
	w->finished = palloc0(nworkers * sizeof(bool));
	for (i = 0; i < nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(pairs_queue(queues, i), PAIRS_QUEUE_SIZE);

		shm_mq_set_receiver(mq, MyProc);
		w->mq[i] = shm_mq_attach(mq, w->pcxt->seg, NULL);
	}
	LaunchParallelWorkers(w->pcxt);
	w->nworkers = w->pcxt->nworkers_launched;
	ereport(DEBUG1,
			(errmsg_internal("%s: %d of %d parallel workers started for %d tables of %lld rows%s",
							 st->fname, w->nworkers, nworkers, ntables, (long long) st->ntotal,
							 st->file != NULL ? " in a temporary file" : "")));
	if (w->nworkers == 0)
	{
		simhash_parallel_end(w->pcxt);
		return NULL;
	}
	for (i = 0; i < w->nworkers; i++)
		shm_mq_set_handle(w->mq[i], w->pcxt->worker[i].bgwhandle);
	return w;
}

/* the tables of this call's share */
static int
pairs_tables_in_share(const PairsState *st)
{
	if (st->shares <= 1)
		return st->ntables;
	return st->ntables / st->shares + (st->share < st->ntables % st->shares ? 1 : 0);
}

/*
 * Enumerates the tables with parallel workers, if any are to run: false
 * when none does (the caller enumerates them alone).
 */
static bool
pairs_parallel_tables(PairsState *st)
{
	int			ntables = pairs_tables_in_share(st);
	int			nworkers;
	PairsWorkers *w;

	nworkers = simhash_workers_wanted(simhash_band_workers,
									  (double) st->ntotal * ntables >= PAIRS_PARALLEL_MIN_WORK);
	nworkers = Min(nworkers, ntables);
	if (nworkers <= 0 || ntables < 2 || (st->file == NULL && st->nrows != st->ntotal))
		return false;
	w = pairs_workers_begin(st, nworkers, ntables);
	if (w == NULL)
		return false;

	/* the leader's tables, and the workers' pairs between two of them */
	st->workers = w->nworkers;
	if (parallel_leader_participation)
	{
		st->next_table = &w->shared->next_table;
		st->claimed = 0;
		st->table_done = pairs_leader_table_done;
		st->table_done_arg = w;
		pairs_tables(st);
		st->next_table = NULL;
		st->table_done = NULL;
	}
	/* the workers' last pairs: a worker detaches once it sent them all */
	simhash_queues_drain(w->mq, w->finished, w->nworkers, pairs_receive, w);
	/* raises a worker's error, if any */
	WaitForParallelWorkersToFinish(w->pcxt);
	if (pg_atomic_read_u32(&w->shared->tables_done) != (uint32) ntables)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("a parallel worker of the near-duplicate search exited before it enumerated every table it claimed"),
				 errdetail("%u of %d tables were enumerated.",
						   pg_atomic_read_u32(&w->shared->tables_done), ntables)));
	ereport(DEBUG1,
			(errmsg_internal("%s: %d tables enumerated by %d parallel workers and %d by the leader, %lld pairs from the workers",
							 st->fname, ntables - w->by_leader, w->nworkers, w->by_leader,
							 (long long) w->received)));
	st->workers = 0;
	simhash_parallel_end(w->pcxt);
	return true;
}

/*
 * Calls emit(id_a, id_b, distance, arg) once for every pair within k bits:
 * the tables by parallel workers and the leader, or by this process alone
 */
void
pairs_enumerate(PairsState *st, PairsCallback emit, void *arg)
{
	st->emit = emit;
	st->emit_arg = arg;
	if (st->ntotal < 2)
		return;
	if (!pairs_parallel_tables(st))
		pairs_tables(st);
}
