/*
 * verify.c
 *	  shingle_verify_pairs(): the verification step of the verified
 *	  whole-table functions (simhash_pairs, simhash_clusters and simhash_dedup
 *	  with a min_similarity), which consumes candidate pairs through a query.
 *
 * It reads the candidate pairs (id_a, id_b, distance) of one query, then the
 * rows (id, body) of another, and tokenizes only the bodies of ids that are
 * in a candidate pair, each once, into its sorted shingle set
 * (jaccard.c); a body of type bigint[] is such a set already, stored.  The sets go to a temporary file as they are made, so
 * memory holds only the candidate pairs (20 bytes each) and a hash table of
 * their ids (about 40 bytes each); then every candidate pair reads its two
 * sets back and keeps the pair when their Jaccard similarity is at least
 * min_similarity.  The text is thus read once and each candidate document
 * tokenized once, whatever the number of pairs it is in.
 */
#include "shingle.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "parser/parse_coerce.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#define VERIFY_FETCH_ROWS	10000

typedef struct VerifyPair
{
	int64		id_a;
	int64		id_b;
	int32		distance;
} VerifyPair;

/* an id of a candidate pair, and where its shingle set is in the file */
typedef struct VerifyDoc
{
	int64		id;				/* hash key */
	bool		stored;			/* false: no row, or a NULL body */
	int			fileno;
	off_t		offset;
	Size		count;
} VerifyDoc;

typedef struct VerifyState
{
	MemoryContext cxt;
	VerifyPair *pairs;
	int64		npairs;
	int64		pairs_len;
	HTAB	   *docs;
	BufFile    *file;
	Size		max_count;		/* the largest set */
} VerifyState;

/* types: the column types, InvalidOid for the text or bigint[] body */
static Portal
verify_open(const char *query, int natts, const Oid *types, const char *shape)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_NO_SCROLL);
	Portal		portal;
	TupleDesc	desc;
	int			i;

	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return %s", shape),
				 errdetail("The query does not return rows.")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	desc = portal->tupDesc;
	if (desc->natts != natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("query must return %s", shape)));
	for (i = 0; i < natts; i++)
	{
		Oid			type = getBaseType(TupleDescAttr(desc, i)->atttypid);

		if (types[i] == InvalidOid ?
			!(type == INT8ARRAYOID || TypeCategory(type) == TYPCATEGORY_STRING) :
			type != types[i])
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("query must return %s", shape),
					 errdetail("Column %d has type %s.", i + 1,
							   format_type_be(TupleDescAttr(desc, i)->atttypid))));
	}
	return portal;
}

static void
verify_add_id(VerifyState *vs, int64 id)
{
	bool		found;
	VerifyDoc  *doc = hash_search(vs->docs, &id, HASH_ENTER, &found);

	if (!found)
		doc->stored = false;
}

/* the candidate pairs, and the ids they hold */
static void
verify_read_pairs(VerifyState *vs, const char *query)
{
	Oid			types[3] = {INT8OID, INT8OID, INT4OID};
	Portal		portal = verify_open(query, 3, types,
									 "three columns: id_a bigint, id_b bigint, distance integer");

	for (;;)
	{
		uint64		i;

		SPI_cursor_fetch(portal, true, VERIFY_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		null_a,
						null_b,
						null_d;
			VerifyPair *p;

			CHECK_FOR_INTERRUPTS();
			if (vs->npairs == vs->pairs_len)
			{
				vs->pairs_len *= 2;
				vs->pairs = repalloc_huge(vs->pairs, vs->pairs_len * sizeof(VerifyPair));
			}
			p = &vs->pairs[vs->npairs];
			p->id_a = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &null_a));
			p->id_b = DatumGetInt64(SPI_getbinval(tuple, desc, 2, &null_b));
			p->distance = DatumGetInt32(SPI_getbinval(tuple, desc, 3, &null_d));
			if (null_a || null_b || null_d)
				continue;
			vs->npairs++;
			verify_add_id(vs, p->id_a);
			verify_add_id(vs, p->id_b);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
}

