/*
 * ball_io.c
 *	  The simhash_ball type (every fingerprint within radius bits of a
 *	  center): text and binary I/O, the constructor and the accessors.
 *
 * Text form: (center,radius), the center 16 hexadecimal digits, the radius a
 * decimal integer from -1 (the empty ball) to 64, with optional white space around each part.
 * Binary form: the center as 8 bytes and the radius as 4 bytes, big-endian.
 */
#include "hex.h"
#include "ball.h"

#include "libpq/pqformat.h"

static const char *
skip_space(const char *p)
{
	while (simhash_isspace(*p))
		p++;
	return p;
}

static SimhashBall *
make_ball(simhash center, int32 radius)
{
	SimhashBall *ball = palloc0(sizeof(SimhashBall));

	ball->center = center;
	ball->radius = radius;
	return ball;
}

/*
 * The text form of a ball type of "bits"-bit centers, as in its example:
 * (center,radius), the center bits / 4 hexadecimal digits.  Sets *center to
 * its first digit and *radius, and returns true; or reports the error (on
 * PostgreSQL 16 and later a soft error, and returns false).
 */
bool
simhash_read_ball_text(FunctionCallInfo fcinfo, const char *str, const char *typname, int bits,
					   const char *example, const char **center, int32 *radius)
{
	const char *p = skip_space(str);
	const char *digits;
	simhash		ignored;
	bool		negative = false;
	int			value = 0;
	bool		in_range = true;
	const char *problem = NULL;

	if (*p != '(')
		problem = "Expected \"(\" at the start.";
	else if (simhash_parse_hex(p = skip_space(p + 1), &ignored) != (size_t) bits / 4)
		problem = psprintf("The center must be exactly %d hexadecimal digits.", bits / 4);
	else if (*skip_space((*center = p) + bits / 4) != ',')
		problem = "Expected \",\" after the center.";
	else
	{
		p = skip_space(skip_space(p + bits / 4) + 1);
		if (*p == '-' || *p == '+')
			negative = (*p++ == '-');
		digits = p;
		/* no overflow: stop counting at the first value out of range */
		for (; *p >= '0' && *p <= '9'; p++)
		{
			if (value <= bits)
				value = value * 10 + (*p - '0');
		}
		if (p == digits)
			problem = "The radius must be an integer.";
		else if (*(p = skip_space(p)) != ')')
			problem = "Expected \")\" after the radius.";
		else if (*skip_space(p + 1) != '\0')
			problem = "Unexpected characters after \")\".";
		else
		{
			*radius = negative ? -value : value;
			in_range = *radius >= BALL_MIN_RADIUS && *radius <= bits;
		}
	}
	if (problem)
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							 errmsg("invalid input syntax for type %s: \"%s\"", typname, str),
							 errdetail("%s", problem),
							 errhint("A %s is written as (center,radius), for example '%s'.", typname, example)));
	if (!in_range)
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("radius of %s \"%s\" is out of range", typname, str),
							 errdetail("A radius is between 0 and %d bits, or -1 for the empty ball.", bits)));
	return true;
}

PG_FUNCTION_INFO_V1(simhash_ball_in);
Datum
simhash_ball_in(PG_FUNCTION_ARGS)
{
	const char *digits;
	simhash		center;
	int32		radius;

	if (!simhash_read_ball_text(fcinfo, PG_GETARG_CSTRING(0), "simhash_ball", SIMHASH_BITS,
								"(0123456789abcdef,3)", &digits, &radius))
		PG_RETURN_NULL();
	simhash_parse_hex(digits, &center);
	PG_RETURN_POINTER(make_ball(center, radius));
}

PG_FUNCTION_INFO_V1(simhash_ball_out);
Datum
simhash_ball_out(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);
	char		center[SIMHASH_HEX_DIGITS + 1];

	simhash_format_hex(ball->center, center);
	PG_RETURN_CSTRING(psprintf("(%s,%d)", center, ball->radius));
}

PG_FUNCTION_INFO_V1(simhash_ball_recv);
Datum
simhash_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	simhash		center = (simhash) pq_getmsgint64(buf);
	int32		radius = (int32) pq_getmsgint(buf, 4);

	if (radius < BALL_MIN_RADIUS || radius > SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid radius %d in external simhash_ball value", radius),
				 errdetail("A radius is between 0 and 64 bits, or -1 for the empty ball.")));
	PG_RETURN_POINTER(make_ball(center, radius));
}

PG_FUNCTION_INFO_V1(simhash_ball_send);
Datum
simhash_ball_send(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center);
	pq_sendint32(&buf, ball->radius);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * simhash_ball(center, radius): the radius is checked as every threshold is
 * (0..64).  The empty ball (radius -1) exists only as a literal.
 */
PG_FUNCTION_INFO_V1(simhash_ball);
Datum
simhash_ball(PG_FUNCTION_ARGS)
{
	int32		radius = PG_GETARG_INT32(1);

	simhash_check_threshold("radius", radius, SIMHASH_BITS);
	PG_RETURN_POINTER(make_ball(PG_GETARG_SIMHASH(0), radius));
}

PG_FUNCTION_INFO_V1(simhash_ball_center);
Datum
simhash_ball_center(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH(PG_GETARG_SIMHASH_BALL_P(0)->center);
}

PG_FUNCTION_INFO_V1(simhash_ball_radius);
Datum
simhash_ball_radius(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(PG_GETARG_SIMHASH_BALL_P(0)->radius);
}
