/*
 * type.c
 *	  The simhash type: text and binary I/O, casts to and from bit(64) and
 *	  bytea, comparison and hashing support for the btree and hash opclasses,
 *	  and the Hamming distance.
 */
#include "hex.h"

#include "common/hashfn.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/varbit.h"

PG_MODULE_MAGIC;

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The length of the run of hexadecimal digits at s; when it is 16, their
 * value is in *result.
 */
size_t
simhash_parse_hex(const char *s, simhash *result)
{
	simhash		value = 0;
	size_t		n;

	for (n = 0; hex_value(s[n]) >= 0; n++)
		value = (value << 4) | (uint64) hex_value(s[n]);
	*result = value;
	return n;
}

/* writes the 16 lower-case digits of fp and a NUL to out */
void
simhash_format_hex(simhash fp, char *out)
{
	static const char digits[] = "0123456789abcdef";
	int			i;

	for (i = SIMHASH_HEX_DIGITS - 1; i >= 0; i--)
	{
		out[i] = digits[fp & 0xF];
		fp >>= 4;
	}
	out[SIMHASH_HEX_DIGITS] = '\0';
}

#define SIMHASH_INPUT_HINT(typname, example) \
	errhint("A %s value is written as exactly %d hexadecimal digits, for example '%s'. " \
			"To fingerprint a string, pass it as text: %s('your text'::text).", \
			(typname), (int) strlen(example), (example), (typname))

/*
 * The text form of a fingerprint type: as many hexadecimal digits as its
 * example has, either case, with optional white space before and after (as
 * int8in allows); nothing else.  Sets *digits to the first digit and returns
 * true, or reports the error (on PostgreSQL 16 and later a soft error, and
 * returns false).  Everything before the first unexpected character is
 * ASCII, so its byte offset is its character number.
 */
bool
simhash_read_hex_text(FunctionCallInfo fcinfo, const char *str, const char *typname,
					  const char *example, const char **digits)
{
	const char *start = str;
	const char *end;
	simhash		ignored;
	size_t		ndigits;

	while (simhash_isspace(*start))
		start++;
	ndigits = simhash_parse_hex(start, &ignored);
	end = start + ndigits;
	if (*end != '\0' && !simhash_isspace(*end))
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							 errmsg("invalid input syntax for type %s: \"%s\"", typname, str),
							 errdetail("Character %zu is not a hexadecimal digit.", (size_t) (end - str) + 1),
							 SIMHASH_INPUT_HINT(typname, example)));
	while (simhash_isspace(*end))
		end++;
	if (*end != '\0')
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							 errmsg("invalid input syntax for type %s: \"%s\"", typname, str),
							 errdetail("White space is allowed only before and after the digits."),
							 SIMHASH_INPUT_HINT(typname, example)));
	if (ndigits != strlen(example))
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							 errmsg("invalid input syntax for type %s: \"%s\"", typname, str),
							 errdetail("Expected %d hexadecimal digits, found %zu.", (int) strlen(example), ndigits),
							 SIMHASH_INPUT_HINT(typname, example)));
	*digits = start;
	return true;
}

PG_FUNCTION_INFO_V1(simhash_in);
Datum
simhash_in(PG_FUNCTION_ARGS)
{
	const char *digits;
	simhash		result;

	if (!simhash_read_hex_text(fcinfo, PG_GETARG_CSTRING(0), "simhash", "0123456789abcdef", &digits))
		PG_RETURN_NULL();
	simhash_parse_hex(digits, &result);
	PG_RETURN_SIMHASH(result);
}

PG_FUNCTION_INFO_V1(simhash_out);
Datum
simhash_out(PG_FUNCTION_ARGS)
{
	char	   *out = palloc(SIMHASH_HEX_DIGITS + 1);

	simhash_format_hex(PG_GETARG_SIMHASH(0), out);
	PG_RETURN_CSTRING(out);
}

PG_FUNCTION_INFO_V1(simhash_recv);
Datum
simhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	PG_RETURN_SIMHASH((simhash) pq_getmsgint64(buf));
}

PG_FUNCTION_INFO_V1(simhash_send);
Datum
simhash_send(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) fp);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---- casts ---- */

