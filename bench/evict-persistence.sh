#!/bin/bash
# A spot check of eviction with persistence on: starts a server (the
# command after the name, which must listen on port 6392, in a fresh
# /tmp/evp-data), sets maxmemory 256mb with allkeys-lru, runs 600k random
# SETs of 1000-byte values over 1M keys, and prints the rate, the keys held
# and the memory figures. bench/results/2026-11-26-evict-persistence.md.
# usage: bench/evict-persistence.sh NAME SERVER-COMMAND...
name=$1; shift
rm -rf /tmp/evp-data; mkdir -p /tmp/evp-data; cd /tmp/evp-data
"$@" > /tmp/evp-server.log 2>&1 &
pid=$!
sleep 1
redis-cli -p 6392 config set maxmemory 256mb >/dev/null; redis-cli -p 6392 config set maxmemory-policy allkeys-lru >/dev/null
ops=$(redis-benchmark -p 6392 -q -t set -d 1000 -r 1000000 -n 600000 -P 16 -c 4 2>&1 | tr '\r' '\n' | grep "requests per second" | tail -1 | awk '{print $2}')
sleep 1
keys=$(redis-cli -p 6392 dbsize)
used=$(redis-cli -p 6392 info memory | grep -E "^used_memory:" | cut -d: -f2 | tr -d '\r')
nc=$(redis-cli -p 6392 info memory | grep -E "^mem_not_counted_for_evict:" | cut -d: -f2 | tr -d '\r')
rss=$(ps -o rss= -p $pid)
echo "$name SET/s=$ops keys=$keys used_memory=$used not_counted=$nc rss_kb=$rss"
kill $pid; wait $pid 2>/dev/null
