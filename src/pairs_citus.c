/*
 * pairs_citus.c
 *	  simhash_pairs(), simhash_clusters() and simhash_dedup() (and every form
 *	  built on them) on a query of a Citus distributed table: the rows stay
 *	  on the workers, which find the pairs and verify them, and the
 *	  coordinator receives only the (verified) pairs and, for the linkage,
 *	  each row's id.
 *
 * The query is prepared and its shape checked as on one server (pairs_query.c);
 * when it reads a table that Citus distributes (by hash, range or append: not
 * a reference table nor a Citus local table), and this node is the
 * coordinator of a transaction that may write, the PL/pgSQL function
 * simhash_query_distributed() runs the pipeline in distributed statements and
 * returns the rows with their representatives (the smallest id of their
 * fingerprint when identical fingerprints are collapsed), then the pairs.
 * The pairs go to the same callbacks as the engine's, and the rows become the
 * rows and links that pairs_for_each_row() reports, so the linkage is the
 * code of one server (simhash_link() reads rows and pairs of the same form
 * from any query).  The pairs equal those of one server: the workers run
 * the shares of the same plan (simhash_pairs_share()) over the same rows.
 *
 * simhash_verify_sets() is the verification on a worker, in the distributed
 * calls' last step (simhash_dist_verify()): the shingle sets of the worker's
 * pairs, read once each and held in memory when maintenance_work_mem holds
 * them (else joined with each pair), and its pairs compared.
 */
#include "pairs_citus.h"
#include "shingle_set.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

/* ---- the pipeline on the workers ---- */

typedef struct CitusReceiver
{
	DestReceiver pub;
	PairsState *st;
	VerifyState *vs;
	PairsCallback emit;
	VerifyPairFn vemit;
	void	   *arg;
} CitusReceiver;

/* a row that shares the fingerprint of rep, a smaller id */
static void
pairs_citus_link(PairsState *st, int64 id, int64 rep)
{
	if (st->nlinks == st->links_len)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		st->links_len = Max(st->links_len * 2, 1024);
		st->links = st->links == NULL ? palloc_extended(st->links_len * sizeof(PairsLink), MCXT_ALLOC_HUGE) :
			repalloc_huge(st->links, st->links_len * sizeof(PairsLink));
		MemoryContextSwitchTo(old);
	}
	st->links[st->nlinks].id = id;
	st->links[st->nlinks].rep = rep;
	st->nlinks++;
}

/*
 * A row of simhash_query_distributed(): a pair (id_a, id_b, distance,
 * similarity) to the callbacks, (distance NULL) a row (id, its
 * representative) to the rows or the links, or (distance -1) the id of more
 * than one row.
 */
static bool
pairs_citus_receive(TupleTableSlot *slot, DestReceiver *self)
{
	CitusReceiver *r = (CitusReceiver *) self;
	bool		isnull;
	int64		a;
	int64		b;
	Datum		distance;

	CHECK_FOR_INTERRUPTS();
	slot_getallattrs(slot);
	if (slot->tts_isnull[0] || slot->tts_isnull[1])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the query of %s returned a NULL id", r->st->fname),
				 errdetail("Each row of the query is a row (id, id, NULL, NULL) or a pair (id_a, id_b, distance, similarity) of ids that are not NULL.")));
	a = DatumGetInt64(slot->tts_values[0]);
	b = DatumGetInt64(slot->tts_values[1]);
	distance = slot_getattr(slot, 3, &isnull);
	if (!isnull && DatumGetInt32(distance) >= 0 && a >= b)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the query of %s returned a pair (%lld, %lld) whose first id is not the smaller",
						r->st->fname, (long long) a, (long long) b),
				 errdetail("A pair is (id_a, id_b, distance, similarity) with id_a < id_b.")));
	if (!isnull && DatumGetInt32(distance) < 0)
		pairs_duplicate_id(r->st, a);
	if (!isnull)
	{
		if (r->vs != NULL)
			r->vemit(a, b, DatumGetInt32(distance), DatumGetFloat8(slot->tts_values[3]), r->arg);
		else
			r->emit(a, b, DatumGetInt32(distance), r->arg);
		return true;
	}
	if (a == b)
	{
		uint64		words[PAIRS_MAX_WORDS] = {0};

		pairs_add_row(r->st, a, words);
	}
	else
		pairs_citus_link(r->st, a, b);
	return true;
}

static void
pairs_citus_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
pairs_citus_nothing(DestReceiver *self)
{
}

