/*
 * fingerprint.c
 *	  Computing fingerprints: the vote accumulator, feature hashing, and the
 *	  SQL functions simhash(text, ...), simhash_ngram(text, ...),
 *	  simhash(tsvector), simhash(text[]), simhash(text[], float8[]) and the
 *	  aggregate simhash_agg(text, float8).
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplesort.h"

#include "feature_hash.h"

/* ---- accumulator ---- */

void
simhash_acc_init(SimhashAcc *acc)
{
	memset(acc, 0, sizeof(*acc));
}

/* move the bit-plane counts into counts[] */
static void
acc_flush_planes(SimhashAcc *acc)
{
	int			p,
				bit;

	for (p = 0; p < SIMHASH_PLANES; p++)
	{
		uint64		plane = acc->planes[p];

		while (plane)
		{
			bit = pg_rightmost_one_pos64(plane);
			acc->counts[bit] += INT64CONST(1) << p;
			plane &= plane - 1;
		}
		acc->planes[p] = 0;
	}
}

/*
 * Add one feature of weight 1: count, per bit, how many hashes had it set,
 * with a binary counter kept bit-sliced across planes (an increment touches
 * two planes on average).
 */
void
simhash_acc_add_unit(SimhashAcc *acc, uint64 hash)
{
	uint64		carry = hash;
	int			p = 0;

	while (carry)
	{
		uint64		plane = acc->planes[p];

		acc->planes[p] = plane ^ carry;
		carry &= plane;
		p++;
	}
	acc->nunit++;
	if ((acc->nunit & ((UINT64CONST(1) << (SIMHASH_PLANES - 1)) - 1)) == 0)
		acc_flush_planes(acc);
}

void
simhash_acc_add_weighted(SimhashAcc *acc, uint64 hash, double weight)
{
	int			bit;

	for (bit = 0; bit < 64; bit++)
		acc->weighted[bit] += ((hash >> bit) & 1) ? weight : -weight;
	acc->has_weighted = true;
}

simhash
simhash_acc_finish(SimhashAcc *acc)
{
	simhash		result = 0;
	int			bit;

	acc_flush_planes(acc);
	for (bit = 0; bit < 64; bit++)
	{
		/* unit features vote +1 where set and -1 where clear */
		double		vote = (double) (2 * acc->counts[bit] - (int64) acc->nunit);

		if (acc->has_weighted)
			vote += acc->weighted[bit];
		if (vote > 0)
			result |= UINT64CONST(1) << bit;
	}
	return result;
}

/* ---- weighting ---- */

typedef enum Weighting
{
	WEIGHT_TF,					/* weight = occurrences */
	WEIGHT_BINARY,				/* weight = 1 per distinct feature */
	WEIGHT_SUBLINEAR			/* weight = 1 + floor(log2(occurrences)) */
} Weighting;

static Weighting
parse_weighting(text *arg)
{
	char	   *s = text_to_cstring(arg);

	if (strcmp(s, "tf") == 0)
		return WEIGHT_TF;
	if (strcmp(s, "binary") == 0)
		return WEIGHT_BINARY;
	if (strcmp(s, "sublinear") == 0)
		return WEIGHT_SUBLINEAR;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid simhash weighting \"%s\"", s),
			 errhint("Valid weightings are \"tf\", \"binary\" and \"sublinear\".")));
	return WEIGHT_TF;			/* keep compiler quiet */
}

