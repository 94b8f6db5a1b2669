# hamming_index_check finds what it promises to find.  Indexes are damaged
# on disk while the server is stopped, one kind of damage each: fingerprints
# of probe table 0 swapped, a directory entry changed, a key of table 1
# changed, a tombstone half cleared, a tail entry dropped (its row is then
# missing from the index), a page of table 0 marked as another kind too and
# fuller than a page of table 0 holds, a metapage of an unknown version, and an all-zero
# metapage (which scans and inserts also reject, rather than write into it).
# Each is reported with SQLSTATE XX002; the undamaged index passes.  The
# function refuses other indexes and callers who do not own the table.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my $node = PostgreSQL::Test::Cluster->new('check');
$node->init(no_data_checksums => 1);	# damaged pages reach the check, not the checksum test (18 enables checksums)
$node->start;
$node->safe_psql('postgres', simhash_test_sql() . q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 3000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 4) d;
});

# page layout (hamming.h): a 24-byte page header, the entries, and the last
# 8 bytes (flags, nentries, unused, page id); the metapage's magic, version
my $BLCKSZ = 8192;
my $HEADER = 24;
my $NENTRIES = $BLCKSZ - 6;

my @damage = (
	[ 'table0_order', 'probe table 0 is out of order', sub {
		my ($fh, $t) = @_;    # swap two different neighbours of block 1 in one directory bucket
		my $shift = 64 - $t->{dir_bits};
		for my $i (0 .. 580)
		{
			my $at = $BLCKSZ + $HEADER + 8 * $i;
			my ($a, $b) = (read_at($fh, $at, 8), read_at($fh, $at + 8, 8));
			my ($x, $y) = (unpack('Q', $a), unpack('Q', $b));
			next if $x == $y || ($x >> $shift) != ($y >> $shift);
			write_at($fh, $at, $b . $a);
			return;
		}
		die "no two different neighbours of block 1 share a directory bucket";
	}, qr/Probe table 0 is out of order/ ],
	[ 'directory', 'a directory entry off by one', sub {
		my ($fh, $t) = @_;
		my $at = $t->{dir_start0} * $BLCKSZ + $HEADER + 4 * 5;
		write_at($fh, $at, pack('L', unpack('L', read_at($fh, $at, 4)) + 1));
	}, qr/directory|bucket/ ],
	[ 'table1_key', 'a key of probe table 1 changed', sub {
		my ($fh, $t) = @_;
		my $at = $t->{table_start1} * $BLCKSZ + $HEADER + 8 * 100;
		write_at($fh, $at, pack('Q', unpack('Q', read_at($fh, $at, 8)) ^ 1));
	}, qr/Probe table 1/ ],
	[ 'tombstone', 'a TID with offset 0 that is not a tombstone', sub {
		my ($fh) = @_;    # TIDs follow the 582 fingerprints: the first one becomes (0,0)
		write_at($fh, $BLCKSZ + $HEADER + 582 * 8, "\0" x 6);
	}, qr/not a tombstone/ ],
	[ 'tail_entry', 'the last entry of the tail dropped', sub {
		my ($fh, $t) = @_;
		my $at = ($t->{blocks} - 1) * $BLCKSZ + $NENTRIES;
		write_at($fh, $at, pack('S', unpack('S', read_at($fh, $at, 2)) - 1));
	}, qr/has no entry in the index/ ],
	[ 'mixed_kind', 'a page of table 0 marked as keys too, with more entries than it holds', sub {
		my ($fh) = @_;    # block 1: flags, then nentries, in the last 8 bytes
		my $at = $BLCKSZ + $BLCKSZ - 8;
		write_at($fh, $at, pack('SS', unpack('S', read_at($fh, $at, 2)) | (1 << 4), 1000));
	}, qr/contains an unexpected page at block 1/ ],
	[ 'version', 'a metapage of version 4', sub {
		my ($fh) = @_;
		write_at($fh, $HEADER + 4, pack('L', 4));
	}, qr/has version 4, which this version of simhash does not read/ ],
	[ 'zero_meta', 'an all-zero metapage', sub {
		my ($fh) = @_;
		write_at($fh, 0, "\0" x $BLCKSZ);
	}, qr/has no metapage/ ],
);

