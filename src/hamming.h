/*
 * hamming.h
 *	  The "hamming" index access method: strategy numbers, page layout,
 *	  metapage, scan state and the entry points of its files
 *	  (hamming_handler.c, hamming_options.c, hamming_build.c,
 *	  hamming_insert.c, hamming_append.c, hamming_scan.c, hamming_probe.c,
 *	  hamming_merge.c, hamming_vacuum.c, hamming_work.c, hamming_cost.c,
 *	  hamming_validate.c, hamming_check.c, hamming_info.c, hamming_utils.c,
 *	  hamming_near.c, hamming_tail_cache.c, hamming128.c,
 *	  hamming_build_parallel.c, hamming_build_scan.c, hamming_write.c,
 *	  hamming_sort.c, hamming_map.c).
 *
 * The index has two parts.  The probe tables hold every fingerprint of the
 * table four times, each copy sorted on a different 16-bit block of the
 * fingerprint (multi-index hashing, Norouzi et al. 2012): table 0 holds the
 * fingerprints sorted as unsigned numbers with their heap TIDs (packed
 * pages, as below), tables 1..3 the fingerprints rotated left by 16, 32 and
 * 48 bits, sorted, without TIDs.  A directory per table maps the top
 * dir_bits bits of its sort key to the first entry with that prefix.  A
 * query "within k bits of q" is answered by reading, in table j, the
 * buckets within r_j bits of q's block j, where sum(r_j + 1) >= k + 1 (a
 * row within k bits is within r_j bits of q in some block j); each row is
 * taken from the first table where its block is within r_j, so it is found
 * once, and a fingerprint found in tables 1..3 is looked up in table 0 for
 * its TIDs.  CREATE INDEX writes the tables on consecutive blocks after the
 * metapage; a merge (hamming_merge.c) writes new ones wherever it finds
 * room, numbers their pages logically and lists each page's block in map
 * pages, with table 0's NULL TIDs after it; every page of a merge's tables
 * carries its generation.  Tables never change but for VACUUM clearing the
 * TIDs of dead entries of table 0 (tombstones, gone at the next merge or
 * REINDEX).
 *
 * Behind them (and in an index without them) is the tail: packed pages of
 * unordered entries.  Each page holds up to HAMMING_PAGE_CAPACITY entries as
 * two arrays, the 64-bit fingerprints first and their heap TIDs after, so
 * that reading it is a tight XOR-and-popcount loop.  Rows whose fingerprint
 * is NULL are kept on pages of their own (only their TIDs count there), so
 * that a scan without conditions returns every row.  The tail is the blocks
 * from tail_start to the end, less those a merge in progress reserved, and
 * the filled part of each range of pages that a merge freed.  Inserts
 * append to an insert page of their kind (of fingerprints, one of several,
 * so that concurrent writers append to pages of their own), else to a tail
 * page that VACUUM listed in the metapage as at most half full, else to the
 * next page of a freed range, else to a new page; VACUUM removes dead tail
 * entries in place by moving the page's last entry into the hole, and merges
 * the tail into new tables once it is large enough, as an insert does once
 * the tail is over the index's tail_limit.  Every change goes through
 * generic WAL.
 *
 * An index of text (the operator classes simhash_text_ops of text and
 * simhash_doc_ops of simhash_doc, neardup_key.h) keeps each row as four
 * entries: the four 64-bit quarters of its text's 256-bit fingerprint, with
 * the row's TID (a text without shingles as a NULL).  A row within R bits
 * of a query is within R / 4 bits of it in some quarter, so a scan for
 * "body ~= q" looks for the entries within R / 4 bits of any of q's
 * quarters (each row once) and has the executor recheck the operator on
 * the row: the distance of all 256 bits and the shingle similarity.
 *
 * A radius scan ("fp <@ simhash_ball(q, k)", "fp % q", "fp = q") either
 * probes the tables and reads the tail, or reads table 0 and the tail (a pass), which
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
#include "access/relscan.h"
#include "access/transam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/buffile.h"

/* cost-based vacuum delay; 18 tells it whether ANALYZE (never, here) is asking */
#if PG_VERSION_NUM >= 180000
#define hamming_vacuum_delay()	vacuum_delay_point(false)
#else
#define hamming_vacuum_delay()	vacuum_delay_point()
#endif