static int
parse_size(int32 n, const char *what)
{
	if (n < 1 || n > SIMHASH_MAX_SHINGLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and %d, not %d", what, SIMHASH_MAX_SHINGLE, n)));
	return n;
}

/*
 * Feature collection.  Term frequency needs no memory: each occurrence votes
 * once.  The other weightings need each distinct feature's count, kept in an
 * open-addressing hash table of feature hashes (which are uniform already).
 * The table stays within work_mem: when it would outgrow it, its contents go
 * to a tuplesort (each hash as many times as it was counted, which spills to
 * disk by itself) and it starts empty; at the end the sorted hashes are
 * counted again.  The votes are integer sums, so the result is the same.
 */
typedef struct FeatureCount
{
	uint64		hash;
	uint32		count;			/* 0: empty slot */
} FeatureCount;

typedef struct FeatureSink
{
	Weighting	weighting;
	SimhashAcc	acc;
	FeatureCount *table;
	Size		size;			/* slots, a power of 2 */
	Size		used;
	Size		max_size;		/* the most slots work_mem allows */
	Tuplesortstate *spill;		/* counted hashes, once the table overflowed */
} FeatureSink;

/* expected_features sizes the table so that it rarely grows */
static void
sink_init(FeatureSink *sink, Weighting weighting, Size expected_features)
{
	sink->weighting = weighting;
	simhash_acc_init(&sink->acc);
	sink->size = sink->used = 0;
	sink->table = NULL;
	sink->spill = NULL;
	sink->max_size = 64;
	while (sink->max_size * 2 * sizeof(FeatureCount) <= (Size) work_mem * 1024)
		sink->max_size *= 2;
	if (weighting != WEIGHT_TF)
	{
		sink->size = 64;
		while (sink->size < 2 * expected_features && sink->size < Min((Size) 1 << 16, sink->max_size))
			sink->size *= 2;
		sink->table = palloc_extended(sink->size * sizeof(FeatureCount),
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
}

static inline FeatureCount *
sink_slot(FeatureCount *table, Size size, uint64 hash)
{
	Size		i = (Size) hash & (size - 1);

	while (table[i].count != 0 && table[i].hash != hash)
		i = (i + 1) & (size - 1);
	return &table[i];
}

static void
sink_grow(FeatureSink *sink)
{
	Size		newsize = sink->size * 2;
	FeatureCount *newtable = palloc_extended(newsize * sizeof(FeatureCount),
											 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	Size		i;

	for (i = 0; i < sink->size; i++)
		if (sink->table[i].count != 0)
			*sink_slot(newtable, newsize, sink->table[i].hash) = sink->table[i];
	pfree(sink->table);
	sink->table = newtable;
	sink->size = newsize;
}

/* move the table's counts to the tuplesort and empty it */
static void
sink_spill(FeatureSink *sink)
{
	Size		i;

	if (sink->spill == NULL)
#if PG_VERSION_NUM >= 150000
		sink->spill = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											work_mem, NULL, TUPLESORT_NONE);
#else
		sink->spill = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
											work_mem, NULL, false);
#endif
	for (i = 0; i < sink->size; i++)
	{
		uint32		count;

		CHECK_FOR_INTERRUPTS();
		for (count = sink->table[i].count; count > 0; count--)
			tuplesort_putdatum(sink->spill, Int64GetDatum((int64) sink->table[i].hash), false);
	}
	memset(sink->table, 0, sink->size * sizeof(FeatureCount));
	sink->used = 0;
}

static void
sink_add(uint64 hash, void *arg)
{
	FeatureSink *sink = (FeatureSink *) arg;
	FeatureCount *slot;

	if (sink->weighting == WEIGHT_TF)
	{
		simhash_acc_add_unit(&sink->acc, hash);
		return;
	}
	slot = sink_slot(sink->table, sink->size, hash);
	if (slot->count == 0)
	{
		slot->hash = hash;
		sink->used++;
	}
	slot->count++;
	if (sink->used * 2 > sink->size)
	{
		if (sink->size < sink->max_size)
			sink_grow(sink);
		else
			sink_spill(sink);
	}
}

/* one distinct feature's votes */
static void
sink_vote(FeatureSink *sink, uint64 hash, uint32 count)
{
	uint32		weight = sink->weighting == WEIGHT_SUBLINEAR ? 1 + pg_leftmost_one_pos32(count) : 1;

	while (weight-- > 0)
		simhash_acc_add_unit(&sink->acc, hash);
}

static simhash
sink_finish(FeatureSink *sink)
{
	Size		i;

	if (sink->spill != NULL)
	{
		Datum		value;
		bool		isnull;
		uint64		current = 0;
		uint32		count = 0;

		sink_spill(sink);
		tuplesort_performsort(sink->spill);
#if PG_VERSION_NUM >= 160000
		while (tuplesort_getdatum(sink->spill, true, false, &value, &isnull, NULL))
#else
		while (tuplesort_getdatum(sink->spill, true, &value, &isnull, NULL))
#endif
		{
			uint64		hash = (uint64) DatumGetInt64(value);

			CHECK_FOR_INTERRUPTS();
			if (count > 0 && hash != current)
			{
				sink_vote(sink, current, count);
				count = 0;
			}
			current = hash;
			count++;
		}
		if (count > 0)
			sink_vote(sink, current, count);
		tuplesort_end(sink->spill);
	}
	else
	{
		for (i = 0; i < sink->size; i++)
			if (sink->table[i].count != 0)
				sink_vote(sink, sink->table[i].hash, sink->table[i].count);
	}
	if (sink->table)
		pfree(sink->table);
	return simhash_acc_finish(&sink->acc);
}

/* s (len bytes) as UTF-8, converted from the database encoding if needed */
char *
simhash_as_utf8(const char *s, int *len)
{
	char	   *u;

	if (GetDatabaseEncoding() == PG_UTF8)
		return (char *) s;
	u = pg_server_to_any(s, *len, PG_UTF8);
	if (u != s)
		*len = strlen(u);
	return u;
}

static simhash
fingerprint_text(text *body, SimhashFeatureKind kind, int n, Weighting weighting)
{
	FeatureSink sink;
	int			len = VARSIZE_ANY_EXHDR(body);
	char	   *utf8 = simhash_as_utf8(VARDATA_ANY(body), &len);

	/* about one feature per 4 bytes of text (a word, or a CJK character) */
	sink_init(&sink, weighting, len / 4);
	simhash_tokenize(utf8, len, kind, n, sink_add, &sink);
	if (utf8 != VARDATA_ANY(body))
		pfree(utf8);
	return sink_finish(&sink);
}

PG_FUNCTION_INFO_V1(simhash_text);
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	text	   *body = PG_GETARG_TEXT_PP(0);
	int			n = parse_size(PG_GETARG_INT32(1), "shingle");
	Weighting	weighting = parse_weighting(PG_GETARG_TEXT_PP(2));

	PG_RETURN_SIMHASH(fingerprint_text(body, SIMHASH_FEATURE_WORDS, n, weighting));
}

PG_FUNCTION_INFO_V1(simhash_ngram);
Datum
simhash_ngram(PG_FUNCTION_ARGS)
{
	text	   *body = PG_GETARG_TEXT_PP(0);
	int			n = parse_size(PG_GETARG_INT32(1), "n");
	Weighting	weighting = parse_weighting(PG_GETARG_TEXT_PP(2));

	PG_RETURN_SIMHASH(fingerprint_text(body, SIMHASH_FEATURE_CHARS, n, weighting));
}

/* hash of a feature given by the user, as UTF-8 bytes, not normalized */
static uint64
hash_given_feature(const char *s, int len)
{
	char	   *u = simhash_as_utf8(s, &len);
	uint64		h = simhash_feature_hash(u, len);

	if (u != s)
		pfree(u);
	return h;
}

PG_FUNCTION_INFO_V1(simhash_tsvector);
Datum
simhash_tsvector(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	WordEntry  *entries = ARRPTR(tsv);
	char	   *lexemes = STRPTR(tsv);
	SimhashAcc	acc;
	int			i;

	simhash_acc_init(&acc);
	for (i = 0; i < tsv->size; i++)
	{
		uint64		h = hash_given_feature(lexemes + entries[i].pos, entries[i].len);
		int			weight = entries[i].haspos ? POSDATALEN(tsv, &entries[i]) : 1;

		CHECK_FOR_INTERRUPTS();
		while (weight-- > 0)
			simhash_acc_add_unit(&acc, h);
	}
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

static void
deconstruct_features(ArrayType *arr, Datum **values, int *n)
{
	bool	   *nulls;
	int			i;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array must have one dimension, not %d", ARR_NDIM(arr))));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, values, &nulls, n);
	for (i = 0; i < *n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("feature array must not contain nulls"),
					 errdetail("Element %d is null.", i + 1)));
}

static void
check_weight(double w)
{
	if (isnan(w) || isinf(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feature weight must be a finite number, not %g", w)));
}

PG_FUNCTION_INFO_V1(simhash_features);
Datum
simhash_features(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *values;
	int			n,
				i;
	SimhashAcc	acc;

	deconstruct_features(arr, &values, &n);
	simhash_acc_init(&acc);
	for (i = 0; i < n; i++)
	{
		text	   *f = DatumGetTextPP(values[i]);

		CHECK_FOR_INTERRUPTS();
		simhash_acc_add_unit(&acc, hash_given_feature(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f)));
	}
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

PG_FUNCTION_INFO_V1(simhash_weighted_features);
Datum
simhash_weighted_features(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *warr = PG_GETARG_ARRAYTYPE_P(1);
	Datum	   *values;
	Datum	   *weights;
	bool	   *wnulls;
	int			n,
				nw,
				i;
	SimhashAcc	acc;

	deconstruct_features(arr, &values, &n);
	if (ARR_NDIM(warr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("weight array must have one dimension, not %d", ARR_NDIM(warr))));
	deconstruct_array(warr, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &weights, &wnulls, &nw);
	if (n != nw)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature and weight arrays must have the same length"),
				 errdetail("There are %d features and %d weights.", n, nw)));
	simhash_acc_init(&acc);
	for (i = 0; i < n; i++)
	{
		text	   *f = DatumGetTextPP(values[i]);
		double		w;

		CHECK_FOR_INTERRUPTS();
		if (wnulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("weight array must not contain nulls"),
					 errdetail("Element %d is null.", i + 1)));
		w = DatumGetFloat8(weights[i]);
		check_weight(w);
		simhash_acc_add_weighted(&acc, hash_given_feature(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f)), w);
	}
	PG_RETURN_SIMHASH(simhash_acc_finish(&acc));
}

