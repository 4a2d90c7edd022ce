// Random filters and comparators for Gets, Scans and checkAndMutate
// conditions: every filter and comparator docs/hbase-client.md lists, alone,
// wrapped (SkipFilter, WhileMatchFilter) or nested in FilterLists
// (MUST_PASS_ALL / MUST_PASS_ONE, three levels at most), each built afresh
// for each cluster and spelled as Java. The allow-list's filter exclusions
// are applied here (page-filter-in-or, reversed-or-column-range,
// reversed-or-timestamps-hint, reversed-scvf-filter-if-missing, column-count-in-scan,
// multiple-column-prefix-overlap, random-row-chance, unsupported-filters,
// long-comparator-on-non-longs).
package shoal.it.diff;

import static shoal.it.diff.Text.b;
import static shoal.it.diff.Text.q;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.BinaryPrefixComparator;
import org.apache.hadoop.hbase.filter.ByteArrayComparable;
import org.apache.hadoop.hbase.filter.ColumnCountGetFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.filter.FamilyFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.LongComparator;
import org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.NullComparator;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RandomRowFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueExcludeFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SkipFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.TimestampsFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.WhileMatchFilter;

final class Filters {
  /** A filter: built afresh per cluster, spelled as Java. */
  interface F {
    Filter build() throws IOException;

    String java();
  }

  /** A comparator: built afresh, spelled as Java. */
  interface C {
    ByteArrayComparable build();

    String java();
  }

  interface Builder<T> {
    T build() throws IOException;
  }

  static F f(String java, Builder<Filter> b) {
    return new F() {
      public Filter build() throws IOException {
        return b.build();
      }

      public String java() {
        return java;
      }
    };
  }

  static C c(String java, java.util.function.Supplier<ByteArrayComparable> b) {
    return new C() {
      public ByteArrayComparable build() {
        return b.get();
      }

      public String java() {
        return java;
      }
    };
  }

  /**
   * Where a filter goes: a scan's (else a Get's or a condition's), a reversed
   * scan's, inside an OR list (at any depth), its list depth.
   */
  record Ctx(boolean scan, boolean reversed, boolean inOr, int depth) {
    Ctx down(boolean or) {
      return new Ctx(scan, reversed, inOr || or, depth + 1);
    }
  }

  static final String[] ROW_OPERANDS = {"r00", "r03", "r06", "r07", "r09", "r12", "r14", "r15",
    "r19", "r0", "r1", "r10x", ""};
  static final String[] FAMILY_OPERANDS = {"a", "b", "a", "b", "c", ""};
  static final String[] QUALIFIER_OPERANDS = {"q0", "q1", "q2", "q3", "c0", "c1", "q", "c", ""};
  static final String[] PREFIXES = {"r0", "r1", "r", "r07", "r1", "r0", "r05", "r13", "r14", "s", ""};
  static final String[] COLUMN_PREFIXES = {"q", "c", "q1", "q2", "c0", "x", ""};
  static final String[] RANGE_BOUNDS = {"c0", "c1", "q0", "q1", "q2", "q3", "q", "d"};

  private final Random r;
  private final Times times;
  private final Allow allow;

  Filters(Random r, Times times, Allow allow) {
    this.r = r;
    this.times = times;
    this.allow = allow;
  }

  private <T> T pick(T[] xs) {
    return xs[r.nextInt(xs.length)];
  }

  private boolean chance(int percent) {
    return r.nextInt(100) < percent;
  }

  /** A value a cell may hold (Gen writes these). */
  String value() {
    int k = r.nextInt(100);
    if (k < 6) {
      return "";
    }
    if (k < 12) {
      return String.format("v%02dx", r.nextInt(20));
    }
    return String.format("v%02d", r.nextInt(20));
  }

  CompareOperator op() {
    if (chance(3) && !allow.excludes("no-op")) {
      return CompareOperator.NO_OP;
    }
    CompareOperator[] ops = {CompareOperator.LESS, CompareOperator.LESS_OR_EQUAL,
      CompareOperator.EQUAL, CompareOperator.NOT_EQUAL, CompareOperator.GREATER_OR_EQUAL,
      CompareOperator.GREATER};
    CompareOperator o = pick(ops);
    return chance(25) ? CompareOperator.EQUAL : o;
  }

