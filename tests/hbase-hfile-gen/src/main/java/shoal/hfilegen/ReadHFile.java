package shoal.hfilegen;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.KeyValueUtil;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.TimeRangeTracker;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Reads HFiles written by someone else (Shoal's HFile writer) with HBase 2.6.1's own reader,
 * for {@code crates/shoal-hfile/tests/writer_hbase.rs}.
 *
 * <p>{@code ReadHFile FILE...}: for each FILE, opens it with {@link HFile#createReader} (trailer,
 * load-on-open section, file info), scans every cell into {@code FILE.hbase.cells} in the fixtures'
 * {@code .cells} line format ({@link Cells#line}), and checks what a region server relies on:
 * the first and last keys equal the first and last cells, the mid key (read through the
 * multi-level index's mid-key metadata) is one of the cells' keys or between them, every cell can
 * be found again by a seek through the block index ({@code seekTo} on a fresh scanner, positional
 * reads), and the store-file keys of the file info parse ({@code TIMERANGE}, {@code
 * BLOOM_FILTER_TYPE}, {@code MAX_SEQ_ID_KEY}). Prints one summary line per file; exits 1 with the
 * reason on the first failure.
 */
public final class ReadHFile {
  private ReadHFile() {}

  public static void main(String[] args) throws Exception {
    HFileGen.quietLogging();
    Configuration conf = HFileGen.configuration();
    FileSystem fs = FileSystem.getLocal(conf);
    try {
      for (String arg : args) {
        check(conf, fs, new File(arg));
      }
    } catch (Exception | AssertionError e) {
      System.err.println("FAILED: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void check(Configuration conf, FileSystem fs, File file) throws Exception {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file.getAbsolutePath());
    CellComparator cmp = CellComparator.getInstance();
    List<Cell> cells = new ArrayList<>();
    StringBuilder dump = new StringBuilder();
    try (HFile.Reader reader = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf)) {
      HFileScanner s = reader.getScanner(conf, false, false);
      if (s.seekTo()) {
        do {
          Cell c = s.getCell();
          dump.append(Cells.line(c, true)).append('\n');
          cells.add(KeyValueUtil.copyToNewKeyValue(c));
        } while (s.next());
      }
      s.close();
      check(cells.size() == reader.getEntries(), "entry count " + reader.getEntries());
      if (!cells.isEmpty()) {
        Cell first = cells.get(0);
        Cell last = cells.get(cells.size() - 1);
        check(cmp.compare(reader.getFirstKey().get(), first, true) == 0, "first key");
        check(cmp.compare(reader.getLastKey().get(), last, true) == 0, "last key");
        Optional<Cell> mid = reader.midKey();
        check(mid.isPresent(), "mid key present");
        check(
            cmp.compare(mid.get(), first, true) >= 0 && cmp.compare(mid.get(), last, true) <= 0,
            "mid key between first and last");
        int seeks = 0;
        HFileScanner seeker = reader.getScanner(conf, false, true);
        for (int i = 0; i < cells.size(); i++) {
          Cell c = cells.get(i);
          // The first of a run of equal keys is where a seek lands.
          if (i > 0 && cmp.compare(cells.get(i - 1), c, true) == 0) {
            continue;
          }
          // Sequence id 0, as the index keys: the index compares sequence ids too.
          KeyValue key = KeyValueUtil.copyToNewKeyValue(c);
          key.setSequenceId(0);
          int r = seeker.seekTo(key);
          check(r == 0, "seekTo cell " + i + " returned " + r);
          check(cmp.compare(seeker.getCell(), c, true) == 0, "seekTo cell " + i + " found another");
          seeks++;
        }
        seeker.close();
        System.out.println(
            file.getName()
                + ": "
                + cells.size()
                + " cells, "
                + seeks
                + " seeks, index levels "
                + reader.getTrailer().getNumDataIndexLevels()
                + ", codec "
                + reader.getTrailer().getCompressionCodec());
      } else {
        System.out.println(file.getName() + ": empty");
      }
      Map<byte[], byte[]> info = reader.getHFileInfo();
      byte[] range = info.get(HStoreFile.TIMERANGE_KEY);
      check(range != null, "TIMERANGE present");
      TimeRangeTracker trt = TimeRangeTracker.parseFrom(range);
      for (Cell c : cells) {
        check(trt.getMin() <= c.getTimestamp() && c.getTimestamp() <= trt.getMax(), "time range");
      }
      byte[] bloom = info.get(HStoreFile.BLOOM_FILTER_TYPE_KEY);
      check(bloom == null || BloomType.valueOf(Bytes.toString(bloom)) == BloomType.NONE, "bloom");
      check(info.get(HStoreFile.MAX_SEQ_ID_KEY) != null, "MAX_SEQ_ID_KEY present");
    }
    Files.writeString(
        new File(file.getPath() + ".hbase.cells").toPath(), dump.toString(), StandardCharsets.UTF_8);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError(what);
    }
  }
}