/* ---- aggregate simhash_agg(feature text, weight float8) ---- */

PG_FUNCTION_INFO_V1(simhash_agg_transfn);
Datum
simhash_agg_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	SimhashAcc *acc;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "simhash_agg_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		acc = MemoryContextAlloc(aggcontext, sizeof(SimhashAcc));
		simhash_acc_init(acc);
	}
	else
		acc = (SimhashAcc *) PG_GETARG_POINTER(0);

	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
	{
		text	   *f = PG_GETARG_TEXT_PP(1);
		double		w = PG_GETARG_FLOAT8(2);

		check_weight(w);
		simhash_acc_add_weighted(acc, hash_given_feature(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f)), w);
	}
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(simhash_agg_combinefn);
Datum
simhash_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	SimhashAcc *a;
	SimhashAcc *b;
	int			bit;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "simhash_agg_combinefn called in non-aggregate context");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	b = (SimhashAcc *) PG_GETARG_POINTER(1);
	if (PG_ARGISNULL(0))
	{
		a = MemoryContextAlloc(aggcontext, sizeof(SimhashAcc));
		memcpy(a, b, sizeof(SimhashAcc));
		PG_RETURN_POINTER(a);
	}
	a = (SimhashAcc *) PG_GETARG_POINTER(0);
	for (bit = 0; bit < 64; bit++)
		a->weighted[bit] += b->weighted[bit];
	a->has_weighted |= b->has_weighted;
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(simhash_agg_serialfn);
Datum
simhash_agg_serialfn(PG_FUNCTION_ARGS)
{
	SimhashAcc *acc = (SimhashAcc *) PG_GETARG_POINTER(0);
	bytea	   *out = palloc(VARHDRSZ + sizeof(acc->weighted) + 1);

	SET_VARSIZE(out, VARHDRSZ + sizeof(acc->weighted) + 1);
	memcpy(VARDATA(out), acc->weighted, sizeof(acc->weighted));
	VARDATA(out)[sizeof(acc->weighted)] = acc->has_weighted ? 1 : 0;
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(simhash_agg_deserialfn);
Datum
simhash_agg_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	SimhashAcc *acc = palloc(sizeof(SimhashAcc));

	if (VARSIZE_ANY_EXHDR(in) != sizeof(acc->weighted) + 1)
		elog(ERROR, "invalid simhash_agg state");
	simhash_acc_init(acc);
	memcpy(acc->weighted, VARDATA_ANY(in), sizeof(acc->weighted));
	acc->has_weighted = VARDATA_ANY(in)[sizeof(acc->weighted)] != 0;
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(simhash_agg_finalfn);
Datum
simhash_agg_finalfn(PG_FUNCTION_ARGS)
{
	SimhashAcc	copy;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	/* the state may be finalized more than once: work on a copy */
	memcpy(&copy, PG_GETARG_POINTER(0), sizeof(SimhashAcc));
	PG_RETURN_SIMHASH(simhash_acc_finish(&copy));
}
