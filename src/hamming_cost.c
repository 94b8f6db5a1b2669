/*
 * hamming_cost.c
 *	  The planner's cost of a "hamming" index scan (hamming_cost_estimate),
 *	  from the work model of hamming_work.c, which each scan also uses to
 *	  choose between probing the tables and a pass.
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
#include "strategy.h"
#include "support.h"
#include "hamming.h"
#include "neardup.h"
#include "settings.h"

#include <math.h>

#include "access/genam.h"
#include "catalog/pg_opfamily.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"

#define HAMMING_ENTRY_COST_FRACTION 0.1

/*
 * The smallest radius among the scan's conditions, as far as the planner
 * knows; of an index of text, the largest radius in a quarter of the
 * fingerprint of the first condition (the one the scan probes for)
 */
static int
planned_radius(PlannerInfo *root, IndexPath *path, bool text)
{
	IndexOptInfo *index = path->indexinfo;
	int			k = SIMHASH_BITS;
	ListCell   *lc;

	if (text)
	{
		IndexClause *iclause = linitial_node(IndexClause, path->indexclauses);
		RestrictInfo *rinfo = linitial_node(RestrictInfo, iclause->indexquals);
		OpExpr	   *op = (OpExpr *) rinfo->clause;
		Node	   *arg = IsA(op, OpExpr) && list_length(op->args) == 2 ?
			estimate_expression_value(root, lsecond(op->args)) : NULL;
		bool		is_doc = IsA(op, OpExpr) &&
			get_op_opfamily_strategy(op->opno, index->opfamily[0]) == SIMHASH_STRATEGY_IN_BALL;

		int			radii[NEARDUP_QUARTERS];

		neardup_quarter_radii(arg != NULL && IsA(arg, Const) && !((Const *) arg)->constisnull ?
							  neardup_query_radius(((Const *) arg)->constvalue, is_doc) :
							  neardup_radius(simhash_similarity_threshold), radii);
		return radii[NEARDUP_QUARTERS - 1];
	}

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
	bool		text = get_typlen(index->opcintype[0]) == -1;
	int			nqueries = text ? NEARDUP_QUARTERS : 1;
	double		returned;
	Cost		pass;
	Selectivity sel;
	HammingTables tables;
	Relation	rel;

	rel = index_open(index->indexoid, NoLock);
	hamming_describe_tables(rel, &tables);
	index_close(rel, NoLock);
	if (tables.ntables > 0)
	{
		/* a pass reads table 0 (and its NULL pages) and the tail */
		pages = Max(tables.pass_pages + hamming_tail_pages(&tables), 1);
	}

	sel = clauselist_selectivity(root, quals, index->rel->relid, JOIN_INNER, NULL);
	CLAMP_PROBABILITY(sel);
	/* an index of text has four entries a row */
	returned = clamp_row_est(sel * entries / nqueries);
	pass = pages * seq_page_cost + entries * HAMMING_ENTRY_COST_FRACTION * cpu_operator_cost;

	if (path->indexorderbys == NIL)
	{
		Cost		scan = pass;

		if (quals != NIL && tables.ntables > 0)
		{
			int			k = planned_radius(root, path, text);
			double		table_pass = hamming_pass_work(tables.table0_pages, tables.nsorted);
			double		tail_pass = hamming_pass_work(Max(pages - tables.table0_pages, 0),
													  Max(entries - tables.nsorted, 0));

			if (hamming_probe_pays(&tables, k, nqueries, 0, 0))
				scan = pass * (hamming_probe_work(&tables, k, nqueries) + tail_pass) / (table_pass + tail_pass);
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
