/*
 * verify.c
 *	  The verification step of verified near-duplicates: candidate pairs
 *	  (from the pairs engine, or from a query for shingle_verify_pairs()) are
 *	  kept when the Jaccard similarity of their bodies' shingle sets is at
 *	  least min_similarity.
 *
 * The candidate pairs are collected first, then the rows (id, body) of a
 * query are read, and only the bodies of ids that are in a candidate pair are
 * tokenized, each once, into its sorted shingle set (jaccard.c); a body of
 * type bigint[] is such a set already, stored.  The sets are kept in memory
 * while they fit in work_mem, and go to a temporary file beyond it, so memory
 * holds the candidate pairs (20 bytes each), a hash table of their ids (about
 * 48 bytes each) and at most work_mem of sets; then every candidate pair
 * merges its two sets, in the order the pairs came.  The text is thus read
 * once and each candidate document tokenized once, whatever the number of
 * pairs it is in.  With enough texts to tokenize, parallel workers tokenize
 * them while the rows are read (verify_parallel.c); the sets, the pairs and
 * their order are the same.
 */
#include "verify.h"
#include "verify_parallel.h"

#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/clauses.h"
#include "storage/buffile.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

/* sets are kept in blocks of this size; a larger set in an allocation of its own */
#define VERIFY_ARENA_BLOCK	((Size) 1024 * 1024)

typedef struct VerifyPair
{
	int64		id_a;
	int64		id_b;
	int32		distance;
} VerifyPair;

/* an id of a candidate pair, and where its shingle set is: memory or the file */
typedef struct VerifyDoc
{
	int64		id;				/* hash key */
	bool		stored;			/* false: no row, or a NULL body */
	bool		queued;			/* handed to a parallel worker */
	int64	   *set;			/* in memory, or NULL: in the file */
	int			fileno;
	off_t		offset;
	Size		count;
} VerifyDoc;

struct VerifyState
{
	MemoryContext cxt;
	VerifyPair *pairs;
	int64		npairs;
	int64		pairs_len;
	HTAB	   *docs;
	BufFile    *file;
	Size		max_count;		/* the largest set in the file */
	Size		memory_left;	/* of work_mem, for sets in memory */
	char	   *arena;			/* the free part of the current block */
	Size		arena_left;
	VerifyWorkers *workers;		/* while the bodies are read, or NULL */
	double		min_similarity;
	Shingling	sh;
};

/*
 * Whether a body column of this type is read: text, varchar and char (whose
 * values are text's), or a stored shingle set (bigint[]).  Other types of
 * the string category (name, a fixed-size type; an extension's type) are not
 * laid out as text, so they are refused rather than misread.
 */
bool
verify_body_type_ok(Oid type)
{
	type = getBaseType(type);
	return type == TEXTOID || type == VARCHAROID || type == BPCHAROID || type == INT8ARRAYOID;
}

/*
 * Why the caller's query is not a plain read, or NULL: a statement that is
 * not a SELECT (INSERT, UPDATE, DELETE or MERGE with RETURNING, or a utility
 * statement that returns rows: EXPLAIN ANALYZE runs its statement), a WITH
 * that changes data, or row locks.  A utility statement that returns no rows
 * is left to the caller's error for such a query.  Also sets *parallel_safe:
 * whether the query may run while parallel workers are active (in parallel
 * mode), that is, calls no function marked PARALLEL UNSAFE.
 */
static char *
verify_query_writes(SPIPlanPtr plan, bool *parallel_safe)
{
	ListCell   *lc;

	*parallel_safe = true;
	foreach(lc, SPI_plan_get_plan_sources(plan))
	{
		CachedPlanSource *source = (CachedPlanSource *) lfirst(lc);
		ListCell   *lq;

		foreach(lq, source->query_list)
		{
			Query	   *q = lfirst_node(Query, lq);

			if (q->commandType == CMD_UTILITY && !SPI_is_cursor_plan(plan))
				continue;
			if (q->commandType != CMD_SELECT)
				return psprintf("The query is a %s statement.", GetCommandTagName(source->commandTag));
			if (q->hasModifyingCTE)
				return pstrdup("The query has a WITH clause that changes data.");
			if (q->rowMarks != NIL)
				return pstrdup("The query locks rows (FOR UPDATE or FOR SHARE).");
			if (max_parallel_hazard(q) == PROPARALLEL_UNSAFE)
				*parallel_safe = false;
		}
	}
	return NULL;
}

