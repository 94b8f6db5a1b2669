/*
 * neardup.h
 *	  Near-duplicate texts (neardup.c): what the ~= operator, the function
 *	  simhash_similar(text, text, min_similarity) and the text operator
 *	  classes of the hamming index take a near-duplicate to be, the radius
 *	  of each threshold, and a scan's query of a text or a simhash_doc (the
 *	  keys and the 256-bit fingerprint the index keeps of them are in
 *	  neardup_key.h).
 *
 * Two texts are near-duplicates at threshold t when both have shingles,
 * their 256-bit shingle fingerprints (shingle_simhash256(body, 3, 'auto'))
 * lie within neardup_radius(t) bits, and shingle_similarity(a, b, 3,
 * 'auto') is at least t.  A text without shingles (no letter or digit) is
 * the near-duplicate of no text.
 */
#ifndef SIMHASH_NEARDUP_H
#define SIMHASH_NEARDUP_H

#include "neardup_key.h"

/* thresholds: 0.5 .. 1 */
#define NEARDUP_MIN_THRESHOLD	0.5
#define NEARDUP_MAX_THRESHOLD	1.0

/* the radius within which a near-duplicate at min_similarity lies (checked) */
extern int	neardup_radius(double min_similarity);

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
