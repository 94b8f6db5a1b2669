/*
 * shingle_set.h
 *	  Shingle sets (shingle_set.c): how a text is cut into shingles, its set
 *	  of shingle hashes (hashed, sorted, or read from a stored bigint[]),
 *	  their Jaccard similarity and their fingerprints; used by the SQL
 *	  functions on shingles (jaccard.c, shingle_fingerprint.c), the
 *	  verification of the whole-table functions (verify.c), the test of
 *	  near-duplicate texts (neardup.c) and the hamming index of text.
 */
#ifndef SIMHASH_SHINGLE_SET_H
#define SIMHASH_SHINGLE_SET_H

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
 * parts first .. first + nparts - 1 of shingle_simhash128 of a shingle set
 * (count distinct hashes, any order), nparts at most SHINGLE_PARTS_AT_ONCE
 */
#define SHINGLE_PARTS_AT_ONCE 2	/* parts 0 and 1: the 256-bit fingerprint */
struct Simhash128;
extern void shingle_set_parts(const int64 *set, Size count, int first, int nparts,
							  struct Simhash128 *out);
struct ArrayType;
extern int64 *shingle_set_elements(struct ArrayType *arr, Size *count, const char *what);

/* a set being built from a text within a budget of bytes */
/*
 * Open addressing over uint64 slots, 0 marking an empty slot (the hash 0
 * itself is kept in has_zero).  Load factor at most 1/2.
 */
typedef struct ShingleSet
{
	uint64	   *slots;
	Size		size;			/* a power of 2 */
	Size		used;			/* distinct nonzero hashes */
	bool		has_zero;
	Size	   *budget;			/* bytes left for all the sets of a call */
	bool		overflow;		/* could not grow within the budget */
} ShingleSet;

static inline uint64 *
shingle_set_slot(uint64 *slots, Size size, uint64 hash)
{
	Size		i = (Size) hash & (size - 1);

	while (slots[i] != 0 && slots[i] != hash)
		i = (i + 1) & (size - 1);
	return &slots[i];
}

static inline bool
shingle_set_contains(const ShingleSet *set, uint64 hash)
{
	if (hash == 0)
		return set->has_zero;
	return *shingle_set_slot(set->slots, set->size, hash) == hash;
}

static inline Size
shingle_set_count(const ShingleSet *set)
{
	return set->used + (set->has_zero ? 1 : 0);
}

/* a text's bytes in UTF-8 (converted from the database encoding if need be) */
typedef struct TextBytes
{
	char	   *utf8;
	int			len;
	bool		converted;
} TextBytes;

extern TextBytes shingle_text_bytes(text *t);
extern void shingle_text_bytes_free(TextBytes *b);
extern SimhashFeatureKind shingle_text_units(const TextBytes *b, const Shingling *sh);
extern bool shingle_text_set(TextBytes *b, const Shingling *sh, ShingleSet *set, Size *budget);
extern double shingle_jaccard(int64 inter, int64 size_a, int64 size_b);
/* shingles of 3 units 'auto': those of the near-duplicate test and the text index */
extern const Shingling shingle_text_shingling;
extern void shingle_set_quarters(const int64 *set, Size count, uint64 *quarters);
extern bool shingle_text_quarters(const char *data, int len, uint64 *quarters);

#endif							/* SIMHASH_SHINGLE_SET_H */
