/*
 * hamming_cost.c
 *	  Cost model of the "hamming" access method, used twice: by the planner
 *	  (hamming_cost_estimate) and by each scan, which probes the tables only
 *	  when hamming_probe_pays().
 *
 *	  Work, in microseconds of this machine (1M random fingerprints, all in
 *	  shared buffers, test/bench/bench_index.sh):
 *	  - a pass reads every page of table 0 and of the tail: per page a buffer
 *	    access, per entry an XOR and a popcount;
 *	  - probes of "within k bits" read, in each table j, every directory
 *	    bucket within r_j bits of the query (hamming_table_radii), each a
 *	    directory read and a page access, and test every entry there; each
 *	    row found in tables 1..3 is looked up in table 0.
 *	  A radius scan that probes reads the tail too, so the tail does not
 *	  enter its choice; an ordered scan reads the tail once for all its
 *	  rings of probes, and each of its passes reads it again.
 *
 *	  The planner's cost of a pass is its pages at seq_page_cost and its
 *	  entries at a tenth of cpu_operator_cost (ten times cheaper than calling
 *	  the operator's function on a heap row, as a sequential scan does); a
 *	  scan that probes costs that pass times the ratio of the works.  An
 *	  ordered scan makes one pass and, for all of its rows, one more pass
 *	  each time the batch (HAMMING_PAGE_CAPACITY rows, then eight times more
 *	  each pass, up to work_mem) runs out; its rings of probes make the first rows cheaper
 *	  than that.  Its first pass comes before its first row, but it is
 *	  charged as run cost, not startup cost: the planner prices "LIMIT n" as
 *	  the startup cost plus n/N of the rest, and it prices a GiST ordered scan
 *	  (the other index that can serve "ORDER BY fp <~> q") with almost no
 *	  startup cost, although on random fingerprints that scan visits most of
 *	  its tree before its first row.  Charged honestly, the pass made the
 *	  planner pick the GiST scan for "LIMIT 10", 81x slower
 *	  (test/bench/bench_index.sh).
 */
#include "mih.h"
#include "strategy.h"
#include "support.h"
#include "hamming.h"

#include <math.h>

#include "access/genam.h"
#include "catalog/pg_opfamily.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#define HAMMING_ENTRY_COST_FRACTION 0.1

/* work in microseconds */
#define WORK_PAGE			0.3		/* a buffer access */
#define WORK_PASS_ENTRY		0.002	/* XOR and popcount in a page loop */
#define WORK_BUCKET			0.6		/* a directory read and a page access */
#define WORK_PROBE_ENTRY	0.006	/* an entry of a probed bucket */
#define WORK_ROW			0.5		/* a row found, with its lookup in table 0 */

double
hamming_pass_work(double pages, double entries)
{
	return pages * WORK_PAGE + entries * WORK_PASS_ENTRY;
}

double
hamming_probe_work(const HammingTables *tables, int k)
{
	int			radius[HAMMING_NTABLES];
	int			dir_bits = tables->dir_bits;
	double		bucket_rows = ldexp((double) tables->nsorted, -dir_bits);
	double		work = 0;
	int			j;

	k = Min(k, SIMHASH_BITS);
	if (k < 0)
		return 0;
	hamming_table_radii(radius, k);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		double		buckets;

		if (radius[j] < 0)
			continue;
		buckets = simhash_probe_count(dir_bits, Min(radius[j], dir_bits));
		work += buckets * (WORK_BUCKET + bucket_rows * WORK_PROBE_ENTRY);
	}
	return work + tables->nsorted * simhash_random_within_fraction(k) * WORK_ROW;
}

/*
 * Are probes of the tables for "within k bits" cheaper than a pass?  A pass
 * reads table 0 and the tail; tail_pages and tail_entries are the part of
 * the tail that the probes' caller does not read again for them: none for a
 * radius scan (it reads the tail after its probes, as a pass would), all of
 * it for the rings of an ordered scan (it reads the tail once, each pass
 * reads it again).
 */
bool
hamming_probe_pays(const HammingTables *tables, int k, double tail_pages, double tail_entries)
{
	return tables->ntables > 0 &&
		hamming_probe_work(tables, k) <
		hamming_pass_work(tables->table0_pages + tail_pages, tables->nsorted + tail_entries);
}

/* the smallest radius among the scan's conditions, as far as the planner knows */
static int
planned_radius(PlannerInfo *root, IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	int			k = SIMHASH_BITS;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			OpExpr	   *op = (OpExpr *) rinfo->clause;
			int			strategy;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2)
				continue;
			strategy = get_op_opfamily_strategy(op->opno, index->opfamily[0]);
			if (strategy == SIMHASH_STRATEGY_EQUAL)
				k = 0;
			else if (strategy == SIMHASH_STRATEGY_SIMILAR)
			{
				Relation	rel = index_open(index->indexoid, NoLock);

				k = Min(k, hamming_similar_radius(rel));
				index_close(rel, NoLock);
			}
			else if (strategy == SIMHASH_STRATEGY_IN_BALL)
				k = Min(k, simhash_estimated_distance(root, lsecond(op->args), op->opfuncid));
		}
	}
	return k;
}

void
hamming_cost_estimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	List	   *quals = get_quals_from_indexclauses(path->indexclauses);
	double		pages = Max(index->pages, 2) - 1;	/* all but the metapage */
	double		entries = Max(index->tuples, 0.0);
	double		returned;
	Cost		pass;
	Selectivity sel;
	HammingTables tables;
	Relation	rel;

	rel = index_open(index->indexoid, NoLock);
	hamming_read_tables(rel, &tables);
	index_close(rel, NoLock);
	if (tables.ntables > 0)
	{
		/* a pass reads table 0 and the tail */
		pages -= tables.tail_start - (tables.table_start[0] + tables.table0_pages);
		pages = Max(pages, 1);
	}

	sel = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);
	CLAMP_PROBABILITY(sel);
	returned = clamp_row_est(sel * entries);
	pass = pages * seq_page_cost + entries * HAMMING_ENTRY_COST_FRACTION * cpu_operator_cost;

	if (path->indexorderbys == NIL)
	{
		Cost		scan = pass;

		if (quals != NIL && tables.ntables > 0)
		{
			int			k = planned_radius(root, path);
			double		table_pass = hamming_pass_work(tables.table0_pages, tables.nsorted);
			double		tail_pass = hamming_pass_work(Max(pages - tables.table0_pages, 0),
													  Max(entries - tables.nsorted, 0));

			if (hamming_probe_pays(&tables, k, 0, 0))
				scan = pass * (hamming_probe_work(&tables, k) + tail_pass) / (table_pass + tail_pass);
		}
		*indexStartupCost = 0;
		*indexTotalCost = scan + returned * cpu_index_tuple_cost;
		*indexPages = pages;
	}
	else
	{
		double		passes = 1;
		double		batch = HAMMING_PAGE_CAPACITY;
		double		covered = batch;
		double		max_batch = hamming_hits_limit();

		/* batches grow eightfold up to work_mem, then stay */
		while (covered < returned && batch < max_batch)
		{
			batch = Min(batch * 8, max_batch);
			covered += batch;
			passes++;
		}
		if (covered < returned)
			passes += ceil((returned - covered) / max_batch);
		*indexStartupCost = 0;
		*indexTotalCost = passes * pass + returned * cpu_index_tuple_cost;
		*indexPages = pages;
	}
	*indexSelectivity = sel;
	*indexCorrelation = 0;
}