/*
 * Runs the prepared plan (with params, or NULL) of a query that returns
 * (id_a, id_b, distance, similarity) as simhash_query_distributed() does:
 * every pair to emit (or, with vs, vemit) with arg, every row into st's rows
 * or links, for pairs_for_each_row()
 */
void
pairs_read_linked(PairsState *st, SPIPlanPtr plan, ParamListInfo params, VerifyState *vs,
				  PairsCallback emit, VerifyPairFn vemit, void *arg)
{
	SPIExecuteOptions options;
	CitusReceiver receiver;
	int			rc;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = pairs_citus_receive;
	receiver.pub.rStartup = pairs_citus_startup;
	receiver.pub.rShutdown = pairs_citus_nothing;
	receiver.pub.rDestroy = pairs_citus_nothing;
	receiver.pub.mydest = DestNone;
	receiver.st = st;
	receiver.vs = vs;
	receiver.emit = emit;
	receiver.vemit = vemit;
	receiver.arg = arg;
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.dest = &receiver.pub;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));

	/* the rows as pairs_for_each_row() reads them: in memory, or the file */
	st->ninput = st->ntotal + st->nlinks;
	if (st->file != NULL)
	{
		BufFileWrite(st->file, st->rows, st->nrows * st->row_size);
		st->nrows = 0;
		st->scratch = st->rows;
		st->scratch_len = st->rows_len;
	}
}

/*
 * Runs simhash_query_distributed() for the call of fcinfo (its query, max
 * distance and, verified, min_similarity, shingle and units), rows 'pairs',
 * 'rows' or 'collapse': every pair to emit (or, verified, vemit) with arg;
 * with rows, every row with a fingerprint into st's rows, and with
 * 'collapse', a row that shares the fingerprint of a smaller id as a link to
 * the smallest, as pairs_collapse() leaves them.
 */
void
pairs_citus_run(PairsState *st, FunctionCallInfo fcinfo, VerifyState *vs, const char *rows,
				PairsCallback emit, VerifyPairFn vemit, void *arg)
{
	char	   *nsp = get_namespace_name(get_func_namespace(st->fn_oid));
	Oid			argtypes[10] = {TEXTOID, OIDARRAYOID, REGTYPEOID, INT4OID, INT4OID,
	FLOAT8OID, INT4OID, TEXTOID, REGTYPEOID, TEXTOID};
	Datum		values[10];
	bool		nulls[10] = {false};
	ParamListInfo params = makeParamList(10);
	SPIPlanPtr	plan;
	int			i;

	values[0] = PG_GETARG_DATUM(0);
	values[1] = st->citus_tables;
	values[2] = ObjectIdGetDatum(st->id_type);
	values[3] = Int32GetDatum(st->words);
	values[4] = Int32GetDatum(st->max_distance);
	if (vs != NULL)
	{
		values[5] = PG_GETARG_DATUM(2);
		values[6] = PG_GETARG_DATUM(3);
		values[7] = PG_GETARG_DATUM(4);
		values[8] = ObjectIdGetDatum(st->body_type);
	}
	else
		nulls[5] = nulls[6] = nulls[7] = nulls[8] = true;
	values[9] = CStringGetTextDatum(rows);
	for (i = 0; i < 10; i++)
	{
		params->params[i].value = values[i];
		params->params[i].isnull = nulls[i];
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = argtypes[i];
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* by its schema and exact argument types: no other function can take its place */
	plan = SPI_prepare(psprintf("SELECT * FROM %s.simhash_query_distributed($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
								quote_identifier(nsp)), 10, argtypes);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	pairs_read_linked(st, plan, params, vs, emit, vemit, arg);
	SPI_finish();
}

/* ---- the verification on a worker ---- */

/* the pairs read from the cursor at a time */
#define VERIFY_FETCH 10000

/* a set's row: its ctid, and its place in the rows of the sets */
typedef struct VerifyRow
{
	ItemPointerData tid;
	uint64		i;
} VerifyRow;

static int
verify_row_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) &((const VerifyRow *) a)->tid, (ItemPointer) &((const VerifyRow *) b)->tid);
}

