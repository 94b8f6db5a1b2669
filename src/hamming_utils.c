/*
 * hamming_utils.c
 *	  Helpers of the "hamming" access method: page and metapage
 *	  initialisation, new pages, reading and checking pages, opening an
 *	  index for a function that must own its table (check, merge), the
 *	  probe tables' description (without their block map, hamming_map.c)
 *	  and their radii, and the keys and ordering values that a scan of
 *	  either width keeps.  The index's options are in hamming_options.c.
 */
#include "mih.h"
#include "hamming.h"
#include "simhash128.h"

#include "access/relscan.h"
#include "access/table.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

void
hamming_init_page(Page page, uint16 kind)
{
	HammingPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(HammingPageOpaqueData));
	opaque = HammingPageGetOpaque(page);
	opaque->flags = kind;
	opaque->nentries = 0;
	opaque->page_id = HAMMING_PAGE_ID;
	/* the whole array area counts as used: no hole for full-page images */
	if (kind != HAMMING_META)
		((PageHeader) page)->pd_lower = ((PageHeader) page)->pd_upper;
}

StaticAssertDecl(MAXALIGN(sizeof(HammingMetaPageData)) <= HAMMING_PAGE_SPACE,
				 "the metapage's data fits on a page");

void
hamming_init_metapage(Page page)
{
	HammingMetaPageData *meta;

	hamming_init_page(page, HAMMING_META);
	meta = HammingPageGetMeta(page);
	meta->magic = HAMMING_MAGIC;
	meta->version = HAMMING_VERSION;
	hamming_clear_insert_pages(meta);
	meta->nfree = 0;
	meta->tail_start = HAMMING_METAPAGE_BLKNO + 1;
	meta->tables_id = hamming_new_tables_id(0);
	((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
}

/*
 * An identity for new tables of an index whose tables had previous: above
 * it, above every identity this backend gave before, and at least the WAL
 * insert position.  A backend keeps what it read of an index under the
 * index's relfilenode and this number; a build in place (TRUNCATE of a
 * table created in the same transaction) keeps the relfilenode and starts
 * from a new metapage, but only the backend whose transaction created the
 * relfilenode can do that, and this backend's identities never repeat.
 */
uint64
hamming_new_tables_id(uint64 previous)
{
	static uint64 last_given = 0;
	uint64		id = Max(previous, last_given) + 1;

	if (!RecoveryInProgress())
		id = Max(id, (uint64) GetXLogInsertRecPtr());
	last_given = id;
	return id;
}

/* a new page at the end of the index, pinned and exclusively locked */
Buffer
hamming_new_buffer(Relation index)
{
	Buffer		buffer;

	LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}

/*
 * Complain about a page that this method did not write, a metapage of a
 * version this library does not read, and a new (all-zero) page at block 0:
 * the metapage of an unlogged index whose init fork a crash lost, in
 * versions before 0.4.0.  (A new page elsewhere is a page that a crash left
 * while the index grew: scans skip it, inserts take it once VACUUM lists it.)
 */
void
hamming_check_page(Relation index, Page page, BlockNumber blkno)
{
	uint16		flags;
	Size		capacity;

	if (PageIsNew(page))
	{
		if (blkno == HAMMING_METAPAGE_BLKNO)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has no metapage", RelationGetRelationName(index)),
					 errdetail("Block 0 is all zero; it should hold the metapage."),
					 errhint("Please REINDEX it.")));
		return;
	}
	flags = HammingPageGetOpaque(page)->flags;
	capacity = (flags & HAMMING_KEYS) ? HAMMING_KEYS_CAPACITY :
		(flags & HAMMING_DIRECTORY) ? HAMMING_DIRECTORY_CAPACITY :
		(flags & HAMMING_MAP) ? HAMMING_MAP_CAPACITY : HAMMING_PAGE_CAPACITY;
	if (HammingPageGetOpaque(page)->page_id != HAMMING_PAGE_ID ||
		HammingPageGetOpaque(page)->nentries > capacity ||
		/* entries with TIDs are of no other kind (scans size their arrays by it) */
		((flags & (HAMMING_DATA | HAMMING_NULLS)) != 0 &&
		 (flags & (HAMMING_KEYS | HAMMING_DIRECTORY | HAMMING_MAP)) != 0) ||
		(blkno == HAMMING_METAPAGE_BLKNO) != ((HammingPageGetOpaque(page)->flags & HAMMING_META) != 0) ||
		(blkno == HAMMING_METAPAGE_BLKNO && HammingPageGetMeta(page)->magic != HAMMING_MAGIC))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains an unexpected page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	if (blkno == HAMMING_METAPAGE_BLKNO && HammingPageGetMeta(page)->version >= 3)
	{
		HammingMetaPageData *meta = HammingPageGetMeta(page);

		if (meta->nmap > HAMMING_MAX_MAP_PAGES || meta->retired_nmap > HAMMING_MAX_MAP_PAGES ||
			meta->nranges > HAMMING_MAX_RANGES || meta->nconsumed > lengthof(meta->consumed) ||
			meta->nretired_ranges > lengthof(meta->retired_range) || meta->nfree > HAMMING_MAX_FREE_PAGES)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has a corrupted metapage", RelationGetRelationName(index)),
					 errdetail("It lists more map pages, ranges or free pages than a metapage holds."),
					 errhint("Please REINDEX it.")));
	}
	if (blkno == HAMMING_METAPAGE_BLKNO &&
		(HammingPageGetMeta(page)->version < 1 || HammingPageGetMeta(page)->version > HAMMING_VERSION))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has version %u, which this version of simhash does not read",
						RelationGetRelationName(index), HammingPageGetMeta(page)->version),
				 errdetail("Versions 1 to %d are read.", HAMMING_VERSION),
				 errhint("Please REINDEX it, or install the simhash library that built it.")));
}

