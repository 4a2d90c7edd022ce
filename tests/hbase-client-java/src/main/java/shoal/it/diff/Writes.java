// Random mutations: Puts (multi-column, cell or row timestamps), Deletes of
// every kind (one version — the newest or at a timestamp —, all versions,
// a family, a family version, the whole row; with and without timestamps),
// Increments of 8-byte counters (c0, c1) and Appends to text columns
// (q0..q3). Each is a spec built afresh per cluster and spelled as Java.
package shoal.it.diff;

import static shoal.it.diff.Text.b;
import static shoal.it.diff.Text.q;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.util.Bytes;

final class Writes {
  enum Kind { PUT, DELETE, INCREMENT, APPEND }

  enum DelKind { VERSION, COLUMNS, FAMILY, FAMILY_VERSION }

  /** One column of a mutation: a value (Put, Append), an amount (Increment) or a delete kind. */
  record Part(String fam, String qual, Long ts, byte[] value, long amount, DelKind del) {}

  /** A mutation of one row. */
  static final class M {
    final Kind kind;
    final String row;
    final Long rowTs;
    final List<Part> parts;
    final boolean returnResults;
    private final Times times;

    M(Kind kind, String row, Long rowTs, List<Part> parts, boolean returnResults, Times times) {
      this.kind = kind;
      this.row = row;
      this.rowTs = rowTs;
      this.parts = parts;
      this.returnResults = returnResults;
      this.times = times;
    }

    Mutation build() throws IOException {
      byte[] rk = b(row);
      switch (kind) {
        case PUT: {
          Put p = rowTs == null ? new Put(rk) : new Put(rk, rowTs);
          for (Part x : parts) {
            if (x.ts == null) {
              p.addColumn(b(x.fam), b(x.qual), x.value);
            } else {
              p.addColumn(b(x.fam), b(x.qual), x.ts, x.value);
            }
          }
          return p;
        }
        case DELETE: {
          Delete d = rowTs == null ? new Delete(rk) : new Delete(rk, rowTs);
          for (Part x : parts) {
            byte[] f = b(x.fam);
            switch (x.del) {
              case VERSION:
                d = x.ts == null ? d.addColumn(f, b(x.qual)) : d.addColumn(f, b(x.qual), x.ts);
                break;
              case COLUMNS:
                d = x.ts == null ? d.addColumns(f, b(x.qual)) : d.addColumns(f, b(x.qual), x.ts);
                break;
              case FAMILY:
                d = x.ts == null ? d.addFamily(f) : d.addFamily(f, x.ts);
                break;
              default:
                d = d.addFamilyVersion(f, x.ts);
                break;
            }
          }
          return d;
        }
        case INCREMENT: {
          Increment inc = new Increment(rk);
          for (Part x : parts) {
            inc.addColumn(b(x.fam), b(x.qual), x.amount);
          }
          if (!returnResults) {
            inc.setReturnResults(false);
          }
          return inc;
        }
        default: {
          Append app = new Append(rk);
          for (Part x : parts) {
            app.addColumn(b(x.fam), b(x.qual), x.value);
          }
          if (!returnResults) {
            app.setReturnResults(false);
          }
          return app;
        }
      }
    }

    String java() {
      String cls = kind == Kind.PUT ? "Put" : kind == Kind.DELETE ? "Delete"
          : kind == Kind.INCREMENT ? "Increment" : "Append";
      StringBuilder sb = new StringBuilder("new " + cls + "(" + q(row)
          + (rowTs == null ? "" : ", " + times.java(rowTs)) + ")");
      for (Part x : parts) {
        String ts = x.ts == null ? "" : ", " + times.java(x.ts);
        switch (kind) {
          case PUT:
            sb.append(".addColumn(").append(x.fam).append(", ").append(q(x.qual)).append(ts)
                .append(", ").append(value(x)).append(')');
            break;
          case INCREMENT:
            sb.append(".addColumn(").append(x.fam).append(", ").append(q(x.qual)).append(", ")
                .append(x.amount).append(')');
            break;
          case APPEND:
            sb.append(".addColumn(").append(x.fam).append(", ").append(q(x.qual)).append(", ")
                .append(q(x.value)).append(')');
            break;
          default:
            switch (x.del) {
              case VERSION:
                sb.append(".addColumn(").append(x.fam).append(", ").append(q(x.qual)).append(ts);
                break;
              case COLUMNS:
                sb.append(".addColumns(").append(x.fam).append(", ").append(q(x.qual)).append(ts);
                break;
              case FAMILY:
                sb.append(".addFamily(").append(x.fam).append(ts);
                break;
              default:
                sb.append(".addFamilyVersion(").append(x.fam).append(ts);
                break;
            }
            sb.append(')');
        }
      }
      if (!returnResults) {
        sb.append(".setReturnResults(false)");
      }
      return sb.toString();
    }

