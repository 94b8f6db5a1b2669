/*
 * pairs_sql.c
 *	  Batch near-duplicate detection over the rows of a query, the SQL
 *	  functions on top of the engine of pairs.h: simhash_pairs() (every pair
 *	  of rows within k bits), simhash_pairs_share() (one share of its tables,
 *	  for several nodes), simhash_clusters() (the connected components of
 *	  those pairs) and simhash_dedup() (keep the smallest id, drop later rows
 *	  within k bits of a kept one).
 *
 * Each has a verified form (a min_similarity, and a body as the query's third
 * column): the pairs within k bits are candidates, and only those whose
 * bodies have a shingle similarity of at least min_similarity (verify.c)
 * count as pairs; the clusters and the kept rows are then made of those, by
 * the same code.  A verified form does not collapse identical fingerprints,
 * since their bodies may differ.  A call begins by reading its query and
 * planning the tables (pairs_begin) and ends by freeing what it holds; on a
 * query of a Citus distributed table, the pairs come from the workers
 * instead (pairs_citus.c).  simhash_link() links rows and pairs that a query
 * gives with the same code.
 */
#include "pairs_citus.h"
#include "ball.h"
#include "verify.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"

/* ---- simhash_pairs ---- */

/* ---- a call's beginning and end ---- */

/*
 * runs the query (argument 0, with a body column when with_body), checks the
 * ids, collapses identical fingerprints when asked and plans the tables for
 * the distance of argument 1; with distribute, a query of a Citus distributed
 * table is only checked here, and run on the workers by pairs_run()
 */
static void
pairs_begin(PairsState *st, FunctionCallInfo fcinfo, const char *fname, bool collapse,
			bool with_body, bool distribute)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		k = PG_GETARG_INT32(1);

	/* not negative here, up to the width once the query's columns are known */
	if (k < 0)
		simhash_check_distance(k);
	InitMaterializedSRF(fcinfo, 0);

	memset(st, 0, sizeof(PairsState));
	st->fname = fname;
	st->collapse = collapse;
	st->with_body = with_body;
	st->may_distribute = distribute;
	st->fn_oid = fcinfo->flinfo->fn_oid;
	st->max_distance = k;
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash pairs", ALLOCSET_DEFAULT_SIZES);
	st->budget = (Size) work_mem * 1024;
	st->next_notice = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PAIRS_NOTICE_INTERVAL_MS);

	pairs_read_query(st, query);
	if (st->citus_tables != (Datum) 0)
		return;
	if (st->file == NULL)
	{
		st->scratch_len = st->nrows;
		st->scratch = pairs_resize(st, NULL, Max(st->scratch_len, 1));
	}
	pairs_check_ids(st);
	if (collapse)
		pairs_collapse(st);
	pairs_plan(st);
}

static void
pairs_end(PairsState *st)
{
	if (st->file != NULL)
		BufFileClose(st->file);
	if (st->links_file != NULL)
		BufFileClose(st->links_file);
	MemoryContextDelete(st->cxt);
}


static void
pairs_put_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(distance);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The verification of a verified form (arguments 2, 3 and 4: min_similarity,
 * shingle, units), or NULL; checked before the query runs.
 */
static VerifyState *
pairs_verification(FunctionCallInfo fcinfo, bool verified)
{
	if (!verified)
		return NULL;
	return verify_begin(PG_GETARG_FLOAT8(2), PG_GETARG_INT32(3), PG_GETARG_TEXT_PP(4));
}

/*
 * Every pair within k bits to emit(id_a, id_b, distance, arg); verified (vs),
 * every such pair whose bodies are similar enough to vemit, with their
 * similarity.  On the Citus workers for a query of a distributed table, and
 * then with rows, the rows come to the coordinator for pairs_for_each_row().
 */
