#!/usr/bin/env bash
# Runs a command against a private, throwaway PostgreSQL 15 cluster:
#
#   deploy/postgres-test.sh COMMAND [ARGS...]     # e.g. deploy/postgres-test.sh make test
#
# It creates a cluster in a new temporary folder (initdb from PostgreSQL's
# own bin folder), starts it on a free loopback port of its own with its
# socket in that folder, creates a role and a database with a random
# password, runs COMMAND with VESSEL_TEST_POSTGRES set to their DSN, then
# stops the cluster and removes the folder: also when COMMAND fails or the
# script is interrupted. The machine's own PostgreSQL clusters are never
# touched, and nothing is left running or on disk. The exit status is
# COMMAND's.
#
# As root the server runs as the postgres user (PostgreSQL refuses to run as
# root); otherwise as the calling user. Needs PostgreSQL 15's server binaries
# (Debian: postgresql-15, installed by deploy/setup.sh); PG_BIN overrides
# their folder (default /usr/lib/postgresql/$PG_VERSION/bin, PG_VERSION 15).
set -euo pipefail

if [[ $# -eq 0 ]]; then
	echo "usage: deploy/postgres-test.sh COMMAND [ARGS...]" >&2
	exit 2
fi
ver=${PG_VERSION:-15}
bin=${PG_BIN:-/usr/lib/postgresql/$ver/bin}
for tool in initdb pg_ctl psql; do
	if [[ ! -x $bin/$tool ]]; then
		echo "postgres-test: $bin/$tool not found: install PostgreSQL $ver (deploy/setup.sh does) or set PG_BIN" >&2
		exit 1
	fi
done

# Who runs the server: never root.
as=()
if [[ $(id -u) -eq 0 ]]; then
	runas=${PG_TEST_USER:-postgres}
	if ! id "$runas" >/dev/null 2>&1; then
		echo "postgres-test: running as root needs a user $runas to run the server as (PG_TEST_USER)" >&2
		exit 1
	fi
	as=(runuser -u "$runas" --)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/vessel-pg.XXXXXX")
data=$dir/data
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# postmaster.pid, not a flag: a signal may land while pg_ctl starts it.
	if [[ -f $data/postmaster.pid ]]; then
		"${as[@]}" "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			"${as[@]}" "$bin/pg_ctl" -D "$data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM # until COMMAND runs, then passed on to it (below)

chmod 0700 "$dir"
if [[ ${#as[@]} -gt 0 ]]; then
	chown "$runas" "$dir"
fi
pass=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$pass" >"$dir/pwfile"
chmod 0600 "$dir/pwfile"
if [[ ${#as[@]} -gt 0 ]]; then
	chown "$runas" "$dir/pwfile"
fi

echo "postgres-test: a private PostgreSQL $ver cluster in $dir" >&2
"${as[@]}" "$bin/initdb" -D "$data" -U vessel_admin --pwfile="$dir/pwfile" --auth=scram-sha-256 \
	-E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log" >&2
	exit 1
}
rm -f "$dir/pwfile"

# A free loopback port: try a few random ones, as the server alone can tell
# whether it binds.
port=""
for _ in $(seq 1 20); do
	p=$((20000 + RANDOM % 30000))
	if "${as[@]}" "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
		-o "-p $p -c listen_addresses=127.0.0.1 -k $dir -c fsync=off" start >/dev/null 2>&1; then
		port=$p
		break
	fi
	if ! grep -q 'could not bind\|Address already in use' "$dir/server.log" 2>/dev/null; then
		echo "postgres-test: the server did not start:" >&2
		cat "$dir/server.log" >&2
		exit 1
	fi
	: >"$dir/server.log"
done
if [[ -z $port ]]; then
	echo "postgres-test: found no free port for the server" >&2
	exit 1
fi

export PGPASSWORD=$pass
"$bin/psql" -h 127.0.0.1 -p "$port" -U vessel_admin -d postgres -v ON_ERROR_STOP=1 -Atq \
	-c "create role vessel_test login password '$pass'" -c "create database vessel_test owner vessel_test" >&2
unset PGPASSWORD
echo "postgres-test: up on 127.0.0.1:$port; running: $*" >&2

export VESSEL_TEST_POSTGRES="postgres://vessel_test:$pass@127.0.0.1:$port/vessel_test?sslmode=disable"
# COMMAND runs in the background so that a signal to this script is acted
# on at once (bash runs traps only between commands): it is passed on to
# COMMAND, and the cluster goes when COMMAND has ended.
"$@" </dev/stdin &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' TERM
trap 'kill -INT "$child" 2>/dev/null || true' INT
rc=0
while :; do
	wait "$child" && rc=0 || rc=$?
	kill -0 "$child" 2>/dev/null || break # a trap interrupted wait: wait again
done
echo "postgres-test: stopping the cluster and removing $dir" >&2
exit "$rc"
