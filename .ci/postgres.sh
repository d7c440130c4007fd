#!/usr/bin/env bash
# Make PostgreSQL 15 available for the db tests: install the Debian packages when the
# server binaries are missing, then start a server on 127.0.0.1:${PGPORT:-5432} if none
# answers there. The test suite itself starts its own throwaway cluster (tests/db/conftest.py);
# this script only guarantees the binaries (initdb, pg_ctl) exist, and that a server is up
# for anyone who wants one. Safe to run twice.
set -euo pipefail

PGPORT="${PGPORT:-5432}"

find_bindir() {
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir
        return 0
    fi
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

if ! BINDIR="$(find_bindir)"; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "postgres.sh: PostgreSQL is missing and installing it needs root" >&2
        exit 1
    fi
    echo "postgres.sh: installing PostgreSQL from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y postgresql
    BINDIR="$(find_bindir)"
fi
echo "postgres.sh: PostgreSQL binaries in $BINDIR ($("$BINDIR/postgres" --version))"

if (echo > "/dev/tcp/127.0.0.1/$PGPORT") >/dev/null 2>&1; then
    echo "postgres.sh: a server already answers on 127.0.0.1:$PGPORT"
    exit 0
fi

DATA="${PGDATA_DIR:-/var/tmp/agent-search-pg}"
run_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
mkdir -p "$DATA"
if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$DATA"; fi
if [ ! -f "$DATA/PG_VERSION" ]; then
    run_pg "$BINDIR/initdb" -D "$DATA" -U postgres --auth=trust --no-locale -E UTF8 >/dev/null
fi
run_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w \
    -o "-p $PGPORT -c listen_addresses=127.0.0.1 -k $DATA" start
echo "postgres.sh: server up at postgresql://postgres@127.0.0.1:$PGPORT/postgres"
