/*
 * neardup.c
 *	  Near-duplicate texts: the test behind the ~= operators and
 *	  simhash_similar(text, text, min_similarity), the type simhash_doc (a
 *	  text with its threshold), the radius of each threshold, and the
 *	  fingerprints and queries of the hamming index's text operator classes
 *	  (the definition is in neardup.h).
 *
 * A simhash_doc is a varlena: the threshold (a float8, stored unaligned)
 * and the text's bytes.  Its text form is the threshold, a colon and the
 * text ("0.8:the text"), so that a value reads back as it was written.
 *
 * The right operand of a comparison is usually the same in every call (the
 * query, or a row an exclusion constraint checks), so each call site keeps
 * the shingles and fingerprint of its last right operand, and the backend
 * its last one with the verdicts on the rows compared with it.
 */
#include "neardup.h"
#include "mih.h"
#include "settings.h"
#include "shingle_set.h"

#include <math.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

/*
 * The radius of each threshold 0.5, 0.55, .. 0.95: the least distance
 * within which 99.5% of the pairs of texts of at least that shingle
 * similarity lie on the evaluation corpus (doc/threshold.md); between two
 * steps the radius of the step below, from 0.95 to 1 that of 0.95.
 */
static const int neardup_radii[] = {80, 74, 70, 65, 61, 54, 49, 43, 36, 26};

int
neardup_radius(double min_similarity)
{
	int			step;

	if (isnan(min_similarity) || min_similarity < NEARDUP_MIN_THRESHOLD ||
		min_similarity > NEARDUP_MAX_THRESHOLD)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_similarity must be between %g and %g, not %g",
						NEARDUP_MIN_THRESHOLD, NEARDUP_MAX_THRESHOLD, min_similarity),
				 errhint("min_similarity is the least shingle_similarity of two near-duplicates, such as 0.8.")));
	step = (int) floor((min_similarity - NEARDUP_MIN_THRESHOLD) * 20 + 1e-9);
	return neardup_radii[Min(step, (int) lengthof(neardup_radii) - 1)];
}

/* ---- a text's shingles and fingerprint ---- */

typedef struct TextShingles
{
	int64	   *set;			/* sorted, distinct */
	Size		count;
	uint64		fp[NEARDUP_QUARTERS];
} TextShingles;

static void
text_shingles(const char *data, int len, TextShingles *ts)
{
	ts->set = shingle_sorted_set(data, len, &shingle_text_shingling, &ts->count);
	shingle_set_quarters(ts->set, ts->count, ts->fp);
}

static int
fingerprint_distance(const uint64 *a, const uint64 *b)
{
	int			d = 0;
	int			i;

	for (i = 0; i < NEARDUP_QUARTERS; i++)
		d += pg_popcount64(a[i] ^ b[i]);
	return d;
}

/*
 * Is the text data, len near-duplicate of b: both have shingles, their
 * fingerprints lie within radius and their similarity is at least
 * min_similarity?  The similarity is tested first, on data's sorted set:
 * most candidates fail it, and then data's fingerprint, which costs more
 * than the set, is not computed.
 */
static bool
text_near(const char *data, int len, const TextShingles *b, int radius, double min_similarity)
{
	TextShingles a;
	bool		near;

	if (b->count == 0)
		return false;			/* a text without shingles */
	a.set = shingle_sorted_set(data, len, &shingle_text_shingling, &a.count);
	near = a.count > 0 && shingle_sorted_jaccard(a.set, a.count, b->set, b->count) >= min_similarity;
	if (near)
	{
		shingle_set_quarters(a.set, a.count, a.fp);
		near = fingerprint_distance(a.fp, b->fp) <= radius;
	}
	pfree(a.set);
	return near;
}

/* ---- simhash_doc ---- */

