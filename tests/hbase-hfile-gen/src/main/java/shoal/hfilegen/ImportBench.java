package shoal.hfilegen;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.LocalHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.tool.BulkLoadHFiles;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.zookeeper.MiniZooKeeperCluster;

/**
 * The HBase side of {@code shoal bench scenario import}, two modes, each its own JVM:
 *
 * <ul>
 *   <li>{@code serve <work> <bulk-dir> <table> <snapshot> [split...]}: a standalone HBase 2.6.1
 *       (master, region server, ZooKeeper in this JVM on 127.0.0.1, SNAPPY through
 *       hbase-compression-snappy), a table pre-split at the splits (family {@code f}: FAST_DIFF,
 *       SNAPPY, ROW bloom, compactions off), the bulk-load directory loaded with HBase's {@code
 *       BulkLoadHFiles} (files are moved in), and a snapshot of it. Prints {@code ready zk=P
 *       root=<hbase root dir> bulkload_seconds=S} and serves until stdin ends.
 *   <li>{@code copy <zk-port> <table> <shoal-rpc host:port> <shoal-table> <rows-per-region>
 *       <threads>}: the migration without Shoal's importer: scans the table from HBase with the
 *       stock hbase-client (caching 1000, all versions, no block caching, as CopyTable) and writes
 *       every row into Shoal through its native HBase RPC with a {@code BufferedMutator}. Regions
 *       are shared out among the threads; {@code rows-per-region} > 0 copies only the first rows of
 *       each region. Prints {@code copied rows=R cells=C kv_bytes=B seconds=S cpu_seconds=X}.
 * </ul>
 */
public final class ImportBench {
  static final byte[] FAMILY = Bytes.toBytes("f");

  public static void main(String[] args) throws Exception {
    if (args.length >= 4 && args[0].equals("serve")) {
      serve(args);
    } else if (args.length == 7 && args[0].equals("copy")) {
      copy(args);
    } else {
      System.err.println(
          "usage: ImportBench serve <work> <bulk-dir> <table> <snapshot> [split...]\n"
              + "       ImportBench copy <zk-port> <table> <shoal-rpc> <shoal-table>"
              + " <rows-per-region> <threads>");
      System.exit(2);
    }
  }

