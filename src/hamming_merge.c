/*
 * hamming_merge.c
 *	  Merging the tail of a "hamming" index into its probe tables, without
 *	  REINDEX, while inserts and scans go on.
 *
 *	  A merge writes new probe tables holding table 0's live entries, the
 *	  tail's and every NULL TID, on free pages of the index and on blocks it
 *	  reserves at the end, and then points the metapage at them.  In steps:
 *
 *	  1. Under the metapage's exclusive lock (and the extension lock, taken
 *	     in that order, as inserts do), it reserves the blocks the new
 *	     tables may need beyond the free pages it took (extending the index
 *	     by all of them in one call, so that scans and inserts wait for
 *	     that call, not for a write of each block), records them in the
 *	     metapage as a hole that is not tail, and empties the insert pages
 *	     and the free list: from then on inserts go to new pages behind the
 *	     hole, which will be the new tail.
 *	  2. It consumes the tail up to the hole: each page, under its exclusive
 *	     lock, is read and marked retired, so that an insert that still
 *	     meant to append to it goes elsewhere.  Retired pages keep their
 *	     entries: a scan that read the metapage before the end still reads
 *	     them, with the tables of its time.
 *	  3. It writes the new tables, stamped with a new generation number, and
 *	     the block map that gives each of their pages' places.  The old
 *	     tables are in order, so only the tail is sorted, and the
 *	     fingerprints of table 0's tombstones apart (hamming_sort.c: in
 *	     memory, and in runs on temporary files beyond it), and merged into
 *	     them as they are read again, page by page, while the new ones are
 *	     written (stream_next_entry, stream_next_key): a merge sorts the
 *	     tail, not the index.  An index without tables (or whose table 0 is
 *	     out of order) has every entry sorted instead.
 *	  4. Under the metapage's exclusive lock it publishes the new tables
 *	     (with an identity the index never had: hamming_new_tables_id) and
 *	     the tail behind the hole, records what they replace (the old
 *	     tables and the consumed pages) with the next transaction ID, and
 *	     flushes the WAL up to that record: a merge writes no transaction
 *	     ID, so no commit would.
 *
 *	  Those pages are reused, through the free space map, by a later merge,
 *	  once no snapshot that could have read the old metapage is left (as
 *	  nbtree recycles deleted pages); a scan checks the generation of every
 *	  table page it reads, so that a standby's query that outlived the
 *	  primary's snapshots fails instead of reading a reused page.  Every
 *	  change goes through generic WAL.  A merge that fails (cancelled, out of
 *	  memory, a crash) leaves the metapage saying so: the tail it had begun
 *	  to consume stays the tail, and the next merge turns the hole into
 *	  empty retired pages first; the free pages it took are given back to
 *	  the free space map by the next merge or VACUUM, which record every
 *	  block that nothing uses (hamming_map.c).  A merge runs under the table's
 *	  ShareUpdateExclusiveLock, as VACUUM does, so that it is not concurrent
 *	  with another merge nor with a bulk delete: in VACUUM's cleanup, in an
 *	  insert that finds the tail over tail_limit (when it gets the lock at
 *	  once), or in hamming_merge_tail().
 */
#include "hamming.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

/* an autovacuum worker, whose memory is autovacuum_work_mem (17 renamed the test) */
#if PG_VERSION_NUM >= 170000
#define in_autovacuum()	AmAutoVacuumWorkerProcess()
#else
#define in_autovacuum()	IsAutoVacuumWorkerProcess()
#endif

typedef struct MergeState
{
	Relation	index;
	BufferAccessStrategy strategy;
	const HammingTables *tables;	/* the view the merge began with */
	uint16		gen;
	/* the blocks the new pages go to: free pages taken, then the reserved ones */
	BlockNumber *blocks;
	Size		nblocks;
	Size		used;
	/*
	 * Collected: the entries sorted (hamming_sort.c, within memory and on
	 * temporary files beyond it), the NULL TIDs.  A merge that reads the old
	 * tables as it writes the new ones (stream) sorts the tail's entries
	 * only, and the fingerprints of table 0's tombstones apart (dead), which
	 * tables 1..3 drop as they are read again.  Otherwise (an index without
	 * tables, or whose table 0 is out of order) table 0's live entries are
	 * sorted too.
	 */
	HammingSort *sort;
	HammingSort *dead;
	HammingTids *nulls;
	Size		nnulls;
	bool		stream;
	Size		nold;			/* table 0's live entries */
	Size		ndead;
} MergeState;

/* where a streaming merge is in the old tables */
typedef struct MergeStream
{
	MergeState *ms;
	BlockNumber next_page;		/* the next logical page of the old table read */
	Size		read;			/* the entries of old table j read */
	/* table 0: the live entries of the page in hand; the tail's next entry */
	HammingEntry page[HAMMING_PAGE_CAPACITY];
	int			npage;
	int			ipage;
	HammingEntry tail;
	bool		has_tail;
	/* tables 1..3: the keys of the page in hand; the tail's and the tombstones' next */
	int			table;
	uint64		keys[HAMMING_KEYS_CAPACITY];
	int			nkeys;
	int			ikey;
	uint64		added;
	bool		has_added;
	uint64		dead;
	bool		has_dead;
	Size		ndead;			/* tombstones' keys dropped */
} MergeStream;

