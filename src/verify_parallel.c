/*
 * verify_parallel.c
 *	  Parallel workers for the verification of the whole-table functions
 *	  (verify.c): while the leader reads the rows of the caller's query, the
 *	  workers tokenize the candidate documents' bodies into sorted shingle
 *	  sets, the costly part of the verification.
 *
 * The leader asks for simhash.verify_workers workers: by default (-1) as
 * many as max_parallel_workers_per_gather when there are at least
 * VERIFY_PARALLEL_MIN_TEXTS texts to tokenize, else none; a positive number
 * starts that many whatever the number of texts (for tests), 0 none.  Each
 * worker has two queues in the parallel context's shared memory: the leader
 * sends it (id, text) messages on one, and it sends back (id, sorted set)
 * on the other.  The leader never blocks on a queue: a text goes to the next
 * worker whose queue takes it, and when every worker's queue is full the
 * leader tokenizes the text itself (unless parallel_leader_participation is
 * off; then it waits).  Meanwhile it stores the sets that come back.  Which
 * process tokenized a text does not change its set, and the pairs are
 * verified afterwards in their order, by the leader: the answers are those
 * of a serial run, in the same order.
 *
 * Memory: each worker holds one text and its set at a time (the set is
 * built within maintenance_work_mem, as in the leader, and fails with the
 * same error beyond it), plus two queues of VERIFY_QUEUE_SIZE in shared
 * memory.  The leader keeps at most one message per worker that a queue has
 * not taken yet.  Texts larger than VERIFY_PARALLEL_MAX_TEXT are tokenized by
 * the leader.
 *
 * An error in a worker (out of memory, a set beyond maintenance_work_mem)
 * reaches the leader through the parallel context with its SQLSTATE; a
 * cancel or an error in the leader ends the parallel context and so the
 * workers; a worker that exits without answering for every text it was sent
 * is an error, never a missing set.
 */
#include "verify_parallel.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/memutils.h"

/* below this many texts to tokenize, no worker by default */
#define VERIFY_PARALLEL_MIN_TEXTS	10000
/* the size of each queue */
#define VERIFY_QUEUE_SIZE			((Size) 256 * 1024)
/* longer texts are tokenized by the leader */
#define VERIFY_PARALLEL_MAX_TEXT	((Size) 64 * 1024 * 1024)

#if PG_VERSION_NUM < 170000
#define WAIT_EVENT_MESSAGE_QUEUE_RECEIVE WAIT_EVENT_MQ_RECEIVE
#endif

/* keys of the parallel context's table of contents */
#define KEY_SHINGLING		UINT64CONST(0x5348564500000001)
#define KEY_QUEUES			UINT64CONST(0x5348564500000002)

int			simhash_verify_workers = -1;

struct VerifyWorkers
{
	ParallelContext *pcxt;
	int			nworkers;		/* launched */
	shm_mq_handle **in;			/* texts to worker i */
	shm_mq_handle **out;		/* sets from worker i */
	char	  **pending;		/* a message the queue to worker i has not
								 * taken whole yet, or NULL */
	Size	   *pending_len;
	bool	   *finished;		/* worker i detached from its set queue */
	int			next;			/* the worker to try first */
	bool		leader_participates;
	int64		sent;
	int64		received;
	int64		by_leader;
	VerifyStoreFn store;
	void	   *arg;
};

PGDLLEXPORT void verify_parallel_main(dsm_segment *seg, shm_toc *toc);

static shm_mq *
verify_queue(char *queues, int worker, bool sets)
{
	return (shm_mq *) (queues + (Size) (2 * worker + (sets ? 1 : 0)) * VERIFY_QUEUE_SIZE);
}

/* a worker: tokenizes the texts of its queue until the leader detaches */
void
verify_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	const Shingling *sh = shm_toc_lookup(toc, KEY_SHINGLING, false);
	char	   *queues = shm_toc_lookup(toc, KEY_QUEUES, false);
	shm_mq	   *inq = verify_queue(queues, ParallelWorkerNumber, false);
	shm_mq	   *outq = verify_queue(queues, ParallelWorkerNumber, true);
	shm_mq_handle *in;
	shm_mq_handle *out;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash verification worker",
											  ALLOCSET_DEFAULT_SIZES);

	shm_mq_set_receiver(inq, MyProc);
	shm_mq_set_sender(outq, MyProc);
	in = shm_mq_attach(inq, seg, NULL);
	out = shm_mq_attach(outq, seg, NULL);
	for (;;)
	{
		Size		nbytes;
		void	   *data;
		int64		id;
		int64	   *set;
		Size		count;
		shm_mq_iovec iov[2];
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (shm_mq_receive(in, &nbytes, &data, false) != SHM_MQ_SUCCESS)
			break;				/* the leader sent every text */
		old = MemoryContextSwitchTo(cxt);
		memcpy(&id, data, sizeof(int64));
		set = shingle_sorted_set((char *) data + sizeof(int64), (int) (nbytes - sizeof(int64)),
								 sh, &count);
		iov[0].data = (const char *) &id;
		iov[0].len = sizeof(int64);
		iov[1].data = (const char *) set;
		iov[1].len = count * sizeof(int64);
		MemoryContextSwitchTo(old);
		if (shm_mq_sendv(out, iov, 2, false, true) != SHM_MQ_SUCCESS)
			break;				/* the leader is gone */
		MemoryContextReset(cxt);
	}
	shm_mq_detach(out);
	shm_mq_detach(in);
}

