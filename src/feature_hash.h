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
#define SIMHASH128_SEED		128	/* pinned: the low half of every simhash128 */
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

/*
 * The hashes of inputs given as spans of one buffer, base[start[k] ..
 * end[k]) for k in [first, last), into out[k]: their numbers are listed by
 * length class (1-3, 4-8, 9-16 bytes, and the others: 0 or more than 16)
 * without a branch -- the four lists' lengths are 16-bit fields of one
 * word, so each number takes one store -- and each class is hashed in a loop
 * of its own, so that no branch depends on an input's length.  lists has
 * room for 4 lists of stride numbers each (last - first < stride < 2^16).
 * Returns the bitwise OR of the lengths (an upper bound's witness: it is at
 * most m only if every length is).
 */
/* the length class of 0 to 16 bytes, then of more (one lookup, no branch) */
static const uint8 simhash_length_class[18] = {
	3, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3
};

static pg_attribute_always_inline uint32
simhash_hash_spans(const unsigned char *base, const uint32 *start, const uint32 *end,
				   int first, int last, uint64 *out, uint16 *lists, int stride)
{
	const uint16 *l0 = lists,
			   *l1 = lists + stride,
			   *l2 = lists + 2 * stride,
			   *l3 = lists + 3 * stride;
	uint64		sizes = 0;		/* list c's length in bits 16c .. 16c + 15 */
	int			c0,
				c1,
				c2,
				c3,
				i,
				k;
	uint32		lengths = 0;

	for (k = first; k < last; k++)
	{
		uint32		l = end[k] - start[k];
		int			cls = simhash_length_class[Min(l, 17)];
		int			shift = 16 * cls;

		lists[cls * stride + (int) ((sizes >> shift) & 0xFFFF)] = (uint16) k;
		sizes += UINT64CONST(1) << shift;
		lengths |= l;
	}
	c0 = (int) (sizes & 0xFFFF);
	c1 = (int) ((sizes >> 16) & 0xFFFF);
	c2 = (int) ((sizes >> 32) & 0xFFFF);
	c3 = (int) (sizes >> 48);
	for (i = 0; i < c0; i++)
		out[l0[i]] = simhash_hash_1to3(base + start[l0[i]], end[l0[i]] - start[l0[i]]);
	for (i = 0; i < c1; i++)
		out[l1[i]] = simhash_hash_4to8(base + start[l1[i]], end[l1[i]] - start[l1[i]]);
	for (i = 0; i < c2; i++)
		out[l2[i]] = simhash_hash_9to16(base + start[l2[i]], end[l2[i]] - start[l2[i]]);
	for (i = 0; i < c3; i++)
		out[l3[i]] = simhash_feature_hash((const char *) base + start[l3[i]],
										  end[l3[i]] - start[l3[i]]);
	return lengths;
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

/*
 * The feature hash of the low half of a 128-bit fingerprint: XXH3-64 with
 * seed SIMHASH128_SEED of the feature's hash (the high half's, above)
 * written as 8 little-endian bytes.  A second hash of the same feature, made
 * without going over the text again; the high half stays simhash()'s.
 */
static pg_attribute_always_inline uint64
simhash_low_hash(uint64 hash)
{
	unsigned char buf[8];
	int			b;

	for (b = 0; b < 8; b++)
		buf[b] = (unsigned char) (hash >> (8 * b));
#if XXH_VERSION_NUMBER >= 800 && XXH_VERSION_NUMBER < 900
	return XXH3_len_4to8_64b(buf, 8, XXH3_kSecret, SIMHASH128_SEED);
#else
	return XXH3_64bits_withSeed(buf, 8, SIMHASH128_SEED);
#endif
}

#endif							/* FEATURE_HASH_H */