  /** A comparator against operands like `pool`'s. */
  C comparator(String[] pool) {
    String s = pick(pool);
    int k = r.nextInt(100);
    if (k < 42) {
      return c("new BinaryComparator(" + q(s) + ")", () -> new BinaryComparator(b(s)));
    }
    if (k < 57) {
      String p = s.substring(0, r.nextInt(s.length() + 1));
      return c("new BinaryPrefixComparator(" + q(p) + ")", () -> new BinaryPrefixComparator(b(p)));
    }
    if (k < 71) {
      int from = r.nextInt(s.length() + 1);
      String sub = s.substring(from, from + r.nextInt(s.length() - from + 1));
      String given = chance(40) ? sub.toUpperCase() : sub;
      return c("new SubstringComparator(" + q(given) + ")", () -> new SubstringComparator(given));
    }
    if (k < 92) {
      return regex(s);
    }
    return c("new NullComparator()", NullComparator::new);
  }

  private C regex(String s) {
    String pattern;
    switch (r.nextInt(7)) {
      case 0:
        pattern = s;
        break;
      case 1:
        pattern = "^" + s.substring(0, Math.min(2, s.length()));
        break;
      case 2:
        pattern = s.isEmpty() ? "." : s.charAt(0) + ".";
        break;
      case 3:
        pattern = (s.isEmpty() ? "" : s.substring(s.length() - 1)) + "$";
        break;
      case 4:
        pattern = "^" + (s.isEmpty() ? "" : s.substring(0, 1)) + "[0-4]";
        break;
      case 5:
        pattern = ".*(0|5).*";
        break;
      default:
        pattern = "";
        break;
    }
    int flags = 0;
    List<String> names = new ArrayList<>();
    if (chance(35)) {
      pattern = pattern.toUpperCase();
      flags |= Pattern.CASE_INSENSITIVE;
      names.add("CASE_INSENSITIVE");
    }
    if (chance(15)) {
      flags |= Pattern.DOTALL;
      names.add("DOTALL");
    }
    if (chance(15)) {
      flags |= Pattern.MULTILINE;
      names.add("MULTILINE");
    }
    String p = pattern;
    int fl = flags;
    String java = "new RegexStringComparator(" + q(p)
        + (names.isEmpty() ? "" : ", " + String.join(" | ", names)) + ")";
    return c(java, () -> fl == 0 ? new RegexStringComparator(p) : new RegexStringComparator(p, fl));
  }

  /** Any filter for the context: a list or a wrapper now and then, else a single filter. */
  F filter(Ctx ctx) {
    int k = r.nextInt(100);
    if (ctx.depth() < 3) {
      int lists = ctx.depth() == 0 ? 28 : 14;
      if (k < lists) {
        return list(ctx);
      }
      if (k < lists + 4) {
        F inner = filter(ctx.down(false));
        return f("new WhileMatchFilter(" + inner.java() + ")",
            () -> new WhileMatchFilter(inner.build()));
      }
      if (k < lists + 8) {
        F inner = filter(ctx.down(false));
        return f("new SkipFilter(" + inner.java() + ")", () -> new SkipFilter(inner.build()));
      }
    }
    return leaf(ctx);
  }

