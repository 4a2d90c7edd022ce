package shoal.hbase;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.LocalHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.thrift.ThriftServer;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.zookeeper.MiniZooKeeperCluster;
import org.apache.log4j.FileAppender;
import org.apache.log4j.Level;
import org.apache.log4j.LogManager;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * A real, standalone HBase 2.6.1 (master, region server and ZooKeeper in this JVM, data in a local
 * directory) on 127.0.0.1, for Shoal's differential tests, optionally with HBase's Thrift1 gateway.
 *
 * <p>Usage: {@code Standalone <work-dir> [--thrift] [--delete-work] [--zk-port N] [--master-port
 * N] [--rs-port N] [--thrift-port N]}. Ports not given are free loopback ports below 32768 (out of
 * Linux's ephemeral range). Everything is configured here, no hbase-site.xml: data under {@code
 * <work>/root}, log (WARN) in {@code <work>/hbase.log}. Once a client bootstrapped from the master
 * port ({@code RpcConnectionRegistry}) has created a table, put and got a row, it prints one line,
 * {@code ready master=127.0.0.1:P rs=127.0.0.1:P zk=127.0.0.1:P thrift=127.0.0.1:P} ({@code
 * thrift=-} without {@code --thrift}), and runs until its stdin reaches end of file; then it stops
 * HBase (at most 20 s), deletes the work directory with {@code --delete-work}, and exits.
 */
