/*
 * hamming_map.c
 *	  The probe tables with the block map of a merged index: a copy of the
 *	  map for a merge, a check or VACUUM; for scans, the map read once per
 *	  backend.  A merge writes its tables on free pages and lists where each
 *	  logical page went in map pages (one per 2,040 pages of tables: 23 at
 *	  ten million rows); the map of a merge never changes, so a scan need
 *	  not read it again: each backend keeps the newest map of each index it
 *	  scanned, found again by the index's relfilenode and the transaction ID
 *	  its merge recorded (unique to a merge), and hands it out to its scans
 *	  counted.  A map that a newer merge replaced is freed once no scan of
 *	  this backend holds it (at the latest at the end of the transaction,
 *	  when no scan is left: an error skips the scans' ends).
 */
#include "hamming.h"

#include "access/xact.h"
#include "utils/memutils.h"

/* maps kept at most, beyond those in use */
#define HAMMING_MAP_CACHE_SIZE	16

typedef struct HammingMapRef
{
	struct HammingMapRef *next;
	Oid			relid;
	Oid			relfilenode;
	FullTransactionId merged;	/* the merge that wrote the map */
	BlockNumber *map;
	int			refs;			/* scans of this backend holding it */
	bool		current;		/* the newest map of its index seen */
} HammingMapRef;

static HammingMapRef *maps;
static bool callback_registered;

static void
free_ref(HammingMapRef **link)
{
	HammingMapRef *ref = *link;

	*link = ref->next;
	pfree(ref);				/* and its map, in the same chunk */
}

/* the maps that a newer one replaced and no scan holds */
static void
free_unused(void)
{
	HammingMapRef **link = &maps;

	while (*link)
	{
		if ((*link)->refs == 0 && !(*link)->current)
			free_ref(link);
		else
			link = &(*link)->next;
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

/* the map of tables into map (room for tables->nmap map pages) */
static void
read_map(Relation index, const HammingTables *tables, BlockNumber *map)
{
	uint32		i;

	for (i = 0; i < tables->nmap; i++)
	{
		Buffer		buffer = hamming_lock_page(index, tables->map_page[i], BUFFER_LOCK_SHARE, NULL);
		Page		page = BufferGetPage(buffer);

		hamming_check_table_page(index, tables, page, tables->map_page[i], HAMMING_MAP);
		memcpy(map + (Size) i * HAMMING_MAP_CAPACITY, HammingPageMap(page),
			   HammingPageGetOpaque(page)->nentries * sizeof(BlockNumber));
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * The map of tables for a scan: the one this backend read before (the
 * same relfilenode, the same merge), or read now
 */
static HammingMapRef *
acquire_map(Relation index, const HammingTables *tables)
{
	uint32		nmap = tables->nmap;
	FullTransactionId merged = tables->merged;
	HammingMapRef *ref;
	HammingMapRef *other;
	BlockNumber *map;
	int			kept = 0;

	for (ref = maps; ref; ref = ref->next)
		if (ref->relid == RelationGetRelid(index) && ref->relfilenode == index->rd_rel->relfilenode &&
			FullTransactionIdEquals(ref->merged, merged))
		{
			ref->refs++;
			return ref;
		}

	/* read here first: an error leaves nothing behind in TopMemoryContext */
	map = palloc_extended((Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber), MCXT_ALLOC_HUGE);
	read_map(index, tables, map);
	/* one chunk: the entry, then the map */
	ref = MemoryContextAllocHuge(TopMemoryContext, MAXALIGN(sizeof(HammingMapRef)) +
								 (Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber));
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
	ref->merged = merged;
	ref->refs = 1;
	ref->current = true;
	ref->next = maps;
	maps = ref;
	free_unused();
	/* at most HAMMING_MAP_CACHE_SIZE kept: the oldest that no scan holds go */
	for (other = maps; other; other = other->next)
		kept++;
	if (kept > HAMMING_MAP_CACHE_SIZE)
	{
		HammingMapRef **link = &maps;
		int			n = 0;

		while (*link)
		{
			if (++n > HAMMING_MAP_CACHE_SIZE && (*link)->refs == 0)
				free_ref(link);
			else
				link = &(*link)->next;
		}
	}
	return ref;
}

/* a scan is done with a map */
static void
release_map(HammingMapRef *ref)
{
	Assert(ref->refs > 0);
	if (--ref->refs == 0 && !ref->current)
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
