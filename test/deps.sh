# test/deps.sh: sourced by test/run-tests.sh and test/demo.sh (after
# test/cluster.sh).  Installs what building and testing simhash needs on
# Debian (as root), builds it with warnings as errors, and installs it into
# the PostgreSQL server of major version SIMHASH_PG_MAJOR: 15 by default (Debian
# 12 packages 15, Debian 13 packages 17, Debian's development distribution 18).
set -euo pipefail

SIMHASH_PG_MAJOR=${SIMHASH_PG_MAJOR:-15}
SIMHASH_PACKAGES="postgresql-$SIMHASH_PG_MAJOR postgresql-server-dev-$SIMHASH_PG_MAJOR libxxhash-dev make gcc libipc-run-perl xz-utils python3 python3-xxhash"

install_deps() {
	local missing=() p
	for p in $SIMHASH_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "missing packages: ${missing[*]} (run as root to install them)" >&2
			return 1
		fi
		echo "installing: ${missing[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
	fi
	# pgvector, where the distribution packages it for this server (Debian
	# 13 and later): the regression test coexist installs it beside simhash
	local vector=postgresql-$SIMHASH_PG_MAJOR-pgvector
	if [ "$(id -u)" = 0 ] && ! dpkg-query -W -f='${Status}' "$vector" 2>/dev/null | grep -q "install ok installed" &&
		apt-cache show "$vector" >/dev/null 2>&1; then
		echo "installing: $vector"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "$vector" >/dev/null || true
	fi
	# PG_CONFIG chooses the PostgreSQL installation (default: Debian's of that major version)
	export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/$SIMHASH_PG_MAJOR/bin/pg_config}
	export PATH="$("$PG_CONFIG" --bindir):$PATH"
}

build_and_install() {
	local lib
	lib=$("$PG_CONFIG" --pkglibdir)
	if [ ! -w "$lib" ]; then
		echo "cannot install simhash into $lib as $(id -un): run as root (sudo bash $0)," >&2
		echo "or set PG_CONFIG to the pg_config of a PostgreSQL installation you can write to" >&2
		return 1
	fi
	make -s clean >/dev/null
	make -s with_llvm=no WERROR=1
	make -s with_llvm=no install >/dev/null
}

# everything a fresh machine needs, then a work directory the server can read
# (its path in $work, removed at exit after stopping the cluster in $1)
prepare_machine() {
	install_deps
	build_and_install
	work=$(mktemp -d /tmp/simhash.XXXXXX)
	chmod 755 "$work"
	trap "stop_cluster '$work/$1'; rm -rf '$work'" EXIT
}
