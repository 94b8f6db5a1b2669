/*
 * hamming_handler.c
 *	  The handler of the "hamming" index access method: its properties and
 *	  entry points (layout and design in hamming.h).
 */
#include "hamming.h"

#include "access/relscan.h"
#include "commands/vacuum.h"
#include "utils/lsyscache.h"

/*
 * An index of simhash128 (a 16-byte key) has its own layout, hamming128.c:
 * each entry point goes to the one of the index's width
 * (hamming_index_is_wide).
 */
static IndexBuildResult *
build_any(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (hamming_index_is_wide(index))
		return hamming128_build(heap, index, indexInfo);
	return hamming_build(heap, index, indexInfo);
}

static bool
insert_any(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid, Relation heapRel,
		   IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo)
{
	if (hamming_index_is_wide(index))
		return hamming128_insert(index, values, isnull, ht_ctid);
	return hamming_insert(index, values, isnull, ht_ctid, heapRel, checkUnique, indexUnchanged,
						  indexInfo);
}

static IndexBulkDeleteResult *
bulk_delete_any(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	if (hamming_index_is_wide(info->index))
		return hamming128_bulk_delete(info, stats, callback, callback_state);
	return hamming_bulk_delete(info, stats, callback, callback_state);
}

static IndexBulkDeleteResult *
vacuum_cleanup_any(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (hamming_index_is_wide(info->index))
		return hamming128_vacuum_cleanup(info, stats);
	return hamming_vacuum_cleanup(info, stats);
}

static void
cost_estimate_any(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation, double *indexPages)
{
	if (get_typlen(path->indexinfo->opcintype[0]) == 16)
		hamming128_cost_estimate(root, path, loop_count, indexStartupCost, indexTotalCost,
								 indexSelectivity, indexCorrelation, indexPages);
	else
		hamming_cost_estimate(root, path, loop_count, indexStartupCost, indexTotalCost,
							  indexSelectivity, indexCorrelation, indexPages);
}

static IndexScanDesc
begin_scan_any(Relation index, int nkeys, int norderbys)
{
	if (hamming_index_is_wide(index))
		return hamming128_begin_scan(index, nkeys, norderbys);
	return hamming_begin_scan(index, nkeys, norderbys);
}

static void
rescan_any(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	if (hamming_index_is_wide(scan->indexRelation))
		hamming128_rescan(scan, keys, nkeys, orderbys, norderbys);
	else
		hamming_rescan(scan, keys, nkeys, orderbys, norderbys);
}

static bool
get_tuple_any(IndexScanDesc scan, ScanDirection dir)
{
	if (hamming_index_is_wide(scan->indexRelation))
		return hamming128_get_tuple(scan, dir);
	return hamming_get_tuple(scan, dir);
}

static int64
get_bitmap_any(IndexScanDesc scan, TIDBitmap *tbm)
{
	if (hamming_index_is_wide(scan->indexRelation))
		return hamming128_get_bitmap(scan, tbm);
	return hamming_get_bitmap(scan, tbm);
}

static void
end_scan_any(IndexScanDesc scan)
{
	if (hamming_index_is_wide(scan->indexRelation))
		hamming128_end_scan(scan);
	else
		hamming_end_scan(scan);
}

PG_FUNCTION_INFO_V1(hamming_handler);
Datum
hamming_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = HAMMING_NSTRATEGIES;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;	/* NULL fingerprints are indexed too */
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
#if PG_VERSION_NUM >= 170000
	am->amcanbuildparallel = true;	/* parallel workers for CREATE INDEX (hamming_build_parallel.c) */
#endif
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = true;	/* merges in the cleanup sort within it */
	am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	am->amkeytype = InvalidOid;

	am->ambuild = build_any;
	am->ambuildempty = hamming_build_empty;
	am->aminsert = insert_any;
	am->ambulkdelete = bulk_delete_any;
	am->amvacuumcleanup = vacuum_cleanup_any;
	am->amcanreturn = NULL;
	am->amcostestimate = cost_estimate_any;
	am->amoptions = hamming_options;
	am->amproperty = NULL;
	am->ambuildphasename = hamming_build_phase_name;
	am->amvalidate = hamming_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = begin_scan_any;
	am->amrescan = rescan_any;
	am->amgettuple = get_tuple_any;
	am->amgetbitmap = get_bitmap_any;
	am->amendscan = end_scan_any;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
