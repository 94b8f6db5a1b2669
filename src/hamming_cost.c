/*
 * hamming_cost.c
 *	  Cost model of the "hamming" access method.  Every scan reads every
 *	  page in physical order (seq_page_cost each) and tests every entry with
 *	  one XOR and one popcount (a tenth of cpu_operator_cost: ten times
 *	  cheaper than calling the operator's function on a heap row, as a
 *	  sequential scan does), then returns the matching rows (selectivity from
 *	  the operators' estimators, cpu_index_tuple_cost each).  An ordered scan
 *	  makes one pass and, for all of its rows, one more pass each time the
 *	  batch (HAMMING_PAGE_CAPACITY rows, then eight times more each pass) runs
 *	  out.  Its first pass comes before its first row, but it is charged as
 *	  run cost, not startup cost: the planner prices "LIMIT n" as the startup
 *	  cost plus n/N of the rest, and it prices a GiST ordered scan (the other
 *	  index that can serve "ORDER BY fp <~> q") with almost no startup cost,
 *	  although on random fingerprints that scan visits most of its tree before
 *	  its first row.  Charged honestly, the pass made the planner pick the
 *	  GiST scan for "LIMIT 10", 81x slower (test/bench_index.sh).
 */
#include "hamming.h"

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

#define HAMMING_ENTRY_COST_FRACTION 0.1

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

	sel = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);
	CLAMP_PROBABILITY(sel);
	returned = clamp_row_est(sel * entries);
	pass = pages * seq_page_cost + entries * HAMMING_ENTRY_COST_FRACTION * cpu_operator_cost;

	if (path->indexorderbys == NIL)
	{
		/* rows come a page at a time, in physical order */
		*indexStartupCost = 0;
		*indexTotalCost = pass + returned * cpu_index_tuple_cost;
	}
	else
	{
		double		passes = 1;
		double		batch = HAMMING_PAGE_CAPACITY;
		double		covered = batch;

		while (covered < returned)
		{
			batch *= 8;
			covered += batch;
			passes++;
		}
		*indexStartupCost = 0;
		*indexTotalCost = passes * pass + returned * cpu_index_tuple_cost;
	}
	*indexSelectivity = sel;
	*indexCorrelation = 0;
	*indexPages = pages;
}