static void
pairs_run(PairsState *st, VerifyState *vs, FunctionCallInfo fcinfo, bool rows,
		  PairsCallback emit, VerifyPairFn vemit, void *arg)
{
	if (st->citus_tables != (Datum) 0)
	{
		pairs_citus_run(st, fcinfo, vs, !rows ? "pairs" : st->collapse ? "collapse" : "rows", emit, vemit, arg);
		if (vs != NULL)
			verify_end(vs);
		return;
	}
	if (vs == NULL)
	{
		pairs_enumerate(st, emit, arg);
		return;
	}
	pairs_enumerate(st, verify_add_pair, vs);
	verify_read_rows(vs, text_to_cstring(PG_GETARG_TEXT_PP(0)), st->words == 4 ? 4 : 3);
	verify_for_each(vs, vemit, arg);
	verify_end(vs);
}

static Datum
pairs_function(FunctionCallInfo fcinfo, bool verified)
{
	VerifyState *vs = pairs_verification(fcinfo, verified);
	PairsState	st;

	pairs_begin(&st, fcinfo, "simhash_pairs", false, verified, true);
	pairs_run(&st, vs, fcinfo, false, pairs_put_pair, verify_put_pair, fcinfo->resultinfo);
	pairs_end(&st);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(simhash_pairs);
Datum
simhash_pairs(PG_FUNCTION_ARGS)
{
	return pairs_function(fcinfo, false);
}

PG_FUNCTION_INFO_V1(simhash_pairs_verified);
Datum
simhash_pairs_verified(PG_FUNCTION_ARGS)
{
	return pairs_function(fcinfo, true);
}

/*
 * simhash_pairs_share(): one share of the tables (or bands) of
 * simhash_pairs(), for spreading one enumeration over several nodes.
 *
 * The plan of simhash_pairs() depends only on the rows read, the distance and
 * simhash.pairs_recall, and each pair is emitted by the first table on which
 * it agrees.  So when every node reads the same rows, the node that
 * enumerates the tables t with (t - 1) % shares = share emits exactly the
 * pairs whose first table is one of those: the shares are disjoint and
 * together they are simhash_pairs() of the rows.  The distributed
 * simhash_mark_duplicates() runs one share on each worker of a Citus cluster.
 */
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
	pairs_begin(&st, fcinfo, "simhash_pairs_share", false, false, false);
	st.share = share;
	st.shares = shares;
	pairs_enumerate(&st, pairs_put_pair, fcinfo->resultinfo);
	pairs_end(&st);
	AtEOXact_GUC(true, nestlevel);
	return (Datum) 0;
}

/*
 * ---- simhash_clusters: union-find over the representatives found in pairs;
 * a link belongs to the cluster of its representative ----
 */

typedef struct ClusterNode
{
	int64		id;				/* hash key */
	int64		parent;			/* the root is the smallest id of its set */
} ClusterNode;

typedef struct ClustersState
{
	PairsState *st;
	HTAB	   *nodes;
	ReturnSetInfo *rsinfo;
} ClustersState;

static int64
cluster_root(HTAB *nodes, int64 id)
{
	int64		root = id;
	ClusterNode *node;

	while ((node = hash_search(nodes, &root, HASH_FIND, NULL)) != NULL &&
		   node->parent != root)
		root = node->parent;
	/* path compression */
	while (id != root)
	{
		node = hash_search(nodes, &id, HASH_FIND, NULL);
		id = node->parent;
		node->parent = root;
	}
	return root;
}

static void
cluster_union(int64 id_a, int64 id_b, int distance, void *arg)
{
	ClustersState *cs = (ClustersState *) arg;
	int64		ids[2] = {id_a, id_b};
	int64		root_a;
	int64		root_b;
	int			i;

	for (i = 0; i < 2; i++)
	{
		bool		found;
		ClusterNode *node = pairs_map_enter(cs->st, cs->nodes, ids[i], &found);

		if (!found)
			node->parent = ids[i];
	}
	root_a = cluster_root(cs->nodes, id_a);
	root_b = cluster_root(cs->nodes, id_b);
	if (root_a != root_b)
	{
		int64		child = Max(root_a, root_b);
		ClusterNode *node = hash_search(cs->nodes, &child, HASH_FIND, NULL);

		node->parent = Min(root_a, root_b);
	}
}

