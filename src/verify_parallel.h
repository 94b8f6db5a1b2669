/*
 * verify_parallel.h
 *	  Parallel workers of the verification (verify_parallel.c) that tokenize
 *	  the bodies into sorted shingle sets while the leader reads them.
 */
#ifndef SIMHASH_VERIFY_PARALLEL_H
#define SIMHASH_VERIFY_PARALLEL_H

#include "shingle_set.h"

#include "access/parallel.h"
#include "storage/shm_mq.h"

/* each set goes to store(id, set, count, arg) in the leader */
typedef struct VerifyWorkers VerifyWorkers;
typedef void (*VerifyStoreFn) (int64 id, const void *set, Size count, void *arg);

/* simhash.verify_workers: -1 as many as max_parallel_workers_per_gather for enough texts */
extern int	simhash_verify_workers;

/* NULL when no worker is to run (or none could be started) */
extern VerifyWorkers *verify_workers_begin(const Shingling *sh, int64 ntexts,
										   VerifyStoreFn store, void *arg);
/* false: the caller tokenizes this text itself */
extern bool verify_workers_send(VerifyWorkers *w, int64 id, const char *data, Size len);
/* waits for the last sets, stops the workers */
extern void verify_workers_end(VerifyWorkers *w);

/*
 * For every parallel context of the extension (also pairs_parallel.c): the
 * workers a setting like simhash.verify_workers asks for (-1: as many as
 * max_parallel_workers_per_gather when there is enough work), a sleep
 * until a queue moves (then interrupts and the workers' messages handled),
 * and the end of the context and of its parallel mode.
 */
extern int	simhash_workers_wanted(int setting, bool enough);
extern void simhash_workers_wait(void);
extern void simhash_parallel_end(ParallelContext *pcxt);
extern bool simhash_parallel_dsm(ParallelContext *pcxt);

/*
 * The messages of the workers' queues mq[0..n) to fn: those waiting
 * (collect, true if any came), or all until every worker detached (drain);
 * finished[i] once worker i detached.
 */
typedef void (*SimhashMessageFn) (const void *data, Size nbytes, void *arg);
extern bool simhash_queues_collect(shm_mq_handle **mq, bool *finished, int n,
								   SimhashMessageFn fn, void *arg);
extern void simhash_queues_drain(shm_mq_handle **mq, bool *finished, int n,
								 SimhashMessageFn fn, void *arg);

#endif							/* SIMHASH_VERIFY_PARALLEL_H */
