// The run: seeds handed out to --jobs workers (each with its own pair of
// connections, see Worker), the tallies they report (seeds, operations,
// divergences by class, allowed differences), the time budget
// (--max-seconds), and the closing lines: the diverged seeds, the classes,
// and `summary seeds=… ops=… divergences=… allowed=…`.
package shoal.it.diff;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

public final class Runner {
  /** What to run. */
  public record Options(long from, long to, int ops, boolean minimize, int minimizeMax,
      boolean verbose, Set<String> include, Set<String> exclude, Set<String> allowKnown,
      long maxSeconds, int jobs, int maxDivergences) {}

  final Options o;
  final Allow allow;
  private final String addrA;
  private final String addrB;
  private long deadline = Long.MAX_VALUE;
  private final AtomicLong nextSeed = new AtomicLong();
  private final AtomicLong tables = new AtomicLong();

  private long seeds;
  private long opsRun;
  private long divergences;
  private long allowed;
  private long minimized;
  private final List<String> diverged = new ArrayList<>();
  private final Map<String, Integer> classes = new TreeMap<>();
  /** The first instance of each known class --allow let pass, printed at the end. */
  private final Map<String, String> examples = new TreeMap<>();

  public Runner(String addrA, String addrB, Options o) {
    this.addrA = addrA;
    this.addrB = addrB;
    this.o = o;
    this.allow = new Allow(o.include(), o.exclude(), o.allowKnown());
  }

  public Allow allow() {
    return allow;
  }

  /** True once --max-seconds has passed (no new seed starts, minimizing stops). */
  boolean pastDeadline() {
    return System.currentTimeMillis() > deadline;
  }

  /** A table name no other seed, replay or run uses. */
  String tableName(long seed) {
    return Side.TABLE_PREFIX + ProcessHandle.current().pid() + "_" + seed + "_"
        + tables.getAndIncrement();
  }

  /** The next seed to run, or null when none is left (or the time budget is spent). */
  synchronized Long takeSeed() {
    long seed = nextSeed.get();
    if (seed > o.to()) {
      return null;
    }
    if (pastDeadline()) {
      System.out.printf("time budget (%d s) spent: seeds %d..%d not run%n", o.maxSeconds(), seed,
          o.to());
      nextSeed.set(o.to() + 1);
      return null;
    }
    if (o.maxDivergences() > 0 && divergences >= o.maxDivergences()) {
      System.out.printf("%d divergence(s) seen: seeds %d..%d not run%n", divergences, seed, o.to());
      nextSeed.set(o.to() + 1);
      return null;
    }
    nextSeed.incrementAndGet();
    return seed;
  }

  /** Whether a divergence may still be minimized (--minimize-max), counting it. */
  synchronized boolean mayMinimize() {
    return o.minimize() && minimized++ < o.minimizeMax();
  }

  synchronized void example(String cls, String text) {
    examples.putIfAbsent(cls, text);
  }

  /** A worker's report of one seed: its output, printed whole, and its tallies. */
  synchronized void report(String output, long ops, long allowedHere, Map<String, Integer> seen,
      String divergedAt, String divergenceClass) {
    System.out.print(output);
    System.out.flush();
    seeds++;
    opsRun += ops;
    allowed += allowedHere;
    seen.forEach((k, v) -> classes.merge(k, v, Integer::sum));
    if (divergedAt != null) {
      divergences++;
      diverged.add(divergedAt);
      classes.merge(divergenceClass, 1, Integer::sum);
    }
  }

  /** Runs every seed; returns the process exit code (1 if a divergence not allowed was seen). */
  public int run() throws IOException, InterruptedException {
    long started = System.currentTimeMillis();
    deadline = o.maxSeconds() > 0 ? started + o.maxSeconds() * 1000 : Long.MAX_VALUE;
    nextSeed.set(o.from());
    List<Worker> workers = new ArrayList<>();
    try {
      for (int i = 0; i < Math.max(1, o.jobs()); i++) {
        workers.add(new Worker(this, new Side("A", addrA), new Side("B", addrB)));
      }
      workers.get(0).dropLeftovers();
      List<Thread> threads = new ArrayList<>();
      for (Worker w : workers) {
        Thread t = new Thread(w, "hbdiff-worker-" + threads.size());
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
    } finally {
      for (Worker w : workers) {
        w.close();
      }
    }
    double secs = (System.currentTimeMillis() - started) / 1000.0;
    if (!diverged.isEmpty()) {
      System.out.println("diverged (seed:op): " + String.join(" ", diverged));
    }
    if (!examples.isEmpty()) {
      System.out.println("first instance of each allowed known class:");
      examples.forEach((k, v) -> System.out.println("  " + k + ": " + v));
    }
    if (!classes.isEmpty()) {
      StringBuilder sb = new StringBuilder("classes:");
      classes.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
      System.out.println(sb);
    }
    System.out.printf("summary seeds=%d ops=%d divergences=%d allowed=%d time=%.1fs%n",
        seeds, opsRun, divergences, allowed, secs);
    return divergences > 0 ? 1 : 0;
  }
}
