// The operation mix: from one java.util.Random(seed), a sequence of
// operations, identical for both clusters: writes (put, delete, increment,
// incrementColumnValue, append, checkAndMutate single and as a list,
// mutateRow, Table.batch mixing gets and mutations, put(List),
// delete(List)), reads (get, get(List), exists, scan) and admin steps
// (flush, major compaction, at most one split). FEATURES names the parts a
// run may turn off with --exclude.
package shoal.it.diff;

import static shoal.it.diff.Text.b;
import static shoal.it.diff.Text.q;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Increment;

final class Gen {
  static final Map<String, String> FEATURES = new LinkedHashMap<>();

  static {
    FEATURES.put("flush", "flushes between operations");
    FEATURES.put("compaction", "major compactions between operations");
    FEATURES.put("split", "a split at a key (one per seed at most)");
    FEATURES.put("cam-filter", "checkAndMutate with ifMatches(Filter) or a time range");
    FEATURES.put("row-mutations-counters", "Increment and Append inside RowMutations");
    FEATURES.put("cam-counters", "Increment and Append guarded by checkAndMutate");
    FEATURES.put("batch-cam", "CheckAndMutate inside Table.batch and checkAndMutate(List)");
    FEATURES.put("no-return", "Increment/Append with setReturnResults(false)");
    FEATURES.put("filters", "filters on gets and scans");
    FEATURES.put("no-op", "CompareOperator.NO_OP in filters and checkAndMutate conditions");
    FEATURES.put("raw", "raw scans (delete markers and deleted cells answered)");
    FEATURES.put("per-family", "setMaxResultsPerColumnFamily, setRowOffsetPerColumnFamily and"
        + " setColumnFamilyTimeRange on gets and scans");
  }

  /** The table's split keys: three regions. */
  static final byte[][] SPLITS = {b("r07"), b("r14")};
  /** Where a split may go: inside each region. */
  static final String[] SPLIT_AT = {"r03", "r10", "r17"};

  private final Random r;
  private final Allow allow;
  private final Writes writes;
  private final Reads reads;
  private final Conditions conditions;
  private boolean splitDone;

  Gen(long seed, Times times, Allow allow) {
    this.r = new Random(seed);
    this.allow = allow;
    Filters filters = new Filters(r, times, allow);
    this.writes = new Writes(r, times, filters, allow);
    this.reads = new Reads(r, times, filters, writes, allow);
    this.conditions = new Conditions(r, times, filters, writes, allow);
  }

  /** `n` operations: puts to a dozen rows first (so reads find data), then the mix. */
  List<Op> ops(int n) {
    List<Op> ops = new ArrayList<>(n);
    for (String row : rows(12)) {
      if (ops.size() < n / 4) {
        Writes.M m = writes.put(row, 3 + r.nextInt(4));
        ops.add(Op.write("t.put(" + m.java() + ")", Set.of(), (s, c) -> {
          s.table.put((Put) m.build());
          return "ok";
        }));
      }
    }
    while (ops.size() < n) {
      Op op = next();
      if (op != null) {
        ops.add(op);
      }
    }
    return ops;
  }

