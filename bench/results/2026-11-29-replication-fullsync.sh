#!/bin/bash
# Usage: [REDIS_DELAY=0] ./2026-11-29-replication-fullsync.sh  (REVOLVER binary at /tmp/rv-fs: go build -o /tmp/rv-fs ./cmd/revolver)
rm -rf /tmp/fs && mkdir -p /tmp/fs
/tmp/rv-fs --port 7601 --persistence off --dir /tmp/fs/m > /tmp/fs/m.log 2>&1 &
/tmp/rv-fs --port 7602 --persistence off --dir /tmp/fs/r > /tmp/fs/r.log 2>&1 &
redis-server --port 7603 --repl-diskless-sync-delay ${REDIS_DELAY:-5} --save '' --appendonly no --dir /tmp/fs --dbfilename m.rdb --daemonize no --loglevel warning > /dev/null 2>&1 &
redis-server --port 7604 --save '' --appendonly no --dir /tmp/fs --dbfilename r.rdb --daemonize no --loglevel warning > /dev/null 2>&1 &
sleep 1.5
for p in 7601 7603; do redis-cli -p $p eval "for i=1,1000000 do redis.call('SET',string.format('k:%08d',i),'vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv') end return 1" 0 >/dev/null; done
for pair in "7601 7602" "7603 7604"; do
  set -- $pair
  S=$(date +%s.%N)
  redis-cli -p $2 replicaof 127.0.0.1 $1 >/dev/null
  for i in $(seq 1 3000); do
    st=$(redis-cli -p $2 info replication | grep master_link_status | cut -d: -f2 | tr -d '\r')
    n=$(redis-cli -p $2 dbsize 2>/dev/null)
    if [ "$st" = "up" ] && [ "$n" = "1000000" ]; then break; fi
    sleep 0.02
  done
  echo "$1 -> $2: full sync of 1M keys in $(echo "$(date +%s.%N) - $S" | bc) s (link $st, keys $n)"
done
for p in 7601 7602 7603 7604; do redis-cli -p $p shutdown nosave >/dev/null 2>&1; done
