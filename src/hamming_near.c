/*
 * hamming_near.c
 *	  The loop that every read of packed fingerprints runs (a pass, the
 *	  tail's pages, the tail pages a backend keeps): the slots of the
 *	  fingerprints within a range of distances of a center.
 */
#include "hamming.h"

/*
 * Eight entries at a time, with AVX-512's VPOPCNTQ, on x86-64 CPUs that
 * have it (chosen at the first page read); SIMHASH_NO_AVX512 builds
 * without (CI runs one build so, to test the loop used elsewhere).
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute) && !defined(SIMHASH_NO_AVX512) && \
	(defined(__clang__) ? __clang_major__ >= 6 : __GNUC__ >= 7)	/* compilers that know VPOPCNTQ */
#if __has_attribute(target)
#define HAMMING_AVX512
#include <immintrin.h>
#endif
#endif

/*
 * The slots of the first n fingerprints of a page whose distance to center
 * lies in [lo, hi], into slots; returns how many.
 */
typedef int (*HammingNearFn) (const uint64 *fps, int n, simhash center, int lo, int hi, uint16 *slots);

/* one at a time, from the first-th fingerprint, after found slots */
static inline int
near_slots_from(const uint64 *fps, int first, int n, simhash center, int lo, int hi, uint16 *slots, int found)
{
	int			i;

	for (i = first; i < n; i++)
	{
		int			d = hamming_popcount(fps[i] ^ center);

		if (d >= lo && d <= hi)
			slots[found++] = (uint16) i;
	}
	return found;
}

HAMMING_POPCOUNT_CLONES
static int
near_slots_one_by_one(const uint64 *fps, int n, simhash center, int lo, int hi, uint16 *slots)
{
	return near_slots_from(fps, 0, n, center, lo, hi, slots, 0);
}

#ifdef HAMMING_AVX512
__attribute__((target("avx512f,avx512vpopcntdq")))
static int
near_slots_avx512(const uint64 *fps, int n, simhash center, int lo, int hi, uint16 *slots)
{
	const __m512i vcenter = _mm512_set1_epi64((long long) center);
	const __m512i vlo = _mm512_set1_epi64(lo);
	const __m512i vhi = _mm512_set1_epi64(hi);
	int			found = 0;
	int			i;

	for (i = 0; i + 8 <= n; i += 8)
	{
		__m512i		d = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(fps + i), vcenter));
		__mmask8	near = _mm512_cmple_epu64_mask(d, vhi) & _mm512_cmpge_epu64_mask(d, vlo);

		while (near != 0)
		{
			slots[found++] = (uint16) (i + __builtin_ctz(near));
			near &= near - 1;
		}
	}
	return near_slots_from(fps, i, n, center, lo, hi, slots, found);
}
#endif

static HammingNearFn near_slots_fn = NULL;

int
hamming_near_slots(const uint64 *fps, int n, simhash center, int lo, int hi, uint16 *slots)
{
	if (hi < 0 || hi < lo)
		return 0;				/* no distance lies there */
	lo = Max(lo, 0);
	if (unlikely(near_slots_fn == NULL))
	{
		near_slots_fn = near_slots_one_by_one;
#ifdef HAMMING_AVX512
		__builtin_cpu_init();
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq"))
			near_slots_fn = near_slots_avx512;
#endif
	}
	return near_slots_fn(fps, n, center, lo, hi, slots);
}
