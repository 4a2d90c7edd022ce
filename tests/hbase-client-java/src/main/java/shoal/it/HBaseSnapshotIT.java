package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.SnapshotDescription;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * HBase's snapshot Admin calls through the stock client (hbase-client 2.6.1):
 * the Rust test (crates/shoal-cli/tests/hbase_snapshot_e2e.rs) runs this
 * program against a real standalone HBase 2.6.1 and against `shoal serve`
 * and compares their outputs line by line. Each step prints one line
 * `step: outcome` (an exception as its class name), with nothing in it
 * that differs between two runs on one server (no times, no ids), so any
 * difference is one between the servers.
 *
 * <p>A table with split keys gets rows, is snapshotted (`s1`), then
 * changed; the snapshot is listed, cloned (the clone reads the rows at
 * snapshot time), restored over the disabled table, and deleted (the
 * clone still reads); a table dropped after its snapshot is restored from
 * it (a clone under its own name); and the error cases: an unknown
 * snapshot deleted, cloned, restored or asked about, a snapshot name
 * taken twice, a clone onto an existing table, a restore of an enabled
 * table, a snapshot of a missing table.
 *
 * <p>Usage: HBaseSnapshotIT host:port
 */
public final class HBaseSnapshotIT {
  private static final byte[] CF = b("f");
  private static final TableName SRC = TableName.valueOf("snap_src");
  private static final TableName CLONE = TableName.valueOf("snap_clone");
  private static final TableName MISSING = TableName.valueOf("snap_missing");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void say(String step, Object outcome) {
    System.out.println(step + ": " + outcome);
    System.out.flush();
  }

  /** What a call ended with: "ok", or its exception's class name. */
  private interface Call {
    void run() throws Exception;
  }

  private static String outcome(Call call) {
    try {
      call.run();
      return "ok";
    } catch (Exception e) {
      return e.getClass().getName();
    }
  }

  /** Every cell of `t`, one string, in scan order. */
  private static String cells(Connection conn, TableName name) throws Exception {
    List<String> out = new ArrayList<>();
    try (Table t = conn.getTable(name);
        ResultScanner s = t.getScanner(new Scan())) {
      for (Result r : s) {
        for (Cell c : r.rawCells()) {
          out.add(
              new String(CellUtil.cloneRow(c), StandardCharsets.UTF_8)
                  + "/"
                  + new String(CellUtil.cloneQualifier(c), StandardCharsets.UTF_8)
                  + "="
                  + new String(CellUtil.cloneValue(c), StandardCharsets.UTF_8));
        }
      }
    }
    return out.size() + " " + String.join(" ", out);
  }