static struct varlena *
make_doc(const char *data, int len, double min_similarity)
{
	struct varlena *doc;
	float8		t = min_similarity;

	(void) neardup_radius(min_similarity);	/* checks it */
	doc = palloc(NEARDUP_DOC_HEADER + len);
	SET_VARSIZE(doc, NEARDUP_DOC_HEADER + len);
	memcpy(VARDATA(doc), &t, sizeof(float8));
	memcpy((char *) doc + NEARDUP_DOC_HEADER, data, len);
	return doc;
}

PG_FUNCTION_INFO_V1(simhash_doc_make);
Datum
simhash_doc_make(PG_FUNCTION_ARGS)
{
	text	   *body = PG_GETARG_TEXT_PP(0);

	PG_RETURN_POINTER(make_doc(VARDATA_ANY(body), VARSIZE_ANY_EXHDR(body), PG_GETARG_FLOAT8(1)));
}

PG_FUNCTION_INFO_V1(simhash_doc_in);
Datum
simhash_doc_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	char	   *colon = strchr(str, ':');
	char	   *number;
	double		t;

	if (colon == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "simhash_doc", str),
				 errdetail("A simhash_doc is written as its threshold, a colon and the text, such as \"0.8:the text\".")));
	number = pnstrdup(str, colon - str);
#if PG_VERSION_NUM >= 160000
	t = float8in_internal(number, NULL, "simhash_doc", str, NULL);
#else
	t = float8in_internal(number, NULL, "simhash_doc", str);
#endif
	pfree(number);
	PG_RETURN_POINTER(make_doc(colon + 1, strlen(colon + 1), t));
}

PG_FUNCTION_INFO_V1(simhash_doc_out);
Datum
simhash_doc_out(PG_FUNCTION_ARGS)
{
	struct varlena *doc = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	char	   *number = float8out_internal(neardup_doc_threshold(doc));
	int			len;
	const char *data = neardup_doc_data(doc, &len);

	PG_RETURN_CSTRING(psprintf("%s:%.*s", number, len, data));
}

PG_FUNCTION_INFO_V1(simhash_doc_body);
Datum
simhash_doc_body(PG_FUNCTION_ARGS)
{
	struct varlena *doc = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	int			len;
	const char *data = neardup_doc_data(doc, &len);

	PG_RETURN_TEXT_P(cstring_to_text_with_len(data, len));
}

PG_FUNCTION_INFO_V1(simhash_doc_threshold);
Datum
simhash_doc_threshold(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(neardup_doc_threshold(PG_DETOAST_DATUM(PG_GETARG_DATUM(0))));
}

/* ---- the comparisons ---- */

/*
 * A right operand with its shingles: the last one of a call site (in its
 * fn_extra), and the last one of the backend, for the calls that come each
 * through a new FmgrInfo and so keep nothing between them: an exclusion
 * constraint's check calls the operator so for every candidate, with the
 * same new row, after its index scan fingerprinted the same text
 * (neardup_query).  The backend keeps a text only when the text and its
 * shingles take at most work_mem, and until its transaction ends.  A
 * text's shingles depend on its bytes alone.
 */
typedef struct RightCache
{
	char	   *data;			/* NULL: empty */
	int			len;
	TextShingles shingles;
} RightCache;

/*
 * A verdict on a left operand against the backend's last right operand:
 * PostgreSQL checks the row of an INSERT ... ON CONFLICT twice, before and
 * after it inserts it, so each candidate is compared twice with it.  The
 * verdict depends on the two texts and the threshold alone.
 */
typedef struct Verdict
{
	char	   *data;
	int			len;
	double		min_similarity;
	bool		near;
} Verdict;

#define MAX_VERDICTS	64		/* a check's candidates are few: a text's near-duplicates */

static RightCache backend_last;
static Verdict backend_verdicts[MAX_VERDICTS];
static int	backend_nverdicts;
static Size backend_last_bytes; /* of the text, its shingles and the verdicts' texts */
static MemoryContext backend_last_cxt = NULL;

static bool
cache_holds(const RightCache *cache, const char *data, int len)
{
	return cache != NULL && cache->data != NULL && cache->len == len &&
		memcmp(cache->data, data, len) == 0;
}