/*
 * The workers to ask for, by a setting of the simhash.verify_workers kind:
 * -1 max_parallel_workers_per_gather when there is enough work, 0 none, a
 * positive number that many.  None inside a parallel operation.
 */
int
simhash_workers_wanted(int setting, bool enough)
{
	if (IsInParallelMode() || IsParallelWorker() || !IsUnderPostmaster)
		return 0;
	if (setting >= 0)
		return setting;
	return enough ? max_parallel_workers_per_gather : 0;
}

/* ends a parallel context of the extension and the parallel mode it began in */
void
simhash_parallel_end(ParallelContext *pcxt)
{
	DestroyParallelContext(pcxt);
	ExitParallelMode();
}

/*
 * The dynamic shared memory of a parallel context of the extension, as its
 * estimator asks; false, the context ended, when the server has none (the
 * caller runs serially)
 */
bool
simhash_parallel_dsm(ParallelContext *pcxt)
{
	InitializeParallelDSM(pcxt);
	if (pcxt->seg != NULL)
		return true;
	simhash_parallel_end(pcxt);
	return false;
}

VerifyWorkers *
verify_workers_begin(const Shingling *sh, int64 ntexts, VerifyStoreFn store, void *arg)
{
	int			nworkers = simhash_workers_wanted(simhash_verify_workers,
												  ntexts >= VERIFY_PARALLEL_MIN_TEXTS);
	VerifyWorkers *w;
	Shingling  *shared;
	char	   *queues;
	int			i;

	if (nworkers <= 0)
		return NULL;
	w = palloc0(sizeof(VerifyWorkers));
	w->store = store;
	w->arg = arg;
	w->leader_participates = parallel_leader_participation;
	EnterParallelMode();
	w->pcxt = CreateParallelContext("simhash", "verify_parallel_main", nworkers);
	shm_toc_estimate_chunk(&w->pcxt->estimator, sizeof(Shingling));
	shm_toc_estimate_chunk(&w->pcxt->estimator, mul_size(2 * nworkers, VERIFY_QUEUE_SIZE));
	shm_toc_estimate_keys(&w->pcxt->estimator, 2);
	if (!simhash_parallel_dsm(w->pcxt))
		return NULL;			/* no dynamic shared memory: serially */
	shared = shm_toc_allocate(w->pcxt->toc, sizeof(Shingling));
	*shared = *sh;
	shm_toc_insert(w->pcxt->toc, KEY_SHINGLING, shared);
	queues = shm_toc_allocate(w->pcxt->toc, mul_size(2 * nworkers, VERIFY_QUEUE_SIZE));
	shm_toc_insert(w->pcxt->toc, KEY_QUEUES, queues);
	w->in = palloc0(nworkers * sizeof(shm_mq_handle *));
	w->out = palloc0(nworkers * sizeof(shm_mq_handle *));
	w->pending = palloc0(nworkers * sizeof(char *));
	w->pending_len = palloc0(nworkers * sizeof(Size));
	w->finished = palloc0(nworkers * sizeof(bool));
	for (i = 0; i < nworkers; i++)
	{
		shm_mq	   *inq = shm_mq_create(verify_queue(queues, i, false), VERIFY_QUEUE_SIZE);
		shm_mq	   *outq = shm_mq_create(verify_queue(queues, i, true), VERIFY_QUEUE_SIZE);

		shm_mq_set_sender(inq, MyProc);
		shm_mq_set_receiver(outq, MyProc);
		w->in[i] = shm_mq_attach(inq, w->pcxt->seg, NULL);
		w->out[i] = shm_mq_attach(outq, w->pcxt->seg, NULL);
	}
	LaunchParallelWorkers(w->pcxt);
	w->nworkers = w->pcxt->nworkers_launched;
	ereport(DEBUG1,
			(errmsg_internal("simhash verification: %d of %d parallel workers launched to tokenize %lld texts",
							 w->nworkers, nworkers, (long long) ntexts)));
	if (w->nworkers == 0)
	{
		simhash_parallel_end(w->pcxt);
		return NULL;
	}
	for (i = 0; i < w->nworkers; i++)
	{
		shm_mq_set_handle(w->in[i], w->pcxt->worker[i].bgwhandle);
		shm_mq_set_handle(w->out[i], w->pcxt->worker[i].bgwhandle);
	}
	return w;
}

/*
 * A worker detached before it answered: stops the others and raises the
 * worker's error if there is one, else this one.
 */
static void
verify_worker_gone(VerifyWorkers *w)
{
	int			i;

	for (i = 0; i < w->nworkers; i++)
	{
		if (w->in[i] != NULL)
			shm_mq_detach(w->in[i]);
		w->in[i] = NULL;
		shm_mq_detach(w->out[i]);
	}
	WaitForParallelWorkersToFinish(w->pcxt);
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("a parallel worker of the verification exited before it tokenized every text it was sent")));
}

