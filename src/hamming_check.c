/*
 * hamming_check.c
 *	  hamming_index_check(regclass): verification of a "hamming" index, in
 *	  the manner of amcheck.  It reads every page under a share lock (as a
 *	  scan does: inserts, scans and VACUUM go on) and checks
 *	  - every page: the method's page id and an entry count within capacity;
 *	    the metapage's magic and version, its insert pages and free list
 *	    (tail pages of the right kind);
 *	  - the layout: table 0 (and the NULL pages after it, in a merged
 *	    index), the directories and tables 1..3 where the metapage (and
 *	    the block map of a merged index) says, each page of the kind of its
 *	    part and of the tables' merge, full but for the last, then the tail
 *	    (fingerprint and NULL pages, or new pages);
 *	  - table 0 sorted on (fingerprint, heap TID), cleared TIDs (tombstones)
 *	    wholly invalid, tables 1..3 sorted and holding table 0's fingerprints
 *	    rotated (compared by an order-free hash of both), each directory
 *	    nondecreasing from 0 to the table's entry count, every entry within
 *	    its prefix's bucket;
 *	  - no TID cleared in the tail;
 *	  - the heap: every row that an MVCC snapshot taken before the index is
 *	    read sees has an entry with its fingerprint (or NULL), a row of an
 *	    index of text one with each quarter of its text's fingerprint.  The index's
 *	    entries go to a Bloom filter of maintenance_work_mem at most (as
 *	    amcheck's heapallindexed does), so a missing entry is found with
 *	    high probability, not certainty.
 *	  A violation is an error with SQLSTATE XX002 (index_corrupted) naming
 *	  the block and what was expected.  Blocks that nothing uses and that
 *	  the free space map does not list (taken by a merge that failed, or
 *	  lost by a crash, until the next VACUUM or merge lists them) are
 *	  reported in a notice.
 */
#include "hamming.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "lib/bloomfilter.h"
#include "miscadmin.h"
#include "access/xlog.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(hamming_index_check);

#define CHECK(index, cond, ...) \
	do { \
		if (!(cond)) \
			ereport(ERROR, \
					(errcode(ERRCODE_INDEX_CORRUPTED), \
					 errmsg("index \"%s\" is corrupted", RelationGetRelationName(index)), \
					 errdetail(__VA_ARGS__), \
					 errhint("Please REINDEX it."))); \
	} while (0)

/* what the Bloom filter holds per entry (zero padding included) */
typedef struct CheckedEntry
{
	ItemPointerData tid;
	uint16		isnull;
	uint64		fp;
} CheckedEntry;

typedef struct CheckState
{
	Relation	index;
	HammingTables tables;
	BlockNumber nblocks;
	bloom_filter *filter;
	uint64		hash[HAMMING_NTABLES];	/* order-free hash of each table's fingerprints */
	/* where the walk through a table stands */
	uint32		entry;
	uint64		previous;
	ItemPointerData previous_tid;
	uint32	   *directory;		/* of the table being walked */
	int64		rows;			/* heap rows checked */
} CheckState;

/* a hash of a fingerprint, summed over a table: equal sums, likely equal multisets */
static uint64
mix(uint64 x)
{
	return hash_bytes_extended((const unsigned char *) &x, sizeof(x), 0);
}

static void
remember(CheckState *cs, const ItemPointerData *tid, bool isnull, uint64 fp)
{
	CheckedEntry e;

	memset(&e, 0, sizeof(e));
	e.tid = *tid;
	e.isnull = isnull;
	e.fp = isnull ? 0 : fp;
	bloom_add_element(cs->filter, (unsigned char *) &e, sizeof(e));
}

/* a page, share-locked and checked as every read checks it */
static Buffer
check_read(CheckState *cs, BlockNumber blkno)
{
	CHECK_FOR_INTERRUPTS();
	return hamming_lock_page(cs->index, blkno, BUFFER_LOCK_SHARE, NULL);
}