/* the place in the sets of the row whose ctid is in column col of a pair, checked */
static uint64
verify_find(HeapTuple pair, TupleDesc desc, int col, const VerifyRow *rows, uint64 nsets)
{
	bool		isnull;
	Datum		tid = SPI_getbinval(pair, desc, col, &isnull);
	VerifyRow	key;
	const VerifyRow *found = NULL;

	if (!isnull)
	{
		ItemPointerCopy((ItemPointer) DatumGetPointer(tid), &key.tid);
		found = bsearch(&key, rows, nsets, sizeof(VerifyRow), verify_row_cmp);
	}
	if (found == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a pair of simhash_verify_sets names a row that is not in its sets"),
				 errdetail("A pair is (tid_a, tid_b, d): the ctids of two rows of the sets.")));
	return found->i;
}

/*
 * The memory that holding the sets of sets_query takes: each set as it is
 * read and detoasted, and a row's bookkeeping
 */
static double
verify_sets_bytes(const char *sets_query)
{
	char	   *q = psprintf("SELECT 2 * COALESCE(pg_catalog.sum(pg_catalog.pg_column_size(x.s)), 0)::pg_catalog.float8 "
							 "OPERATOR(pg_catalog.+) %d * pg_catalog.count(*) FROM (%s) AS x(t, k, r, s)",
							 (int) (sizeof(VerifyRow) + 2 * sizeof(void *) + 64), sets_query);
	bool		isnull;
	double		bytes;

	if (SPI_execute(q, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(SPI_result));
	bytes = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	pfree(q);
	return bytes;
}

/*
 * The verification of the pairs by a join of the pairs with their two sets
 * (the sets read again for each pair, the join spilling beyond work_mem),
 * for sets that maintenance_work_mem cannot hold, into rsinfo's tuplestore
 */
static void
verify_by_join(ReturnSetInfo *rsinfo, const char *sets_query, const char *pairs_query, float8 min_similarity,
			   Oid fn_oid)
{
	char	   *q = psprintf("SELECT a.k, a.r, b.k, b.r, p.d, v.similarity FROM (%1$s) AS p(tid_a, tid_b, d) "
							 "JOIN (%2$s) AS a(t, k, r, s) ON a.t OPERATOR(pg_catalog.=) p.tid_a "
							 "JOIN (%2$s) AS b(t, k, r, s) ON b.t OPERATOR(pg_catalog.=) p.tid_b "
							 "CROSS JOIN LATERAL (SELECT %3$s.shingle_similarity(a.s, b.s) AS similarity) AS v "
							 "WHERE v.similarity OPERATOR(pg_catalog.>=) $1",
							 pairs_query, sets_query, quote_identifier(get_namespace_name(get_func_namespace(fn_oid))));
	Oid			argtypes[1] = {FLOAT8OID};
	Datum		args[1];
	Portal		portal;

	elog(DEBUG1, "simhash_verify_sets: the sets over maintenance_work_mem, the pairs verified by a join");
	args[0] = Float8GetDatum(min_similarity);
	portal = SPI_cursor_open_with_args(NULL, q, 1, argtypes, args, NULL, true, 0);
	for (;;)
	{
		uint64		p;

		SPI_cursor_fetch(portal, true, VERIFY_FETCH);
		if (SPI_processed == 0)
			break;
		for (p = 0; p < SPI_processed; p++)
		{
			Datum		values[6];
			bool		nulls[6];
			int			col;

			CHECK_FOR_INTERRUPTS();
			for (col = 0; col < 6; col++)
				values[col] = SPI_getbinval(SPI_tuptable->vals[p], SPI_tuptable->tupdesc, col + 1, &nulls[col]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
}

/*
 * simhash_verify_sets(sets_query, pairs_query, min_similarity, key, rank):
 * the verification of the pairs of one worker, in memory.  sets_query gives
 * the rows (ctid, k, r, s) of the worker: a row's ctid, its key, what the
 * pairs carry of it (the rank) and its shingle set; pairs_query the pairs
 * (tid_a, tid_b, d): the ctids of their two rows, read in the same snapshot,
 * and their distance.  Returns the pairs (ka, ra, kb, rb, d, similarity)
 * whose sets have a shingle_similarity of at least min_similarity.  Each set
 * is read and detoasted once, when a pair first needs it, and stays in
 * memory; the pairs are read a batch at a time.  key and rank are NULLs of
 * the types of k and r.
 */
PG_FUNCTION_INFO_V1(simhash_verify_sets);
Datum
simhash_verify_sets(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sets_query;
	char	   *pairs_query;
	float8		min_similarity;
	SPITupleTable *sets;
	uint64		nsets;
	uint64		i;
	VerifyRow  *rows;
	int64	  **elems;
	Size	   *counts;
	Portal		portal;
	int			col;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the queries and min_similarity of simhash_verify_sets must not be NULL")));
	sets_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	pairs_query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	min_similarity = PG_GETARG_FLOAT8(2);
	InitMaterializedSRF(fcinfo, 0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the sets in memory when maintenance_work_mem holds them, else a join */
	if (verify_sets_bytes(sets_query) > (double) maintenance_work_mem * 1024)
	{
		verify_by_join(rsinfo, sets_query, pairs_query, min_similarity, fcinfo->flinfo->fn_oid);
		SPI_finish();
		return (Datum) 0;
	}
	if (SPI_execute(sets_query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(SPI_result));
	sets = SPI_tuptable;
	nsets = SPI_processed;
	if (sets->tupdesc->natts != 4 || SPI_gettypeid(sets->tupdesc, 1) != TIDOID ||
		SPI_gettypeid(sets->tupdesc, 4) != INT8ARRAYOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the sets of simhash_verify_sets are not rows (ctid, k, r, s) with a bigint[] s")));
	/* k and r: of the types of key and rank, as the result's columns */
	for (col = 2; col <= 3; col++)
		if (getBaseType(SPI_gettypeid(sets->tupdesc, col)) != getBaseType(TupleDescAttr(rsinfo->setDesc, col - 2)->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the sets of simhash_verify_sets has type %s, not %s", col,
							format_type_be(SPI_gettypeid(sets->tupdesc, col)),
							format_type_be(TupleDescAttr(rsinfo->setDesc, col - 2)->atttypid))));
	rows = palloc_extended(Max(nsets, 1) * sizeof(VerifyRow), MCXT_ALLOC_HUGE);
	elems = palloc_extended(Max(nsets, 1) * sizeof(int64 *), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	counts = palloc_extended(Max(nsets, 1) * sizeof(Size), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (i = 0; i < nsets; i++)
	{
		bool		isnull;
		Datum		tid = SPI_getbinval(sets->vals[i], sets->tupdesc, 1, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a row of the sets of simhash_verify_sets has a NULL ctid")));
		ItemPointerCopy((ItemPointer) DatumGetPointer(tid), &rows[i].tid);
		rows[i].i = i;
	}
	qsort(rows, nsets, sizeof(VerifyRow), verify_row_cmp);

	portal = SPI_cursor_open_with_args(NULL, pairs_query, 0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		uint64		p;

		SPI_cursor_fetch(portal, true, VERIFY_FETCH);
		if (SPI_processed == 0)
			break;
		if (SPI_tuptable->tupdesc->natts != 3 || SPI_gettypeid(SPI_tuptable->tupdesc, 1) != TIDOID ||
			SPI_gettypeid(SPI_tuptable->tupdesc, 2) != TIDOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the pairs of simhash_verify_sets are not rows (tid_a, tid_b, d)")));
		for (p = 0; p < SPI_processed; p++)
		{
			HeapTuple	pair = SPI_tuptable->vals[p];
			uint64		ab[2];
			int			side;
			double		similarity;

			CHECK_FOR_INTERRUPTS();
			ab[0] = verify_find(pair, SPI_tuptable->tupdesc, 1, rows, nsets);
			ab[1] = verify_find(pair, SPI_tuptable->tupdesc, 2, rows, nsets);
			for (side = 0; side < 2; side++)
			{
				bool		isnull;
				Datum		set;

				if (elems[ab[side]] != NULL)
					continue;
				set = SPI_getbinval(sets->vals[ab[side]], sets->tupdesc, 4, &isnull);
				if (isnull)
					ereport(ERROR,
							(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							 errmsg("a set of simhash_verify_sets is NULL")));
				elems[ab[side]] = shingle_set_elements(DatumGetArrayTypeP(set), &counts[ab[side]], "a set");
			}
			similarity = shingle_sorted_jaccard(elems[ab[0]], counts[ab[0]], elems[ab[1]], counts[ab[1]]);
			if (similarity >= min_similarity)
			{
				Datum		values[6];
				bool		nulls[6];

				for (side = 0; side < 2; side++)
				{
					values[2 * side] = SPI_getbinval(sets->vals[ab[side]], sets->tupdesc, 2, &nulls[2 * side]);
					values[2 * side + 1] = SPI_getbinval(sets->vals[ab[side]], sets->tupdesc, 3, &nulls[2 * side + 1]);
				}
				values[4] = SPI_getbinval(pair, SPI_tuptable->tupdesc, 3, &nulls[4]);
				values[5] = Float8GetDatum(similarity);
				nulls[5] = false;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	return (Datum) 0;
}
