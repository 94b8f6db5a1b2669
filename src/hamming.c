/*
 * hamming.c
 *	  The handler of the "hamming" index access method: its properties and
 *	  entry points (layout and design in hamming.h).
 */
#include "hamming.h"

#include "commands/vacuum.h"

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
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	am->amkeytype = InvalidOid;

	am->ambuild = hamming_build;
	am->ambuildempty = hamming_build_empty;
	am->aminsert = hamming_insert;
	am->ambulkdelete = hamming_bulk_delete;
	am->amvacuumcleanup = hamming_vacuum_cleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = hamming_cost_estimate;
	am->amoptions = hamming_options;
	am->amproperty = NULL;
	am->ambuildphasename = hamming_build_phase_name;
	am->amvalidate = hamming_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = hamming_begin_scan;
	am->amrescan = hamming_rescan;
	am->amgettuple = hamming_get_tuple;
	am->amgetbitmap = hamming_get_bitmap;
	am->amendscan = hamming_end_scan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
