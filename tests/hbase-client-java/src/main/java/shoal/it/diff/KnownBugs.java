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
      known("skip-filter-semantics",
          "SkipFilter: HBase hands the wrapped filter cells only (never the row key: a wrapped"
              + " PrefixFilter rejects every row, a RowFilter none) and drops the row on any answer but"
              + " INCLUDE",
          true,
          (op, a, b) -> spelled(op, "new SkipFilter\\(")));
}
