// Random reads: Gets (columns or families, readVersions / readAllVersions,
// a time range or one timestamp, a filter, existence only, the per-family
// limit, offset and time range) and Scans (raw ones too) with
// every option the client has that Shoal serves (start and stop rows,
// inclusive or exclusive, reversed, columns, versions, time ranges, limit,
// batch, caching, max result size, filters). Each is a spec built afresh
// per cluster and spelled as Java; a scan's answer is every Result in order.
package shoal.it.diff;

import static shoal.it.diff.Text.b;
import static shoal.it.diff.Text.q;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;

final class Reads {
  /** Columns read: a family (qual null) or one column. */
  record Col(String fam, String qual) {}

  /**
   * What Gets and Scans share: columns, versions (0 default, -1 all), time range or timestamp,
   * filter, and the per-family options (setMaxResultsPerColumnFamily,
   * setRowOffsetPerColumnFamily: 0 unset; setColumnFamilyTimeRange).
   */
  static class Query {
    List<Col> cols = new ArrayList<>();
    int versions;
    long[] range;
    Long ts;
    Filters.F filter;
    int perFamilyLimit;
    int perFamilyOffset;
    String cfRangeFamily;
    long[] cfRange;

    void perFamily(org.apache.hadoop.hbase.client.Query q) {
      if (cfRange != null) {
        q.setColumnFamilyTimeRange(b(cfRangeFamily), cfRange[0], cfRange[1]);
      }
      if (q instanceof Get g) {
        if (perFamilyLimit > 0) {
          g.setMaxResultsPerColumnFamily(perFamilyLimit);
        }
        if (perFamilyOffset > 0) {
          g.setRowOffsetPerColumnFamily(perFamilyOffset);
        }
      } else if (q instanceof Scan s) {
        if (perFamilyLimit > 0) {
          s.setMaxResultsPerColumnFamily(perFamilyLimit);
        }
        if (perFamilyOffset > 0) {
          s.setRowOffsetPerColumnFamily(perFamilyOffset);
        }
      }
    }

    String javaPerFamily(Times times) {
      return (perFamilyLimit > 0 ? ".setMaxResultsPerColumnFamily(" + perFamilyLimit + ")" : "")
          + (perFamilyOffset > 0 ? ".setRowOffsetPerColumnFamily(" + perFamilyOffset + ")" : "")
          + (cfRange == null ? "" : ".setColumnFamilyTimeRange(" + cfRangeFamily + ", "
              + times.java(cfRange[0]) + ", " + times.java(cfRange[1]) + ")");
    }

    String javaQuery(Times times) {
      StringBuilder sb = new StringBuilder();
      for (Col c : cols) {
        sb.append(c.qual == null ? ".addFamily(" + c.fam + ")"
            : ".addColumn(" + c.fam + ", " + q(c.qual) + ")");
      }
      if (versions > 0) {
        sb.append(".readVersions(").append(versions).append(')');
      } else if (versions < 0) {
        sb.append(".readAllVersions()");
      }
      if (range != null) {
        sb.append(".setTimeRange(").append(times.java(range[0])).append(", ")
            .append(times.java(range[1])).append(')');
      }
      if (ts != null) {
        sb.append(".setTimestamp(").append(times.java(ts)).append(')');
      }
      if (filter != null) {
        sb.append(".setFilter(").append(filter.java()).append(')');
      }
      return sb.toString();
    }
  }

  static final class G extends Query {
    String row;
    boolean existenceOnly;
    private final Times times;

    G(Times times) {
      this.times = times;
    }

    Get build() throws IOException {
      Get g = new Get(b(row));
      for (Col c : cols) {
        if (c.qual == null) {
          g.addFamily(b(c.fam));
        } else {
          g.addColumn(b(c.fam), b(c.qual));
        }
      }
      if (versions > 0) {
        g.readVersions(versions);
      } else if (versions < 0) {
        g.readAllVersions();
      }
      if (range != null) {
        g.setTimeRange(range[0], range[1]);
      }
      if (ts != null) {
        g.setTimestamp(ts);
      }
      if (filter != null) {
        g.setFilter(filter.build());
      }
      if (existenceOnly) {
        g.setCheckExistenceOnly(true);
      }
      perFamily(g);
      return g;
    }

