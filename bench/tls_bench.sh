#!/bin/sh
# TLS throughput, Revolver beside redis-server, with redis-benchmark:
#   bench/tls_bench.sh REVOLVER_BIN [ROUNDS] [MAIN_REVOLVER_BIN]
# Each server runs memory-only on loopback with the same ECDSA P-256
# certificate (made here with openssl), TLS on one port and plain TCP on
# another; every row is `redis-benchmark -t set,get -P 16 -c 50 -n 500000`,
# the TLS rows with --tls --cacert and TLS_AES_128_GCM_SHA256 (what
# crypto/tls picks itself; OpenSSL would follow the client's AES-256 first).
# Rounds alternate the servers; prints one line per run: server, transport,
# SET and GET requests/s, and the server's CPU time (utime+stime) per
# request over both tests, in microseconds.
set -eu
REV=$1; ROUNDS=${2:-3}; MAIN=${3:-}
D=$(mktemp -d)
# KEEP=dir keeps the servers' logs there.
trap 'for p in $D/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done; [ -n "${KEEP:-}" ] && cp $D/*.log "$KEEP"/; rm -rf "$D"' EXIT
openssl ecparam -name prime256v1 -genkey -noout -out $D/ca.key
openssl req -x509 -new -key $D/ca.key -subj /CN=bench-ca -days 1 -out $D/ca.crt 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out $D/srv.key
openssl req -new -key $D/srv.key -subj /CN=localhost -out $D/srv.csr 2>/dev/null
openssl x509 -req -in $D/srv.csr -CA $D/ca.crt -CAkey $D/ca.key -CAcreateserial -days 1 -out $D/srv.crt 2>/dev/null
TLSARGS="--tls-cert-file $D/srv.crt --tls-key-file $D/srv.key --tls-ca-cert-file $D/ca.crt --tls-auth-clients no"
start() { # name bin plain tls extra...
  name=$1; bin=$2; port=$3; tport=$4; shift 4
  "$bin" --port $port --tls-port $tport --bind 127.0.0.1 $TLSARGS "$@" >$D/$name.log 2>&1 &
  echo $! >$D/$name.pid
  for _ in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "$name did not start" >&2; cat $D/$name.log >&2; exit 1
}
start redis redis-server 17001 17002 --save '' --appendonly no --loglevel warning
start revolver "$REV" 17011 17012 --persistence off --loglevel warning
SERVERS="redis:17001:17002 revolver:17011:17012"
if [ -n "$MAIN" ]; then
  start main "$MAIN" 17021 17022 --persistence off --loglevel warning 2>/dev/null ||
    start main "$MAIN" 17021 0 --persistence off --loglevel warning
  SERVERS="$SERVERS main:17021:"
fi
cpu() { awk '{print $14 + $15}' /proc/$(cat $D/$1.pid)/stat; }
run() { # name transport port
  extra=""
  [ "$2" = tls ] && extra="--tls --cacert $D/ca.crt --tls-ciphersuites TLS_AES_128_GCM_SHA256"
  before=$(cpu $1)
  timeout 120 redis-benchmark -p $3 $extra -t set,get -P 16 -c 50 -n 500000 -q >$D/out 2>&1 || true
  ticks=$(( $(cpu $1) - before ))
  tr '\r' '\n' <$D/out | awk -v s=$1 -v t=$2 -v ticks=$ticks -v hz=$(getconf CLK_TCK) '
    /requests per second/ {rps[n++] = $2}
    END {if (n != 2) print s, t, "FAILED"; else printf "%s %s SET %s GET %s cpu_us_per_req %.2f\n", s, t, rps[0], rps[1], ticks * 1e6 / hz / 1e6}'
  grep -q "requests per second" $D/out || tail -c 300 $D/out >&2
}
for r in $(seq $ROUNDS); do
  for s in $SERVERS; do
    name=${s%%:*}; rest=${s#*:}; port=${rest%%:*}; tport=${rest#*:}
    run $name tcp $port
    [ -n "$tport" ] && run $name tls $tport
  done
done
