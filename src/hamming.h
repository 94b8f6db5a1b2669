/*
 * hamming.h
 *	  The "hamming" index access method: strategy numbers, page layout,
 *	  metapage, scan state and the entry points of its files
 *	  (hamming_handler.c, hamming_build.c, hamming_insert.c, hamming_scan.c,
 *	  hamming_vacuum.c, hamming_work.c, hamming_cost.c, hamming_validate.c,
 *	  hamming_utils.c, hamming128.c).
 *
 * The index has two parts.  The probe tables, written by CREATE INDEX and
 * REINDEX, hold every fingerprint of the table four times, each copy sorted
 * on a different 16-bit block of the fingerprint (multi-index hashing,
 * Norouzi et al. 2012): table 0 holds the fingerprints sorted as unsigned
 * numbers with their heap TIDs (packed pages, as below), tables 1..3 the
 * fingerprints rotated left by 16, 32 and 48 bits, sorted, without TIDs.  A
 * directory per table maps the top dir_bits bits of its sort key to the
 * first entry with that prefix.  A query "within k bits of q" is answered by
 * reading, in table j, the buckets within r_j bits of q's block j, where
 * sum(r_j + 1) >= k + 1 (a row within k bits is within r_j bits of q in some
 * block j); each row is taken from the first table where its block is
 * within r_j, so it is found once, and a fingerprint found in tables 1..3 is
 * looked up in table 0 for its TIDs.  The probe tables never change after
 * the build except that VACUUM clears the TIDs of dead entries of table 0
 * (tombstones, removed by the next REINDEX).  An index too large for
 * maintenance_work_mem at build time has no probe tables.
 *
 * Behind them (and in an index without them) is the tail: packed pages of
 * unordered entries.  Each page holds up to HAMMING_PAGE_CAPACITY entries as
 * two arrays, the 64-bit fingerprints first and their heap TIDs after, so
 * that reading it is a tight XOR-and-popcount loop.  Rows whose fingerprint
 * is NULL are kept on pages of their own (only their TIDs count there), so
 * that a scan without conditions returns every row.  Inserts append to the
 * current insert page of their kind, else to a tail page that VACUUM listed
 * in the metapage as at most half full, else to a new page; VACUUM removes
 * dead tail entries in place by moving the page's last entry into the hole.
 * Every change goes through generic WAL.
 *
 * A radius scan ("fp <@ simhash_ball(q, k)", "fp % q", "fp = q") either
 * probes the tables and reads the tail, or reads every page (a pass), which
 * ever hamming_work.c models cheaper; both are exact.  An ordering "ORDER BY
 * fp <-> q" is answered nearest first: by probes of widening radius while
 * they are cheaper than a pass, then by passes over the index, each
 * returning the next batch of entries in (distance, heap TID) order (ties
 * therefore come in physical order of the heap rows), with NULL fingerprints
 * last.
 */
#ifndef HAMMING_H
#define HAMMING_H

#include "simhash.h"
#include "hamming_hits.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"

/* cost-based vacuum delay; 18 tells it whether ANALYZE (never, here) is asking */
#if PG_VERSION_NUM >= 180000
#define hamming_vacuum_delay()	vacuum_delay_point(false)
#else
#define hamming_vacuum_delay()	vacuum_delay_point()
#endif

/* strategies of simhash_hamming_ops: SIMHASH_STRATEGY_* of strategy.h */
#define HAMMING_NSTRATEGIES			4

/* page layout */
#define HAMMING_METAPAGE_BLKNO		0
#define HAMMING_PAGE_ID				0xFF8A	/* identifies pages of this method */
#define HAMMING_MAGIC				0x48414D31	/* "HAM1" */
#define HAMMING_VERSION				2	/* 1: no probe tables */

/* page kinds (flags of HammingPageOpaqueData) */
#define HAMMING_META				(1 << 0)
#define HAMMING_DATA				(1 << 1)	/* fingerprints and TIDs */
#define HAMMING_NULLS				(1 << 2)	/* TIDs of rows whose fingerprint is NULL */
#define HAMMING_SORTED				(1 << 3)	/* with HAMMING_DATA: a page of probe table 0 */
#define HAMMING_KEYS				(1 << 4)	/* sort keys of probe table 1..3 */
#define HAMMING_DIRECTORY			(1 << 5)	/* a probe table's directory */
#define HAMMING_WIDE				(1 << 6)	/* with DATA or NULLS: an index of simhash128 (hamming128.c) */

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


