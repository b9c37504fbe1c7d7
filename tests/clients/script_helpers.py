"""redis-py's script helper (register_script) against the server at host:port
(argv[1]). The helper names its script by the SHA1 it computes and sends
EVALSHA; when the server answers NOSCRIPT it loads the script with SCRIPT
LOAD and sends EVALSHA again. Checked: the SHA1 is the one SCRIPT LOAD
returns, a call after the script cache was flushed succeeds through the
fallback, a pipeline loads the script first. Prints one "ok" line per check;
exits 1 at the first failure."""

import sys

import redis

SOURCE = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


def evalsha_calls(r):
    return r.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


def main():
    host, port = sys.argv[1].split(":")
    r = redis.Redis(host=host, port=int(port))
    key = "helpers:redis-py"
    script = r.register_script(SOURCE)
    r.delete(key)
    r.script_flush()
    assert r.script_load(SOURCE) == script.sha, (script.sha,)
    r.script_flush()
    assert script(keys=[key], args=[5]) == 5
    assert r.script_exists(script.sha) == [True]
    print("ok redis-py register_script: EVALSHA, NOSCRIPT, SCRIPT LOAD, EVALSHA")
    before = evalsha_calls(r)
    assert script(keys=[key], args=[2]) == 7
    assert evalsha_calls(r) == before + 1
    print("ok redis-py register_script: EVALSHA " + script.sha)
    r.script_flush()
    pipe = r.pipeline()
    script(keys=[key], args=[1], client=pipe)
    script(keys=[key], args=[1], client=pipe)
    assert pipe.execute() == [8, 9]
    print("ok redis-py register_script in a pipeline")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report and fail, whatever went wrong
        import traceback

        traceback.print_exc()
        print("FAIL", repr(e), file=sys.stderr)
        sys.exit(1)
