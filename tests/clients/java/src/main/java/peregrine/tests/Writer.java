// A Jedis JedisCluster writer for tests/test_cluster_clients.py.
//
//   java -cp "target/classes:target/lib/*" peregrine.tests.Writer SEED_HOST:PORT N PREFIX RATE HOT
//
// Given one node's address only, the client finds the rest of the cluster by
// itself. Worker threads take indexes 0, 1, 2, ... from one counter, index i
// not before i/RATE seconds from the start. For index i one of them writes
// PREFIX:i (no hash tag: these keys spread over the slots) with value(i);
// when i%4 == 1 also {HOT}PREFIX:i (HOT: a hash tag whose slot the test
// moves, so that the slot holds many keys, and is written to, while it is
// migrated: ASK and ASKING); when i%25 == 0 it MSETs and MGETs a pair,
// {PREFIX:m<i>}a / b (i%50 == 0) or {HOT}PREFIX:m<i>a / b (TRYAGAIN while the
// slot is half moved). It reads back its own writes from a few indexes
// before. It goes on until it has taken at least N indexes AND its standard
// input is closed (the test closes it once the reshard is over), so every
// index below the final count was written exactly once. JedisCluster follows
// MOVED and ASK itself (a generous maxAttempts). TRYAGAIN is not among what
// Jedis retries (it reaches the caller as a JedisDataException, against Redis
// as against any server), so a command answered TRYAGAIN is sent again here,
// as a Jedis application has to (for up to 12 s); those retries are counted
// apart (app_retries). Anything else that reaches the program is counted as
// an error and printed to stderr. The last line on stdout is a JSON object of
// counts; the exit status is 1 when any error or wrong read-back was counted.
package peregrine.tests;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.exceptions.JedisDataException;

public final class Writer {
  private static final int WORKERS = 4;
  private static final int READ_LAG = 8; // each worker reads back its own write from this many writes before
  private static final int HOT_EVERY = 4; // a {HOT} key for index i when i % HOT_EVERY == 1
  private static final int MULTI_EVERY = 25; // a pair when i % MULTI_EVERY == 0: {HOT} ones when i % 50 != 0
  private static final long MAX_DURATION_MS = 240_000;
  private static final long MAX_INDEXES = 2_000_000;
  private static final int TRYAGAIN_LIMIT = 1200; // times 10 ms
  private static final int MAX_ATTEMPTS = 64;

  private final String prefix;
  private final String hot;
  private final long n;
  private final double rate;
  private final JedisCluster cluster;
  private final AtomicLong next = new AtomicLong();
  private final AtomicLong writesOk = new AtomicLong();
  private final AtomicLong readsOk = new AtomicLong();
  private final AtomicLong multiOk = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong mismatches = new AtomicLong();
  private final AtomicLong appRetries = new AtomicLong();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final AtomicBoolean deadlineHit = new AtomicBoolean();
  private final long startNanos = System.nanoTime();

  private Writer(String prefix, String hot, long n, double rate, JedisCluster cluster) {
    this.prefix = prefix;
    this.hot = hot;
    this.n = n;
    this.rate = rate;
    this.cluster = cluster;
  }

  /** The value of keys PREFIX:i and {HOT}PREFIX:i; the test computes the same. */
  static String value(String prefix, long i) {
    return prefix + "=" + i + "#" + (i * i) % 1000003;
  }

  private void fail(String what, Exception e) {
    errors.incrementAndGet();
    System.err.println(what + ": " + e);
  }