  private F list(Ctx ctx) {
    boolean or = r.nextBoolean();
    FilterList.Operator operator = or ? FilterList.Operator.MUST_PASS_ONE : FilterList.Operator.MUST_PASS_ALL;
    int n = chance(4) ? 0 : 1 + r.nextInt(3);
    List<F> members = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      members.add(filter(ctx.down(or)));
    }
    StringBuilder java = new StringBuilder("new FilterList(" + operator);
    for (F m : members) {
      java.append(", ").append(m.java());
    }
    java.append(')');
    return f(java.toString(), () -> {
      List<Filter> built = new ArrayList<>();
      for (F m : members) {
        built.add(m.build());
      }
      return new FilterList(operator, built);
    });
  }

  private F leaf(Ctx ctx) {
    while (true) {
      F f = leafOrNull(ctx);
      if (f != null) {
        return f;
      }
    }
  }

  /** One single filter, or null when the pick is excluded here (the caller picks again). */
  private F leafOrNull(Ctx ctx) {
    if (!allow.excludes("unsupported-filters") && chance(5)) {
      return unsupported();
    }
    switch (r.nextInt(21)) {
      case 0:
      case 1: {
        String p = pick(PREFIXES);
        return f("new PrefixFilter(" + q(p) + ")", () -> new PrefixFilter(b(p)));
      }
      case 2: {
        CompareOperator o = op();
        C cmp = comparator(ROW_OPERANDS);
        return f("new RowFilter(" + o + ", " + cmp.java() + ")", () -> new RowFilter(o, cmp.build()));
      }
      case 3: {
        CompareOperator o = op();
        C cmp = comparator(FAMILY_OPERANDS);
        return f("new FamilyFilter(" + o + ", " + cmp.java() + ")",
            () -> new FamilyFilter(o, cmp.build()));
      }
      case 4: {
        CompareOperator o = op();
        C cmp = comparator(QUALIFIER_OPERANDS);
        return f("new QualifierFilter(" + o + ", " + cmp.java() + ")",
            () -> new QualifierFilter(o, cmp.build()));
      }
      case 5:
      case 6: {
        CompareOperator o = op();
        C cmp = comparator(valuePool());
        if (!allow.excludes("long-comparator-on-non-longs") && chance(15)) {
          long n = r.nextInt(9) - 2;
          cmp = c("new LongComparator(" + n + ")", () -> new LongComparator(n));
        }
        C vc = cmp;
        return f("new ValueFilter(" + o + ", " + vc.java() + ")",
            () -> new ValueFilter(o, vc.build()));
      }
      case 7: {
        String p = pick(COLUMN_PREFIXES);
        return f("new ColumnPrefixFilter(" + q(p) + ")", () -> new ColumnPrefixFilter(b(p)));
      }
      case 8: {
        int n = 1 + r.nextInt(3);
        String[] ps = new String[n];
        for (int i = 0; i < n; i++) {
          ps[i] = pick(COLUMN_PREFIXES);
          if (allow.excludes("multiple-column-prefix-overlap")) {
            for (int j = 0; j < i; j++) {
              if (ps[i].startsWith(ps[j]) || ps[j].startsWith(ps[i])) {
                ps[i] = ps[j]; // a repeat is harmless; an overlap is not
              }
            }
          }
        }
        StringBuilder java = new StringBuilder("new MultipleColumnPrefixFilter(");
        for (int i = 0; i < n; i++) {
          java.append(i > 0 ? ", " : "").append(q(ps[i]));
        }
        return f(java.append(')').toString(), () -> {
          byte[][] bs = new byte[n][];
          for (int i = 0; i < n; i++) {
            bs[i] = b(ps[i]);
          }
          return new MultipleColumnPrefixFilter(bs);
        });
      }
      case 9: {
        if (ctx.reversed() && ctx.inOr() && allow.excludes("reversed-or-column-range")) {
          return null;
        }
        String min = chance(20) ? null : pick(RANGE_BOUNDS);
        String max = chance(20) ? null : pick(RANGE_BOUNDS);
        boolean minIn = r.nextBoolean();
        boolean maxIn = r.nextBoolean();
        return f("new ColumnRangeFilter(" + (min == null ? "null" : q(min)) + ", " + minIn + ", "
                + (max == null ? "null" : q(max)) + ", " + maxIn + ")",
            () -> new ColumnRangeFilter(min == null ? null : b(min), minIn,
                max == null ? null : b(max), maxIn));
      }
      case 10: {
        int n = 1 + r.nextInt(4);
        if (ctx.scan() && allow.excludes("column-count-in-scan")) {
          return null;
        }
        return f("new ColumnCountGetFilter(" + n + ")", () -> new ColumnCountGetFilter(n));
      }
      case 11:
      case 12:
        return singleColumnValue(ctx, false);
      case 13:
        return singleColumnValue(ctx, true);
      case 14: {
        int n = 1 + r.nextInt(3);
        List<Long> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          ts.add(times.explicit[r.nextInt(times.explicit.length)]);
        }
        boolean hint = chance(20)
            && !(ctx.reversed() && ctx.inOr() && allow.excludes("reversed-or-timestamps-hint"));
        StringBuilder java = new StringBuilder("new TimestampsFilter(List.of(");
        for (int i = 0; i < n; i++) {
          java.append(i > 0 ? ", " : "").append(times.java(ts.get(i)));
        }
        java.append(')').append(hint ? ", true" : "").append(')');
        return f(java.toString(), () -> hint ? new TimestampsFilter(ts, true) : new TimestampsFilter(ts));
      }
      case 15: {
        boolean len = r.nextBoolean();
        return f("new KeyOnlyFilter(" + (len ? "true" : "") + ")",
            () -> len ? new KeyOnlyFilter(true) : new KeyOnlyFilter());
      }
      case 16:
        return f("new FirstKeyOnlyFilter()", FirstKeyOnlyFilter::new);
      case 17: {
        if (ctx.inOr() && allow.excludes("page-filter-in-or")) {
          return null;
        }
        int n = 1 + r.nextInt(5);
        return f("new PageFilter(" + n + ")", () -> new PageFilter(n));
      }
      case 18: {
        String row = pick(ROW_OPERANDS);
        return f("new InclusiveStopFilter(" + q(row) + ")", () -> new InclusiveStopFilter(b(row)));
      }
      case 19: {
        float chance = allow.excludes("random-row-chance") ? (r.nextBoolean() ? 0f : 1f)
            : r.nextFloat();
        return f("new RandomRowFilter(" + chance + "f)", () -> new RandomRowFilter(chance));
      }
      default:
        return singleColumnValue(ctx, false);
    }
  }

  /** A filter Shoal does not parse (only with --include unsupported-filters). */
  private F unsupported() {
    String q = "q" + r.nextInt(4);
    switch (r.nextInt(4)) {
      case 0: {
        int limit = 1 + r.nextInt(3);
        int offset = r.nextInt(3);
        return f("new ColumnPaginationFilter(" + limit + ", " + offset + ")",
            () -> new org.apache.hadoop.hbase.filter.ColumnPaginationFilter(limit, offset));
      }
      case 1: {
        String v = value();
        return f("new ColumnValueFilter(a, " + q(q) + ", EQUAL, " + q(v) + ")",
            () -> new org.apache.hadoop.hbase.filter.ColumnValueFilter(b("a"), b(q),
                CompareOperator.EQUAL, b(v)));
      }
      case 2:
        return f("new DependentColumnFilter(a, " + q(q) + ")",
            () -> new org.apache.hadoop.hbase.filter.DependentColumnFilter(b("a"), b(q)));
      default: {
        String lo = pick(ROW_OPERANDS);
        String hi = pick(ROW_OPERANDS);
        return f("new MultiRowRangeFilter(List.of(new RowRange(" + q(lo) + ", true, " + q(hi)
                + ", false)))",
            () -> new org.apache.hadoop.hbase.filter.MultiRowRangeFilter(java.util.List.of(
                new org.apache.hadoop.hbase.filter.MultiRowRangeFilter.RowRange(lo, true, hi, false))));
      }
    }
  }

  private String[] valuePool() {
    String[] pool = new String[8];
    for (int i = 0; i < pool.length; i++) {
      pool[i] = value();
    }
    return pool;
  }

  /** A SingleColumnValue(Exclude)Filter: on a text column, or on a counter with a LongComparator. */
  private F singleColumnValue(Ctx ctx, boolean exclude) {
    String fam = r.nextBoolean() ? "a" : "b";
    boolean counter = chance(25);
    String qual = counter ? "c" + r.nextInt(2) : "q" + r.nextInt(4);
    CompareOperator o = op();
    C cmp;
    if (counter && chance(70)) {
      long n = r.nextInt(9) - 2;
      cmp = c("new LongComparator(" + n + ")", () -> new LongComparator(n));
    } else if (counter) {
      long n = r.nextInt(9) - 2;
      cmp = c("new BinaryComparator(" + Text.lng(n) + ")",
          () -> new BinaryComparator(org.apache.hadoop.hbase.util.Bytes.toBytes(n)));
    } else {
      cmp = comparator(valuePool());
    }
    boolean ifMissing = chance(40)
        && !(ctx.reversed() && allow.excludes("reversed-scvf-filter-if-missing"));
    boolean latestOnly = !chance(30);
    String cls = exclude ? "SingleColumnValueExcludeFilter" : "SingleColumnValueFilter";
    String java = "new " + cls + "(" + fam + ", " + q(qual) + ", " + o + ", " + cmp.java() + ")"
        + (ifMissing ? ".setFilterIfMissing(true)" : "")
        + (latestOnly ? "" : ".setLatestVersionOnly(false)");
    return f(java, () -> {
      SingleColumnValueFilter s = exclude
          ? new SingleColumnValueExcludeFilter(b(fam), b(qual), o, cmp.build())
          : new SingleColumnValueFilter(b(fam), b(qual), o, cmp.build());
      s.setFilterIfMissing(ifMissing);
      s.setLatestVersionOnly(latestOnly);
      return s;
    });
  }
}
