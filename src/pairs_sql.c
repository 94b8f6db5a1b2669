/*
 * pairs_sql.c
 *	  Batch near-duplicate detection over the rows of a query, the SQL
 *	  functions on top of the engine of pairs.h: simhash_pairs() (every pair
 *	  of rows within k bits), simhash_clusters() (the connected components of
 *	  those pairs) and simhash_dedup() (keep the smallest id, drop later rows
 *	  within k bits of a kept one).
 *
 * Each has a verified form (a min_similarity, and a body as the query's third
 * column): the pairs within k bits are candidates, and only those whose
 * bodies have a shingle similarity of at least min_similarity (verify.c)
 * count as pairs; the clusters and the kept rows are then made of those, by
 * the same code.  A verified form does not collapse identical fingerprints,
 * since their bodies may differ.
 */
#include "pairs.h"
#include "verify.h"

#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplesort.h"

/* ---- simhash_pairs ---- */

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
 * similarity.
 */
static void
pairs_run(PairsState *st, VerifyState *vs, FunctionCallInfo fcinfo,
		  PairsCallback emit, VerifyPairFn vemit, void *arg)
{
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

	pairs_begin(&st, fcinfo, "simhash_pairs", false, verified);
	pairs_run(&st, vs, fcinfo, pairs_put_pair, verify_put_pair, fcinfo->resultinfo);
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

static Datum
clusters_function(FunctionCallInfo fcinfo, bool verified)
{
	VerifyState *vs = pairs_verification(fcinfo, verified);
	PairsState	st;
	ClustersState cs;

	pairs_begin(&st, fcinfo, "simhash_clusters", !verified, verified);
	cs.st = &st;
	cs.nodes = pairs_id_map(&st, "simhash_clusters nodes", sizeof(ClusterNode));
	cs.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	pairs_run(&st, vs, fcinfo, cluster_union, cluster_union_verified, &cs);
	pairs_for_each_row(&st, cluster_put_row, &cs);
	pairs_end(&st);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(simhash_clusters);
Datum
simhash_clusters(PG_FUNCTION_ARGS)
{
	return clusters_function(fcinfo, false);
}

PG_FUNCTION_INFO_V1(simhash_clusters_verified);
Datum
simhash_clusters_verified(PG_FUNCTION_ARGS)
{
	return clusters_function(fcinfo, true);
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

static Datum
dedup_function(FunctionCallInfo fcinfo, bool verified)
{
	VerifyState *vs = pairs_verification(fcinfo, verified);
	PairsState	st;
	DedupState	ds;
	TupleDesc	desc;
	AttrNumber	columns[2] = {1, 2};
	Oid			operators[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};
	MemoryContext old;

	pairs_begin(&st, fcinfo, "simhash_dedup", !verified, verified);

	old = MemoryContextSwitchTo(st.cxt);
	desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(desc, 1, "id_b", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "id_a", INT8OID, -1, 0);
	ds.slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	ds.sort = tuplesort_begin_heap(desc, 2, columns, operators, collations, nulls_first,
								   work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	ds.st = &st;
	ds.dropped = pairs_id_map(&st, "simhash_dedup dropped ids", sizeof(DedupEntry));
	ds.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	pairs_run(&st, vs, fcinfo, dedup_put_pair, dedup_put_pair_verified, &ds);
	dedup_decide(&ds);
	pairs_for_each_row(&st, dedup_put_row, &ds);
	ExecDropSingleTupleTableSlot(ds.slot);
	pairs_end(&st);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(simhash_dedup);
Datum
simhash_dedup(PG_FUNCTION_ARGS)
{
	return dedup_function(fcinfo, false);
}

PG_FUNCTION_INFO_V1(simhash_dedup_verified);
Datum
simhash_dedup_verified(PG_FUNCTION_ARGS)
{
	return dedup_function(fcinfo, true);
}
