// Random checkAndMutate calls in all their forms: a condition (ifEquals,
// ifMatches with every CompareOperator, empty and non-empty operands,
// ifNotExists, ifMatches(Filter), now and then a time range) guarding a Put,
// a Delete, a RowMutations, an Increment or an Append; and RowMutations for
// mutateRow. Each is a spec built afresh per cluster and spelled as Java.
package shoal.it.diff;

import static shoal.it.diff.Text.b;
import static shoal.it.diff.Text.q;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.io.TimeRange;
import org.apache.hadoop.hbase.util.Bytes;

final class Conditions {
  /** Mutations of one row, applied atomically (mutateRow, or a checkAndMutate's action). */
  static final class RM {
    final String row;
    final List<Writes.M> ms;

    RM(String row, List<Writes.M> ms) {
      this.row = row;
      this.ms = ms;
    }

    RowMutations build() throws IOException {
      RowMutations rm = new RowMutations(b(row));
      for (Writes.M m : ms) {
        rm.add(m.build());
      }
      return rm;
    }

    String java() {
      StringBuilder sb = new StringBuilder("new RowMutations(" + q(row) + ")");
      for (Writes.M m : ms) {
        sb.append(".add(").append(m.java()).append(')');
      }
      return sb.toString();
    }
  }

  /** A checkAndMutate: a condition on `row` and one action (a mutation or RowMutations). */
  static final class Cam {
    String row;
    String fam;
    String qual;
    CompareOperator op; // null: ifNotExists
    byte[] operand;
    boolean equalsForm;
    Filters.F filter; // ifMatches(Filter) instead of a column
    long[] range;
    Writes.M action;
    RM rowMutations;
    Times times;

    CheckAndMutate build() throws IOException {
      CheckAndMutate.Builder cb = CheckAndMutate.newBuilder(b(row));
      if (filter != null) {
        cb.ifMatches(filter.build());
      } else if (op == null) {
        cb.ifNotExists(b(fam), b(qual));
      } else if (equalsForm) {
        cb.ifEquals(b(fam), b(qual), operand);
      } else {
        cb.ifMatches(b(fam), b(qual), op, operand);
      }
      if (range != null) {
        cb.timeRange(TimeRange.between(range[0], range[1]));
      }
      if (rowMutations != null) {
        return cb.build(rowMutations.build());
      }
      Mutation m = action.build();
      if (m instanceof Put) {
        return cb.build((Put) m);
      }
      if (m instanceof Delete) {
        return cb.build((Delete) m);
      }
      if (m instanceof Increment) {
        return cb.build((Increment) m);
      }
      return cb.build((Append) m);
    }

    String java() {
      StringBuilder sb = new StringBuilder("CheckAndMutate.newBuilder(" + q(row) + ")");
      String operandJava = operand == null ? "" : qual.startsWith("c") && operand.length == 8
          ? Text.lng(Bytes.toLong(operand)) : q(operand);
      if (filter != null) {
        sb.append(".ifMatches(").append(filter.java()).append(')');
      } else if (op == null) {
        sb.append(".ifNotExists(").append(fam).append(", ").append(q(qual)).append(')');
      } else if (equalsForm) {
        sb.append(".ifEquals(").append(fam).append(", ").append(q(qual)).append(", ")
            .append(operandJava).append(')');
      } else {
        sb.append(".ifMatches(").append(fam).append(", ").append(q(qual)).append(", ").append(op)
            .append(", ").append(operandJava).append(')');
      }
      if (range != null) {
        sb.append(".timeRange(TimeRange.between(").append(times.java(range[0])).append(", ")
            .append(times.java(range[1])).append("))");
      }
      sb.append(".build(").append(rowMutations != null ? rowMutations.java() : action.java())
          .append(')');
      return sb.toString();
    }

    boolean filterOrRange() {
      return filter != null || range != null;
    }
  }

  private final Random r;
  private final Times times;
  private final Filters filters;
  private final Writes writes;
  private final Allow allow;

  Conditions(Random r, Times times, Filters filters, Writes writes, Allow allow) {
    this.r = r;
    this.times = times;
    this.filters = filters;
    this.writes = writes;
    this.allow = allow;
  }

  private boolean chance(int percent) {
    return r.nextInt(100) < percent;
  }

  /** 1 to 3 mutations of `row` (increments and appends too, when `counters`). */
  RM rowMutations(String row, boolean counters) {
    int n = 1 + r.nextInt(3);
    List<Writes.M> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ms.add(writes.any(row, counters && !allow.excludes("row-mutations-counters")));
    }
    return new RM(row, ms);
  }

  /** A checkAndMutate of `row`; `plain`: without a filter condition or time range. */
  Cam cam(String row, boolean plain) {
    Cam c = new Cam();
    c.times = times;
    c.row = row;
    int k = r.nextInt(100);
    if (k < 12 && !plain && !allow.excludes("cam-filter")) {
      c.filter = filters.filter(new Filters.Ctx(false, false, false, 0));
    } else {
      c.fam = writes.family();
      boolean counter = chance(20);
      c.qual = counter ? writes.counterQualifier() : writes.textQualifier();
      if (k < 24) {
        c.op = null;
      } else {
        c.op = filters.op();
        c.equalsForm = c.op == CompareOperator.EQUAL && r.nextBoolean();
        if (counter && !chance(10)) {
          c.operand = Bytes.toBytes((long) (r.nextInt(9) - 2));
        } else {
          c.operand = chance(12) ? new byte[0] : b(filters.value());
        }
      }
    }
    if (chance(10) && !plain && !allow.excludes("cam-filter")) {
      int i = r.nextInt(times.bounds.length - 1);
      int j = i + 1 + r.nextInt(times.bounds.length - 1 - i);
      c.range = new long[] {times.bounds[i], times.bounds[j]};
    }
    int a = r.nextInt(allow.excludes("cam-counters") ? 78 : 100);
    if (a < 35) {
      c.action = writes.put(row);
    } else if (a < 58) {
      c.action = writes.delete(row);
    } else if (a < 78) {
      c.rowMutations = rowMutations(row, true);
    } else if (a < 89) {
      c.action = writes.increment(row, false);
    } else {
      c.action = writes.append(row, false);
    }
    return c;
  }
}
