#!/bin/bash
# ACL cost: default user vs a restricted one (~key:* +@all). Usage: bench/acl-cost.sh <revolver binary>
# The server is pinned to CPU 0, redis-benchmark to CPU 1.
set -e
BIN=$1; PORT=7450
taskset -c 0 $BIN --port $PORT --persistence off --loglevel warning > /dev/null 2>&1 &
PID=$!; sleep 1
redis-cli -p $PORT ACL SETUSER bench on '>pw' '~key:*' '+@all' > /dev/null
for round in 1 2 3 4 5; do
  for who in default bench; do
    auth=""; [ $who = bench ] && auth="--user bench -a pw"
    for p in 16 1; do
      n=1000000; [ $p = 1 ] && n=200000
      r=$(taskset -c 1 redis-benchmark -p $PORT $auth -t set,get -P $p -c 50 -r 100000 -n $n -q 2>/dev/null | tr '\r' '\n' | grep 'requests per second' | awk '{print $1 $2}' | tr '\n' ' ')
      echo "round=$round user=$who P=$p $r"
    done
  done
done
kill $PID
