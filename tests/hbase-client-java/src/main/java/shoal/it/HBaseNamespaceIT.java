package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * HBase's namespace Admin calls through the stock client (hbase-client
 * 2.6.1): the Rust test (crates/shoal-cli/tests/hbase_snapshot_e2e.rs) runs
 * this program against a real standalone HBase 2.6.1 and against `shoal
 * serve` and compares their outputs line by line. It makes a namespace
 * with a property, a pre-split table in it, writes and reads it, lists and
 * describes namespaces and their tables, alters the namespace, and tries
 * each error case (a table in a missing namespace, a namespace made twice,
 * a non-empty namespace dropped, a missing namespace described or listed),
 * then drops it all. Each step prints one line `step: outcome`; errors print
 * the exception's class and the first line of its message (what `hbase
 * shell` reads the namespace out of).
 *
 * <p>Usage: HBaseNamespaceIT host:port
 */
public final class HBaseNamespaceIT {
  private static final String NS = "ns_it";
  private static final byte[] CF = b("f");
  private static final TableName T = TableName.valueOf(NS, "t1");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void say(String step, Object outcome) {
    System.out.println(step + ": " + outcome);
    System.out.flush();
  }

  interface Step {
    Object run() throws Exception;
  }

  /** Runs `s`, printing its outcome or its error's class and first line. */
  private static void step(String name, Step s) {
    try {
      say(name, s.run());
    } catch (Exception e) {
      String m = String.valueOf(e.getMessage());
      int nl = m.indexOf('\n');
      say(name, e.getClass().getName() + " | " + (nl < 0 ? m : m.substring(0, nl)));
    }
  }

  /** The namespaces among `all` this program (or HBase itself) made. */
  private static TreeSet<String> ours(String[] all) {
    TreeSet<String> out = new TreeSet<>();
    for (String n : all) {
      if (n.equals("default") || n.equals("hbase") || n.startsWith(NS)) {
        out.add(n);
      }
    }
    return out;
  }

  private static String props(NamespaceDescriptor d) {
    return d.getName() + " " + new TreeMap<>(d.getConfiguration());
  }

  private static List<String> names(List<TableName> tables) {
    List<String> out = new ArrayList<>();
    for (TableName t : tables) {
      out.add(t.getNameAsString());
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HBaseNamespaceIT <host:port>");
      System.exit(2);
    }
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    c.set("hbase.client.bootstrap.servers", args[0]);
    c.setInt("hbase.client.retries.number", 3);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 20000);
    c.setInt("hbase.client.operation.timeout", 60000);
    try (Connection conn = ConnectionFactory.createConnection(c);
        Admin admin = conn.getAdmin()) {
      run(conn, admin);
    }
    System.out.println("done namespaces");
  }

  static void run(Connection conn, Admin admin) throws Exception {
    TableDescriptor td =
        TableDescriptorBuilder.newBuilder(T)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF))
            .build();
    step(
        "createTable in a missing namespace",
        () -> {
          admin.createTable(td);
          return "ok";
        });
    step(
        "getNamespaceDescriptor missing",
        () -> props(admin.getNamespaceDescriptor(NS)));
    step(
        "createNamespace",
        () -> {
          admin.createNamespace(
              NamespaceDescriptor.create(NS).addConfiguration("owner", "it").build());
          return "ok";
        });
    step(
        "createNamespace again",
        () -> {
          admin.createNamespace(NamespaceDescriptor.create(NS).build());
          return "ok";
        });
    step(
        "createNamespace bad name",
        () -> {
          admin.createNamespace(NamespaceDescriptor.create("bad-ns").build());
          return "ok";
        });
    step("getNamespaceDescriptor", () -> props(admin.getNamespaceDescriptor(NS)));
    step("listNamespaces", () -> ours(admin.listNamespaces()));
    step(
        "listNamespaceDescriptors",
        () -> {
          TreeSet<String> out = new TreeSet<>();
          for (NamespaceDescriptor d : admin.listNamespaceDescriptors()) {
            if (d.getName().startsWith(NS)) {
              out.add(props(d));
            }
          }
          return out;
        });
    step(
        "createTable ns_it:t1 split at m",
        () -> {
          admin.createTable(td, new byte[][] {b("m")});
          return "ok";
        });
    step("tableExists", () -> admin.tableExists(T));
    step(
        "regions",
        () -> {
          TreeSet<String> starts = new TreeSet<>();
          boolean named = true;
          for (RegionInfo r : admin.getRegions(T)) {
            starts.add(new String(r.getStartKey(), StandardCharsets.UTF_8));
            named &= r.getRegionNameAsString().startsWith(NS + ":t1,");
            named &= r.getTable().equals(T);
          }
          return starts + " named as HBase names them=" + named;
        });
    step(
        "put and get across regions",
        () -> {
          try (Table t = conn.getTable(T)) {
            for (String row : new String[] {"a", "z"}) {
              t.put(new Put(b(row)).addColumn(CF, b("q"), b("v-" + row)));
            }
            Result r = t.get(new Get(b("z")));
            return new String(r.getValue(CF, b("q")), StandardCharsets.UTF_8);
          }
        });
    step(
        "scan",
        () -> {
          List<String> rows = new ArrayList<>();
          try (Table t = conn.getTable(T);
              ResultScanner s = t.getScanner(new Scan())) {
            for (Result r : s) {
              rows.add(new String(r.getRow(), StandardCharsets.UTF_8));
            }
          }
          return rows;
        });
    step("listTableNamesByNamespace", () -> names(List.of(admin.listTableNamesByNamespace(NS))));
    step(
        "listTableDescriptorsByNamespace",
        () -> {
          List<String> out = new ArrayList<>();
          for (TableDescriptor d : admin.listTableDescriptorsByNamespace(b(NS))) {
            out.add(d.getTableName().getNameAsString() + " families=" + d.getColumnFamilyCount());
          }
          return out;
        });
    step(
        "listTableNames by pattern",
        () -> names(List.of(admin.listTableNames(Pattern.compile(NS + ":.*")))));
    step(
        "listTableNamesByNamespace missing",
        () -> names(List.of(admin.listTableNamesByNamespace(NS + "_missing"))));
    step(
        "deleteNamespace holding a table",
        () -> {
          admin.deleteNamespace(NS);
          return "ok";
        });
    step(
        "modifyNamespace",
        () -> {
          admin.modifyNamespace(
              NamespaceDescriptor.create(NS).addConfiguration("owner", "ops").build());
          return props(admin.getNamespaceDescriptor(NS));
        });
    step(
        "drop the table",
        () -> {
          admin.disableTable(T);
          admin.deleteTable(T);
          return admin.tableExists(T);
        });
    step(
        "deleteNamespace",
        () -> {
          admin.deleteNamespace(NS);
          return "ok";
        });
    step("listNamespaces after", () -> ours(admin.listNamespaces()));
    step(
        "deleteNamespace default",
        () -> {
          admin.deleteNamespace("default");
          return "ok";
        });
  }
}
