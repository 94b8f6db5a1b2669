/*
 * hamming_utils.c
 *	  Helpers of the "hamming" access method: the index option, page and
 *	  metapage initialisation, new pages, reading and checking pages, the
 *	  probe tables' description and their radii, and the keys and ordering
 *	  values that a scan of either width keeps.
 */
#include "mih.h"
#include "settings.h"
#include "hamming.h"

#include "access/reloptions.h"
#include "access/relscan.h"
#include "storage/lmgr.h"

static relopt_kind hamming_relopt_kind;

/*
 * The options probe_tables (on by default) and max_distance (unset),
 * registered when the library loads.  Changing max_distance does not check
 * the rows already indexed: REINDEX does, for an exclusion constraint.
 */
void
hamming_init_reloptions(void)
{
	hamming_relopt_kind = add_reloption_kind();
	add_bool_reloption(hamming_relopt_kind, "probe_tables",
					   "Whether CREATE INDEX and REINDEX write probe tables (multi-index hashing), or only packed pages that every scan reads in full",
					   true, AccessExclusiveLock);
	add_int_reloption(hamming_relopt_kind, "max_distance",
					  "The threshold of the % operator in this index, 0..64 (as in an exclusion constraint EXCLUDE USING hamming (fp WITH %)); unset (-1): the setting simhash.max_distance of the session",
					  -1, -1, SIMHASH_BITS, AccessExclusiveLock);
}

bytea *
hamming_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt options[] = {
		{"probe_tables", RELOPT_TYPE_BOOL, offsetof(HammingOptions, probe_tables)},
		{"max_distance", RELOPT_TYPE_INT, offsetof(HammingOptions, max_distance)}
	};

	return (bytea *) build_reloptions(reloptions, validate, hamming_relopt_kind,
									  sizeof(HammingOptions), options, lengthof(options));
}

/*
 * The radius of "fp % q" in this index: its max_distance option when set,
 * so that an exclusion constraint behaves the same in every session and
 * after a restore, else simhash.max_distance.
 */
int
hamming_similar_radius(Relation index)
{
	HammingOptions *options = (HammingOptions *) index->rd_options;

	if (options != NULL && options->max_distance >= 0)
		return options->max_distance;
	return simhash_max_distance_guc;
}

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

void
hamming_init_metapage(Page page)
{
	HammingMetaPageData *meta;

	hamming_init_page(page, HAMMING_META);
	meta = HammingPageGetMeta(page);
	meta->magic = HAMMING_MAGIC;
	meta->version = HAMMING_VERSION;
	meta->insert_page[HAMMING_TARGET_DATA] = InvalidBlockNumber;
	meta->insert_page[HAMMING_TARGET_NULLS] = InvalidBlockNumber;
	meta->nfree = 0;
	meta->tail_start = HAMMING_METAPAGE_BLKNO + 1;
	((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
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
		(flags & HAMMING_DIRECTORY) ? HAMMING_DIRECTORY_CAPACITY : HAMMING_PAGE_CAPACITY;
	if (HammingPageGetOpaque(page)->page_id != HAMMING_PAGE_ID ||
		HammingPageGetOpaque(page)->nentries > capacity ||
		(blkno == HAMMING_METAPAGE_BLKNO) != ((HammingPageGetOpaque(page)->flags & HAMMING_META) != 0) ||
		(blkno == HAMMING_METAPAGE_BLKNO && HammingPageGetMeta(page)->magic != HAMMING_MAGIC))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains an unexpected page at block %u",
						RelationGetRelationName(index), blkno),
				 errhint("Please REINDEX it.")));
	if (blkno == HAMMING_METAPAGE_BLKNO &&
		(HammingPageGetMeta(page)->version < 1 || HammingPageGetMeta(page)->version > HAMMING_VERSION))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has version %u, which this version of simhash does not read",
						RelationGetRelationName(index), HammingPageGetMeta(page)->version),
				 errdetail("Versions 1 to %d are read.", HAMMING_VERSION),
				 errhint("Please REINDEX it, or install the simhash library that built it.")));
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

/* the probe tables as the metapage describes them */
void
hamming_read_tables(Relation index, HammingTables *tables)
{
	Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	HammingMetaPageData *meta = HammingPageGetMeta(BufferGetPage(metabuf));

	memset(tables, 0, sizeof(HammingTables));
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
	else
		tables->tail_start = HAMMING_METAPAGE_BLKNO + 1;
	UnlockReleaseBuffer(metabuf);
}

/*
 * The page a pass reads after blkno: a pass reads the metapage's successors
 * but for the pages of probe tables 1..3 and the directories.
 */
BlockNumber
hamming_pass_next(const HammingTables *tables, BlockNumber blkno)
{
	if (tables->ntables > 0 && blkno + 1 == tables->table_start[0] + tables->table0_pages)
		return tables->tail_start;
	return blkno + 1;
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