public final class Standalone {
  private static final String HOST = "127.0.0.1";
  private static final Logger LOG = Logger.getLogger("shoal.hbase.Standalone");
  private static final Set<Integer> TAKEN = new HashSet<>();

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println(
          "usage: Standalone <work-dir> [--thrift] [--delete-work] [--zk-port N]"
              + " [--master-port N] [--rs-port N] [--thrift-port N]");
      System.exit(2);
    }
    File work = new File(args[0]).getAbsoluteFile();
    boolean thrift = false;
    boolean deleteWork = false;
    int zkPort = 0, masterPort = 0, rsPort = 0, thriftPort = 0;
    for (int i = 1; i < args.length; i++) {
      switch (args[i]) {
        case "--thrift" -> thrift = true;
        case "--delete-work" -> deleteWork = true;
        case "--zk-port" -> zkPort = Integer.parseInt(args[++i]);
        case "--master-port" -> masterPort = Integer.parseInt(args[++i]);
        case "--rs-port" -> rsPort = Integer.parseInt(args[++i]);
        case "--thrift-port" -> thriftPort = Integer.parseInt(args[++i]);
        default -> {
          System.err.println("unknown argument: " + args[i]);
          System.exit(2);
        }
      }
    }
    if (!work.isDirectory() && !work.mkdirs()) {
      System.err.println("cannot create " + work);
      System.exit(1);
    }
    logTo(new File(work, "hbase.log"));
    try {
      run(work, thrift, deleteWork, zkPort, masterPort, rsPort, thriftPort);
    } catch (Throwable t) {
      LOG.error("standalone HBase failed", t);
      System.err.println("standalone HBase failed: " + t + " (see " + work + "/hbase.log)");
      Runtime.getRuntime().halt(1);
    }
  }

  private static void run(
      File work,
      boolean thrift,
      boolean deleteWork,
      int zkPort,
      int masterPort,
      int rsPort,
      int thriftPort)
      throws Exception {
    long t0 = System.nanoTime();
    zkPort = zkPort > 0 ? zkPort : freePort();
    masterPort = masterPort > 0 ? masterPort : freePort();
    rsPort = rsPort > 0 ? rsPort : freePort();
    if (thrift) {
      thriftPort = thriftPort > 0 ? thriftPort : freePort();
    }
    Configuration conf = configuration(work, zkPort, masterPort, rsPort);

    MiniZooKeeperCluster zk = new MiniZooKeeperCluster(conf);
    zk.setDefaultClientPort(zkPort);
    int zkActual = zk.startup(new File(work, "zk"));
    if (zkActual != zkPort) {
      throw new IOException("ZooKeeper could not bind port " + zkPort);
    }
    LocalHBaseCluster cluster =
        new LocalHBaseCluster(conf, 1, 1, HMaster.class, HRegionServer.class);
    cluster.startup();

    // A connection as Shoal's tests make it: bootstrapped from the master's RPC port.
    probe(cluster, masterPort);
    LOG.info(String.format("HBase up and serving in %.1f s", (System.nanoTime() - t0) / 1e9));

    ThriftServer thriftServer = null;
    if (thrift) {
      Configuration tc = new Configuration(conf);
      tc.setInt("hbase.regionserver.thrift.port", thriftPort);
      tc.set("hbase.regionserver.thrift.ipaddress", HOST);
      tc.setInt("hbase.thrift.info.port", -1);
      // The defaults, spelled out: what happybase 1.3.0 speaks by default.
      tc.set("hbase.regionserver.thrift.server.type", "threadpool");
      tc.setBoolean("hbase.regionserver.thrift.framed", false);
      tc.setBoolean("hbase.regionserver.thrift.compact", false);
      ThriftServer ts = new ThriftServer(tc);
      thriftServer = ts;
      Thread t =
          new Thread(
              () -> {
                try {
                  ts.run(null);
                } catch (Throwable e) {
                  LOG.error("Thrift gateway failed", e);
                }
              },
              "thrift-gateway");
      t.setDaemon(true);
      t.start();
      waitForPort(thriftPort, 60_000);
    }

    System.out.println(
        "ready master="
            + HOST
            + ":"
            + masterPort
            + " rs="
            + HOST
            + ":"
            + rsPort
            + " zk="
            + HOST
            + ":"
            + zkPort
            + " thrift="
            + (thrift ? HOST + ":" + thriftPort : "-"));
    System.out.flush();

    // Until the parent closes our stdin (or dies).
    InputStream in = System.in;
    byte[] buf = new byte[256];
    while (in.read(buf) >= 0) {}
    LOG.info("stdin closed: stopping");

    Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(20_000);
              } catch (InterruptedException e) {
                return;
              }
              LOG.warn("shutdown took over 20 s: halting");
              if (deleteWork) {
                deleteTree(work.toPath());
              }
              Runtime.getRuntime().halt(0);
            },
            "shutdown-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      if (thriftServer != null) {
        thriftServer.stop();
      }
      cluster.shutdown();
      cluster.join();
      zk.shutdown();
    } catch (Throwable e) {
      LOG.warn("error while stopping", e);
    }
    if (deleteWork) {
      LogManager.shutdown();
      deleteTree(work.toPath());
    }
    System.exit(0);
  }

  /** The whole configuration of the standalone server: loopback only, small, quiet. */
  private static Configuration configuration(File work, int zkPort, int masterPort, int rsPort) {
    Configuration conf = HBaseConfiguration.create();
    conf.setBoolean("hbase.cluster.distributed", false);
    conf.set("fs.defaultFS", "file:///");
    conf.set("hbase.rootdir", new File(work, "root").toURI().toString());
    conf.set("hbase.tmp.dir", new File(work, "tmp").getPath());
    conf.set("hadoop.tmp.dir", new File(work, "tmp/hadoop").getPath());
    conf.set("hbase.zookeeper.property.dataDir", new File(work, "zk").getPath());
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    // ZooKeeper on loopback.
    conf.set("hbase.zookeeper.quorum", HOST);
    conf.setInt("hbase.zookeeper.property.clientPort", zkPort);
    conf.set("hbase.zookeeper.property.clientPortAddress", HOST);
    // Master and region server: fixed loopback ports, no web UIs, addresses as 127.0.0.1.
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
    // Start as soon as the one region server has checked in.
    conf.setInt("hbase.master.wait.on.regionservers.mintostart", 1);
    conf.setInt("hbase.master.wait.on.regionservers.maxtostart", 1);
    // Small: few threads (2 cores are enough).
    conf.setInt("hbase.regionserver.handler.count", 8);
    conf.setInt("hbase.regionserver.metahandler.count", 4);
    conf.setInt("hbase.regionserver.replication.handler.count", 1);
    conf.setInt("hbase.master.executor.openregion.threads", 2);
    conf.setInt("hbase.master.executor.closeregion.threads", 2);
    conf.setInt("hbase.regionserver.executor.openregion.threads", 2);
    conf.setInt("hbase.regionserver.executor.closeregion.threads", 2);
    conf.setInt("hbase.master.procedure.threads", 4);
    conf.setInt("hbase.netty.eventloop.rpcserver.thread.count", 2);
    return conf;
  }

  /** Creates a table, puts and gets a row through RpcConnectionRegistry at {@code port}. */
  private static void probe(LocalHBaseCluster cluster, int port) throws Exception {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", HOST + ":" + port);
    TableName name = TableName.valueOf("shoal_standalone_probe");
    long deadline = System.currentTimeMillis() + 120_000;
    Exception last = null;
    while (System.currentTimeMillis() < deadline) {
      HMaster master = cluster.getMaster(0);
      HRegionServer rs = cluster.getRegionServer(0);
      if (master.isAborted() || master.isStopped() || rs.isAborted() || rs.isStopped()) {
        throw new IOException("the master or the region server stopped while starting", last);
      }
      try (Connection conn = ConnectionFactory.createConnection(c);
          Admin admin = conn.getAdmin()) {
        if (!admin.tableExists(name)) {
          admin.createTable(
              TableDescriptorBuilder.newBuilder(name)
                  .setColumnFamily(ColumnFamilyDescriptorBuilder.of("f"))
                  .build());
        }
        try (Table t = conn.getTable(name)) {
          t.put(
              new Put(Bytes.toBytes("r"))
                  .addColumn(Bytes.toBytes("f"), Bytes.toBytes("q"), Bytes.toBytes("v")));
          Result r = t.get(new Get(Bytes.toBytes("r")));
          byte[] v = r.getValue(Bytes.toBytes("f"), Bytes.toBytes("q"));
          if (!"v".equals(v == null ? null : Bytes.toString(v))) {
            throw new IOException("probe read back " + r);
          }
        }
        // Leave no table behind: the differential tests start from an empty server.
        admin.disableTable(name);
        admin.deleteTable(name);
        return;
      } catch (Exception e) {
        last = e;
        LOG.info("not ready yet: " + e);
        Thread.sleep(500);
      }
    }
    throw new IOException("HBase did not serve a client within 120 s", last);
  }

  /** A port below 32768 that 127.0.0.1 can bind now (and that this run has not handed out). */
  private static int freePort() throws IOException {
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

  private static void waitForPort(int port, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      try (java.net.Socket s = new java.net.Socket()) {
        s.connect(new InetSocketAddress(HOST, port), 1000);
        return;
      } catch (IOException e) {
        if (System.currentTimeMillis() > deadline) {
          throw new IOException("the Thrift gateway did not listen on port " + port, e);
        }
        Thread.sleep(100);
      }
    }
  }

  /** Every logger to {@code file} at WARN (this launcher's own at INFO), nothing on the console. */
  private static void logTo(File file) throws IOException {
    LogManager.resetConfiguration();
    FileAppender appender =
        new FileAppender(
            new PatternLayout("%d{ISO8601} %-5p [%t] %c{2}: %m%n"), file.getPath(), true);
    Logger root = Logger.getRootLogger();
    root.addAppender(appender);
    root.setLevel(Level.WARN);
    LOG.setLevel(Level.INFO);
    // java.util.logging (a few libraries use it) into the same quiet state.
    java.util.logging.LogManager.getLogManager().reset();
    java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.SEVERE);
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      List<Path> all = new ArrayList<>(paths.sorted(Comparator.reverseOrder()).toList());
      for (Path p : all) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // best effort: the parent removes what is left
    }
  }

  private Standalone() {}
}
