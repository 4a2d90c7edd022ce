package shoal.hfilegen;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.LocalHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil;
import org.apache.hadoop.hbase.shaded.protobuf.generated.SnapshotProtos.SnapshotDescription;
import org.apache.hadoop.hbase.shaded.protobuf.generated.SnapshotProtos.SnapshotRegionManifest;
import org.apache.hadoop.hbase.snapshot.SnapshotDescriptionUtils;
import org.apache.hadoop.hbase.snapshot.SnapshotManifest;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.CompressionTest;
import org.apache.hadoop.hbase.zookeeper.MiniZooKeeperCluster;
import org.apache.log4j.FileAppender;
import org.apache.log4j.Level;
import org.apache.log4j.LogManager;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * Makes a real HBase snapshot of a multi-region table with a standalone HBase 2.6.1 started in this
 * JVM (master, region server and ZooKeeper on 127.0.0.1, ports below 32768, data in a temp dir),
 * and copies HBase's on-disk layout of it into {@code <fixtures-dir>/hbase-root/}.
 *
 * <p>Usage: {@code SnapshotGen <fixtures-dir>}. The cluster is configured as {@code
 * tests/hbase-server}'s {@code Standalone} configures it (that code is copied here, in-process, so
 * that this program reaches the region server's data directory directly and needs no second JVM).
 *
 * <p>What the fixture proves to an importer (see the fixtures' README.md):
 *
 * <ul>
 *   <li>table {@code imp}, pre-split at r0050, r0100, r0150 (4 regions), then the region
 *       [r0100, r0150) split at r0125 with compactions disabled on the table, so the two daughters
 *       hold <b>reference files</b> (top and bottom halves) to their parent's HFiles, and the
 *       split parent stays in the snapshot (offline, split);
 *   <li>three families: {@code cf} (VERSIONS=3, FAST_DIFF, SNAPPY through HBase's
 *       hbase-compression-snappy, GZ if that codec cannot load), {@code ttl} (TTL=3600 s,
 *       VERSIONS=1, PREFIX, GZ), {@code raw} (VERSIONS=5, MIN_VERSIONS=1, no encoding, no
 *       compression, BLOCKSIZE=8192);
 *   <li>two flushes, so regions have two HFiles per family; the second holds delete markers of
 *       every kind (row delete = DeleteFamily in each family, column delete = DeleteColumn, version
 *       delete = Delete, family delete = DeleteFamily, DeleteFamilyVersion) over cells of the first;
 *   <li>{@code ttl} cells written with timestamps two hours old and fresh ones, while the family
 *       had no TTL yet; the TTL of one hour is set afterwards (files unchanged, no compaction), so
 *       the files hold cells that are expired at snapshot time, as a store whose cells outlived
 *       their TTL between compactions does;
 *   <li>{@code imp_snap.expected}: a raw scan, all versions, of {@code imp_clone}, a clone of the
 *       snapshot made by HBase ({@code cloneSnapshot}); {@code imp_snap.expected-visible}: a normal
 *       scan of it (what users see, TTL applied at the scan's wall time).
 * </ul>
 */
public final class SnapshotGen {
  private static final String HOST = "127.0.0.1";
  private static final Logger LOG = Logger.getLogger("shoal.hfilegen.SnapshotGen");
  private static final Set<Integer> TAKEN = new HashSet<>();
  static final TableName TABLE = TableName.valueOf("imp");
  static final TableName CLONE = TableName.valueOf("imp_clone");
  static final String SNAPSHOT = "imp_snap";
  static final byte[] CF = Bytes.toBytes("cf");
  static final byte[] TTL = Bytes.toBytes("ttl");
  static final byte[] RAW = Bytes.toBytes("raw");
  static final int ROWS = 200;

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: SnapshotGen <fixtures-dir>");
      System.exit(2);
    }
    File fixtures = new File(args[0]).getAbsoluteFile();
    Path work = Files.createTempDirectory("shoal-hfilegen-hbase-");
    logTo(work.resolve("hbase.log").toFile());
    int code = 0;
    try {
      run(work.toFile(), new File(fixtures, "hbase-root"));
    } catch (Throwable t) {
      LOG.error("snapshot generation failed", t);
      System.err.println("snapshot generation failed: " + t);
      t.printStackTrace();
      System.err.println("--- end of " + work.resolve("hbase.log") + " ---");
      List<String> log = Files.readAllLines(work.resolve("hbase.log"));
      log.subList(Math.max(0, log.size() - 60), log.size()).forEach(System.err::println);
      code = 1;
    }
    LogManager.shutdown();
    deleteTree(work);
    // HBase leaves non-daemon threads behind: exit explicitly.
    Runtime.getRuntime().halt(code);
  }

  private static void run(File work, File out) throws Exception {
    int zkPort = freePort();
    Configuration conf = configuration(work, zkPort, freePort(), freePort());
    HFileGen.setCodecs(conf); // SNAPPY/LZ4/ZSTD through HBase's own codec modules, in this JVM

    MiniZooKeeperCluster zk = new MiniZooKeeperCluster(conf);
    zk.setDefaultClientPort(zkPort);
    if (zk.startup(new File(work, "zk")) != zkPort) {
      throw new IOException("ZooKeeper could not bind port " + zkPort);
    }
    LocalHBaseCluster cluster =
        new LocalHBaseCluster(conf, 1, 1, HMaster.class, HRegionServer.class);
    cluster.startup();
    try (Connection conn = connect(conf, cluster);
        Admin admin = conn.getAdmin()) {
      System.out.println("HBase " + org.apache.hadoop.hbase.util.VersionInfo.getVersion() + " up");
      generate(conf, conn, admin, out);
    } finally {
      Thread stopper =
          new Thread(
              () -> {
                cluster.shutdown();
                cluster.join();
              });
      stopper.setDaemon(true);
      stopper.start();
      stopper.join(30_000);
      zk.shutdown();
    }
  }

  private static void generate(Configuration conf, Connection conn, Admin admin, File out)
      throws Exception {
    // --- The table: 4 regions, 3 families, compactions off (daughters keep reference files).
    Compression.Algorithm cfCompression = Compression.Algorithm.SNAPPY;
    try {
      CompressionTest.testCompression(Compression.Algorithm.SNAPPY);
    } catch (Throwable t) {
      System.out.println("SNAPPY cannot be used (" + t + "): family cf falls back to GZ");
      cfCompression = Compression.Algorithm.GZ;
    }
    ColumnFamilyDescriptor cf =
        ColumnFamilyDescriptorBuilder.newBuilder(CF)
            .setMaxVersions(3)
            .setDataBlockEncoding(DataBlockEncoding.FAST_DIFF)
            .setCompressionType(cfCompression)
            .build();
    // No TTL yet: set after the data is flushed (see the class comment).
    ColumnFamilyDescriptor ttlNoTtl =
        ColumnFamilyDescriptorBuilder.newBuilder(TTL)
            .setMaxVersions(1)
            .setDataBlockEncoding(DataBlockEncoding.PREFIX)
            .setCompressionType(Compression.Algorithm.GZ)
            .build();
    ColumnFamilyDescriptor raw =
        ColumnFamilyDescriptorBuilder.newBuilder(RAW)
            .setMaxVersions(5)
            .setMinVersions(1)
            .setDataBlockEncoding(DataBlockEncoding.NONE)
            .setCompressionType(Compression.Algorithm.NONE)
            .setBlocksize(8192)
            .build();
    TableDescriptor desc =
        TableDescriptorBuilder.newBuilder(TABLE)
            .setColumnFamily(cf)
            .setColumnFamily(ttlNoTtl)
            .setColumnFamily(raw)
            .setCompactionEnabled(false)
            .build();
    byte[][] splits = {row(50), row(100), row(150)};
    admin.createTable(desc, splits);
    System.out.println("created " + TABLE + " with " + admin.getRegions(TABLE).size() + " regions");

    long now = System.currentTimeMillis();
    long old = now - TimeUnit.HOURS.toMillis(2); // older than the TTL set below
    Random rnd = new Random(4242);
    int cells = 0;
    try (Table t = conn.getTable(TABLE)) {
      // --- Phase 1: puts, then flush (first HFile of every store).
      List<Put> puts = new ArrayList<>();
      for (int r = 0; r < ROWS; r++) {
        Put p = new Put(row(r));
        for (String q : new String[] {"a", "bb"}) {
          for (int v = 0; v < 2; v++) {
            p.addColumn(CF, Bytes.toBytes(q), now - 100_000 - v * 1000L, value(rnd, r, 16));
            cells++;
          }
        }
        // ttl: even rows expired (two hours old), rows divisible by 3 fresh too.
        if (r % 2 == 0) {
          p.addColumn(TTL, Bytes.toBytes("t"), old + r, value(rnd, r, 8));
          cells++;
        }
        if (r % 3 == 0) {
          p.addColumn(TTL, Bytes.toBytes("u"), now - 50_000, value(rnd, r, 8));
          cells++;
        }
        for (int v = 0; v < 3; v++) {
          // raw: some empty values, some of 1.5 KB (over the .cells inline limit).
          byte[] val = r % 17 == 0 && v == 0 ? new byte[0] : value(rnd, r, r % 23 == 0 ? 1500 : 12);
          p.addColumn(RAW, Bytes.toBytes("r1"), now - 100_000 - v * 1000L, val);
          cells++;
        }
        puts.add(p);
      }
      t.put(puts);
      admin.flush(TABLE);
      System.out.println("phase 1: " + cells + " cells, flushed");

      // --- Phase 2: newer versions and delete markers, then flush (second HFile).
      puts.clear();
      for (int r = 0; r < ROWS; r += 2) {
        Put p = new Put(row(r));
        for (int v = 0; v < 2; v++) {
          p.addColumn(CF, Bytes.toBytes("a"), now - 50_000 - v * 1000L, value(rnd, r, 16));
          p.addColumn(RAW, Bytes.toBytes("r1"), now - 50_000 - v * 1000L, value(rnd, r, 12));
        }
        p.addColumn(RAW, Bytes.toBytes("r2"), now - 50_000, value(rnd, r, 12));
        puts.add(p);
      }
      t.put(puts);
      List<Delete> deletes = new ArrayList<>();
      for (int r = 3; r < ROWS; r += 10) {
        // Row delete: a DeleteFamily marker in every family.
        deletes.add(new Delete(row(r), now - 60_000));
        // Column delete (all versions up to the timestamp): DeleteColumn.
        deletes.add(new Delete(row(r + 1)).addColumns(CF, Bytes.toBytes("bb"), now - 60_000));
        // Version delete (exactly one version): Delete.
        deletes.add(new Delete(row(r + 2)).addColumn(CF, Bytes.toBytes("a"), now - 101_000));
        // Family delete: DeleteFamily in one family.
        deletes.add(new Delete(row(r + 4)).addFamily(RAW, now - 60_000));
        // Family version delete: DeleteFamilyVersion (every column's version at that timestamp).
        deletes.add(new Delete(row(r + 5)).addFamilyVersion(CF, now - 100_000));
      }
      t.delete(deletes);
      admin.flush(TABLE);
      System.out.println("phase 2: newer versions and " + 5 * ((ROWS - 3 + 9) / 10) + " deletes, flushed");
    }

    // --- TTL of one hour on `ttl`, after the fact: regions reopen, files stay as they are.
    admin.modifyColumnFamily(
        TABLE,
        ColumnFamilyDescriptorBuilder.newBuilder(admin.getDescriptor(TABLE).getColumnFamily(TTL))
            .setTimeToLive(3600)
            .build());

    // --- Split [r0100, r0150) at r0125; compactions are off, so the daughters keep references.
    RegionInfo parent = null;
    for (RegionInfo ri : admin.getRegions(TABLE)) {
      if (Bytes.equals(ri.getStartKey(), row(100))) {
        parent = ri;
      }
    }
    if (parent == null) {
      throw new IllegalStateException("no region starts at r0100");
    }
    admin.splitRegionAsync(parent.getRegionName(), row(125)).get(120, TimeUnit.SECONDS);
    long deadline = System.currentTimeMillis() + 60_000;
    while (admin.getRegions(TABLE).size() != 5) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the split did not give 5 regions");
      }
      Thread.sleep(200);
    }
    System.out.println("split " + parent.getEncodedName() + " at r0125: " + regions(admin, TABLE));

    // --- The snapshot, then the copy of HBase's layout of it.
    admin.snapshot(SNAPSHOT, TABLE);
    Path root = new File(conf.get("hbase.rootdir").substring("file:".length())).toPath();
    deleteTree(out.toPath());
    copyLayout(root, out.toPath());
    describeSnapshot(conf, new File(out, ".hbase-snapshot/" + SNAPSHOT), new File(out, SNAPSHOT + ".manifest"));

    // --- What HBase itself reads from the snapshot: clone it and scan.
    admin.cloneSnapshot(SNAPSHOT, CLONE);
    TableDescriptor cloneDesc = admin.getDescriptor(CLONE);
    List<String> header = new ArrayList<>();
    header.add("# region start keys (hex, '' = first) = " + startKeys(conn, CLONE));
    header.add("# region layout = " + regions(admin, CLONE));
    header.add("# descriptor = " + cloneDesc);
    long rawAt = System.currentTimeMillis();
    int n =
        dump(
            conn,
            new Scan().setRaw(true).readAllVersions(),
            header,
            "# raw scan (Scan.setRaw(true).readAllVersions()) of imp_clone, a clone of imp_snap,"
                + " by HBase 2.6.1; scan_wall_time_ms = "
                + rawAt,
            new File(out, SNAPSHOT + ".expected"));
    long visAt = System.currentTimeMillis();
    int m =
        dump(
            conn,
            new Scan().readAllVersions(),
            header,
            "# normal scan (Scan.readAllVersions(), not raw) of imp_clone: what users see; TTL"
                + " applied at scan_wall_time_ms = "
                + visAt
                + " (cells written at data_time_ms = "
                + now
                + ")",
            new File(out, SNAPSHOT + ".expected-visible"));
    System.out.println("clone scanned: " + n + " cells raw, " + m + " visible");
  }

  /** Every cell of {@code CLONE} by {@code scan}, in the .cells format, one family per line. */
  private static int dump(
      Connection conn, Scan scan, List<String> header, String first, File file) throws IOException {
    int n = 0;
    try (Table t = conn.getTable(CLONE);
        ResultScanner rs = t.getScanner(scan);
        PrintWriter w = new PrintWriter(file, "UTF-8")) {
      w.println(first);
      header.forEach(w::println);
      for (Result r : rs) {
        for (Cell c : r.rawCells()) {
          w.println(Cells.line(c, false));
          n++;
        }
      }
    }
    return n;
  }

  /**
   * Copies what the snapshot refers to, in HBase's own layout: the snapshot ({@code
   * .hbase-snapshot/imp_snap}), the table ({@code data/default/imp}), {@code archive/} if any,
   * {@code hbase.version} and {@code hbase.id}. Left out: WALs, MasterData, .tmp, oldWALs,
   * hbase:meta, other tables, and the local file system's {@code .*.crc} side files (Hadoop's
   * LocalFileSystem writes one next to every file; they are not HBase's).
   */
  private static void copyLayout(Path root, Path out) throws IOException {
    Files.createDirectories(out);
    copyTree(root.resolve(".hbase-snapshot").resolve(SNAPSHOT), out.resolve(".hbase-snapshot").resolve(SNAPSHOT));
    copyTree(root.resolve("data/default/imp"), out.resolve("data/default/imp"));
    Path archive = root.resolve("archive/data/default/imp");
    if (Files.exists(archive)) {
      copyTree(archive, out.resolve("archive/data/default/imp"));
    }
    for (String f : new String[] {"hbase.version", "hbase.id"}) {
      if (Files.exists(root.resolve(f))) {
        Files.copy(root.resolve(f), out.resolve(f), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        String name = p.getFileName().toString();
        Path rel = from.relativize(p);
        if (name.startsWith(".") && name.endsWith(".crc")) {
          continue;
        }
        if (rel.toString().equals(".tmp") || rel.toString().startsWith(".tmp/")) {
          continue;
        }
        Path target = to.resolve(rel.toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.createDirectories(target.getParent());
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  /**
   * The snapshot's manifest as HBase reads it ({@link SnapshotManifest}): every region (keys,
   * offline/split flags) and every store file, with a reference file's split key and half. An
   * importer must find the same.
   */
  private static void describeSnapshot(Configuration conf, File snapshotDir, File out)
      throws IOException {
    FileSystem fs = FileSystem.getLocal(conf);
    org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path(snapshotDir.getAbsolutePath());
    SnapshotDescription sd = SnapshotDescriptionUtils.readSnapshotInfo(fs, dir);
    SnapshotManifest manifest = SnapshotManifest.open(conf, fs, dir, sd);
    int refs = 0;
    try (PrintWriter w = new PrintWriter(out, "UTF-8")) {
      w.println("# imp_snap's manifest as HBase 2.6.1 reads it (SnapshotManifest)");
      w.println("snapshot\t" + sd.getName() + "\ttable=" + sd.getTable() + "\ttype=" + sd.getType()
          + "\tversion=" + sd.getVersion() + "\tcreation_time=" + sd.getCreationTime());
      List<SnapshotRegionManifest> regions = new ArrayList<>(manifest.getRegionManifests());
      regions.sort(
          Comparator.comparing(
              (SnapshotRegionManifest r) -> ProtobufUtil.toRegionInfo(r.getRegionInfo()),
              RegionInfo.COMPARATOR));
      for (SnapshotRegionManifest rm : regions) {
        RegionInfo ri = ProtobufUtil.toRegionInfo(rm.getRegionInfo());
        w.println(
            "region\t"
                + ri.getEncodedName()
                + "\tstart="
                + Bytes.toHex(ri.getStartKey())
                + "\tend="
                + Bytes.toHex(ri.getEndKey())
                + "\tregion_id="
                + ri.getRegionId()
                + "\toffline="
                + ri.isOffline()
                + "\tsplit="
                + ri.isSplit());
        for (SnapshotRegionManifest.FamilyFiles ff : rm.getFamilyFilesList()) {
          for (SnapshotRegionManifest.StoreFile sf : ff.getStoreFilesList()) {
            String ref = "-";
            if (sf.hasReference()) {
              ref =
                  "reference:"
                      + sf.getReference().getRange()
                      + ":splitkey="
                      + Bytes.toHex(sf.getReference().getSplitkey().toByteArray());
              refs++;
            }
            w.println(
                "file\t"
                    + ri.getEncodedName()
                    + "\t"
                    + Bytes.toString(ff.getFamilyName().toByteArray())
                    + "\t"
                    + sf.getName()
                    + "\tsize="
                    + sf.getFileSize()
                    + "\t"
                    + ref);
          }
        }
      }
    }
    System.out.println(
        "snapshot manifest: " + manifest.getRegionManifests().size() + " regions, " + refs
            + " reference files");
  }

  private static String startKeys(Connection conn, TableName table) throws IOException {
    List<String> keys = new ArrayList<>();
    for (byte[] k : conn.getRegionLocator(table).getStartKeys()) {
      keys.add("'" + Bytes.toHex(k) + "'");
    }
    return String.join(",", keys);
  }

  private static String regions(Admin admin, TableName table) throws IOException {
    List<String> out = new ArrayList<>();
    List<RegionInfo> rs = new ArrayList<>(admin.getRegions(table));
    rs.sort(RegionInfo.COMPARATOR);
    for (RegionInfo ri : rs) {
      out.add(
          "["
              + Bytes.toStringBinary(ri.getStartKey())
              + ","
              + Bytes.toStringBinary(ri.getEndKey())
              + ")");
    }
    return String.join(" ", out);
  }

  static byte[] row(int i) {
    return Bytes.toBytes(String.format("r%04d", i));
  }

  private static byte[] value(Random rnd, int r, int len) {
    byte[] v = new byte[len];
    for (int i = 0; i < len; i++) {
      v[i] = (byte) ('a' + rnd.nextInt(26));
    }
    byte[] tag = Bytes.toBytes("v" + r + ":");
    System.arraycopy(tag, 0, v, 0, Math.min(tag.length, len));
    return v;
  }

  /** A client connection, once the cluster serves (it may take a few seconds). */
  static Connection connect(Configuration conf, LocalHBaseCluster cluster)
      throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    Exception last = null;
    while (System.currentTimeMillis() < deadline) {
      HMaster master = cluster.getMaster(0);
      if (master.isAborted() || master.isStopped()) {
        throw new IOException("the master stopped while starting", last);
      }
      Connection conn = ConnectionFactory.createConnection(conf);
      try (Admin admin = conn.getAdmin()) {
        if (master.isInitialized()) {
          admin.listTableNames();
          return conn;
        }
      } catch (Exception e) {
        last = e;
      }
      conn.close();
      Thread.sleep(500);
    }
    throw new IOException("HBase did not serve within 120 s", last);
  }

  /**
   * The standalone server's configuration: loopback only, small, quiet. The same as {@code
   * tests/hbase-server/src/main/java/shoal/hbase/Standalone.java}'s.
   */
  static Configuration configuration(File work, int zkPort, int masterPort, int rsPort) {
    Configuration conf = HBaseConfiguration.create();
    conf.setBoolean("hbase.cluster.distributed", false);
    conf.set("fs.defaultFS", "file:///");
    conf.set("hbase.rootdir", new File(work, "root").toURI().toString());
    conf.set("hbase.tmp.dir", new File(work, "tmp").getPath());
    conf.set("hadoop.tmp.dir", new File(work, "tmp/hadoop").getPath());
    conf.set("hbase.zookeeper.property.dataDir", new File(work, "zk").getPath());
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    conf.set("hbase.zookeeper.quorum", HOST);
    conf.setInt("hbase.zookeeper.property.clientPort", zkPort);
    conf.set("hbase.zookeeper.property.clientPortAddress", HOST);
    conf.setInt("hbase.master.port", masterPort);
    conf.setInt("hbase.regionserver.port", rsPort);
    conf.setBoolean("hbase.localcluster.assign.random.ports", false);
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    conf.set("hbase.master.hostname", HOST);
    conf.set("hbase.unsafe.regionserver.hostname", HOST);
    conf.set("hbase.master.ipc.address", HOST);
    conf.set("hbase.regionserver.ipc.address", HOST);
    conf.setBoolean("hbase.server.useip.enabled", true);
    conf.setInt("hbase.master.wait.on.regionservers.mintostart", 1);
    conf.setInt("hbase.master.wait.on.regionservers.maxtostart", 1);
    conf.setInt("hbase.regionserver.handler.count", 8);
    conf.setInt("hbase.regionserver.metahandler.count", 4);
    conf.setInt("hbase.regionserver.replication.handler.count", 1);
    conf.setInt("hbase.master.executor.openregion.threads", 2);
    conf.setInt("hbase.master.executor.closeregion.threads", 2);
    conf.setInt("hbase.regionserver.executor.openregion.threads", 2);
    conf.setInt("hbase.regionserver.executor.closeregion.threads", 2);
    conf.setInt("hbase.master.procedure.threads", 4);
    conf.setInt("hbase.netty.eventloop.rpcserver.thread.count", 2);
    // The split parent must stay (its files are what the daughters' references point to): no
    // catalog janitor run during the few seconds this takes anyway, but make it explicit.
    conf.setInt("hbase.catalogjanitor.interval", 3_600_000);
    return conf;
  }

  /** A port below 32768 that 127.0.0.1 can bind now (and that this run has not handed out). */
  static int freePort() throws IOException {
    InetAddress lo = InetAddress.getByName(HOST);
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(10_000, 32_768);
      if (TAKEN.contains(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(false);
        s.bind(new InetSocketAddress(lo, port));
        TAKEN.add(port);
        return port;
      } catch (IOException e) {
        // taken: try another
      }
    }
    throw new IOException("no free loopback port below 32768");
  }

  /** Every logger to {@code file} at WARN, nothing on the console. */
  static void logTo(File file) throws IOException {
    LogManager.resetConfiguration();
    FileAppender appender =
        new FileAppender(
            new PatternLayout("%d{ISO8601} %-5p [%t] %c{2}: %m%n"), file.getPath(), true);
    Logger root = Logger.getRootLogger();
    root.addAppender(appender);
    root.setLevel(Level.WARN);
    LOG.setLevel(Level.INFO);
    java.util.logging.LogManager.getLogManager().reset();
    java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.SEVERE);
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private SnapshotGen() {}
}
