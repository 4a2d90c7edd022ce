package shoal.hfilegen;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.FixedFileTrailer;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileInfo;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.io.hfile.HFileWriterImpl;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.regionserver.StoreUtils;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HFileProtos;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;
import org.apache.hadoop.io.compress.CompressionCodec;

/**
 * Writes HFiles with HBase 2.6.1's own writer, reads each back with HBase's own reader, and writes
 * next to each file what a reader must find in it.
 *
 * <p>Usage: {@code HFileGen <fixtures-dir>}; writes {@code <fixtures-dir>/hfiles/}:
 *
 * <ul>
 *   <li>{@code <ENCODING>-<COMPRESSION>.hfile} for every data block encoding in {NONE, PREFIX,
 *       DIFF, FAST_DIFF, ROW_INDEX_V1} and compression in {NONE, GZ, SNAPPY, LZ4, ZSTD}: HFile v3,
 *       through {@link StoreFileWriter} (as a region server's flush writes them: bloom filter, file
 *       info such as MAX_SEQ_ID_KEY, TIMERANGE, EARLIEST_PUT_TS, DELETE_FAMILY_COUNT);
 *   <li>{@code NONE-NONE-crc32.hfile}: CRC32 block checksums instead of CRC32C;
 *   <li>{@code FAST_DIFF-GZ-bpc512.hfile}: a checksum every 512 bytes instead of 16 KB;
 *   <li>{@code v2-NONE-NONE.hfile}, {@code v2-FAST_DIFF-SNAPPY.hfile}: HFile v2 (no tags), see
 *       {@link V2Writer}.
 * </ul>
 *
 * Next to each: {@code <name>.cells} (the cells as HBase's {@link HFileScanner} reads them back)
 * and {@code <name>.meta} (trailer and file info). Files of identical read-back share one real
 * .cells file ({@code v3.cells}, {@code v2.cells}); {@code <name>.cells} is then a relative symlink
 * to it, which keeps the fixture tree small. The format is in the fixtures' README.md.
 */
public final class HFileGen {
  static final String[] ENCODINGS = {"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"};
  static final String[] COMPRESSIONS = {"NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"};
  static final BloomType[] BLOOMS = {BloomType.NONE, BloomType.ROW, BloomType.ROWCOL};
  /** Tiny data blocks (HBase's default is 64 KB), so a small file has dozens of them. */
  static final int BLOCK_SIZE = 2048;
  /**
   * Index blocks of at most 512 bytes (and at least 4 entries, see {@link #configuration}): a root,
   * intermediate and leaf level for the ~60-90 data blocks of a v3 file.
   */
  static final int INDEX_BLOCK_MAX_SIZE = 512;
  /** For the v2 files, index blocks of 2 KB: two levels (root and leaf), for variety. */
  static final int V2_INDEX_BLOCK_MAX_SIZE = 2048;
  /** The max sequence id recorded in file info (as a flush would: at least every cell's). */
  static final long MAX_SEQ_ID = 100_000L;

  /** One file to write. */
  record Spec(
      String name,
      int version,
      DataBlockEncoding encoding,
      Compression.Algorithm compression,
      BloomType bloom,
      ChecksumType checksum,
      int bytesPerChecksum,
      int indexBlockMaxSize) {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: HFileGen <fixtures-dir>");
      System.exit(2);
    }
    quietLogging();
    File out = new File(args[0], "hfiles");
    if (!out.isDirectory() && !out.mkdirs()) {
      throw new IOException("cannot create " + out);
    }
    Configuration conf = configuration();
    FileSystem fs = FileSystem.getLocal(conf).getRaw(); // no .crc side files

