#!/usr/bin/env bash
# redis-benchmark against two running servers, A B A B: the same
# redis-benchmark arguments on each in turn, FLUSHALL before each run, for
# ROUNDS rounds; prints a markdown table of medians and of every round.
#
#   bench/redis-benchmark-ab.sh REVOLVER_PORT REDIS_PORT [redis-benchmark args...]
#   ROUNDS=5 bench/redis-benchmark-ab.sh 7001 7002 -P 16 -c 50 -n 1000000 -r 1000000 -t sadd,spop
#   PIN=1 bench/redis-benchmark-ab.sh ...   # servers (every thread) on CPU 0, redis-benchmark on CPU 1
#
# Start the servers yourself with the durability you want to compare (for
# example `revolver --port 7001 --dir /tmp/rv` and `redis-server --port 7002
# --appendonly yes --save ''`); the script only talks to them. Start both the
# same way: with Linux's autogroup scheduling, a server in a session of its
# own (`redis-server --daemonize yes`, setsid) gets a CPU share of its own,
# while one started from the benchmark's shell shares one with redis-benchmark.
# The script warns when the two are in different groups.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
a=$1 b=$2
shift 2
rounds=${ROUNDS:-3}

. "$(dirname "$0")/ab-lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for ((r = 1; r <= rounds; r++)); do
  for port in "$a" "$b"; do
    redis-cli -p "$port" FLUSHALL >/dev/null
    # --csv prints "test","rps",...; keep test and rps.
    ${client[@]+"${client[@]}"} redis-benchmark -p "$port" --csv "$@" 2>/dev/null | tail -n +2 | tr -d '"' |
      awk -F, -v r="$r" -v p="$port" '{ print p "\t" r "\t" $1 "\t" $2 }' >>"$tmp/runs"
  done
done

awk -F'\t' -v a="$a" -v b="$b" -v rounds="$rounds" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function k(x) { return sprintf("%.0fk", x / 1000) }
  {
    if (!($3 in seen)) { seen[$3] = 1; order[++tests] = $3 }
    runs[$1, $3] = runs[$1, $3] (runs[$1, $3] == "" ? "" : " ") $4
  }
  END {
    print "| command | Revolver | Redis | ratio | rounds: Revolver / Redis |"
    print "|---|---:|---:|---:|---|"
    for (i = 1; i <= tests; i++) {
      t = order[i]; ma = median(runs[a, t]); mb = median(runs[b, t])
      na = split(runs[a, t], ra, " "); nb = split(runs[b, t], rb, " ")
      la = ""; for (j = 1; j <= na; j++) la = la (j > 1 ? ", " : "") k(ra[j])
      lb = ""; for (j = 1; j <= nb; j++) lb = lb (j > 1 ? ", " : "") k(rb[j])
      printf "| %s | %s | %s | %.2f | %s / %s |\n", t, k(ma), k(mb), (mb > 0 ? ma / mb : 0), la, lb
    }
  }' "$tmp/runs"