  private static void serve(String[] args) throws Exception {
    File work = new File(args[1]).getAbsoluteFile();
    File bulk = new File(args[2]).getAbsoluteFile();
    TableName table = TableName.valueOf(args[3]);
    String snapshot = args[4];
    byte[][] splits = new byte[args.length - 5][];
    for (int i = 5; i < args.length; i++) {
      splits[i - 5] = Bytes.toBytes(args[i]);
    }
    Files.createDirectories(work.toPath());
    SnapshotGen.logTo(new File(work, "hbase.log"));
    int zkPort = SnapshotGen.freePort();
    Configuration conf =
        SnapshotGen.configuration(work, zkPort, SnapshotGen.freePort(), SnapshotGen.freePort());
    HFileGen.setCodecs(conf);
    conf.setInt("hbase.regionserver.handler.count", 16);
    MiniZooKeeperCluster zk = new MiniZooKeeperCluster(conf);
    zk.setDefaultClientPort(zkPort);
    if (zk.startup(new File(work, "zk")) != zkPort) {
      throw new IOException("ZooKeeper could not bind port " + zkPort);
    }
    LocalHBaseCluster cluster =
        new LocalHBaseCluster(conf, 1, 1, HMaster.class, HRegionServer.class);
    cluster.startup();
    int code = 0;
    try (Connection conn = SnapshotGen.connect(conf, cluster);
        Admin admin = conn.getAdmin()) {
      admin.createTable(
          TableDescriptorBuilder.newBuilder(table)
              .setColumnFamily(
                  ColumnFamilyDescriptorBuilder.newBuilder(FAMILY)
                      .setMaxVersions(1)
                      .setDataBlockEncoding(DataBlockEncoding.FAST_DIFF)
                      .setCompressionType(Compression.Algorithm.SNAPPY)
                      .setBloomFilterType(BloomType.ROW)
                      .build())
              .setCompactionEnabled(false)
              .build(),
          splits);
      long t0 = System.nanoTime();
      BulkLoadHFiles.create(conf).bulkLoad(table, new Path(bulk.toURI()));
      double loadSeconds = (System.nanoTime() - t0) / 1e9;
      admin.snapshot(snapshot, table);
      System.out.printf(
          "ready zk=%d root=%s bulkload_seconds=%.2f regions=%d%n",
          zkPort, new File(work, "root").getPath(), loadSeconds, admin.getRegions(table).size());
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // serve until stdin ends
      }
    } catch (Throwable t) {
      System.err.println("ImportBench serve failed: " + t);
      t.printStackTrace();
      code = 1;
    } finally {
      Thread stopper =
          new Thread(
              () -> {
                cluster.shutdown();
                cluster.join();
              });
      stopper.setDaemon(true);
      stopper.start();
      stopper.join(20_000);
      zk.shutdown();
    }
    Runtime.getRuntime().halt(code);
  }

  private static void copy(String[] args) throws Exception {
    HFileGen.quietLogging();
    int zkPort = Integer.parseInt(args[1]);
    TableName table = TableName.valueOf(args[2]);
    String shoal = args[3];
    TableName shoalTable = TableName.valueOf(args[4]);
    long rowsPerRegion = Long.parseLong(args[5]);
    int threads = Math.max(1, Integer.parseInt(args[6]));

    Configuration hb = HBaseConfiguration.create();
    hb.set("hbase.zookeeper.quorum", "127.0.0.1");
    hb.setInt("hbase.zookeeper.property.clientPort", zkPort);
    Configuration sh = HBaseConfiguration.create();
    sh.set(
        "hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    sh.set("hbase.client.bootstrap.servers", shoal);

    AtomicLong rows = new AtomicLong(), cells = new AtomicLong(), bytes = new AtomicLong();
    long t0 = System.nanoTime();
    try (Connection from = ConnectionFactory.createConnection(hb);
        Connection to = ConnectionFactory.createConnection(sh);
        RegionLocator locator = from.getRegionLocator(table)) {
      byte[][] starts = locator.getStartKeys();
      byte[][] ends = locator.getEndKeys();
      List<Thread> workers = new ArrayList<>();
      List<Throwable> failures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        Thread w =
            new Thread(
                () -> {
                  try (Table src = from.getTable(table);
                      BufferedMutator out =
                          to.getBufferedMutator(
                              new BufferedMutatorParams(shoalTable)
                                  .writeBufferSize(4 << 20))) {
                    for (int r = me; r < starts.length; r += threads) {
                      Scan scan =
                          new Scan()
                              .withStartRow(starts[r])
                              .withStopRow(ends[r])
                              .readAllVersions()
                              .setCaching(1000)
                              .setCacheBlocks(false);
                      long n = 0;
                      try (ResultScanner scanner = src.getScanner(scan)) {
                        for (Result result : scanner) {
                          Put put = new Put(result.getRow());
                          for (Cell c : result.rawCells()) {
                            put.add(c);
                            cells.incrementAndGet();
                            bytes.addAndGet(c.getSerializedSize());
                          }
                          out.mutate(put);
                          rows.incrementAndGet();
                          if (rowsPerRegion > 0 && ++n >= rowsPerRegion) {
                            break;
                          }
                        }
                      }
                    }
                    out.flush();
                  } catch (Throwable e) {
                    synchronized (failures) {
                      failures.add(e);
                    }
                  }
                });
        workers.add(w);
        w.start();
      }
      for (Thread w : workers) {
        w.join();
      }
      if (!failures.isEmpty()) {
        failures.get(0).printStackTrace();
        System.err.println("copy failed: " + failures.get(0));
        Runtime.getRuntime().halt(1);
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    System.out.printf(
        "copied rows=%d cells=%d kv_bytes=%d seconds=%.3f cpu_seconds=%.3f%n",
        rows.get(), cells.get(), bytes.get(), seconds, os.getProcessCpuTime() / 1e9);
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