  /** Distinct rows (see Allow "batch-same-row"). */
  private List<String> rows(int n) {
    List<String> all = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      all.add(String.format("r%02d", i));
    }
    Collections.shuffle(all, r);
    if (!allow.excludes("batch-same-row")) {
      for (int i = 0; i < n; i++) {
        all.set(i, writes.row());
      }
    }
    return all.subList(0, n);
  }

  /** One operation, or null when the pick is turned off: writes 45%, reads 53%, admin 2%. */
  private Op next() {
    int k = r.nextInt(1000);
    if (k < 450) {
      return write(k);
    }
    if (k < 980) {
      return read(k);
    }
    return admin(k);
  }

  /** A write, for k in [0, 450). */
  private Op write(int k) {
    if (k < 140) {
      Writes.M m = writes.put(writes.row());
      return Op.write("t.put(" + m.java() + ")", Set.of(), (s, c) -> {
        s.table.put((Put) m.build());
        return "ok";
      });
    }
    if (k < 220) {
      Writes.M m = writes.delete(writes.row());
      return Op.write("t.delete(" + m.java() + ")", Set.of(), (s, c) -> {
        s.table.delete((Delete) m.build());
        return "ok";
      });
    }
    if (k < 250) {
      Writes.M m = writes.increment(writes.row(), !allow.excludes("no-return"));
      return Op.write("t.increment(" + m.java() + ")", m.returnResults ? Set.of() : Set.of("no-return"),
          (s, c) -> stored(s, c, s.table.increment((Increment) m.build()), m.row));
    }
    if (k < 258) {
      String row = writes.row();
      String fam = writes.family();
      String qual = writes.counterQualifier();
      long amount = r.nextInt(8) - 2;
      return Op.write("t.incrementColumnValue(" + q(row) + ", " + fam + ", " + q(qual) + ", " + amount
          + ")", Set.of(), (s, c) -> "=" + s.table.incrementColumnValue(b(row), b(fam), b(qual), amount));
    }
    if (k < 283) {
      Writes.M m = writes.append(writes.row(), !allow.excludes("no-return"));
      return Op.write("t.append(" + m.java() + ")", m.returnResults ? Set.of() : Set.of("no-return"),
          (s, c) -> stored(s, c, s.table.append((Append) m.build()), m.row));
    }
    if (k < 348) {
      Conditions.Cam cam = conditions.cam(writes.row(), false);
      return Op.write("t.checkAndMutate(" + cam.java() + ")",
          cam.filterOrRange() ? Set.of("cam-filter") : Set.of(),
          (s, c) -> c.cam(s.table.checkAndMutate(cam.build())));
    }
    if (k < 358) {
      return allow.excludes("batch-cam") ? null : camList();
    }
    if (k < 388) {
      Conditions.RM rm = conditions.rowMutations(writes.row(), true);
      return Op.write("t.mutateRow(" + rm.java() + ")", Set.of(),
          (s, c) -> c.result(s.table.mutateRow(rm.build())));
    }
    if (k < 423) {
      return batch();
    }
    if (k < 440) {
      List<Writes.M> ms = new ArrayList<>();
      for (String row : rows(1 + r.nextInt(4))) {
        ms.add(writes.put(row));
      }
      return Op.write("t.put(List.of(" + javaList(ms) + "))", Set.of(), (s, c) -> {
        List<Put> ps = new ArrayList<>();
        for (Writes.M m : ms) {
          ps.add((Put) m.build());
        }
        s.table.put(ps);
        return "ok";
      });
    }
    if (k < 450) {
      List<Writes.M> ms = new ArrayList<>();
      for (String row : rows(1 + r.nextInt(3))) {
        ms.add(writes.delete(row));
      }
      return Op.write("t.delete(new ArrayList<>(List.of(" + javaList(ms) + ")))", Set.of(), (s, c) -> {
        List<Delete> ds = new ArrayList<>();
        for (Writes.M m : ms) {
          ds.add((Delete) m.build());
        }
        s.table.delete(ds);
        return "ok";
      });
    }
    throw new IllegalArgumentException("not a write pick: " + k);
  }

  /** A read, for k in [450, 980). */
  private Op read(int k) {
    if (k < 570) {
      Reads.G g = reads.get(writes.row());
      return Op.read("t.get(" + g.java() + ")", Set.of("get"),
          (s, c) -> c.result(s.table.get(g.build())));
    }
    if (k < 590) {
      List<Reads.G> gs = new ArrayList<>();
      int n = 1 + r.nextInt(4);
      for (int i = 0; i < n; i++) {
        gs.add(reads.get(writes.row()));
      }
      return Op.read("t.get(List.of(" + javaGets(gs) + "))", Set.of(), (s, c) -> {
        List<Get> built = new ArrayList<>();
        for (Reads.G g : gs) {
          built.add(g.build());
        }
        return c.results(s.table.get(built));
      });
    }
    if (k < 605) {
      if (r.nextBoolean()) {
        Reads.G g = reads.get(writes.row());
        return Op.read("t.exists(" + g.java() + ")", Set.of(),
            (s, c) -> "exists=" + s.table.exists(g.build()));
      }
      List<Reads.G> gs = new ArrayList<>();
      int n = 1 + r.nextInt(3);
      for (int i = 0; i < n; i++) {
        gs.add(reads.get(writes.row()));
      }
      return Op.read("t.exists(List.of(" + javaGets(gs) + "))", Set.of(), (s, c) -> {
        List<Get> built = new ArrayList<>();
        for (Reads.G g : gs) {
          built.add(g.build());
        }
        return Arrays.toString(s.table.exists(built));
      });
    }
    Reads.S scan = reads.scan();
    return Op.read("t.getScanner(" + scan.java() + ")", scan.tags(),
        (s, c) -> c.results(scan.run(s.table)));
  }

  /** An admin step, for k in [980, 1000): flush, major compaction, a split (one per seed). */
  private Op admin(int k) {
    if (k < 993) {
      return allow.excludes("flush") ? null : Op.admin("admin.flush(t)", (s, c) -> {
        s.flush();
        return "ok";
      });
    }
    if (k < 998) {
      return allow.excludes("compaction") ? null
          : Op.admin("admin.majorCompact(t) /* and wait until NONE */", (s, c) -> {
            s.majorCompact();
            return "ok";
          });
    }
    if (splitDone || allow.excludes("split")) {
      return null;
    }
    splitDone = true;
    String at = SPLIT_AT[r.nextInt(SPLIT_AT.length)];
    return Op.admin("admin.split(t, " + q(at) + ") /* wait, then majorCompact */", (s, c) -> {
      s.split(b(at));
      return "ok";
    });
  }

  private Op camList() {
    List<Conditions.Cam> cams = new ArrayList<>();
    for (String row : rows(1 + r.nextInt(3))) {
      cams.add(conditions.cam(row, true));
    }
    StringBuilder java = new StringBuilder();
    for (Conditions.Cam cam : cams) {
      java.append(java.length() > 0 ? ", " : "").append(cam.java());
    }
    return Op.write("t.checkAndMutate(List.of(" + java + "))", Set.of(), (s, c) -> {
      List<CheckAndMutate> built = new ArrayList<>();
      for (Conditions.Cam cam : cams) {
        built.add(cam.build());
      }
      List<CheckAndMutateResult> rs = s.table.checkAndMutate(built);
      StringBuilder sb = new StringBuilder();
      for (CheckAndMutateResult x : rs) {
        sb.append(sb.length() > 0 ? " | " : "").append(c.cam(x));
      }
      return sb.toString();
    });
  }

  /** Table.batch: gets and every kind of mutation, on distinct rows; results slot by slot. */
  private Op batch() {
    List<String> javas = new ArrayList<>();
    List<Filters.Builder<Row>> builders = new ArrayList<>();
    for (String row : rows(2 + r.nextInt(4))) {
      int k = r.nextInt(100);
      if (k < 30) {
        Reads.G g = reads.get(row);
        javas.add(g.java());
        builders.add(g::build);
      } else if (k < 80) {
        Writes.M m = writes.any(row, true);
        javas.add(m.java());
        builders.add(m::build);
      } else if (k < 90) {
        Conditions.RM rm = conditions.rowMutations(row, true);
        javas.add(rm.java());
        builders.add(rm::build);
      } else if (!allow.excludes("batch-cam")) {
        Conditions.Cam cam = conditions.cam(row, true);
        javas.add(cam.java());
        builders.add(cam::build);
      }
    }
    return Op.write("t.batch(List.of(" + String.join(", ", javas) + "), results)", Set.of(), (s, c) -> {
      List<Row> actions = new ArrayList<>();
      for (Filters.Builder<Row> b : builders) {
        actions.add(b.build());
      }
      Object[] results = new Object[actions.size()];
      String threw = "";
      try {
        s.table.batch(actions, results);
      } catch (Exception e) {
        threw = " threw " + Canon.error(e);
      }
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < results.length; i++) {
        sb.append(i > 0 ? " | " : "").append('[').append(i).append("] ").append(c.slot(results[i]));
      }
      return sb + threw;
    });
  }

  /**
   * An increment's or append's answer, and whether each cell it answered is
   * the column's newest stored version at the same timestamp (read back at
   * once): server-stamped timestamps compare as NOW, so this is what checks
   * that the answer carries the stored cell's exact timestamp.
   */
  private static String stored(Side s, Canon c, org.apache.hadoop.hbase.client.Result r,
      String row) throws java.io.IOException {
    StringBuilder sb = new StringBuilder(c.result(r)).append(" stored=");
    if (r == null || r.rawCells() == null) {
      return sb.append('-').toString();
    }
    for (org.apache.hadoop.hbase.Cell cell : r.rawCells()) {
      Get g = new Get(b(row)).addColumn(org.apache.hadoop.hbase.CellUtil.cloneFamily(cell),
          org.apache.hadoop.hbase.CellUtil.cloneQualifier(cell));
      org.apache.hadoop.hbase.client.Result now = s.table.get(g);
      sb.append(now.isEmpty() ? "absent"
          : now.rawCells()[0].getTimestamp() == cell.getTimestamp() ? "same" : "differs");
      sb.append(',');
    }
    return sb.toString();
  }

  private static String javaList(List<Writes.M> ms) {
    StringBuilder sb = new StringBuilder();
    for (Writes.M m : ms) {
      sb.append(sb.length() > 0 ? ", " : "").append(m.java());
    }
    return sb.toString();
  }

  private static String javaGets(List<Reads.G> gs) {
    StringBuilder sb = new StringBuilder();
    for (Reads.G g : gs) {
      sb.append(sb.length() > 0 ? ", " : "").append(g.java());
    }
    return sb.toString();
  }
}
