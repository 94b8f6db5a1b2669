/*
 * hamming_map.c
 *	  The probe tables with the block map of a merged index: a copy of the
 *	  map for a merge, a check or VACUUM; for scans, the map read once per
 *	  backend; and which blocks the index uses, for VACUUM and merges to
 *	  give the others back to the free space map.  A merge writes its tables
 *	  on free pages and lists where each logical page went in map pages
 *	  (one per 2,040 pages of tables: 23 at ten million rows); the map of a
 *	  merge never changes, so a scan need not read it again: each backend
 *	  keeps the newest map of each index it scanned, found again by the
 *	  index's relfilenode and the identity of its tables (a number the index
 *	  never repeats, hamming_new_tables_id), and hands it out to its scans
 *	  counted.  A map that a newer merge replaced is freed once no scan of
 *	  this backend holds it (at the latest at the end of the transaction,
 *	  when no scan is left: an error skips the scans' ends); the maps that no
 *	  scan holds are kept within simhash.tail_cache_size.
 */
#include "settings.h"
#include "hamming.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "utils/memutils.h"

/* maps kept at most, beyond those in use */
#define HAMMING_MAP_CACHE_SIZE	16
/* the memory of a map of nmap pages, kept */
#define MAP_REF_BYTES(nmap) \
	(MAXALIGN(sizeof(HammingMapRef)) + (Size) (nmap) * HAMMING_MAP_CAPACITY * sizeof(BlockNumber))

typedef struct HammingMapRef
{
	struct HammingMapRef *next;
	Oid			relid;
	Oid			relfilenode;
	uint64		tables_id;		/* the tables it maps */
	uint32		nmap;
	BlockNumber *map;
	int			refs;			/* scans of this backend holding it */
	bool		current;		/* the newest map of its index seen */
} HammingMapRef;

static HammingMapRef *maps;	/* the most recently read first */
static bool callback_registered;

static void
free_ref(HammingMapRef **link)
{
	HammingMapRef *ref = *link;

	*link = ref->next;
	pfree(ref);				/* and its map, in the same chunk */
}

/*
 * The maps that a newer one replaced and no scan holds; then, of those no
 * scan holds, the oldest beyond HAMMING_MAP_CACHE_SIZE maps or beyond
 * simhash.tail_cache_size
 */
static void
free_unused(void)
{
	HammingMapRef **link = &maps;
	Size		limit = (Size) Max(simhash_tail_cache_kb, 0) * 1024;
	Size		kept_bytes = 0;
	int			kept = 0;

	while (*link)
	{
		HammingMapRef *ref = *link;

		if (ref->refs == 0 &&
			(!ref->current || kept >= HAMMING_MAP_CACHE_SIZE || kept_bytes + MAP_REF_BYTES(ref->nmap) > limit))
			free_ref(link);
		else
		{
			if (ref->refs == 0)
			{
				kept++;
				kept_bytes += MAP_REF_BYTES(ref->nmap);
			}
			link = &ref->next;
		}
	}
}

/* at the end of a transaction no scan is left */
static void
map_xact_callback(XactEvent event, void *arg)
{
	HammingMapRef *ref;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			for (ref = maps; ref; ref = ref->next)
				ref->refs = 0;
			free_unused();
			break;
		default:
			break;
	}
}

/*
 * The map of tables into map (room for tables->nmap map pages; past a map
 * page's entries, InvalidBlockNumber)
 */
