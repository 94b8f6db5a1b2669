/*
 * pairs_query.c
 *	  Reading the query of a whole-table function (see pairs.h): its shape
 *	  (an integer id and a simhash or simhash128), and its rows into memory,
 *	  or into the spill file once they outgrow work_mem (pairs_add_row); or,
 *	  when it reads a table that Citus distributes, the tables for the
 *	  pipeline on the workers (pairs_citus_tables, pairs_citus.c).
 */
#include "pairs.h"
#include "ball.h"
#include "verify.h"
#include "simhash128.h"

#include "access/xact.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "parser/parse_coerce.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/syscache.h"

/* rows of the query between two looks at the clock for a progress notice */
#define PAIRS_PROGRESS_ROWS		10000

/* registers of the distinct fingerprint estimate: 2^12, 1.6% standard error */
#define PAIRS_HLL_BWIDTH		12

/* ---- reading the query ---- */

/*
 * The shape of the query: an integer id, a simhash or simhash128 (or two
 * simhash128 columns: a 256-bit fingerprint, distances added), and the body
 * when verified.
 */
static void
pairs_check_columns(PairsState *st, TupleDesc desc)
{
	Oid			nsp = get_func_namespace(st->fn_oid);
	Oid			simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
											   CStringGetDatum("simhash"), ObjectIdGetDatum(nsp));
	Oid			simhash128_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
												  CStringGetDatum("simhash128"), ObjectIdGetDatum(nsp));
	int			natts;
	const char *shape;
	const char *write_it;
	Oid			fp_type;
	Oid			body_type;

	/* a second simhash128 after the first: the 256-bit form */
	st->words = 1;
	if (desc->natts >= 3 && OidIsValid(simhash128_type) &&
		getBaseType(TupleDescAttr(desc, 1)->atttypid) == simhash128_type &&
		getBaseType(TupleDescAttr(desc, 2)->atttypid) == simhash128_type)
		st->words = 4;
	natts = (st->with_body ? 3 : 2) + (st->words == 4 ? 1 : 0);
	if (st->words == 4)
	{
		shape = st->with_body ?
			"query must return four columns: a bigint id, two simhash128 values, and a text or a shingle set" :
			"query must return three columns: a bigint id and two simhash128 values";
		write_it = st->with_body ?
			"Write the query as SELECT id, fp, fp1, body FROM ..., fp and fp1 the two halves of a 256-bit fingerprint (for example shingle_simhash128(body, 3, 'words', 0) and (..., 1))." :
			"Write the query as SELECT id, fp, fp1 FROM ..., fp and fp1 the two halves of a 256-bit fingerprint.";
	}
	else
	{
		shape = st->with_body ?
			"query must return three columns: a bigint id, a simhash, and a text or a shingle set" :
			"query must return two columns: a bigint id and a simhash";
		write_it = st->with_body ?
			"Write the query as SELECT id, fingerprint, body FROM ... (or with shingle_set(body) stored in a bigint[] column instead of body)." :
			"Write the query as SELECT id, fingerprint FROM ...";
	}
	if (desc->natts != natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", shape),
				 errdetail_plural("The query returns %d column.",
								  "The query returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("%s", write_it)));
	st->id_type = getBaseType(TupleDescAttr(desc, 0)->atttypid);
	if (st->id_type != INT8OID && st->id_type != INT4OID && st->id_type != INT2OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", shape),
				 errdetail("The first column has type %s.",
						   format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("The id may be bigint, integer or smallint. For ids of another type, pass a NULL of that type to the keyed form: simhash_pairs_keyed(NULL::%s, query, ...), and so for clusters, dedup and lineage.",
						 format_type_be(TupleDescAttr(desc, 0)->atttypid))));
	fp_type = getBaseType(TupleDescAttr(desc, 1)->atttypid);
	if (fp_type != simhash_type && (fp_type != simhash128_type || !OidIsValid(fp_type)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", shape),
				 errdetail("The second column has type %s.",
						   format_type_be(TupleDescAttr(desc, 1)->atttypid)),
				 TypeCategory(fp_type) == TYPCATEGORY_STRING ?
				 errhint("Fingerprint the text in the query: SELECT id, simhash(body) FROM ...") :
				 errhint("Cast the fingerprint to simhash, for example fp::simhash.")));
	/* the width decides the rows' size and the largest distance */
	if (st->words == 1 && fp_type == simhash128_type)
		st->words = 2;
	st->width = st->words * SIMHASH_BITS;
	st->row_size = sizeof(PairsRow) + (st->words - 1) * sizeof(uint64);
	simhash_check_threshold("max_distance", st->max_distance, st->width);
	if (!st->with_body)
		return;
	body_type = TupleDescAttr(desc, natts - 1)->atttypid;
	st->body_type = getBaseType(body_type);
	if (!verify_body_type_ok(body_type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", shape),
				 errdetail("Column %d has type %s.", natts, format_type_be(body_type)),
				 errhint("%s " VERIFY_BODY_TYPES_HINT, write_it)));
}

/* ---- is the query one of a distributed table? ---- */

/* the relations of a query, its subqueries, CTEs and sublinks */
static bool
pairs_citus_relations(Node *node, List **relids)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			*relids = list_append_unique_oid(*relids, rte->relid);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, pairs_citus_relations, relids, QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, pairs_citus_relations, relids);
}

