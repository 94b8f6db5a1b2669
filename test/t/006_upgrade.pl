# The update scripts from 0.1.0 on, run on an installation of 0.1.0 made from
# the test's own copy of its full script (test/upgrade/simhash--0.1.0.sql),
# which `make install` does not install: a version before the current one is
# not installed fresh.  The server runs from a private copy of the
# installation (PostgreSQL finds its share and library directories relative
# to its programs): the programs copied, the library directory and every
# file of the share directory linked, and 0.1.0's script added to the
# extension directory.  On it, pg_regress runs test/upgrade/sql/upgrade_chain.sql
# (0.1.0 updated to the current version and compared object by object with a
# fresh installation; a role without superuser doing the same update).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use File::Spec;
use FindBin;

my $root = File::Spec->rel2abs("$FindBin::RealBin/../..");
my %dir;
for my $what (qw(bindir sharedir pkglibdir pgxs))
{
	$dir{$what} = `pg_config --$what`;
	chomp $dir{$what};
}

# the longest directory that holds the programs, the share and the library directories
my @parts = split m{/}, $dir{bindir};
my $prefix = '';
for my $i (1 .. $#parts)
{
	my $p = join('/', @parts[0 .. $i]);
	last unless index("$dir{sharedir}/", "$p/") == 0 && index("$dir{pkglibdir}/", "$p/") == 0;
	$prefix = $p;
}
my $copy = PostgreSQL::Test::Utils::tempdir('installation');
sub in_copy { my ($path) = @_; return $copy . substr($path, length($prefix)); }

make_path(in_copy($dir{bindir}), in_copy("$dir{sharedir}/extension"), dirname(in_copy($dir{pkglibdir})));
opendir(my $bin, $dir{bindir}) or die "cannot read $dir{bindir}: $!";
for my $f (grep { -f "$dir{bindir}/$_" } readdir $bin)
{
	copy("$dir{bindir}/$f", in_copy("$dir{bindir}/$f")) or die "cannot copy $f: $!";
	chmod 0755, in_copy("$dir{bindir}/$f");
}
closedir $bin;
symlink($dir{pkglibdir}, in_copy($dir{pkglibdir})) or die "cannot link $dir{pkglibdir}: $!";
for my $sub ('', '/extension')
{
	opendir(my $share, "$dir{sharedir}$sub") or die "cannot read $dir{sharedir}$sub: $!";
	for my $f (grep { !/^\.\.?$/ && !($sub eq '' && $_ eq 'extension') } readdir $share)
	{
		symlink("$dir{sharedir}$sub/$f", in_copy("$dir{sharedir}$sub/$f")) or die "cannot link $f: $!";
	}
	closedir $share;
}
ok(!-e "$dir{sharedir}/extension/simhash--0.1.0.sql",
	"the installation has no full script of 0.1.0");
copy("$root/test/upgrade/simhash--0.1.0.sql", in_copy("$dir{sharedir}/extension/simhash--0.1.0.sql"))
  or die "cannot copy the script of 0.1.0: $!";

my $node = PostgreSQL::Test::Cluster->new('upgrade', install_path => in_copy($dir{bindir}) =~ s{/bin$}{}r);
$node->init;
$node->start;
is($node->safe_psql('postgres',
		"SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'simhash'"),
	$node->safe_psql('postgres', "SELECT '0.1.0 0.2.0 0.3.0 ' || default_version FROM pg_available_extensions WHERE name = 'simhash'"),
	'the copy of the installation offers 0.1.0 (and so the versions of its update scripts)');

my $out = PostgreSQL::Test::Utils::tempdir('regress');
my $regress = $ENV{PG_REGRESS} // ($dir{pgxs} =~ s{/src/makefiles/pgxs\.mk$}{/src/test/regress/pg_regress}r);
my ($stdout, $stderr);
my $passed = IPC::Run::run(
	[
		$regress, "--inputdir=$root/test/upgrade", "--outputdir=$out",
		'--bindir=' . in_copy($dir{bindir}), '--host=' . $node->host, '--port=' . $node->port,
		'--dbname=contrib_regression', 'upgrade_chain'
	],
	'>', \$stdout, '2>', \$stderr);
ok($passed, 'test/upgrade/sql/upgrade_chain.sql gives its expected output');
diag($stdout . $stderr . slurp_file("$out/regression.diffs")) if !$passed && -e "$out/regression.diffs";

$node->stop;
done_testing();