/*
 * Hands every message waiting in the queues mq[0..n) to fn(data, nbytes,
 * arg), without waiting; finished[i] once queue i's sender detached.  True
 * if any message came or any queue finished (a wait for the next message
 * would then wait for a sender that is gone).
 */
bool
simhash_queues_collect(shm_mq_handle **mq, bool *finished, int n, SimhashMessageFn fn, void *arg)
{
	bool		progress = false;
	int			i;

	for (i = 0; i < n; i++)
	{
		while (!finished[i])
		{
			Size		nbytes;
			void	   *data;
			shm_mq_result res = shm_mq_receive(mq[i], &nbytes, &data, true);

			if (res == SHM_MQ_WOULD_BLOCK)
				break;
			progress = true;
			if (res == SHM_MQ_DETACHED)
			{
				finished[i] = true;
				break;
			}
			fn(data, nbytes, arg);
		}
	}
	return progress;
}

/* the same until every sender detached, sleeping while no message comes */
void
simhash_queues_drain(shm_mq_handle **mq, bool *finished, int n, SimhashMessageFn fn, void *arg)
{
	for (;;)
	{
		bool		all = true;
		int			i;

		for (i = 0; i < n; i++)
			all &= finished[i];
		if (all)
			return;
		if (!simhash_queues_collect(mq, finished, n, fn, arg))
			simhash_workers_wait();
	}
}

/* a set that came back, to store() */
static void
verify_workers_store(const void *data, Size nbytes, void *arg)
{
	VerifyWorkers *w = (VerifyWorkers *) arg;
	int64		id;

	memcpy(&id, data, sizeof(int64));
	w->store(id, (const char *) data + sizeof(int64), (nbytes - sizeof(int64)) / sizeof(int64), w->arg);
	w->received++;
}

/* hands the sets that came back to store(), without waiting; true if any did */
static bool
verify_workers_collect(VerifyWorkers *w)
{
	return simhash_queues_collect(w->out, w->finished, w->nworkers, verify_workers_store, w);
}

/* goes on sending worker i its pending message; true once the queue took it */
static bool
verify_workers_flush(VerifyWorkers *w, int i)
{
	shm_mq_result res;

	if (w->pending[i] == NULL)
		return true;
	res = shm_mq_send(w->in[i], w->pending_len[i], w->pending[i], true, true);
	if (res == SHM_MQ_WOULD_BLOCK)
		return false;
	if (res == SHM_MQ_DETACHED)
		verify_worker_gone(w);
	pfree(w->pending[i]);
	w->pending[i] = NULL;
	return true;
}

/* sleeps until a queue moves, then handles interrupts and the workers' messages */
void
simhash_workers_wait(void)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, 0, WAIT_EVENT_MESSAGE_QUEUE_RECEIVE);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

bool
verify_workers_send(VerifyWorkers *w, int64 id, const char *data, Size len)
{
	if (len > VERIFY_PARALLEL_MAX_TEXT)
	{
		w->by_leader++;
		return false;
	}
	for (;;)
	{
		int			k;

		(void) verify_workers_collect(w);
		for (k = 0; k < w->nworkers; k++)
		{
			int			i = (w->next + k) % w->nworkers;

			if (!verify_workers_flush(w, i))
				continue;
			w->pending[i] = palloc(sizeof(int64) + len);
			memcpy(w->pending[i], &id, sizeof(int64));
			memcpy(w->pending[i] + sizeof(int64), data, len);
			w->pending_len[i] = sizeof(int64) + len;
			(void) verify_workers_flush(w, i);
			w->next = (i + 1) % w->nworkers;
			w->sent++;
			return true;
		}
		if (w->leader_participates)
		{
			w->by_leader++;
			return false;
		}
		simhash_workers_wait();
	}
}

void
verify_workers_end(VerifyWorkers *w)
{
	int			i;
	bool		flushed = false;

	/* the last messages, then the end of the texts */
	while (!flushed)
	{
		flushed = true;
		for (i = 0; i < w->nworkers; i++)
			flushed &= verify_workers_flush(w, i);
		if (!verify_workers_collect(w) && !flushed)
			simhash_workers_wait();
	}
	for (i = 0; i < w->nworkers; i++)
	{
		shm_mq_detach(w->in[i]);
		w->in[i] = NULL;
	}
	/* the last sets: a worker detaches once it answered every text */
	simhash_queues_drain(w->out, w->finished, w->nworkers, verify_workers_store, w);
	/* raises a worker's error, if any */
	WaitForParallelWorkersToFinish(w->pcxt);
	if (w->received != w->sent)
		verify_worker_gone(w);
	ereport(DEBUG1,
			(errmsg_internal("simhash verification: %lld texts tokenized by %d parallel workers, %lld by the leader",
							 (long long) w->received, w->nworkers, (long long) w->by_leader)));
	simhash_parallel_end(w->pcxt);
}
