package shoal.hfilegen;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.hbase.ArrayBackedTag;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.TagType;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The logical cells every generated HFile holds (deterministic: a seeded {@link Random}), and the
 * line format the fixtures use to describe cells.
 *
 * <p>What the set is made to exercise in a reader:
 *
 * <ul>
 *   <li>rows sharing long prefixes, so that PREFIX/DIFF/FAST_DIFF encodings actually share bytes
 *       between neighbouring keys (and ROW_INDEX_V1 has many rows per block);
 *   <li>a 1-byte row, a 301-byte row, rows with 0x00 and 0xff bytes;
 *   <li>qualifiers from empty to 40 bytes, one binary;
 *   <li>several versions per column (distinct timestamps, newest first in file order);
 *   <li>every KeyValue type: Put, Delete (one version, at the same timestamp as a Put, so the Delete
 *       sorts first), DeleteColumn, DeleteFamily and DeleteFamilyVersion (empty qualifier);
 *   <li>empty values, and two values of 20 KB and 24 KB (much bigger than the 2 KB blocks);
 *   <li>v3 tags on some cells: the TTL tag (type 8, an 8-byte long) and an arbitrary type 0x7a;
 *   <li>a non-zero sequence id (MVCC) on every cell.
 * </ul>
 */
final class Cells {
  static final byte[] FAMILY = Bytes.toBytes("f");
  /** An arbitrary, application-defined tag type (HBase reserves none above 64 for itself). */
  static final byte CUSTOM_TAG_TYPE = (byte) 0x7a;
  /** Values bigger than this are written as {@code len=<n>,sha256=<hex>} in .cells files. */
  static final int INLINE_VALUE_MAX = 1024;

  private Cells() {}

  /** The cells, sorted as HBase sorts them ({@link CellComparator#getInstance()}). */
  static List<KeyValue> generate(boolean withTags) {
    Random rnd = new Random(20261127L);
    List<byte[]> rows = rows(rnd);
    byte[][] qualifiers = {
      Bytes.toBytes("a"),
      Bytes.toBytes("name"),
      Bytes.toBytes("email_address_primary"),
      Bytes.toBytes("x".repeat(40)),
      new byte[] {0x00, (byte) 0xff, 0x10, 0x7f},
      Bytes.toBytes("q0001"),
      Bytes.toBytes("q0002"),
      Bytes.toBytes("q0010"),
    };
    long base = 1_700_000_000_000L; // 2023-11-14: fixed, so the files never change
    TreeSet<KeyValue> cells = new TreeSet<>(CellComparator.getInstance());
    Set<String> keys = new HashSet<>();
    int largeLeft = 2;
    for (int r = 0; r < rows.size(); r++) {
      byte[] row = rows.get(r);
      // Columns of this row: 1 to 4 of the qualifiers, some with several versions.
      int ncols = 1 + rnd.nextInt(4);
      for (int c = 0; c < ncols; c++) {
        byte[] q = qualifiers[rnd.nextInt(qualifiers.length)];
        int versions = 1 + rnd.nextInt(4);
        long newest = 0;
        for (int v = 0; v < versions; v++) {
          long ts = base - v * 1000L - rnd.nextInt(500);
          if (v == 0) {
            newest = ts;
          }
          byte[] value;
          int kind = rnd.nextInt(20);
          if ((r == 61 || r == 163) && c == 0 && v == 0) {
            // The two large values, at fixed places.
            value = largeValue(largeLeft == 2 ? 20 * 1024 : 24 * 1024, rnd);
            largeLeft--;
          } else if (kind == 0) {
            value = new byte[0];
          } else {
            value = new byte[1 + rnd.nextInt(12)];
            for (int i = 0; i < value.length; i++) {
              value[i] = (byte) ('a' + rnd.nextInt(26));
            }
            if (kind == 2) {
              value[0] = 0; // binary bytes in a value
            }
          }
          // Tags are drawn even without tags, so the v2 cells are the v3 cells minus their tags.
          List<Tag> tags = tags(rnd);
          add(cells, keys, row, q, ts, KeyValue.Type.Put, value, withTags ? tags : null, rnd);
        }
        // A Delete of exactly one version: same timestamp as that Put (it sorts before it).
        if (rnd.nextInt(10) == 0) {
          add(cells, keys, row, q, newest, KeyValue.Type.Delete, null, null, rnd);
        }
        // A DeleteColumn: every version at or before its timestamp.
        if (rnd.nextInt(12) == 0) {
          add(cells, keys, row, q, base - 1500, KeyValue.Type.DeleteColumn, null, null, rnd);
        }
      }
      // Family-wide markers carry an empty qualifier and sort first in their row.
      if (rnd.nextInt(15) == 0) {
        add(cells, keys, row, new byte[0], base - 2000, KeyValue.Type.DeleteFamily, null, null, rnd);
      }
      if (rnd.nextInt(15) == 0) {
        add(
            cells,
            keys,
            row,
            new byte[0],
            base - 250,
            KeyValue.Type.DeleteFamilyVersion,
            null,
            null,
            rnd);
      }
    }
    if (largeLeft != 0) {
      throw new IllegalStateException("the seed gave too few large values: " + largeLeft);
    }
    return new ArrayList<>(cells);
  }

