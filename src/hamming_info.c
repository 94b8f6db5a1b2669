/*
 * hamming_info.c
 *	  hamming_index_info(regclass): what a "hamming" index holds, as its
 *	  metapage says (probe tables, tail, merges), for monitoring and for
 *	  deciding whether a VACUUM or a REINDEX would help.
 */
#include "hamming.h"

#include "access/htup_details.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"

PG_FUNCTION_INFO_V1(hamming_index_info);

Datum
hamming_index_info(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Oid			heapoid;
	Relation	index;
	TupleDesc	tupdesc;
	HammingTables tables;
	Buffer		metabuf;
	HammingMetaPageData *meta;
	Datum		values[8];
	bool		nulls[8];
	uint32		merges;
	bool		merging;
	bool		retired;
	int64		tail_entries = 0;
	BlockNumber pos;
	BlockNumber blkno;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* SELECT on the table, checked before the lock and after it */
	heapoid = hamming_index_table(indexoid, false);
	index = index_open(indexoid, AccessShareLock);
	if (hamming_index_table(indexoid, false) != heapoid ||
		index->rd_rel->relkind != RELKIND_INDEX || index->rd_indam->amvalidate != hamming_validate)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read temporary tables of other sessions")));

	hamming_describe_tables(index, &tables);
	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	meta = HammingPageGetMeta(BufferGetPage(metabuf));
	merges = meta->version >= 3 ? meta->gen : 0;
	merging = meta->version >= 3 && meta->merging;
	retired = meta->version >= 3 && meta->retired;
	UnlockReleaseBuffer(metabuf);

	for (pos = tables.pass_pages; hamming_pass_block(&tables, pos, &blkno); pos++)
	{
		Buffer		buffer = hamming_lock_page(index, blkno, BUFFER_LOCK_SHARE, NULL);
		Page		page = BufferGetPage(buffer);

		CHECK_FOR_INTERRUPTS();
		if (hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
			tail_entries += HammingPageGetOpaque(page)->nentries;
		UnlockReleaseBuffer(buffer);
	}

	memset(nulls, 0, sizeof(nulls));
	values[0] = BoolGetDatum(tables.ntables > 0);
	values[1] = Int64GetDatum(tables.nsorted);
	values[2] = Int64GetDatum(hamming_tail_pages(&tables));
	values[3] = Int64GetDatum(tail_entries);
	values[4] = Int64GetDatum(merges);
	values[5] = BoolGetDatum(merging);
	values[6] = BoolGetDatum(retired);
	values[7] = Int64GetDatum(tables.view_end);
	index_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