/*
 * Popcount without a call through a function pointer: x86-64 compilers
 * build the loops over entries (hamming_scan.c, hamming_tail_cache.c)
 * twice, with and without the POPCNT instruction, and the loader picks one
 * for the CPU.
 */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__clang__)
#define HAMMING_POPCOUNT_CLONES __attribute__((target_clones("popcnt", "default")))
#endif
#endif
#ifndef HAMMING_POPCOUNT_CLONES
#define HAMMING_POPCOUNT_CLONES
#endif

#if defined(HAVE__BUILTIN_POPCOUNT) || defined(__GNUC__)
#define hamming_popcount(x) __builtin_popcountll(x)
#else
#define hamming_popcount(x) pg_popcount64(x)
#endif

/* strategies of simhash_hamming_ops: SIMHASH_STRATEGY_* of strategy.h */
#define HAMMING_NSTRATEGIES			4

/* page layout */
#define HAMMING_METAPAGE_BLKNO		0
#define HAMMING_PAGE_ID				0xFF8A	/* identifies pages of this method */
#define HAMMING_MAGIC				0x48414D31	/* "HAM1" */
#define HAMMING_VERSION				3	/* 1: no probe tables; 2: tables where CREATE INDEX wrote them; 3: merged */

/* page kinds (flags of HammingPageOpaqueData) */
#define HAMMING_META				(1 << 0)
#define HAMMING_DATA				(1 << 1)	/* fingerprints and TIDs */
#define HAMMING_NULLS				(1 << 2)	/* TIDs of rows whose fingerprint is NULL */
#define HAMMING_SORTED				(1 << 3)	/* with HAMMING_DATA: a page of probe table 0 */
#define HAMMING_KEYS				(1 << 4)	/* sort keys of probe table 1..3 */
#define HAMMING_DIRECTORY			(1 << 5)	/* a probe table's directory */
#define HAMMING_WIDE				(1 << 6)	/* with DATA or NULLS: an index of simhash128 (hamming128.c) */
#define HAMMING_RETIRED				(1 << 7)	/* with DATA or NULLS: a tail page a merge consumed */
#define HAMMING_MAP					(1 << 8)	/* a merged index's block map */
#define HAMMING_CLOSED				(1 << 9)	/* with DATA or NULLS: a tail page that was full when VACUUM
												 * removed entries from it, and takes none until VACUUM
												 * lists it for inserts (hamming_vacuum.c) */

typedef struct HammingPageOpaqueData
{
	uint16		flags;
	uint16		nentries;
	uint16		gen;			/* the merge that wrote the page (tables, maps), or whose
								 * tables a tail page goes with (low bits) */
	uint16		page_id;		/* HAMMING_PAGE_ID */
} HammingPageOpaqueData;

typedef HammingPageOpaqueData *HammingPageOpaque;

/*
 * Generations: a merge's pages carry its number, 1 .. 65535 and round
 * again; 0 is none (the tables that CREATE INDEX wrote, tail pages written
 * without one).  Does a page of generation gen come from a merge after the
 * one of a view's tables (view)?
 */
static inline bool
hamming_gen_after(uint16 gen, uint16 view)
{
	return gen != 0 && (view == 0 || (int16) (gen - view) > 0);
}

#define HammingPageGetOpaque(page) ((HammingPageOpaque) PageGetSpecialPointer(page))
#define HammingPageContents(page)	((char *) (page) + MAXALIGN(SizeOfPageHeaderData))


#define HAMMING_PAGE_SPACE \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(HammingPageOpaqueData)))
/* entries per data page: a uint64 and an ItemPointerData each */
#define HAMMING_PAGE_CAPACITY		(HAMMING_PAGE_SPACE / (sizeof(uint64) + sizeof(ItemPointerData)))
#define HAMMING_KEYS_CAPACITY		(HAMMING_PAGE_SPACE / sizeof(uint64))
#define HAMMING_DIRECTORY_CAPACITY	(HAMMING_PAGE_SPACE / sizeof(uint32))
#define HAMMING_MAP_CAPACITY		(HAMMING_PAGE_SPACE / sizeof(BlockNumber))

#define HammingPageFingerprints(page)	((uint64 *) HammingPageContents(page))
#define HammingPageKeys(page)			((uint64 *) HammingPageContents(page))
#define HammingPageDirectory(page)		((uint32 *) HammingPageContents(page))
#define HammingPageMap(page)			((BlockNumber *) HammingPageContents(page))
#define HammingPageTids(page) \
	((ItemPointerData *) (HammingPageContents(page) + HAMMING_PAGE_CAPACITY * sizeof(uint64)))

