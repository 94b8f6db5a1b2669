/*
 * radius.h
 *	  Radius searches ("within k bits of q"): the operator strategy numbers
 *	  shared by the GIN, GiST and hamming operator classes, the simhash_ball
 *	  type, the simhash.max_distance setting, and the GIN operator class
 *	  simhash_ops (option limits, and the probe plan shared by its support
 *	  functions, its cost model in gin_cost.c and the planner support).
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
#ifndef SIMHASH_RADIUS_H
#define SIMHASH_RADIUS_H

#include "simhash.h"

/* strategies of simhash_ops (GIN), simhash_gist_ops and simhash_hamming_ops */
#define SIMHASH_STRATEGY_IN_BALL	1	/* simhash <@ simhash_ball */
#define SIMHASH_STRATEGY_SIMILAR	2	/* simhash % simhash (GUC threshold) */
#define SIMHASH_STRATEGY_EQUAL		3	/* simhash = simhash */
#define SIMHASH_STRATEGY_NEAREST	4	/* ORDER BY simhash <-> simhash (GiST, hamming) */

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

/* a ball: every fingerprint within radius bits of center */
typedef struct SimhashBall
{
	simhash		center;
	int32		radius;
	int32		padding;
} SimhashBall;

#define BALL_MIN_RADIUS		(-1)	/* the empty ball */

#define DatumGetSimhashBallP(X)		((SimhashBall *) DatumGetPointer(X))
#define PG_GETARG_SIMHASH_BALL_P(n) DatumGetSimhashBallP(PG_GETARG_DATUM(n))

/*
 * default of simhash.max_distance: the best threshold of the default
 * features (shingles of 3, sublinear) on the evaluation corpus
 */
#define SIMHASH_DEFAULT_MAX_DISTANCE 9

extern int	simhash_max_distance_guc;

/* the % operator (similar.c): its threshold is fixed when a query is planned */
extern void simhash_similar_init(void);
extern void simhash_max_distance_assign(int newval, void *extra);
extern int	simhash_similar_threshold(void);

extern void simhash_check_distance(int32 k);

/* ball_io.c: the text form of a ball of bits-bit fingerprints */
extern bool simhash_read_ball_text(FunctionCallInfo fcinfo, const char *str, const char *typname,
								   int bits, const char *example, const char **center,
								   int32 *radius);

/* support.c: the radius an operand stands for, as far as the planner knows */
struct PlannerInfo;
struct Node;
extern int	simhash_estimated_distance(struct PlannerInfo *root, struct Node *node, Oid sibling);
extern double simhash_random_within_fraction(int k);
extern double simhash_random_within_fraction_of(int k, int bits);
extern int64 simhash_probe_count(int width, int r);
extern void simhash_spread_radii(int *radius, int nblocks, int total);

/* gin_cost.c */
extern void simhash_plan_probes(SimhashProbePlan *plan, simhash query, int k, int nblocks);
extern bool simhash_gin_slower_than_packed_scan(int k, int nblocks);
extern bool simhash_gin_slower_than_heap_scan(int k, int nblocks);

#endif							/* SIMHASH_RADIUS_H */