    List<Spec> specs = new ArrayList<>();
    int i = 0;
    for (String enc : ENCODINGS) {
      for (String comp : COMPRESSIONS) {
        specs.add(
            new Spec(
                enc + "-" + comp,
                3,
                DataBlockEncoding.valueOf(enc),
                Compression.getCompressionAlgorithmByName(comp.toLowerCase()),
                BLOOMS[i++ % BLOOMS.length],
                StoreUtils.getChecksumType(conf),
                StoreUtils.getBytesPerChecksum(conf),
                INDEX_BLOCK_MAX_SIZE));
      }
    }
    // The checksum variants, configured as a region server is: by its configuration keys.
    Configuration crc32 = new Configuration(conf);
    crc32.set("hbase.hstore.checksum.algorithm", "CRC32");
    specs.add(
        new Spec(
            "NONE-NONE-crc32",
            3,
            DataBlockEncoding.NONE,
            Compression.Algorithm.NONE,
            BloomType.ROW,
            StoreUtils.getChecksumType(crc32),
            StoreUtils.getBytesPerChecksum(crc32),
            INDEX_BLOCK_MAX_SIZE));
    Configuration bpc = new Configuration(conf);
    bpc.setInt("hbase.hstore.bytes.per.checksum", 512);
    specs.add(
        new Spec(
            "FAST_DIFF-GZ-bpc512",
            3,
            DataBlockEncoding.FAST_DIFF,
            Compression.Algorithm.GZ,
            BloomType.ROWCOL,
            StoreUtils.getChecksumType(bpc),
            StoreUtils.getBytesPerChecksum(bpc),
            INDEX_BLOCK_MAX_SIZE));
    specs.add(
        new Spec(
            "v2-NONE-NONE",
            2,
            DataBlockEncoding.NONE,
            Compression.Algorithm.NONE,
            BloomType.NONE,
            ChecksumType.CRC32C,
            16 * 1024,
            V2_INDEX_BLOCK_MAX_SIZE));
    specs.add(
        new Spec(
            "v2-FAST_DIFF-SNAPPY",
            2,
            DataBlockEncoding.FAST_DIFF,
            Compression.Algorithm.SNAPPY,
            BloomType.NONE,
            ChecksumType.CRC32C,
            16 * 1024,
            V2_INDEX_BLOCK_MAX_SIZE));

    List<KeyValue> v3Cells = Cells.generate(true);
    List<KeyValue> v2Cells = Cells.generate(false);
    System.out.println(
        "cells: " + v3Cells.size() + " (" + countRows(v3Cells) + " rows), v2 without tags");

    Map<Integer, String> sharedDump = new LinkedHashMap<>();
    for (Spec spec : specs) {
      File file = new File(out, spec.name + ".hfile");
      org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file.getAbsolutePath());
      HFileContext ctx =
          new HFileContextBuilder()
              .withBlockSize(BLOCK_SIZE)
              .withCompression(spec.compression)
              .withDataBlockEncoding(spec.encoding)
              .withIncludesMvcc(true)
              .withIncludesTags(spec.version >= 3)
              .withChecksumType(spec.checksum)
              .withBytesPerCheckSum(spec.bytesPerChecksum)
              .withColumnFamily(Cells.FAMILY)
              .withTableName(Bytes.toBytes("fixture"))
              .withCreateTime(1_700_000_000_000L) // fixed: the files never change
              .build();
      Configuration fileConf = new Configuration(conf);
      fileConf.setInt("hfile.index.block.max.size", spec.indexBlockMaxSize);
      if (spec.version >= 3) {
        writeV3(fileConf, fs, path, ctx, spec.bloom, v3Cells);
      } else {
        V2Writer.write(fileConf, fs, path, ctx, v2Cells, MAX_SEQ_ID);
      }

      // Read it back with HBase's own reader: these lines are what a reader must produce.
      StringBuilder dump = new StringBuilder();
      Map<String, String> meta = new LinkedHashMap<>();
      int n = readBack(conf, fs, path, file, dump, meta);
      List<KeyValue> written = spec.version >= 3 ? v3Cells : v2Cells;
      if (n != written.size()) {
        throw new IllegalStateException(spec.name + ": read " + n + " of " + written.size());
      }
      String expected = expectedDump(written);
      if (!expected.equals(dump.toString())) {
        throw new IllegalStateException(spec.name + ": HBase read back other cells than written");
      }
      // Identical read-backs share one .cells file (a symlink next to each HFile).
      String shared = "v" + spec.version + ".cells";
      String before = sharedDump.putIfAbsent(spec.version, dump.toString());
      if (before == null) {
        Files.writeString(new File(out, shared).toPath(), dump.toString());
      } else if (!before.equals(dump.toString())) {
        throw new IllegalStateException(spec.name + ": read-back differs from " + shared);
      }
      Path link = new File(out, spec.name + ".cells").toPath();
      Files.deleteIfExists(link);
      Files.createSymbolicLink(link, Path.of(shared));