/* insert targets in the metapage: one per page kind */
#define HAMMING_TARGET_DATA			0
#define HAMMING_TARGET_NULLS		1

/*
 * Insert pages of fingerprints: a backend appends to one, and moves to the
 * next when another backend holds it, so that concurrent writers do not
 * queue on one page (a lone writer keeps to the first)
 */
#define HAMMING_INSERT_SLOTS		8

/* pages that VACUUM found at most half full, for inserts to fill again */
#define HAMMING_MAX_FREE_PAGES		1000

/* probe tables: four blocks of 16 bits */
#define HAMMING_NTABLES				4
#define HAMMING_BLOCK_BITS			16
#define HAMMING_MAX_DIR_BITS		16
#define HAMMING_BUCKET_ROWS			8	/* rows per directory bucket the build aims at */
#define HAMMING_MAX_MAP_PAGES		256 /* a merged index's tables: up to 256 * 2040 pages */
#define HAMMING_MAX_RANGES			16	/* tail ranges on pages that a merge freed */
#define HAMMING_MAX_SEGMENTS		(4 * HAMMING_MAX_RANGES + 2)

/* the sort key of probe table j: the fingerprint rotated left by 16 j bits */
static inline uint64
hamming_rotate_left(uint64 x, int bits)
{
	return bits == 0 ? x : (x << bits) | (x >> (64 - bits));
}

/*
 * Blocks [start, end) of a merged index that hold tail pages up to fill
 * (exclusive) and take the next new tail pages after it: pages that a
 * merge replaced, once no snapshot can read them.
 */
typedef struct HammingRange
{
	BlockNumber start;
	BlockNumber fill;
	BlockNumber end;
} HammingRange;

/* VACUUM merges a tail of at least 4 pages, and 1/256 of the tables' entries */
#define HAMMING_MERGE_MIN_PAGES		4
#define HAMMING_MERGE_TABLE_SHARE	256

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

	/*
	 * Merges (version 3; all zero in an index that was never merged).  The
	 * tables of a merged index are numbered logically from 0 (table 0, the
	 * NULL pages, then each directory and table 1..3), and its map pages
	 * give each logical page's block.  A merge in progress has reserved the
	 * blocks [hole_start, hole_end) for the new tables, outside the tail.
	 */
	uint32		gen;			/* the merge that wrote the tables */
	uint32		next_gen;		/* the last merge that began */
	uint32		merging;		/* a merge is (or was, if it failed) in progress */
	BlockNumber hole_start;
	BlockNumber hole_end;
	uint32		null_pages;		/* logical pages of NULL TIDs after table 0 */
	uint32		nmap;			/* map pages: 0 when the tables lie at their logical numbers */
	BlockNumber map_page[HAMMING_MAX_MAP_PAGES];
	/* what the last merge replaced, free once no snapshot can still read it */
	uint32		retired;
	FullTransactionId retired_xid;
	uint32		retired_nmap;	/* the replaced tables' map pages, and their pages */
	BlockNumber retired_map_page[HAMMING_MAX_MAP_PAGES];
	BlockNumber retired_start;	/* or the replaced tables at blocks [start, end) */
	BlockNumber retired_end;
	uint32		nretired_ranges;	/* the consumed tail: blocks [start, fill) */
	HammingRange retired_range[3 * HAMMING_MAX_RANGES + 1];
	/* the tail besides [tail_start, end): ranges inserts fill, ranges a merge consumes */
	uint32		nranges;
	HammingRange range[HAMMING_MAX_RANGES];
	uint32		nconsumed;
	HammingRange consumed[3 * HAMMING_MAX_RANGES];

	/*
	 * The insert pages of fingerprints besides insert_page[HAMMING_TARGET_DATA]
	 * (slot 0): 0 for none (block 0 is the metapage), as in an index written
	 * before there were more
	 */
	BlockNumber more_insert_page[HAMMING_INSERT_SLOTS - 1];

	/*
	 * Tail pages that VACUUM removed entries from, counted after each (0 in
	 * an index written before it was counted): backends keep full tail
	 * pages until it changes (hamming_tail_cache.c)
	 */
	uint32		tail_epoch;

	/*
	 * The tables' identity: set by each build and each merge to a number
	 * this index never had before (hamming_new_tables_id; 0 in an index
	 * written before it was kept, until its first merge).  What backends
	 * keep of an index (block maps, tail pages) is found again by it.
	 */
	uint64		tables_id;
} HammingMetaPageData;

