#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests and writes its URL to
# the file named by $1 (default bin/postgres.url; --stop stops it). Idempotent: a cluster this
# script started and that still answers is reused. The server refuses to run
# as root, so as root it runs as the system user nanobot-pg (created here);
# otherwise as the current user. Installs the apt package `postgresql` when no
# server is found and it can (e2e/apt-install.sh); where it cannot start one
# it warns, removes the URL file and exits 0: the PostgreSQL tests then skip
# with a WARNING (or fail, under CI=true or NANOBOT_REQUIRE_PEERS=1). Data, socket and log live under ${TMPDIR:-/tmp}; trust
# authentication on 127.0.0.1 only: a test cluster, never a real one.
set -u
out="${1:-bin/postgres.url}"
base="${NANOBOT_PG_DIR:-${TMPDIR:-/tmp}/nanobot-test-pg-$(id -u)}"
[ "$out" = "--stop" ] || mkdir -p "$(dirname "$out")"

. "$(dirname "$0")/apt-install.sh"
warn() {
  echo "WARNING: PostgreSQL is missing: $1: $(peer_outcome "the PostgreSQL store's tests are")"
  rm -f "$out"
  exit 0
}

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
bin="$(pgbin)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  apt_install postgresql "the PostgreSQL store's tests are"
  bin="$(pgbin)"
  [ -n "$bin" ] && [ -x "$bin/initdb" ] || warn "no PostgreSQL server (/usr/lib/postgresql/*/bin)"
fi

# run executes a server command as the unprivileged owner of the cluster.
if [ "$(id -u)" = 0 ]; then
  owner=nanobot-pg
  if ! id "$owner" >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$owner" ||
      warn "cannot create the system user $owner"
  fi
  run() { runuser -u "$owner" -- "$@" 9>&-; }
else
  owner="$(id -un)"
  run() { "$@" 9>&-; } # the server must not hold the lock below
fi

mkdir -p "$base"
chown "$owner" "$base" 2>/dev/null
chmod 700 "$base"
exec 9>"$base.lock"
flock 9 # two `make test` at once start one cluster

data="$base/data" sock="$base/sock" log="$base/server.log"
if [ "$out" = "--stop" ]; then
  run "$bin/pg_ctl" -D "$data" -m fast stop && rm -f "$base/port"
  exit
fi
url_for() { echo "postgres://nanobot@127.0.0.1:$1/postgres?sslmode=disable"; }

if [ -f "$base/port" ]; then
  port="$(cat "$base/port")"
  if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U nanobot -d postgres; then
    url_for "$port" >"$out"
    echo "postgres: reusing $(url_for "$port") (data in $data)"
    exit 0
  fi
fi

if [ ! -f "$data/PG_VERSION" ]; then
  rm -rf "$data"
  run "$bin/initdb" -D "$data" -U nanobot --auth=trust -E UTF8 --no-locale >"$base/initdb.log" 2>&1 ||
    warn "initdb failed (see $base/initdb.log)"
fi
run mkdir -p "$sock"

port=""
# A cluster restarted after a crash comes back on its old port when it is free (its clients' URLs name it).
for p in $(cat "$base/port" 2>/dev/null) $(seq 54330 54399); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    port="$p"
    break
  fi
done
[ -n "$port" ] || warn "no free port in 54330-54399"

run "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 -o "-k $sock -p $port -h 127.0.0.1 -c max_connections=300" start >/dev/null ||
  warn "pg_ctl start failed (see $log)"
echo "$port" >"$base/port"
url_for "$port" >"$out"
echo "postgres: started $(url_for "$port") (data in $data; stop: e2e/postgres.sh --stop)"