/*
 * Whether the prepared query (in the caller's SPI connection) runs on the
 * workers: it reads a table that Citus distributes, this node is Citus's
 * coordinator, the transaction may write (the intermediate results are
 * tables) and the caller may create tables in the schema of the first such
 * table.  If so, returns those tables, in the order of the query's range
 * tables, as an oid[] in cxt; else 0.
 */
Datum
pairs_citus_tables(SPIPlanPtr plan, MemoryContext cxt)
{
	List	   *relids = NIL;
	ListCell   *lc;
	Datum	   *oids;
	ArrayType  *array;
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		values[1];
	bool		isnull;
	int			i = 0;
	MemoryContext old;
	Datum		tables;

	if (!OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)) || XactReadOnly)
		return (Datum) 0;
	foreach(lc, SPI_plan_get_plan_sources(plan))
	{
		CachedPlanSource *source = (CachedPlanSource *) lfirst(lc);
		ListCell   *lq;

		foreach(lq, source->query_list)
			(void) pairs_citus_relations(lfirst(lq), &relids);
	}
	if (relids == NIL)
		return (Datum) 0;
	oids = palloc(list_length(relids) * sizeof(Datum));
	foreach(lc, relids)
		oids[i++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, i, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	if (SPI_execute_with_args("SELECT t.tables FROM (SELECT pg_catalog.array_agg(u.r ORDER BY u.o) AS tables "
							  "  FROM pg_catalog.unnest($1) WITH ORDINALITY AS u(r, o) "
							  "  JOIN pg_catalog.pg_dist_partition AS p ON p.logicalrelid OPERATOR(pg_catalog.=) u.r "
							  " WHERE p.partmethod OPERATOR(pg_catalog.<>) 'n') AS t "
							  "WHERE t.tables IS NOT NULL "
							  "  AND EXISTS (SELECT 1 FROM pg_catalog.pg_dist_local_group AS g WHERE g.groupid OPERATOR(pg_catalog.=) 0) "
							  "  AND pg_catalog.has_schema_privilege((SELECT c.relnamespace FROM pg_catalog.pg_class AS c "
							  "    WHERE c.oid OPERATOR(pg_catalog.=) t.tables[1]), 'CREATE')",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the Citus tables of the query");
	if (SPI_processed == 0)
		return (Datum) 0;
	array = DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	old = MemoryContextSwitchTo(cxt);
	tables = PointerGetDatum(DatumGetArrayTypePCopy(PointerGetDatum(array)));
	MemoryContextSwitchTo(old);
	return tables;
}


/* the DestReceiver of the query: rows go straight from the executor */
typedef struct PairsReceiver
{
	DestReceiver pub;
	PairsState *st;
	int64		rows;			/* received, NULL fingerprints too */
	bool		null_id;		/* the query stopped at a NULL id */
} PairsReceiver;

static bool
pairs_receive(TupleTableSlot *slot, DestReceiver *self)
{
	PairsReceiver *receiver = (PairsReceiver *) self;
	PairsState *st = receiver->st;
	bool		isnull;
	Datum		id = slot_getattr(slot, 1, &isnull);
	Datum		fp;
	Datum		fp1 = 0;
	uint64		words[PAIRS_MAX_WORDS];

	CHECK_FOR_INTERRUPTS();
	if (++receiver->rows % PAIRS_PROGRESS_ROWS == 0)
		pairs_progress(st);
	/* stops the query; the error is the call's, raised once it stopped */
	if (isnull)
	{
		receiver->null_id = true;
		return false;
	}
	fp = slot_getattr(slot, 2, &isnull);
	/* a 256-bit fingerprint is NULL when either of its columns is */
	if (!isnull && st->words == 4)
		fp1 = slot_getattr(slot, 3, &isnull);
	if (!isnull)
	{
		int64		row_id = st->id_type == INT8OID ? DatumGetInt64(id) :
			st->id_type == INT4OID ? DatumGetInt32(id) : DatumGetInt16(id);

		if (st->words == 1)
			words[0] = DatumGetSimhash(fp);
		else
		{
			words[0] = DatumGetSimhash128P(fp)->hi;
			words[1] = DatumGetSimhash128P(fp)->lo;
		}
		if (st->words == 4)
		{
			words[2] = DatumGetSimhash128P(fp1)->hi;
			words[3] = DatumGetSimhash128P(fp1)->lo;
		}
		pairs_add_row(st, row_id, words);
	}
	return true;
}

/*
 * Runs the query once, to completion, with parallel workers when PostgreSQL
 * plans it so (the fingerprints it computes are then computed by them), into
 * a receiver of our own that keeps each row's id and fingerprint in st->cxt
 * (or the spill file): SPI never holds the rows.  The columns are checked
 * before the query runs.
 */
void
pairs_read_query(PairsState *st, const char *query)
{
	PairsReceiver receiver;
	SPIPlanPtr	plan;
	TupleDesc	desc;

	st->ids_ascending = true;
	if (st->collapse)
	{
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		initHyperLogLog(&st->distinct, PAIRS_HLL_BWIDTH);
		MemoryContextSwitchTo(old);
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = verify_prepare_query(query,
								st->with_body ?
								"query must return three columns: a bigint id, a simhash, and a text or a shingle set" :
								"query must return two columns: a bigint id and a simhash",
								st->with_body ?
								"Write the query as SELECT id, fingerprint, body FROM ... (or with shingle_set(body) stored in a bigint[] column instead of body)." :
								"Write the query as SELECT id, fingerprint FROM ...", &desc, NULL);
	pairs_check_columns(st, desc);
	st->rows_len = 1024;
	st->rows = pairs_resize(st, NULL, st->rows_len);
	/* a query of a Citus distributed table: run later, on the workers */
	if (st->may_distribute && (st->citus_tables = pairs_citus_tables(plan, st->cxt)) != (Datum) 0)
	{
		SPI_finish();
		return;
	}

	receiver.pub.receiveSlot = pairs_receive;
	receiver.st = st;
	receiver.rows = 0;
	receiver.null_id = false;
	verify_run_query(plan, &receiver.pub);
	if (receiver.null_id)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query returned a NULL id"),
				 errhint("Every row needs an id; rows with a NULL fingerprint are skipped.")));
	SPI_finish();

	st->ninput = st->ntotal;
	if (st->file != NULL)
	{
		BufFileWrite(st->file, st->rows, st->nrows * st->row_size);
		st->nrows = 0;
		pairs_spill_layout(st);
	}
}