    String java() {
      return "new Get(" + q(row) + ")" + javaQuery(times)
          + (existenceOnly ? ".setCheckExistenceOnly(true)" : "") + javaPerFamily(times);
    }
  }

  static final class S extends Query {
    boolean reversed;
    String start;
    boolean startInclusive = true;
    String stop;
    boolean stopInclusive;
    int limit;
    int batch;
    boolean partial;
    boolean raw;
    int caching;
    long maxResultSize;
    private final Times times;

    S(Times times) {
      this.times = times;
    }

    Scan build() throws IOException {
      Scan s = new Scan();
      if (start != null) {
        s.withStartRow(b(start), startInclusive);
      }
      if (stop != null) {
        s.withStopRow(b(stop), stopInclusive);
      }
      if (reversed) {
        s.setReversed(true);
      }
      for (Col c : cols) {
        if (c.qual == null) {
          s.addFamily(b(c.fam));
        } else {
          s.addColumn(b(c.fam), b(c.qual));
        }
      }
      if (versions > 0) {
        s.readVersions(versions);
      } else if (versions < 0) {
        s.readAllVersions();
      }
      if (range != null) {
        s.setTimeRange(range[0], range[1]);
      }
      if (ts != null) {
        s.setTimestamp(ts);
      }
      if (limit > 0) {
        s.setLimit(limit);
      }
      if (batch > 0) {
        s.setBatch(batch);
      }
      if (caching > 0) {
        s.setCaching(caching);
      }
      if (maxResultSize > 0) {
        s.setMaxResultSize(maxResultSize);
      }
      if (partial) {
        s.setAllowPartialResults(true);
      }
      if (raw) {
        s.setRaw(true);
      }
      if (filter != null) {
        s.setFilter(filter.build());
      }
      perFamily(s);
      return s;
    }

    String java() {
      StringBuilder sb = new StringBuilder("new Scan()");
      if (start != null) {
        sb.append(".withStartRow(").append(q(start)).append(startInclusive ? "" : ", false").append(')');
      }
      if (stop != null) {
        sb.append(".withStopRow(").append(q(stop)).append(stopInclusive ? ", true" : "").append(')');
      }
      if (reversed) {
        sb.append(".setReversed(true)");
      }
      sb.append(javaQuery(times));
      if (limit > 0) {
        sb.append(".setLimit(").append(limit).append(')');
      }
      if (batch > 0) {
        sb.append(".setBatch(").append(batch).append(')');
      }
      if (caching > 0) {
        sb.append(".setCaching(").append(caching).append(')');
      }
      if (maxResultSize > 0) {
        sb.append(".setMaxResultSize(").append(maxResultSize).append(')');
      }
      if (partial) {
        sb.append(".setAllowPartialResults(true)");
      }
      if (raw) {
        sb.append(".setRaw(true)");
      }
      return sb.append(javaPerFamily(times)).toString();
    }

    /** What the allow-list's predicates may ask about this scan. */
    java.util.Set<String> tags() {
      java.util.Set<String> t = new java.util.TreeSet<>();
      t.add("scan");
      if (batch > 0) {
        t.add("batch");
      }
      if (limit > 0) {
        t.add("limit");
      }
      if (reversed) {
        t.add("reversed");
      }
      if (filter != null) {
        t.add("filter");
      }
      if (raw) {
        t.add("raw");
      }
      return t;
    }

    /** Every Result the scan gives (2,000 at most: more would be a runaway). */
    List<Result> run(Table t) throws IOException {
      List<Result> out = new ArrayList<>();
      try (ResultScanner rs = t.getScanner(build())) {
        for (Result r : rs) {
          out.add(r);
          if (out.size() >= 2000) {
            break;
          }
        }
      }
      return out;
    }
  }