/*
 * The table of index indexoid, once the caller is known to own it (owner) or
 * to have SELECT on it (not owner): from the catalogs, without a lock, so that
 * a role that may not is refused before it queues a lock that others wait
 * for.  Checked again once the relations are locked.
 */
Oid
hamming_index_table(Oid indexoid, bool owner)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	char	   *name = get_rel_name(indexoid);
	AclResult	acl;

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u does not exist", indexoid)));
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name)));
#if PG_VERSION_NUM >= 160000
	if (owner)
		acl = object_ownercheck(RelationRelationId, heapoid, GetUserId()) ? ACLCHECK_OK : ACLCHECK_NOT_OWNER;
#else
	if (owner)
		acl = pg_class_ownercheck(heapoid, GetUserId()) ? ACLCHECK_OK : ACLCHECK_NOT_OWNER;
#endif
	else
		acl = pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_TABLE, get_rel_name(heapoid));
	return heapoid;
}

/*
 * Open the hamming index of simhash indexoid and its table *heap (the
 * table first, as every other user of both locks them), for a function
 * that needs to own the table and that does "action" (check, merge) to a
 * valid index of this session or a permanent one.  Ownership is checked
 * before the locks and again after them (the index may have been dropped
 * and its OID reused meanwhile).
 */
Relation
hamming_open_owned(Oid indexoid, LOCKMODE heap_mode, LOCKMODE index_mode, const char *action,
				   Relation *heap)
{
	Oid			heapoid = hamming_index_table(indexoid, true);
	Relation	index;

	*heap = table_open(heapoid, heap_mode);
	index = index_open(indexoid, index_mode);
	if (hamming_index_table(indexoid, true) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" was replaced while it was being opened", RelationGetRelationName(index))));
	if (index->rd_rel->relkind != RELKIND_INDEX || index->rd_indam->amvalidate != hamming_validate)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hamming index", RelationGetRelationName(index))));
	if (TupleDescAttr(RelationGetDescr(index), 0)->attlen == sizeof(Simhash128))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s index \"%s\"", action, RelationGetRelationName(index)),
				 errdetail("It is an index of simhash128, which has no probe tables; only indexes of simhash and of text are supported.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s temporary tables of other sessions", action)));
	if (!index->rd_index->indisvalid || !index->rd_index->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot %s index \"%s\"", action, RelationGetRelationName(index)),
				 errdetail("The index is not valid, or still being built.")));
	return index;
}

/* page blkno, pinned, locked in mode and checked */
Buffer
hamming_lock_page(Relation index, BlockNumber blkno, int mode, BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, mode);
	hamming_check_page(index, BufferGetPage(buffer), blkno);
	return buffer;
}

