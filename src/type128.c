/*
 * type128.c
 *	  The simhash128 type: text and binary I/O, casts to and from bit(128)
 *	  and bytea, comparison and hashing support for the btree and hash
 *	  opclasses, and the Hamming distance (0..128).
 */
#include "simhash128.h"
#include "hex.h"

#include "common/hashfn.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/varbit.h"

/* the 16 bytes of v, most significant first */
static void
simhash128_to_bytes(const Simhash128 *v, unsigned char *out)
{
	int			i;

	for (i = 0; i < 8; i++)
	{
		out[i] = (unsigned char) (v->hi >> (56 - 8 * i));
		out[8 + i] = (unsigned char) (v->lo >> (56 - 8 * i));
	}
}

static Simhash128 *
simhash128_from_bytes(const unsigned char *p)
{
	uint64		hi = 0,
				lo = 0;
	int			i;

	for (i = 0; i < 8; i++)
	{
		hi = (hi << 8) | p[i];
		lo = (lo << 8) | p[8 + i];
	}
	return simhash128_make(hi, lo);
}

/* the value of a run of exactly 32 hexadecimal digits */
void
simhash128_parse_hex(const char *digits, Simhash128 *result)
{
	char		half[SIMHASH_HEX_DIGITS + 1];

	/* the first 16 digits on their own, then the 16 that end the run */
	memcpy(half, digits, SIMHASH_HEX_DIGITS);
	half[SIMHASH_HEX_DIGITS] = '\0';
	simhash_parse_hex(half, &result->hi);
	simhash_parse_hex(digits + SIMHASH_HEX_DIGITS, &result->lo);
}

/* writes the 32 lower-case digits of v and a NUL to out */
void
simhash128_format_hex(const Simhash128 *v, char *out)
{
	simhash_format_hex(v->hi, out);
	simhash_format_hex(v->lo, out + SIMHASH_HEX_DIGITS);
}

/*
 * Text input: 32 hexadecimal digits, either case, with optional white space
 * before and after; nothing else.
 */
PG_FUNCTION_INFO_V1(simhash128_in);
Datum
simhash128_in(PG_FUNCTION_ARGS)
{
	const char *digits;
	Simhash128 *result;

	if (!simhash_read_hex_text(fcinfo, PG_GETARG_CSTRING(0), "simhash128",
							   "0123456789abcdef0123456789abcdef", &digits))
		PG_RETURN_NULL();
	result = palloc(sizeof(Simhash128));
	simhash128_parse_hex(digits, result);
	PG_RETURN_SIMHASH128_P(result);
}

PG_FUNCTION_INFO_V1(simhash128_out);
Datum
simhash128_out(PG_FUNCTION_ARGS)
{
	char	   *out = palloc(SIMHASH128_HEX_DIGITS + 1);

	simhash128_format_hex(PG_GETARG_SIMHASH128_P(0), out);
	PG_RETURN_CSTRING(out);
}

/* binary form: 16 bytes, most significant first (the bytea cast's bytes) */
PG_FUNCTION_INFO_V1(simhash128_recv);
Datum
simhash128_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	PG_RETURN_SIMHASH128_P(simhash128_from_bytes((const unsigned char *) pq_getmsgbytes(buf, 16)));
}

PG_FUNCTION_INFO_V1(simhash128_send);
Datum
simhash128_send(PG_FUNCTION_ARGS)
{
	unsigned char bytes[16];
	StringInfoData buf;

	simhash128_to_bytes(PG_GETARG_SIMHASH128_P(0), bytes);
	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) bytes, 16);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---- casts ---- */

/* cast to bit(n): takes the target length and accepts only 128 */
PG_FUNCTION_INFO_V1(simhash128_to_bit);
Datum
simhash128_to_bit(PG_FUNCTION_ARGS)
{
	Simhash128 *v = PG_GETARG_SIMHASH128_P(0);
	int32		typmod = PG_GETARG_INT32(1);
	VarBit	   *result;

	if (typmod != -1 && typmod != SIMHASH128_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast simhash128 to bit(%d)", typmod),
				 errdetail("A simhash128 has exactly 128 bits; cast to bit(128).")));
	result = palloc0(VARBITTOTALLEN(SIMHASH128_BITS));
	SET_VARSIZE(result, VARBITTOTALLEN(SIMHASH128_BITS));
	VARBITLEN(result) = SIMHASH128_BITS;
	simhash128_to_bytes(v, VARBITS(result));
	PG_RETURN_VARBIT_P(result);
}

