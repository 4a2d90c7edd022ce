package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * hbase-client 2.4, configured only with ZooKeeper's quorum and port (2.4
 * finds a cluster through ZooKeeper by default), against Shoal's read-only
 * ZooKeeper registry: the Rust test (crates/shoal-cli/tests/zk_registry_e2e.rs)
 * compares what it prints, line by line.
 *
 * <p>Usage: ZkRegistryIT zk-host zk-port table
 */
public final class ZkRegistryIT {
  private static final byte[] F = b("f");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String s(byte[] b) {
    return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
  }

  private static void out(String line) {
    System.out.println(line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: ZkRegistryIT <zk-host> <zk-port> <table>");
      System.exit(2);
    }
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.zookeeper.quorum", args[0]);
    c.set("hbase.zookeeper.property.clientPort", args[1]);
    c.setInt("hbase.client.retries.number", 5);
    c.setInt("hbase.client.pause", 100);
    c.setInt("hbase.rpc.timeout", 30000);
    c.setInt("zookeeper.recovery.retry", 1);
    TableName tn = TableName.valueOf(args[2]);
    try (Connection conn = ConnectionFactory.createConnection(c);
        Admin admin = conn.getAdmin()) {
      if (admin.tableExists(tn)) {
        admin.disableTable(tn);
        admin.deleteTable(tn);
      }
      admin.createTable(
          TableDescriptorBuilder.newBuilder(tn)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
              .build());
      out("created " + tn.getNameAsString());
      List<String> names = new ArrayList<>();
      for (TableName t : admin.listTableNames()) {
        names.add(t.getNameAsString());
      }
      out("listed " + names.contains(tn.getNameAsString()));
      try (Table t = conn.getTable(tn)) {
        for (int i = 0; i < 3; i++) {
          t.put(new Put(b("row" + i)).addColumn(F, b("q"), b("v" + i)));
        }
        out("put 3");
        Result r = t.get(new Get(b("row1")));
        out("get row1 " + s(r.getValue(F, b("q"))));
        StringBuilder rows = new StringBuilder();
        try (ResultScanner sc = t.getScanner(new Scan())) {
          for (Result x : sc) {
            rows.append(' ').append(s(x.getRow())).append('=').append(s(x.getValue(F, b("q"))));
          }
        }
        out("scan" + rows);
        t.delete(new Delete(b("row1")));
        out("deleted row1, get " + t.get(new Get(b("row1"))).isEmpty());
      }
      ClusterMetrics m = admin.getClusterMetrics();
      ServerName master = m.getMasterName();
      out("cluster id " + m.getClusterId());
      out("master " + (master != null) + ", live servers " + m.getLiveServerMetrics().size());
      admin.disableTable(tn);
      admin.deleteTable(tn);
      out("dropped " + !admin.tableExists(tn));
    }
    out("done");
  }
}
