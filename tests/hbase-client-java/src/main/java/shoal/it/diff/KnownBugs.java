// The divergence classes seen against HBase 2.6.1 where Shoal answers
// differently and is to change (issue 43): each named, with what HBase does,
// and a predicate recognizing it, so a divergence is reported by class and
// a long run can look past the classes already known (--allow NAME, or
// --allow known). None of them is allowed by default. `sameState`: after
// such a divergence both clusters still hold the same data (the seed goes
// on when allowed); otherwise an allowed one ends the seed.
package shoal.it.diff;

import java.util.List;

final class KnownBugs {
  private KnownBugs() {}

  private static Allow.Entry known(String name, String reason, boolean sameState, Allow.Pred pred) {
    return new Allow.Entry(name, Allow.Kind.KNOWN, reason, pred, sameState);
  }

  private static boolean detail(Op.Answer x, String part) {
    return x.detail() != null && x.detail().contains(part);
  }

  /** The operation's Java spelling matches `regex` somewhere. */
  private static boolean spelled(Op op, String regex) {
    return java.util.regex.Pattern.compile(regex).matcher(op.java).find();
  }

  /** The cells of a canonical answer, as row/cell tokens (a multiset as a sorted list). */
  static List<String> cells(String canon) {
    List<String> out = new java.util.ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("([^ |\\[]+)\\[([^\\]]*)\\]").matcher(canon);
    while (m.find()) {
      for (String cell : m.group(2).split(" ")) {
        out.add(m.group(1) + "/" + cell);
      }
    }
    java.util.Collections.sort(out);
    return out;
  }

  /** B's cells are a strict sub-multiset of A's. */
  static boolean fewer(Op.Answer a, Op.Answer b) {
    List<String> ca = cells(a.canon());
    List<String> cb = cells(b.canon());
    if (cb.size() >= ca.size()) {
      return false;
    }
    List<String> rest = new java.util.ArrayList<>(ca);
    for (String c : cb) {
      if (!rest.remove(c)) {
        return false;
      }
    }
    return true;
  }