/*
 * Prepares the caller's query (in an SPI connection) to be run once, to
 * completion, by verify_run_query(): planned as a statement of its own, which
 * PostgreSQL may run with parallel workers (a cursor's plan never has them).
 * A query that returns no rows is refused with shape and hint (NULL: none),
 * and so is a query that is not a plain read (verify_query_writes()), before
 * anything runs.  *desc is the query's columns (valid until SPI_finish());
 * with parallel_safe, also says whether the query may be read in parallel
 * mode.
 */
SPIPlanPtr
verify_prepare_query(const char *query, const char *shape, const char *hint, TupleDesc *desc,
					 bool *parallel_safe)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_PARALLEL_OK);
	char	   *writes;
	bool		safe;

	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	writes = verify_query_writes(plan, &safe);
	if (writes != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("query must be a read-only SELECT"),
				 errdetail("%s", writes),
				 errhint("The query is only read: write it as a SELECT, and change data in a statement of its own.")));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", shape),
				 errdetail("The query does not return rows."),
				 hint != NULL ? errhint("%s", hint) : 0));
	if (parallel_safe != NULL)
		*parallel_safe = safe;
	/* one statement that returns rows: their columns, as the executor sends them */
	*desc = ((CachedPlanSource *) linitial(SPI_plan_get_plan_sources(plan)))->resultDesc;
	return plan;
}

static void
verify_receiver_nothing(DestReceiver *self)
{
}

static void
verify_receiver_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

/*
 * Runs a query of verify_prepare_query() once, to completion, read-only (in
 * the snapshot of the caller's statement, as every read of the query), and
 * hands every row to the receiveSlot of dest as the executor makes it (with
 * parallel workers, as it gathers it from them): no row is kept by SPI.  The
 * receiver runs in the executor's memory, which ends with the query: what it
 * keeps goes to a context of its own.
 */
void
verify_run_query(SPIPlanPtr plan, DestReceiver *dest)
{
	SPIExecuteOptions options;
	int			rc;

	dest->rStartup = verify_receiver_startup;
	dest->rShutdown = verify_receiver_nothing;
	dest->rDestroy = verify_receiver_nothing;
	dest->mydest = DestNone;
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = dest;
	rc = SPI_execute_plan_extended(plan, &options);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan_extended failed: %s", SPI_result_code_string(rc));
}

/*
 * Prepares the query and checks that it returns natts columns; with types,
 * also their types (InvalidOid for the text or bigint[] body).
 */
static SPIPlanPtr
verify_open(const char *query, int natts, const Oid *types, const char *shape, TupleDesc *desc,
			bool *parallel_safe)
{
	char	   *message = psprintf("query must return %s", shape);
	SPIPlanPtr	plan = verify_prepare_query(query, message, NULL, desc, parallel_safe);
	int			i;

	if ((*desc)->natts != natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s", message)));
	for (i = 0; types != NULL && i < natts; i++)
	{
		Oid			type = TupleDescAttr(*desc, i)->atttypid;

		if (types[i] == InvalidOid ? !verify_body_type_ok(type) : getBaseType(type) != types[i])
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s", message),
					 errdetail("Column %d has type %s.", i + 1, format_type_be(type)),
					 types[i] == InvalidOid ?
					 errhint(VERIFY_BODY_TYPES_HINT) : 0));
	}
	pfree(message);
	return plan;
}

typedef void (*VerifyRowFn) (VerifyState *vs, TupleTableSlot *slot, const void *arg);

/* the DestReceiver of a query of the verification: each row to fn */
typedef struct VerifyReceiver
{
	DestReceiver pub;
	VerifyState *vs;
	VerifyRowFn fn;
	const void *arg;
} VerifyReceiver;

