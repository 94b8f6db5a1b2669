/*
 * tokenize.h
 *	  The tokenizer (tokenize.c): a UTF-8 text into the hashes of its
 *	  features (shingles of words, of characters, of units, of letters), one
 *	  at a time or in batches, and a text of the database's encoding into
 *	  UTF-8.
 */
#ifndef SIMHASH_TOKENIZE_H
#define SIMHASH_TOKENIZE_H

#include "simhash.h"

typedef enum SimhashFeatureKind
{
	SIMHASH_FEATURE_WORDS,		/* shingles of n tokens (words, CJK bigrams) */
	SIMHASH_FEATURE_CHARS,		/* n-grams of characters */
	SIMHASH_FEATURE_UNITS,		/* shingles of n tokens (words with '_', CJK
								 * characters) */
	SIMHASH_FEATURE_LETTERS		/* shingles of n letters, digits and CJK
								 * characters */
} SimhashFeatureKind;

typedef void (*SimhashFeatureCallback) (uint64 hash, void *arg);

extern void simhash_tokenize(const char *utf8, size_t len, SimhashFeatureKind kind,
							 int n, SimhashFeatureCallback emit, void *arg);
extern bool simhash_text_is_cjk(const char *utf8, size_t len);

/* the same features, handed over in batches (of a few hundred; faster) */
typedef void (*SimhashFeatureBatchCallback) (const uint64 *hashes, int n, void *arg);

extern void simhash_tokenize_batch(const char *utf8, size_t len, SimhashFeatureKind kind,
								   int n, SimhashFeatureBatchCallback emit, void *arg);

/* s (*len bytes) in UTF-8: s itself, or a palloc'd conversion */
extern char *simhash_as_utf8(const char *s, int *len);

#endif							/* SIMHASH_TOKENIZE_H */