static void
cluster_put_row(int64 id, int64 rep, void *arg)
{
	ClustersState *cs = (ClustersState *) arg;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(cluster_root(cs->nodes, rep));
	tuplestore_putvalues(cs->rsinfo->setResult, cs->rsinfo->setDesc, values, nulls);
}

static void
cluster_union_verified(int64 id_a, int64 id_b, int distance, double similarity, void *arg)
{
	cluster_union(id_a, id_b, distance, arg);
}

/* the union-find of a call */
static void
clusters_begin(ClustersState *cs, PairsState *st, FunctionCallInfo fcinfo)
{
	cs->st = st;
	cs->nodes = pairs_id_map(st, "simhash_clusters nodes", sizeof(ClusterNode));
	cs->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
}

/* every row to the result, with the smallest id of its cluster */
static void
clusters_end(ClustersState *cs)
{
	pairs_for_each_row(cs->st, cluster_put_row, cs);
}

/*
 * ---- simhash_dedup: greedy over the pairs of representatives sorted by
 * (id_b, id_a) ----
 *
 * A link has the fingerprint of its representative, a smaller id: it is
 * dropped as a duplicate of the representative when that is kept, else of
 * the same kept id as the representative (that is the smallest kept id within
 * k bits of their fingerprint: a smaller one would have dropped the
 * representative, and kept ids between the two are larger).
 */

typedef struct DedupEntry
{
	int64		id;				/* hash key: a dropped representative */
	int64		duplicate_of;	/* the smallest kept id within k bits */
} DedupEntry;

typedef struct DedupState
{
	PairsState *st;
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	HTAB	   *dropped;
	ReturnSetInfo *rsinfo;
} DedupState;

static void
dedup_put_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	DedupState *ds = (DedupState *) arg;
	TupleTableSlot *slot = ds->slot;

	ExecClearTuple(slot);
	slot->tts_values[0] = Int64GetDatum(id_b);
	slot->tts_values[1] = Int64GetDatum(id_a);
	slot->tts_isnull[0] = false;
	slot->tts_isnull[1] = false;
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(ds->sort, slot);
}

/*
 * Ids are decided in ascending order: id_b is dropped as a duplicate of the
 * smallest id_a that is kept.  An id_a < id_b was decided before id_b, since
 * its own pairs (where it is id_b) sort first.
 */
static void
dedup_decide(DedupState *ds)
{
	bool		isnull;

	tuplesort_performsort(ds->sort);
	while (tuplesort_gettupleslot(ds->sort, true, false, ds->slot, NULL))
	{
		int64		id_b = DatumGetInt64(slot_getattr(ds->slot, 1, &isnull));
		int64		id_a = DatumGetInt64(slot_getattr(ds->slot, 2, &isnull));
		DedupEntry *entry;
		bool		found;

		CHECK_FOR_INTERRUPTS();
		if (hash_search(ds->dropped, &id_b, HASH_FIND, NULL) != NULL ||
			hash_search(ds->dropped, &id_a, HASH_FIND, NULL) != NULL)
			continue;
		entry = pairs_map_enter(ds->st, ds->dropped, id_b, &found);
		entry->duplicate_of = id_a;
	}
	tuplesort_end(ds->sort);
}

static void
dedup_put_row(int64 id, int64 rep, void *arg)
{
	DedupState *ds = (DedupState *) arg;
	DedupEntry *entry = hash_search(ds->dropped, &rep, HASH_FIND, NULL);
	Datum		values[2];
	bool		nulls[2] = {false, entry == NULL && id == rep};

	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(entry != NULL ? entry->duplicate_of : rep);
	tuplestore_putvalues(ds->rsinfo->setResult, ds->rsinfo->setDesc, values, nulls);
}

static void
dedup_put_pair_verified(int64 id_a, int64 id_b, int distance, double similarity, void *arg)
{
	dedup_put_pair(id_a, id_b, distance, arg);
}

