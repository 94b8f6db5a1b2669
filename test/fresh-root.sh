#!/usr/bin/env bash
# test/fresh-root.sh: the README's two commands on a bare Debian.
#   sudo bash test/fresh-root.sh [--dist DIST] [--pg MAJOR] [--restore DUMP] [--citus DIR] [--no-avx512] [ROOT_TARBALL]
# Makes a minimal root file system of Debian DIST (debootstrap --variant=minbase;
# default bookworm, Debian 12), from the Debian archive apt is configured with
# here, puts the committed tree of this clone in it (git archive HEAD: what a
# user clones), and runs, inside a chroot, `bash test/run-tests.sh` and
# `bash test/demo.sh` exactly as the README says, for PostgreSQL MAJOR
# (SIMHASH_PG_MAJOR; default the one DIST packages: 15 on bookworm, 17 on trixie,
# 18 on sid).  --restore DUMP then runs
# `test/cross-version.sh restore` on DUMP (made by `test/cross-version.sh dump`
# on another version).  --citus DIR first builds Citus in the root with DIR's
# build-citus.sh and source tarball (as CI does on the machine), so that the
# suite's Citus test runs there too.  --no-avx512 builds simhash with
# SIMHASH_NO_AVX512=1 (the index's page loops of CPUs without AVX-512, which a
# build on a CPU with it would not run).  Any install step the scripts forget
# makes this fail.
# Prints one line per command and a closing count; exits non-zero on any
# failure.  The root (about 700 MB once PostgreSQL is in) is removed at exit.
# With ROOT_TARBALL (a tar of a debootstrapped root) the debootstrap step is
# skipped: a development shortcut, CI always starts from debootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."

dist=bookworm major= dump= tarball= citus= no_avx512=
while [ $# -gt 0 ]; do
	case $1 in
		--dist) dist=$2; shift 2 ;;
		--pg) major=$2; shift 2 ;;
		--restore) dump=$(realpath "$2"); shift 2 ;;
		--citus) citus=$(realpath "$2"); shift 2 ;;
		--no-avx512) no_avx512=1; shift ;;
		-*) echo "fresh-root: unknown option $1" >&2; exit 2 ;;
		*) tarball=$1; shift ;;
	esac
done
if [ -z "$major" ]; then
	case $dist in
		bookworm) major=15 ;;
		trixie) major=17 ;;
		sid|unstable) major=18 ;;
		*) echo "fresh-root: which PostgreSQL does $dist package? say --pg MAJOR" >&2; exit 2 ;;
	esac
fi

if [ "$(id -u)" != 0 ]; then
	echo "fresh-root: needs root (debootstrap, mount, chroot): sudo bash $0" >&2
	exit 2
fi
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "fresh-root: note: uncommitted changes are not tested (the root gets git archive HEAD)"

root=$(mktemp -d /var/tmp/simhash-root.XXXXXX)
chmod 755 "$root"   # the root directory of the chroot: every user must traverse it
cleanup() {
	local m
	for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT

started=$SECONDS
if [ -n "$tarball" ]; then
	tar -xf "$tarball" -C "$root"
else
	command -v debootstrap >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 debootstrap >/dev/null; }
	# the Debian archive apt is configured with (the sources apt actually reads)
	mirror=$(apt-cache policy 2>/dev/null | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)
	debootstrap --variant=minbase "$dist" "$root" "${mirror:-http://deb.debian.org/debian}" >"$root.log" 2>&1 ||
		{ tail -20 "$root.log"; rm -f "$root.log"; exit 1; }
	rm -f "$root.log"
fi
echo "fresh-root: bare Debian $dist root ready in $(( SECONDS - started )) s"

# debootstrap's apt sources, as a new machine of that release has them from
# its mirror (not the host's: a suite that passes only with the host's
# newer point or security updates fails a user); and name resolution
# the development distribution's Release file expires within days, and the
# archive here may be a snapshot older than that
case $dist in
	sid|unstable) echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99simhash-valid-until" ;;
esac
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

mkdir -p "$root/root/simhash"
git archive HEAD | tar -x -C "$root/root/simhash"

cmds=("bash test/run-tests.sh" "bash test/demo.sh")
if [ -n "$citus" ]; then
	mkdir -p "$root/root/vendor"
	cp "$citus"/build-citus.sh "$citus"/citus-*.tar.xz "$root/root/vendor/"
	cmds=("source test/deps.sh && install_deps && bash /root/vendor/build-citus.sh" "${cmds[@]}")
fi
if [ -n "$dump" ]; then
	cp "$dump" "$root/root/cross-version.dump"
	cmds+=("bash test/cross-version.sh restore /root/cross-version.dump")
fi

echo "fresh-root: Debian $dist, PostgreSQL $major${no_avx512:+, built without AVX-512}"
passed=0 failed=0
for cmd in "${cmds[@]}"; do
	t0=$SECONDS
	if chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb SIMHASH_PG_MAJOR="$major" \
		${no_avx512:+SIMHASH_NO_AVX512=1} \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "cd /root/simhash && $cmd" >"$root/root/out.log" 2>&1; then
		passed=$(( passed + 1 ))
		echo "fresh-root: ok: $cmd ($(( SECONDS - t0 )) s): $(grep -E '^(tests|cross-version): [0-9]+ passed' "$root/root/out.log" | tail -n 1)"
	else
		failed=$(( failed + 1 ))
		echo "fresh-root: FAILED: $cmd ($(( SECONDS - t0 )) s); what failed, then its last lines:"
		grep -nE -B8 -A12 '(\.\.\. +FAILED|^not ok|Failed test|^--- |FAIL +|Dubious|died|Wstat)' "$root/root/out.log" | head -n 200 || true
		echo "..."
		tail -n 40 "$root/root/out.log"
	fi
done
echo "fresh-root: $(( SECONDS - started )) s in all"
echo "fresh-root: $passed passed, $failed failed"
[ "$failed" = 0 ]