#define HAMMING_PAGE_SPACE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(HammingPageOpaqueData)))
/* entries per data page: a uint64 and an ItemPointerData each */
#define HAMMING_PAGE_CAPACITY		(HAMMING_PAGE_SPACE / (sizeof(uint64) + sizeof(ItemPointerData)))
#define HAMMING_KEYS_CAPACITY		(HAMMING_PAGE_SPACE / sizeof(uint64))
#define HAMMING_DIRECTORY_CAPACITY	(HAMMING_PAGE_SPACE / sizeof(uint32))

#define HammingPageFingerprints(page)	((uint64 *) HammingPageContents(page))
#define HammingPageKeys(page)			((uint64 *) HammingPageContents(page))
#define HammingPageDirectory(page)		((uint32 *) HammingPageContents(page))
#define HammingPageTids(page) \
	((ItemPointerData *) (HammingPageContents(page) + HAMMING_PAGE_CAPACITY * sizeof(uint64)))

/* insert targets in the metapage: one per page kind */
#define HAMMING_TARGET_DATA			0
#define HAMMING_TARGET_NULLS		1

/* pages that VACUUM found at most half full, for inserts to fill again */
#define HAMMING_MAX_FREE_PAGES		1000

/* probe tables: four blocks of 16 bits */
#define HAMMING_NTABLES				4
#define HAMMING_BLOCK_BITS			16
#define HAMMING_MAX_DIR_BITS		16
#define HAMMING_BUCKET_ROWS			8	/* rows per directory bucket the build aims at */

typedef struct HammingMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber insert_page[2]; /* page that takes new entries of each kind */
	uint32		nfree;
	BlockNumber free_page[HAMMING_MAX_FREE_PAGES];
	/* the probe tables (version 2; all zero when there are none) */
	uint32		ntables;		/* 0 or HAMMING_NTABLES */
	uint32		dir_bits;		/* a directory has 2^dir_bits + 1 entries */
	uint32		nsorted;		/* entries in each table */
	BlockNumber table_start[HAMMING_NTABLES];	/* first page of each table's entries */
	BlockNumber dir_start[HAMMING_NTABLES]; /* first page of each table's directory */
	BlockNumber tail_start;		/* first page after the probe tables */
} HammingMetaPageData;

#define HammingPageGetMeta(page) ((HammingMetaPageData *) HammingPageContents(page))

static inline bool
hamming_page_is(Page page, uint16 kind)
{
	return !PageIsNew(page) && HammingPageGetOpaque(page)->page_id == HAMMING_PAGE_ID &&
		(HammingPageGetOpaque(page)->flags & kind) != 0;
}

/*
 * index options: WITH (probe_tables = off) builds tail pages only;
 * WITH (max_distance = k) fixes the threshold of % in this index (the
 * radius of an exclusion constraint), -1 (unset) leaves it to the setting
 */
typedef struct HammingOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	bool		probe_tables;
	int			max_distance;
} HammingOptions;

/* the probe tables of an index, as its metapage describes them */
typedef struct HammingTables
{
	uint32		ntables;		/* 0: none */
	uint32		dir_bits;
	uint32		nsorted;
	BlockNumber table_start[HAMMING_NTABLES];
	BlockNumber dir_start[HAMMING_NTABLES];
	BlockNumber tail_start;		/* first page of the tail */
	BlockNumber table0_pages;
} HammingTables;

/* hamming_probe(): does a fingerprint at this distance satisfy the scan? take a row */
typedef bool (*HammingProbeMatch) (void *arg, simhash fp, int distance);
typedef bool (*HammingProbeEmit) (void *arg, const HammingHit *hit);

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

	/* the probe tables, read when the scan starts */
	HammingTables tables;
	bool		probing;		/* unordered: hits came from the tables, the tail is next */
	int			ring;			/* ordered: every row within ring bits has been returned */
	bool		rings_over;		/* ordered: passes from now on */
	HammingHit *tail;			/* ordered, by rings: the tail's nearest rows, sorted */
	int			ntail;
	int			next_tail;		/* the first not in a ring yet */
	int			tail_covered;	/* every row of the tail within this is in tail */
	BlockNumber tail_pages;		/* the tail when read (a pass reads it again) */
	double		tail_entries;

	/* returned rows not yet handed out: hits of one page, or one ordered batch */
	HammingHit *hits;
	int			nhits;
	int			next_hit;
	int			max_hits;		/* room in hits */
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

	/*
	 * Index-only scans and scans under a non-MVCC snapshot keep the index
	 * page of the row last returned pinned (hamming_vacuum.c says why).
	 */
	bool		keep_pins;
	Buffer		pinned;
} HammingScanOpaqueData;