  static final List<Allow.Entry> ENTRIES = List.of(
      known("batch-cam-ignores-condition",
          "a CheckAndMutate inside Table.batch or checkAndMutate(List) (a conditioned region action"
              + " in Multi): Shoal applies the mutation whatever the condition and answers"
              + " success=false; HBase checks it",
          false,
          (op, a, b) -> spelled(op, "^t\\.(batch|checkAndMutate)\\(List\\.of\\(.*CheckAndMutate\\.newBuilder")),
      known("cam-result-null",
          "checkAndMutate guarding a Put/Delete/RowMutations: HBase's CheckAndMutateResult.getResult()"
              + " is null, Shoal's an empty Result",
          true,
          (op, a, b) -> !a.canon().equals(b.canon())
              && a.canon().replace("result=null", "result={}").equals(b.canon())),
      known("batch-with-filter-row",
          "Scan.setBatch with a filter that filters whole rows (hasFilterRow: SingleColumnValueFilter,"
              + " PageFilter, WhileMatchFilter, SkipFilter, RandomRowFilter, lists holding one): HBase"
              + " refuses (IncompatibleFilterException), Shoal answers",
          true,
          (op, a, b) -> detail(a, "Cannot set batch on a scan using a filter")),
      known("while-match",
          "issue 43 #9: WhileMatchFilter: in HBase a Get returns the cells before the first rejection;"
              + " in a scan, a filter that is done ends the region, and the whole scan when the call"
              + " that saw it done returned no row (RSRpcServices: isFilterDone() && results.isEmpty()"
              + " -> moreResults = false)",
          true,
          (op, a, b) -> spelled(op, "new WhileMatchFilter\\(")),
      known("cam-counters-refused",
          "issue 43 #7: checkAndMutate guarding an Increment or Append: HBase runs it, Shoal refuses",
          false,
          (op, a, b) -> detail(b, "a condition guards puts and deletes only")),
      known("row-mutations-counters-refused",
          "RowMutations holding an Increment or Append (mutateRow, batch): HBase 2.6 runs it and"
              + " answers the new cells, Shoal refuses",
          false,
          (op, a, b) -> b.canon().contains("ERR DoNotRetryIOException")
              && spelled(op, "new RowMutations\\([^;]*\\.add\\(new (Increment|Append)\\(")),
      known("skip-filter-semantics",
          "SkipFilter: HBase hands the wrapped filter cells only (never the row key: a wrapped"
              + " PrefixFilter rejects every row, a RowFilter none) and drops the row on any answer but"
              + " INCLUDE",
          true,
          (op, a, b) -> spelled(op, "new SkipFilter\\(")),
      known("column-count-get-versions",
          "issue 43 #4: ColumnCountGetFilter: HBase keeps only the newest version of each of the first"
              + " n columns (INCLUDE_AND_NEXT_COL)",
          true,
          (op, a, b) -> spelled(op, "new ColumnCountGetFilter\\(")),
      known("comparator-order-ops",
          "Regex, Substring and Null comparators answer 0 (match) or 1: with LESS.. / GREATER.. HBase"
              + " applies the operator to that (LESS_OR_EQUAL keeps everything, GREATER nothing)",
          true,
          (op, a, b) -> spelled(op,
              "(LESS|GREATER)[A-Z_]*, new (RegexString|Substring|Null)Comparator")),
      known("cam-not-equal-missing",
          "issue 43 #2: checkAndMutate ifMatches(NOT_EQUAL, v) on a missing column: HBase fails the"
              + " check, Shoal passes it and applies the mutation",
          false,
          (op, a, b) -> spelled(op, "NOT_EQUAL, ") && a.canon().contains("success=false")
              && b.canon().contains("success=true")),
      known("scvf-in-or",
          "issue 43 #6: SingleColumnValueFilter inside MUST_PASS_ONE: in HBase a cell-level filter"
              + " that drops a row only in filterRow, so other members' cells stay",
          true,
          (op, a, b) -> spelled(op, "MUST_PASS_ONE.*SingleColumnValue")),
      known("null-comparator",
          "NullComparator: HBase's compares every stored value (empty ones too) as non-null: EQUAL"
              + " matches nothing, NOT_EQUAL everything; Shoal takes an empty value for null",
          true,
          (op, a, b) -> spelled(op, "new NullComparator\\(")),
      known("filter-before-versions",
          "issue 43 #8: HBase filters cells before counting versions (a ValueFilter or"
              + " TimestampsFilter rejecting the newest version returns an older one); Shoal counts"
              + " first: its answer lacks cells HBase's has",
          true,
          (op, a, b) -> spelled(op, "setFilter\\(") && fewer(a, b)),
      known("filter-no-op",
          "SingleColumnValue(Exclude)Filter with NO_OP: HBase refuses the read (IOException: Unknown"
              + " Compare op NO_OP), Shoal answers (in a batch, HBase's whole region action fails)",
          false,
          (op, a, b) -> spelled(op, "SingleColumnValue(Exclude)?Filter\\([ab], \"[a-z0-9]+\", NO_OP")
              && a.canon().contains("ERR IOException")),
      known("filterlist-transform",
          "issue 43 #5: cell transformations (KeyOnlyFilter) inside a FilterList: HBase runs every"
              + " member on the original cell, then applies the transformations of the members that"
              + " included it",
          true,
          (op, a, b) -> spelled(op, "new FilterList\\(.*new KeyOnlyFilter\\(")),
      known("counter-answer-timestamp",
          "issue 43 #3 (the stored cells now agree): an Increment/Append over a newest version"
              + " stamped in the future writes at that stamp + 1 ms in both, but HBase's answer"
              + " carries that stamp, Shoal's the server's time",
          true,
          (op, a, b) -> spelled(op, "(new (Increment|Append)\\(|incrementColumnValue)")
              && a.canon().matches(".*@T\\+[0-9]+.*") && b.canon().contains("@NOW")),
      known("flush-drops-versions",
          "issue 43 #11: HBase drops versions beyond the family's VERSIONS (and expired ones beyond"
              + " MIN_VERSIONS) at flush; Shoal keeps them until a major compaction, and a time-range"
              + " read then sees them",
          true,
          (op, a, b) -> spelled(op, "(setTimestamp|setTimeRange|TimestampsFilter|readVersions|readAllVersions)")
              && fewer(b, a)),
      known("cam-no-op",
          "checkAndMutate ifMatches(NO_OP, v): HBase answers false for a non-empty operand and true"
              + " (applying the mutation) for an empty one on a missing or empty cell; Shoal refuses"
              + " (unsupported compare type)",
          false,
          (op, a, b) -> spelled(op, "NO_OP, ") && detail(b, "unsupported compare type")),
      known("cam-empty-operand",
          "issue 43 #10: checkAndMutate with an empty operand (ifMatches(op, \"\"), ifNotExists on an"
              + " empty value): HBase compares with the empty value, Shoal does not",
          false,
          (op, a, b) -> spelled(op, "(ifMatches\\([ab], \"[a-z0-9]*\", [A-Z_]+, \"\"\\)|ifEquals\\([ab],"
              + " \"[a-z0-9]*\", \"\"\\)|ifNotExists)") && a.canon().startsWith("success=")
              && b.canon().startsWith("success=")));
}