static bool
verify_receive(TupleTableSlot *slot, DestReceiver *self)
{
	VerifyReceiver *receiver = (VerifyReceiver *) self;

	CHECK_FOR_INTERRUPTS();
	receiver->fn(receiver->vs, slot, receiver->arg);
	return true;
}

/* runs the prepared query, every row to fn */
static void
verify_fetch(VerifyState *vs, SPIPlanPtr plan, VerifyRowFn fn, const void *arg)
{
	VerifyReceiver receiver;

	receiver.pub.receiveSlot = verify_receive;
	receiver.vs = vs;
	receiver.fn = fn;
	receiver.arg = arg;
	verify_run_query(plan, &receiver.pub);
}

VerifyState *
verify_begin(double min_similarity, int32 n, text *units)
{
	Shingling	sh = shingle_get_shingling(n, units);
	MemoryContext cxt;
	MemoryContext old;
	VerifyState *vs;
	HASHCTL		ctl;

	if (!(min_similarity >= 0.0 && min_similarity <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_similarity must be between 0 and 1, not %g", min_similarity),
				 errhint("min_similarity is the least shingle_similarity a pair keeps: 0 keeps every pair within max_distance, 1 only pairs with the same shingles.")));
	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash verification", ALLOCSET_DEFAULT_SIZES);
	vs = MemoryContextAllocZero(cxt, sizeof(VerifyState));
	vs->cxt = cxt;
	vs->min_similarity = min_similarity;
	vs->sh = sh;
	vs->memory_left = (Size) work_mem * 1024;
	vs->pairs_len = 1024;
	vs->pairs = MemoryContextAllocHuge(cxt, vs->pairs_len * sizeof(VerifyPair));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(VerifyDoc);
	ctl.hcxt = cxt;
	vs->docs = hash_create("simhash verification ids", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	old = MemoryContextSwitchTo(cxt);
	vs->file = BufFileCreateTemp(false);
	MemoryContextSwitchTo(old);
	return vs;
}

void
verify_end(VerifyState *vs)
{
	BufFileClose(vs->file);
	MemoryContextDelete(vs->cxt);
}

static void
verify_add_id(VerifyState *vs, int64 id)
{
	bool		found;
	VerifyDoc  *doc = hash_search(vs->docs, &id, HASH_ENTER, &found);

	if (!found)
	{
		doc->stored = false;
		doc->queued = false;
	}
}

/* a candidate pair (a PairsCallback, arg the VerifyState) */
void
verify_add_pair(int64 id_a, int64 id_b, int distance, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;
	VerifyPair *p;

	if (vs->npairs == vs->pairs_len)
	{
		vs->pairs_len *= 2;
		vs->pairs = repalloc_huge(vs->pairs, vs->pairs_len * sizeof(VerifyPair));
	}
	p = &vs->pairs[vs->npairs++];
	p->id_a = id_a;
	p->id_b = id_b;
	p->distance = distance;
	verify_add_id(vs, id_a);
	verify_add_id(vs, id_b);
}

static void
verify_pair_row(VerifyState *vs, TupleTableSlot *slot, const void *arg)
{
	bool		null_a;
	bool		null_b;
	bool		null_d;
	int64		id_a = DatumGetInt64(slot_getattr(slot, 1, &null_a));
	int64		id_b = DatumGetInt64(slot_getattr(slot, 2, &null_b));
	int32		distance = DatumGetInt32(slot_getattr(slot, 3, &null_d));

	if (!null_a && !null_b && !null_d)
		verify_add_pair(id_a, id_b, distance, vs);
}

/* where the id and the body are in a row, and which rows count */
typedef struct VerifyColumns
{
	int			id;
	Oid			id_type;		/* bigint, integer or smallint */
	int			fp;				/* rows with a NULL here are not read; 0: none */
	int			body;
	bool		stored_sets;	/* the body is a bigint[] shingle set */
} VerifyColumns;

/* keeps the shingle set of a document: in memory within work_mem, else in the file */
static void
verify_store(VerifyState *vs, VerifyDoc *doc, const void *set, Size count)
{
	Size		size = count * sizeof(int64);

	doc->count = count;
	doc->set = NULL;
	if (size > vs->arena_left && size <= vs->memory_left)
	{
		Size		block = size >= VERIFY_ARENA_BLOCK / 4 ? size : Min(VERIFY_ARENA_BLOCK, vs->memory_left);

		if (size < VERIFY_ARENA_BLOCK / 4)
		{
			vs->arena = MemoryContextAllocHuge(vs->cxt, block);
			vs->arena_left = block;
		}
		else
			doc->set = MemoryContextAllocHuge(vs->cxt, Max(size, 1));
		vs->memory_left -= block;
	}
	if (doc->set == NULL && size <= vs->arena_left)
	{
		doc->set = (int64 *) vs->arena;
		vs->arena += size;
		vs->arena_left -= size;
	}
	if (doc->set != NULL)
		memcpy(doc->set, set, size);
	else
	{
		BufFileTell(vs->file, &doc->fileno, &doc->offset);
		BufFileWrite(vs->file, unconstify(void *, set), size);
		vs->max_count = Max(vs->max_count, count);
	}
	doc->stored = true;
}

/* a set that a parallel worker made (a VerifyStoreFn) */
static void
verify_store_id(int64 id, const void *set, Size count, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;

	verify_store(vs, hash_search(vs->docs, &id, HASH_FIND, NULL), set, count);
}

/* the shingle set of a candidate document, once */
static void
verify_doc_row(VerifyState *vs, TupleTableSlot *slot, const void *arg)
{
	const VerifyColumns *cols = (const VerifyColumns *) arg;
	bool		isnull;
	Datum		id_datum = slot_getattr(slot, cols->id, &isnull);
	int64		id;
	Datum		body;
	VerifyDoc  *doc;
	int64	   *set;
	Size		count;
	MemoryContext old;

	if (isnull)
		return;
	if (cols->fp != 0)
	{
		slot_getattr(slot, cols->fp, &isnull);
		if (isnull)
			return;
	}
	id = cols->id_type == INT8OID ? DatumGetInt64(id_datum) :
		cols->id_type == INT4OID ? DatumGetInt32(id_datum) : DatumGetInt16(id_datum);
	doc = hash_search(vs->docs, &id, HASH_FIND, NULL);
	if (doc == NULL || doc->stored || doc->queued)
		return;
	body = slot_getattr(slot, cols->body, &isnull);
	if (isnull)
		return;
	old = MemoryContextSwitchTo(vs->cxt);
	if (cols->stored_sets)
	{
		ArrayType  *arr = DatumGetArrayTypeP(body);
		char		what[64];

		snprintf(what, sizeof(what), "the body of id " INT64_FORMAT, id);
		set = shingle_set_elements(arr, &count, what);
		verify_store(vs, doc, set, count);
		if ((Pointer) arr != DatumGetPointer(body))
			pfree(arr);
	}
	else
	{
		text	   *t = DatumGetTextPP(body);

		if (vs->workers != NULL &&
			verify_workers_send(vs->workers, id, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)))
			doc->queued = true;
		else
		{
			set = shingle_sorted_set(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &vs->sh, &count);
			verify_store(vs, doc, set, count);
			pfree(set);
		}
		if ((Pointer) t != DatumGetPointer(body))
			pfree(t);
	}
	MemoryContextSwitchTo(old);
}

