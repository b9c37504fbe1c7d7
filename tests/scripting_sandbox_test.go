package tests

import (
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// sandboxFingerprint describes what a script's environment holds: every
// global and every field of every table reachable from the globals (with
// the identity of each function, so a replaced one shows), the string
// metatable, and a few calls that need the libraries. Two runs agree only
// if nothing a script can reach has changed in between.
const sandboxFingerprint = `
local seen, out = {}, {}
local function walk(t, path)
  if seen[t] then return end
  seen[t] = true
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = rawget(t, k)
    local kind = type(v)
    local id = kind
    if kind == 'function' then id = tostring(v) end
    if kind ~= 'table' or (k ~= 'KEYS' and k ~= 'ARGV') then out[#out + 1] = path .. k .. '=' .. id end
    if kind == 'table' and k ~= 'KEYS' and k ~= 'ARGV' then walk(v, path .. k .. '.') end
  end
end
walk(_G, '')
out[#out + 1] = 'string mt: ' .. tostring(getmetatable('').__index == string)
out[#out + 1] = 'globals mt: ' .. type(getmetatable(_G))
out[#out + 1] = ('abc'):upper() .. string.rep('x', 2) .. cjson.encode({1, 2})
out[#out + 1] = tostring(redis.call('ping').ok)
out[#out + 1] = tostring(pcall(function() return undefined_global end))
return out
`

// sandboxAttacks are what a hostile script tries in order to change what
// later scripts of other clients see. Each must fail (or change nothing).
var sandboxAttacks = []string{
	"redis = function() return 1 end",
	"redis.call = function() return 'owned' end",
	"local r = redis; r.call = nil",
	"rawset(_G, 'redis', {})",
	"rawset(redis, 'call', 1)",
	"rawset(string, 'upper', function() return 'owned' end)",
	"setmetatable(_G, nil); x = 1",
	"setmetatable(redis, {__index = function() return 1 end})",
	"local mt = getmetatable(_G); mt.__index = nil",
	"rawset(getmetatable(_G), '__index', function() return 'owned' end)",
	"getmetatable('').__index = {upper = function() return 'owned' end}",
	"rawset(getmetatable(''), '__index', {})",
	"setmetatable('', {__index = {upper = function() return 'owned' end}})",
	"setmetatable(cjson.null, {__index = function() return 'owned' end})",
	"table.insert(string, 'owned')",
	"table.insert(_G, 'owned')",
	"_G = {}",
	"_G.undefined_global = 1",
	"loadstring('redis = nil')()",
	"loadstring('undefined_global = 1')()",
	"load(function() return nil end)",
	"local f = loadstring('return 1'); setfenv(f, {})",
	"setfenv(0, {})",
	"getfenv(0).redis = nil",
	"coroutine.wrap(function() redis = nil end)()",
	"coroutine.resume(coroutine.create(function() rawset(_G, 'x', 1) end))",
	"string.upper = function() return 'owned' end",
	"math.random = function() return 4 end",
	"cjson.encode = function() return 'owned' end",
	"table.sort = nil",
	"pcall(function() redis = nil end)",
	"collectgarbage('stop')",
}

// TestSandboxHoldsAcrossClients runs every attack from one connection and
// checks from another that the environment of EVAL scripts and of
// FUNCTION libraries is what it was. It runs on redis-server too, where
// the attacks are known to fail, so the fingerprint is known to be stable.
func TestSandboxHoldsAcrossClients(t *testing.T) {
	servers := map[string]string{"revolver": startServer(t).Addr()}
	if addr := realRedis(t); addr != "" {
		servers["redis"] = addr
	}
	for name, addr := range servers {
		t.Run(name, func(t *testing.T) {
			attacker, victim := dialRaw(t, addr), dialRaw(t, addr)
			victim.do("FUNCTION", "FLUSH")
			lib := "#!lua name=sandbox_probe\n" +
				"redis.register_function('probe', function() return loadstring(" + luaQuote(sandboxFingerprint) + ")() end)\n" +
				"redis.register_function('attack', function(keys, args) return loadstring(args[1])() end)"
			if v := victim.do("FUNCTION", "LOAD", "REPLACE", lib); v.Kind != resp.KindBulk || v.Str != "sandbox_probe" {
				t.Fatalf("FUNCTION LOAD: %s", v)
			}
			evalBefore := victim.do("EVAL", sandboxFingerprint, "0")
			fnBefore := victim.do("FCALL", "probe", "0")
			if evalBefore.Kind != resp.KindArray || fnBefore.Kind != resp.KindArray || len(evalBefore.Elems) < 100 {
				t.Fatalf("fingerprint: %s / %s", evalBefore, fnBefore)
			}
			for _, a := range sandboxAttacks {
				attacker.do("EVAL", a, "0")
				attacker.do("FCALL", "attack", "0", a)
			}
			if after := victim.do("EVAL", sandboxFingerprint, "0"); after.String() != evalBefore.String() {
				t.Errorf("EVAL environment changed:\nbefore: %s\nafter:  %s", evalBefore, after)
			}
			if after := victim.do("FCALL", "probe", "0"); after.String() != fnBefore.String() {
				t.Errorf("function environment changed:\nbefore: %s\nafter:  %s", fnBefore, after)
			}
			victim.do("FUNCTION", "FLUSH")
		})
	}
}

// luaQuote is s as a Lua long string literal.
func luaQuote(s string) string { return "[==[" + s + "]==]" }
