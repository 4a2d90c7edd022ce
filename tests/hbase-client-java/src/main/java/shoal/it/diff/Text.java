// How bytes are spelled, in the Java lines the driver prints and in the
// canonical answers it compares: printable ASCII as a quoted string (other
// bytes as \xNN), an 8-byte counter as #<long>.
package shoal.it.diff;

import java.nio.charset.StandardCharsets;

final class Text {
  private Text() {}

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A quoted, escaped string: "v05", "a\x00b". */
  static String q(byte[] v) {
    if (v == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("\"");
    for (byte x : v) {
      int c = x & 0xff;
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        sb.append((char) c);
      } else {
        sb.append(String.format("\\x%02x", c));
      }
    }
    return sb.append('"').toString();
  }

  static String q(String s) {
    return q(b(s));
  }

  /** A value in an answer: #n for an 8-byte value that is not printable text, else quoted. */
  static String val(byte[] v, int off, int len) {
    byte[] copy = java.util.Arrays.copyOfRange(v, off, off + len);
    if (len == 8 && !printable(copy)) {
      return "#" + org.apache.hadoop.hbase.util.Bytes.toLong(copy);
    }
    return q(copy);
  }

  private static boolean printable(byte[] v) {
    for (byte x : v) {
      if (x < 0x20 || x >= 0x7f) {
        return false;
      }
    }
    return true;
  }

  /** An 8-byte counter value in a Java line. */
  static String lng(long n) {
    return "Bytes.toBytes(" + n + "L)";
  }
}
