// Shrinks a divergence (--minimize): delta debugging over the operations
// before the diverging one, each candidate replayed on fresh tables on both
// clusters, kept when the last operation still diverges; at most 60 replays.
// Prints the minimized sequence as Java-like lines with both answers.
package shoal.it.diff;

import java.util.ArrayList;
import java.util.List;

final class Minimizer {
  static final int MAX_REPLAYS = 60;

  private final Worker runner;
  private final long seed;
  private final Times times;
  private final int variant;
  private int replays;
  private Worker.Divergence last;
  private Allow.Entry cls;

  Minimizer(Worker runner, long seed, Times times, int variant) {
    this.runner = runner;
    this.seed = seed;
    this.times = times;
    this.variant = variant;
  }

  /** True when `before` then `op` still diverges at `op`. */
  private boolean diverges(List<Op> before, Op op) {
    replays++;
    List<Op> all = new ArrayList<>(before);
    all.add(op);
    try {
      Worker.Divergence d = runner.play(seed, times, variant, all, false);
      if (d != null && !d.allowed() && d.index() == before.size() && d.known() == cls) {
        last = d;
        return true;
      }
      return false;
    } catch (Exception e) {
      return false;
    }
  }

  /** Minimizes `before` (then `op`, which diverged as class `known`, or unclassified: null). */
  void minimize(List<Op> before, Op op, Allow.Entry known) {
    this.cls = known;
    List<Op> cur = new ArrayList<>(before);
    if (!diverges(cur, op)) {
      runner.out.println("  minimize: the divergence did not come back on fresh tables (timing?)");
      return;
    }
    if (diverges(List.of(), op)) {
      cur = new ArrayList<>();
    }
    int n = 2;
    while (cur.size() >= 1 && replays < MAX_REPLAYS && !runner.pastDeadline()) {
      int chunk = (cur.size() + n - 1) / n;
      boolean reduced = false;
      for (int start = 0; start < cur.size() && replays < MAX_REPLAYS && !runner.pastDeadline();
          start += chunk) {
        List<Op> cand = new ArrayList<>(cur.subList(0, start));
        cand.addAll(cur.subList(Math.min(cur.size(), start + chunk), cur.size()));
        if (diverges(cand, op)) {
          cur = cand;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= cur.size()) {
          break;
        }
        n = Math.min(cur.size(), n * 2);
      }
    }
    // `last` is from the latest replay that diverged; replay the result once more to show it.
    diverges(cur, op);
    runner.out.printf("  minimized: %d of %d operations (%d replays)%s%n", cur.size() + 1,
        before.size() + 1, replays, replays >= MAX_REPLAYS ? ", stopped at the replay cap"
            : runner.pastDeadline() ? ", stopped at the time budget" : "");
    runner.out.println("    // seed " + seed + "; table: " + Side.describe(variant)
        + ", regions split at r07, r14; T = " + times.t0 + " (ms)");
    for (Op x : cur) {
      runner.out.println("    " + x.java + ";");
    }
    runner.out.println("    " + op.java + ";   // diverges");
    if (last != null) {
      runner.out.println("    // A (hbase): " + last.a().show());
      runner.out.println("    // B (shoal): " + last.b().show());
    }
  }
}
