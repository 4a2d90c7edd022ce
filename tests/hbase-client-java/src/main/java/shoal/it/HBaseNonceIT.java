package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's nonces through the stock client: the Rust test
 * (crates/shoal-cli/tests/hbase_nonce_e2e.rs) puts a proxy between this
 * program and `shoal serve` that forwards every Increment and Append (each
 * marked with a nonce) but closes the connection before its answer comes
 * back, so the client retries it with the same nonce. Each must be applied
 * once: the counters and values below are checked after every call. Also
 * checks that an Increment's and an Append's answers carry the stored
 * cells' timestamps (on rows the proxy lets through untouched).
 *
 * <p>Usage: HBaseNonceIT host:port table
 */
public final class HBaseNonceIT {
  private static final byte[] CF = b("cf");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void eq(Object want, Object got, String what) {
    if (!java.util.Objects.equals(want, got)) {
      throw new AssertionError("FAILED: " + what + ": want " + want + ", got " + got);
    }
  }

  private static void ok(String name) {
    System.out.println("ok " + name);
    System.out.flush();
  }

  private static long counter(Table t, String row, String q) throws Exception {
    byte[] v = t.get(new Get(b(row)).addColumn(CF, b(q))).getValue(CF, b(q));
    return v == null ? 0 : Bytes.toLong(v);
  }

  private static String text(Table t, String row, String q) throws Exception {
    byte[] v = t.get(new Get(b(row)).addColumn(CF, b(q))).getValue(CF, b(q));
    return v == null ? null : new String(v, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: HBaseNonceIT <host:port> <table>");
      System.exit(2);
    }
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", args[0]);
    c.setInt("hbase.client.retries.number", 15);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 20000);
    c.setInt("hbase.client.operation.timeout", 60000);
    TableName tn = TableName.valueOf(args[1]);
    try (Connection conn = ConnectionFactory.createConnection(c)) {
      try (Admin admin = conn.getAdmin()) {
        admin.createTable(
            TableDescriptorBuilder.newBuilder(tn)
                .setColumnFamily(
                    ColumnFamilyDescriptorBuilder.newBuilder(CF).setMaxVersions(3).build())
                .build());
      }
      try (Table t = conn.getTable(tn)) {
        run(t);
      }
    }
    System.out.println("done nonces");
  }

  static void run(Table t) throws Exception {
    // Table.increment: a Mutate with a nonce.
    Result r = t.increment(new Increment(b("r1")).addColumn(CF, b("n"), 1));
    eq(1L, Bytes.toLong(r.getValue(CF, b("n"))), "increment answers the value once added");
    eq(1L, counter(t, "r1", "n"), "a retried increment is applied once");
    r = t.increment(new Increment(b("r1")).addColumn(CF, b("n"), 2));
    eq(3L, Bytes.toLong(r.getValue(CF, b("n"))), "a second increment");
    eq(3L, counter(t, "r1", "n"), "a second retried increment is applied once");
    ok("increment");

    // Table.incrementColumnValue: the same, built by another path.
    eq(5L, t.incrementColumnValue(b("r1"), CF, b("icv"), 5), "incrementColumnValue answers");
    eq(5L, counter(t, "r1", "icv"), "a retried incrementColumnValue is applied once");
    ok("incrementColumnValue");

    // Table.append.
    r = t.append(new Append(b("r1")).addColumn(CF, b("s"), b("ab")));
    eq("ab", new String(r.getValue(CF, b("s")), StandardCharsets.UTF_8), "append answers");
    eq("ab", text(t, "r1", "s"), "a retried append is applied once");
    ok("append");

    // Table.batch: a Multi, the nonce group on the request, a nonce per action.
    List<Row> actions =
        Arrays.asList(
            new Increment(b("r2")).addColumn(CF, b("n"), 10),
            new Append(b("r2")).addColumn(CF, b("s"), b("x")));
    Object[] results = new Object[actions.size()];
    t.batch(actions, results);
    eq(10L, Bytes.toLong(((Result) results[0]).getValue(CF, b("n"))), "batch increment answers");
    eq(10L, counter(t, "r2", "n"), "a retried batch increment is applied once");
    eq("x", text(t, "r2", "s"), "a retried batch append is applied once");
    ok("batch");

    // checkAndMutate with an Increment: the check passes again on the retry,
    // and the nonce keeps it from adding twice.
    t.put(new Put(b("r3")).addColumn(CF, b("flag"), b("on")));
    CheckAndMutateResult cm =
        t.checkAndMutate(
            CheckAndMutate.newBuilder(b("r3"))
                .ifEquals(CF, b("flag"), b("on"))
                .build(new Increment(b("r3")).addColumn(CF, b("n"), 1)));
    eq(true, cm.isSuccess(), "checkAndMutate(Increment) passes");
    eq(1L, Bytes.toLong(cm.getResult().getValue(CF, b("n"))), "checkAndMutate answers");
    eq(1L, counter(t, "r3", "n"), "a retried checkAndMutate(Increment) is applied once");
    cm =
        t.checkAndMutate(
            CheckAndMutate.newBuilder(b("r3"))
                .ifEquals(CF, b("flag"), b("on"))
                .build(new Append(b("r3")).addColumn(CF, b("s"), b("y"))));
    eq(true, cm.isSuccess(), "checkAndMutate(Append) passes");
    eq("y", text(t, "r3", "s"), "a retried checkAndMutate(Append) is applied once");
    ok("checkAndMutate");

    // The answer's timestamp is the stored cell's: over a version stamped
    // an hour ahead, HBase stamps one past it. (The proxy passes the
    // answers of rows named "direct-…": these calls are not retried.)
    long ahead = System.currentTimeMillis() + 3_600_000L;
    t.put(new Put(b("direct-ts")).addColumn(CF, b("n"), ahead, Bytes.toBytes(4L)));
    r = t.increment(new Increment(b("direct-ts")).addColumn(CF, b("n"), 1));
    Cell answered = r.getColumnLatestCell(CF, b("n"));
    eq(5L, Bytes.toLong(CellUtil.cloneValue(answered)), "increment over a future version");
    eq(ahead + 1, answered.getTimestamp(), "the answer's timestamp is one past the version read");
    Result stored = t.get(new Get(b("direct-ts")).addColumn(CF, b("n")).readVersions(3));
    eq(2, stored.size(), "the version read stays beneath the new one");
    eq(
        answered.getTimestamp(),
        stored.getColumnLatestCell(CF, b("n")).getTimestamp(),
        "the answer's timestamp is the stored cell's");
    r = t.append(new Append(b("direct-ts")).addColumn(CF, b("a"), b("z")));
    stored = t.get(new Get(b("direct-ts")).addColumn(CF, b("a")));
    eq(
        stored.getColumnLatestCell(CF, b("a")).getTimestamp(),
        r.getColumnLatestCell(CF, b("a")).getTimestamp(),
        "an append's answer carries the stored timestamp");
    ok("stored timestamps");
  }
}