/* a page of a table or directory: its kind, and full unless it is the table's last */
static Page
check_part_page(CheckState *cs, Buffer buffer, BlockNumber blkno, uint16 kind,
				Size capacity, Size remaining, const char *part)
{
	Page		page = BufferGetPage(buffer);

	CHECK(cs->index, hamming_page_is(page, kind),
		  "Block %u should be a page of %s.", blkno, part);
	CHECK(cs->index, HammingPageGetOpaque(page)->gen == cs->tables.gen,
		  "Block %u (%s) was written by merge %u, not by the tables' merge %u.", blkno, part,
		  HammingPageGetOpaque(page)->gen, cs->tables.gen);
	CHECK(cs->index, HammingPageGetOpaque(page)->nentries == Min(capacity, remaining),
		  "Block %u (%s) holds %u entries, %zu expected.", blkno, part,
		  HammingPageGetOpaque(page)->nentries, Min(capacity, remaining));
	return page;
}

/* the directory of table j, read and checked: nondecreasing from 0 to nsorted */
static void
read_directory(CheckState *cs, int j)
{
	uint32		size = ((uint32) 1 << cs->tables.dir_bits) + 1;
	uint32		i;
	BlockNumber lblk = cs->tables.dir_start[j];

	for (i = 0; i < size; lblk++)
	{
		BlockNumber blkno = hamming_table_block(&cs->tables, lblk);
		Buffer		buffer = check_read(cs, blkno);
		Page		page = check_part_page(cs, buffer, blkno, HAMMING_DIRECTORY,
										   HAMMING_DIRECTORY_CAPACITY, size - i, "a directory");
		int			n = HammingPageGetOpaque(page)->nentries;
		int			k;

		for (k = 0; k < n; k++, i++)
		{
			cs->directory[i] = HammingPageDirectory(page)[k];
			CHECK(cs->index, i > 0 || cs->directory[i] == 0,
				  "The directory of probe table %d does not start at entry 0.", j);
			CHECK(cs->index, i == 0 || cs->directory[i] >= cs->directory[i - 1],
				  "The directory of probe table %d decreases at bucket %u (block %u).", j, i, blkno);
		}
		UnlockReleaseBuffer(buffer);
	}
	CHECK(cs->index, cs->directory[size - 1] == cs->tables.nsorted,
		  "The directory of probe table %d ends at entry %u, not at the table's %u entries.",
		  j, cs->directory[size - 1], cs->tables.nsorted);
}

/* the next key of table j in the walk: sorted, in its prefix's bucket, hashed */
static void
walk_key(CheckState *cs, int j, uint64 key, BlockNumber blkno)
{
	uint32		bucket = (uint32) (key >> (64 - cs->tables.dir_bits));
	int			rotation = (HAMMING_NTABLES - j) * HAMMING_BLOCK_BITS % 64;
	uint64		fp = hamming_rotate_left(key, rotation);

	CHECK(cs->index, cs->entry == 0 || key >= cs->previous,
		  "Probe table %d is out of order at entry %u (block %u).", j, cs->entry, blkno);
	CHECK(cs->index, cs->directory[bucket] <= cs->entry && cs->entry < cs->directory[bucket + 1],
		  "Entry %u of probe table %d (block %u) is outside its directory bucket %u (entries %u to %u).",
		  cs->entry, j, blkno, bucket, cs->directory[bucket], cs->directory[bucket + 1]);
	cs->hash[j] += mix(fp);
	cs->previous = key;
	cs->entry++;
}

/* table 0: sorted on (fingerprint, TID), tombstones wholly invalid */
static void
check_table0(CheckState *cs)
{
	BlockNumber lblk;

	read_directory(cs, 0);
	cs->entry = 0;
	for (lblk = cs->tables.table_start[0]; lblk < cs->tables.table_start[0] + cs->tables.table0_pages; lblk++)
	{
		BlockNumber blkno = hamming_table_block(&cs->tables, lblk);
		Buffer		buffer = check_read(cs, blkno);
		Page		page = check_part_page(cs, buffer, blkno, HAMMING_DATA | HAMMING_SORTED,
										   HAMMING_PAGE_CAPACITY, cs->tables.nsorted - cs->entry,
										   "probe table 0");
		int			n = HammingPageGetOpaque(page)->nentries;
		int			i;

		CHECK(cs->index, hamming_page_is(page, HAMMING_SORTED), "Block %u should be a page of probe table 0.", blkno);
		for (i = 0; i < n; i++)
		{
			uint64		fp = HammingPageFingerprints(page)[i];
			ItemPointerData *tid = &HammingPageTids(page)[i];

			CHECK(cs->index, ItemPointerIsValid(tid) ||
				  (ItemPointerGetBlockNumberNoCheck(tid) == InvalidBlockNumber &&
				   ItemPointerGetOffsetNumberNoCheck(tid) == InvalidOffsetNumber),
				  "Entry %d of block %u (probe table 0) has a heap TID of offset 0 that is not a tombstone.", i, blkno);
			if (ItemPointerIsValid(tid))
			{
				CHECK(cs->index, cs->entry == 0 || fp != cs->previous || !ItemPointerIsValid(&cs->previous_tid) ||
					  ItemPointerCompare(tid, &cs->previous_tid) > 0,
					  "Probe table 0 is out of order at entry %u (block %u): equal fingerprints with TIDs not increasing.",
					  cs->entry, blkno);
				remember(cs, tid, false, fp);
			}
			if (cs->entry == 0 || fp != cs->previous)
				ItemPointerSetInvalid(&cs->previous_tid);
			if (ItemPointerIsValid(tid))
				cs->previous_tid = *tid;
			walk_key(cs, 0, fp, blkno);
		}
		UnlockReleaseBuffer(buffer);
	}
}