static void
read_map(Relation index, const HammingTables *tables, BlockNumber *map)
{
	uint32		i;

	for (i = 0; i < tables->nmap; i++)
	{
		Buffer		buffer = hamming_lock_page(index, tables->map_page[i], BUFFER_LOCK_SHARE, NULL);
		Page		page = BufferGetPage(buffer);
		int			n = HammingPageGetOpaque(page)->nentries;
		BlockNumber *part = map + (Size) i * HAMMING_MAP_CAPACITY;

		hamming_check_table_page(index, tables, page, tables->map_page[i], HAMMING_MAP);
		memcpy(part, HammingPageMap(page), n * sizeof(BlockNumber));
		memset(part + n, 0xFF, (HAMMING_MAP_CAPACITY - n) * sizeof(BlockNumber));
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * The map of tables for a scan: the one this backend read before (the
 * same relfilenode, the same tables), or read now
 */
static HammingMapRef *
acquire_map(Relation index, const HammingTables *tables)
{
	uint32		nmap = tables->nmap;
	HammingMapRef *ref;
	HammingMapRef *other;
	BlockNumber *map;

	for (ref = maps; ref; ref = ref->next)
		if (ref->relid == RelationGetRelid(index) && ref->relfilenode == index->rd_rel->relfilenode &&
			ref->tables_id == tables->tables_id && ref->nmap == nmap)
		{
			ref->refs++;
			return ref;
		}

	/* read here first: an error leaves nothing behind in TopMemoryContext */
	map = palloc_extended((Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber), MCXT_ALLOC_HUGE);
	read_map(index, tables, map);
	/* one chunk: the entry, then the map */
	ref = MemoryContextAllocHuge(TopMemoryContext, MAP_REF_BYTES(nmap));
	ref->map = (BlockNumber *) ((char *) ref + MAXALIGN(sizeof(HammingMapRef)));
	memcpy(ref->map, map, (Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber));
	pfree(map);

	if (!callback_registered)
	{
		RegisterXactCallback(map_xact_callback, NULL);
		callback_registered = true;
	}
	/* the maps of this index read before are replaced */
	for (other = maps; other; other = other->next)
		if (other->relid == RelationGetRelid(index))
			other->current = false;
	ref->relid = RelationGetRelid(index);
	ref->relfilenode = index->rd_rel->relfilenode;
	ref->tables_id = tables->tables_id;
	ref->nmap = nmap;
	ref->refs = 1;
	ref->current = true;
	ref->next = maps;
	maps = ref;
	free_unused();
	return ref;
}

/* a scan is done with a map */
static void
release_map(HammingMapRef *ref)
{
	Assert(ref->refs > 0);
	if (--ref->refs == 0)
		free_unused();
}

/* the probe tables and the tail now, with a copy of the block map of a merged index */
void
hamming_read_tables(Relation index, HammingTables *tables)
{
	hamming_describe_tables(index, tables);
	if (tables->nmap > 0)
	{
		tables->map = palloc_extended((Size) tables->nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber),
									  MCXT_ALLOC_HUGE);
		read_map(index, tables, tables->map);
	}
}

/* A scan's view (again, at a rescan), with the map this backend keeps */
void
hamming_reread_tables(Relation index, HammingTables *tables)
{
	hamming_free_tables(tables);
	hamming_describe_tables(index, tables);
	if (tables->nmap > 0)
	{
		tables->map_ref = acquire_map(index, tables);
		tables->map = tables->map_ref->map;
	}
}

void
hamming_free_tables(HammingTables *tables)
{
	if (tables->map_ref)
		release_map(tables->map_ref);
	else if (tables->map)
		pfree(tables->map);
	tables->map = NULL;
	tables->map_ref = NULL;
}

/* mark blocks [start, end) in used, within its n blocks */
static void
mark_used(bool *used, BlockNumber n, BlockNumber start, BlockNumber end)
{
	BlockNumber blkno;

	for (blkno = start; blkno < Min(end, n); blkno++)
		used[blkno] = true;
}

/* mark the map pages of a merge's tables in used, and the blocks they list */
static void
mark_mapped(Relation index, bool *used, BlockNumber n, const BlockNumber *map_page, uint32 nmap)
{
	uint32		i;
	int			e;

	for (i = 0; i < nmap; i++)
	{
		Buffer		buffer;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		mark_used(used, n, map_page[i], map_page[i] + 1);
		buffer = hamming_lock_page(index, map_page[i], BUFFER_LOCK_SHARE, NULL);
		page = BufferGetPage(buffer);
		if (hamming_page_is(page, HAMMING_MAP))
			for (e = 0; e < HammingPageGetOpaque(page)->nentries; e++)
				mark_used(used, n, HammingPageMap(page)[e], HammingPageMap(page)[e] + 1);
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * Which of the first n blocks of index the metapage meta (a copy, taken
 * while the index had n blocks) uses: the metapage, the tables (the blocks
 * before the tail of an index never merged, else the block map's pages and
 * the blocks it lists), what the last merge replaced while it waits to be
 * recycled, the ranges of the tail, a merge's hole, and every block from
 * tail_start on.  Any other block is free: a page that a merge freed, or
 * took and did not write (it failed, or was cancelled, or the server
 * crashed).
 */
static bool *
used_blocks(Relation index, const HammingMetaPageData *meta, BlockNumber n)
{
	bool	   *used = palloc_extended(Max(n, 1) * sizeof(bool), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	uint32		i;

	mark_used(used, n, HAMMING_METAPAGE_BLKNO, HAMMING_METAPAGE_BLKNO + 1);
	mark_used(used, n, meta->tail_start, n);
	if (meta->version < 3 || meta->nmap == 0)
	{
		/* the tables that CREATE INDEX wrote lie before the tail */
		mark_used(used, n, HAMMING_METAPAGE_BLKNO + 1, meta->tail_start);
		return used;
	}
	mark_mapped(index, used, n, meta->map_page, meta->nmap);
	if (meta->retired)
	{
		mark_used(used, n, meta->retired_start, meta->retired_end);
		mark_mapped(index, used, n, meta->retired_map_page, meta->retired_nmap);
		for (i = 0; i < meta->nretired_ranges; i++)
			mark_used(used, n, meta->retired_range[i].start,
					  Max(meta->retired_range[i].fill, meta->retired_range[i].end));
	}
	for (i = 0; i < meta->nranges; i++)
		mark_used(used, n, meta->range[i].start, meta->range[i].end);
	for (i = 0; i < meta->nconsumed; i++)
		mark_used(used, n, meta->consumed[i].start, Max(meta->consumed[i].fill, meta->consumed[i].end));
	if (meta->merging)
		mark_used(used, n, meta->hole_start, meta->hole_end);
	return used;
}

/*
 * Which blocks of index are in use now, by its metapage, and in *n how many
 * blocks it has: valid while no merge runs (the caller holds what a merge
 * holds, or only reports)
 */
bool *
hamming_used_blocks(Relation index, BlockNumber *n)
{
	Buffer		metabuf = hamming_lock_page(index, HAMMING_METAPAGE_BLKNO, BUFFER_LOCK_SHARE, NULL);
	HammingMetaPageData *meta = palloc(sizeof(HammingMetaPageData));
	bool	   *used;

	memcpy(meta, HammingPageGetMeta(BufferGetPage(metabuf)), sizeof(HammingMetaPageData));
	*n = RelationGetNumberOfBlocks(index);
	UnlockReleaseBuffer(metabuf);
	used = used_blocks(index, meta, *n);
	pfree(meta);
	return used;
}

/*
 * Record every block of index that nothing uses in the free space map (as
 * nbtree's VACUUM does), so that no page is lost to a merge that failed
 * after it took pages from the map, nor to a crash (the map is not
 * crash-safe).  The caller holds a ShareUpdateExclusiveLock on the table:
 * no merge runs.  Returns how many blocks were not recorded before.
 */
BlockNumber
hamming_record_unused(Relation index)
{
	BlockNumber n;
	BlockNumber blkno;
	BlockNumber found = 0;
	bool	   *used = hamming_used_blocks(index, &n);

	for (blkno = HAMMING_METAPAGE_BLKNO + 1; blkno < n; blkno++)
	{
		if (used[blkno] || GetRecordedFreeSpace(index, blkno) > 0)
			continue;
		CHECK_FOR_INTERRUPTS();
		RecordFreeIndexPage(index, blkno);
		found++;
	}
	if (found > 0)
		IndexFreeSpaceMapVacuum(index);
	pfree(used);
	return found;
}