sub read_at
{
	my ($fh, $at, $n) = @_;
	my $buf;
	sysseek($fh, $at, 0) or die $!;
	sysread($fh, $buf, $n) == $n or die "short read";
	return $buf;
}

sub write_at
{
	my ($fh, $at, $bytes) = @_;
	sysseek($fh, $at, 0) or die $!;
	syswrite($fh, $bytes) == length($bytes) or die "short write";
}

my %files;
for my $d (@damage)
{
	my $name = "docs_$d->[0]";
	$node->safe_psql('postgres', "CREATE INDEX $name ON docs USING hamming (fp)");
	$files{$name} = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$name')");
}
# the tail, behind the probe tables (too small for VACUUM to merge it)
$node->safe_psql('postgres', q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 700);
	DELETE FROM docs WHERE id % 10 = 0;
});
$node->safe_psql('postgres', 'VACUUM docs');
is($node->safe_psql('postgres', q{SELECT hamming_index_check('docs_table0_order')::text}), '',
	'an undamaged index passes');
$node->stop;

for my $d (@damage)
{
	my ($kind, $what, $harm, $expected) = @$d;
	my $file = $files{"docs_$kind"};
	my %t = (blocks => (-s $file) / $BLCKSZ);
	open(my $fh, '+<', $file) or die $!;
	binmode $fh;
	my $meta = read_at($fh, $HEADER + 4 * 4 + 4 + 1000 * 4, 4 * 13);
	my @m = unpack('L13', $meta);    # ntables, dir_bits, nsorted, table_start[4], dir_start[4], tail_start
	$t{dir_bits} = $m[1];
	$t{dir_start0} = $m[7];
	$t{table_start1} = $m[4];
	$harm->($fh, \%t);
	close $fh;
}
$node->start;

for my $d (@damage)
{
	my ($kind, $what, $harm, $expected) = @$d;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT hamming_index_check('docs_$kind')");
	like($stderr, qr/XX002/, "$what: SQLSTATE XX002");
	like($stderr, $expected, "$what: found");
}
# scans and inserts reject the damaged metapages too
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT count(*) FROM docs WHERE fp = '0123456789abcdef'");
like($stderr, qr/index "docs_(version" has version 4|zero_meta" has no metapage)/, 'planning a scan rejects a damaged metapage');
($ret, $stdout, $stderr) = $node->psql('postgres', "INSERT INTO docs (fp) VALUES ('0123456789abcdef')");
like($stderr, qr/index "docs_version" has version 4/, 'an insert rejects a metapage of version 4');
$node->safe_psql('postgres', 'DROP INDEX docs_version');
($ret, $stdout, $stderr) = $node->psql('postgres', "INSERT INTO docs (fp) VALUES ('0123456789abcdef')");
like($stderr, qr/index "docs_zero_meta" has no metapage/, 'an insert rejects an all-zero metapage');

# other indexes, other users
$node->safe_psql('postgres', q{
	DROP INDEX docs_zero_meta;
	CREATE INDEX docs_gist ON docs USING gist (fp);
	CREATE ROLE stranger;
	GRANT SELECT ON docs TO stranger;
});
($ret, $stdout, $stderr) = $node->psql('postgres', q{SELECT hamming_index_check('docs_gist')});
like($stderr, qr/"docs_gist" is not a hamming index/, 'a GiST index is refused');
($ret, $stdout, $stderr) = $node->psql('postgres',
	q{SET ROLE stranger; SELECT hamming_index_check('docs_table0_order')});
like($stderr, qr/must be owner of table docs/, 'a caller who does not own the table is refused');

$node->stop;
done_testing();