/* write page as block blkno, whole, through generic WAL */
static void
put_page(MergeState *ms, BlockNumber blkno, Page page)
{
	Buffer		buffer = ReadBufferExtended(ms->index, MAIN_FORKNUM, blkno, RBM_ZERO_AND_LOCK, ms->strategy);
	GenericXLogState *xlog = GenericXLogStart(ms->index);

	memcpy(GenericXLogRegisterBuffer(xlog, buffer, GENERIC_XLOG_FULL_IMAGE), page, BLCKSZ);
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(buffer);
}

/* the sink of hamming_write_streams(): the next block, numbered logically */
static BlockNumber
merge_sink(void *arg, Page page)
{
	MergeState *ms = (MergeState *) arg;

	if (ms->used >= ms->nblocks)
		elog(ERROR, "hamming merge of index \"%s\" ran out of reserved blocks",
			 RelationGetRelationName(ms->index));
	put_page(ms, ms->blocks[ms->used], page);
	return (BlockNumber) ms->used++;
}

/* an entry of table 0 or the tail, or a NULL TID */
static void
collect(MergeState *ms, uint64 fp, ItemPointer tid, bool isnull)
{
	if (isnull)
		hamming_tids_add(ms->nulls, tid);
	else
		hamming_sort_add(ms->sort, fp, tid);
}

/* free the pages of a map page's list, and the map page */
static void
free_mapped(Relation index, BlockNumber map_blkno)
{
	Buffer		buffer = hamming_lock_page(index, map_blkno, BUFFER_LOCK_SHARE, NULL);
	Page		page = BufferGetPage(buffer);
	int			i;

	if (hamming_page_is(page, HAMMING_MAP))
		for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
			RecordFreeIndexPage(index, HammingPageMap(page)[i]);
	UnlockReleaseBuffer(buffer);
	RecordFreeIndexPage(index, map_blkno);
}

/*
 * What the last merge replaced, once no snapshot can read it: the pages of
 * the tables go to the free space map, for the next merge's tables; the
 * consumed tail's ranges become ranges that inserts fill (as many as the
 * metapage lists, the others go to the free space map too).  False while a
 * snapshot may still read them.
 */
static bool
recycle_retired(Relation index)
{
	Buffer		metabuf;
	HammingMetaPageData *meta;
	HammingMetaPageData *old;
	GenericXLogState *xlog;
	BlockNumber blkno;
	Relation	heap;
	bool		removable;
	uint32		i;

	/* the horizon of the table's database: only its backends can scan the index */
	heap = RelationIdGetRelation(index->rd_index->indrelid);
	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	meta = HammingPageGetMeta(BufferGetPage(metabuf));
	if (meta->version < 3 || !meta->retired)
	{
		UnlockReleaseBuffer(metabuf);
		RelationClose(heap);
		return true;
	}
	removable = GlobalVisCheckRemovableFullXid(heap, meta->retired_xid);
	RelationClose(heap);
	if (!removable)
	{
		UnlockReleaseBuffer(metabuf);
		return false;
	}
	old = palloc(sizeof(HammingMetaPageData));
	memcpy(old, meta, sizeof(HammingMetaPageData));
	UnlockReleaseBuffer(metabuf);

	for (blkno = old->retired_start; blkno < old->retired_end; blkno++)
		RecordFreeIndexPage(index, blkno);
	for (i = 0; i < old->retired_nmap; i++)
	{
		CHECK_FOR_INTERRUPTS();
		free_mapped(index, old->retired_map_page[i]);
	}

	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
	xlog = GenericXLogStart(index);
	meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));
	for (i = 0; i < meta->nretired_ranges; i++)
	{
		HammingRange *r = &meta->retired_range[i];

		if (r->fill <= r->start)
			continue;
		if (meta->nranges < HAMMING_MAX_RANGES)
		{
			meta->range[meta->nranges].start = r->start;
			meta->range[meta->nranges].fill = r->start;
			meta->range[meta->nranges++].end = r->fill;
		}
		else
			for (blkno = r->start; blkno < r->fill; blkno++)
				RecordFreeIndexPage(index, blkno);
	}
	meta->nretired_ranges = 0;
	meta->retired = 0;
	meta->retired_nmap = 0;
	meta->retired_start = meta->retired_end = 0;
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
	IndexFreeSpaceMapVacuum(index);
	pfree(old);
	return true;
}

/*
 * Extend the index by count zeroed blocks from first (its end) at once,
 * under the extension lock: the metapage's lock is held meanwhile, so this
 * costs one call, not a buffer for each block (a first merge reserves as
 * many blocks as the index has).  16 and later allocate them; 15 writes the
 * last one and leaves the others to the file system, as hash indexes
 * extend.  Redo extends the index through the last block, which the caller
 * WAL-logs.
 */