#define HammingPageGetMeta(page) ((HammingMetaPageData *) HammingPageContents(page))

/* insert pages of a target: HAMMING_INSERT_SLOTS of fingerprints, one of NULLs */
static inline int
hamming_insert_slots(int target)
{
	return target == HAMMING_TARGET_DATA ? HAMMING_INSERT_SLOTS : 1;
}

/* the insert page of a target's slot, InvalidBlockNumber for none */
static inline BlockNumber
hamming_get_insert_page(const HammingMetaPageData *meta, int target, int slot)
{
	BlockNumber blkno;

	if (slot == 0)
		return meta->insert_page[target];
	blkno = meta->more_insert_page[slot - 1];
	return blkno == HAMMING_METAPAGE_BLKNO ? InvalidBlockNumber : blkno;
}

static inline void
hamming_set_insert_page(HammingMetaPageData *meta, int target, int slot, BlockNumber blkno)
{
	if (slot == 0)
		meta->insert_page[target] = blkno;
	else
		meta->more_insert_page[slot - 1] = blkno == InvalidBlockNumber ? HAMMING_METAPAGE_BLKNO : blkno;
}

static inline bool
hamming_page_is(Page page, uint16 kind)
{
	return !PageIsNew(page) && HammingPageGetOpaque(page)->page_id == HAMMING_PAGE_ID &&
		(HammingPageGetOpaque(page)->flags & kind) != 0;
}

/*
 * index options: WITH (probe_tables = off) builds tail pages only;
 * WITH (max_distance = k) fixes the threshold of % in this index (the
 * radius of an exclusion constraint), -1 (unset) leaves it to the setting;
 * WITH (tail_limit = kB): an insert that makes the tail larger merges it,
 * -1 (unset): once the tail is over HAMMING_AUTO_TAIL_MIN kB and over
 * 1/HAMMING_AUTO_TAIL_SHARE of the tables' entries (a merge rewrites the
 * tables, so its cost per inserted row stays about the same as they grow)
 */
#define HAMMING_MIN_TAIL_LIMIT		64
#define HAMMING_AUTO_TAIL_MIN		1024
#define HAMMING_AUTO_TAIL_SHARE		24
/* memory per entry a build or a merge holds: the entry, and a sort key of tables 1..3 */
#define HAMMING_ROW_BYTES			(sizeof(HammingEntry) + sizeof(uint64))
typedef struct HammingOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	bool		probe_tables;
	int			max_distance;
	int			tail_limit;		/* kB of tail at which an insert merges it */
} HammingOptions;

/*
 * The probe tables of an index and its tail, as its metapage describes them
 * when a scan starts (its view: a merge that ends later leaves what the
 * view reads in place until no snapshot of that time is left).
 */
typedef struct HammingTables
{
	uint32		ntables;		/* 0: none */
	uint32		dir_bits;
	uint32		nsorted;
	BlockNumber table_start[HAMMING_NTABLES];	/* logical page numbers */
	BlockNumber dir_start[HAMMING_NTABLES];
	BlockNumber table0_pages;
	BlockNumber pass_pages;		/* table 0 and the NULL pages after it */
	uint16		gen;			/* the tables' pages carry it */
	/* the block map of a merged index: its pages, the merge that wrote it */
	uint32		nmap;
	BlockNumber map_page[HAMMING_MAX_MAP_PAGES];
	uint64		tables_id;		/* the metapage's then */
	BlockNumber *map;			/* logical page -> block; NULL: the same number */
	struct HammingMapRef *map_ref;	/* where map is this backend's (hamming_map.c) */
	BlockNumber tail_start;		/* first page of the open end of the tail */
	BlockNumber view_end;		/* the index's size when the view was taken */
	uint32		tail_epoch;		/* the metapage's then */
	/* the tail's pages: blocks [seg_start[i], seg_end[i]) */
	int			nsegments;
	BlockNumber seg_start[HAMMING_MAX_SEGMENTS];
	BlockNumber seg_end[HAMMING_MAX_SEGMENTS];
} HammingTables;

