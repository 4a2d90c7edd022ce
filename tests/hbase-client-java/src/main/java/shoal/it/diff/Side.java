// One cluster of the comparison (A = real HBase, B = Shoal): its connection
// (RpcConnectionRegistry, short timeouts, the same settings on both sides),
// the seed's table (created from a variant, dropped at the end: versions,
// TTL, KEEP_DELETED_CELLS TRUE and TTL), and the
// admin steps done between operations: flush, major compaction waited for
// (HBase's is asynchronous: poll getCompactionState until NONE), a split
// waited for (until the region count changes and the table reads again).
package shoal.it.diff;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.KeepDeletedCells;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

final class Side implements Closeable {
  static final String TABLE_PREFIX = "hbdiff_";
  static final byte[] A = Text.b("a");
  static final byte[] B = Text.b("b");

  final String name;
  final String bootstrap;
  private final Connection conn;
  private final Admin admin;
  Table table;
  TableName tn;
  private long lastEnd;

  Side(String name, String bootstrap) throws IOException {
    this.name = name;
    this.bootstrap = bootstrap;
    this.conn = ConnectionFactory.createConnection(conf(bootstrap));
    this.admin = conn.getAdmin();
  }

  static Configuration conf(String bootstrap) {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", bootstrap);
    // An error comes back in about a second, on both sides alike.
    c.setInt("hbase.client.retries.number", 3);
    c.setInt("hbase.client.pause", 50);
    c.setInt("hbase.rpc.timeout", 15000);
    c.setInt("hbase.client.operation.timeout", 30000);
    c.setInt("hbase.client.meta.operation.timeout", 30000);
    c.setInt("hbase.client.scanner.timeout.period", 30000);
    return c;
  }

  /**
   * The table families of a variant. Every family turns HBase's own minor
   * compactions off (it would start them after the third flush, at a time of
   * its choosing, and they trim versions): see Allow "hbase-auto-compaction".
   */
  static TableDescriptorBuilder descriptor(TableName tn, int variant) {
    ColumnFamilyDescriptorBuilder a = ColumnFamilyDescriptorBuilder.newBuilder(A);
    ColumnFamilyDescriptorBuilder b = ColumnFamilyDescriptorBuilder.newBuilder(B)
        .setTimeToLive((int) (Times.DAY / 1000));
    switch (variant) {
      case 0:
        a.setMaxVersions(3);
        b.setMaxVersions(1);
        break;
      case 1:
        a.setMaxVersions(3).setKeepDeletedCells(KeepDeletedCells.TRUE);
        b.setMaxVersions(2).setMinVersions(1);
        break;
      default:
        a.setMaxVersions(4).setKeepDeletedCells(KeepDeletedCells.TRUE);
        b.setMaxVersions(3).setMinVersions(2).setKeepDeletedCells(KeepDeletedCells.TTL);
        break;
    }
    for (ColumnFamilyDescriptorBuilder f : List.of(a, b)) {
      f.setConfiguration("hbase.hstore.compaction.min", "1000");
      f.setConfiguration("hbase.hstore.compaction.max", "1000");
      f.setConfiguration("hbase.hstore.compactionThreshold", "1000");
      f.setConfiguration("hbase.hregion.majorcompaction", "0");
      f.setConfiguration("hbase.hstore.blockingStoreFiles", "1000");
    }
    return TableDescriptorBuilder.newBuilder(tn).setColumnFamily(a.build()).setColumnFamily(b.build());
  }

  static String describe(int variant) {
    switch (variant) {
      case 0:
        return "a{VERSIONS=3} b{VERSIONS=1, TTL=1 day}";
      case 1:
        return "a{VERSIONS=3, KEEP_DELETED_CELLS=TRUE} b{VERSIONS=2, MIN_VERSIONS=1, TTL=1 day}";
      default:
        return "a{VERSIONS=4, KEEP_DELETED_CELLS=TRUE}"
            + " b{VERSIONS=3, MIN_VERSIONS=2, TTL=1 day, KEEP_DELETED_CELLS=TTL}";
    }
  }

  void create(TableName tn, int variant, byte[][] splits) throws IOException {
    if (admin.tableExists(tn)) {
      drop(tn);
    }
    admin.createTable(descriptor(tn, variant).build(), splits);
    this.tn = tn;
    this.table = conn.getTable(tn);
  }

  void dropCurrent() {
    if (tn == null) {
      return;
    }
    try {
      table.close();
    } catch (IOException e) {
      // closing a table handle does not fail in practice
    }
    try {
      drop(tn);
    } catch (IOException e) {
      System.out.println("warning: " + name + ": could not drop " + tn + ": " + Canon.detail(e));
    }
    tn = null;
    table = null;
  }

  private void drop(TableName t) throws IOException {
    if (admin.isTableEnabled(t)) {
      admin.disableTable(t);
    }
    admin.deleteTable(t);
  }

  /** Drops the tables an earlier run left behind. */
  void dropLeftovers() throws IOException {
    for (TableName t : admin.listTableNames()) {
      if (t.getNameAsString().startsWith(TABLE_PREFIX)) {
        drop(t);
      }
    }
  }

  void flush() throws IOException {
    admin.flush(tn);
  }

  /** A major compaction, waited for until every region says NONE (60 s at most). */
  void majorCompact() throws IOException, InterruptedException {
    admin.majorCompact(tn);
    awaitNoCompaction();
  }

  /**
   * HBase's majorCompact only queues the work: the state reads NONE until a
   * compaction thread takes it. So give it time to start, then ask until
   * NONE is read three times in a row.
   */
  private void awaitNoCompaction() throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    Thread.sleep(300);
    int quiet = 0;
    while (quiet < 3) {
      if (admin.getCompactionState(tn) == CompactionState.NONE) {
        quiet++;
      } else {
        quiet = 0;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException(name + ": the major compaction did not finish in 60 s");
      }
      Thread.sleep(50);
    }
  }

  int regions() throws IOException {
    return admin.getRegions(tn).size();
  }

  /**
   * Splits the region holding `at` there, waits until the table has one
   * region more and reads again, then compacts (HBase compacts the daughters
   * on its own, in the background: the explicit one makes both sides alike).
   */
  void split(byte[] at) throws IOException, InterruptedException {
    int before = regions();
    admin.split(tn, at);
    long deadline = System.currentTimeMillis() + 60_000;
    while (regions() <= before) {
      if (System.currentTimeMillis() > deadline) {
        throw new IOException(name + ": the split did not show in 60 s");
      }
      Thread.sleep(100);
    }
    while (true) {
      try (ResultScanner rs = table.getScanner(new Scan())) {
        for (org.apache.hadoop.hbase.client.Result r : rs) {
          // read through
        }
        break;
      } catch (IOException | RuntimeException e) {
        if (System.currentTimeMillis() > deadline) {
          throw new IOException(name + ": the table did not read again after the split", e);
        }
        Thread.sleep(100);
      }
    }
    majorCompact();
  }

  /** Before an operation: the clock has moved past the previous operation's end. */
  void clockTick() {
    while (System.currentTimeMillis() <= lastEnd) {
      Thread.onSpinWait();
    }
  }

  void opDone() {
    lastEnd = System.currentTimeMillis();
  }

  @Override
  public void close() throws IOException {
    admin.close();
    conn.close();
  }
}