/* reads the bodies of the query's rows whose ids are in candidate pairs */
static void
verify_read_bodies(VerifyState *vs, const char *query, int natts, const Oid *types,
				   const char *shape, VerifyColumns *cols)
{
	SPIPlanPtr	plan;
	TupleDesc	desc;
	bool		parallel_safe;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = verify_open(query, natts, types, shape, &desc, &parallel_safe);
	cols->id_type = getBaseType(TupleDescAttr(desc, cols->id - 1)->atttypid);
	cols->stored_sets = getBaseType(TupleDescAttr(desc, cols->body - 1)->atttypid) == INT8ARRAYOID;
	/*
	 * workers: the leader runs the query in parallel mode meanwhile (the
	 * query may have parallel workers of its own, in a second parallel
	 * context)
	 */
	if (!cols->stored_sets && parallel_safe)
		vs->workers = verify_workers_begin(&vs->sh, hash_get_num_entries(vs->docs),
										   verify_store_id, vs);
	verify_fetch(vs, plan, verify_doc_row, cols);
	if (vs->workers != NULL)
		verify_workers_end(vs->workers);
	vs->workers = NULL;
	SPI_finish();
}

/*
 * The bodies of the verified whole-table functions, from their query of
 * natts columns (id, simhash, body, or id, simhash128, simhash128, body),
 * whose shape the pairs engine checked when it read it.
 */