/* cast to bit(n): takes the target length and accepts only 64 */
PG_FUNCTION_INFO_V1(simhash_to_bit);
Datum
simhash_to_bit(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	int32		typmod = PG_GETARG_INT32(1);
	VarBit	   *result;
	int			i;

	if (typmod != -1 && typmod != 64)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast simhash to bit(%d)", typmod),
				 errdetail("A simhash has exactly 64 bits; cast to bit(64).")));
	result = palloc0(VARBITTOTALLEN(64));
	SET_VARSIZE(result, VARBITTOTALLEN(64));
	VARBITLEN(result) = 64;
	for (i = 0; i < 8; i++)
		VARBITS(result)[i] = (bits8) (fp >> (56 - 8 * i));
	PG_RETURN_VARBIT_P(result);
}

PG_FUNCTION_INFO_V1(simhash_from_bit);
Datum
simhash_from_bit(PG_FUNCTION_ARGS)
{
	VarBit	   *bits = PG_GETARG_VARBIT_P(0);
	simhash		result = 0;
	int			i;

	if (VARBITLEN(bits) != 64)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast a bit string of length %d to simhash", VARBITLEN(bits)),
				 errdetail("A simhash has exactly 64 bits.")));
	for (i = 0; i < 8; i++)
		result = (result << 8) | VARBITS(bits)[i];
	PG_RETURN_SIMHASH(result);
}

PG_FUNCTION_INFO_V1(simhash_to_bytea);
Datum
simhash_to_bytea(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);
	bytea	   *result = palloc(VARHDRSZ + 8);
	int			i;

	SET_VARSIZE(result, VARHDRSZ + 8);
	for (i = 0; i < 8; i++)
		((unsigned char *) VARDATA(result))[i] = (unsigned char) (fp >> (56 - 8 * i));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(simhash_from_bytea);
Datum
simhash_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	const unsigned char *p = (const unsigned char *) VARDATA_ANY(b);
	simhash		result = 0;
	int			i;

	if (VARSIZE_ANY_EXHDR(b) != 8)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast a bytea of %d bytes to simhash", (int) VARSIZE_ANY_EXHDR(b)),
				 errdetail("A simhash is exactly 8 bytes, most significant byte first.")));
	for (i = 0; i < 8; i++)
		result = (result << 8) | p[i];
	PG_RETURN_SIMHASH(result);
}

/* ---- comparison (unsigned, so that the order matches the hex text) ---- */

#define SIMHASH_CMP_FUNC(name, op) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(PG_GETARG_SIMHASH(0) op PG_GETARG_SIMHASH(1)); \
}

SIMHASH_CMP_FUNC(simhash_eq, ==)
SIMHASH_CMP_FUNC(simhash_ne, !=)
SIMHASH_CMP_FUNC(simhash_lt, <)
SIMHASH_CMP_FUNC(simhash_le, <=)
SIMHASH_CMP_FUNC(simhash_gt, >)
SIMHASH_CMP_FUNC(simhash_ge, >=)

PG_FUNCTION_INFO_V1(simhash_cmp);
Datum
simhash_cmp(PG_FUNCTION_ARGS)
{
	simhash		a = PG_GETARG_SIMHASH(0);
	simhash		b = PG_GETARG_SIMHASH(1);

	PG_RETURN_INT32((a > b) - (a < b));
}

PG_FUNCTION_INFO_V1(simhash_hash);
Datum
simhash_hash(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);

	/* fold the value, not its bytes, so that hashes are the same everywhere */
	return hash_uint32((uint32) fp ^ (uint32) (fp >> 32));
}

PG_FUNCTION_INFO_V1(simhash_hash_extended);
Datum
simhash_hash_extended(PG_FUNCTION_ARGS)
{
	simhash		fp = PG_GETARG_SIMHASH(0);

	return hash_uint32_extended((uint32) fp ^ (uint32) (fp >> 32), PG_GETARG_INT64(1));
}

/* ---- distance ---- */

PG_FUNCTION_INFO_V1(hamming_distance);
Datum
hamming_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash_distance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}
