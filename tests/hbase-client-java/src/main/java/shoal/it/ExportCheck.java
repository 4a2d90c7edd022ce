package shoal.it;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.tool.BulkLoadHFilesTool;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.util.ToolRunner;

/**
 * The HBase side of {@code crates/shoal-cli/tests/export_e2e.rs}: loads what {@code shoal export
 * hfiles} wrote into a real HBase 2.6.1 with HBase's own tools, and reads it back.
 *
 * <p>{@code ExportCheck <bootstrap host:port> <table> <family:versions,...> <split hex,...|->
 * <export dir>}: creates the table with the stock client (those families, each keeping that many
 * versions, pre-split at those keys), runs {@link BulkLoadHFilesTool} (what {@code hbase
 * completebulkload} runs) on the export directory, then scans the table with every version and
 * prints each cell as {@code cell<TAB>row hex<TAB>family hex<TAB>qualifier hex<TAB>timestamp<TAB>
 * value hex}, then {@code regions N} and {@code done}.
 *
 * <p>Unlike the rest of this project it needs hbase-server (the bulk load tool) on the classpath:
 * the Rust test compiles it against {@code tests/hbase-server}'s classpath, which includes
 * hbase-client 2.6.1.
 */
public final class ExportCheck {
  private ExportCheck() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println(
          "usage: ExportCheck <host:port> <table> <family:versions,...> <splits|-> <dir>");
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
    List<byte[]> splits = new ArrayList<>();
    if (!args[3].equals("-")) {
      for (String s : args[3].split(",")) {
        splits.add(Bytes.fromHex(s));
      }
    }
    try (Connection conn = ConnectionFactory.createConnection(c)) {
      try (Admin admin = conn.getAdmin()) {
        TableDescriptorBuilder td = TableDescriptorBuilder.newBuilder(tn);
        for (String f : args[2].split(",")) {
          String[] nv = f.split(":");
          td.setColumnFamily(
              ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes(nv[0]))
                  .setMaxVersions(Integer.parseInt(nv[1]))
                  .build());
        }
        admin.createTable(td.build(), splits.toArray(new byte[0][]));
        System.out.println("created " + tn + " with " + (splits.size() + 1) + " regions");
      }
      int rc =
          ToolRunner.run(
              new Configuration(c),
              new BulkLoadHFilesTool(new Configuration(c)),
              new String[] {new File(args[4]).getAbsolutePath(), tn.getNameAsString()});
      if (rc != 0) {
        throw new AssertionError("FAILED: BulkLoadHFilesTool exited with " + rc);
      }
      System.out.println("bulk loaded " + args[4]);
      try (Table t = conn.getTable(tn);
          ResultScanner scanner = t.getScanner(new Scan().readAllVersions())) {
        for (Result r : scanner) {
          for (Cell cell : r.rawCells()) {
            System.out.println(
                "cell\t"
                    + hex(CellUtil.cloneRow(cell))
                    + "\t"
                    + hex(CellUtil.cloneFamily(cell))
                    + "\t"
                    + hex(CellUtil.cloneQualifier(cell))
                    + "\t"
                    + cell.getTimestamp()
                    + "\t"
                    + hex(CellUtil.cloneValue(cell)));
          }
        }
      }
      try (Admin admin = conn.getAdmin()) {
        System.out.println("regions " + admin.getRegions(tn).size());
      }
    }
    System.out.println("done");
  }

  private static String hex(byte[] b) {
    return Bytes.toHex(b);
  }
}
