#!/bin/sh
# Starts the machine's PostgreSQL 15 cluster (creating it if missing), makes a
# throwaway role and database for the tests, and prints a DSN on stdout.
# Usage: export VESSEL_TEST_POSTGRES="$(deploy/postgres-test.sh)"
# Everything else goes to stderr so the DSN can be captured. Idempotent.
set -eu

ver=${PG_VERSION:-15}
cluster=${PG_CLUSTER:-main}
role=${PG_TEST_ROLE:-vessel_test}
db=${PG_TEST_DB:-vessel_test}
pass=${PG_TEST_PASSWORD:-vessel_test}

if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$ver $cluster"; then
	pg_createcluster "$ver" "$cluster" >&2
fi
port=$(pg_lsclusters -h | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $3}')
status=$(pg_lsclusters -h | awk -v v="$ver" -v c="$cluster" '$1==v && $2==c {print $4}')
if [ "$status" != "online" ]; then
	pg_ctlcluster "$ver" "$cluster" start >&2
fi

# Wait until the server accepts connections (start returns early on slow disks).
i=0
until su postgres -c "psql -p $port -Atqc 'select 1'" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -gt 60 ]; then
		echo "postgres-test: server on port $port did not come up" >&2
		exit 1
	fi
	sleep 0.5
done

psql_admin() { su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -Atq $*"; }

if [ "$(psql_admin "-c \"select 1 from pg_roles where rolname='$role'\"")" != "1" ]; then
	psql_admin "-c \"create role $role login password '$pass'\"" >&2
fi
if [ "$(psql_admin "-c \"select 1 from pg_database where datname='$db'\"")" != "1" ]; then
	psql_admin "-c \"create database $db owner $role\"" >&2
fi

echo "postgres://$role:$pass@127.0.0.1:$port/$db?sslmode=disable"
