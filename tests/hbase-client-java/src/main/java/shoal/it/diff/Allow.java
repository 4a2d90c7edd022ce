// The allow-list: every known, chosen difference between the two clusters,
// by name, with its reason and how it is handled. EXCLUDED: the generator
// never produces it (Gen asks `excludes(name)`; --include NAME lifts one, to
// look at it). REFUSED: Shoal (B, asked first) refuses the operation by
// name; A is then not asked, so both stay alike. DIFF: a read-only answer
// that may differ as stated. Besides, --exclude FEATURE turns off one of the
// generator's features (Gen.FEATURES) for a run, and says so.
// KNOWN: divergences seen against HBase 2.6.1 where Shoal is wrong and is to
// be fixed: not allowed, only named (a divergence says which class it is);
// --allow NAME (or --allow known, all of them; --allow -NAME then keeps one
// out) allows one for a run, to look past it.
package shoal.it.diff;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

public final class Allow {
  enum Kind { EXCLUDED, REFUSED, DIFF, KNOWN }

  /** Whether a divergence (or, for REFUSED, B's answer alone: a is null) is this entry's. */
  interface Pred {
    boolean test(Op op, Op.Answer a, Op.Answer b);
  }

  /** `sameState`: the two clusters still hold the same data after such a divergence. */
  record Entry(String name, Kind kind, String reason, Pred pred, boolean sameState) {}

  private static Entry excluded(String name, String reason) {
    return new Entry(name, Kind.EXCLUDED, reason, null, true);
  }

  static final List<Entry> ENTRIES = List.of(
      // HBase's erratic behaviours (docs/hbase-client.md): Shoal keeps its saner answer.
      excluded("reversed-scvf-filter-if-missing",
          "HBase throws on a reversed scan whose SingleColumnValueFilter(filterIfMissing) leaves other"
              + " families to load on demand (its joined heap cannot seek backwards)"),
      excluded("reversed-limit-with-batch",
          "HBase ignores setLimit on a reversed scan that also has setBatch"),
      excluded("limit-with-batch",
          "HBase counts a forward scan's setLimit against setBatch's chunks erratically when caching"
              + " or max result size cut the calls (limit 2, batch 1, caching 2: the second row ends"
              + " after 2 cells; limit 3, batch 2, max result size 5: no limit at all)"),
      excluded("reversed-or-column-range",
          "HBase drops cells from OR(ColumnRangeFilter, ...) on reversed scans"),
      excluded("reversed-or-timestamps-hint",
          "HBase drops cells from OR(TimestampsFilter(..., canHint = true)) on reversed scans (its"
              + " OR list seeks past them by the hint), as with ColumnRangeFilter"),
      excluded("column-count-in-scan",
          "ColumnCountGetFilter in scans: its own javadoc calls it unsuitable as a Scan filter (its"
              + " count, once over, makes filterAllRemaining true; HBase then answers odd cells of the"
              + " next rows): Gets only"),
      excluded("page-filter-in-or",
          "HBase short-circuits a PageFilter inside a MUST_PASS_ONE list"),
      excluded("increment-duplicate-column",
          "HBase answers two cells to an Increment naming one column twice"),
      excluded("multiple-column-prefix-overlap",
          "HBase's MultipleColumnPrefixFilter checks a qualifier against the largest prefix sorting at"
              + " or before it only: with prefixes q and q2, q3 matches nothing"),
      // Where HBase's own answer is not determined.
      excluded("batch-same-row",
          "HBase leaves the order of one batch's actions undefined: a batch's actions name distinct rows"),
      excluded("duplicate-cell-in-mutation",
          "one mutation naming the same column and timestamp twice: which HBase keeps is its"
              + " memstore's business"),
      excluded("random-row-chance",
          "RandomRowFilter only with chance 0 or 1 (anything between is random on each side)"),
      excluded("same-millisecond-writes",
          "writes stamped by the server in one millisecond are one version: the driver waits for"
              + " the clock to move between operations"),
      excluded("hbase-auto-compaction",
          "HBase compacts on its own after 3 flushes, when it likes, trimming versions: the tables"
              + " set hbase.hstore.compaction.min=1000 (Shoal ignores it)"),
      excluded("long-comparator-on-non-longs",
          "LongComparator only against 8-byte values (HBase's filter throws otherwise)"),
      // Differences Shoal chose and documents (docs/hbase-client.md).
      excluded("unsupported-filters",
          "filters Shoal does not parse (ColumnPaginationFilter, FuzzyRowFilter, MultiRowRangeFilter,"
              + " DependentColumnFilter, ColumnValueFilter, ...) are refused by name"),
      excluded("raw-scan-retention",
          "raw scans show what flushes and compactions kept, and Shoal keeps some delete markers"
              + " HBase has dropped (HBase skips a memstore snapshot or file whose cells are all past"
              + " the TTL, so an expired marker flushed alone vanishes; an older family marker under"
              + " a newer one); raw scans also hand markers (empty values) to filters, which HBase's"
              + " LongComparator refuses: setRaw only with --include raw-scan-retention"),
      excluded("partial-results",
          "setAllowPartialResults: where HBase cuts a row depends on its cell sizes; Shoal cuts only"
              + " by setBatch"),
      new Entry("explicit-column-expired-version", Kind.DIFF,
          "HBase erratic: a read naming a column (addColumn) of a family with MIN_VERSIONS and a TTL"
              + " returns one TTL-expired version beyond MIN_VERSIONS (its ExplicitColumnTracker"
              + " includes the cell that ends the column); naming the family does not",
          (op, a, b) -> op.java.contains("addColumn(b, ") && extraExpired(a, b), true));

