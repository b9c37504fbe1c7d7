#!/usr/bin/env bash
# Tails side by side: redis-benchmark against two running servers, one test
# per run, A B A B for ROUNDS rounds, FLUSHALL before each run. Prints a
# markdown table of medians over the rounds: throughput, p50/p99/p99.9/max
# latency, and server CPU per request (user + system time of every thread of
# the server process, from /proc, over the run and until the server is idle
# again, so work a run defers is counted in it and kept out of the next).
#
#   bench/tail-ab.sh REVOLVER_PORT REDIS_PORT [redis-benchmark args...]
#   TESTS=set,incr,lpush,hset,zadd,mset PIN=1 bench/tail-ab.sh 7001 7002 -P 16 -c 50 -r 1000000 -n 3000000
#
# TESTS lists redis-benchmark tests (default set,incr,lpush,hset,zadd,mset);
# ROUNDS defaults to 3. PIN=1 puts every thread of both servers on CPU 0 and
# redis-benchmark on CPU 1 (undo with taskset -a -p -c 0-N PID). p99.9 is the
# first tick of redis-benchmark's percentile distribution at or above 99.9%
# (99.902%). Start both servers the same way (see redis-benchmark-ab.sh).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
a=$1 b=$2
shift 2
rounds=${ROUNDS:-3}
tests=${TESTS:-set,incr,lpush,hset,zadd,mset}

. "$(dirname "$0")/ab-lib.sh"
# cpu_ticks PID: utime + stime of all the process's threads, in clock ticks.
cpu_ticks() {
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
# wait_idle PID: until the process uses under 2% of a CPU over half a
# second (at most two minutes).
wait_idle() {
  local t0 t1 i
  for ((i = 0; i < 240; i++)); do
    t0=$(cpu_ticks "$1")
    sleep 0.5
    t1=$(cpu_ticks "$1")
    [ $((t1 - t0)) -le $((hz / 100)) ] && return
  done
}
pid_a=$(server_pid "$a") pid_b=$(server_pid "$b")
hz=$(getconf CLK_TCK)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for ((r = 1; r <= rounds; r++)); do
  for t in ${tests//,/ }; do
    for port in "$a" "$b"; do
      pid=$pid_a
      [ "$port" = "$b" ] && pid=$pid_b
      redis-cli -p "$port" FLUSHALL >/dev/null
      before=$(cpu_ticks "$pid")
      ${client[@]+"${client[@]}"} redis-benchmark -p "$port" -t "$t" "$@" 2>/dev/null | tr '\r' '\n' >"$tmp/out"
      # Background work a run leaves (an applier catching up, compactions,
      # an AOF rewrite) would land in the other server's run on a shared
      # CPU: wait until the server is idle, and count that work too.
      wait_idle "$pid"
      after=$(cpu_ticks "$pid")
      n=$(awk '/requests completed in/ { print $1; exit }' "$tmp/out")
      awk -v p="$port" -v r="$r" -v cpu="$((after - before))" -v hz="$hz" -v n="${n:-0}" '
        /^====== / { name = $2 }
        /%.*<=.*milliseconds/ && p999 == "" { q = $1; sub(/%/, "", q); if (q + 0 >= 99.9) p999 = $3 }
        /throughput summary:/ { rps = $3 }
        /avg +min +p50/ { getline; p50 = $3; p99 = $5; max = $6 }
        END {
          if (rps == "" || n == 0) { print "redis-benchmark printed no summary" > "/dev/stderr"; exit 1 }
          printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\n", p, r, name, rps, p50, p99, p999, max, cpu / hz * 1e6 / n
        }' "$tmp/out" >>"$tmp/runs"
    done
  done
done

awk -F'\t' -v a="$a" -v b="$b" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function ratio(x, y) { return y > 0 ? sprintf("%.2f", x / y) : "-" }
  {
    if (!($3 in seen)) { seen[$3] = 1; order[++tests] = $3 }
    for (c = 4; c <= 9; c++) v[$1, $3, c] = v[$1, $3, c] (v[$1, $3, c] == "" ? "" : " ") $c
  }
  END {
    print "| test | k req/s Revolver / Redis | p50 ms | p99 ms | p99.9 ms | max ms | CPU us/req | ratios: req/s, p99, max, CPU |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= tests; i++) {
      t = order[i]
      for (c = 4; c <= 9; c++) { ma[c] = median(v[a, t, c]); mb[c] = median(v[b, t, c]) }
      printf "| %s | %.0f / %.0f | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s, %s, %s, %s |\n", t,
        ma[4] / 1000, mb[4] / 1000, ma[5], mb[5], ma[6], mb[6], ma[7], mb[7], ma[8], mb[8], ma[9], mb[9],
        ratio(ma[4], mb[4]), ratio(ma[6], mb[6]), ratio(ma[8], mb[8]), ratio(ma[9], mb[9])
    }
    print ""
    print "Every round (req/s k, p99 ms, max ms), Revolver then Redis:"
    print ""
    for (i = 1; i <= tests; i++) {
      t = order[i]
      printf "- %s:", t
      for (s = 1; s <= 2; s++) {
        port = s == 1 ? a : b
        n = split(v[port, t, 4], rp, " "); split(v[port, t, 6], p9, " "); split(v[port, t, 8], mx, " ")
        printf " %s", (s == 1 ? "" : "/ ")
        for (j = 1; j <= n; j++) printf "%s%.0f %s %s", (j > 1 ? ", " : ""), rp[j] / 1000, p9[j], mx[j]
      }
      print ""
    }
  }' "$tmp/runs"
