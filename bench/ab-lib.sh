# Shared by the A/B scripts (sourced, with a and b set to the two ports):
# server_pid, a warning when the servers are in different scheduling
# autogroups, and PIN=1, which puts every thread of both servers on CPU 0
# and sets client to run redis-benchmark on CPU 1 (the servers stay pinned
# afterwards; taskset -a -p -c 0-N PID undoes it).

server_pid() {
  redis-cli -p "$1" INFO server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }'
}
autogroup() {
  cat "/proc/$(server_pid "$1")/autogroup" 2>/dev/null | cut -d' ' -f1
}
if [ "$(autogroup "$a")" != "$(autogroup "$b")" ]; then
  echo "warning: the servers are in different scheduling autogroups ($(autogroup "$a"), $(autogroup "$b")): start both the same way" >&2
fi
client=()
if [ "${PIN:-0}" = 1 ]; then
  for port in "$a" "$b"; do
    taskset -a -p -c 0 "$(server_pid "$port")" >/dev/null
  done
  client=(taskset -c 1)
fi