  private static String listed(Admin admin, long before, long after) throws Exception {
    List<String> out = new ArrayList<>();
    for (SnapshotDescription d : admin.listSnapshots()) {
      long t = d.getCreationTime();
      out.add(
          d.getName()
              + " table="
              + d.getTableNameAsString()
              + " type="
              + d.getType()
              + " version="
              + d.getVersion()
              + " ttl="
              + d.getTtl()
              + " owner="
              + d.getOwner()
              + " created-while-taken="
              + (t >= before && t <= after));
    }
    return out.size() + " " + String.join(", ", out);
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HBaseSnapshotIT <host:port>");
      System.exit(2);
    }
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", args[0]);
    c.setInt("hbase.client.retries.number", 10);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 20000);
    c.setInt("hbase.client.operation.timeout", 60000);
    try (Connection conn = ConnectionFactory.createConnection(c);
        Admin admin = conn.getAdmin()) {
      run(conn, admin);
    }
    System.out.println("done snapshots");
  }

  static void run(Connection conn, Admin admin) throws Exception {
    admin.createTable(
        TableDescriptorBuilder.newBuilder(SRC)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF))
            .build(),
        new byte[][] {b("r3"), b("r6")});
    say("create", "regions=" + admin.getRegions(SRC).size());
    try (Table t = conn.getTable(SRC)) {
      for (int i = 0; i < 9; i++) {
        t.put(new Put(b("r" + i)).addColumn(CF, b("q"), b("v1-" + i)));
      }
    }
    say("before snapshot", cells(conn, SRC));

    long before = System.currentTimeMillis();
    say("snapshot s1", outcome(() -> admin.snapshot("s1", SRC)));
    long after = System.currentTimeMillis();
    say(
        "isSnapshotFinished s1",
        admin.isSnapshotFinished(new SnapshotDescription("s1", SRC)));

    // Changes after the snapshot: overwrites, a delete, a new row.
    try (Table t = conn.getTable(SRC)) {
      for (int i = 0; i < 3; i++) {
        t.put(new Put(b("r" + i)).addColumn(CF, b("q"), b("v2-" + i)));
      }
      t.delete(new Delete(b("r4")));
      t.put(new Put(b("r9")).addColumn(CF, b("q"), b("v2-9")));
    }
    say("after changes", cells(conn, SRC));

    say("listSnapshots", listed(admin, before, after));
    say("listSnapshots(s.*)", admin.listSnapshots(Pattern.compile("s.*")).size());
    say("listSnapshots(x.*)", admin.listSnapshots(Pattern.compile("x.*")).size());
    say(
        "listTableSnapshots(snap_.*)",
        admin.listTableSnapshots(Pattern.compile("snap_.*"), Pattern.compile(".*")).size());

    // Clone: a new table with the snapshot's rows and regions.
    say("cloneSnapshot s1", outcome(() -> admin.cloneSnapshot("s1", CLONE)));
    say("clone enabled", admin.isTableEnabled(CLONE));
    say("clone regions", admin.getRegions(CLONE).size());
    say("clone cells", cells(conn, CLONE));
    try (Table t = conn.getTable(CLONE)) {
      t.put(new Put(b("r0")).addColumn(CF, b("q"), b("clone-0")));
    }
    say("clone after a put", cells(conn, CLONE));
    say("source unchanged by the clone", cells(conn, SRC));

    // Errors.
    say("snapshot s1 again", outcome(() -> admin.snapshot("s1", SRC)));
    say("snapshot of a missing table", outcome(() -> admin.snapshot("s_missing", MISSING)));
    say("deleteSnapshot unknown", outcome(() -> admin.deleteSnapshot("nope")));
    say("cloneSnapshot unknown", outcome(() -> admin.cloneSnapshot("nope", MISSING)));
    say("cloneSnapshot onto an existing table", outcome(() -> admin.cloneSnapshot("s1", CLONE)));
    say("restoreSnapshot enabled table", outcome(() -> admin.restoreSnapshot("s1")));
    say("restoreSnapshot unknown", outcome(() -> admin.restoreSnapshot("nope")));
    say(
        "isSnapshotFinished unknown",
        outcome(() -> admin.isSnapshotFinished(new SnapshotDescription("nope", SRC))));
    say("tables after the errors", admin.tableExists(MISSING) + " " + admin.tableExists(CLONE));

    // Restore: the disabled table goes back to the snapshot.
    admin.disableTable(SRC);
    say("restoreSnapshot s1", outcome(() -> admin.restoreSnapshot("s1")));
    say("restored still disabled", admin.isTableDisabled(SRC));
    admin.enableTable(SRC);
    say("restored regions", admin.getRegions(SRC).size());
    say("restored cells", cells(conn, SRC));
    try (Table t = conn.getTable(SRC)) {
      t.put(new Put(b("r5")).addColumn(CF, b("q"), b("v3-5")));
    }
    say("restored after a put", cells(conn, SRC));

    // Delete: gone from the list; the clone still reads its rows.
    say("deleteSnapshot s1", outcome(() -> admin.deleteSnapshot("s1")));
    say("listSnapshots after delete", admin.listSnapshots().size());
    say("deleteSnapshot s1 again", outcome(() -> admin.deleteSnapshot("s1")));
    say("clone after the snapshot went", cells(conn, CLONE));

    // A table dropped after its snapshot: restore clones it back.
    say("snapshot s2", outcome(() -> admin.snapshot("s2", SRC)));
    admin.disableTable(SRC);
    admin.deleteTable(SRC);
    say("restoreSnapshot s2 of a dropped table", outcome(() -> admin.restoreSnapshot("s2")));
    say("recreated", admin.tableExists(SRC) + " enabled=" + admin.isTableEnabled(SRC));
    say("recreated cells", cells(conn, SRC));
    say("deleteSnapshot s2", outcome(() -> admin.deleteSnapshot("s2")));

    for (TableName t : new TableName[] {SRC, CLONE}) {
      admin.disableTable(t);
      admin.deleteTable(t);
    }
    say("listSnapshots at the end", admin.listSnapshots().size());
  }
}