PG_FUNCTION_INFO_V1(simhash128_from_bit);
Datum
simhash128_from_bit(PG_FUNCTION_ARGS)
{
	VarBit	   *bits = PG_GETARG_VARBIT_P(0);

	if (VARBITLEN(bits) != SIMHASH128_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast a bit string of length %d to simhash128", VARBITLEN(bits)),
				 errdetail("A simhash128 has exactly 128 bits.")));
	PG_RETURN_SIMHASH128_P(simhash128_from_bytes(VARBITS(bits)));
}

PG_FUNCTION_INFO_V1(simhash128_to_bytea);
Datum
simhash128_to_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *result = palloc(VARHDRSZ + 16);

	SET_VARSIZE(result, VARHDRSZ + 16);
	simhash128_to_bytes(PG_GETARG_SIMHASH128_P(0), (unsigned char *) VARDATA(result));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(simhash128_from_bytea);
Datum
simhash128_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);

	if (VARSIZE_ANY_EXHDR(b) != 16)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast a bytea of %d bytes to simhash128", (int) VARSIZE_ANY_EXHDR(b)),
				 errdetail("A simhash128 is exactly 16 bytes, most significant byte first.")));
	PG_RETURN_SIMHASH128_P(simhash128_from_bytes((const unsigned char *) VARDATA_ANY(b)));
}

/* ---- comparison (unsigned, high half first: the order of the hex text) ---- */

static inline int
simhash128_compare(const Simhash128 *a, const Simhash128 *b)
{
	if (a->hi != b->hi)
		return a->hi > b->hi ? 1 : -1;
	return (a->lo > b->lo) - (a->lo < b->lo);
}

#define SIMHASH128_CMP_FUNC(name, op) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(simhash128_compare(PG_GETARG_SIMHASH128_P(0), PG_GETARG_SIMHASH128_P(1)) op 0); \
}

SIMHASH128_CMP_FUNC(simhash128_eq, ==)
SIMHASH128_CMP_FUNC(simhash128_ne, !=)
SIMHASH128_CMP_FUNC(simhash128_lt, <)
SIMHASH128_CMP_FUNC(simhash128_le, <=)
SIMHASH128_CMP_FUNC(simhash128_gt, >)
SIMHASH128_CMP_FUNC(simhash128_ge, >=)

PG_FUNCTION_INFO_V1(simhash128_cmp);
Datum
simhash128_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash128_compare(PG_GETARG_SIMHASH128_P(0), PG_GETARG_SIMHASH128_P(1)));
}

/* hashes of the value's 16 bytes in their pinned order: the same everywhere */
PG_FUNCTION_INFO_V1(simhash128_hash);
Datum
simhash128_hash(PG_FUNCTION_ARGS)
{
	unsigned char bytes[16];

	simhash128_to_bytes(PG_GETARG_SIMHASH128_P(0), bytes);
	return hash_any(bytes, 16);
}

PG_FUNCTION_INFO_V1(simhash128_hash_extended);
Datum
simhash128_hash_extended(PG_FUNCTION_ARGS)
{
	unsigned char bytes[16];

	simhash128_to_bytes(PG_GETARG_SIMHASH128_P(0), bytes);
	return hash_any_extended(bytes, 16, PG_GETARG_INT64(1));
}

/* ---- distance ---- */

PG_FUNCTION_INFO_V1(simhash128_distance);
Datum
simhash128_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash128_distance_of(PG_GETARG_SIMHASH128_P(0), PG_GETARG_SIMHASH128_P(1)));
}

/* the halves, as 64-bit fingerprints */
PG_FUNCTION_INFO_V1(simhash128_high);
Datum
simhash128_high(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH(PG_GETARG_SIMHASH128_P(0)->hi);
}

PG_FUNCTION_INFO_V1(simhash128_low);
Datum
simhash128_low(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH(PG_GETARG_SIMHASH128_P(0)->lo);
}
