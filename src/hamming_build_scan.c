/*
 * hamming_build_scan.c
 *	  The heap scan of a build that writes probe tables (hamming_build.c,
 *	  and each participant of a parallel build, hamming_build_parallel.c):
 *	  each row's entries into the sort, the TIDs of NULLs kept apart; and
 *	  what a row's key makes entries of (hamming_row_fingerprints, also for
 *	  inserts and the check): its fingerprint, or the distinct quarters of
 *	  its text's 256-bit fingerprint.
 */
#include "hamming.h"
#include "neardup.h"
#include "shingle.h"

#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"

int
hamming_row_fingerprints(Relation index, Datum value, bool isnull, uint64 *fps)
{
	int			n = 0;
	int			i;
	int			j;
	struct varlena *v;
	const char *data;
	int			len;
	bool		has;

	if (isnull)
		return 0;
	if (!hamming_keeps_text(index))
	{
		fps[0] = DatumGetSimhash(value);
		return 1;
	}
	CHECK_FOR_INTERRUPTS();
	if (index->rd_opcintype[0] == TEXTOID)
	{
		v = PG_DETOAST_DATUM_PACKED(value);
		has = shingle_text_quarters(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), fps);
	}
	else
	{
		v = PG_DETOAST_DATUM(value);
		data = neardup_doc_data(v, &len);
		has = shingle_text_quarters(data, len, fps);
	}
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);				/* a build calls this for every row in one context */
	if (!has)
		return 0;
	/* each distinct quarter once: table 0 holds each (fingerprint, TID) once */
	for (i = 0; i < NEARDUP_QUARTERS; i++)
	{
		for (j = 0; j < n && fps[j] != fps[i]; j++)
			;
		if (j == n)
			fps[n++] = fps[i];
	}
	return n;
}

/* what a build's heap scan collects */
typedef struct BuildScanState
{
	HammingSort *sort;
	HammingTids *nulls;			/* to the tail, behind the tables */
	double		indtuples;
} BuildScanState;

static void
scan_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *arg)
{
	BuildScanState  *state = (BuildScanState *) arg;
	uint64		fps[HAMMING_MAX_ROW_ENTRIES];
	int			n = hamming_row_fingerprints(index, values[0], isnull[0], fps);
	int			i;

	state->indtuples += Max(n, 1);	/* entries, as VACUUM counts them */
	if (n == 0)
		hamming_tids_add(state->nulls, tid);
	for (i = 0; i < n; i++)
	{
		if (hamming_sort_count(state->sort) >= PG_UINT32_MAX - 1)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("hamming index \"%s\" cannot hold more than %u entries in its probe tables",
							RelationGetRelationName(index), PG_UINT32_MAX - 1),
					 errhint("Create it WITH (probe_tables = off), or partition the table.")));
		hamming_sort_add(state->sort, fps[i], tid);
	}
}

/* the sorts of a build of budget bytes: a sixteenth for NULL TIDs, 6 bytes each, the rest for the entries */
void
hamming_build_sorts(Size budget, HammingSort **sort, HammingTids **nulls)
{
	*sort = hamming_sort_begin(budget / 16 * 15, false);
	*nulls = hamming_tids_begin(budget / 16);
}

/*
 * The entries of a heap scan into sort and nulls: of the whole table (scan
 * NULL), or of a participant's share of a parallel scan; progress: report
 * the blocks scanned.  Returns the heap's tuples, adds the index's to
 * *indtuples.
 */
double
hamming_build_scan(Relation heap, Relation index, IndexInfo *indexInfo, TableScanDesc scan,
				   bool progress, HammingSort *sort, HammingTids *nulls, double *indtuples)
{
	BuildScanState  *state = palloc0(sizeof(BuildScanState));
	double		reltuples;

	state->sort = sort;
	state->nulls = nulls;
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   scan_callback, (void *) state, scan);
	*indtuples += state->indtuples;
	pfree(state);
	return reltuples;
}