    private static String value(Part x) {
      return x.qual.startsWith("c") && x.value.length == 8 ? Text.lng(Bytes.toLong(x.value)) : q(x.value);
    }
  }

  private final Random r;
  private final Times times;
  private final Filters filters;
  private final Allow allow;

  Writes(Random r, Times times, Filters filters, Allow allow) {
    this.r = r;
    this.times = times;
    this.filters = filters;
    this.allow = allow;
  }

  private boolean chance(int percent) {
    return r.nextInt(100) < percent;
  }

  String row() {
    return String.format("r%02d", r.nextInt(20));
  }

  String family() {
    return chance(62) ? "a" : "b";
  }

  String textQualifier() {
    return "q" + r.nextInt(4);
  }

  String counterQualifier() {
    return "c" + r.nextInt(2);
  }

  /** An explicit timestamp, or null (the server's clock) about half the time. */
  Long ts() {
    if (chance(48)) {
      return null;
    }
    if (chance(6)) {
      return Long.MAX_VALUE; // LATEST_TIMESTAMP: the server's clock too
    }
    return times.explicit[r.nextInt(times.explicit.length)];
  }

  long explicitTs() {
    return times.explicit[r.nextInt(times.explicit.length)];
  }

  M put(String row) {
    return put(row, 1 + r.nextInt(chance(30) ? 5 : 2));
  }

  /** A Put of `n` cells at most (fewer when a pick repeats a cell). */
  M put(String row, int n) {
    Long rowTs = chance(15) ? explicitTs() : null;
    List<Part> parts = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      boolean counter = chance(20);
      String fam = family();
      String qual = counter ? counterQualifier() : textQualifier();
      Long ts = ts();
      String key = fam + ":" + qual + "@" + (ts == null ? rowTs : ts);
      if (!seen.add(key) && allow.excludes("duplicate-cell-in-mutation")) {
        continue;
      }
      byte[] v = counter ? Bytes.toBytes((long) (r.nextInt(9) - 2)) : b(filters.value());
      parts.add(new Part(fam, qual, ts, v, 0, null));
    }
    return new M(Kind.PUT, row, rowTs, parts, true, times);
  }

  M delete(String row) {
    Long rowTs = chance(20) ? explicitTs() : null;
    List<Part> parts = new ArrayList<>();
    if (!chance(12)) {
      int n = 1 + (chance(25) ? 1 : 0);
      for (int i = 0; i < n; i++) {
        String fam = family();
        String qual = chance(25) ? counterQualifier() : textQualifier();
        int k = r.nextInt(100);
        if (k < 35) {
          parts.add(new Part(fam, qual, ts(), null, 0, DelKind.VERSION));
        } else if (k < 65) {
          parts.add(new Part(fam, qual, ts(), null, 0, DelKind.COLUMNS));
        } else if (k < 85) {
          parts.add(new Part(fam, null, ts(), null, 0, DelKind.FAMILY));
        } else {
          parts.add(new Part(fam, null, explicitTs(), null, 0, DelKind.FAMILY_VERSION));
        }
      }
    }
    return new M(Kind.DELETE, row, rowTs, parts, true, times);
  }

  M increment(String row, boolean mayDropResults) {
    int n = 1 + (chance(30) ? 1 : 0);
    List<Part> parts = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      String fam = family();
      String qual = chance(7) ? textQualifier() : counterQualifier();
      if (!seen.add(fam + ":" + qual) && allow.excludes("increment-duplicate-column")) {
        continue;
      }
      parts.add(new Part(fam, qual, null, null, r.nextInt(8) - 2, null));
    }
    return new M(Kind.INCREMENT, row, null, parts, !(mayDropResults && chance(8)), times);
  }

  M append(String row, boolean mayDropResults) {
    int n = 1 + (chance(25) ? 1 : 0);
    List<Part> parts = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    String[] tails = {"x", "yz", "", "v"};
    for (int i = 0; i < n; i++) {
      String fam = family();
      String qual = textQualifier();
      if (!seen.add(fam + ":" + qual) && allow.excludes("duplicate-cell-in-mutation")) {
        continue;
      }
      parts.add(new Part(fam, qual, null, b(tails[r.nextInt(tails.length)]), 0, null));
    }
    return new M(Kind.APPEND, row, null, parts, !(mayDropResults && chance(8)), times);
  }

  /** Any single mutation of `row`: mostly puts and deletes. */
  M any(String row, boolean counters) {
    int k = r.nextInt(100);
    if (k < 50) {
      return put(row);
    }
    if (k < 80 || !counters) {
      return delete(row);
    }
    return k < 90 ? increment(row, false) : append(row, false);
  }
}