  /** Runs `command`, again after a TRYAGAIN reply (a slot half moved). */
  private <T> T retryingTryAgain(Supplier<T> command) throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      try {
        return command.get();
      } catch (JedisDataException e) {
        String msg = e.getMessage();
        if (msg == null || !msg.startsWith("TRYAGAIN") || attempt >= TRYAGAIN_LIMIT) {
          throw e;
        }
        appRetries.incrementAndGet();
        Thread.sleep(10);
      }
    }
  }

  private void set(String key, long i) throws InterruptedException {
    try {
      retryingTryAgain(() -> cluster.set(key, value(prefix, i)));
      writesOk.incrementAndGet();
    } catch (RuntimeException e) {
      fail("SET " + key, e);
    }
  }

  private void work() {
    List<Long> mine = new ArrayList<>();
    try {
      while (true) {
        if (next.get() >= n && stopped.get()) {
          return;
        }
        if (System.nanoTime() - startNanos > MAX_DURATION_MS * 1_000_000L || next.get() >= MAX_INDEXES) {
          deadlineHit.set(true);
          return;
        }
        long i = next.getAndIncrement();
        long due = startNanos + (long) (i / rate * 1e9);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
        set(prefix + ":" + i, i);
        if (i % HOT_EVERY == 1) {
          set("{" + hot + "}" + prefix + ":" + i, i);
        }
        mine.add(i);
        if (mine.size() > READ_LAG) {
          long j = mine.get(mine.size() - 1 - READ_LAG);
          List<String> keys = new ArrayList<>(List.of(prefix + ":" + j));
          if (j % HOT_EVERY == 1) {
            keys.add("{" + hot + "}" + prefix + ":" + j);
          }
          for (String k : keys) {
            try {
              String got = retryingTryAgain(() -> cluster.get(k));
              if (value(prefix, j).equals(got)) {
                readsOk.incrementAndGet();
              } else {
                mismatches.incrementAndGet();
                System.err.println("GET " + k + ": " + got + ", want " + value(prefix, j));
              }
            } catch (RuntimeException e) {
              fail("GET " + k, e);
            }
          }
        }
        if (i % MULTI_EVERY == 0) {
          String tag = i % (2 * MULTI_EVERY) == 0 ? "{" + prefix + ":m" + i + "}" : "{" + hot + "}" + prefix + ":m" + i;
          String a = "a:" + i;
          String b = "b:" + i;
          try {
            retryingTryAgain(() -> cluster.mset(tag + "a", a, tag + "b", b));
            List<String> got = retryingTryAgain(() -> cluster.mget(tag + "a", tag + "b"));
            if (got.size() == 2 && a.equals(got.get(0)) && b.equals(got.get(1))) {
              multiOk.incrementAndGet();
            } else {
              mismatches.incrementAndGet();
              System.err.println("MGET " + tag + ": " + got);
            }
          } catch (RuntimeException e) {
            fail("MSET/MGET " + tag, e);
          }
        }
      }
    } catch (InterruptedException e) {
      fail("interrupted", e);
    }
  }

  public static void main(String[] args) throws Exception {
    // Jedis's own log lines: warnings and errors only, to stderr.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    if (args.length != 5) {
      System.err.println("usage: Writer HOST:PORT N PREFIX RATE HOT");
      System.exit(2);
    }
    int colon = args[0].lastIndexOf(':');
    long n = Long.parseLong(args[1]);
    double rate = Double.parseDouble(args[3]);
    if (colon < 0 || n <= 0 || !(rate > 0)) {
      System.err.println("N and RATE must be positive numbers, the seed HOST:PORT");
      System.exit(2);
    }
    HostAndPort seed = new HostAndPort(args[0].substring(0, colon), Integer.parseInt(args[0].substring(colon + 1)));

    GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
    pool.setMaxTotal(2 * WORKERS);
    DefaultJedisClientConfig config = DefaultJedisClientConfig.builder()
        .connectionTimeoutMillis(5000).socketTimeoutMillis(10000).build();

    Writer w;
    try (JedisCluster cluster = new JedisCluster(Collections.singleton(seed), config, MAX_ATTEMPTS,
        Duration.ofSeconds(60), pool)) {
      w = new Writer(args[2], args[4], n, rate, cluster);
      Thread stdin = new Thread(() -> {
        byte[] buf = new byte[4096];
        try (InputStream in = System.in) {
          while (in.read(buf) >= 0) {
            // Discarded: only its end says something.
          }
        } catch (IOException e) {
          // An unreadable stdin counts as closed.
        }
        w.stopped.set(true);
      });
      stdin.setDaemon(true);
      stdin.start();

      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < WORKERS; t++) {
        Thread th = new Thread(w::work, "writer-" + t);
        th.start();
        threads.add(th);
      }
      for (Thread th : threads) {
        th.join();
      }
    }
    long keys = w.next.get();
    System.out.println("{\"client\":\"jedis\",\"keys\":" + keys + ",\"writes_ok\":" + w.writesOk.get()
        + ",\"reads_ok\":" + w.readsOk.get() + ",\"multi_ok\":" + w.multiOk.get() + ",\"errors\":"
        + w.errors.get() + ",\"mismatches\":" + w.mismatches.get() + ",\"app_retries\":"
        + w.appRetries.get() + ",\"deadline_hit\":" + w.deadlineHit.get() + "}");
    System.out.flush();
    boolean bad = w.errors.get() > 0 || w.mismatches.get() > 0 || w.deadlineHit.get() || keys < n;
    System.exit(bad ? 1 : 0);
  }
}
