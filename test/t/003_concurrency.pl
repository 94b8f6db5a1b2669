# Eight clients insert, update, delete, vacuum and query a table with every
# index method of the extension for about 20 seconds: no client gets an
# error, and afterwards each index answers exactly as a sequential scan.
# One hamming index has its tail merged by inserts (and VACUUM) meanwhile.
# An index method is one line of @indexes: its name, its index definition,
# and the kinds of query it serves (radius: fp <~> q <= k; knn: ORDER BY
# fp <~> q; equal: fp = q).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my @indexes = (
	[ 'gin',  'USING gin (fp)',  qw(radius equal) ],
	[ 'gist', 'USING gist (fp)', qw(knn equal) ],
	[ 'hamming', 'USING hamming (fp)', qw(radius knn equal) ],
	# its tail merged by inserts every 8 pages, while the others insert and read
	[ 'merging', 'USING hamming (fp) WITH (tail_limit = 64)', qw(radius knn equal) ],
);
my $seconds = $ENV{SIMHASH_CONCURRENCY_SECONDS} // 20;

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\nautovacuum_naptime = 1s\n");
$node->start;

$node->safe_psql('postgres', simhash_test_sql() . q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 10000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
	INSERT INTO docs (fp) SELECT fp FROM centers;
});
$node->safe_psql('postgres', "CREATE INDEX docs_$_->[0] ON docs $_->[1]") for @indexes;

# the workload: one script per kind of statement, chosen at random per transaction
my %scripts = (
	'insert' => q{
\set c random(1, 20)
\set d random(0, 8)
INSERT INTO docs (fp) SELECT flip_bits(fp, :d) FROM centers WHERE j = :c;
INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 5);
},
	'update' => q{
\set id random(1, 12000)
\set d random(1, 4)
UPDATE docs SET fp = flip_bits(fp, :d) WHERE id = :id;
},
	'delete' => q{
\set id random(1, 12000)
DELETE FROM docs WHERE id = :id;
},
	'radius' => q{
\set c random(1, 20)
\set k random(0, 10)
SELECT count(*) FROM docs d, centers c WHERE c.j = :c AND d.fp <~> c.fp <= :k;
},
	'knn' => q{
\set c random(1, 20)
SELECT d.id FROM docs d ORDER BY d.fp <~> (SELECT fp FROM centers WHERE j = :c) LIMIT 10;
},
	'equal' => q{
\set c random(1, 20)
SELECT count(*) FROM docs d, centers c WHERE c.j = :c AND d.fp = c.fp;
},
	'vacuum@1' => q{
VACUUM docs;
},
);
my @files;
for my $name (sort keys %scripts)
{
	my ($base, $weight) = split /@/, $name;
	my $file = $node->basedir . "/$base.sql";
	open(my $fh, '>', $file) or die $!;
	print $fh $scripts{$name};
	close $fh;
	push @files, '--file=' . $file . '@' . ($weight // 10);
}
$node->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=8', '--jobs=2', "--time=$seconds", @files,
	  '--host=' . $node->host, '--port=' . $node->port, 'postgres' ],
	"pgbench: 8 clients, $seconds s of inserts, updates, deletes, vacuums and queries");
$node->safe_psql('postgres', 'VACUUM ANALYZE docs');

# each index alone (the others dropped inside a rolled-back transaction)
# against a sequential scan
my %check = (
	radius => q{SELECT string_agg(k || ':' || c.j || ':' || d.id, ',' ORDER BY k, c.j, d.id)
		FROM centers c, generate_series(0, 10) k, docs d WHERE d.fp <~> c.fp <= k},
	equal => q{SELECT string_agg(c.j || ':' || d.id, ',' ORDER BY c.j, d.id)
		FROM centers c JOIN docs d ON d.fp = c.fp},
	# the distances of the 30 nearest (ties make the ids arbitrary)
	knn => q{SELECT string_agg(c.j || ':' || n.d, ',' ORDER BY c.j, n.d) FROM centers c,
		LATERAL (SELECT fp <~> c.fp AS d FROM docs ORDER BY fp <~> c.fp LIMIT 30) n},
);
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM docs');
ok($rows > 10000, "rows after the load: $rows");
for my $index (@indexes)
{
	my ($name, undef, @kinds) = @$index;
	my $drop_others = join '', map { "DROP INDEX docs_$_->[0]; " } grep { $_->[0] ne $name } @indexes;
	for my $kind (@kinds)
	{
		my $via_seqscan = $node->safe_psql('postgres',
			"SET enable_indexscan = off; SET enable_bitmapscan = off; $check{$kind}");
		my ($plan, $via_index) = split /\n---\n/, $node->safe_psql('postgres',
			"BEGIN; $drop_others " . index_settings($node) . "
			 SET enable_hashjoin = off; SET enable_mergejoin = off;
			 EXPLAIN (COSTS OFF) $check{$kind}; SELECT '---'; $check{$kind}; ROLLBACK;");
		like($plan, qr/docs_$name/, "$name, $kind: the index is used");
		ok(length($via_seqscan) > 0, "$name, $kind: there are answers");
		is($via_index, $via_seqscan, "$name, $kind: index answer equals sequential scan");
	}
}

is($node->safe_psql('postgres', q{SELECT hamming_index_check('docs_hamming')::text}), '',
	'hamming_index_check passes after the concurrent load');
is($node->safe_psql('postgres', q{SELECT hamming_index_check('docs_merging')::text}), '',
	'hamming_index_check passes on the index merged during the load');
my $merges = $node->safe_psql('postgres', q{SELECT merges FROM hamming_index_info('docs_merging')});
ok($merges >= 2, "the load merged the tail: $merges merges");

$node->stop;
done_testing();