/* the shingle set of every candidate document, once, to the file */
static void
verify_read_docs(VerifyState *vs, const char *query, const Shingling *sh)
{
	Oid			types[2] = {INT8OID, InvalidOid};
	Portal		portal = verify_open(query, 2, types,
									 "two columns: id bigint, and a body text or shingle set bigint[]");
	bool		stored_sets = getBaseType(TupleDescAttr(portal->tupDesc, 1)->atttypid) == INT8ARRAYOID;

	for (;;)
	{
		uint64		i;

		SPI_cursor_fetch(portal, true, VERIFY_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
			Datum		body;
			VerifyDoc  *doc;
			text	   *t;
			int64	   *set;
			MemoryContext old;

			CHECK_FOR_INTERRUPTS();
			if (isnull)
				continue;
			doc = hash_search(vs->docs, &id, HASH_FIND, NULL);
			if (doc == NULL || doc->stored)
				continue;
			body = SPI_getbinval(tuple, desc, 2, &isnull);
			if (isnull)
				continue;
			old = MemoryContextSwitchTo(vs->cxt);
			if (stored_sets)
			{
				ArrayType  *arr = DatumGetArrayTypeP(body);
				char		what[64];

				snprintf(what, sizeof(what), "the body of id " INT64_FORMAT, id);
				set = shingle_set_elements(arr, &doc->count, what);
				BufFileTell(vs->file, &doc->fileno, &doc->offset);
				BufFileWrite(vs->file, set, doc->count * sizeof(int64));
				if ((Pointer) arr != DatumGetPointer(body))
					pfree(arr);
			}
			else
			{
				t = DatumGetTextPP(body);
				set = shingle_sorted_set(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), sh, &doc->count);
				BufFileTell(vs->file, &doc->fileno, &doc->offset);
				BufFileWrite(vs->file, set, doc->count * sizeof(int64));
				pfree(set);
				if ((Pointer) t != DatumGetPointer(body))
					pfree(t);
			}
			doc->stored = true;
			vs->max_count = Max(vs->max_count, doc->count);
			MemoryContextSwitchTo(old);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
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

PG_FUNCTION_INFO_V1(shingle_verify_pairs);
Datum
shingle_verify_pairs(PG_FUNCTION_ARGS)
{
	char	   *pairs_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *docs_query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	double		min_similarity = PG_GETARG_FLOAT8(2);
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(3), PG_GETARG_TEXT_PP(4));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	VerifyState vs;
	HASHCTL		ctl;
	int64	   *set_a;
	int64	   *set_b;
	int64		i;

	if (!(min_similarity >= 0.0 && min_similarity <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_similarity must be between 0 and 1, not %g", min_similarity)));
	InitMaterializedSRF(fcinfo, 0);

	memset(&vs, 0, sizeof(vs));
	vs.cxt = AllocSetContextCreate(CurrentMemoryContext, "shingle_verify_pairs",
								   ALLOCSET_DEFAULT_SIZES);
	vs.pairs_len = 1024;
	vs.pairs = MemoryContextAllocHuge(vs.cxt, vs.pairs_len * sizeof(VerifyPair));
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(VerifyDoc);
	ctl.hcxt = vs.cxt;
	vs.docs = hash_create("shingle_verify_pairs ids", 1024, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	{
		MemoryContext old = MemoryContextSwitchTo(vs.cxt);

		vs.file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	verify_read_pairs(&vs, pairs_query);
	verify_read_docs(&vs, docs_query, &sh);
	SPI_finish();

	set_a = MemoryContextAllocHuge(vs.cxt, Max(vs.max_count, 1) * sizeof(int64));
	set_b = MemoryContextAllocHuge(vs.cxt, Max(vs.max_count, 1) * sizeof(int64));
	for (i = 0; i < vs.npairs; i++)
	{
		VerifyPair *p = &vs.pairs[i];
		VerifyDoc  *a = hash_search(vs.docs, &p->id_a, HASH_FIND, NULL);
		VerifyDoc  *b = hash_search(vs.docs, &p->id_b, HASH_FIND, NULL);
		double		similarity;

		CHECK_FOR_INTERRUPTS();
		if (!a->stored || !b->stored)
			continue;
		verify_load(&vs, a, set_a);
		verify_load(&vs, b, set_b);
		similarity = shingle_sorted_jaccard(set_a, a->count, set_b, b->count);
		if (similarity >= min_similarity)
		{
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};

			values[0] = Int64GetDatum(p->id_a);
			values[1] = Int64GetDatum(p->id_b);
			values[2] = Int32GetDatum(p->distance);
			values[3] = Float8GetDatum(similarity);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	BufFileClose(vs.file);
	MemoryContextDelete(vs.cxt);
	return (Datum) 0;
}
