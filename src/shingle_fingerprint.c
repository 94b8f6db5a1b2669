/*
 * shingle_fingerprint.c
 *	  shingle_simhash128(text, n, units, part): a 128-bit fingerprint of a
 *	  text's shingle set, whose halves are two independent 64-bit SimHashes
 *	  of the set; each part is another independent 128 bits of the same set.
 *
 * simhash128(text) votes each token or shingle as often as it occurs (with
 * the weighting asked for); here every distinct shingle of n units votes
 * once, in each half with its own hash.  The Hamming distance between two
 * such fingerprints follows the Jaccard similarity of the two shingle sets
 * more closely, so at the same recall a radius search brings fewer unrelated
 * candidates (measured in doc/fingerprint128.md).
 *
 * The definition is frozen, and written so that plain SQL reproduces it from
 * other frozen functions: for each hash h of shingle_set(text, n, units) the
 * high half votes the feature x || h and the low half the feature y || h
 * (h in decimal, as int8out writes it), each as an element of
 * simhash(text[]), where x and y are the letters 2 * part and 2 * part + 1
 * of the alphabet: 'a' and 'b' for part 0 (the default), 'c' and 'd' for
 * part 1, ... 'y' and 'z' for part 12.  So shingle_simhash128(t, n, u, p)
 * equals, with x = chr(97 + 2 * p) and y = chr(98 + 2 * p),
 *
 *	(int8send(simhash(ARRAY(SELECT x || h FROM unnest(shingle_set(t, n, u)) h))::bigint) ||
 *	 int8send(simhash(ARRAY(SELECT y || h FROM unnest(shingle_set(t, n, u)) h))::bigint))::simhash128
 *
 * which the regression test checks on every text it pins; this reads the
 * text once, and votes the set in the order it was built (votes add up in
 * any order).  A text without units has no shingles and fingerprint 0.
 * Parts 0 and 1 side by side make a 256-bit fingerprint of the set (the sum
 * of the two distances), for tables where 128 bits leave too many pairs just
 * below the similarity asked for among the candidates (doc/scale.md).
 */
#include "shingle_set.h"
#include "simhash128.h"
#include "feature_hash.h"

#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#define SHINGLE_VOTE_BATCH 256
#define SHINGLE_PARTS 13		/* letter pairs 'a' 'b' .. 'y' 'z' */

/* the same of a text, its shingle set built once for all the parts */
static void
shingle_parts(text *t, Shingling *sh, int first, int nparts, Simhash128 **out)
{
	Simhash128	parts[SHINGLE_PARTS_AT_ONCE];
	Size		count;
	int64	   *set = shingle_distinct_set(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), sh, &count);
	int			p;

	shingle_set_parts(set, count, first, nparts, parts);
	pfree(set);
	for (p = 0; p < nparts; p++)
		out[p] = simhash128_make(parts[p].hi, parts[p].lo);
}

PG_FUNCTION_INFO_V1(shingle_simhash128);
Datum
shingle_simhash128(PG_FUNCTION_ARGS)
{
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(1), PG_GETARG_TEXT_PP(2));
	int32		part = PG_GETARG_INT32(3);
	Simhash128 *result;

	if (part < 0 || part >= SHINGLE_PARTS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part must be between 0 and %d, not %d", SHINGLE_PARTS - 1, part),
				 errhint("Part 0 is the default 128 bits; parts 0 and 1 together make a 256-bit fingerprint.")));
	shingle_parts(PG_GETARG_TEXT_PP(0), &sh, part, 1, &result);
	PG_RETURN_SIMHASH128_P(result);
}

/*
 * shingle_simhash256(text, n, units): parts 0 and 1 of shingle_simhash128 as
 * a two-element array, the text read and its shingle set built once for both.
 */
PG_FUNCTION_INFO_V1(shingle_simhash256);
Datum
shingle_simhash256(PG_FUNCTION_ARGS)
{
	Shingling	sh = shingle_get_shingling(PG_GETARG_INT32(1), PG_GETARG_TEXT_PP(2));
	Oid			element = get_element_type(get_fn_expr_rettype(fcinfo->flinfo));
	Simhash128 *parts[SHINGLE_PARTS_AT_ONCE];
	Datum		elems[SHINGLE_PARTS_AT_ONCE];
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			p;

	if (!OidIsValid(element))
		elog(ERROR, "shingle_simhash256 must return an array");
	get_typlenbyvalalign(element, &typlen, &typbyval, &typalign);
	shingle_parts(PG_GETARG_TEXT_PP(0), &sh, 0, SHINGLE_PARTS_AT_ONCE, parts);
	for (p = 0; p < SHINGLE_PARTS_AT_ONCE; p++)
		elems[p] = Simhash128PGetDatum(parts[p]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, SHINGLE_PARTS_AT_ONCE, element, typlen, typbyval, typalign));
}
