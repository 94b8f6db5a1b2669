# SimhashTest.pm: what the TAP tests of test/t/ share: a primary with a
# streaming standby, and the SQL that makes random fingerprints, flips bits
# and plants neighbours around 20 random centers.
package SimhashTest;
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use Exporter 'import';
our @EXPORT = qw(primary_and_standby simhash_test_sql);

# a started primary (allows streaming, 40 connections) and its started standby
sub primary_and_standby
{
	my $primary = PostgreSQL::Test::Cluster->new('primary');
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', "max_connections = 40\n");
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

1;
