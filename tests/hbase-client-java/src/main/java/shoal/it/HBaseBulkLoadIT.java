package shoal.it;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.tool.BulkLoadHFilesTool;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's bulk load through HBase's own tool: the Rust test
 * (crates/shoal-cli/tests/hbase_bulkload_e2e.rs) runs this program once
 * against Shoal and once against a real HBase 2.6.1 and compares what it
 * writes, cell by cell. Compiled against hbase-server 2.6.1 (the tool lives
 * there).
 *
 * <ol>
 *   <li>creates the table (family f, VERSIONS 10, split keys inside the
 *       fixture's rows, so the tool splits the fixture HFile itself);
 *   <li>{@code BulkLoadHFilesTool.bulkLoad(table, <work>/load1)}: a real
 *       HBase HFile laid out as {@code load1/f/<hex>};
 *   <li>dumps every version of every cell ("phase1");
 *   <li>puts at the exact keys (row, column, timestamp) of some loaded cells:
 *       a write after the load wins;
 *   <li>writes a second HFile with HBase's writer ({@code load2/f/<hex>}),
 *       cells at some of the same keys (including ones just put) and new
 *       columns, and bulk-loads it while another thread puts other rows:
 *       the load, after those puts, wins over them;
 *   <li>puts at some keys of the second file (they win again);
 *   <li>dumps everything ("final").
 * </ol>
 *
 * <p>Usage: HBaseBulkLoadIT host:port table work-dir out-file
 */
public final class HBaseBulkLoadIT {
  private static final byte[] F = b("f");
  private static final byte[][] SPLITS = {
    b("com.example.www/users/000200"),
    b("com.example.www/users/000500"),
    b("org.apache.hbase/metrics/host-030"),
  };

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void step(String name) {
    System.out.println("ok " + name);
    System.out.flush();
  }

  /** Every version of every cell, in order. */
  private static List<Cell> all(Table t) throws Exception {
    List<Cell> out = new ArrayList<>();
    try (ResultScanner s = t.getScanner(new Scan().readAllVersions())) {
      for (Result r : s) {
        for (Cell c : r.rawCells()) {
          out.add(c);
        }
      }
    }
    return out;
  }

  private static void dump(PrintWriter w, String phase, List<Cell> cells) {
    for (Cell c : cells) {
      w.println(phase + " " + Bytes.toHex(CellUtil.cloneRow(c)) + " "
        + Bytes.toHex(CellUtil.cloneFamily(c)) + " " + Bytes.toHex(CellUtil.cloneQualifier(c))
        + " " + c.getTimestamp() + " " + c.getType() + " " + Bytes.toHex(CellUtil.cloneValue(c)));
    }
    w.flush();
  }

  private static void load(Configuration c, TableName tn, String dir, String what)
    throws Exception {
    Map<?, ?> loaded = new BulkLoadHFilesTool(c).bulkLoad(tn, new Path(dir));
    if (loaded.isEmpty()) {
      throw new AssertionError("FAILED: " + what + ": the tool loaded nothing");
    }
    step(what + " (" + loaded.size() + " file groups)");
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: HBaseBulkLoadIT <host:port> <table> <work-dir> <out-file>");
      System.exit(2);
    }
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", args[0]);
    c.setInt("hbase.client.retries.number", 15);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 30000);
    c.setInt("hbase.client.operation.timeout", 120000);
    c.set("fs.defaultFS", "file:///");
    TableName tn = TableName.valueOf(args[1]);
    String work = args[2];
    try (Connection conn = ConnectionFactory.createConnection(c);
      PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[3])))) {
      try (Admin admin = conn.getAdmin()) {
        admin.createTable(
          TableDescriptorBuilder.newBuilder(tn)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(10).build())
            .build(),
          SPLITS);
      }
      step("create table");

      load(c, tn, work + "/load1", "load1");
      try (Table t = conn.getTable(tn)) {
        List<Cell> phase1 = all(t);
        dump(out, "phase1", phase1);
        if (phase1.isEmpty()) {
          throw new AssertionError("FAILED: nothing visible after load1");
        }
        step("phase1 (" + phase1.size() + " cells)");

        // Puts at the exact keys of every 6th visible cell.
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < phase1.size(); i += 6) {
          Cell k = phase1.get(i);
          puts.add(new Put(CellUtil.cloneRow(k)).addColumn(F, CellUtil.cloneQualifier(k),
            k.getTimestamp(), b("put-after-load1-" + i)));
        }
        t.put(puts);
        step("puts after load1 (" + puts.size() + ")");

        // The second file: every 4th visible cell's key (some just put),
        // and a new column next to every 10th, in HBase's order.
        TreeSet<Cell> second = new TreeSet<>(CellComparator.getInstance());
        for (int i = 0; i < phase1.size(); i++) {
          Cell k = phase1.get(i);
          byte[] row = CellUtil.cloneRow(k);
          byte[] q = CellUtil.cloneQualifier(k);
          if (i % 4 == 0) {
            second.add(new KeyValue(row, F, q, k.getTimestamp(), b("load2-" + i)));
          }
          if (i % 10 == 0) {
            second.add(new KeyValue(row, F, Bytes.add(q, b("-l2")), k.getTimestamp(),
              b("load2-new-" + i)));
          }
        }
        FileSystem fs = FileSystem.getLocal(c);
        Path file2 = new Path(work + "/load2/f/0000000000000000000000000000000b");
        try (HFile.Writer w = HFile.getWriterFactory(c, new CacheConfig(c)).withPath(fs, file2)
          .withFileContext(new HFileContextBuilder().withBlockSize(4096).build()).create()) {
          for (Cell kv : second) {
            w.append(kv);
          }
        }
        step("wrote load2 (" + second.size() + " cells)");

        // Puts on other rows while the second file loads.
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread writer = new Thread(() -> {
          try (Table t2 = conn.getTable(tn)) {
            for (int i = 0; i < 200; i++) {
              t2.put(new Put(b(String.format("concurrent-%04d", i))).addColumn(F, b("q"),
                1_700_000_000_000L + i, b("v" + i)));
            }
          } catch (Throwable e) {
            failed.set(e);
          }
        });
        writer.start();
        load(c, tn, work + "/load2", "load2");
        writer.join();
        if (failed.get() != null) {
          throw new AssertionError("FAILED: concurrent puts", failed.get());
        }
        step("concurrent puts");

        // Puts at every 3rd key of the second file win again.
        List<Put> after = new ArrayList<>();
        int i = 0;
        for (Cell k : second) {
          if (i % 3 == 0) {
            after.add(new Put(CellUtil.cloneRow(k)).addColumn(F, CellUtil.cloneQualifier(k),
              k.getTimestamp(), b("put-after-load2-" + i)));
          }
          i++;
        }
        t.put(after);
        step("puts after load2 (" + after.size() + ")");

        List<Cell> fin = all(t);
        dump(out, "final", fin);
        step("final (" + fin.size() + " cells)");
      }
    }
    System.out.println("done bulkload");
  }
}
