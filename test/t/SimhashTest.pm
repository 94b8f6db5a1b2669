# SimhashTest.pm: what the TAP tests of test/t/ share: a primary with a
# streaming standby, and the SQL that makes random fingerprints, flips bits
# and plants neighbours around 20 random centers.
package SimhashTest;
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use Test::More;
use Exporter 'import';
our @EXPORT = qw(primary_and_standby simhash_test_sql index_settings index_answers_exact);

# a started primary (allows streaming, 40 connections, WAL kept for a
# standby that falls behind) and its started standby
sub primary_and_standby
{
	my $primary = PostgreSQL::Test::Cluster->new('primary');
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', "max_connections = 40\nwal_keep_size = '2GB'\n");
	$primary->start;
	$primary->backup('backup');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'backup', has_streaming => 1);
	$standby->start;
	return ($primary, $standby);
}

# the extension, random_simhash(), flip_bits(fp, d) (d distinct random bits
# flipped), the table centers(j, fp) of 20 random fingerprints, and an empty
# table docs(id, fp)
sub simhash_test_sql
{
	return q{
	CREATE EXTENSION simhash;
	CREATE FUNCTION random_simhash() RETURNS simhash LANGUAGE sql VOLATILE AS
	$$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash $$;
	CREATE FUNCTION flip_bits(fp simhash, d int) RETURNS simhash LANGUAGE sql VOLATILE AS
	$$ SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
	     (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT d) s), 0))::simhash $$;
	CREATE TABLE centers AS SELECT j, random_simhash() AS fp FROM generate_series(1, 20) j;
	CREATE TABLE docs (id bigserial PRIMARY KEY, fp simhash);
	};
}

# Do the index scans of table(id, fp) answer as sequential scans do (radius
# searches around the centers, their 10 nearest rows, the row count of an
# index-only scan), and does hamming_index_check pass on each hamming index of
# the table?  Four Test::More tests.
sub index_answers_exact
{
	my ($node, $table, $label) = @_;
	my $index = index_settings($node) . ' SET enable_bitmapscan = off;';
	my $seq = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;';
	my %queries = (
		radius => qq{SELECT string_agg(k || ':' || c.j || ':' || t.id, ',' ORDER BY k, c.j, t.id)
			FROM centers c, generate_series(0, 12, 3) k, $table t WHERE t.fp <~> c.fp <= k},
		nearest => qq{SELECT string_agg(c.j || ':' || x.d, ',' ORDER BY c.j, x.d)
			FROM centers c, LATERAL (SELECT fp <~> c.fp AS d FROM $table ORDER BY fp <~> c.fp LIMIT 10) x},
		count => qq{SELECT count(*) FROM $table});
	for my $kind (sort keys %queries)
	{
		is($node->safe_psql('postgres', "$index $queries{$kind}"),
			$node->safe_psql('postgres', "$seq $queries{$kind}"),
			"$label: $kind answers of the index equal a sequential scan's");
	}
	like($node->safe_psql('postgres', qq{SELECT count(hamming_index_check(c.oid)::text)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = '$table'::regclass AND a.amname = 'hamming'}),
		qr/^[1-9]/, "$label: hamming_index_check passes on each hamming index");
}

# settings that leave the planner an index or nothing: no sequential scans,
# no sorts; 16 and later also sort the input of an ordered aggregate (by
# default even with enable_sort off) and may then prefer a join filter
sub index_settings
{
	my ($node) = @_;
	return 'SET enable_seqscan = off; SET enable_sort = off;'
	  . ($node->pg_version >= 16 ? ' SET enable_presorted_aggregate = off;' : '');
}

1;