static void
extend_index(Relation index, BlockNumber first, BlockNumber count)
{
#if PG_VERSION_NUM >= 160000
	smgrzeroextend(RelationGetSmgr(index), MAIN_FORKNUM, first, (int) count, false);
#else
	PGAlignedBlock zero;

	memset(zero.data, 0, BLCKSZ);
	smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, first + count - 1, zero.data, false);
#endif
}

/* a failed merge's reserved block: empty and retired, a tail page of the tables of gen */
static void
retire_empty(MergeState *ms, BlockNumber blkno, uint16 gen)
{
	PGAlignedBlock block;

	hamming_init_page(block.data, HAMMING_DATA | HAMMING_RETIRED);
	HammingPageGetOpaque(block.data)->gen = gen;
	put_page(ms, blkno, block.data);
}

/*
 * A merge that failed left its hole: its blocks become empty retired pages
 * of the tail (no scan reads a hole, nor the map of tables never
 * published), and the metapage forgets it.
 */
static void
close_failed_merge(MergeState *ms)
{
	Buffer		metabuf = hamming_lock_page(ms->index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	HammingMetaPageData *meta = HammingPageGetMeta(BufferGetPage(metabuf));
	BlockNumber start = meta->hole_start;
	BlockNumber end = meta->hole_end;
	uint16		gen = (uint16) meta->gen;
	bool		failed = meta->version >= 3 && meta->merging;
	GenericXLogState *xlog;
	BlockNumber blkno;

	UnlockReleaseBuffer(metabuf);
	if (!failed)
		return;
	for (blkno = start; blkno < end; blkno++)
	{
		CHECK_FOR_INTERRUPTS();
		retire_empty(ms, blkno, gen);
	}
	metabuf = hamming_lock_page(ms->index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
	xlog = GenericXLogStart(ms->index);
	meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));
	meta->merging = 0;
	meta->hole_start = meta->hole_end = 0;
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
}

/* is blkno in one of n ranges [start, end)? */
static bool
in_ranges(const HammingRange *r, uint32 n, BlockNumber blkno)
{
	uint32		i;

	for (i = 0; i < n; i++)
		if (blkno >= r[i].start && blkno < r[i].end)
			return true;
	return false;
}

/*
 * May a free page that the free space map gives be written?  Only what a
 * recycled merge left is, but the map is not crash-safe: a page of the
 * current tables or tail, or of a range of the tail, never is.
 */
static bool
reusable(MergeState *ms, BlockNumber blkno, const HammingMetaPageData *meta)
{
	Buffer		buffer;
	Page		page;
	bool		ok;

	if (blkno == HAMMING_METAPAGE_BLKNO || blkno >= meta->tail_start ||
		in_ranges(meta->range, meta->nranges, blkno) ||
		in_ranges(meta->consumed, meta->nconsumed, blkno))
		return false;
	buffer = ReadBufferExtended(ms->index, MAIN_FORKNUM, blkno, RBM_NORMAL, ms->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page))
		ok = true;
	else if (HammingPageGetOpaque(page)->page_id != HAMMING_PAGE_ID)
		ok = false;
	else if (hamming_page_is(page, HAMMING_SORTED | HAMMING_KEYS | HAMMING_DIRECTORY | HAMMING_MAP))
		ok = HammingPageGetOpaque(page)->gen != (uint16) meta->gen;
	else
		ok = hamming_page_is(page, HAMMING_RETIRED);
	UnlockReleaseBuffer(buffer);
	return ok;
}

/* collect the live entries of the current tables: table 0 and its NULL pages */
static void
collect_tables(MergeState *ms, const HammingTables *tables)
{
	BlockNumber pos;

	for (pos = 0; pos < tables->pass_pages; pos++)
	{
		BlockNumber blkno = hamming_table_block(tables, tables->table_start[0] + pos);
		Buffer		buffer = hamming_lock_page(ms->index, blkno, BUFFER_LOCK_SHARE, ms->strategy);
		Page		page = BufferGetPage(buffer);
		bool		nulls = pos >= tables->table0_pages;
		int			i;

		CHECK_FOR_INTERRUPTS();
		hamming_check_table_page(ms->index, tables, page, blkno, nulls ? HAMMING_NULLS : HAMMING_DATA);
		for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
		{
			if (ItemPointerIsValid(&HammingPageTids(page)[i]))
			{
				if (ms->stream && !nulls)
					ms->nold++; /* read again as the new table 0 is written */
				else
					collect(ms, HammingPageFingerprints(page)[i], &HammingPageTids(page)[i], nulls);
			}
			else if (ms->stream && !nulls)
			{
				/* tables 1..3 hold its key */
				hamming_sort_add(ms->dead, HammingPageFingerprints(page)[i], &HammingPageTids(page)[i]);
				ms->ndead++;
			}
		}
		UnlockReleaseBuffer(buffer);
	}
}