/* a probe table's entry as a build or a merge collects it */
typedef struct HammingEntry
{
	uint64		fp;
	ItemPointerData tid;
} HammingEntry;

/* table 0's order: by fingerprint, then TID */
static inline int
hamming_entry_cmp(const HammingEntry *x, const HammingEntry *y)
{
	if (x->fp != y->fp)
		return x->fp < y->fp ? -1 : 1;
	return ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);
}

/*
 * Entries in the probe tables' orders, within a memory budget, spilled to
 * temporary files in sorted runs beyond it (hamming_sort.c)
 */
typedef struct HammingSort HammingSort;
/* TIDs of NULL fingerprints, in memory and a temporary file beyond it (hamming_sort.c) */
typedef struct HammingTids HammingTids;

/* where hamming_write_streams() puts each page: returns its (logical) number */
typedef BlockNumber (*HammingPageSink) (void *arg, Page page);

/*
 * What hamming_write_streams() writes, one at a time and in order: table
 * 0's entries, then the sort keys of table 1, 2 and 3; false at the end.
 */
typedef struct HammingTableSource
{
	bool		(*next_entry) (void *arg, HammingEntry *entry);
	bool		(*next_key) (void *arg, int table, uint64 *key);
	void	   *arg;
} HammingTableSource;

/* hamming_probe(): does a fingerprint at this distance satisfy the scan? take a row */
typedef bool (*HammingProbeMatch) (void *arg, simhash fp, int distance);
typedef bool (*HammingProbeEmit) (void *arg, const HammingHit *hit);