  /** A has every cell B has, and more, all of them in family b with an ancient (TTL-expired) stamp. */
  private static boolean extraExpired(Op.Answer a, Op.Answer b) {
    java.util.List<String> rest = KnownBugs.cells(a.canon());
    for (String c : KnownBugs.cells(b.canon())) {
      if (!rest.remove(c)) {
        return false;
      }
    }
    return !rest.isEmpty() && rest.stream().allMatch(c -> c.matches("[^/]+/b:[^@]+@[0-9]{1,3}[=:].*"));
  }

  /** Divergences seen against HBase 2.6.1, Shoal's to fix: named, not allowed (KnownBugs). */
  static final List<Entry> KNOWN = KnownBugs.ENTRIES;

  private final Set<String> included;
  private final Set<String> featuresOff;
  private final Set<String> knownAllowed;

  /** EXCLUDED entries the driver itself enforces, outside the generator: not liftable. */
  private static final Set<String> FIXED = Set.of("same-millisecond-writes", "hbase-auto-compaction");

  public Allow(Set<String> included, Set<String> featuresOff, Set<String> knownAllowed) {
    for (String n : knownAllowed) {
      String name = n.startsWith("-") ? n.substring(1) : n;
      if (!n.equals("known") && KNOWN.stream().noneMatch(e -> e.name.equals(name))) {
        throw new IllegalArgumentException("--allow " + n + ": not a KNOWN divergence class");
      }
    }
    this.knownAllowed = new TreeSet<>(knownAllowed);
    for (String n : included) {
      if (FIXED.contains(n)
          || ENTRIES.stream().noneMatch(e -> e.name.equals(n) && e.kind == Kind.EXCLUDED)) {
        throw new IllegalArgumentException("--include " + n
            + ": not an EXCLUDED allow-list entry the generator can lift");
      }
    }
    for (String n : featuresOff) {
      if (!Gen.FEATURES.containsKey(n)) {
        throw new IllegalArgumentException("--exclude " + n + ": not one of " + Gen.FEATURES.keySet());
      }
    }
    this.included = new TreeSet<>(included);
    this.featuresOff = new TreeSet<>(featuresOff);
  }

  /** True when the generator must not produce `name` (an allow-list entry or a feature turned off). */
  boolean excludes(String name) {
    if (Gen.FEATURES.containsKey(name)) {
      return featuresOff.contains(name);
    }
    for (Entry e : ENTRIES) {
      if (e.name.equals(name)) {
        return !included.contains(name);
      }
    }
    throw new IllegalStateException("no allow-list entry or feature named " + name);
  }

  /** The REFUSED entry B's answer matches, or null. */
  Entry refusal(Op op, Op.Answer b) {
    for (Entry e : ENTRIES) {
      if (e.kind == Kind.REFUSED && e.pred.test(op, null, b)) {
        return e;
      }
    }
    return null;
  }

  /** The DIFF entry a divergence matches, or null. */
  Entry difference(Op op, Op.Answer a, Op.Answer b) {
    for (Entry e : ENTRIES) {
      if (e.kind == Kind.DIFF && e.pred.test(op, a, b)) {
        return e;
      }
    }
    return null;
  }

  /** The KNOWN class a divergence belongs to, or null. */
  Entry known(Op op, Op.Answer a, Op.Answer b) {
    for (Entry e : KNOWN) {
      try {
        if (e.pred.test(op, a, b)) {
          return e;
        }
      } catch (RuntimeException ex) {
        // a predicate that does not apply to this answer
      }
    }
    return null;
  }

  /** Whether --allow lets this KNOWN class pass in this run (--allow known: all but -NAME ones). */
  boolean knownAllowed(Entry e) {
    if (knownAllowed.contains("-" + e.name)) {
      return false;
    }
    return knownAllowed.contains("known") || knownAllowed.contains(e.name);
  }

  public void print(PrintStream out) {
    out.println("allow-list (" + ENTRIES.size() + " entries):");
    for (Entry e : ENTRIES) {
      String state = e.kind == Kind.EXCLUDED && included.contains(e.name) ? " [lifted by --include]" : "";
      out.printf("  %-32s %-8s %s%s%n", e.name, e.kind, e.reason, state);
    }
    for (String f : featuresOff) {
      out.printf("  %-32s %-8s turned off by --exclude: %s%n", f, "FEATURE", Gen.FEATURES.get(f));
    }
    out.println("known divergences (Shoal's to fix; not allowed unless --allow):");
    for (Entry e : KNOWN) {
      out.printf("  %-32s %-8s %s%n", e.name, knownAllowed(e) ? "ALLOWED" : "", e.reason);
    }
  }
}
