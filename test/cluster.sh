# test/cluster.sh: sourced by the scripts under test/.  Starts and stops a
# throwaway PostgreSQL cluster on a private Unix socket.  PostgreSQL refuses to
# run as root, so as root the server runs as the "postgres" system user.
#
#   start_cluster DIR [extra postgresql.conf lines...]   exports PGHOST, PGPORT, PGDATABASE
#   stop_cluster DIR
#   as_pg_user CMD...   runs CMD as the server's user
#   build_revision REV NAME DIR   builds git revision REV as DIR/NAME.so, a
#       second library beside the installed simhash.so (linked -Bsymbolic,
#       its _PG_init renamed: it runs only its own code; the server must
#       preload simhash so that the installed library's symbols come first)

# the server's programs, looked up when first needed (not when sourced: on a
# fresh machine pg_config only exists after test/deps.sh has installed it)
pg_bin() {
	PG_BINDIR=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir)}
	echo "$PG_BINDIR/$1"
}

as_pg_user() {
	if [ "$(id -u)" = 0 ]; then
		local vars=(PATH="$PATH") v
		for v in PGHOST PGPORT PGUSER PGDATABASE PG_REGRESS_DIFF_OPTS; do
			[ -n "${!v:-}" ] && vars+=("$v=${!v}")
		done
		runuser -u postgres -- env "${vars[@]}" "$@"
	else
		"$@"
	fi
}

start_cluster() {
	local dir=$1
	shift
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
		chown postgres "$dir"
	fi
	as_pg_user "$(pg_bin initdb)" -D "$dir/data" -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
		|| as_pg_user "$(pg_bin initdb)" -D "$dir/data" -U postgres -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
		|| { cat "$dir/initdb.log"; return 1; }
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = ${PGPORT_WANTED:-54329}"
		echo "fsync = off"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/data/postgresql.conf"
	as_pg_user "$(pg_bin pg_ctl)" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null \
		|| { cat "$dir/server.log"; return 1; }
	export PGHOST=$dir PGPORT=${PGPORT_WANTED:-54329} PGUSER=postgres PGDATABASE=postgres
}

stop_cluster() {
	as_pg_user "$(pg_bin pg_ctl)" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

build_revision() {
	local rev=$1 name=$2 dir=$3
	mkdir -p "$dir"
	git archive "$rev" | tar -x -C "$dir"
	make -s -C "$dir" with_llvm=no PG_CONFIG="${PG_CONFIG:-pg_config}" MODULE_big="$name" \
		SHLIB_LINK=-Wl,-Bsymbolic PG_CPPFLAGS="-D_PG_init=${name}_init_unused" >"$dir/build.log" 2>&1 ||
		{ cat "$dir/build.log"; return 1; }
	chmod -R a+rX "$dir"
}