/* a damaged old table: the merge cannot go on */
static void
old_table_damaged(MergeState *ms, int table, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("probe table %d of hamming index \"%s\" %s", table, RelationGetRelationName(ms->index), what),
			 errhint("REINDEX the index.")));
}

/*
 * Before a streaming merge: table 0's tombstones, NULL TIDs and whether its
 * live entries are in order (a merge that streams relies on it).
 */
static bool
count_table0(MergeState *ms, const HammingTables *tables, Size *ndead, Size *nnulls)
{
	BlockNumber pos;
	HammingEntry prev = {0};
	bool		any = false;

	*ndead = *nnulls = 0;
	for (pos = 0; pos < tables->pass_pages; pos++)
	{
		BlockNumber blkno = hamming_table_block(tables, tables->table_start[0] + pos);
		Buffer		buffer = hamming_lock_page(ms->index, blkno, BUFFER_LOCK_SHARE, ms->strategy);
		Page		page = BufferGetPage(buffer);
		bool		nulls = pos >= tables->table0_pages;
		bool		ordered = true;
		int			i;

		CHECK_FOR_INTERRUPTS();
		hamming_check_table_page(ms->index, tables, page, blkno, nulls ? HAMMING_NULLS : HAMMING_DATA);
		for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
		{
			HammingEntry entry;

			entry.fp = HammingPageFingerprints(page)[i];
			entry.tid = HammingPageTids(page)[i];
			if (nulls)
				*nnulls += ItemPointerIsValid(&entry.tid);
			else if (!ItemPointerIsValid(&entry.tid))
				(*ndead)++;
			else
			{
				ordered &= !any || hamming_entry_cmp(&prev, &entry) <= 0;
				prev = entry;
				any = true;
			}
		}
		UnlockReleaseBuffer(buffer);
		if (!ordered)
			return false;
	}
	return true;
}

/* the next page of old table 0: its live entries into s->page */
static void
stream_table0_page(MergeStream *s)
{
	MergeState *ms = s->ms;
	BlockNumber blkno = hamming_table_block(ms->tables, ms->tables->table_start[0] + s->next_page++);
	Buffer		buffer = hamming_lock_page(ms->index, blkno, BUFFER_LOCK_SHARE, ms->strategy);
	Page		page = BufferGetPage(buffer);
	int			i;

	CHECK_FOR_INTERRUPTS();
	hamming_check_table_page(ms->index, ms->tables, page, blkno, HAMMING_DATA);
	s->npage = s->ipage = 0;
	for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
		if (ItemPointerIsValid(&HammingPageTids(page)[i]))
		{
			s->page[s->npage].fp = HammingPageFingerprints(page)[i];
			s->page[s->npage++].tid = HammingPageTids(page)[i];
		}
	UnlockReleaseBuffer(buffer);
}

/* a streaming merge's table 0: the old table's live entries and the sorted tail, merged */
static bool
stream_next_entry(void *arg, HammingEntry *entry)
{
	MergeStream *s = (MergeStream *) arg;
	MergeState *ms = s->ms;
	bool		old;

	while (s->ipage == s->npage && s->next_page < ms->tables->table0_pages)
		stream_table0_page(s);
	old = s->ipage < s->npage;
	if (!s->has_tail)
		s->has_tail = hamming_sort_next_entry(ms->sort, &s->tail);
	if (!old && !s->has_tail)
		return false;
	if (old && (!s->has_tail || hamming_entry_cmp(&s->page[s->ipage], &s->tail) <= 0))
		*entry = s->page[s->ipage++];
	else
	{
		*entry = s->tail;
		s->has_tail = false;
	}
	return true;
}

/*
 * A streaming merge's table j (1..3): three runs in order merged, a key at a
 * time: the keys of the old table j (every fingerprint of the old table 0,
 * tombstones included, rotated) less the tombstones', and the tail's.
 * Called for j = 1, 2, 3 in turn.
 */
