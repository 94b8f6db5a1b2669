/*
 * shingle.h
 *	  Shingle sets and their Jaccard similarity (jaccard.c), used by the
 *	  verification of the whole-table functions (verify.c).
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
struct ArrayType;
extern int64 *shingle_set_elements(struct ArrayType *arr, Size *count, const char *what);

#endif							/* SIMHASH_SHINGLE_H */
