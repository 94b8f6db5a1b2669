/*
 * hamming_map.c
 *	  The block maps of merged probe tables, read once per backend for its
 *	  scans.  A merge writes its tables on free pages and lists where each
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
	uint32		nmap;
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
	pfree(ref->map);
	pfree(ref);
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

/*
 * The map of tables (nmap pages listed in map_page, written by the merge
 * that recorded merged) for a scan: the one this backend read before, or
 * read now.  Released by hamming_release_map.
 */
HammingMapRef *
hamming_acquire_map(Relation index, const HammingTables *tables, const BlockNumber *map_page,
					uint32 nmap, FullTransactionId merged)
{
	HammingMapRef *ref;
	HammingMapRef *other;
	BlockNumber *map;
	int			kept = 0;
	uint32		i;

	for (ref = maps; ref; ref = ref->next)
		if (ref->relid == RelationGetRelid(index) && ref->relfilenode == index->rd_rel->relfilenode &&
			FullTransactionIdEquals(ref->merged, merged) && ref->nmap == nmap)
		{
			ref->refs++;
			return ref;
		}

	/* read here first: an error leaves nothing behind in TopMemoryContext */
	map = palloc_extended((Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber), MCXT_ALLOC_HUGE);
	for (i = 0; i < nmap; i++)
	{
		Buffer		buffer = hamming_lock_page(index, map_page[i], BUFFER_LOCK_SHARE, NULL);
		Page		page = BufferGetPage(buffer);

		hamming_check_table_page(index, tables, page, map_page[i], HAMMING_MAP);
		memcpy(map + (Size) i * HAMMING_MAP_CAPACITY, HammingPageMap(page),
			   HammingPageGetOpaque(page)->nentries * sizeof(BlockNumber));
		UnlockReleaseBuffer(buffer);
	}
	ref = MemoryContextAllocZero(TopMemoryContext, sizeof(HammingMapRef));
	ref->map = MemoryContextAllocHuge(TopMemoryContext, (Size) nmap * HAMMING_MAP_CAPACITY * sizeof(BlockNumber));
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
	ref->nmap = nmap;
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
void
hamming_release_map(HammingMapRef *ref)
{
	Assert(ref->refs > 0);
	if (--ref->refs == 0 && !ref->current)
		free_unused();
}

/* the map's logical page -> block array */
const BlockNumber *
hamming_map_blocks(const HammingMapRef *ref)
{
	return ref->map;
}