static bool
stream_next_key(void *arg, int table, uint64 *key)
{
	MergeStream *s = (MergeStream *) arg;
	MergeState *ms = s->ms;
	const HammingTables *tables = ms->tables;
	Size		pages = ((Size) tables->nsorted + HAMMING_KEYS_CAPACITY - 1) / HAMMING_KEYS_CAPACITY;

	if (s->table != table)
	{
		s->table = table;
		s->next_page = 0;
		s->read = 0;
		s->nkeys = s->ikey = 0;
		s->has_added = hamming_sort_next_key(ms->sort, table, &s->added);
		s->has_dead = hamming_sort_next_key(ms->dead, table, &s->dead);
		s->ndead = 0;
	}
	for (;;)
	{
		if (s->ikey == s->nkeys && s->next_page < pages)
		{
			BlockNumber blkno = hamming_table_block(tables, tables->table_start[table] + s->next_page++);
			Buffer		buffer = hamming_lock_page(ms->index, blkno, BUFFER_LOCK_SHARE, ms->strategy);
			Page		page = BufferGetPage(buffer);

			CHECK_FOR_INTERRUPTS();
			hamming_check_table_page(ms->index, tables, page, blkno, HAMMING_KEYS);
			s->nkeys = HammingPageGetOpaque(page)->nentries;
			memcpy(s->keys, HammingPageKeys(page), s->nkeys * sizeof(uint64));
			s->ikey = 0;
			s->read += s->nkeys;
			UnlockReleaseBuffer(buffer);
			continue;
		}
		if (s->ikey < s->nkeys)
		{
			uint64		old = s->keys[s->ikey];

			if (s->has_added && s->added < old)
			{
				*key = s->added;
				s->has_added = hamming_sort_next_key(ms->sort, table, &s->added);
				return true;
			}
			s->ikey++;
			if (s->has_dead && s->dead <= old)
			{
				if (s->dead < old)
					old_table_damaged(ms, table, "lacks the key of a cleared entry");
				/* a tombstone's */
				s->has_dead = hamming_sort_next_key(ms->dead, table, &s->dead);
				s->ndead++;
				continue;
			}
			*key = old;
			return true;
		}
		if (s->has_added)
		{
			*key = s->added;
			s->has_added = hamming_sort_next_key(ms->sort, table, &s->added);
			return true;
		}
		if (s->read != tables->nsorted || s->ndead != ms->ndead)
			old_table_damaged(ms, table, "does not hold the entries of table 0");
		return false;
	}
}

/*
 * Consume tail page blkno: its entries collected, the page retired (a page
 * that a failed merge retired is read again: its entries are in no table).
 */
static void
consume(MergeState *ms, BlockNumber blkno)
{
	Buffer		buffer = hamming_lock_page(ms->index, blkno, BUFFER_LOCK_EXCLUSIVE, ms->strategy);
	Page		page = BufferGetPage(buffer);
	GenericXLogState *xlog;
	int			i;

	if (PageIsNew(page))
	{
		/*
		 * Left by a crash while the index grew: retired under the lock that
		 * saw it new, so that an insert that meant to fill it goes elsewhere
		 */
		xlog = GenericXLogStart(ms->index);
		page = GenericXLogRegisterBuffer(xlog, buffer, GENERIC_XLOG_FULL_IMAGE);
		hamming_init_page(page, HAMMING_DATA | HAMMING_RETIRED);
		HammingPageGetOpaque(page)->gen = ms->tables->gen;
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(buffer);
		return;
	}
	hamming_check_tail_page(ms->index, ms->tables, page, blkno);
	for (i = 0; i < HammingPageGetOpaque(page)->nentries; i++)
		collect(ms, HammingPageFingerprints(page)[i], &HammingPageTids(page)[i],
				hamming_page_is(page, HAMMING_NULLS));
	if (!hamming_page_is(page, HAMMING_RETIRED))
	{
		xlog = GenericXLogStart(ms->index);
		page = GenericXLogRegisterBuffer(xlog, buffer, 0);
		HammingPageGetOpaque(page)->flags |= HAMMING_RETIRED;
		GenericXLogFinish(xlog);
	}
	UnlockReleaseBuffer(buffer);
}

/* write the map of the new tables (logical pages 0..nlogical-1) on blocks after them */
static uint32
write_map(MergeState *ms, Size nlogical, BlockNumber *map_page)
{
	PGAlignedBlock block;
	Page		page = block.data;
	uint32		nmap = 0;
	Size		i;

	for (i = 0; i < nlogical; i += HAMMING_MAP_CAPACITY)
	{
		Size		n = Min(nlogical - i, HAMMING_MAP_CAPACITY);

		hamming_init_page(page, HAMMING_MAP);
		HammingPageGetOpaque(page)->gen = ms->gen;
		HammingPageGetOpaque(page)->nentries = n;
		memcpy(HammingPageMap(page), ms->blocks + i, n * sizeof(BlockNumber));
		map_page[nmap++] = ms->blocks[merge_sink(ms, page)];
	}
	return nmap;
}

/*
 * The shares of budget bytes of a merge's sorts for a tail of tail_pages
 * pages, and whether they hold everything in memory: the NULL TIDs (those
 * of table 0, and the tail's at most one a slot), 6 bytes each, up to a
 * quarter; the tombstones' keys (streaming) what they need of the rest, up
 * to half; the entries (the tail's, and table 0's unless streaming) the
 * remainder.  Beyond its share a sort writes sorted runs to temporary files.
 */
static bool
sort_shares(const MergeState *ms, Size budget, Size tail_pages, Size *nulls, Size *dead, Size *entries)
{
	Size		tail_slots = tail_pages * HAMMING_PAGE_CAPACITY;
	Size		slots = tail_slots + (ms->stream ? 0 : ms->tables->pass_pages * HAMMING_PAGE_CAPACITY);

	*nulls = Min((ms->nnulls + tail_slots) * sizeof(ItemPointerData), budget / 4);
	*dead = ms->stream ? Min(ms->ndead * HAMMING_ROW_BYTES, (budget - *nulls) / 2) : 0;
	*entries = budget - *nulls - *dead;
	return *nulls == (ms->nnulls + tail_slots) * sizeof(ItemPointerData) &&
		*dead >= (ms->stream ? ms->ndead * HAMMING_ROW_BYTES : 0) &&
		*entries >= slots * HAMMING_ROW_BYTES;
}