  static final String[] BOUNDS = {"r00", "r02", "r03", "r05", "r06", "r07", "r08", "r10", "r12",
    "r13", "r14", "r15", "r17", "r19", "r07a", "r1", "r", "r20", "s", "q"};

  private final Random r;
  private final Times times;
  private final Filters filters;
  private final Writes writes;
  private final Allow allow;

  Reads(Random r, Times times, Filters filters, Writes writes, Allow allow) {
    this.r = r;
    this.times = times;
    this.filters = filters;
    this.writes = writes;
    this.allow = allow;
  }

  private boolean chance(int percent) {
    return r.nextInt(100) < percent;
  }

  private void query(Query x, boolean scan, boolean reversed) {
    if (chance(35)) {
      int n = 1 + r.nextInt(3);
      for (int i = 0; i < n; i++) {
        String fam = writes.family();
        if (chance(40)) {
          x.cols.add(new Col(fam, null));
        } else {
          x.cols.add(new Col(fam, chance(25) ? writes.counterQualifier() : writes.textQualifier()));
        }
      }
    }
    int v = r.nextInt(100);
    x.versions = v < 50 ? 0 : v < 85 ? 2 + r.nextInt(4) : -1;
    int t = r.nextInt(100);
    if (t < 18) {
      int i = r.nextInt(times.bounds.length - 1);
      int j = i + 1 + r.nextInt(times.bounds.length - 1 - i);
      x.range = new long[] {times.bounds[i], times.bounds[j]};
    } else if (t < 24) {
      x.ts = times.explicit[r.nextInt(times.explicit.length)];
    }
    if (chance(50) && !allow.excludes("filters")) {
      x.filter = filters.filter(new Filters.Ctx(scan, reversed, false, 0));
    }
    if (!allow.excludes("per-family") && chance(10)) {
      x.perFamilyLimit = chance(75) ? 1 + r.nextInt(3) : 0;
      x.perFamilyOffset = r.nextInt(3) == 0 ? 1 + r.nextInt(2) : 0;
    }
    if (!allow.excludes("per-family") && chance(8)) {
      int i = r.nextInt(times.bounds.length - 1);
      int j = i + 1 + r.nextInt(times.bounds.length - 1 - i);
      x.cfRangeFamily = writes.family();
      x.cfRange = new long[] {times.bounds[i], times.bounds[j]};
    }
  }

  G get(String row) {
    G g = new G(times);
    g.row = row;
    query(g, false, false);
    g.existenceOnly = chance(5);
    return g;
  }

  S scan() {
    S s = new S(times);
    s.reversed = chance(28);
    String lo = chance(55) ? BOUNDS[r.nextInt(BOUNDS.length)] : null;
    String hi = chance(55) ? BOUNDS[r.nextInt(BOUNDS.length)] : null;
    if (lo != null && hi != null && lo.compareTo(hi) > 0 && !chance(5)) {
      String x = lo;
      lo = hi;
      hi = x;
    }
    // A reversed scan starts at its high row.
    s.start = s.reversed ? hi : lo;
    s.stop = s.reversed ? lo : hi;
    s.startInclusive = !chance(25);
    s.stopInclusive = chance(30);
    query(s, true, s.reversed);
    if (chance(22)) {
      s.limit = 1 + r.nextInt(6);
    }
    if (chance(15)) {
      s.batch = 1 + r.nextInt(3);
    }
    if (s.reversed && s.limit > 0 && s.batch > 0 && allow.excludes("reversed-limit-with-batch")) {
      s.batch = 0;
    }
    if (chance(35)) {
      s.caching = 1 + r.nextInt(5);
    }
    if (chance(12)) {
      s.maxResultSize = 1 + r.nextInt(200);
    }
    s.partial = !allow.excludes("partial-results") && chance(15);
    s.raw = !allow.excludes("raw") && !allow.excludes("raw-scan-retention") && chance(10);
    if (!s.reversed && s.limit > 0 && s.batch > 0 && allow.excludes("limit-with-batch")) {
      s.batch = 0;
    }
    return s;
  }
}
