package shoal.hfilegen;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Writes a bulk-load directory of big HFiles for {@code shoal bench scenario import}, with HBase
 * 2.6.1's own writer as {@code HFileOutputFormat2} does: {@code <dir>/f/<32 hex>}, one file per
 * region (each covering one key range), FAST_DIFF + SNAPPY (hbase-compression-snappy), 64 KB
 * blocks, ROW bloom, the bulk-load file info. Rows are YCSB records: {@code user<12 digits>}
 * (sequential), 10 fields {@code field0..field9} of 100 random printable bytes (YCSB's alphabet of
 * 64 characters), one version each.
 *
 * <p>Usage: {@code BigHFiles <dir> <on-disk bytes> <files>}. The first file calibrates the row
 * count of the others so the total lands near the target. Prints one {@code split <row>} line per
 * region boundary and a closing line {@code wrote files=N rows=R cells=C disk_bytes=D kv_bytes=K
 * payload_bytes=P seconds=S} (kv_bytes: HBase's KeyValue serialization, key + value + lengths;
 * payload_bytes: row + family + qualifier + value).
 */
public final class BigHFiles {
  static final byte[] FAMILY = Bytes.toBytes("f");
  static final int FIELDS = 10;
  static final int VALUE_BYTES = 100;
  static final long TIMESTAMP = 1_760_000_000_000L;

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: BigHFiles <dir> <on-disk bytes> <files>");
      System.exit(2);
    }
    HFileGen.quietLogging();
    File dir = new File(args[0]);
    long target = Long.parseLong(args[1]);
    int files = Integer.parseInt(args[2]);
    if (target <= 0 || files <= 0) {
      throw new IllegalArgumentException("bytes and files must be positive");
    }
    File fam = new File(dir, "f");
    if (!fam.isDirectory() && !fam.mkdirs()) {
      throw new IOException("cannot create " + fam);
    }
    Configuration conf = HFileGen.configuration();
    // HBase's defaults for index and bloom blocks (HFileGen's tiny ones are for fixtures).
    conf.unset("hfile.index.block.max.size");
    conf.unset("hfile.index.block.min.entries");
    conf.unset("io.storefile.bloom.block.size");
    FileSystem fs = FileSystem.getLocal(conf).getRaw();
    long perFile = target / files;
    // A YCSB row is ~1.0 KB of cells; SNAPPY saves little on random text: start there.
    long rowsPerFile = Math.max(1, perFile / 1000);
    long started = System.nanoTime();
    long row = 0, cells = 0, disk = 0, kvBytes = 0, payload = 0;
    SplittableRandom rnd = new SplittableRandom(42);
    List<String> splits = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      if (i > 0) {
        splits.add(key(row));
      }
      File file = new File(fam, UUID.randomUUID().toString().replace("-", ""));
      long[] sums = write(conf, fs, file, row, rowsPerFile, rnd);
      row += rowsPerFile;
      cells += sums[0];
      kvBytes += sums[1];
      payload += sums[2];
      disk += file.length();
      if (i == 0) {
        rowsPerFile = Math.max(1, (long) (rowsPerFile * ((double) perFile / file.length())));
      }
    }
    for (String s : splits) {
      System.out.println("split " + s);
    }
    System.out.printf(
        "wrote files=%d rows=%d cells=%d disk_bytes=%d kv_bytes=%d payload_bytes=%d seconds=%.2f%n",
        files, row, cells, disk, kvBytes, payload, (System.nanoTime() - started) / 1e9);
  }

  static String key(long n) {
    return String.format("user%012d", n);
  }

  /** Writes rows [first, first + n) into one HFile; returns {cells, KeyValue bytes, payload}. */
  private static long[] write(
      Configuration conf, FileSystem fs, File file, long first, long n, SplittableRandom rnd)
      throws IOException {
    HFileContext ctx =
        new HFileContextBuilder()
            .withBlockSize(64 * 1024)
            .withCompression(Compression.Algorithm.SNAPPY)
            .withDataBlockEncoding(DataBlockEncoding.FAST_DIFF)
            .withIncludesMvcc(true)
            .withIncludesTags(true)
            .withColumnFamily(FAMILY)
            .withTableName(Bytes.toBytes("usertable"))
            .build();
    StoreFileWriter w =
        new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
            .withFilePath(new org.apache.hadoop.fs.Path(file.getAbsolutePath()))
            .withBloomType(BloomType.ROW)
            .withMaxKeyCount(n * FIELDS)
            .withFileContext(ctx)
            .build();
    byte[][] qualifiers = new byte[FIELDS][];
    for (int f = 0; f < FIELDS; f++) {
      qualifiers[f] = Bytes.toBytes("field" + f);
    }
    long cells = 0, kv = 0, payload = 0;
    byte[] value = new byte[VALUE_BYTES];
    for (long r = first; r < first + n; r++) {
      byte[] rowKey = Bytes.toBytes(key(r));
      for (int f = 0; f < FIELDS; f++) {
        for (int b = 0; b < VALUE_BYTES; b++) {
          value[b] = (byte) (' ' + rnd.nextInt(64)); // YCSB's RandomByteIterator alphabet
        }
        KeyValue cell = new KeyValue(rowKey, FAMILY, qualifiers[f], TIMESTAMP, value);
        w.append(cell);
        cells++;
        kv += cell.getLength();
        payload += rowKey.length + FAMILY.length + qualifiers[f].length + VALUE_BYTES;
      }
    }
    // What HFileOutputFormat2 records in a bulk-load file.
    w.appendFileInfo(HStoreFile.BULKLOAD_TIME_KEY, Bytes.toBytes(System.currentTimeMillis()));
    w.appendFileInfo(HStoreFile.BULKLOAD_TASK_KEY, Bytes.toBytes("shoal-bench-import"));
    w.appendFileInfo(HStoreFile.MAJOR_COMPACTION_KEY, Bytes.toBytes(true));
    w.appendFileInfo(HStoreFile.EXCLUDE_FROM_MINOR_COMPACTION_KEY, Bytes.toBytes(false));
    w.appendTrackedTimestampsToMetadata();
    w.close();
    return new long[] {cells, kv, payload};
  }
}