static void
forget_backend_last(void)
{
	backend_last.data = NULL;
	backend_nverdicts = 0;
	backend_last_bytes = 0;
	MemoryContextReset(backend_last_cxt);
}

/* the verdict kept on the left operand a against the backend's last text, or NULL */
static const Verdict *
known_verdict(const char *a, int alen, double min_similarity)
{
	int			i;

	for (i = 0; i < backend_nverdicts; i++)
	{
		const Verdict *v = &backend_verdicts[i];

		if (v->len == alen && v->min_similarity == min_similarity && memcmp(v->data, a, alen) == 0)
			return v;
	}
	return NULL;
}

/* keep the verdict on a against the backend's last text, within work_mem */
static void
remember_verdict(const char *a, int alen, double min_similarity, bool near)
{
	Verdict    *v;

	if (backend_nverdicts == MAX_VERDICTS ||
		backend_last_bytes + alen > (Size) work_mem * 1024)
		return;
	v = &backend_verdicts[backend_nverdicts++];
	v->data = MemoryContextAlloc(backend_last_cxt, Max(alen, 1));
	memcpy(v->data, a, alen);
	v->len = alen;
	v->min_similarity = min_similarity;
	v->near = near;
	backend_last_bytes += alen;
}

static void
forget_at_xact_end(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		forget_backend_last();
}

/* the backend keeps a copy of data and its shingles ts, if they fit in work_mem */
static void
remember_in_backend(const char *data, int len, const TextShingles *ts)
{
	MemoryContext old;

	if (backend_last_cxt == NULL)
	{
		backend_last_cxt = AllocSetContextCreate(TopMemoryContext, "simhash last text",
												 ALLOCSET_SMALL_SIZES);
		RegisterXactCallback(forget_at_xact_end, NULL);
	}
	forget_backend_last();
	if ((Size) len + ts->count * sizeof(int64) > (Size) work_mem * 1024)
		return;
	backend_last_bytes = (Size) len + ts->count * sizeof(int64);
	old = MemoryContextSwitchTo(backend_last_cxt);
	backend_last.shingles = *ts;
	backend_last.shingles.set = palloc(Max(ts->count, 1) * sizeof(int64));
	memcpy(backend_last.shingles.set, ts->set, ts->count * sizeof(int64));
	backend_last.len = len;
	backend_last.data = palloc(Max(len, 1));
	memcpy(backend_last.data, data, len);
	MemoryContextSwitchTo(old);
}

static const TextShingles *
right_shingles(FunctionCallInfo fcinfo, const char *data, int len)
{
	RightCache *cache = (RightCache *) fcinfo->flinfo->fn_extra;
	TextShingles shingles;
	MemoryContext old;

	if (cache_holds(cache, data, len))
		return &cache->shingles;
	if (cache_holds(&backend_last, data, len))
		return &backend_last.shingles;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	/* shingled first: an error leaves the call site's cache as it was */
	text_shingles(data, len, &shingles);
	if (cache == NULL)
		cache = palloc0(sizeof(RightCache));
	else
	{
		pfree(cache->data);
		pfree(cache->shingles.set);
	}
	cache->data = palloc(Max(len, 1));
	memcpy(cache->data, data, len);
	cache->len = len;
	cache->shingles = shingles;
	MemoryContextSwitchTo(old);
	/* a call site new to the operand may be one of those that keep nothing */
	if (fcinfo->flinfo->fn_extra == NULL)
		remember_in_backend(data, len, &cache->shingles);
	fcinfo->flinfo->fn_extra = cache;
	return &cache->shingles;
}

