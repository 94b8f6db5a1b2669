/*
 * hamming.h
 *	  The "hamming" index access method: strategy numbers, page layout,
 *	  metapage, scan state and the entry points of its files
 *	  (hamming_build.c, hamming_insert.c, hamming_scan.c, hamming_vacuum.c,
 *	  hamming_cost.c, hamming_validate.c, hamming_utils.c).
 *
 * The index is a heap of packed entries: block 0 is a metapage, every other
 * block holds up to HAMMING_PAGE_CAPACITY entries as two arrays, the 64-bit
 * fingerprints first and their heap TIDs after, so that a scan is a tight
 * XOR-and-popcount loop over whole pages.  Rows whose fingerprint is NULL
 * are kept on pages of their own (only their TIDs count there), so that a
 * scan without conditions returns every row.  Entries are unordered: inserts
 * append to the current insert page of their kind, else to a page that
 * VACUUM listed in the metapage as at most half full, else to a new page;
 * VACUUM removes dead entries in place by moving the page's last entry into
 * the hole.  Every change goes through generic WAL.
 *
 * Every scan reads every page: a radius condition ("fp <@ simhash_ball(q, k)",
 * "fp % q", "fp = q") keeps the entries within the radius, exactly; an
 * ordering "ORDER BY fp <-> q" is answered nearest first by passes over the
 * index, each returning the next batch of entries in (distance, heap TID)
 * order (ties therefore come in physical order of the heap rows), with NULL
 * fingerprints last.
 */
#ifndef HAMMING_H
#define HAMMING_H

#include "radius.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"

/* strategies of simhash_hamming_ops: SIMHASH_STRATEGY_* of radius.h */
#define HAMMING_NSTRATEGIES			4

/* page layout */
#define HAMMING_METAPAGE_BLKNO		0
#define HAMMING_PAGE_ID				0xFF8A	/* identifies pages of this method */
#define HAMMING_MAGIC				0x48414D31	/* "HAM1" */
#define HAMMING_VERSION				1

/* page kinds (flags of HammingPageOpaqueData) */
#define HAMMING_META				(1 << 0)
#define HAMMING_DATA				(1 << 1)	/* fingerprints and TIDs */
#define HAMMING_NULLS				(1 << 2)	/* TIDs of rows whose fingerprint is NULL */

typedef struct HammingPageOpaqueData
{
	uint16		flags;
	uint16		nentries;
	uint16		unused;
	uint16		page_id;		/* HAMMING_PAGE_ID */
} HammingPageOpaqueData;

typedef HammingPageOpaqueData *HammingPageOpaque;

#define HammingPageGetOpaque(page) ((HammingPageOpaque) PageGetSpecialPointer(page))
#define HammingPageContents(page)	((char *) (page) + MAXALIGN(SizeOfPageHeaderData))

/* entries per page: a uint64 and an ItemPointerData each */
#define HAMMING_PAGE_CAPACITY \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(HammingPageOpaqueData))) / \
	 (sizeof(uint64) + sizeof(ItemPointerData)))

#define HammingPageFingerprints(page)	((uint64 *) HammingPageContents(page))
#define HammingPageTids(page) \
	((ItemPointerData *) (HammingPageContents(page) + HAMMING_PAGE_CAPACITY * sizeof(uint64)))

/* insert targets in the metapage: one per page kind */
#define HAMMING_TARGET_DATA			0
#define HAMMING_TARGET_NULLS		1

/* pages that VACUUM found at most half full, for inserts to fill again */
#define HAMMING_MAX_FREE_PAGES		1000

typedef struct HammingMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber insert_page[2]; /* page that takes new entries of each kind */
	uint32		nfree;
	BlockNumber free_page[HAMMING_MAX_FREE_PAGES];
} HammingMetaPageData;

#define HammingPageGetMeta(page) ((HammingMetaPageData *) HammingPageContents(page))

static inline bool
hamming_page_is(Page page, uint16 kind)
{
	return !PageIsNew(page) && HammingPageGetOpaque(page)->page_id == HAMMING_PAGE_ID &&
		(HammingPageGetOpaque(page)->flags & kind) != 0;
}

/* one result of an ordered scan */
typedef struct HammingHit
{
	ItemPointerData tid;
	uint16		distance;
} HammingHit;

/* scan state */
typedef struct HammingScanOpaqueData
{
	/* conditions: a row matches when it is within radius[i] of center[i] for every i */
	int			nconds;
	simhash    *center;
	int		   *radius;
	bool		nothing;		/* some condition can match no row */

	/* ordering */
	bool		ordered;
	simhash		query;

	/* returned rows not yet handed out: hits of one page, or one ordered batch */
	HammingHit *hits;
	int			nhits;
	int			next_hit;
	int			batch_size;		/* ordered: entries per pass */

	/* where the scan stands */
	BlockNumber next_block;		/* unordered, or NULL rows of an ordered scan */
	BlockNumber nblocks;		/* index size when that page-by-page scan began */
	bool		started;		/* counted in the statistics */
	bool		done;			/* ordered: every fingerprint is in hits */
	bool		nulls_phase;	/* ordered: every fingerprint returned, NULL rows now */
	bool		have_last;		/* ordered: the last row returned, to resume after */
	HammingHit	last;

	IndexTuple	null_itup;		/* what an index-only scan gets (no column is returned) */
} HammingScanOpaqueData;

typedef HammingScanOpaqueData *HammingScanOpaque;

/* hamming_utils.c */
extern bytea *hamming_options(Datum reloptions, bool validate);
extern void hamming_init_page(Page page, uint16 kind);
extern void hamming_init_metapage(Page page);
extern Buffer hamming_new_buffer(Relation index);
extern void hamming_check_page(Relation index, Page page, BlockNumber blkno);
extern Buffer hamming_lock_page(Relation index, BlockNumber blkno, int mode,
								BufferAccessStrategy strategy);

/* hamming_build.c */
extern IndexBuildResult *hamming_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void hamming_build_empty(Relation index);
extern char *hamming_build_phase_name(int64 phase);

/* hamming_insert.c */
extern bool hamming_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heapRel,
						   IndexUniqueCheck checkUnique,
						   bool indexUnchanged,
						   IndexInfo *indexInfo);

/* hamming_scan.c */
extern IndexScanDesc hamming_begin_scan(Relation index, int nkeys, int norderbys);
extern void hamming_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
						   ScanKey orderbys, int norderbys);
extern bool hamming_get_tuple(IndexScanDesc scan, ScanDirection dir);
extern int64 hamming_get_bitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void hamming_end_scan(IndexScanDesc scan);

/* hamming_vacuum.c */
extern IndexBulkDeleteResult *hamming_bulk_delete(IndexVacuumInfo *info,
												  IndexBulkDeleteResult *stats,
												  IndexBulkDeleteCallback callback,
												  void *callback_state);
extern IndexBulkDeleteResult *hamming_vacuum_cleanup(IndexVacuumInfo *info,
													 IndexBulkDeleteResult *stats);

/* hamming_cost.c */
extern void hamming_cost_estimate(PlannerInfo *root, IndexPath *path, double loop_count,
								  Cost *indexStartupCost, Cost *indexTotalCost,
								  Selectivity *indexSelectivity, double *indexCorrelation,
								  double *indexPages);

/* hamming_validate.c */
extern bool hamming_validate(Oid opclassoid);

#endif							/* HAMMING_H */
