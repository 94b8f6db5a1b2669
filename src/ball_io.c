/*
 * ball_io.c
 *	  The simhash_ball type (every fingerprint within radius bits of a
 *	  center): text and binary I/O, the constructor and the accessors.
 *
 * Text form: (center,radius), the center 16 hexadecimal digits, the radius a
 * decimal integer from -1 (the empty ball, which simhash_ball() gives for a
 * negative radius) to 64, with optional white space around each part.
 * Binary form: the center as 8 bytes and the radius as 4 bytes, big-endian.
 */
#include "radius.h"

#include "libpq/pqformat.h"

#define BALL_MIN_RADIUS		(-1)	/* the empty ball */

#define BALL_INPUT_HINT \
	errhint("A simhash_ball is written as (center,radius), for example '(0123456789abcdef,3)'.")

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

PG_FUNCTION_INFO_V1(simhash_ball_in);
Datum
simhash_ball_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *p = skip_space(str);
	const char *digits;
	simhash		center = 0;
	bool		negative = false;
	int			radius = 0;
	bool		in_range = true;
	const char *problem = NULL;

	if (*p != '(')
		problem = "Expected \"(\" at the start.";
	else if (simhash_parse_hex(p = skip_space(p + 1), &center) != SIMHASH_HEX_DIGITS)
		problem = "The center must be exactly 16 hexadecimal digits.";
	else if (*(p = skip_space(p + SIMHASH_HEX_DIGITS)) != ',')
		problem = "Expected \",\" after the center.";
	else
	{
		p = skip_space(p + 1);
		if (*p == '-' || *p == '+')
			negative = (*p++ == '-');
		digits = p;
		/* no overflow: stop counting at the first value out of range */
		for (; *p >= '0' && *p <= '9'; p++)
		{
			if (radius <= SIMHASH_BITS)
				radius = radius * 10 + (*p - '0');
		}
		if (p == digits)
			problem = "The radius must be an integer.";
		else if (*(p = skip_space(p)) != ')')
			problem = "Expected \")\" after the radius.";
		else if (*skip_space(p + 1) != '\0')
			problem = "Unexpected characters after \")\".";
		else
		{
			radius = negative ? -radius : radius;
			in_range = radius >= BALL_MIN_RADIUS && radius <= SIMHASH_BITS;
		}
	}
	if (problem)
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							 errmsg("invalid input syntax for type %s: \"%s\"", "simhash_ball", str),
							 errdetail("%s", problem),
							 BALL_INPUT_HINT));
	if (!in_range)
		SIMHASH_INPUT_ERROR(fcinfo,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("radius of simhash_ball \"%s\" is out of range", str),
							 errdetail("A radius is between 0 and 64 bits, or -1 for the empty ball.")));
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
 * simhash_ball(center, radius): radii outside 0..64 are clamped (a negative
 * radius gives the empty ball), so that any integer comparison of a distance
 * can be expressed as a ball.
 */
PG_FUNCTION_INFO_V1(simhash_ball);
Datum
simhash_ball(PG_FUNCTION_ARGS)
{
	int32		radius = PG_GETARG_INT32(1);

	radius = Max(BALL_MIN_RADIUS, Min(radius, SIMHASH_BITS));
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
