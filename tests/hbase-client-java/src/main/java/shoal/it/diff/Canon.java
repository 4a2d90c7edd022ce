// The canonical text of an answer, the thing the two clusters' answers are
// compared by: cells in order as family:qualifier@ts[:type]=value under their
// row, server-stamped timestamps as NOW; booleans; and an error as the class of
// its cause (RetriesExhausted* and the scanner iterator's wrapping unwrapped,
// a remote exception named by its remote class).
package shoal.it.diff;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.RetriesExhaustedException;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.ipc.RemoteException;

final class Canon {
  private final Times times;

  Canon(Times times) {
    this.times = times;
  }

  String cell(Cell c) {
    StringBuilder sb = new StringBuilder();
    sb.append(Bytes.toString(CellUtil.cloneFamily(c))).append(':')
        .append(Bytes.toStringBinary(CellUtil.cloneQualifier(c))).append('@')
        .append(times.canon(c.getTimestamp()));
    if (c.getType() != Cell.Type.Put) {
      sb.append(':').append(c.getType());
    }
    sb.append('=').append(Text.val(c.getValueArray(), c.getValueOffset(), c.getValueLength()));
    return sb.toString();
  }

  /** A Result: row[cells] (cells that name another row say so), exists=, or {} when empty. */
  String result(Result r) {
    if (r == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder();
    if (r.getExists() != null) {
      sb.append("exists=").append(r.getExists()).append(' ');
    }
    if (r.rawCells() == null || r.rawCells().length == 0) {
      return sb.length() > 0 ? sb.toString().trim() : "{}";
    }
    byte[] row = r.getRow();
    sb.append(Bytes.toStringBinary(row)).append('[');
    boolean first = true;
    for (Cell c : r.rawCells()) {
      if (!first) {
        sb.append(' ');
      }
      first = false;
      if (!CellUtil.matchingRows(c, row)) {
        sb.append(Bytes.toStringBinary(CellUtil.cloneRow(c))).append('/');
      }
      sb.append(cell(c));
    }
    return sb.append(']').toString();
  }

  String results(List<Result> rs) {
    if (rs.isEmpty()) {
      return "(no rows)";
    }
    StringBuilder sb = new StringBuilder();
    for (Result r : rs) {
      if (sb.length() > 0) {
        sb.append(" | ");
      }
      sb.append(result(r));
    }
    return sb.toString();
  }

  String results(Result[] rs) {
    return results(java.util.Arrays.asList(rs));
  }

  String cam(CheckAndMutateResult r) {
    return "success=" + r.isSuccess() + " result=" + result(r.getResult());
  }

  /** One slot of Table.batch's results: a Result, an error, or whatever else came back. */
  String slot(Object o) {
    if (o == null) {
      return "null";
    }
    if (o instanceof Result) {
      return result((Result) o);
    }
    if (o instanceof CheckAndMutateResult) {
      return cam((CheckAndMutateResult) o);
    }
    if (o instanceof Throwable) {
      return "ERR " + error((Throwable) o);
    }
    return o.getClass().getSimpleName() + ":" + o;
  }

  /** The innermost meaningful cause, unwrapped from the client's retry and iterator wrappers. */
  static Throwable cause(Throwable e) {
    for (int i = 0; i < 10; i++) {
      Throwable next = null;
      if (e instanceof RetriesExhaustedWithDetailsException) {
        RetriesExhaustedWithDetailsException r = (RetriesExhaustedWithDetailsException) e;
        next = r.getNumExceptions() > 0 ? r.getCause(0) : null;
      } else if (e instanceof RetriesExhaustedException || e instanceof UncheckedIOException) {
        next = e.getCause();
      } else if (e.getClass() == RuntimeException.class && e.getCause() instanceof IOException) {
        next = e.getCause(); // ResultScanner's iterator
      }
      if (next == null || next == e) {
        return e;
      }
      e = next;
    }
    return e;
  }

  /** An error's canonical name: its (remote) class, simple name. */
  static String error(Throwable e) {
    Throwable c = cause(e);
    String name = c instanceof RemoteException ? ((RemoteException) c).getClassName()
        : c.getClass().getName();
    return name.substring(name.lastIndexOf('.') + 1);
  }

  /** An error with its message, for the divergence report (not compared). */
  static String detail(Throwable e) {
    Throwable c = cause(e);
    String m = String.valueOf(c.getMessage());
    int nl = m.indexOf('\n');
    if (nl >= 0) {
      m = m.substring(0, nl);
    }
    if (m.length() > 300) {
      m = m.substring(0, 300) + "…";
    }
    return error(e) + ": " + m;
  }
}
