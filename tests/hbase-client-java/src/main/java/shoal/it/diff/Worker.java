// One worker of the run: a pair of connections (A = HBase, B = Shoal) and
// the seeds it takes from the Runner one at a time. For each seed: fresh
// identical tables on both clusters, the seed's operations run on B then A
// one by one, their canonical answers compared; the first divergence not
// on the allow-list ends the seed (the states may differ from there) and
// is reported with the seed, the operation's index and Java spelling, and
// both answers, then minimized on request (Minimizer). A seed's output is
// gathered and printed whole, so workers do not interleave.
package shoal.it.diff;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.hbase.TableName;

final class Worker implements Runnable {
  /**
   * Where two answers first differed: its KNOWN class (or null), and whether
   * --allow let it pass (then it ended the seed because the states differ).
   */
  record Divergence(int index, Op.Answer a, Op.Answer b, Allow.Entry known, boolean allowed) {
    String className() {
      return known == null ? "unclassified" : known.name();
    }
  }

  private static final boolean SLOW = Boolean.getBoolean("hbdiff.slow");

  private final Runner runner;
  private final Side a;
  private final Side b;
  private final Allow allow;
  /** The current seed's output. */
  private ByteArrayOutputStream buf = new ByteArrayOutputStream();
  PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
  private long ops;
  private long allowed;
  private Map<String, Integer> classes = new TreeMap<>();

  Worker(Runner runner, Side a, Side b) {
    this.runner = runner;
    this.a = a;
    this.b = b;
    this.allow = runner.allow;
  }

  void dropLeftovers() throws IOException {
    a.dropLeftovers();
    b.dropLeftovers();
  }

  void close() {
    for (Side s : List.of(a, b)) {
      try {
        s.close();
      } catch (IOException e) {
        // closing at exit
      }
    }
  }

  @Override
  public void run() {
    for (Long seed = runner.takeSeed(); seed != null; seed = runner.takeSeed()) {
      String at = null;
      String cls = null;
      try {
        Divergence d = runSeed(seed);
        if (d != null) {
          at = seed + ":" + d.index;
          cls = d.className();
        }
      } catch (Exception e) {
        out.println("ERROR seed=" + seed + ": the tables could not be set up: " + Canon.detail(e));
        at = seed + ":setup";
        cls = "setup";
      }
      runner.report(buf.toString(StandardCharsets.UTF_8), ops, allowed, classes, at, cls);
      buf = new ByteArrayOutputStream();
      out = new PrintStream(buf, true, StandardCharsets.UTF_8);
      ops = 0;
      allowed = 0;
      classes = new TreeMap<>();
    }
  }

  /** Runs one seed; returns its divergence not allowed, or null. */
  private Divergence runSeed(long seed) throws IOException {
    long t = System.currentTimeMillis();
    Times times = new Times(t);
    int variant = (int) Math.floorMod(seed, 3L);
    List<Op> seq = new Gen(seed, times, allow).ops(runner.o.ops());
    Divergence d = play(seed, times, variant, seq, true);
    if (d == null) {
      out.printf("seed %d: %d ops alike (variant %d, %.1f s)%n", seed, seq.size(), variant,
          (System.currentTimeMillis() - t) / 1000.0);
      return null;
    }
    Op op = seq.get(d.index);
    if (d.allowed) {
      out.printf("seed %d: stopped at op %d, allowed known divergence %s (the states differ)%n",
          seed, d.index, d.className());
      return null;
    }
    out.println("DIVERGENCE seed=" + seed + " op=" + d.index + " class=" + d.className()
        + " table=" + Side.describe(variant));
    out.println("  op: " + op.java);
    out.println("  A (hbase): " + d.a.show());
    out.println("  B (shoal): " + d.b.show());
    if (runner.mayMinimize()) {
      new Minimizer(this, seed, times, variant).minimize(seq.subList(0, d.index), op, d.known);
    } else {
      out.println("  replay: --seed " + seed + " --ops " + (d.index + 1) + " --verbose"
          + (runner.o.minimize() ? "" : " (or --minimize)"));
    }
    return d;
  }

  boolean pastDeadline() {
    return runner.pastDeadline();
  }

  /**
   * Runs `seq` on fresh tables on both sides; returns the first divergence
   * not allowed, or null. `count`: the main run (counted, printed with
   * --verbose), not a minimizer's replay.
   */
  Divergence play(long seed, Times times, int variant, List<Op> seq, boolean count)
      throws IOException {
    TableName tn = TableName.valueOf(runner.tableName(seed));
    try {
      a.create(tn, variant, Gen.SPLITS);
      b.create(tn, variant, Gen.SPLITS);
      Canon canon = new Canon(times);
      for (int i = 0; i < seq.size(); i++) {
        Op op = seq.get(i);
        long t0 = System.nanoTime();
        Op.Answer ansB = op.answer(b, canon);
        long t1 = System.nanoTime();
        Allow.Entry refused = op.write ? allow.refusal(op, ansB) : null;
        if (refused != null) {
          if (count) {
            allowed++;
            ops++;
            classes.merge(refused.name() + "(allowed)", 1, Integer::sum);
            verbose(i, op, null, ansB, refused);
          }
          continue;
        }
        Op.Answer ansA = op.answer(a, canon);
        long t2 = System.nanoTime();
        if (count) {
          ops++;
          if (SLOW && t2 - t0 > 150_000_000L) {
            out.printf("slow #%d: B %d ms, A %d ms: %s%n", i, (t1 - t0) / 1_000_000,
                (t2 - t1) / 1_000_000, op.java.length() > 120 ? op.java.substring(0, 120) : op.java);
          }
        }
        if (ansA.canon().equals(ansB.canon())) {
          if (count) {
            verbose(i, op, ansA, ansB, null);
          }
          continue;
        }
        Allow.Entry diff = allow.difference(op, ansA, ansB);
        if (diff != null) {
          if (count) {
            allowed++;
            classes.merge(diff.name() + "(allowed)", 1, Integer::sum);
            verbose(i, op, ansA, ansB, diff);
          }
          continue;
        }
        Allow.Entry known = allow.known(op, ansA, ansB);
        if (known != null && allow.knownAllowed(known)) {
          if (count) {
            allowed++;
            classes.merge(known.name() + "(allowed)", 1, Integer::sum);
            runner.example(known.name(), "seed " + seed + " op " + i + ": " + op.java
                + "\n      A (hbase): " + ansA.show() + "\n      B (shoal): " + ansB.show());
            verbose(i, op, ansA, ansB, known);
          }
          if (known.sameState()) {
            continue;
          }
          return new Divergence(i, ansA, ansB, known, true);
        }
        if (count) {
          verbose(i, op, ansA, ansB, null);
        }
        return new Divergence(i, ansA, ansB, known, false);
      }
      return null;
    } finally {
      a.dropCurrent();
      b.dropCurrent();
    }
  }

  private void verbose(int i, Op op, Op.Answer ansA, Op.Answer ansB, Allow.Entry entry) {
    if (!runner.o.verbose()) {
      return;
    }
    out.println("#" + i + " " + op.java);
    if (entry != null) {
      out.println("    allowed: " + entry.name());
    }
    if (ansA == null) {
      out.println("    B: " + ansB.show() + "  (A not asked)");
    } else if (ansA.canon().equals(ansB.canon())) {
      out.println("    = " + ansA.show());
    } else {
      out.println("    A: " + ansA.show());
      out.println("    B: " + ansB.show());
    }
  }
}
