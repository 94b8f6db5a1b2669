/*
 * neardup_key.h
 *	  The keys of the text operator classes (of ~= and of the hamming index
 *	  of text, neardup.h): a text, or a simhash_doc -- a text with the
 *	  threshold at which it is compared (its functions are in neardup.c) --
 *	  its layout, the text of a key, and the 256-bit fingerprint the index
 *	  keeps of it as four quarters.
 */
#ifndef SIMHASH_NEARDUP_KEY_H
#define SIMHASH_NEARDUP_KEY_H

#include "postgres.h"

#include "fmgr.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"				/* VARSIZE and friends left postgres.h in 16 */
#endif

/* the 256-bit fingerprint as four 64-bit quarters: part 0 hi, lo, part 1 hi, lo */
#define NEARDUP_QUARTERS	4
#define NEARDUP_BITS		256

/*
 * simhash_doc, a text with the threshold at which it is compared: a varlena
 * (4-byte header, detoasted) of the threshold (a float8, stored unaligned)
 * and the text's bytes
 */
#define NEARDUP_DOC_HEADER	(VARHDRSZ + sizeof(float8))

static inline double
neardup_doc_threshold(const struct varlena *doc)
{
	float8		t;

	memcpy(&t, VARDATA(doc), sizeof(float8));
	return t;
}

static inline const char *
neardup_doc_data(const struct varlena *doc, int *len)
{
	*len = VARSIZE(doc) - NEARDUP_DOC_HEADER;
	return (const char *) doc + NEARDUP_DOC_HEADER;
}

/*
 * The text of a key of a text operator class (a text, or a simhash_doc when
 * is_doc), *len bytes; *detoasted is the value it lies in (the key itself,
 * or a copy to pfree)
 */
static inline const char *
neardup_key_text(Datum key, bool is_doc, int *len, struct varlena **detoasted)
{
	if (is_doc)
	{
		*detoasted = PG_DETOAST_DATUM(key);
		return neardup_doc_data(*detoasted, len);
	}
	*detoasted = PG_DETOAST_DATUM_PACKED(key);
	*len = VARSIZE_ANY_EXHDR(*detoasted);
	return VARDATA_ANY(*detoasted);
}

#endif							/* SIMHASH_NEARDUP_KEY_H */
