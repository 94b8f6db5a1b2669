/*
 * hex.h
 *	  The text form of a fingerprint (16 hexadecimal digits), shared by the
 *	  input and output functions of simhash (type.c), simhash128 (type128.c)
 *	  and simhash_ball (ball_io.c).
 */
#ifndef SIMHASH_HEX_H
#define SIMHASH_HEX_H

#include "simhash.h"

#define SIMHASH_HEX_DIGITS		16

extern size_t simhash_parse_hex(const char *s, simhash *result);
extern void simhash_format_hex(simhash fp, char *out);
extern bool simhash_read_hex_text(FunctionCallInfo fcinfo, const char *str, const char *typname,
								  const char *example, const char **digits);

/* white space around a value, as int8in skips it (isspace in the C locale) */
static inline bool
simhash_isspace(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * An input function's error: on PostgreSQL 16 and later a soft error when the
 * caller passed an ErrorSaveContext (pg_input_is_valid(), COPY ... ON_ERROR),
 * and the function returns; otherwise (and always before 16) an ERROR.  Only
 * usable in the input function itself.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#define SIMHASH_INPUT_ERROR(fcinfo, rest) ereturn((fcinfo)->context, (Datum) 0, rest)
#else
#define SIMHASH_INPUT_ERROR(fcinfo, rest) ereport(ERROR, rest)
#endif

#endif							/* SIMHASH_HEX_H */
