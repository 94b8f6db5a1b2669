/*
 * jaccard.c
 *	  Exact shingle similarity, the check behind verified near-duplicates:
 *	  shingle_similarity(text, text, n, units) (the Jaccard similarity of the
 *	  two texts' sets of shingles of n units), shingle_set(text, n, units) (a
 *	  text's shingle set as a sorted bigint[], to store once) and
 *	  shingle_similarity(bigint[], bigint[]) (the same for two stored sets),
 *	  on the shingle sets of shingle_set.c.
 *
 * Two texts are compared in linear time with an open-addressing hash set per
 * text, sized from the text's length.  The two sets stay within work_mem: if
 * they would outgrow it, both texts are tokenized again into tuplesorts
 * (which spill to disk) and the sorted hashes are merged, with the same
 * result.
 */
#include "tokenize.h"
#include "shingle_set.h"

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
/* ---- the fallback beyond work_mem: sorted hashes, merged ---- */

typedef struct SortSink
{
	Tuplesortstate *sort;
} SortSink;

static void
sort_add(uint64 hash, void *arg)
{
	/* the sort key is the signed value; any total order will do */
	tuplesort_putdatum(((SortSink *) arg)->sort, Int64GetDatum((int64) hash), false);
}

static Tuplesortstate *
sorted_shingles(TextBytes *b, const Shingling *sh)
{
	SortSink	sink;

	sink.sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
									  work_mem / 2, NULL, TUPLESORT_NONE);
	simhash_tokenize(b->utf8, b->len, shingle_text_units(b, sh), sh->n, sort_add, &sink);
	tuplesort_performsort(sink.sort);
	return sink.sort;
}

/* the next distinct value of a sorted stream; false at its end */
static bool
sorted_next(Tuplesortstate *sort, bool *started, int64 *value)
{
	Datum		d;
	bool		isnull;

	for (;;)
	{
#if PG_VERSION_NUM >= 160000
		if (!tuplesort_getdatum(sort, true, false, &d, &isnull, NULL))
#else
		if (!tuplesort_getdatum(sort, true, &d, &isnull, NULL))
#endif
			return false;
		CHECK_FOR_INTERRUPTS();
		if (!*started || DatumGetInt64(d) != *value)
		{
			*started = true;
			*value = DatumGetInt64(d);
			return true;
		}
	}
}

static double
similarity_sorted(TextBytes *a, TextBytes *b, const Shingling *sh)
{
	Tuplesortstate *sa = sorted_shingles(a, sh);
	Tuplesortstate *sb = sorted_shingles(b, sh);
	bool		started_a = false,
				started_b = false;
	int64		va = 0,
				vb = 0;
	int64		size_a = 0,
				size_b = 0,
				inter = 0;
	bool		more_a = sorted_next(sa, &started_a, &va);
	bool		more_b = sorted_next(sb, &started_b, &vb);

	while (more_a || more_b)
	{
		if (more_a && (!more_b || va < vb))
		{
			size_a++;
			more_a = sorted_next(sa, &started_a, &va);
		}
		else if (more_b && (!more_a || vb < va))
		{
			size_b++;
			more_b = sorted_next(sb, &started_b, &vb);
		}
		else
		{
			size_a++;
			size_b++;
			inter++;
			more_a = sorted_next(sa, &started_a, &va);
			more_b = sorted_next(sb, &started_b, &vb);
		}
	}
	tuplesort_end(sa);
	tuplesort_end(sb);
	return shingle_jaccard(inter, size_a, size_b);
}

/* ---- shingle_similarity(text, text, n, units) ---- */

PG_FUNCTION_INFO_V1(shingle_similarity);
Datum
shingle_similarity(PG_FUNCTION_ARGS)
{
	text	   *ta = PG_GETARG_TEXT_PP(0);
	text	   *tb = PG_GETARG_TEXT_PP(1);
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(2), PG_GETARG_TEXT_PP(3));
	TextBytes	a = shingle_text_bytes(ta);
	TextBytes	b = shingle_text_bytes(tb);
	Size		budget = (Size) work_mem * 1024;
	ShingleSet	sa,
				sb;
	double		result;

	if (shingle_text_set(&a, &sh, &sa, &budget) && shingle_text_set(&b, &sh, &sb, &budget))
	{
		const ShingleSet *small = shingle_set_count(&sa) <= shingle_set_count(&sb) ? &sa : &sb;
		const ShingleSet *large = small == &sa ? &sb : &sa;
		int64		inter = small->has_zero && large->has_zero ? 1 : 0;
		Size		i;

		for (i = 0; i < small->size; i++)
		{
			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			if (small->slots[i] != 0 && shingle_set_contains(large, small->slots[i]))
				inter++;
		}
		result = shingle_jaccard(inter, shingle_set_count(&sa), shingle_set_count(&sb));
	}
	else
		result = similarity_sorted(&a, &b, &sh);
	shingle_text_bytes_free(&a);
	shingle_text_bytes_free(&b);
	PG_RETURN_FLOAT8(result);
}

/* ---- stored sets ---- */

PG_FUNCTION_INFO_V1(shingle_set);
Datum
shingle_set(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(1), PG_GETARG_TEXT_PP(2));
	Size		count;
	int64	   *values = shingle_sorted_set(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &sh, &count);
	Datum	   *elems;
	Size		i;

	if (count > MaxAllocSize / sizeof(int64) - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("text has too many distinct shingles for a shingle set (%zu)", count),
				 errhint("Compare such texts with shingle_similarity(text, text).")));
	elems = palloc(Max(count, 1) * sizeof(Datum));
	for (i = 0; i < count; i++)
		elems[i] = Int64GetDatum(values[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) count, INT8OID, 8, FLOAT8PASSBYVAL,
										  TYPALIGN_DOUBLE));
}

/*
 * The elements of a shingle set, checked: one dimension, no NULL, strictly
 * ascending.  what names it in the error ("argument 1").
 */

PG_FUNCTION_INFO_V1(shingle_set_similarity);
Datum
shingle_set_similarity(PG_FUNCTION_ARGS)
{
	ArrayType  *arr_a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *arr_b = PG_GETARG_ARRAYTYPE_P(1);
	Size		na,
				nb;
	int64	   *a = shingle_set_elements(arr_a, &na, "argument 1");
	int64	   *b = shingle_set_elements(arr_b, &nb, "argument 2");

	PG_RETURN_FLOAT8(shingle_sorted_jaccard(a, na, b, nb));
}
