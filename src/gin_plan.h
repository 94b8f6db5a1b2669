/*
 * gin_plan.h
 *	  The GIN operator class simhash_ops (gin.c): its option limits and the
 *	  probe plan shared by its support functions, its cost model (gin_cost.c)
 *	  and the planner support (support.c).
 *
 * Each indexed fingerprint is stored as one GIN key per block: (block << 56) |
 * block value.  A query "within k bits of q" probes, in block i, every value
 * within r_i bits of q's block i, with sum(r_i + 1) >= k + 1 (multi-index
 * hashing, Norouzi et al. 2012; with r_i = 0 this is Manku et al.'s
 * pigeonhole).  A row's distance is then at least the sum over blocks of the
 * probed distance where a probe matched, and r_i + 1 where none did: rows
 * whose lower bound exceeds k are rejected inside the index, and rows whose
 * every block matched have their exact distance known without a recheck.
 */
#ifndef SIMHASH_GIN_PLAN_H
#define SIMHASH_GIN_PLAN_H

#include "simhash.h"

/* opclass option "blocks" */
#define SIMHASH_GIN_DEFAULT_BLOCKS	5
#define SIMHASH_GIN_MIN_BLOCKS		2
#define SIMHASH_GIN_MAX_BLOCKS		16

/* more probes than this, or a plan costlier than a full scan, and the scan reads the whole index instead */
#define SIMHASH_GIN_MAX_PROBES		2048

typedef struct SimhashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			blocks;
} SimhashGinOptions;

/* a query "within k bits of q", as planned for a given block layout */
typedef struct SimhashProbePlan
{
	simhash		query;
	int			max_distance;
	int			nblocks;
	int			radius[SIMHASH_GIN_MAX_BLOCKS];
	uint64		query_block[SIMHASH_GIN_MAX_BLOCKS];
	int64		nprobes;
	bool		cheaper_to_scan;	/* probing costs more than a full scan */
	/* per probe key, filled by the GIN opclass: its block and distance */
	uint8		key_block[SIMHASH_GIN_MAX_PROBES];
	uint8		key_distance[SIMHASH_GIN_MAX_PROBES];
} SimhashProbePlan;

/* gin_cost.c */
extern void simhash_plan_probes(SimhashProbePlan *plan, simhash query, int k, int nblocks);
extern bool simhash_gin_slower_than_packed_scan(int k, int nblocks);
extern bool simhash_gin_slower_than_heap_scan(int k, int nblocks);

#endif							/* SIMHASH_GIN_PLAN_H */
