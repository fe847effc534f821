// An ioredis Cluster writer for tests/test_cluster_clients.py.
//
//   node writer.js SEED_HOST:PORT N PREFIX RATE HOT
//
// Given one node's address only, the client finds the rest of the cluster by
// itself. Workers (async loops sharing one counter) take indexes 0, 1, 2, ...,
// index i not before i/RATE seconds from the start. For index i one of them
// writes PREFIX:i (no hash tag: these keys spread over the slots) with
// value(i); when i%4 == 1 also {HOT}PREFIX:i (HOT: a hash tag whose slot the
// test moves, so that the slot holds many keys, and is written to, while it
// is migrated: ASK and ASKING); when i%25 == 0 it MSETs and MGETs a pair,
// {PREFIX:m<i>}a / b (i%50 == 0) or {HOT}PREFIX:m<i>a / b (TRYAGAIN while
// the slot is half moved). It reads back its own writes from a few indexes
// before. It goes on until it has taken at least N indexes AND its standard
// input is closed (the test closes it once the reshard is over), so every
// index below the final count was written exactly once. MOVED, ASK and
// TRYAGAIN are the client's to follow (generous limits); anything that still
// reaches the program is counted as an error and printed to stderr. The last
// line on stdout is a JSON object of counts; the exit status is 1 when any
// error or wrong read-back was counted.
"use strict";

const Redis = require("ioredis");

const WORKERS = 4;
const READ_LAG = 8; // each worker reads back its own write from this many writes before
const HOT_EVERY = 4; // a {HOT} key for index i when i % HOT_EVERY === 1
const MULTI_EVERY = 25; // a pair when i % MULTI_EVERY === 0: {HOT} ones when i % (2 * MULTI_EVERY) !== 0
const MAX_DURATION_MS = 240 * 1000;
const MAX_INDEXES = 2000000;

// The value of keys PREFIX:i and {HOT}PREFIX:i; the test computes the same.
function value(prefix, i) {
  return `${prefix}=${i}#${(i * i) % 1000003}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 5) {
    console.error("usage: node writer.js HOST:PORT N PREFIX RATE HOT");
    process.exit(2);
  }
  const [seed, nText, prefix, rateText, hot] = args;
  const n = Number(nText);
  const rate = Number(rateText);
  const colon = seed.lastIndexOf(":");
  if (!Number.isInteger(n) || n <= 0 || !(rate > 0) || colon < 0) {
    console.error("N and RATE must be positive numbers, the seed HOST:PORT");
    process.exit(2);
  }

  const cluster = new Redis.Cluster([{ host: seed.slice(0, colon), port: Number(seed.slice(colon + 1)) }], {
    maxRedirections: 256, // ASK and TRYAGAIN count: ~12 s of TRYAGAIN
    retryDelayOnMoved: 0,
    retryDelayOnTryAgain: 100,
    retryDelayOnClusterDown: 100,
    slotsRefreshTimeout: 5000,
    // Give up (failing what waits in the offline queue) after ~30 s without
    // a node, rather than retry for ever.
    clusterRetryStrategy: (times) => (times > 30 ? null : Math.min(100 + times * 50, 2000)),
    redisOptions: { connectTimeout: 5000, commandTimeout: 10000 },
  });
  cluster.on("error", (err) => console.error("cluster event: " + err));

  let stopped = false;
  process.stdin.on("end", () => {
    stopped = true;
  });
  process.stdin.on("error", () => {
    stopped = true;
  });
  process.stdin.resume();

  const start = Date.now();
  const counts = {
    client: "ioredis", keys: 0, writes_ok: 0, reads_ok: 0, multi_ok: 0, errors: 0, mismatches: 0,
    deadline_hit: false,
  };
  let next = 0;
  // A command that never settles would keep the workers waiting: a last bound.
  const watchdog = setTimeout(() => {
    console.error("writer: still running after the deadline; giving up");
    counts.deadline_hit = true;
    counts.keys = next;
    console.log(JSON.stringify(counts));
    process.exit(1);
  }, MAX_DURATION_MS + 60 * 1000);
  const fail = (what, err) => {
    counts.errors++;
    console.error(`${what}: ${err}`);
  };

  async function worker() {
    const mine = [];
    for (;;) {
      if (next >= n && stopped) return;
      if (Date.now() - start > MAX_DURATION_MS || next >= MAX_INDEXES) {
        counts.deadline_hit = true;
        return;
      }
      const i = next++;
      const wait = start + (i / rate) * 1000 - Date.now();
      if (wait > 0) await sleep(wait);
      const set = async (key) => {
        try {
          await cluster.set(key, value(prefix, i));
          counts.writes_ok++;
        } catch (err) {
          fail(`SET ${key}`, err);
        }
      };
      await set(`${prefix}:${i}`);
      if (i % HOT_EVERY === 1) await set(`{${hot}}${prefix}:${i}`);
      mine.push(i);
      if (mine.length > READ_LAG) {
        const j = mine[mine.length - 1 - READ_LAG];
        const keys = [`${prefix}:${j}`];
        if (j % HOT_EVERY === 1) keys.push(`{${hot}}${prefix}:${j}`);
        for (const k of keys) {
          try {
            const got = await cluster.get(k);
            if (got === value(prefix, j)) {
              counts.reads_ok++;
            } else {
              counts.mismatches++;
              console.error(`GET ${k}: ${JSON.stringify(got)}, want ${JSON.stringify(value(prefix, j))}`);
            }
          } catch (err) {
            fail(`GET ${k}`, err);
          }
        }
      }
      if (i % MULTI_EVERY === 0) {
        const tag = i % (2 * MULTI_EVERY) === 0 ? `{${prefix}:m${i}}` : `{${hot}}${prefix}:m${i}`;
        const a = `a:${i}`;
        const b = `b:${i}`;
        try {
          await cluster.mset(tag + "a", a, tag + "b", b);
          const got = await cluster.mget(tag + "a", tag + "b");
          if (got.length === 2 && got[0] === a && got[1] === b) {
            counts.multi_ok++;
          } else {
            counts.mismatches++;
            console.error(`MGET ${tag}: ${JSON.stringify(got)}`);
          }
        } catch (err) {
          fail(`MSET/MGET ${tag}`, err);
        }
      }
    }
  }

  await Promise.all(Array.from({ length: WORKERS }, worker));
  clearTimeout(watchdog);
  counts.keys = next;
  await cluster.quit().catch(() => cluster.disconnect());
  process.stdin.pause();
  console.log(JSON.stringify(counts));
  const bad = counts.errors > 0 || counts.mismatches > 0 || counts.deadline_hit || counts.keys < n;
  process.exit(bad ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