/* the sort of the pairs by (id_b, id_a) and the dropped ids of a call */
static void
dedup_begin(DedupState *ds, PairsState *st, FunctionCallInfo fcinfo)
{
	TupleDesc	desc;
	AttrNumber	columns[2] = {1, 2};
	Oid			operators[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(desc, 1, "id_b", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "id_a", INT8OID, -1, 0);
	ds->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	ds->sort = tuplesort_begin_heap(desc, 2, columns, operators, collations, nulls_first,
									work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	ds->st = st;
	ds->dropped = pairs_id_map(st, "simhash_dedup dropped ids", sizeof(DedupEntry));
	ds->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
}

/* the kept rows decided, every row to the result */
static void
dedup_end(DedupState *ds)
{
	dedup_decide(ds);
	pairs_for_each_row(ds->st, dedup_put_row, ds);
	ExecDropSingleTupleTableSlot(ds->slot);
}

/* simhash_clusters() (center false) or simhash_dedup(), verified or not */
static Datum
linkage_function(FunctionCallInfo fcinfo, bool verified, bool center)
{
	VerifyState *vs = pairs_verification(fcinfo, verified);
	PairsState	st;
	ClustersState cs;
	DedupState	ds;

	pairs_begin(&st, fcinfo, center ? "simhash_dedup" : "simhash_clusters", !verified, verified, true);
	if (center)
	{
		dedup_begin(&ds, &st, fcinfo);
		pairs_run(&st, vs, fcinfo, true, dedup_put_pair, dedup_put_pair_verified, &ds);
		dedup_end(&ds);
	}
	else
	{
		clusters_begin(&cs, &st, fcinfo);
		pairs_run(&st, vs, fcinfo, true, cluster_union, cluster_union_verified, &cs);
		clusters_end(&cs);
	}
	pairs_end(&st);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(simhash_clusters);
Datum
simhash_clusters(PG_FUNCTION_ARGS)
{
	return linkage_function(fcinfo, false, false);
}

PG_FUNCTION_INFO_V1(simhash_clusters_verified);
Datum
simhash_clusters_verified(PG_FUNCTION_ARGS)
{
	return linkage_function(fcinfo, true, false);
}

PG_FUNCTION_INFO_V1(simhash_dedup);
Datum
simhash_dedup(PG_FUNCTION_ARGS)
{
	return linkage_function(fcinfo, false, true);
}

PG_FUNCTION_INFO_V1(simhash_dedup_verified);
Datum
simhash_dedup_verified(PG_FUNCTION_ARGS)
{
	return linkage_function(fcinfo, true, true);
}

/*
 * simhash_query_on_workers(query): whether the whole-table functions run
 * the query on the Citus workers (pairs_citus_tables)
 */
PG_FUNCTION_INFO_V1(simhash_query_on_workers);
Datum
simhash_query_on_workers(PG_FUNCTION_ARGS)
{
	SPIPlanPtr	plan;
	bool		on_workers;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(text_to_cstring(PG_GETARG_TEXT_PP(0)), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	on_workers = pairs_citus_tables(plan, CurrentMemoryContext) != (Datum) 0;
	SPI_finish();
	PG_RETURN_BOOL(on_workers);
}

/*
 * ---- simhash_link: the linkage of given rows and pairs ----
 *
 * simhash_link(query, linkage): the query returns every row as (id, id,
 * NULL, NULL) and every pair as (id_a < id_b, distance, similarity), as
 * simhash_query_distributed() does; the result is simhash_clusters()'s
 * (linkage 'single') or simhash_dedup()'s ('center') over them.  The forms
 * with a rank run it on a Citus distributed table: the pairs found on the
 * workers by their ids, numbered on the coordinator in (rank, id) order.
 */
PG_FUNCTION_INFO_V1(simhash_link);
Datum
simhash_link(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *linkage = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		center = strcmp(linkage, "center") == 0;
	PairsState	st;
	ClustersState cs;
	DedupState	ds;
	SPIPlanPtr	plan;
	TupleDesc	desc;

	if (!center && strcmp(linkage, "single") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized linkage: \"%s\"", linkage),
				 errhint("The linkage is 'single' or 'center'.")));
	InitMaterializedSRF(fcinfo, 0);
	memset(&st, 0, sizeof(PairsState));
	st.fname = "simhash_link";
	st.fn_oid = fcinfo->flinfo->fn_oid;
	st.cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash link", ALLOCSET_DEFAULT_SIZES);
	st.budget = (Size) work_mem * 1024;
	st.words = 1;
	st.width = SIMHASH_BITS;
	st.row_size = sizeof(PairsRow);
	st.rows_len = 1024;
	st.rows = pairs_resize(&st, NULL, st.rows_len);
	st.next_notice = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PAIRS_NOTICE_INTERVAL_MS);
	if (center)
		dedup_begin(&ds, &st, fcinfo);
	else
		clusters_begin(&cs, &st, fcinfo);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = verify_prepare_query(query, "query must return four columns: id_a bigint, id_b bigint, distance integer, similarity float8",
								NULL, &desc, NULL);
	if (desc->natts != 4 || TupleDescAttr(desc, 0)->atttypid != INT8OID || TupleDescAttr(desc, 1)->atttypid != INT8OID ||
		TupleDescAttr(desc, 2)->atttypid != INT4OID || TupleDescAttr(desc, 3)->atttypid != FLOAT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return four columns: id_a bigint, id_b bigint, distance integer, similarity float8")));
	if (center)
		pairs_read_linked(&st, plan, NULL, NULL, dedup_put_pair, NULL, &ds);
	else
		pairs_read_linked(&st, plan, NULL, NULL, cluster_union, NULL, &cs);
	SPI_finish();
	if (center)
		dedup_end(&ds);
	else
		clusters_end(&cs);
	pairs_end(&st);
	return (Datum) 0;
}

/*
 * ---- the forms with a linkage or a key: simhash_clusters, simhash_dedup and
 * simhash_lineage with a linkage, and the _keyed forms ----
 *
 * Each runs the PL/pgSQL function simhash_keyed(anyelement, ...), which reads
 * the query's shape, numbers its rows when needed and runs the engines above.
 * It is called here by its OID, the one function of that name and signature
 * in the extension's schema, and not by a call in SQL: in such a call, a
 * function that someone who may create functions in the schema put beside it,
 * with the key's exact type instead of anyelement, would be chosen instead.
 */

/* what simhash_keyed() is asked: from the name and arguments of the form */
typedef struct KeyedCall
{
	const char *what;			/* "pairs", "clusters", "dedup", "lineage" */
	int			first;			/* the query's argument: 1 with a key, else 0 */
	bool		verified;		/* a min_similarity after max_distance */
	bool		linkage;		/* a linkage: all but the pairs */
} KeyedCall;

static KeyedCall
keyed_call(FunctionCallInfo fcinfo)
{
	char	   *name = get_func_name(fcinfo->flinfo->fn_oid);
	KeyedCall	call;
	int			rest;

	call.first = strstr(name, "_keyed") != NULL ? 1 : 0;
	call.what = strncmp(name, "simhash_pairs", 13) == 0 ? "pairs" :
		strncmp(name, "simhash_clusters", 16) == 0 ? "clusters" :
		strncmp(name, "simhash_dedup", 13) == 0 ? "dedup" : "lineage";
	call.linkage = strcmp(call.what, "pairs") != 0;
	/* the arguments after the key: query, max_distance[, min_similarity][, linkage][, shingle, units] */
	rest = PG_NARGS() - call.first;
	call.verified = rest >= (call.linkage ? 6 : 5);
	pfree(name);
	return call;
}

PG_FUNCTION_INFO_V1(simhash_keyed_form);
Datum
simhash_keyed_form(PG_FUNCTION_ARGS)
{
	KeyedCall	call = keyed_call(fcinfo);
	Oid			key_type = call.first ? get_fn_expr_argtype(fcinfo->flinfo, 0) : INT8OID;
	Oid			argtypes[9] = {ANYELEMENTOID, TEXTOID, TEXTOID, INT4OID, FLOAT8OID, TEXTOID, INT4OID, TEXTOID, BOOLOID};
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			helper;
	List	   *args = NIL;
	FuncExpr   *expr;
	FmgrInfo	flinfo;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ReturnSetInfo hrsinfo;
	TupleDesc	hdesc;
	TupleTableSlot *slot;
	int			a = call.first;
	int			i;

	LOCAL_FCINFO(hfcinfo, 9);

	if (!OidIsValid(key_type))
		elog(ERROR, "could not determine the type of the key");
	helper = LookupFuncName(list_make2(makeString(get_namespace_name(nsp)), makeString("simhash_keyed")),
							9, argtypes, false);
	for (i = 0; i < 9; i++)
		args = lappend(args, makeNullConst(i == 0 ? key_type : argtypes[i], -1,
										   i == 0 ? get_typcollation(key_type) :
										   argtypes[i] == TEXTOID ? DEFAULT_COLLATION_OID : InvalidOid));
	expr = makeFuncExpr(helper, RECORDOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	expr->funcretset = true;
	if (get_expr_result_type((Node *) expr, NULL, &hdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "simhash_keyed must return a row type");

	InitMaterializedSRF(fcinfo, 0);
	fmgr_info(helper, &flinfo);
	flinfo.fn_expr = (Node *) expr;
	memset(&hrsinfo, 0, sizeof(hrsinfo));
	hrsinfo.type = T_ReturnSetInfo;
	hrsinfo.econtext = rsinfo->econtext;
	hrsinfo.expectedDesc = hdesc;
	hrsinfo.allowedModes = (int) SFRM_Materialize;
	hrsinfo.returnMode = SFRM_Materialize;
	InitFunctionCallInfoData(*hfcinfo, &flinfo, 9, PG_GET_COLLATION(), NULL, (Node *) &hrsinfo);

	/* key, what, query, max_distance, min_similarity, linkage, shingle, units, ordered */
	for (i = 0; i < 9; i++)
		hfcinfo->args[i].isnull = true;
	if (call.first)
		hfcinfo->args[0] = fcinfo->args[0];
	hfcinfo->args[1].value = CStringGetTextDatum(call.what);
	hfcinfo->args[1].isnull = false;
	hfcinfo->args[2] = fcinfo->args[a];
	hfcinfo->args[3] = fcinfo->args[a + 1];
	if (call.verified)
	{
		/* a NULL min_similarity: no rows, as the strict forms */
		hfcinfo->args[4] = fcinfo->args[a + 2];
		if (PG_ARGISNULL(a + 2))
			hfcinfo->args[2].isnull = true;
		if (call.linkage)
			hfcinfo->args[5] = fcinfo->args[a + 3];
		hfcinfo->args[6] = fcinfo->args[a + (call.linkage ? 4 : 3)];
		hfcinfo->args[7] = fcinfo->args[a + (call.linkage ? 5 : 4)];
	}
	else
	{
		if (call.linkage)
			hfcinfo->args[5] = fcinfo->args[a + 2];
		hfcinfo->args[6].value = Int32GetDatum(3);
		hfcinfo->args[6].isnull = false;
		hfcinfo->args[7].value = CStringGetTextDatum("words");
		hfcinfo->args[7].isnull = false;
	}
	hfcinfo->args[8].value = BoolGetDatum(call.first == 1);
	hfcinfo->args[8].isnull = false;

	(void) FunctionCallInvoke(hfcinfo);
	if (hrsinfo.setResult == NULL)
		return (Datum) 0;
	if (hrsinfo.returnMode != SFRM_Materialize)
		elog(ERROR, "simhash_keyed did not return a materialized set");

	/* the form's columns are the first ones of simhash_keyed's */
	slot = MakeSingleTupleTableSlot(hrsinfo.setDesc, &TTSOpsMinimalTuple);
	while (tuplestore_gettupleslot(hrsinfo.setResult, true, false, slot))
	{
		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, slot->tts_values, slot->tts_isnull);
	}
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(hrsinfo.setResult);
	return (Datum) 0;
}
