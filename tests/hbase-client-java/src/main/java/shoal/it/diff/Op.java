// One generated operation: its Java-like spelling, its tags (what the
// allow-list's predicates look at), and how to run it against one cluster,
// building every client object afresh (the client mutates Scans and
// filters), giving its canonical answer or the error's class.
package shoal.it.diff;

import java.util.Set;

final class Op {
  /** Runs the operation on one cluster; returns its canonical answer. */
  interface Exec {
    String run(Side s, Canon c) throws Exception;
  }

  /** An answer: the canonical text compared, and a detail (error messages) shown with it. */
  record Answer(String canon, String detail) {
    String show() {
      return detail == null ? canon : canon + "   (" + detail + ")";
    }
  }

  final String java;
  final Set<String> tags;
  /** Writes data (so a refusal by one side must not be sent to the other). */
  final boolean write;
  /** A flush, compaction or split. */
  final boolean admin;
  private final Exec exec;

  Op(String java, boolean write, boolean admin, Set<String> tags, Exec exec) {
    this.java = java;
    this.write = write;
    this.admin = admin;
    this.tags = tags;
    this.exec = exec;
  }

  static Op read(String java, Set<String> tags, Exec exec) {
    return new Op(java, false, false, tags, exec);
  }

  static Op write(String java, Set<String> tags, Exec exec) {
    return new Op(java, true, false, tags, exec);
  }

  static Op admin(String java, Exec exec) {
    return new Op(java, true, true, Set.of("admin"), exec);
  }

  boolean has(String tag) {
    return tags.contains(tag);
  }

  Answer answer(Side s, Canon c) {
    s.clockTick();
    try {
      return new Answer(exec.run(s, c), null);
    } catch (Throwable e) {
      return new Answer("ERR " + Canon.error(e), Canon.detail(e));
    } finally {
      s.opDone();
    }
  }

  @Override
  public String toString() {
    return java;
  }
}
