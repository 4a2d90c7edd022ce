// HBase's own Java client (hbase-client 2.5/2.6, unchanged) against Shoal's
// native RPC. Run by crates/shoal-cli/tests/hbase_client_e2e.rs against a
// `shoal serve` it starts:
//
//   java -cp ... shoal.it.HBaseClientIT <host:port> <mode> [table]
//
// Modes: `api` (admin, data calls, scans, every supported filter, errors),
// `split` (a table split while the client writes and scans), `write`
// (writes rows until killed, printing each acknowledged batch: the Rust
// test restarts the server meanwhile), `verify` (reads the rows `write`
// acknowledged). Cluster modes (crates/shoal-cli/tests/hbase_cluster_e2e.rs):
// `admin-via` (given a server that is not the master: table changes
// through Admin, then sent straight to that server's MasterService, as a
// client that takes it for the master would), `writer` (as `write`, with
// each batch's start and end time, and the number of servers the client's
// registry asks whenever it changes; the client refreshes them from the
// registry 1 s after it connects and then every 3 s, where HBase's
// defaults are 30 s and 5 minutes). Every check prints
// "ok <name>"; a failed check throws, and the process exits non-zero.
package shoal.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.BinaryPrefixComparator;
import org.apache.hadoop.hbase.filter.ColumnCountGetFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.FamilyFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.FuzzyRowFilter;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.LongComparator;
import org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.NullComparator;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RandomRowFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueExcludeFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SkipFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.TimestampsFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.WhileMatchFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.ipc.RpcClient;
import org.apache.hadoop.hbase.ipc.RpcClientFactory;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.shaded.protobuf.RequestConverter;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos;
import org.apache.hadoop.hbase.util.Pair;

public final class HBaseClientIT {
  private static final byte[] CF = b("cf");
  private static final byte[] CF2 = b("cf2");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String s(byte[] v) {
    return v == null ? "null" : new String(v, StandardCharsets.UTF_8);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError("FAILED: " + what);
    }
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