  /**
   * ~200 rows: most under three long shared prefixes, plus oddities (short, long, binary).
   * Returned unsorted (the TreeSet sorts the cells).
   */
  private static List<byte[]> rows(Random rnd) {
    List<byte[]> rows = new ArrayList<>();
    for (int i = 0; i < 110; i++) {
      rows.add(Bytes.toBytes(String.format("com.example.www/users/%06d", i * 7)));
      if (i % 6 == 0) {
        rows.add(Bytes.toBytes(String.format("com.example.www/users/%06d/orders", i * 7)));
      }
    }
    for (int i = 0; i < 60; i++) {
      rows.add(Bytes.toBytes(String.format("org.apache.hbase/metrics/host-%03d.region", i)));
    }
    for (int i = 0; i < 8; i++) {
      rows.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) i});
      rows.add(new byte[] {0x00, (byte) i, 0x00});
    }
    rows.add(new byte[] {'z'});
    rows.add(Bytes.toBytes("L" + "0123456789".repeat(30) /* 301 bytes */));
    return rows;
  }

  private static List<Tag> tags(Random rnd) {
    int k = rnd.nextInt(10);
    List<Tag> tags = new ArrayList<>();
    if (k == 0 || k == 2) {
      tags.add(new ArrayBackedTag(TagType.TTL_TAG_TYPE, Bytes.toBytes(3_600_000L + k)));
    }
    if (k == 1 || k == 2) {
      tags.add(new ArrayBackedTag(CUSTOM_TAG_TYPE, Bytes.toBytes("tag-" + rnd.nextInt(1000))));
    }
    return tags.isEmpty() ? null : tags;
  }

  private static void add(
      TreeSet<KeyValue> cells,
      Set<String> keys,
      byte[] row,
      byte[] q,
      long ts,
      KeyValue.Type type,
      byte[] value,
      List<Tag> tags,
      Random rnd) {
    String key = Bytes.toHex(row) + "/" + Bytes.toHex(q) + "/" + ts + "/" + type;
    // Draw the sequence id even for duplicates, so the stream of random numbers stays the same.
    long seqId = 1 + rnd.nextInt(100_000);
    if (!keys.add(key)) {
      return;
    }
    KeyValue kv = new KeyValue(row, FAMILY, q, ts, type, value == null ? new byte[0] : value, tags);
    kv.setSequenceId(seqId);
    cells.add(kv);
  }

  /** Compressible but not trivial text (so the compressed files stay small). */
  private static byte[] largeValue(int size, Random rnd) {
    String[] words = {"hbase ", "shoal ", "region ", "block ", "index ", "bloom ", "cell "};
    StringBuilder sb = new StringBuilder(size);
    while (sb.length() < size) {
      sb.append(words[rnd.nextInt(words.length)]);
    }
    return sb.substring(0, size).getBytes(StandardCharsets.US_ASCII);
  }

  /** One line of a .cells file (see the fixtures' README). */
  static String line(Cell cell, boolean withSeqId) {
    StringBuilder sb = new StringBuilder();
    sb.append(hex(cell.getRowArray(), cell.getRowOffset(), cell.getRowLength())).append('\t');
    sb.append(hex(cell.getFamilyArray(), cell.getFamilyOffset(), cell.getFamilyLength()))
        .append('\t');
    sb.append(hex(cell.getQualifierArray(), cell.getQualifierOffset(), cell.getQualifierLength()))
        .append('\t');
    sb.append(cell.getTimestamp()).append('\t');
    sb.append(KeyValue.Type.codeToType(cell.getTypeByte()).name()).append('\t');
    byte[] value =
        Bytes.copy(cell.getValueArray(), cell.getValueOffset(), cell.getValueLength());
    sb.append(valueText(value)).append('\t');
    List<String> tags = new ArrayList<>();
    if (cell.getTagsLength() > 0) {
      for (Tag t : PrivateCellUtil.getTags(cell)) {
        tags.add((t.getType() & 0xff) + ":" + Bytes.toHex(Tag.cloneValue(t)));
      }
    }
    sb.append(tags.isEmpty() ? "-" : String.join(",", tags)).append('\t');
    sb.append(withSeqId ? cell.getSequenceId() : 0);
    return sb.toString();
  }

  static String valueText(byte[] value) {
    if (value.length > INLINE_VALUE_MAX) {
      return "len=" + value.length + ",sha256=" + Bytes.toHex(sha256(value));
    }
    return Bytes.toHex(value);
  }

  static String hex(byte[] b, int off, int len) {
    return len == 0 ? "" : Bytes.toHex(b, off, len);
  }

  static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