      meta.put("fixture.bloom_type_written", spec.bloom.toString());
      meta.put("fixture.block_size", String.valueOf(BLOCK_SIZE));
      meta.put("fixture.index_block_max_size", String.valueOf(spec.indexBlockMaxSize));
      meta.put("fixture.checksum_type_written", spec.checksum.getName());
      meta.put("fixture.bytes_per_checksum_written", String.valueOf(spec.bytesPerChecksum));
      meta.put("fixture.cells_file", shared);
      try (PrintWriter w = new PrintWriter(new File(out, spec.name + ".meta"), "UTF-8")) {
        w.println("# " + spec.name + ".hfile, written by HBase 2.6.1 (see ../README.md)");
        for (Map.Entry<String, String> e : meta.entrySet()) {
          w.println(e.getKey().startsWith("#") ? e.getKey() : e.getKey() + " = " + e.getValue());
        }
      }
      System.out.printf(
          "%-22s %7d bytes  levels=%s dataIndexCount=%s bloom=%s codec=%s%n",
          spec.name + ".hfile",
          file.length(),
          meta.get("trailer.num_data_index_levels"),
          meta.get("trailer.data_index_count"),
          spec.bloom,
          spec.compression == Compression.Algorithm.NONE
              ? "-"
              : codecClass(conf, spec.compression));
    }
  }

  /**
   * The generator's configuration: HBase's defaults, plus HBase's pure-Java-friendly codecs for
   * SNAPPY, LZ4 and ZSTD (no Hadoop native library needed), and small index blocks so that the data
   * block index has more than one level.
   */
  static Configuration configuration() {
    Configuration conf = HBaseConfiguration.create();
    setCodecs(conf);
    // Small index blocks (the size is set per file, see Spec) of at least 4 entries: the data
    // block index has more than one level.
    conf.setInt("hfile.index.block.max.size", INDEX_BLOCK_MAX_SIZE);
    conf.setInt("hfile.index.block.min.entries", 4);
    // Compound bloom filter chunks of 512 bytes: several bloom chunks and a bloom index.
    conf.setInt("io.storefile.bloom.block.size", 512);
    return conf;
  }

  /**
   * Sets HBase's own codec classes for SNAPPY, LZ4 and ZSTD (modules hbase-compression-snappy,
   * -lz4, -zstd) and makes {@link Compression.Algorithm} use them: it builds its codecs from a
   * configuration of its own, so {@code reload} must see these keys before any codec is used.
   */
  static void setCodecs(Configuration conf) {
    conf.set(
        "hbase.io.compress.snappy.codec", "org.apache.hadoop.hbase.io.compress.xerial.SnappyCodec");
    conf.set("hbase.io.compress.lz4.codec", "org.apache.hadoop.hbase.io.compress.lz4.Lz4Codec");
    conf.set("hbase.io.compress.zstd.codec", "org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec");
    for (Compression.Algorithm a :
        new Compression.Algorithm[] {
          Compression.Algorithm.SNAPPY, Compression.Algorithm.LZ4, Compression.Algorithm.ZSTD
        }) {
      a.reload(conf);
    }
  }

  static String codecClass(Configuration conf, Compression.Algorithm algo) {
    try {
      CompressionCodec codec = algo.reload(conf);
      return codec.getClass().getName();
    } catch (Exception e) {
      return "? " + e;
    }
  }

  /** HBase's and Hadoop's log4j loggers: off (the generator prints what it checked). */
  static void quietLogging() {
    org.apache.log4j.LogManager.resetConfiguration();
    org.apache.log4j.Logger root = org.apache.log4j.Logger.getRootLogger();
    root.addAppender(new org.apache.log4j.varia.NullAppender());
    root.setLevel(org.apache.log4j.Level.OFF);
  }

  /** HFile v3 as a region server writes a store file: StoreFileWriter, with bloom and metadata. */
  private static void writeV3(
      Configuration conf,
      FileSystem fs,
      org.apache.hadoop.fs.Path path,
      HFileContext ctx,
      BloomType bloom,
      List<KeyValue> cells)
      throws IOException {
    fs.delete(path, false);
    StoreFileWriter w =
        new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
            .withFilePath(path)
            .withBloomType(bloom)
            .withMaxKeyCount(cells.size())
            .withFileContext(ctx)
            .build();
    for (KeyValue kv : cells) {
      w.append(kv);
    }
    // MAX_SEQ_ID_KEY, MAJOR_COMPACTION_KEY, TIMERANGE, EARLIEST_PUT_TS (as a flush does).
    w.appendMetadata(MAX_SEQ_ID, false);
    w.close();
  }

  /**
   * Reads {@code path} with HBase's own reader: every cell in file order into {@code dump}, the
   * trailer and file info into {@code meta}. The trailer is read twice: by HBase ({@link
   * FixedFileTrailer}) and by hand from the file's last bytes (the protobuf as stored, e.g. the
   * comparator class name exactly as written), and both must agree.
   */
  private static int readBack(
      Configuration conf,
      FileSystem fs,
      org.apache.hadoop.fs.Path path,
      File file,
      StringBuilder dump,
      Map<String, String> meta)
      throws IOException {
    byte[] bytes = Files.readAllBytes(file.toPath());
    int n = 0;
    try (HFile.Reader reader = HFile.createReader(fs, path, CacheConfig.DISABLED, true, conf)) {
      FixedFileTrailer t = reader.getTrailer();
      int version = Bytes.toInt(bytes, bytes.length - 4);
      int major = version & 0x00ffffff;
      int minor = version >>> 24;
      int trailerSize = major == 2 ? 212 : 4096;
      // Magic "TRABLK\"$", then the length-delimited FileTrailerProto.
      String magic = new String(bytes, bytes.length - trailerSize, 8, StandardCharsets.US_ASCII);
      HFileProtos.FileTrailerProto p =
          HFileProtos.FileTrailerProto.parseDelimitedFrom(
              new ByteArrayInputStream(bytes, bytes.length - trailerSize + 8, trailerSize - 8));
      check(major == t.getMajorVersion() && minor == t.getMinorVersion(), "version");
      check(p.getEntryCount() == t.getEntryCount(), "entry count");
      check(p.getNumDataIndexLevels() == t.getNumDataIndexLevels(), "levels");
      check(p.getDataIndexCount() == t.getDataIndexCount(), "data index count");
      check(p.getFirstDataBlockOffset() == t.getFirstDataBlockOffset(), "first data block");
      check(p.getLastDataBlockOffset() == t.getLastDataBlockOffset(), "last data block");
      check(p.getCompressionCodec() == t.getCompressionCodec().ordinal(), "codec");
      meta.put("file.size", String.valueOf(bytes.length));
      meta.put("trailer.version", major + "." + minor);
      meta.put("trailer.size", String.valueOf(trailerSize));
      meta.put("trailer.magic", magic);
      meta.put("trailer.file_info_offset", String.valueOf(p.getFileInfoOffset()));
      meta.put("trailer.load_on_open_data_offset", String.valueOf(p.getLoadOnOpenDataOffset()));
      meta.put(
          "trailer.uncompressed_data_index_size", String.valueOf(p.getUncompressedDataIndexSize()));
      meta.put("trailer.total_uncompressed_bytes", String.valueOf(p.getTotalUncompressedBytes()));
      meta.put("trailer.data_index_count", String.valueOf(p.getDataIndexCount()));
      meta.put("trailer.meta_index_count", String.valueOf(p.getMetaIndexCount()));
      meta.put("trailer.entry_count", String.valueOf(p.getEntryCount()));
      meta.put("trailer.num_data_index_levels", String.valueOf(p.getNumDataIndexLevels()));
      meta.put("trailer.first_data_block_offset", String.valueOf(p.getFirstDataBlockOffset()));
      meta.put("trailer.last_data_block_offset", String.valueOf(p.getLastDataBlockOffset()));
      meta.put("trailer.comparator_class_name", p.getComparatorClassName());
      meta.put(
          "trailer.compression_codec",
          p.getCompressionCodec() + " " + t.getCompressionCodec().name());
      meta.put("trailer.has_encryption_key", String.valueOf(p.hasEncryptionKey()));

      // The first data block's header: its checksum type and bytes per checksum.
      DataInputStream h =
          new DataInputStream(
              new ByteArrayInputStream(bytes, (int) p.getFirstDataBlockOffset(), 33));
      byte[] blockMagic = new byte[8];
      h.readFully(blockMagic);
      int onDiskSizeWithoutHeader = h.readInt();
      int uncompressedSizeWithoutHeader = h.readInt();
      long prevBlockOffset = h.readLong();
      int checksumType = h.readByte();
      int bytesPerChecksum = h.readInt();
      int onDiskDataSizeWithHeader = h.readInt();
      meta.put("first_block.magic", new String(blockMagic, StandardCharsets.US_ASCII));
      meta.put("first_block.on_disk_size_without_header", String.valueOf(onDiskSizeWithoutHeader));
      meta.put(
          "first_block.uncompressed_size_without_header",
          String.valueOf(uncompressedSizeWithoutHeader));
      meta.put("first_block.prev_block_offset", String.valueOf(prevBlockOffset));
      meta.put(
          "first_block.checksum_type",
          checksumType + " " + ChecksumType.codeToType((byte) checksumType).getName());
      meta.put("first_block.bytes_per_checksum", String.valueOf(bytesPerChecksum));
      meta.put("first_block.on_disk_data_size_with_header", String.valueOf(onDiskDataSizeWithHeader));

      HFileInfo info = reader.getHFileInfo();
      meta.put("reader.data_block_encoding", reader.getDataBlockEncoding().name());
      meta.put("reader.comparator_class", t.getComparatorClassName());
      meta.put("fileinfo.count", String.valueOf(info.size()));
      for (Map.Entry<byte[], byte[]> e : info.entrySet()) {
        // A comment line naming the key, then the entry.
        meta.put("# " + Bytes.toStringBinary(e.getKey()), "");
        meta.put("fileinfo." + Bytes.toHex(e.getKey()), Bytes.toHex(e.getValue()));
      }
      meta.put(
          "fixture.general_bloom_meta_present",
          String.valueOf(reader.getGeneralBloomFilterMetadata() != null));
      meta.put(
          "fixture.delete_family_bloom_meta_present",
          String.valueOf(reader.getDeleteBloomFilterMetadata() != null));
      byte[] maxSeq = info.get(HStoreFile.MAX_SEQ_ID_KEY);
      if (maxSeq != null) {
        meta.put("fixture.max_seq_id", String.valueOf(Bytes.toLong(maxSeq)));
      }

      HFileScanner s = reader.getScanner(conf, false, false);
      if (s.seekTo()) {
        do {
          Cell c = s.getCell();
          dump.append(Cells.line(c, true)).append('\n');
          n++;
        } while (s.next());
      }
      s.close();
    }
    return n;
  }

  private static String expectedDump(List<KeyValue> cells) {
    StringBuilder sb = new StringBuilder();
    for (KeyValue kv : cells) {
      sb.append(Cells.line(kv, true)).append('\n');
    }
    return sb.toString();
  }

  private static int countRows(List<KeyValue> cells) {
    int rows = 0;
    byte[] last = null;
    for (KeyValue kv : cells) {
      byte[] r = kv.getRowArray().length == 0 ? null : Bytes.copy(kv.getRowArray(), kv.getRowOffset(), kv.getRowLength());
      if (last == null || !Bytes.equals(last, r)) {
        rows++;
        last = r;
      }
    }
    return rows;
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException("trailer read by hand disagrees with HBase's: " + what);
    }
  }

  /**
   * HFile v2. HBase 2.x writes v3 only ({@code HFile.getWriterFactory} refuses {@code
   * hfile.format.version=2}), and its v3 writer is HBase 1.x's v2 writer plus tags: without tags
   * ({@code includesTags=false}: no tags length after the value, no MAX_TAGS_LEN in file info) a
   * v3 file differs from a v2 one only in the version in the trailer and the trailer's size (212
   * bytes for v2, 4096 for v3). So this is HBase's own {@link HFileWriterImpl} stating major version
   * 2, minor version 3 (protobuf trailer, HBase checksums), which is what HBase 0.98/1.x wrote and
   * what HBase 2.x's reader still accepts (HFileInfo#checkFileVersion).
   */
  static final class V2Writer extends HFileWriterImpl {
    private V2Writer(
        Configuration conf,
        org.apache.hadoop.fs.Path path,
        FSDataOutputStream out,
        HFileContext ctx) {
      super(conf, CacheConfig.DISABLED, path, out, ctx);
    }

    @Override
    protected int getMajorVersion() {
      return 2;
    }

    @Override
    protected int getMinorVersion() {
      return 3;
    }

    static void write(
        Configuration conf,
        FileSystem fs,
        org.apache.hadoop.fs.Path path,
        HFileContext ctx,
        List<KeyValue> cells,
        long maxSeqId)
        throws IOException {
      if (ctx.isIncludesTags()) {
        throw new IllegalArgumentException("HFile v2 has no tags");
      }
      fs.delete(path, false);
      V2Writer w = new V2Writer(conf, path, createOutputStream(conf, fs, path, null), ctx);
      for (KeyValue kv : cells) {
        w.append(kv);
      }
      // The file info a store file carries (HBase 1.x's StoreFile.Writer wrote these too).
      w.appendFileInfo(HStoreFile.MAX_SEQ_ID_KEY, Bytes.toBytes(maxSeqId));
      w.appendFileInfo(HStoreFile.MAJOR_COMPACTION_KEY, Bytes.toBytes(false));
      w.close();
    }
  }
}