  static Configuration conf(String bootstrap) {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", bootstrap);
    // A test: fail in seconds, not minutes, when something is wrong.
    c.setInt("hbase.client.retries.number", 15);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 20000);
    c.setInt("hbase.client.operation.timeout", 60000);
    return c;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: HBaseClientIT <host:port> <api|split|write|verify> [table]");
      System.exit(2);
    }
    String mode = args[1];
    String table = args.length > 2 ? args[2] : "it_" + mode;
    Configuration c = conf(args[0]);
    if (mode.equals("writer")) {
      // The client asks the registry for every live server 1 s after it
      // connects (HBase's default: 30 s), so a test need not wait; and
      // every 3 s after (default: 5 minutes): a first refresh due before
      // the connection is up is skipped.
      c.setLong("hbase.client.bootstrap.initial_refresh_delay_secs", 1);
      c.setLong("hbase.client.bootstrap.refresh_interval_secs", 3);
      c.setLong("hbase.client.bootstrap.min_secs_between_refreshes", 1);
    }
    try (Connection conn = ConnectionFactory.createConnection(c)) {
      switch (mode) {
        case "api":
          api(conn);
          break;
        case "split":
          split(conn, TableName.valueOf(table));
          break;
        case "write":
          write(conn, TableName.valueOf(table));
          break;
        case "admin-via":
          adminVia(conn, TableName.valueOf(table), args[0]);
          break;
        case "writer":
          writer(conn, TableName.valueOf(table));
          break;
        case "verify":
          verify(conn, TableName.valueOf(table), Integer.parseInt(args[3]));
          break;
        default:
          throw new IllegalArgumentException("unknown mode " + mode);
      }
    }
    System.out.println("done " + mode);
  }

  // ---- api

  static void api(Connection conn) throws Exception {
    TableName tn = TableName.valueOf("it_api");
    try (Admin admin = conn.getAdmin()) {
      if (admin.tableExists(tn)) {
        admin.disableTable(tn);
        admin.deleteTable(tn);
      }
      check(!admin.tableExists(tn), "a new table does not exist yet");
      TableDescriptor desc =
          TableDescriptorBuilder.newBuilder(tn)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(CF).setMaxVersions(3).build())
              .setColumnFamily(
                  ColumnFamilyDescriptorBuilder.newBuilder(CF2)
                      .setTimeToLive(86400)
                      .setBloomFilterType(org.apache.hadoop.hbase.regionserver.BloomType.ROWCOL)
                      .build())
              .build();
      admin.createTable(desc, new byte[][] {b("g"), b("p")});
      check(admin.tableExists(tn), "tableExists after create");
      check(admin.isTableEnabled(tn), "enabled after create");
      TableDescriptor got = admin.getDescriptor(tn);
      eq(2, got.getColumnFamilyCount(), "families");
      ColumnFamilyDescriptor cf = got.getColumnFamily(CF);
      eq(3, cf.getMaxVersions(), "VERSIONS");
      eq(86400, got.getColumnFamily(CF2).getTimeToLive(), "TTL");
      eq("ROWCOL", got.getColumnFamily(CF2).getBloomFilterType().name(), "BLOOMFILTER");
      List<RegionInfo> regions = admin.getRegions(tn);
      eq(3, regions.size(), "regions from split keys");
      eq("g", s(regions.get(1).getStartKey()), "second region starts at g");
      check(Arrays.asList(admin.listTableNames()).contains(tn), "listTableNames");
      try {
        admin.createTable(desc);
        check(false, "creating an existing table throws");
      } catch (org.apache.hadoop.hbase.TableExistsException e) {
        ok("create existing table: TableExistsException");
      }
      admin.disableTable(tn);
      check(admin.isTableDisabled(tn), "disabled");
      try (Table t = conn.getTable(tn)) {
        t.get(new Get(b("a")));
        check(false, "a get on a disabled table throws");
      } catch (org.apache.hadoop.hbase.TableNotEnabledException e) {
        ok("get on a disabled table: TableNotEnabledException");
      }
      admin.enableTable(tn);
      check(admin.isTableEnabled(tn), "enabled again");
      ok("admin create/describe/disable/enable");

      // A family added and changed, then removed.
      admin.addColumnFamily(tn, ColumnFamilyDescriptorBuilder.newBuilder(b("extra")).build());
      eq(3, admin.getDescriptor(tn).getColumnFamilyCount(), "family added");
      admin.modifyColumnFamily(
          tn, ColumnFamilyDescriptorBuilder.newBuilder(b("extra")).setMaxVersions(5).build());
      eq(5, admin.getDescriptor(tn).getColumnFamily(b("extra")).getMaxVersions(), "family modified");
      admin.deleteColumnFamily(tn, b("extra"));
      eq(2, admin.getDescriptor(tn).getColumnFamilyCount(), "family deleted");
      ok("admin add/modify/delete family");

      try (Table t = conn.getTable(tn)) {
        data(t);
        deletes(t);
        counters(t);
        conditional(t);
        batches(conn, t, tn);
        errors(conn, t);
      }
      // Scans and filters on a table of their own, three regions.
      TableName sn = TableName.valueOf("it_scan");
      if (admin.tableExists(sn)) {
        admin.disableTable(sn);
        admin.deleteTable(sn);
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(sn)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(CF).setMaxVersions(3).build())
          .build(), new byte[][] {b("g"), b("p")});
      try (Table t = conn.getTable(sn)) {
        dataset(t);
        scans(t);
        filters(t);
      }
      admin.disableTable(sn);
      admin.deleteTable(sn);
      admin.flush(tn);
      ok("admin flush");
      admin.compact(tn);
      admin.majorCompact(tn);
      eq("NONE", admin.getCompactionState(tn).name(), "compactions done when asked");
      try (Table t = conn.getTable(tn)) {
        eq("v1", s(t.get(new Get(b("a1"))).getValue(CF, b("q"))), "data after compactions");
      }
      ok("admin compact/majorCompact");

      admin.disableTable(tn);
      admin.truncateTable(tn, true);
      check(admin.isTableEnabled(tn), "enabled after truncate");
      try (Table t = conn.getTable(tn)) {
        check(count(t, new Scan()) == 0, "truncate empties the table");
      }
      ok("admin truncate");
      admin.disableTable(tn);
      admin.deleteTable(tn);
      check(!admin.tableExists(tn), "gone after delete");
      ok("admin delete");
    }
  }

  static void data(Table t) throws IOException {
    t.put(new Put(b("a1")).addColumn(CF, b("q"), b("v1")));
    Result r = t.get(new Get(b("a1")));
    eq("v1", s(r.getValue(CF, b("q"))), "put then get");
    check(t.get(new Get(b("nope"))).isEmpty(), "a missing row is empty");
    check(t.exists(new Get(b("a1"))), "exists");
    check(!t.exists(new Get(b("nope"))), "not exists");
    // Versions and time ranges.
    for (long ts = 1; ts <= 4; ts++) {
      t.put(new Put(b("h1")).addColumn(CF, b("v"), ts, b("ver" + ts)));
    }
    Result all = t.get(new Get(b("h1")).readVersions(3));
    List<Cell> cells = all.getColumnCells(CF, b("v"));
    eq(3, cells.size(), "three versions kept (VERSIONS=3)");
    eq(4L, cells.get(0).getTimestamp(), "newest first");
    Result range = t.get(new Get(b("h1")).readAllVersions().setTimeRange(2, 4));
    eq(2, range.size(), "time range [2,4)");
    eq("ver3", s(range.getValue(CF, b("v"))), "newest in range");
    Result latest = t.get(new Get(b("h1")));
    eq("ver4", s(latest.getValue(CF, b("v"))), "latest version");
    // Columns selected; a put in two families.
    t.put(new Put(b("q1")).addColumn(CF, b("x"), b("1")).addColumn(CF, b("y"), b("2"))
        .addColumn(CF2, b("z"), b("3")));
    Result col = t.get(new Get(b("q1")).addColumn(CF, b("y")));
    eq(1, col.size(), "one column");
    Result fam = t.get(new Get(b("q1")).addFamily(CF2));
    eq("3", s(fam.getValue(CF2, b("z"))), "one family");
    eq(3, t.get(new Get(b("q1"))).size(), "whole row");
    // Durability is accepted (Shoal syncs the WAL whatever it says).
    t.put(new Put(b("d1")).addColumn(CF, b("q"), b("v")).setDurability(Durability.SKIP_WAL));
    eq("v", s(t.get(new Get(b("d1"))).getValue(CF, b("q"))), "SKIP_WAL put readable");
    ok("put/get/exists/versions/time range/columns");
  }

  static void deletes(Table t) throws IOException {
    byte[] row = b("del");
    for (long ts = 1; ts <= 3; ts++) {
      t.put(new Put(row).addColumn(CF, b("a"), ts, b("a" + ts)).addColumn(CF, b("b"), ts, b("b" + ts)));
    }
    t.put(new Put(row).addColumn(CF2, b("c"), 1, b("c1")));
    // One version (the newest) of a.
    t.delete(new Delete(row).addColumn(CF, b("a")));
    eq("a2", s(t.get(new Get(row)).getValue(CF, b("a"))), "addColumn deletes the newest version");
    // One given version of a.
    t.delete(new Delete(row).addColumn(CF, b("a"), 1));
    eq(1, t.get(new Get(row).readAllVersions()).getColumnCells(CF, b("a")).size(), "addColumn(ts)");
    // Every version of b up to 2.
    t.delete(new Delete(row).addColumns(CF, b("b"), 2));
    List<Cell> bs = t.get(new Get(row).readAllVersions()).getColumnCells(CF, b("b"));
    eq(1, bs.size(), "addColumns(ts) leaves newer versions");
    eq(3L, bs.get(0).getTimestamp(), "version 3 of b stays");
    // A family version: every column of cf at timestamp 3.
    t.delete(new Delete(row).addFamilyVersion(CF, 3));
    Result r = t.get(new Get(row));
    check(r.getValue(CF, b("b")) == null, "addFamilyVersion deletes b at 3");
    eq("a2", s(r.getValue(CF, b("a"))), "addFamilyVersion leaves other timestamps");
    // A whole family.
    t.delete(new Delete(row).addFamily(CF2));
    check(t.get(new Get(row).addFamily(CF2)).isEmpty(), "addFamily");
    check(!t.get(new Get(row)).isEmpty(), "the other family stays");
    // The whole row.
    t.delete(new Delete(row));
    check(t.get(new Get(row)).isEmpty(), "whole-row delete");
    ok("delete: version, versions, family version, family, row");
  }

  static void counters(Table t) throws IOException {
    eq(5L, t.incrementColumnValue(b("cnt"), CF, b("n"), 5), "increment from nothing");
    eq(8L, t.incrementColumnValue(b("cnt"), CF, b("n"), 3), "increment");
    Result r = t.increment(new Increment(b("cnt")).addColumn(CF, b("n"), 2).addColumn(CF, b("m"), -1));
    eq(10L, Bytes.toLong(r.getValue(CF, b("n"))), "Increment returns the new values");
    eq(-1L, Bytes.toLong(r.getValue(CF, b("m"))), "second counter");
    Result a = t.append(new Append(b("app")).addColumn(CF, b("s"), b("ab")));
    eq("ab", s(a.getValue(CF, b("s"))), "append to nothing");
    a = t.append(new Append(b("app")).addColumn(CF, b("s"), b("c")));
    eq("abc", s(a.getValue(CF, b("s"))), "append returns the new value");
    ok("increment/append");
  }

  static void conditional(Table t) throws IOException {
    byte[] row = b("cas");
    Put p = new Put(row).addColumn(CF, b("q"), b("5"));
    check(t.checkAndMutate(CheckAndMutate.newBuilder(row).ifNotExists(CF, b("q")).build(p)).isSuccess(),
        "ifNotExists on a missing column applies");
    check(!t.checkAndMutate(CheckAndMutate.newBuilder(row).ifNotExists(CF, b("q")).build(p)).isSuccess(),
        "ifNotExists on a present column does not");
    // HBase's orientation: LESS passes when the given value is less than the current one.
    Put p7 = new Put(row).addColumn(CF, b("q"), b("7"));
    check(t.checkAndMutate(CheckAndMutate.newBuilder(row)
            .ifMatches(CF, b("q"), CompareOperator.GREATER, b("3")).build(p7)).isSuccess() == false,
        "GREATER 3 against 5 fails");
    check(t.checkAndMutate(CheckAndMutate.newBuilder(row)
            .ifMatches(CF, b("q"), CompareOperator.LESS, b("3")).build(p7)).isSuccess(),
        "LESS 3 against 5 passes");
    eq("7", s(t.get(new Get(row)).getValue(CF, b("q"))), "the put applied");
    check(t.checkAndMutate(CheckAndMutate.newBuilder(row).ifEquals(CF, b("q"), b("7"))
            .build(new Delete(row).addColumns(CF, b("q")))).isSuccess(),
        "ifEquals then delete");
    check(t.get(new Get(row)).isEmpty(), "the delete applied");
    // A guarded RowMutations: put one column, delete another, atomically.
    t.put(new Put(row).addColumn(CF, b("old"), b("x")).addColumn(CF, b("flag"), b("on")));
    RowMutations rm = new RowMutations(row);
    rm.add(new Put(row).addColumn(CF, b("new"), b("y")));
    rm.add(new Delete(row).addColumns(CF, b("old")));
    check(t.checkAndMutate(CheckAndMutate.newBuilder(row).ifEquals(CF, b("flag"), b("on")).build(rm))
            .isSuccess(), "checkAndMutate with RowMutations");
    Result r = t.get(new Get(row));
    eq("y", s(r.getValue(CF, b("new"))), "row mutations put");
    check(r.getValue(CF, b("old")) == null, "row mutations delete");
    // mutateRow: atomic, unconditional.
    RowMutations rm2 = new RowMutations(row);
    rm2.add(new Put(row).addColumn(CF, b("m2"), b("z")));
    rm2.add(new Delete(row).addColumns(CF, b("new")));
    t.mutateRow(rm2);
    r = t.get(new Get(row));
    check(r.getValue(CF, b("new")) == null && "z".equals(s(r.getValue(CF, b("m2")))), "mutateRow");
    ok("checkAndMutate/RowMutations/mutateRow");
  }

  static void batches(Connection conn, Table t, TableName tn) throws Exception {
    List<Put> puts = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      puts.add(new Put(b(String.format("b%c%04d", (char) ('a' + i % 26), i)))
          .addColumn(CF, b("q"), b("v" + i)));
    }
    t.put(puts);
    List<Get> gets = new ArrayList<>();
    for (int i = 0; i < 300; i += 7) {
      gets.add(new Get(b(String.format("b%c%04d", (char) ('a' + i % 26), i))));
    }
    Result[] got = t.get(gets);
    for (int k = 0; k < got.length; k++) {
      eq("v" + (k * 7), s(got[k].getValue(CF, b("q"))), "multi-get in order");
    }
    List<Row> mixed = new ArrayList<>();
    mixed.add(new Put(b("mix1")).addColumn(CF, b("q"), b("p")));
    mixed.add(new Get(b("ba0000")));
    mixed.add(new Delete(b("bb0001")));
    mixed.add(new Increment(b("mixc")).addColumn(CF, b("n"), 4));
    mixed.add(new Get(b("zzz-missing")));
    Object[] results = new Object[mixed.size()];
    t.batch(mixed, results);
    eq("v0", s(((Result) results[1]).getValue(CF, b("q"))), "batch get");
    eq(4L, Bytes.toLong(((Result) results[3]).getValue(CF, b("n"))), "batch increment");
    check(((Result) results[4]).isEmpty(), "batch get of a missing row");
    check(t.get(new Get(b("bb0001"))).isEmpty(), "batch delete");
    // BufferedMutator: rows in every region, then counted.
    try (BufferedMutator m = conn.getBufferedMutator(tn)) {
      for (int i = 0; i < 2000; i++) {
        m.mutate(new Put(b(String.format("k%c%05d", (char) ('a' + i % 26), i)))
            .addColumn(CF, b("q"), b("x")));
      }
      m.flush();
    }
    Scan prefix = new Scan().setRowPrefixFilter(b("k"));
    eq(2000, count(t, prefix), "BufferedMutator rows all readable");
    ok("put list/get list/batch/BufferedMutator");
  }

  static int count(Table t, Scan scan) throws IOException {
    int n = 0;
    try (ResultScanner rs = t.getScanner(scan)) {
      for (Result r : rs) {
        n++;
      }
    }
    return n;
  }

  static List<Result> all(Table t, Scan scan) throws IOException {
    List<Result> out = new ArrayList<>();
    try (ResultScanner rs = t.getScanner(scan)) {
      for (Result r : rs) {
        out.add(r);
      }
    }
    return out;
  }

  /** Rows "a1".."z1" (spanning the three regions) for scans and filters. */
  static void dataset(Table t) throws IOException {
    List<Put> puts = new ArrayList<>();
    for (int i = 0; i < 26; i++) {
      char c = (char) ('a' + i);
      Put p = new Put(b("" + c + "1"))
          .addColumn(CF, b("q1"), b("v" + c))
          .addColumn(CF, b("q2"), Bytes.toBytes((long) i))
          .addColumn(CF, b("x3"), 100L, b("xyz"));
      if (c == 'a') {
        p.addColumn(CF, b("z9"), b(""));
      }
      puts.add(p);
    }
    t.put(puts);
  }

  static Scan ds() {
    return new Scan().withStartRow(b("a1")).withStopRow(b("z2")).addFamily(CF);
  }

  static void scans(Table t) throws IOException {
    eq(26, count(t, ds()), "forward scan over three regions");
    List<Result> rev = all(t, new Scan().withStartRow(b("z1")).withStopRow(b("a0")).setReversed(true)
        .addFamily(CF));
    check(rev.size() >= 26, "reversed scan returns every row");
    eq("z1", s(rev.get(0).getRow()), "reversed starts at the top");
    for (int i = 1; i < rev.size(); i++) {
      check(Bytes.compareTo(rev.get(i - 1).getRow(), rev.get(i).getRow()) > 0, "descending order");
    }
    List<Result> revFrom = all(t, new Scan().withStartRow(b("m1")).withStopRow(b("a0"))
        .setReversed(true).setFilter(new PrefixFilter(b("")))
        .addColumn(CF, b("q1")));
    eq(13, revFrom.size(), "reversed from m1 down to a1");
    eq(25, count(t, ds().withStartRow(b("a1"), false)), "start row exclusive");
    eq(26, count(t, ds().withStopRow(b("z1"), true)), "stop row inclusive");
    eq(26, count(t, ds().setCaching(3)), "small caching");
    eq(26, count(t, ds().setMaxResultSize(64)), "tiny max result size");
    eq(5, count(t, ds().setLimit(5)), "limit");
    eq(5, count(t, ds().setLimit(5).setReversed(true).withStartRow(b("z1")).withStopRow(b(""))),
        "reversed limit");
    // Batch: a row of four columns in chunks of two.
    List<Result> chunks = all(t, new Scan().withStartRow(b("a1")).withStopRow(b("a2")).setBatch(2)
        .addFamily(CF));
    eq(2, chunks.size(), "batch of 2 over 4 cells");
    eq(2, chunks.get(0).size(), "first chunk");
    ok("scans: forward, reversed, bounds, caching, max result size, limit, batch");
  }

  static int cells(Table t, Scan scan) throws IOException {
    int n = 0;
    for (Result r : all(t, scan)) {
      n += r.size();
    }
    return n;
  }

  static void filters(Table t) throws IOException {
    eq(1, count(t, ds().setFilter(new PrefixFilter(b("b")))), "PrefixFilter");
    // PageFilter: per region, as in HBase (three regions, five each).
    eq(15, count(t, ds().setFilter(new FilterList(FilterList.Operator.MUST_PASS_ALL,
        new PageFilter(5)))), "PageFilter in a FilterList (YCSB's scan)");
    for (Result r : all(t, ds().setFilter(new KeyOnlyFilter()))) {
      for (Cell c : r.rawCells()) {
        check(c.getValueLength() == 0, "KeyOnlyFilter empties values");
      }
    }
    eq(26, cells(t, ds().setFilter(new FirstKeyOnlyFilter())), "FirstKeyOnlyFilter");
    eq(52, cells(t, ds().setFilter(new ColumnPrefixFilter(b("q")))), "ColumnPrefixFilter");
    eq(52, cells(t, ds().setFilter(new MultipleColumnPrefixFilter(new byte[][] {b("q1"), b("x")}))),
        "MultipleColumnPrefixFilter");
    eq(26, cells(t, ds().setFilter(new QualifierFilter(CompareOperator.EQUAL,
        new BinaryComparator(b("q1"))))), "QualifierFilter");
    eq(2, count(t, ds().setFilter(new RowFilter(CompareOperator.LESS, new BinaryComparator(b("c"))))),
        "RowFilter LESS");
    eq(1, cells(t, ds().setFilter(new ValueFilter(CompareOperator.EQUAL,
        new SubstringComparator("VB")))), "ValueFilter with SubstringComparator (case-insensitive)");
    eq(26, count(t, ds().setFilter(new FamilyFilter(CompareOperator.EQUAL,
        new BinaryComparator(CF)))), "FamilyFilter");
    List<Result> scv = all(t, ds().setFilter(new SingleColumnValueFilter(CF, b("q1"),
        CompareOperator.EQUAL, b("vc"))));
    eq(1, scv.size(), "SingleColumnValueFilter");
    eq(3, scv.get(0).size(), "SingleColumnValueFilter keeps the row's cells");
    List<Result> scve = all(t, ds().setFilter(new SingleColumnValueExcludeFilter(CF, b("q1"),
        CompareOperator.EQUAL, b("vc"))));
    eq(2, scve.get(0).size(), "SingleColumnValueExcludeFilter drops the tested column");
    eq(26, cells(t, ds().setFilter(new TimestampsFilter(Arrays.asList(100L)))), "TimestampsFilter");
    eq(2, t.get(new Get(b("c1")).setFilter(new ColumnCountGetFilter(2))).size(),
        "ColumnCountGetFilter on a Get");
    eq(3, count(t, ds().setFilter(new InclusiveStopFilter(b("c1")))), "InclusiveStopFilter");
    eq(26, count(t, ds().setFilter(new RandomRowFilter(1.0f))), "RandomRowFilter(1)");
    eq(0, count(t, ds().setFilter(new RandomRowFilter(0.0f))), "RandomRowFilter(0)");
    eq(3, count(t, ds().setFilter(new WhileMatchFilter(new RowFilter(CompareOperator.LESS,
        new BinaryComparator(b("d")))))), "WhileMatchFilter ends the scan");
    eq(25, count(t, ds().setFilter(new SkipFilter(new ValueFilter(CompareOperator.NOT_EQUAL,
        new BinaryComparator(b("vd")))))), "SkipFilter");
    eq(5, count(t, ds().setFilter(new SingleColumnValueFilter(CF, b("q2"), CompareOperator.GREATER,
        new LongComparator(20)))), "LongComparator");
    eq(1, count(t, ds().setFilter(new RowFilter(CompareOperator.EQUAL,
        new BinaryPrefixComparator(b("a"))))), "BinaryPrefixComparator");
    eq(3, count(t, ds().setFilter(new RowFilter(CompareOperator.EQUAL,
        new RegexStringComparator("^[xyz]")))), "RegexStringComparator");
    // As HBase: no stored value is null, an empty one neither.
    eq(0, cells(t, ds().setFilter(new ValueFilter(CompareOperator.EQUAL, new NullComparator()))),
        "NullComparator");
    eq(2, count(t, ds().setFilter(new FilterList(FilterList.Operator.MUST_PASS_ONE,
        new RowFilter(CompareOperator.EQUAL, new BinaryComparator(b("a1"))),
        new RowFilter(CompareOperator.EQUAL, new BinaryComparator(b("b1")))))),
        "FilterList MUST_PASS_ONE");
    eq(1, t.get(new Get(b("a1")).setFilter(new QualifierFilter(CompareOperator.EQUAL,
        new BinaryComparator(b("q2"))))).size(), "a filter on a Get");
    ok("filters and comparators");
  }

  static void errors(Connection conn, Table t) throws IOException {
    try (Table missing = conn.getTable(TableName.valueOf("it_no_such_table"))) {
      missing.get(new Get(b("a")));
      check(false, "a get on a missing table throws");
    } catch (org.apache.hadoop.hbase.TableNotFoundException e) {
      ok("missing table: TableNotFoundException");
    }
    try {
      t.put(new Put(b("a1")).addColumn(b("nofamily"), b("q"), b("v")));
      check(false, "a put to a missing family throws");
    } catch (IOException e) {
      check(String.valueOf(e).contains("NoSuchColumnFamilyException")
          || String.valueOf(e.getCause()).contains("NoSuchColumnFamilyException"),
          "NoSuchColumnFamilyException: " + e);
      ok("missing family: NoSuchColumnFamilyException");
    }
    try {
      List<Pair<byte[], byte[]>> keys = new ArrayList<>();
      keys.add(new Pair<>(b("a1"), new byte[] {0, 0}));
      count(t, ds().setFilter(new FuzzyRowFilter(keys)));
      check(false, "an unsupported filter throws");
    } catch (IOException | RuntimeException e) {
      check(String.valueOf(e).contains("FuzzyRowFilter"), "the error names the filter: " + e);
      ok("unsupported filter: DoNotRetryIOException naming it");
    }
  }

  // ---- split while writing and scanning

  static void split(Connection conn, TableName tn) throws Exception {
    try (Admin admin = conn.getAdmin()) {
      if (admin.tableExists(tn)) {
        admin.disableTable(tn);
        admin.deleteTable(tn);
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(tn)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF)).build());
      eq(1, admin.getRegions(tn).size(), "one region before the split");
      final int rows = 6000;
      AtomicReference<Throwable> failed = new AtomicReference<>();
      AtomicBoolean writing = new AtomicBoolean(true);
      Thread writer = new Thread(() -> {
        try (Table t = conn.getTable(tn)) {
          for (int i = 0; i < rows; i++) {
            t.put(new Put(b(String.format("%c%06d", (char) ('a' + i % 26), i)))
                .addColumn(CF, b("q"), b("v" + i)));
          }
        } catch (Throwable e) {
          failed.set(e);
        } finally {
          writing.set(false);
        }
      });
      writer.start();
      Thread.sleep(300);
      // Scans while the writer runs and the table splits.
      try (Table t = conn.getTable(tn)) {
        admin.split(tn, b("m"));
        int scansDuring = 0;
        boolean second = false;
        while (writing.get()) {
          count(t, new Scan().setCaching(50));
          scansDuring++;
          // The second split lands in a child of the first, which the
          // server splits again only once its compaction has rewritten the
          // parent's files (HBase refuses regions with references too).
          if (scansDuring >= 3 && !second) {
            second = splitIfSplittable(admin, tn, b("t"));
          }
        }
        writer.join();
        if (failed.get() != null) {
          throw new AssertionError("the writer failed", failed.get());
        }
        check(scansDuring > 0, "scans ran during the writes");
        long deadline = System.currentTimeMillis() + 30000;
        while (!second && System.currentTimeMillis() < deadline) {
          Thread.sleep(100);
          second = splitIfSplittable(admin, tn, b("t"));
        }
        check(second, "the second split was accepted once its region had compacted");
        while (admin.getRegions(tn).size() < 3 && System.currentTimeMillis() < deadline) {
          Thread.sleep(100);
        }
        eq(3, admin.getRegions(tn).size(), "three regions after two splits");
        eq(rows, count(t, new Scan()), "every row written during the splits is there");
        eq(rows, count(t, new Scan().setReversed(true)), "and reversed");
        for (int i = 0; i < rows; i += 997) {
          String row = String.format("%c%06d", (char) ('a' + i % 26), i);
          eq("v" + i, s(t.get(new Get(b(row))).getValue(CF, b("q"))), "get after the split");
        }
      }
      ok("split while writing and scanning");
    }
  }

  /** Splits at `at`; false if the region refused because it still reads its parent's files. */
  static boolean splitIfSplittable(Admin admin, TableName tn, byte[] at) throws IOException {
    try {
      admin.split(tn, at);
      return true;
    } catch (DoNotRetryIOException e) {
      if (String.valueOf(e.getMessage()).contains("can split after its compaction")) {
        return false;
      }
      throw e;
    }
  }

  // ---- writes across a server restart

  static void write(Connection conn, TableName tn) throws Exception {
    try (Admin admin = conn.getAdmin()) {
      if (!admin.tableExists(tn)) {
        admin.createTable(TableDescriptorBuilder.newBuilder(tn)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF)).build(),
            new byte[][] {b("m")});
      }
    }
    try (Table t = conn.getTable(tn)) {
      for (int batch = 0; ; batch++) {
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          int n = batch * 20 + i;
          puts.add(new Put(b(String.format("%c%07d", (char) ('a' + n % 26), n)))
              .addColumn(CF, b("q"), b("v" + n)));
        }
        t.put(puts);
        System.out.println("acked " + (batch + 1) * 20);
        System.out.flush();
        Thread.sleep(20);
      }
    }
  }

  // ---- cluster: table changes through a server that is not the master

  static void adminVia(Connection conn, TableName tn, String follower) throws Exception {
    TableDescriptor desc = TableDescriptorBuilder.newBuilder(tn)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF)).build();
    try (Admin admin = conn.getAdmin()) {
      if (admin.tableExists(tn)) {
        admin.disableTable(tn);
        admin.deleteTable(tn);
      }
      admin.createTable(desc, new byte[][] {b("g"), b("p")});
      check(admin.tableExists(tn), "tableExists after create");
      check(admin.isTableEnabled(tn), "enabled after create");
      eq(3, admin.getRegions(tn).size(), "regions from split keys");
      try (Table t = conn.getTable(tn)) {
        for (String r : new String[] {"a", "h", "z"}) {
          t.put(new Put(b(r)).addColumn(CF, b("q"), b("v" + r)));
        }
        for (String r : new String[] {"a", "h", "z"}) {
          eq("v" + r, s(t.get(new Get(b(r))).getValue(CF, b("q"))), "read back " + r);
        }
      }
      admin.disableTable(tn);
      check(admin.isTableDisabled(tn), "disabled");
      admin.deleteTable(tn);
      check(!admin.tableExists(tn), "gone after delete");
      ok("admin through a follower: create/disable/delete");

      // The same changes sent straight to the follower's MasterService.
      String[] hp = follower.split(":");
      ServerName sn =
          ServerName.valueOf(hp[0], Integer.parseInt(hp[1]), ServerName.NON_STARTCODE);
      try (RpcClient rpc =
          RpcClientFactory.createClient(conn.getConfiguration(), conn.getClusterId())) {
        MasterProtos.MasterService.BlockingInterface master = MasterProtos.MasterService
            .newBlockingStub(rpc.createBlockingRpcChannel(sn, User.getCurrent(), 60000));
        long none = HConstants.NO_NONCE;
        master.createTable(null,
            RequestConverter.buildCreateTableRequest(desc, new byte[][] {b("m")}, none, none));
        check(admin.tableExists(tn), "tableExists after a create sent to the follower");
        eq(2, admin.getRegions(tn).size(), "regions of a create sent to the follower");
        try (Table t = conn.getTable(tn)) {
          t.put(new Put(b("x")).addColumn(CF, b("q"), b("vx")));
          eq("vx", s(t.get(new Get(b("x"))).getValue(CF, b("q"))), "read back x");
        }
        try {
          master.createTable(null,
              RequestConverter.buildCreateTableRequest(desc, null, none, none));
          check(false, "creating an existing table through the follower throws");
        } catch (org.apache.hbase.thirdparty.com.google.protobuf.ServiceException e) {
          String text = String.valueOf(e.getCause());
          check(text.contains("TableExistsException"), "TableExistsException, got " + text);
        }
        master.disableTable(null, RequestConverter.buildDisableTableRequest(tn, none, none));
        check(admin.isTableDisabled(tn), "disabled through the follower");
        master.deleteTable(null, RequestConverter.buildDeleteTableRequest(tn, none, none));
        check(!admin.tableExists(tn), "gone after a delete sent to the follower");
      }
      ok("table changes sent straight to a follower's MasterService");
    }
  }

  // ---- cluster: writes across the loss of the client's only bootstrap server

  static void writer(Connection conn, TableName tn) throws Exception {
    try (Admin admin = conn.getAdmin()) {
      if (!admin.tableExists(tn)) {
        admin.createTable(TableDescriptorBuilder.newBuilder(tn)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF)).build(),
            new byte[][] {b("e"), b("i"), b("m"), b("q"), b("u")});
      }
    }
    int endpoints = Integer.MIN_VALUE;
    try (Table t = conn.getTable(tn)) {
      for (int batch = 0; ; batch++) {
        int known = registryEndpoints(conn);
        if (known != endpoints) {
          endpoints = known;
          System.out.println("endpoints " + known);
        }
        long start = System.currentTimeMillis();
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          int n = batch * 20 + i;
          puts.add(new Put(b(String.format("%c%07d", (char) ('a' + n % 26), n)))
              .addColumn(CF, b("q"), b("v" + n)));
        }
        t.put(puts);
        System.out.println(
            "acked " + (batch + 1) * 20 + " " + start + " " + System.currentTimeMillis());
        System.out.flush();
        Thread.sleep(50);
      }
    }
  }

  /** How many servers the client's registry asks now (-1: unknown). HBase keeps it private. */
  static int registryEndpoints(Connection conn) {
    try {
      Object registry = field(conn, "registry");
      java.lang.reflect.Method m = Class
          .forName("org.apache.hadoop.hbase.client.AbstractRpcBasedConnectionRegistry")
          .getDeclaredMethod("getParsedServers");
      m.setAccessible(true);
      return ((java.util.Set<?>) m.invoke(registry)).size();
    } catch (Exception e) {
      return -1;
    }
  }

  static Object field(Object o, String name) throws Exception {
    for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
      try {
        java.lang.reflect.Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
      } catch (NoSuchFieldException e) {
        // a superclass may have it
      }
    }
    throw new NoSuchFieldException(name);
  }

  static void verify(Connection conn, TableName tn, int acked) throws Exception {
    try (Table t = conn.getTable(tn)) {
      for (int n = 0; n < acked; n++) {
        String row = String.format("%c%07d", (char) ('a' + n % 26), n);
        Result r = t.get(new Get(b(row)));
        eq("v" + n, s(r.getValue(CF, b("q"))), "acknowledged row " + row);
      }
      check(count(t, new Scan()) >= acked, "the scan sees every acknowledged row");
    }
    ok("every acknowledged write survived the restart");
  }
}