/* the NULL TIDs after table 0 (in a merged index): full pages but the last, cleared TIDs wholly invalid */
static void
check_null_pages(CheckState *cs)
{
	BlockNumber pos;

	for (pos = cs->tables.table0_pages; pos < cs->tables.pass_pages; pos++)
	{
		BlockNumber blkno = hamming_table_block(&cs->tables, cs->tables.table_start[0] + pos);
		Buffer		buffer = check_read(cs, blkno);
		Page		page = BufferGetPage(buffer);
		int			i;

		CHECK(cs->index, hamming_page_is(page, HAMMING_NULLS) && hamming_page_is(page, HAMMING_SORTED) &&
			  HammingPageGetOpaque(page)->gen == cs->tables.gen,
			  "Block %u should be a page of NULL TIDs of the tables' merge.", blkno);
		CHECK(cs->index, pos + 1 == cs->tables.pass_pages ||
			  HammingPageGetOpaque(page)->nentries == HAMMING_PAGE_CAPACITY,
			  "Block %u (NULL TIDs) is not full, and not the last of them.", blkno);
		for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
			if (ItemPointerIsValid(&HammingPageTids(page)[i]))
				remember(cs, &HammingPageTids(page)[i], true, 0);
		UnlockReleaseBuffer(buffer);
	}
}

/* table j of 1..3 and its directory */
static void
check_keys_table(CheckState *cs, int j)
{
	BlockNumber lblk = cs->tables.table_start[j];

	read_directory(cs, j);
	cs->entry = 0;
	while (cs->entry < cs->tables.nsorted)
	{
		BlockNumber blkno = hamming_table_block(&cs->tables, lblk);
		Buffer		buffer = check_read(cs, blkno);
		Page		page = check_part_page(cs, buffer, blkno, HAMMING_KEYS, HAMMING_KEYS_CAPACITY,
										   cs->tables.nsorted - cs->entry, "a probe table");
		int			n = HammingPageGetOpaque(page)->nentries;
		int			i;

		for (i = 0; i < n; i++)
			walk_key(cs, j, HammingPageKeys(page)[i], blkno);
		UnlockReleaseBuffer(buffer);
		lblk++;
	}
	CHECK(cs->index, cs->hash[j] == cs->hash[0],
		  "Probe table %d does not hold the fingerprints of probe table 0.", j);
}

/*
 * The pages of the probe tables lie where the metapage says, in order: up
 * to the tail as CREATE INDEX writes them, or numbered from 0 through the
 * map of a merged index (each mapped block below the tail, or in the
 * blocks the merge reserved before it).
 */
