/*
 * neardup.h
 *	  Near-duplicate texts (neardup.c): what the ~= operator, the function
 *	  simhash_similar(text, text, min_similarity) and the text operator
 *	  classes of the hamming index take a near-duplicate to be, the radius
 *	  of each threshold, and the 256-bit fingerprint the index keeps of a
 *	  text.
 *
 * Two texts are near-duplicates at threshold t when both have shingles,
 * their 256-bit shingle fingerprints (shingle_simhash256(body, 3, 'auto'))
 * lie within neardup_radius(t) bits, and shingle_similarity(a, b, 3,
 * 'auto') is at least t.  A text without shingles (no letter or digit) is
 * the near-duplicate of no text.
 */
#ifndef SIMHASH_NEARDUP_H
#define SIMHASH_NEARDUP_H

#include "postgres.h"

#include "fmgr.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"				/* VARSIZE and friends left postgres.h in 16 */
#endif

/* the 256-bit fingerprint as four 64-bit quarters: part 0 hi, lo, part 1 hi, lo */
#define NEARDUP_QUARTERS	4
#define NEARDUP_BITS		256

/* thresholds: 0.5 .. 1 */
#define NEARDUP_MIN_THRESHOLD	0.5
#define NEARDUP_MAX_THRESHOLD	1.0

/* the radius within which a near-duplicate at min_similarity lies (checked) */
extern int	neardup_radius(double min_similarity);

/*
 * simhash_doc, a text with the threshold at which it is compared: a varlena
 * (4-byte header, detoasted) of the threshold (a float8, stored unaligned)
 * and the text's bytes
 */
#define NEARDUP_DOC_HEADER	(VARHDRSZ + sizeof(float8))

static inline double
neardup_doc_threshold(const struct varlena *doc)
{
	float8		t;

	memcpy(&t, VARDATA(doc), sizeof(float8));
	return t;
}

static inline const char *
neardup_doc_data(const struct varlena *doc, int *len)
{
	*len = VARSIZE(doc) - NEARDUP_DOC_HEADER;
	return (const char *) doc + NEARDUP_DOC_HEADER;
}

/*
 * The text of a key of a text operator class (a text, or a simhash_doc when
 * is_doc), *len bytes; *detoasted is the value it lies in (the key itself,
 * or a copy to pfree)
 */
static inline const char *
neardup_key_text(Datum key, bool is_doc, int *len, struct varlena **detoasted)
{
	if (is_doc)
	{
		*detoasted = PG_DETOAST_DATUM(key);
		return neardup_doc_data(*detoasted, len);
	}
	*detoasted = PG_DETOAST_DATUM_PACKED(key);
	*len = VARSIZE_ANY_EXHDR(*detoasted);
	return VARDATA_ANY(*detoasted);
}

/*
 * The query of a scan of a text operator class: the fingerprint of arg (a
 * text compared at simhash.similarity_threshold, or a simhash_doc at its
 * own threshold) and the radius of its threshold; false for a text without
 * shingles (no row matches)
 */
extern bool neardup_query(Datum arg, bool is_doc, uint64 *quarters, int *radius);
/* the radius of such a query's threshold alone */
extern int	neardup_query_radius(Datum arg, bool is_doc);

/*
 * The radius in each quarter that an index of text probes for a query
 * within radius bits, ascending: a row within radius bits lies within
 * radii[j] bits of the query in quarter j for at least one j, since the
 * radii + 1 add up to radius + 1 (49: 11, 11, 12, 12)
 */
extern void neardup_quarter_radii(int radius, int *radii);

#endif							/* SIMHASH_NEARDUP_H */
