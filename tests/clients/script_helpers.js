// The script helpers of ioredis (defineCommand) and node-redis
// (defineScript), run against the server at host:port (argv[2]). Each helper
// names its script by the SHA1 it computes, sends EVALSHA and, when the
// server answers NOSCRIPT, falls back to EVAL. Checked: the SHA1 is the one
// SCRIPT LOAD returns, the first call (script cache flushed) succeeds through
// the fallback and caches the script, the next runs by SHA1 alone.
// Prints one "ok" line per check; exits 1 at the first failure.
'use strict';

const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { createClient, defineScript } = require('redis');

const [host, port] = process.argv[2].split(':');
const source = "return redis.call('INCRBY', KEYS[1], ARGV[1])";

function ok(what) {
  console.log('ok ' + what);
}

// evalshaCalls reads EVALSHA's call count from INFO commandstats.
async function evalshaCalls(info) {
  const m = /cmdstat_evalsha:calls=(\d+)/.exec(await info('commandstats'));
  return m ? Number(m[1]) : 0;
}

async function checkIoredis() {
  const r = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 0 });
  await r.connect();
  try {
    const key = 'helpers:ioredis';
    r.defineCommand('incrByScript', { numberOfKeys: 1, lua: source });
    await r.del(key);
    await r.script('FLUSH');
    const sha = await r.script('LOAD', source);
    await r.script('FLUSH');
    assert.equal(await r.incrByScript(key, 5), 5);
    assert.deepEqual(await r.script('EXISTS', sha), [1]);
    ok('ioredis defineCommand: EVALSHA, NOSCRIPT, EVAL');
    const before = await evalshaCalls((s) => r.info(s));
    assert.equal(await r.incrByScript(key, 2), 7);
    assert.equal(await evalshaCalls((s) => r.info(s)), before + 1);
    ok('ioredis defineCommand: EVALSHA ' + sha);
    // In a pipeline ioredis loads the script first (SCRIPT LOAD) when it
    // has not seen it on this connection.
    await r.script('FLUSH');
    const res = await r.pipeline().incrByScript(key, 1).incrByScript(key, 1).exec();
    assert.deepEqual(res, [[null, 8], [null, 9]]);
    ok('ioredis defineCommand in a pipeline');
  } finally {
    r.disconnect();
  }
}

async function checkNodeRedis() {
  const script = defineScript({
    NUMBER_OF_KEYS: 1,
    SCRIPT: source,
    parseCommand(parser, key, by) {
      parser.pushKey(key);
      parser.push(String(by));
    },
    transformReply(reply) {
      return reply;
    },
  });
  const c = createClient({ url: `redis://${host}:${port}`, scripts: { incrByScript: script } });
  c.on('error', () => {});
  await c.connect();
  try {
    const key = 'helpers:node-redis';
    await c.del(key);
    await c.scriptFlush();
    assert.equal(await c.scriptLoad(source), script.SHA1);
    await c.scriptFlush();
    assert.equal(await c.incrByScript(key, 5), 5);
    assert.deepEqual(await c.scriptExists(script.SHA1), [1]);
    ok('node-redis defineScript: EVALSHA, NOSCRIPT, EVAL');
    const before = await evalshaCalls((s) => c.info(s));
    assert.equal(await c.incrByScript(key, 2), 7);
    assert.equal(await evalshaCalls((s) => c.info(s)), before + 1);
    ok('node-redis defineScript: EVALSHA ' + script.SHA1);
  } finally {
    await c.close();
  }
}

(async () => {
  await checkIoredis();
  await checkNodeRedis();
})().catch((err) => {
  console.error('FAIL', err && err.stack ? err.stack : err);
  process.exit(1);
});
