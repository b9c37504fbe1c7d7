-- numpool.lua: one event on a public number pool (seed 003).
--
--   EVALSHA <sha> 1 {numpool} <event> [<number>]
--
-- KEYS[1] is the pool's hash tag; both keys start with it, so in a cluster
-- they live in one slot with the script:
--   {numpool}:idle:up   LIST of the numbers that are idle and online
--   {numpool}:numstate  HASH number -> '{"callstate":c,"regstate":r}'
--                       callstate 0 idle, 1 busy; regstate 0 down, 1 up
-- A number missing from the HASH is in state nodata.
--
-- Events: add, del, reg, unreg, call, hangup. Replies:
--   "1"  success (the number moved, or stays where it is)
--   "0"  failure: the number is not in the pool (nodata)
--   "-1" error: the event is not allowed in the number's state
-- call without a number takes the idle+up number at the head of the LIST
-- (the one idle longest) and replies it, or "0" when none is free.

local idlekey = KEYS[1] .. ':idle:up'
local statekey = KEYS[1] .. ':numstate'
local event = ARGV[1]
local number = ARGV[2]

-- The state machine: state -> event -> the next state, '=' (stay, success),
-- 'fail' or 'error'.
local transitions = {
  ['nodata'] = {add = 'idle+down', del = '=', reg = 'fail', unreg = 'fail', call = 'fail', hangup = 'fail'},
  ['idle+up'] = {add = '=', del = 'nodata', reg = '=', unreg = 'idle+down', call = 'busy+up', hangup = 'error'},
  ['idle+down'] = {add = '=', del = 'nodata', reg = 'idle+up', unreg = '=', call = 'error', hangup = 'error'},
  ['busy+up'] = {add = '=', del = 'nodata', reg = '=', unreg = 'busy+down', call = 'error', hangup = 'idle+up'},
  ['busy+down'] = {add = '=', del = 'nodata', reg = 'busy+up', unreg = '=', call = 'error', hangup = 'idle+down'},
}
local codes = {
  ['busy+up'] = {callstate = 1, regstate = 1},
  ['busy+down'] = {callstate = 1, regstate = 0},
  ['idle+up'] = {callstate = 0, regstate = 1},
  ['idle+down'] = {callstate = 0, regstate = 0},
}

local function setstate(num, state)
  local c = codes[state]
  redis.call('HSET', statekey, num, cjson.encode({callstate = c.callstate, regstate = c.regstate}))
end

if transitions['nodata'][event] == nil then
  return redis.error_reply('ERR numpool: unknown event ' .. tostring(event))
end

if event == 'call' and number == nil then
  local picked = redis.call('LPOP', idlekey)
  if not picked then
    return '0'
  end
  setstate(picked, 'busy+up')
  return picked
end
if number == nil then
  return redis.error_reply('ERR numpool: ' .. event .. ' needs a number')
end

local state = 'nodata'
local statejson = redis.call('HGET', statekey, number)
if statejson then
  local s = cjson.decode(statejson)
  state = (s.callstate == 1 and 'busy' or 'idle') .. '+' .. (s.regstate == 1 and 'up' or 'down')
end

local nextstate = transitions[state][event]
if nextstate == '=' then
  return '1'
elseif nextstate == 'fail' then
  return '0'
elseif nextstate == 'error' then
  return '-1'
end

if nextstate == 'nodata' then
  redis.call('HDEL', statekey, number)
else
  setstate(number, nextstate)
end
if state == 'idle+up' then
  redis.call('LREM', idlekey, -1, number)
elseif nextstate == 'idle+up' then
  redis.call('RPUSH', idlekey, number)
end
return '1'