/*
 * The probe tables and the tail as the metapage describes them now, and
 * the pages of the block map of a merged index (read by hamming_map.c: the
 * planner's estimates need no map).
 */
void
hamming_describe_tables(Relation index, HammingTables *tables)
{
	Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	HammingMetaPageData *meta = HammingPageGetMeta(BufferGetPage(metabuf));

	memset(tables, 0, sizeof(HammingTables));
	tables->tail_start = HAMMING_METAPAGE_BLKNO + 1;
	if (meta->version >= 2 && meta->ntables == HAMMING_NTABLES)
	{
		tables->ntables = meta->ntables;
		tables->dir_bits = meta->dir_bits;
		tables->nsorted = meta->nsorted;
		memcpy(tables->table_start, meta->table_start, sizeof(tables->table_start));
		memcpy(tables->dir_start, meta->dir_start, sizeof(tables->dir_start));
		tables->tail_start = meta->tail_start;
		tables->table0_pages = (meta->nsorted + HAMMING_PAGE_CAPACITY - 1) / HAMMING_PAGE_CAPACITY;
	}
	if (meta->version >= 3)
	{
		tables->tail_start = meta->tail_start;
		tables->gen = (uint16) meta->gen;
		tables->pass_pages = meta->null_pages;
		tables->nmap = meta->nmap;
		memcpy(tables->map_page, meta->map_page, meta->nmap * sizeof(BlockNumber));
	}
	tables->pass_pages += tables->table0_pages;
	tables->tail_epoch = meta->tail_epoch;
	tables->tables_id = meta->tables_id;
	/* under the metapage's lock: a merge that begins later reserves blocks past these */
	tables->view_end = RelationGetNumberOfBlocks(index);
	tables->nsegments = hamming_tail_segments(meta, tables->view_end, tables->seg_start, tables->seg_end);
	UnlockReleaseBuffer(metabuf);
}

/* the block of a logical page of the tables */
BlockNumber
hamming_table_block(const HammingTables *tables, BlockNumber lblk)
{
	return tables->map ? tables->map[lblk] : lblk;
}

/*
 * A page of the view's tables should be of this kind and written by the
 * view's merge.  Otherwise a later merge reused it, which a primary never
 * does while a snapshot that could read it is left, but a standby's query
 * may outlive the primary's snapshots.
 */
void
hamming_check_table_page(Relation index, const HammingTables *tables, Page page,
						 BlockNumber blkno, uint16 kind)
{
	if (!hamming_page_is(page, kind))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no probe table page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	if (HammingPageGetOpaque(page)->gen != tables->gen)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("index \"%s\" was merged while this scan read it",
						RelationGetRelationName(index)),
				 errdetail("Block %u of the probe tables was reused by a later merge.", blkno),
				 errhint("Retry the statement. On a standby, hot_standby_feedback = on prevents this.")));
}

/*
 * A page of the view's tail holds fingerprints or NULLs (maybe consumed by
 * a merge that began after the view), or is new; else it was reused, and so
 * it was if it carries the generation of later tables: a page of a later
 * tail, on pages that a merge freed.
 */
void
hamming_check_tail_page(Relation index, const HammingTables *tables, Page page, BlockNumber blkno)
{
	if (!PageIsNew(page) && !hamming_page_is(page, HAMMING_DATA | HAMMING_NULLS))
		elog(ERROR, "unexpected page at block %u of index \"%s\"", blkno, RelationGetRelationName(index));
	if (!PageIsNew(page) &&
		(hamming_page_is(page, HAMMING_SORTED | HAMMING_KEYS | HAMMING_DIRECTORY | HAMMING_MAP) ||
		 hamming_gen_after(HammingPageGetOpaque(page)->gen, tables->gen)))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("index \"%s\" was merged while this scan read it",
						RelationGetRelationName(index)),
				 errdetail("Block %u of the tail was reused by a later merge.", blkno),
				 errhint("Retry the statement. On a standby, hot_standby_feedback = on prevents this.")));
}

/*
 * The tail as the metapage describes it, in an index of end blocks: the
 * ranges a merge in progress consumes, the ranges inserts fill, and the
 * open end from tail_start but for the blocks a merge reserved.  Returns
 * the number of segments [seg_start[i], seg_end[i]).
 */
