/*
 * shingle.h
 *	  Shingle sets and their Jaccard similarity (jaccard.c), used by the
 *	  verification of the whole-table functions (verify.c) and by the test
 *	  of near-duplicate texts (neardup.c); the fingerprint of a shingle set
 *	  (shingle_fingerprint.c).
 */
#ifndef SIMHASH_SHINGLE_H
#define SIMHASH_SHINGLE_H

#include "tokenize.h"

typedef struct Shingling
{
	int			n;				/* units in a shingle */
	SimhashFeatureKind kind;	/* SIMHASH_FEATURE_UNITS or _LETTERS */
	bool		automatic;		/* units 'auto': _LETTERS for a text written
								 * mostly in CJK characters, else _UNITS */
} Shingling;

extern Shingling shingle_get_shingling(int32 n, text *units);
extern int64 *shingle_distinct_set(const char *data, int len, const Shingling *sh, Size *count);
extern int64 *shingle_sorted_set(const char *data, int len, const Shingling *sh, Size *count);
extern double shingle_sorted_jaccard(const int64 *a, Size na, const int64 *b, Size nb);

/*
 * shingle_fingerprint.c: parts first .. first + nparts - 1 of
 * shingle_simhash128 of a shingle set (count distinct hashes, any order),
 * nparts at most SHINGLE_PARTS_AT_ONCE
 */
#define SHINGLE_PARTS_AT_ONCE 2	/* parts 0 and 1: the 256-bit fingerprint */
struct Simhash128;
extern void shingle_set_parts(const int64 *set, Size count, int first, int nparts,
							  struct Simhash128 *out);
struct ArrayType;
extern int64 *shingle_set_elements(struct ArrayType *arr, Size *count, const char *what);

#endif							/* SIMHASH_SHINGLE_H */
