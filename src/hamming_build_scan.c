/*
 * hamming_build_scan.c
 *	  The heap scan of a build (hamming_build.c, hamming128.c, and each
 *	  participant of a parallel build, hamming_build_parallel.c):
 *	  each row's entries into the sort, the TIDs of NULLs kept apart; and
 *	  what a row's key makes entries of (hamming_row_fingerprints, also for
 *	  inserts and the check): its fingerprint, or the distinct quarters of
 *	  its text's 256-bit fingerprint.
 */
#include "hamming.h"
#include "neardup_key.h"
#include "shingle_set.h"

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
	data = neardup_key_text(value, index->rd_opcintype[0] != TEXTOID, &len, &v);
	has = shingle_text_quarters(data, len, fps);
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

/* a build's heap scan: each row's entries to the sink */
typedef struct BuildScanState
{
	const HammingEntrySink *sink;
	double		indtuples;
} BuildScanState;

static void
scan_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *arg)
{
	BuildScanState *state = (BuildScanState *) arg;
	uint64		fps[HAMMING_MAX_ROW_ENTRIES];
	int			n = hamming_row_fingerprints(index, values[0], isnull[0], fps);
	int			i;

	state->indtuples += Max(n, 1);	/* entries, as VACUUM counts them */
	if (n == 0)
		state->sink->add(state->sink->arg, index, true, NULL, tid);
	for (i = 0; i < n; i++)
		state->sink->add(state->sink->arg, index, false, &fps[i], tid);
}

/* a row of an index of simhash128: one entry, its key or NULL */
static void
scan_callback128(Relation index, ItemPointer tid, Datum *values, bool *isnull,
				 bool tupleIsAlive, void *arg)
{
	BuildScanState *state = (BuildScanState *) arg;

	state->indtuples++;
	state->sink->add(state->sink->arg, index, isnull[0],
					 isnull[0] ? NULL : DatumGetPointer(values[0]), tid);
}

/*
 * The entries of a heap scan to sink: of the whole table (scan NULL), or of
 * a participant's share of a parallel scan; progress: report the blocks
 * scanned.  Returns the heap's tuples, adds the index's entries to
 * *indtuples.
 */
double
hamming_build_scan_into(Relation heap, Relation index, IndexInfo *indexInfo, TableScanDesc scan,
						bool progress, const HammingEntrySink *sink, double *indtuples)
{
	BuildScanState state;
	double		reltuples;

	state.sink = sink;
	state.indtuples = 0;
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   hamming_index_is_wide(index) ? scan_callback128 : scan_callback,
									   (void *) &state, scan);
	*indtuples += state.indtuples;
	return reltuples;
}

/* the sink of a build with probe tables: entries sorted, the TIDs of NULLs kept for the tail */
typedef struct SortSink
{
	HammingSort *sort;
	HammingTids *nulls;
} SortSink;

static void
sort_sink_add(void *arg, Relation index, bool isnull, const void *key, ItemPointer tid)
{
	SortSink   *s = (SortSink *) arg;

	if (isnull)
	{
		hamming_tids_add(s->nulls, tid);
		return;
	}
	if (hamming_sort_count(s->sort) >= PG_UINT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("hamming index \"%s\" cannot hold more than %u entries in its probe tables",
						RelationGetRelationName(index), PG_UINT32_MAX - 1),
				 errhint("Create it WITH (probe_tables = off), or partition the table.")));
	hamming_sort_add(s->sort, *(const uint64 *) key, tid);
}

/* the sorts of a build of budget bytes: a sixteenth for NULL TIDs, 6 bytes each, the rest for the entries */
void
hamming_build_sorts(Size budget, HammingSort **sort, HammingTids **nulls)
{
	*sort = hamming_sort_begin(budget / 16 * 15, false);
	*nulls = hamming_tids_begin(budget / 16);
}

/* the entries of a heap scan into sort and nulls (as hamming_build_scan_into) */
double
hamming_build_scan(Relation heap, Relation index, IndexInfo *indexInfo, TableScanDesc scan,
				   bool progress, HammingSort *sort, HammingTids *nulls, double *indtuples)
{
	SortSink	s;
	HammingEntrySink sink;

	s.sort = sort;
	s.nulls = nulls;
	sink.add = sort_sink_add;
	sink.arg = &s;
	return hamming_build_scan_into(heap, index, indexInfo, scan, progress, &sink, indtuples);
}
