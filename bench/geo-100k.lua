math.randomseed(9)
for i = 1, 100000 do
  redis.call('GEOADD', KEYS[1], 2.35 + math.random() * 5 - 2.5, 48.85 + math.random() * 3.6 - 1.8, 'p' .. i)
end
return redis.call('ZCARD', KEYS[1])