/* scan state */
typedef struct HammingScanOpaqueData
{
	/*
	 * conditions: a row matches when it is within radius[i] of center[i]
	 * for every i, or with any_cond (an index of text) for some i
	 */
	int			nconds;
	simhash    *center;
	int		   *radius;
	bool		any_cond;
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
	int			tail_cap;		/* rows of the tail kept by its last read */
	BlockNumber tail_pages;		/* the tail when read (a pass reads it again) */
	double		tail_entries;

	/* returned rows not yet handed out: hits of one page, or one ordered batch */
	HammingHit *hits;
	int			nhits;
	int			next_hit;
	int			max_hits;		/* room in hits */
	int			batch_size;		/* ordered: entries per pass */

	/* where the scan stands */
	BlockNumber next_block;		/* unordered, or NULL rows of an ordered scan: a pass position */
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

/*
 * An index of text: four entries a row, and rows the executor rechecks.
 * hamming_row_fingerprints: the entries of a row's key,
 * HAMMING_MAX_ROW_ENTRIES at most (a text's distinct quarters); 0 for a
 * NULL (or a text without shingles).  In hamming_build_scan.c
 */
#define HAMMING_MAX_ROW_ENTRIES		4
static inline bool
hamming_keeps_text(Relation index)
{
	return TupleDescAttr(RelationGetDescr(index), 0)->attlen == -1;
}
/* an index of simhash128 (a 16-byte key, its own layout: hamming128.c) */
static inline bool
hamming_index_is_wide(Relation index)
{
	return TupleDescAttr(RelationGetDescr(index), 0)->attlen == 16;
}
extern int	hamming_row_fingerprints(Relation index, Datum value, bool isnull, uint64 *fps);

/* hamming_options.c */
extern void hamming_init_reloptions(void);
extern bytea *hamming_options(Datum reloptions, bool validate);
extern int	hamming_similar_radius(Relation index);
extern int	hamming_tail_limit(Relation index);

/* hamming_utils.c */
extern void hamming_init_page(Page page, uint16 kind);
extern void hamming_init_metapage(Page page);
extern uint64 hamming_new_tables_id(uint64 previous);
extern Buffer hamming_new_buffer(Relation index);
extern void hamming_check_page(Relation index, Page page, BlockNumber blkno);
extern Buffer hamming_lock_page(Relation index, BlockNumber blkno, int mode,
								BufferAccessStrategy strategy);
extern Oid	hamming_index_table(Oid indexoid, bool owner);
extern Relation hamming_open_owned(Oid indexoid, LOCKMODE heap_mode, LOCKMODE index_mode,
								   const char *action, Relation *heap);

extern void hamming_describe_tables(Relation index, HammingTables *tables);
extern BlockNumber hamming_table_block(const HammingTables *tables, BlockNumber lblk);

/* hamming_map.c */
extern void hamming_read_tables(Relation index, HammingTables *tables);
extern void hamming_reread_tables(Relation index, HammingTables *tables);
extern void hamming_free_tables(HammingTables *tables);
extern bool *hamming_used_blocks(Relation index, BlockNumber *n);
extern BlockNumber hamming_record_unused(Relation index);
extern void hamming_check_table_page(Relation index, const HammingTables *tables, Page page,
									 BlockNumber blkno, uint16 kind);
extern bool hamming_pass_block(const HammingTables *tables, BlockNumber pos, BlockNumber *blkno);
extern BlockNumber hamming_tail_pages(const HammingTables *tables);
extern int	hamming_tail_segments(const HammingMetaPageData *meta, BlockNumber end,
								  BlockNumber *seg_start, BlockNumber *seg_end);
extern void hamming_check_tail_page(Relation index, const HammingTables *tables, Page page,
									BlockNumber blkno);
extern HammingMetaPageData *hamming_meta_for_write(Page page);
extern bool hamming_is_insert_page(const HammingMetaPageData *meta, BlockNumber blkno);
extern void hamming_clear_insert_pages(HammingMetaPageData *meta);
extern void hamming_table_radii(int *radius, int k);
extern void hamming_scan_init_orderbys(IndexScanDesc scan, int norderbys);
extern void hamming_scan_set_keys(IndexScanDesc scan, ScanKey keys, ScanKey orderbys);

/* hamming_probe.c */
extern bool hamming_probe(Relation index, const HammingTables *tables, simhash query, int k,
						  HammingProbeMatch match, HammingProbeEmit emit, void *arg);

/*
 * hamming_near.c: the slots of the first n fingerprints whose distance to
 * center lies in [lo, hi] (n at most 65,536), into slots; returns how many
 */
extern int	hamming_near_slots(const uint64 *fps, int n, simhash center, int lo, int hi, uint16 *slots);

/* hamming_tail_cache.c: full tail pages, kept by a backend for its lookups */
typedef struct HammingTailCache HammingTailCache;
extern HammingTailCache *hamming_tail_cache(Relation index, const HammingTables *tables);
extern bool hamming_tail_cache_fits(const HammingTables *tables);
extern bool hamming_tail_cache_has(const HammingTailCache *tc, BlockNumber blkno);
extern bool hamming_tail_cache_add(HammingTailCache *tc, Page page, BlockNumber blkno);
extern uint64 hamming_tail_cache_serial(const HammingTailCache *tc);
extern uint32 hamming_tail_cache_entries(const HammingTailCache *tc);
extern bool hamming_tail_cache_probe(const HammingTailCache *tc, uint32 from, simhash query, int k,
									 HammingProbeMatch match, HammingProbeEmit emit, void *arg);

/* hamming_build.c */
extern IndexBuildResult *hamming_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void hamming_build_empty(Relation index);
extern char *hamming_build_phase_name(int64 phase);

/* hamming_write.c */
extern void hamming_write_sorted(HammingSort *sort, HammingTids *nulls,
								 bool progress, uint16 gen, HammingPageSink sink, void *arg, HammingMetaPageData *meta);
extern void hamming_write_streams(Size n, const HammingTableSource *source,
								  HammingTids *nulls, uint16 gen,
								  HammingPageSink sink, void *arg, HammingMetaPageData *meta);
extern Size hamming_table_pages(Size n, Size nnulls);
extern Size hamming_merge_pages(Size pages);
extern bool hamming_tables_mappable(Size pages);

/* hamming_sort.c */
extern HammingSort *hamming_sort_begin(Size budget, bool keys_only);
extern void hamming_sort_add(HammingSort *sort, uint64 fp, ItemPointer tid);
extern Size hamming_sort_count(const HammingSort *sort);
extern int	hamming_sort_runs(const HammingSort *sort);
extern void hamming_sort_done(HammingSort *sort);
extern bool hamming_sort_next_entry(HammingSort *sort, HammingEntry *entry);
extern bool hamming_sort_next_key(HammingSort *sort, int table, uint64 *key);
extern void hamming_sort_end(HammingSort *sort);
extern HammingTids *hamming_tids_begin(Size budget);
extern void hamming_tids_add(HammingTids *tids, ItemPointer tid);
extern Size hamming_tids_count(const HammingTids *tids);
extern bool hamming_tids_next(HammingTids *tids, ItemPointer tid);
extern void hamming_tids_end(HammingTids *tids);

/* a build's subphases after PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE (hamming_build_phase_name) */
#define HAMMING_PHASE_SCAN		2
#define HAMMING_PHASE_SORT		3
#define HAMMING_PHASE_WRITE		4

/*
 * Parallel builds (hamming_build_parallel.c): each participant scans its
 * share of the table, sorts it and exports it to a file of a shared file
 * set (hamming_sort_export); then each probe table is read back merged from
 * every participant's run (hamming_sort_import) by one of them, and written
 * onto the blocks that a serial build gives it (hamming_build_layout); or,
 * without probe tables, each worker exports its entries as scanned and the
 * leader streams them onto the tail
 */
typedef struct HammingSortRun
{
	Size		count;			/* entries, and keys of each of tables 1..3 */
	int			fileno[HAMMING_NTABLES];	/* where table j's part begins (BufFileTell) */
	off_t		offset[HAMMING_NTABLES];
} HammingSortRun;
extern void hamming_sort_export(HammingSort *sort, BufFile *file, HammingSortRun *run);
extern HammingSort *hamming_sort_import(Size budget, int nruns, const HammingSortRun *runs,
										BufFile **files);
/*
 * hamming_build_scan.c: a build's heap scan, its entries to a sink; key: the
 * entry's fingerprint (a uint64, or the Simhash128 of an index of
 * simhash128), NULL for a NULL entry
 */
typedef struct HammingEntrySink
{
	void		(*add) (void *arg, Relation index, bool isnull, const void *key, ItemPointer tid);
	void	   *arg;
} HammingEntrySink;
extern double hamming_build_scan_into(Relation heap, Relation index, IndexInfo *indexInfo,
									  TableScanDesc scan, bool progress,
									  const HammingEntrySink *sink, double *indtuples);
extern void hamming_build_sorts(Size budget, HammingSort **sort, HammingTids **nulls);
extern double hamming_build_scan(Relation heap, Relation index, IndexInfo *indexInfo,
								 TableScanDesc scan, bool progress, HammingSort *sort,
								 HammingTids *nulls, double *indtuples);
/* hamming_write.c */
extern BlockNumber hamming_build_layout(Size n, HammingMetaPageData *meta);
extern void hamming_write_sorted_table(HammingSort *sort, int table, HammingPageSink sink, void *arg,
									   HammingMetaPageData *meta);
/* hamming_build_parallel.c */
extern bool hamming_parallel_build(Relation heap, Relation index, IndexInfo *indexInfo,
								   const HammingEntrySink *tail, HammingMetaPageData *meta,
								   HammingTids **nulls, double *reltuples, double *indtuples);

/* hamming_merge.c */
typedef enum HammingMergeBy
{
	HAMMING_MERGE_BY_INSERT,	/* a tail over tail_limit, within memory only, silent */
	HAMMING_MERGE_BY_VACUUM,	/* a tail worth it */
	HAMMING_MERGE_NOW			/* hamming_merge_tail(): any tail */
} HammingMergeBy;
typedef enum HammingMergeResult
{
	HAMMING_MERGED,
	HAMMING_NOT_MERGED,			/* nothing worth it, the last merge's pages still read, too large to map */
	HAMMING_NO_MEMORY			/* an insert's merge that memory cannot hold */
} HammingMergeResult;
extern HammingMergeResult hamming_merge(Relation index, BufferAccessStrategy strategy, HammingMergeBy by);

/*
 * hamming_append.c: an entry into the tail, by the caller's functions for
 * its width: append to a page (exclusively locked) if it takes the entry;
 * append to a page with room
 */
typedef bool (*HammingTryAppend) (Relation index, Buffer buffer, uint16 kind, const void *entry,
								  ItemPointer tid);
typedef void (*HammingAppend) (Page page, const void *entry, ItemPointer tid);
extern BlockNumber hamming_insert_entry(Relation index, int target, uint16 kind, const void *entry,
										ItemPointer tid, HammingTryAppend try_append, HammingAppend append,
										uint32 *nsorted);

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

/* hamming_work.c */
extern int	hamming_hits_limit(void);
extern double hamming_pass_work(double pages, double entries);
extern double hamming_probe_work(const HammingTables *tables, int k, int nqueries);
extern bool hamming_probe_pays(const HammingTables *tables, int k, int nqueries, double tail_pages,
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