int
hamming_tail_segments(const HammingMetaPageData *meta, BlockNumber end,
					  BlockNumber *seg_start, BlockNumber *seg_end)
{
	int			n = 0;
	uint32		i;

#define ADD_SEGMENT(s, e) \
	do { \
		if ((s) < (e)) \
		{ \
			seg_start[n] = (s); \
			seg_end[n++] = (e); \
		} \
	} while (0)

	if (meta->version >= 3)
	{
		for (i = 0; i < meta->nconsumed; i++)
			ADD_SEGMENT(meta->consumed[i].start, meta->consumed[i].fill);
		for (i = 0; i < meta->nranges; i++)
			ADD_SEGMENT(meta->range[i].start, meta->range[i].fill);
		if (meta->merging)
		{
			ADD_SEGMENT(meta->tail_start, Min(meta->hole_start, end));
			ADD_SEGMENT(meta->hole_end, end);
			return n;
		}
	}
	ADD_SEGMENT(meta->tail_start, end);
	return n;
#undef ADD_SEGMENT
}

/*
 * A pass reads table 0, the NULL pages after it, then the tail's segments:
 * position pos of a pass is at *blkno, false past the end.
 */
bool
hamming_pass_block(const HammingTables *tables, BlockNumber pos, BlockNumber *blkno)
{
	int			i;

	if (pos < tables->pass_pages)
	{
		*blkno = hamming_table_block(tables, tables->table_start[0] + pos);
		return true;
	}
	pos -= tables->pass_pages;
	for (i = 0; i < tables->nsegments; i++)
	{
		BlockNumber len = tables->seg_end[i] - tables->seg_start[i];

		if (pos < len)
		{
			*blkno = tables->seg_start[i] + pos;
			return true;
		}
		pos -= len;
	}
	return false;
}

/* pages of the view's tail */
BlockNumber
hamming_tail_pages(const HammingTables *tables)
{
	BlockNumber n = 0;
	int			i;

	for (i = 0; i < tables->nsegments; i++)
		n += tables->seg_end[i] - tables->seg_start[i];
	return n;
}

/* the metapage of page, to be changed: its whole structure counts as used */
HammingMetaPageData *
hamming_meta_for_write(Page page)
{
	HammingMetaPageData *meta = HammingPageGetMeta(page);

	((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
	return meta;
}

/* is blkno the insert page of some kind and slot? */
bool
hamming_is_insert_page(const HammingMetaPageData *meta, BlockNumber blkno)
{
	int			target;
	int			slot;

	for (target = 0; target < 2; target++)
		for (slot = 0; slot < hamming_insert_slots(target); slot++)
			if (hamming_get_insert_page(meta, target, slot) == blkno)
				return true;
	return false;
}

/* no insert pages: the next insert of each kind and slot takes a page */
void
hamming_clear_insert_pages(HammingMetaPageData *meta)
{
	int			target;
	int			slot;

	for (target = 0; target < 2; target++)
		for (slot = 0; slot < hamming_insert_slots(target); slot++)
			hamming_set_insert_page(meta, target, slot, InvalidBlockNumber);
}

/*
 * The radius of each probe table for "within k bits": sum(radius + 1) is
 * k + 1, the larger radii first (table 0 holds the TIDs, the others need a
 * lookup in it), and a radius over the block's width reads the whole table.
 */
void
hamming_table_radii(int *radius, int k)
{
	int			spread[HAMMING_NTABLES];
	int			j;

	simhash_spread_radii(spread, HAMMING_NTABLES, k + 1);
	for (j = 0; j < HAMMING_NTABLES; j++)
		radius[j] = Min(spread[HAMMING_NTABLES - 1 - j], HAMMING_BLOCK_BITS);
}

/* a new scan's ORDER BY values: NULL until a row is returned */
void
hamming_scan_init_orderbys(IndexScanDesc scan, int norderbys)
{
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
		memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
	}
}

/* the conditions and orderings of a (re)scan, kept in the scan */
void
hamming_scan_set_keys(IndexScanDesc scan, ScanKey keys, ScanKey orderbys)
{
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
}