static bool
near_texts(FunctionCallInfo fcinfo, const char *a, int alen, const char *b, int blen,
		   double min_similarity)
{
	int			radius = neardup_radius(min_similarity);	/* checked before any work */
	const TextShingles *right = right_shingles(fcinfo, b, blen);
	bool		against_backend_last = right == &backend_last.shingles;
	const Verdict *known;
	bool		result;

	if (right->count == 0)
		return false;
	if (against_backend_last && (known = known_verdict(a, alen, min_similarity)) != NULL)
		return known->near;
	result = text_near(a, alen, right, radius, min_similarity);
	if (against_backend_last)
		remember_verdict(a, alen, min_similarity, result);
	return result;
}

/* are the two text arguments near-duplicates at min_similarity? */
static bool
near_text_args(FunctionCallInfo fcinfo, double min_similarity)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	text	   *b = PG_GETARG_TEXT_PP(1);

	return near_texts(fcinfo, VARDATA_ANY(a), VARSIZE_ANY_EXHDR(a),
					  VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), min_similarity);
}

/* text ~= text: at simhash.similarity_threshold */
PG_FUNCTION_INFO_V1(simhash_text_near);
Datum
simhash_text_near(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(near_text_args(fcinfo, simhash_text_threshold()));
}

/* simhash_similar(text, text, min_similarity) */
PG_FUNCTION_INFO_V1(simhash_text_similar);
Datum
simhash_text_similar(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(near_text_args(fcinfo, PG_GETARG_FLOAT8(2)));
}

/* text ~= simhash_doc: at the doc's threshold */
PG_FUNCTION_INFO_V1(simhash_text_near_doc);
Datum
simhash_text_near_doc(PG_FUNCTION_ARGS)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	struct varlena *b = PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	int			blen;
	const char *bdata = neardup_doc_data(b, &blen);

	PG_RETURN_BOOL(near_texts(fcinfo, VARDATA_ANY(a), VARSIZE_ANY_EXHDR(a), bdata, blen,
							  neardup_doc_threshold(b)));
}

/* simhash_doc ~= simhash_doc: at the higher of the two thresholds (commutative) */
PG_FUNCTION_INFO_V1(simhash_doc_near);
Datum
simhash_doc_near(PG_FUNCTION_ARGS)
{
	struct varlena *a = PG_DETOAST_DATUM(PG_GETARG_DATUM(0));
	struct varlena *b = PG_DETOAST_DATUM(PG_GETARG_DATUM(1));
	int			alen;
	int			blen;
	const char *adata = neardup_doc_data(a, &alen);
	const char *bdata = neardup_doc_data(b, &blen);

	PG_RETURN_BOOL(near_texts(fcinfo, adata, alen, bdata, blen,
							  Max(neardup_doc_threshold(a), neardup_doc_threshold(b))));
}

PG_FUNCTION_INFO_V1(simhash_similarity_radius);
Datum
simhash_similarity_radius(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(neardup_radius(PG_GETARG_FLOAT8(0)));
}

/* ---- the queries of the hamming index's text operator classes ---- */

int
neardup_query_radius(Datum arg, bool is_doc)
{
	if (is_doc)
		return neardup_radius(neardup_doc_threshold(PG_DETOAST_DATUM(arg)));
	return neardup_radius(simhash_similarity_threshold);
}

void
neardup_quarter_radii(int radius, int *radii)
{
	simhash_spread_radii(radii, NEARDUP_QUARTERS, radius + 1);
}

bool
neardup_query(Datum arg, bool is_doc, uint64 *quarters, int *radius)
{
	int			len;
	struct varlena *v;
	const char *data = neardup_key_text(arg, is_doc, &len, &v);

	*radius = neardup_radius(is_doc ? neardup_doc_threshold(v) : simhash_similarity_threshold);
	if (!cache_holds(&backend_last, data, len))
	{
		TextShingles ts;

		text_shingles(data, len, &ts);
		remember_in_backend(data, len, &ts);
		memcpy(quarters, ts.fp, sizeof(ts.fp));
		pfree(ts.set);
		return ts.count > 0;
	}
	memcpy(quarters, backend_last.shingles.fp, sizeof(backend_last.shingles.fp));
	return backend_last.shingles.count > 0;
}