static void
check_layout(CheckState *cs)
{
	const HammingTables *t = &cs->tables;
	Size		dir_pages = (((Size) 1 << t->dir_bits) + 1 + HAMMING_DIRECTORY_CAPACITY - 1) / HAMMING_DIRECTORY_CAPACITY;
	Size		keys_pages = ((Size) t->nsorted + HAMMING_KEYS_CAPACITY - 1) / HAMMING_KEYS_CAPACITY;
	BlockNumber expected = t->map ? 0 : HAMMING_METAPAGE_BLKNO + 1;
	int			j;

	CHECK(cs->index, t->dir_bits >= 1 && t->dir_bits <= HAMMING_MAX_DIR_BITS && (t->nsorted > 0 || t->map),
		  "The metapage describes probe tables of %u entries with %u directory bits.", t->nsorted, t->dir_bits);
	for (j = 0; j < HAMMING_NTABLES; j++)
	{
		if (keys_pages > 0 || j == 0)
			CHECK(cs->index, t->table_start[j] == expected || (j == 0 && t->pass_pages == 0),
				  "Probe table %d starts at block %u, block %u expected.", j, t->table_start[j], expected);
		expected += j == 0 ? t->pass_pages : keys_pages;
		CHECK(cs->index, t->dir_start[j] == expected,
			  "The directory of probe table %d starts at block %u, block %u expected.", j, t->dir_start[j], expected);
		expected += dir_pages;
	}
	if (t->map)
	{
		BlockNumber lblk;

		for (lblk = 0; lblk < expected; lblk++)
			CHECK(cs->index, t->map[lblk] > HAMMING_METAPAGE_BLKNO && t->map[lblk] < t->tail_start,
				  "The map gives block %u for page %u of the probe tables, outside blocks 1 to %u.",
				  t->map[lblk], lblk, t->tail_start - 1);
	}
	else
		CHECK(cs->index, t->tail_start == expected && expected <= cs->nblocks,
			  "The tail starts at block %u, block %u expected (the index has %u blocks).",
			  t->tail_start, expected, cs->nblocks);
}

/* is blkno in the tail that the metapage describes now? */
static bool
in_tail(Relation index, const HammingMetaPageData *meta, BlockNumber blkno)
{
	BlockNumber seg_start[HAMMING_MAX_SEGMENTS];
	BlockNumber seg_end[HAMMING_MAX_SEGMENTS];
	int			n = hamming_tail_segments(meta, RelationGetNumberOfBlocks(index), seg_start, seg_end);

	while (n-- > 0)
		if (blkno >= seg_start[n] && blkno < seg_end[n])
			return true;
	return false;
}

/* the metapage's insert pages and free list name tail pages */
static void
check_metapage(CheckState *cs)
{
	Buffer		buffer = check_read(cs, HAMMING_METAPAGE_BLKNO);
	HammingMetaPageData *meta = HammingPageGetMeta(BufferGetPage(buffer));
	int			target;
	int			slot;
	uint32		i;

	for (target = 0; target < 2; target++)
		for (slot = 0; slot < hamming_insert_slots(target); slot++)
		{
			BlockNumber blkno = hamming_get_insert_page(meta, target, slot);

			CHECK(cs->index, blkno == InvalidBlockNumber || in_tail(cs->index, meta, blkno),
				  "The metapage's insert page %u is not a tail page.", blkno);
		}
	CHECK(cs->index, meta->nfree <= HAMMING_MAX_FREE_PAGES,
		  "The metapage lists %u free pages, at most %d expected.", meta->nfree, HAMMING_MAX_FREE_PAGES);
	for (i = 0; i < meta->nfree; i++)
		CHECK(cs->index, in_tail(cs->index, meta, meta->free_page[i]),
			  "The metapage's free page %u is not a tail page.", meta->free_page[i]);
	UnlockReleaseBuffer(buffer);
}

