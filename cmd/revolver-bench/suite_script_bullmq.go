package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A job-queue script mix in the shape of BullMQ's scripts (written here,
// not taken from BullMQ): adding a job (a new id, the job's HASH, a ZSET
// index, the wait LIST, two stream events) and moving the next waiting job
// to active (LMOVE, a lock with PX, ZREM, HSET and HINCRBY on the job, a
// stream event, the job back with HGETALL). Each client alternates the
// two, so the wait list stays short and a move nearly always finds a job.

const bullAddScript = `local jobId = redis.call('INCR', KEYS[3])
local jobKey = ARGV[1] .. jobId
redis.call('HSET', jobKey, 'name', ARGV[2], 'data', ARGV[3], 'timestamp', ARGV[4], 'delay', '0',
  'priority', '0', 'opts', ARGV[5])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '10000', '*', 'event', 'added', 'jobId', jobId, 'name', ARGV[2])
if redis.call('HEXISTS', KEYS[2], 'paused') == 1 then
  redis.call('ZADD', KEYS[5], ARGV[4], jobId)
  return jobId
end
redis.call('ZADD', KEYS[5], ARGV[4], jobId)
redis.call('LPUSH', KEYS[1], jobId)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '10000', '*', 'event', 'waiting', 'jobId', jobId)
return jobId`

const bullMoveScript = `local jobId = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
if not jobId then
  return {}
end
local jobKey = ARGV[1] .. jobId
redis.call('SET', jobKey .. ':lock', ARGV[2], 'PX', ARGV[3])
redis.call('ZREM', KEYS[3], jobId)
redis.call('HSET', jobKey, 'processedOn', ARGV[4])
redis.call('HINCRBY', jobKey, 'atm', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', '10000', '*', 'event', 'active', 'jobId', jobId, 'prev', 'waiting')
return redis.call('HGETALL', jobKey)`

var (
	bullAddSHA  = scriptSHA(bullAddScript)
	bullMoveSHA = scriptSHA(bullMoveScript)
)

// The queue's keys, all in one hash tag as BullMQ keeps a queue's keys.
const (
	bullPrefix = "{bull}:q:"
	bullWait   = bullPrefix + "wait"
	bullActive = bullPrefix + "active"
	bullMeta   = bullPrefix + "meta"
	bullID     = bullPrefix + "id"
	bullEvents = bullPrefix + "events"
	bullIndex  = bullPrefix + "index"
	bullData   = `{"to":"user@example.com","subject":"welcome","template":"signup","attempt":1}`
	bullOpts   = `{"attempts":3,"backoff":{"type":"exponential","delay":1000},"removeOnComplete":true}`
)

var bullWorkload = &workload{
	name: "EVALSHA job add+move", command: "evalsha",
	shape: "each client alternates `EVALSHA <add> 5 " + strings.Join([]string{bullWait, bullMeta, bullID, bullEvents,
		bullIndex}, " ") + " " + bullPrefix + " email <data> <timestamp> <opts>` and `EVALSHA <move> 4 " +
		strings.Join([]string{bullWait, bullActive, bullIndex, bullEvents}, " ") + " " + bullPrefix +
		" <token> 30000 <timestamp>`; the scripts are cmd/revolver-bench/suite_script_bullmq.go's",
	gen:       func(uint64) Generator { return bullGen(0) },
	perClient: func(_ uint64, client int) Generator { return bullGen(client) },
	setup:     bullReset,
}

// bullGen alternates adding a job and moving one to active.
func bullGen(client int) Generator {
	n := 0
	token := "worker-" + strconv.Itoa(client)
	return func(dst []byte, _ *rand.Rand) []byte {
		n++
		ts := strconv.Itoa(1700000000000 + n)
		if n%2 == 1 {
			return appendCommand(dst, "EVALSHA", bullAddSHA, "5", bullWait, bullMeta, bullID, bullEvents, bullIndex,
				bullPrefix, "email", bullData, ts, bullOpts)
		}
		return appendCommand(dst, "EVALSHA", bullMoveSHA, "4", bullWait, bullActive, bullIndex, bullEvents,
			bullPrefix, token, "30000", ts)
	}
}

// bullReset empties the database (the jobs are keys of their own) and
// loads the scripts.
func bullReset(_ context.Context, addr string, _ int) error {
	if _, err := do(addr, "FLUSHALL"); err != nil {
		return err
	}
	for _, src := range []string{bullAddScript, bullMoveScript} {
		if _, err := do(addr, "SCRIPT", "LOAD", src); err != nil {
			return err
		}
	}
	return nil
}
