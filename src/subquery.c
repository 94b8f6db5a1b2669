/*
 * subquery.c
 *	  simhash_subquery(): a user's query text made fit to embed as a
 *	  subquery, for the SQL functions that wrap it ("... FROM (%s) AS s").
 *
 * A query as typed at psql may end with semicolons, white space and
 * comments ("SELECT id, fp FROM docs; -- all of them").  Run on its own (SPI,
 * EXECUTE) that is fine, but inside parentheses a semicolon is a syntax error
 * and a trailing "-- comment" swallows the closing parenthesis.  The query is
 * read with the server's own lexer (so that a semicolon or "--" inside a
 * string literal, a quoted identifier or a comment is no terminator): when
 * its last tokens are semicolons, they and all that follows them (white
 * space, comments) are removed; then a newline is appended, so that a
 * trailing "-- comment" ends before what the caller appends.  Nothing else
 * changes: a query that is no single statement stays one and fails where it
 * is embedded, as before.
 */
#include "simhash.h"

#include "common/keywords.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/scanner.h"
#include "utils/builtins.h"

/*
 * A lexical error (an unterminated quoted string or comment) is reported at
 * its position in the user's query, as SPI reports errors of a query it runs.
 */
static void
subquery_error_callback(void *arg)
{
	int			position = geterrposition();

	if (position > 0)
	{
		errposition(0);
		internalerrposition(position);
		internalerrquery((const char *) arg);
	}
}

PG_FUNCTION_INFO_V1(simhash_subquery);

Datum
simhash_subquery(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ErrorContextCallback errcallback;
	core_yy_extra_type yyextra;
	core_yyscan_t scanner;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc;
	int			end = -1;		/* where the trailing semicolons start */
	StringInfoData body;

	errcallback.callback = subquery_error_callback;
	errcallback.arg = query;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	scanner = scanner_init(query, &yyextra, &ScanKeywords, ScanKeywordTokens);
	for (;;)
	{
		int			token = core_yylex(&yylval, &yylloc, scanner);

		CHECK_FOR_INTERRUPTS();
		if (token == 0)
			break;
		if (token != ';')
			end = -1;
		else if (end < 0)
			end = yylloc;
	}
	scanner_finish(scanner);

	error_context_stack = errcallback.previous;

	initStringInfo(&body);
	appendBinaryStringInfo(&body, query, end < 0 ? strlen(query) : end);
	appendStringInfoChar(&body, '\n');
	PG_RETURN_TEXT_P(cstring_to_text_with_len(body.data, body.len));
}
