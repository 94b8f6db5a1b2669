/*
 * hamming_hits.h
 *	  The rows a "hamming" scan found (HammingHit), in (distance, heap TID)
 *	  order: their comparison and the bounded max-heap that keeps the
 *	  nearest ones, shared by the scans of both widths (hamming_scan.c,
 *	  hamming128.c).
 */
#ifndef HAMMING_HITS_H
#define HAMMING_HITS_H

#include "postgres.h"

#include "catalog/index.h"
#include "storage/block.h"
#include "storage/itemptr.h"

/*
 * A row a scan found: its heap TID, its distance (to the ordering's query,
 * else to the first condition's center, else 0), and where its entry was
 * (an entry never leaves its page: VACUUM fills a hole with an entry of the
 * same page)
 */
typedef struct HammingHit
{
	ItemPointerData tid;
	uint16		distance;
	uint16		slot;			/* the entry's place on its page when read */
	BlockNumber blkno;			/* the index page of the entry */
} HammingHit;

static inline int
hamming_hit_cmp(const HammingHit *a, const HammingHit *b)
{
	int64		ta;
	int64		tb;

	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	/* the order of ItemPointerCompare, inline: the sorts' hot path */
	ta = itemptr_encode((ItemPointer) &a->tid);
	tb = itemptr_encode((ItemPointer) &b->tid);
	return ta < tb ? -1 : ta > tb ? 1 : 0;
}

static inline int
hamming_hit_qsort_cmp(const void *a, const void *b)
{
	return hamming_hit_cmp((const HammingHit *) a, (const HammingHit *) b);
}

/* a max-heap of n hits: sift the one at i down (the root is the worst kept) */
static inline void
hamming_heap_sift_down(HammingHit *heap, int n, int i)
{
	for (;;)
	{
		int			largest = i;
		int			l = 2 * i + 1;
		int			r = l + 1;
		HammingHit	tmp;

		if (l < n && hamming_hit_cmp(&heap[l], &heap[largest]) > 0)
			largest = l;
		if (r < n && hamming_hit_cmp(&heap[r], &heap[largest]) > 0)
			largest = r;
		if (largest == i)
			return;
		tmp = heap[i];
		heap[i] = heap[largest];
		heap[largest] = tmp;
		i = largest;
	}
}

/* add hit to a max-heap of n hits, which has room for it */
static inline void
hamming_heap_push(HammingHit *heap, int n, HammingHit hit)
{
	int			i = n;

	heap[i] = hit;
	while (i > 0 && hamming_hit_cmp(&heap[(i - 1) / 2], &heap[i]) < 0)
	{
		HammingHit	tmp = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

#endif							/* HAMMING_HITS_H */