typedef HammingScanOpaqueData *HammingScanOpaque;

/* hamming_utils.c */
extern void hamming_init_reloptions(void);
extern bytea *hamming_options(Datum reloptions, bool validate);
extern int	hamming_similar_radius(Relation index);
extern void hamming_init_page(Page page, uint16 kind);
extern void hamming_init_metapage(Page page);
extern Buffer hamming_new_buffer(Relation index);
extern void hamming_check_page(Relation index, Page page, BlockNumber blkno);
extern Buffer hamming_lock_page(Relation index, BlockNumber blkno, int mode,
								BufferAccessStrategy strategy);

extern void hamming_read_tables(Relation index, HammingTables *tables);
extern BlockNumber hamming_pass_next(const HammingTables *tables, BlockNumber blkno);
extern void hamming_table_radii(int *radius, int k);
extern void hamming_scan_init_orderbys(IndexScanDesc scan, int norderbys);
extern void hamming_scan_set_keys(IndexScanDesc scan, ScanKey keys, ScanKey orderbys);

/* hamming_probe.c */
extern bool hamming_probe(Relation index, const HammingTables *tables, simhash query, int k,
						  HammingProbeMatch match, HammingProbeEmit emit, void *arg);

/* hamming_build.c */
extern IndexBuildResult *hamming_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void hamming_build_empty(Relation index);
extern char *hamming_build_phase_name(int64 phase);

/* hamming_insert.c: append to a page if it takes the entry; append to a page with room */
typedef bool (*HammingTryAppend) (Relation index, BlockNumber blkno, uint16 kind, const void *entry,
								  ItemPointer tid);
typedef void (*HammingAppend) (Page page, const void *entry, ItemPointer tid);
extern void hamming_insert_entry(Relation index, int target, uint16 kind, const void *entry,
								 ItemPointer tid, HammingTryAppend try_append, HammingAppend append);
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

/* hamming_work.c */
extern int	hamming_hits_limit(void);
extern double hamming_pass_work(double pages, double entries);
extern double hamming_probe_work(const HammingTables *tables, int k);
extern bool hamming_probe_pays(const HammingTables *tables, int k, double tail_pages,
							   double tail_entries);

/* hamming_cost.c */
extern void hamming_cost_estimate(PlannerInfo *root, IndexPath *path, double loop_count,
								  Cost *indexStartupCost, Cost *indexTotalCost,
								  Selectivity *indexSelectivity, double *indexCorrelation,
								  double *indexPages);

/* hamming128.c: the same entry points for an index of simhash128 */
extern IndexBuildResult *hamming128_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern bool hamming128_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid);
extern IndexBulkDeleteResult *hamming128_bulk_delete(IndexVacuumInfo *info,
													 IndexBulkDeleteResult *stats,
													 IndexBulkDeleteCallback callback,
													 void *callback_state);
extern IndexBulkDeleteResult *hamming128_vacuum_cleanup(IndexVacuumInfo *info,
														IndexBulkDeleteResult *stats);
extern IndexScanDesc hamming128_begin_scan(Relation index, int nkeys, int norderbys);
extern void hamming128_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
							  ScanKey orderbys, int norderbys);
extern bool hamming128_get_tuple(IndexScanDesc scan, ScanDirection dir);
extern int64 hamming128_get_bitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void hamming128_end_scan(IndexScanDesc scan);
extern void hamming128_cost_estimate(PlannerInfo *root, IndexPath *path, double loop_count,
									 Cost *indexStartupCost, Cost *indexTotalCost,
									 Selectivity *indexSelectivity, double *indexCorrelation,
									 double *indexPages);

/* hamming_validate.c */
extern bool hamming_validate(Oid opclassoid);

#endif							/* HAMMING_H */