/* tail pages: fingerprints or NULLs, every TID valid */
static void
check_tail(CheckState *cs)
{
	BlockNumber pos;
	BlockNumber blkno;

	for (pos = cs->tables.pass_pages; hamming_pass_block(&cs->tables, pos, &blkno); pos++)
	{
		Buffer		buffer = check_read(cs, blkno);
		Page		page = BufferGetPage(buffer);

		if (!PageIsNew(page))
		{
			bool		nulls = hamming_page_is(page, HAMMING_NULLS);
			int			n = HammingPageGetOpaque(page)->nentries;
			int			i;

			CHECK(cs->index, (hamming_page_is(page, HAMMING_DATA) || nulls) &&
				  !hamming_page_is(page, HAMMING_SORTED | HAMMING_KEYS | HAMMING_DIRECTORY | HAMMING_META | HAMMING_MAP),
				  "Block %u of the tail is not a page of fingerprints or NULLs.", blkno);
			for (i = 0; i < n; i++)
			{
				ItemPointerData *tid = &HammingPageTids(page)[i];

				CHECK(cs->index, ItemPointerIsValid(tid),
					  "Entry %d of tail block %u has an invalid heap TID.", i, blkno);
				remember(cs, tid, nulls, HammingPageFingerprints(page)[i]);
			}
		}
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * Blocks that nothing uses and the free space map does not list: reported
 * (a merge may run meanwhile and take some; a standby's map is not kept)
 */
static void
check_unlisted(CheckState *cs)
{
	BlockNumber n;
	BlockNumber blkno;
	BlockNumber first = InvalidBlockNumber;
	BlockNumber unlisted = 0;
	bool	   *used;

	if (RecoveryInProgress())
		return;
	used = hamming_used_blocks(cs->index, &n);
	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < n; blkno++)
		if (!used[blkno] && GetRecordedFreeSpace(cs->index, blkno) == 0)
		{
			if (unlisted++ == 0)
				first = blkno;
		}
	if (unlisted > 0)
		ereport(NOTICE,
				(errmsg("index \"%s\" has %u unused pages that the free space map does not list",
						RelationGetRelationName(cs->index), unlisted),
				 errdetail("The first is block %u of %u.", first, n),
				 errhint("VACUUM the table: it lists them for reuse.")));
	pfree(used);
}

/* each row of the heap that the snapshot sees: is it in the filter? */
static void
check_heap_row(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	CheckState *cs = (CheckState *) arg;
	CheckedEntry e;
	uint64		fps[HAMMING_MAX_ROW_ENTRIES];
	int			n = hamming_row_fingerprints(index, values[0], isnull[0], fps);
	int			i;

	memset(&e, 0, sizeof(e));
	e.tid = *tid;
	e.isnull = n == 0;
	cs->rows++;
	/* each of its entries: its fingerprint, or one of a NULL */
	for (i = 0; i < Max(n, 1); i++)
	{
		e.fp = n == 0 ? 0 : fps[i];
		CHECK(index, !bloom_lacks_element(cs->filter, (unsigned char *) &e, sizeof(e)),
			  "The heap row at (%u,%u) has no entry in the index (of its %d, entry %d).",
			  ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid), Max(n, 1), i + 1);
	}
}

Datum
hamming_index_check(PG_FUNCTION_ARGS)
{
	Relation	heap;
	Relation	index = hamming_open_owned(PG_GETARG_OID(0), AccessShareLock, AccessShareLock, "check", &heap);
	CheckState	cs;
	Snapshot	snapshot;
	IndexInfo  *indexInfo;
	TableScanDesc scan;
	int			j;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;

	/*
	 * The index's expressions and predicate are the table owner's code: they
	 * run as the owner, restricted as in VACUUM and amcheck, never with the
	 * privileges of a superuser who checks the index.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
#if PG_VERSION_NUM >= 170000
	RestrictSearchPath();
#endif

	if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
		!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data), TransactionXmin))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("index \"%s\" cannot be checked with this transaction's snapshot",
						RelationGetRelationName(index)),
				 errhint("Check it in a new transaction, or at isolation level READ COMMITTED.")));

	/* rows that this snapshot sees have their entries in the index read after it */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	memset(&cs, 0, sizeof(cs));
	cs.index = index;
	cs.nblocks = RelationGetNumberOfBlocks(index);
	CHECK(index, cs.nblocks > 0, "The index has no blocks; the metapage is missing.");
	hamming_read_tables(index, &cs.tables);
	cs.filter = bloom_create((int64) cs.nblocks * HAMMING_PAGE_CAPACITY, maintenance_work_mem,
							 pg_prng_uint64(&pg_global_prng_state));
	if (cs.tables.ntables > 0)
	{
		check_layout(&cs);
		cs.directory = palloc((((Size) 1 << cs.tables.dir_bits) + 1) * sizeof(uint32));
		check_table0(&cs);
		check_null_pages(&cs);
		for (j = 1; j < HAMMING_NTABLES; j++)
			check_keys_table(&cs, j);
		pfree(cs.directory);
	}
	check_metapage(&cs);
	check_tail(&cs);
	check_unlisted(&cs);
	hamming_free_tables(&cs.tables);

	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = true;	/* MVCC snapshot, not SnapshotAny */
	indexInfo->ii_Unique = false;
	indexInfo->ii_ExclusionOps = NULL;	/* no waits for uncommitted rows */
	indexInfo->ii_ExclusionProcs = NULL;
	indexInfo->ii_ExclusionStrats = NULL;
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, false);
	table_index_build_scan(heap, index, indexInfo, true, false, check_heap_row, &cs, scan);
	UnregisterSnapshot(snapshot);
	bloom_free(cs.filter);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_VOID();
}