void
verify_read_rows(VerifyState *vs, const char *query, int natts)
{
	VerifyColumns cols = {.id = 1,.fp = 2,.body = natts};

	verify_read_bodies(vs, query, natts, NULL,
					   natts == 3 ? "three columns: a bigint id, a simhash, and a text or a shingle set" :
					   "four columns: a bigint id, two simhash128 values, and a text or a shingle set", &cols);
}

static void
verify_load(VerifyState *vs, const VerifyDoc *doc, int64 *buf)
{
	size_t		size = doc->count * sizeof(int64);

	if (BufFileSeek(vs->file, doc->fileno, doc->offset, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in shingle set temporary file: %m")));
	if (size > 0 && BufFileRead(vs->file, buf, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from shingle set temporary file: %m")));
}

/* calls fn for every candidate pair whose similarity is at least min_similarity */
void
verify_for_each(VerifyState *vs, VerifyPairFn fn, void *arg)
{
	int64	   *set_a = MemoryContextAllocHuge(vs->cxt, Max(vs->max_count, 1) * sizeof(int64));
	int64	   *set_b = MemoryContextAllocHuge(vs->cxt, Max(vs->max_count, 1) * sizeof(int64));
	int64		i;

	for (i = 0; i < vs->npairs; i++)
	{
		VerifyPair *p = &vs->pairs[i];
		VerifyDoc  *a = hash_search(vs->docs, &p->id_a, HASH_FIND, NULL);
		VerifyDoc  *b = hash_search(vs->docs, &p->id_b, HASH_FIND, NULL);
		double		similarity;

		CHECK_FOR_INTERRUPTS();
		if (!a->stored || !b->stored)
			continue;
		if (a->set == NULL)
			verify_load(vs, a, set_a);
		if (b->set == NULL)
			verify_load(vs, b, set_b);
		similarity = shingle_sorted_jaccard(a->set != NULL ? a->set : set_a, a->count,
											b->set != NULL ? b->set : set_b, b->count);
		if (similarity >= vs->min_similarity)
			fn(p->id_a, p->id_b, p->distance, similarity, arg);
	}
	pfree(set_a);
	pfree(set_b);
}

/* a verified pair as a row of a result (arg: the ReturnSetInfo) */
void
verify_put_pair(int64 id_a, int64 id_b, int distance, double similarity, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	values[0] = Int64GetDatum(id_a);
	values[1] = Int64GetDatum(id_b);
	values[2] = Int32GetDatum(distance);
	values[3] = Float8GetDatum(similarity);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(shingle_verify_pairs);
Datum
shingle_verify_pairs(PG_FUNCTION_ARGS)
{
	char	   *pairs_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *docs_query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	VerifyState *vs = verify_begin(PG_GETARG_FLOAT8(2), PG_GETARG_INT32(3), PG_GETARG_TEXT_PP(4));
	Oid			pair_types[3] = {INT8OID, INT8OID, INT4OID};
	Oid			doc_types[2] = {INT8OID, InvalidOid};
	VerifyColumns cols = {.id = 1,.body = 2};
	TupleDesc	desc;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	verify_fetch(vs, verify_open(pairs_query, 3, pair_types,
								 "three columns: id_a bigint, id_b bigint, distance integer", &desc, NULL),
				 verify_pair_row, NULL);
	SPI_finish();
	verify_read_bodies(vs, docs_query, 2, doc_types,
					   "two columns: id bigint, and a body text or shingle set bigint[]", &cols);
	verify_for_each(vs, verify_put_pair, fcinfo->resultinfo);
	verify_end(vs);
	return (Datum) 0;
}