/* an insert's merge that memory cannot hold: left to VACUUM */
static HammingMergeResult
insert_cannot_hold(Relation index)
{
	ereport(DEBUG1,
			(errmsg("hamming index \"%s\" is not merged by an insert", RelationGetRelationName(index)),
			 errdetail("A merge of its tail needs more than maintenance_work_mem; VACUUM or hamming_merge_tail() merges it.")));
	return HAMMING_NO_MEMORY;
}

/*
 * Merge the tail of index into new probe tables, if the tail is worth it
 * (merged now: if there is one), within maintenance_work_mem (in
 * autovacuum, autovacuum_work_mem) and temporary files beyond it; an
 * insert's merge only within memory (HAMMING_NO_MEMORY otherwise: an
 * insert does not fail for want of temporary file space).  An index whose
 * new tables the block map cannot hold is not merged; VACUUM and a merge
 * now say so (a notice, in autovacuum a log line).  The caller holds a
 * ShareUpdateExclusiveLock on the table (as VACUUM does): merges are not
 * concurrent with each other nor with a bulk delete.
 */
HammingMergeResult
hamming_merge(Relation index, BufferAccessStrategy strategy, HammingMergeBy by)
{
	HammingOptions *options = (HammingOptions *) index->rd_options;
	MergeState	ms;
	HammingTables tables;
	HammingMetaPageData *meta;
	HammingMetaPageData *fresh;
	Buffer		metabuf;
	GenericXLogState *xlog;
	HammingRange consumed[3 * HAMMING_MAX_RANGES + 1];
	uint32		nconsumed;
	Size		tail_pages;
	Size		consume_pages;
	Size		budget;
	Size		nulls_share;
	Size		dead_share;
	Size		entries_share;
	Size		need;
	Size		nfree;
	BlockNumber reserved;
	BlockNumber blkno;
	bool		fits;
	bool		was_mapped;
	XLogRecPtr	published;
	uint32		r;
	Size		i;

	if (options != NULL && !options->probe_tables)
		return HAMMING_NOT_MERGED;
	if (!recycle_retired(index))
		return HAMMING_NOT_MERGED;	/* the last merge's pages may still be read */

	memset(&ms, 0, sizeof(ms));
	ms.index = index;
	ms.strategy = strategy;
	close_failed_merge(&ms);
	/* pages that a merge took and did not write (it failed), for this one */
	hamming_record_unused(index);

	/* worth it? the tail against the tables, in entries at most (the metapage only) */
	hamming_describe_tables(index, &tables);
	tail_pages = hamming_tail_pages(&tables);
	if (by == HAMMING_MERGE_NOW ? tail_pages == 0 :
		tail_pages < HAMMING_MERGE_MIN_PAGES ||
		(double) tail_pages * HAMMING_PAGE_CAPACITY < (double) tables.nsorted / HAMMING_MERGE_TABLE_SHARE)
		return HAMMING_NOT_MERGED;
	if (!hamming_tables_mappable(tables.pass_pages + tail_pages))
	{
		ereport(by == HAMMING_MERGE_BY_INSERT ? DEBUG1 : in_autovacuum() ? LOG : NOTICE,
				(errmsg("hamming index \"%s\" is not merged", RelationGetRelationName(index)),
				 errdetail("Its new probe tables would take more than the %zu pages that a merge maps.",
						   (Size) HAMMING_MAX_MAP_PAGES * HAMMING_MAP_CAPACITY),
				 errhint("Partition the table, so that each index holds fewer rows.")));
		return HAMMING_NOT_MERGED;
	}
	budget = (Size) (in_autovacuum() && autovacuum_work_mem != -1 ?
					 autovacuum_work_mem : maintenance_work_mem) * 1024;
	if (by == HAMMING_MERGE_BY_INSERT && tail_pages * HAMMING_PAGE_CAPACITY * HAMMING_ROW_BYTES > budget)
		return insert_cannot_hold(index);
	hamming_free_tables(&tables);
	hamming_read_tables(index, &tables);
	ms.tables = &tables;
	/* old tables in order: sort the tail only, and read them again as they are rewritten */
	ms.stream = tables.ntables > 0 && count_table0(&ms, &tables, &ms.ndead, &ms.nnulls);
	if (!sort_shares(&ms, budget, tail_pages, &nulls_share, &dead_share, &entries_share) &&
		by == HAMMING_MERGE_BY_INSERT)
	{
		hamming_free_tables(&tables);
		return insert_cannot_hold(index);
	}

	/* 1. free pages first (as many as the tail now needs), then reserved blocks at the end */
	meta = palloc(sizeof(HammingMetaPageData));
	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	memcpy(meta, HammingPageGetMeta(BufferGetPage(metabuf)), sizeof(HammingMetaPageData));
	UnlockReleaseBuffer(metabuf);
	/* 1 .. 65535 and round again: 0 is no generation */
	ms.gen = (uint16) (meta->next_gen + 1);
	if (ms.gen == 0)
		ms.gen = 1;
	need = hamming_merge_pages(tables.pass_pages + tail_pages);
	ms.blocks = palloc_extended(need * sizeof(BlockNumber), MCXT_ALLOC_HUGE);
	nfree = 0;
	while (nfree < need)
	{
		BlockNumber free_blkno = GetFreeIndexPage(index);

		CHECK_FOR_INTERRUPTS();
		if (free_blkno == InvalidBlockNumber)
			break;
		if (reusable(&ms, free_blkno, meta))
			ms.blocks[nfree++] = free_blkno;
	}

	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
	memcpy(meta, HammingPageGetMeta(BufferGetPage(metabuf)), sizeof(HammingMetaPageData));
	LockRelationForExtension(index, ExclusiveLock);
	/* what is consumed: ranges a failed merge began, the filled part of each range, the open end */
	nconsumed = meta->version >= 3 ? meta->nconsumed : 0;
	memcpy(consumed, meta->consumed, nconsumed * sizeof(HammingRange));
	for (r = 0; meta->version >= 3 && r < meta->nranges; r++)
		if (meta->range[r].fill > meta->range[r].start && nconsumed < lengthof(consumed) - 1)
		{
			consumed[nconsumed] = meta->range[r];
			consumed[nconsumed++].end = meta->range[r].fill;
		}
	consumed[nconsumed].start = meta->tail_start;
	consumed[nconsumed].end = consumed[nconsumed].fill = RelationGetNumberOfBlocks(index);
	consume_pages = 0;
	for (r = 0; r <= nconsumed; r++)
		consume_pages += consumed[r].fill - consumed[r].start;
	need = hamming_merge_pages(tables.pass_pages + consume_pages);
	/* the tail as it is now: the sorts' shares again (an insert's still within memory) */
	fits = sort_shares(&ms, budget, consume_pages, &nulls_share, &dead_share, &entries_share) ||
		by != HAMMING_MERGE_BY_INSERT;
	if (!fits || need > (Size) HAMMING_MAX_MAP_PAGES * HAMMING_MAP_CAPACITY ||
		nconsumed > 3 * HAMMING_MAX_RANGES - 1)
	{
		UnlockRelationForExtension(index, ExclusiveLock);
		UnlockReleaseBuffer(metabuf);
		for (i = 0; i < nfree; i++)
			RecordFreeIndexPage(index, ms.blocks[i]);
		ereport(DEBUG1,
				(errmsg("hamming index \"%s\" is not merged now: its tail grew past what one merge takes",
						RelationGetRelationName(index))));
		hamming_free_tables(&tables);
		pfree(ms.blocks);
		pfree(meta);
		return HAMMING_NOT_MERGED;
	}
	reserved = consumed[nconsumed].end;
	if (need > nfree)
	{
		ms.blocks = repalloc_huge(ms.blocks, need * sizeof(BlockNumber));
		for (i = nfree; i < need; i++)
			ms.blocks[i] = reserved++;
		extend_index(index, ms.blocks[nfree], need - nfree);
	}
	ms.nblocks = Max(need, nfree);
	UnlockRelationForExtension(index, ExclusiveLock);
	/*
	 * The extension itself is not WAL-logged: its last block is, so that
	 * the index has its reserved blocks after recovery (redo extends it),
	 * and the tail, which starts after them, is where inserts extend it.
	 */
	if (need > nfree)
		retire_empty(&ms, reserved - 1, (uint16) meta->gen);
	xlog = GenericXLogStart(index);
	meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));
	meta->version = HAMMING_VERSION;
	meta->next_gen = ms.gen;
	meta->merging = 1;
	meta->hole_start = consumed[nconsumed].fill;
	meta->hole_end = reserved;
	/* the ranges' filled parts are consumed: what is left of each takes the next inserts */
	meta->nconsumed = nconsumed;
	memcpy(meta->consumed, consumed, nconsumed * sizeof(HammingRange));
	for (r = 0, i = 0; r < meta->nranges; r++)
	{
		HammingRange left = meta->range[r];

		left.start = left.fill;
		if (left.start < left.end)
			meta->range[i++] = left;
	}
	meta->nranges = i;
	hamming_clear_insert_pages(meta);
	meta->nfree = 0;
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);

	/* 2. the entries: table 0's live ones (unless streaming), then the consumed tail's */
	ms.sort = hamming_sort_begin(entries_share, false);
	if (ms.stream)
		ms.dead = hamming_sort_begin(dead_share, true);
	ms.nulls = hamming_tids_begin(nulls_share);
	ms.ndead = 0;				/* counted again as they are collected */
	collect_tables(&ms, &tables);
	for (r = 0; r <= nconsumed; r++)
		for (blkno = consumed[r].start; blkno < consumed[r].fill; blkno++)
		{
			CHECK_FOR_INTERRUPTS();
			hamming_vacuum_delay();
			consume(&ms, blkno);
		}

	/* 3. the new tables (the tail merged into the old ones, or all sorted again) and their map */
	fresh = palloc0(sizeof(HammingMetaPageData));
	if (ms.stream)
	{
		MergeStream *stream = palloc0(sizeof(MergeStream));
		HammingTableSource source = {stream_next_entry, stream_next_key, stream};

		hamming_sort_done(ms.sort);
		hamming_sort_done(ms.dead);
		stream->ms = &ms;
		hamming_write_streams(ms.nold + hamming_sort_count(ms.sort), &source, ms.nulls, ms.gen,
							  merge_sink, &ms, fresh);
		pfree(stream);
	}
	else
		hamming_write_sorted(ms.sort, ms.nulls, false, ms.gen, merge_sink, &ms, fresh);
	if (hamming_sort_runs(ms.sort) > 0 || (ms.dead && hamming_sort_runs(ms.dead) > 0))
		ereport(DEBUG1,
				(errmsg("hamming index \"%s\" was merged through temporary files",
						RelationGetRelationName(index)),
				 errdetail("%zu entries were sorted in %d runs, the keys of %zu cleared entries in %d.",
						   hamming_sort_count(ms.sort), hamming_sort_runs(ms.sort),
						   ms.ndead, ms.dead ? hamming_sort_runs(ms.dead) : 0)));
	hamming_sort_end(ms.sort);
	if (ms.dead)
		hamming_sort_end(ms.dead);
	fresh->nmap = write_map(&ms, ms.used, fresh->map_page);

	/* 4. publish, and say what is replaced */
	metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_EXCLUSIVE, NULL);
	xlog = GenericXLogStart(index);
	meta = hamming_meta_for_write(GenericXLogRegisterBuffer(xlog, metabuf, 0));
	was_mapped = meta->nmap > 0;
	meta->retired = 1;
	meta->retired_xid = ReadNextFullTransactionId();
	meta->retired_nmap = meta->nmap;
	memcpy(meta->retired_map_page, meta->map_page, meta->nmap * sizeof(BlockNumber));
	/* the tables CREATE INDEX wrote lie before its tail */
	meta->retired_start = was_mapped ? 0 : HAMMING_METAPAGE_BLKNO + 1;
	meta->retired_end = was_mapped ? 0 : consumed[nconsumed].start;
	meta->nretired_ranges = nconsumed + 1;
	memcpy(meta->retired_range, consumed, (nconsumed + 1) * sizeof(HammingRange));
	meta->nconsumed = 0;
	meta->ntables = HAMMING_NTABLES;
	meta->dir_bits = fresh->dir_bits;
	meta->nsorted = fresh->nsorted;
	memcpy(meta->table_start, fresh->table_start, sizeof(meta->table_start));
	memcpy(meta->dir_start, fresh->dir_start, sizeof(meta->dir_start));
	meta->null_pages = fresh->null_pages;
	meta->nmap = fresh->nmap;
	memcpy(meta->map_page, fresh->map_page, fresh->nmap * sizeof(BlockNumber));
	meta->gen = ms.gen;
	meta->tables_id = hamming_new_tables_id(meta->tables_id);
	meta->tail_start = reserved;
	meta->merging = 0;
	meta->hole_start = meta->hole_end = 0;
	published = GenericXLogFinish(xlog);
	UnlockReleaseBuffer(metabuf);
	/* durable when the merge returns, though it wrote no transaction ID */
	if (!XLogRecPtrIsInvalid(published))
		XLogFlush(published);

	/* blocks taken but not written: no view reads them */
	for (i = ms.used; i < ms.nblocks; i++)
		RecordFreeIndexPage(index, ms.blocks[i]);
	IndexFreeSpaceMapVacuum(index);

	hamming_free_tables(&tables);
	pfree(fresh);
	pfree(ms.blocks);
	hamming_tids_end(ms.nulls);
	return HAMMING_MERGED;
}

/*
 * hamming_merge_tail(index regclass) returns boolean: merge the tail of a
 * hamming index of simhash now (as VACUUM would, but for a tail of any
 * size), waiting for a VACUUM of its table to end.  False when there was
 * nothing to merge, the index has no probe tables by its options, the last
 * merge's pages may still be read by a snapshot, or the new tables would
 * outgrow the block map.  Needs to own the table, like VACUUM.
 */
PG_FUNCTION_INFO_V1(hamming_merge_tail);

Datum
hamming_merge_tail(PG_FUNCTION_ARGS)
{
	Relation	heap;
	Relation	index = hamming_open_owned(PG_GETARG_OID(0), ShareUpdateExclusiveLock, RowExclusiveLock,
										   "merge", &heap);
	bool		merged;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("Hamming indexes cannot be merged during recovery.")));
	merged = hamming_merge(index, NULL, HAMMING_MERGE_NOW) == HAMMING_MERGED;
	index_close(index, RowExclusiveLock);
	table_close(heap, ShareUpdateExclusiveLock);
	PG_RETURN_BOOL(merged);
}
