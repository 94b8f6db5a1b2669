/*
 * pairs_share.c
 *	  simhash_pairs_share(): one share of the tables (or bands) of
 *	  simhash_pairs(), for spreading one enumeration over several nodes.
 *
 * The plan of simhash_pairs() depends only on the rows read, the distance and
 * simhash.pairs_recall, and each pair is emitted by the first table on which
 * it agrees.  So when every node reads the same rows, the node that
 * enumerates the tables t with (t - 1) % shares = share emits exactly the
 * pairs whose first table is one of those: the shares are disjoint and
 * together they are simhash_pairs() of the rows.  The distributed
 * simhash_mark_duplicates() runs one share on each worker of a Citus cluster.
 */
#include "pairs.h"

#include "utils/builtins.h"
#include "utils/guc.h"

PG_FUNCTION_INFO_V1(simhash_pairs_share);
Datum
simhash_pairs_share(PG_FUNCTION_ARGS)
{
	float8		recall = PG_GETARG_FLOAT8(2);
	int32		share = PG_GETARG_INT32(3);
	int32		shares = PG_GETARG_INT32(4);
	int			nestlevel;
	PairsState	st;

	if (shares < 1 || share < 0 || share >= shares)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("share %d of %d does not exist", share, shares),
				 errhint("shares is at least 1, and share is between 0 and shares - 1.")));
	/* the recall as simhash.pairs_recall, for this call only (checked there) */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("simhash.pairs_recall", psprintf("%.17g", recall),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	pairs_begin(&st, fcinfo, "simhash_pairs_share", false, false);
	st.share = share;
	st.shares = shares;
	pairs_enumerate(&st, pairs_put_pair, fcinfo->resultinfo);
	pairs_end(&st);
	AtEOXact_GUC(true, nestlevel);
	return (Datum) 0;
}
