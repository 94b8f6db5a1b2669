/*
 * feature_hash.h
 *	  Feature hashing, pinned: XXH3-64 with seed 0.  A shingle's hash is XXH3
 *	  over its tokens' hashes written as little-endian 64-bit words.  Inline,
 *	  because the tokenizer calls it once per token.
 */
#ifndef FEATURE_HASH_H
#define FEATURE_HASH_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#define SIMHASH_SEED		0	/* pinned: changing it changes every fingerprint */
#define SIMHASH_MAX_SHINGLE	16

static inline uint64
simhash_feature_hash(const char *bytes, size_t len)
{
	return XXH3_64bits_withSeed(bytes, len, SIMHASH_SEED);
}

static inline uint64
simhash_shingle_hash(const uint64 *hashes, int n)
{
#ifdef WORDS_BIGENDIAN
	unsigned char buf[SIMHASH_MAX_SHINGLE * 8];
	int			i,
				b;

	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			buf[i * 8 + b] = (unsigned char) (hashes[i] >> (8 * b));
	return XXH3_64bits_withSeed(buf, (size_t) n * 8, SIMHASH_SEED);
#else
	return XXH3_64bits_withSeed(hashes, (size_t) n * 8, SIMHASH_SEED);
#endif
}

#endif							/* FEATURE_HASH_H */
