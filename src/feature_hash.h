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

/*
 * XXH3_64bits_withSeed() itself, with its dispatch on the length done here:
 * the compiler does not inline the whole function, but features are short
 * (a word, a bigram, a shingle of a few hashes), and the code for short
 * inputs is small.  The inputs of 0 to 128 bytes take the very functions
 * XXH3_64bits_withSeed() calls for them (xxHash 0.8.x internals, so another
 * xxHash version takes the public function).
 */
#if XXH_VERSION_NUMBER >= 800 && XXH_VERSION_NUMBER < 900
#define SIMHASH_XXH3_SHORT(bytes, len) \
	((len) <= 16 ? \
	 XXH3_len_0to16_64b((const xxh_u8 *) (bytes), (len), XXH3_kSecret, SIMHASH_SEED) : \
	 XXH3_len_17to128_64b((const xxh_u8 *) (bytes), (len), XXH3_kSecret, sizeof(XXH3_kSecret), SIMHASH_SEED))
#else
#define SIMHASH_XXH3_SHORT(bytes, len) XXH3_64bits_withSeed((bytes), (len), SIMHASH_SEED)
#endif

static pg_attribute_always_inline uint64
simhash_feature_hash(const char *bytes, size_t len)
{
	if (likely(len <= 128))
		return SIMHASH_XXH3_SHORT(bytes, len);
	return XXH3_64bits_withSeed(bytes, len, SIMHASH_SEED);
}

/*
 * The same hash for inputs whose length class is known (1 to 3, 4 to 8, 9
 * to 16 bytes), without XXH3's branches on the length: a caller that sorts
 * its inputs by class (or knows it: a CJK bigram is 6 bytes) hashes them in
 * loops without unpredictable branches.
 */
#if XXH_VERSION_NUMBER >= 800 && XXH_VERSION_NUMBER < 900
#define SIMHASH_HASH_CLASS(name, xxh) \
static pg_attribute_always_inline uint64 \
name(const unsigned char *bytes, size_t len) \
{ \
	return xxh(bytes, len, XXH3_kSecret, SIMHASH_SEED); \
}
#else
#define SIMHASH_HASH_CLASS(name, xxh) \
static pg_attribute_always_inline uint64 \
name(const unsigned char *bytes, size_t len) \
{ \
	return simhash_feature_hash((const char *) bytes, len); \
}
#endif
SIMHASH_HASH_CLASS(simhash_hash_1to3, XXH3_len_1to3_64b)
SIMHASH_HASH_CLASS(simhash_hash_4to8, XXH3_len_4to8_64b)
SIMHASH_HASH_CLASS(simhash_hash_9to16, XXH3_len_9to16_64b)

/* simhash_feature_hash() of unsigned bytes */
static pg_attribute_always_inline uint64
simhash_feature_hash_bytes(const unsigned char *bytes, size_t len)
{
	return simhash_feature_hash((const char *) bytes, len);
}

static pg_attribute_always_inline uint64
simhash_shingle_hash(const uint64 *hashes, int n)
{
#ifdef WORDS_BIGENDIAN
	unsigned char buf[SIMHASH_MAX_SHINGLE * 8];
	int			i,
				b;

	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			buf[i * 8 + b] = (unsigned char) (hashes[i] >> (8 * b));
	return SIMHASH_XXH3_SHORT(buf, (size_t) n * 8);
#else
	return SIMHASH_XXH3_SHORT(hashes, (size_t) n * 8);
#endif
}

#endif							/* FEATURE_HASH_H */
