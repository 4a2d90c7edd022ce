package shoal.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HColumnDescriptor;
import org.apache.hadoop.hbase.HTableDescriptor;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.CompareFilter;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.rest.Constants;
import org.apache.hadoop.hbase.rest.client.Client;
import org.apache.hadoop.hbase.rest.client.Cluster;
import org.apache.hadoop.hbase.rest.client.RemoteAdmin;
import org.apache.hadoop.hbase.rest.client.RemoteHTable;
import org.apache.hadoop.hbase.rest.client.Response;
import org.apache.hadoop.hbase.rest.model.StorageClusterStatusModel;
import org.apache.hadoop.hbase.rest.model.TableInfoModel;
import org.apache.hadoop.hbase.rest.model.TableListModel;
import org.apache.hadoop.hbase.rest.model.TableModel;
import org.apache.hadoop.hbase.rest.model.TableRegionModel;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's own REST client (hbase-rest 2.6.1's {@code RemoteAdmin} and {@code RemoteHTable}, from
 * its test jar) against a REST gateway: Shoal's, or HBase's own as the reference. Every step prints
 * one line {@code step: result} with values written out the same way whoever answered, so
 * crates/shoal-cli/tests/rest_e2e.rs can compare the two outputs line by line.
 *
 * <p>Usage: {@code HBaseRestIT <host:port> [token]}.
 */
public final class HBaseRestIT {
  private static final byte[] CF = Bytes.toBytes("cf");
  private static final String TABLE = "rest_it";

  private HBaseRestIT() {}

  public static void main(String[] args) throws Exception {
    String[] hp = args[0].split(":");
    Cluster cluster = new Cluster();
    cluster.add(hp[0], Integer.parseInt(hp[1]));
    Client client = new Client(cluster);
    if (args.length > 1) {
      client.addExtraHeader("Authorization", "Bearer " + args[1]);
    }
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hbase.rest.client.max.retries", 2);
    conf.setLong("hbase.rest.client.sleep", 100);
    RemoteAdmin admin = new RemoteAdmin(client, conf);
    try {
      admin(admin, client);
      data(new RemoteHTable(client, conf, TABLE));
      scans(new RemoteHTable(client, conf, TABLE));
      regions(client);
      drop(admin);
    } finally {
      client.shutdown();
    }
    System.out.println("done rest");
  }

  private static void admin(RemoteAdmin admin, Client client) throws Exception {
    System.out.println("cluster version: " + admin.getClusterVersion().getVersion());
    System.out.println("rest version given: " + !admin.getRestVersion().getRESTVersion().isEmpty());
    HTableDescriptor desc = new HTableDescriptor(TableName.valueOf(TABLE));
    desc.addFamily(new HColumnDescriptor(CF).setMaxVersions(3));
    desc.addFamily(new HColumnDescriptor("g"));
    admin.createTable(desc);
    System.out.println("createTable: ok");
    System.out.println("isTableAvailable: " + admin.isTableAvailable(TABLE));
    System.out.println("isTableAvailable missing: " + admin.isTableAvailable("rest_missing"));
    List<String> names = new ArrayList<>();
    for (TableModel t : admin.getTableList().getTables()) {
      if (t.getName().startsWith("rest_")) {
        names.add(t.getName());
      }
    }
    System.out.println("getTableList: " + names);
    StorageClusterStatusModel status = admin.getClusterStatus();
    System.out.println(
        "getClusterStatus: live=" + status.getLiveNodes().size() + " dead=" + status.getDeadNodes().size()
            + " regions>0=" + (status.getRegions() > 0));
    RemoteHTable t = new RemoteHTable(client, TABLE);
    HTableDescriptor got = t.getTableDescriptor();
    List<String> families = new ArrayList<>();
    for (HColumnDescriptor f : got.getColumnFamilies()) {
      families.add(f.getNameAsString() + "/versions=" + f.getMaxVersions());
    }
    System.out.println("getTableDescriptor: " + got.getTableName().getNameAsString() + " " + families);
    try {
      new RemoteHTable(client, "rest_missing").getTableDescriptor();
      System.out.println("getTableDescriptor missing: ok?");
    } catch (IOException e) {
      System.out.println("getTableDescriptor missing: " + e.getMessage());
    }
  }

  private static String show(Result r) {
    if (r == null || r.isEmpty()) {
      return "(empty)";
    }
    StringBuilder sb = new StringBuilder();
    for (Cell c : r.rawCells()) {
      if (sb.length() > 0) {
        sb.append(' ');
      }
      sb.append(Bytes.toStringBinary(CellUtil.cloneRow(c)))
          .append('/')
          .append(Bytes.toStringBinary(CellUtil.cloneFamily(c)))
          .append(':')
          .append(Bytes.toStringBinary(CellUtil.cloneQualifier(c)))
          .append('@')
          .append(c.getTimestamp())
          .append('=')
          .append(Bytes.toStringBinary(CellUtil.cloneValue(c)));
    }
    return sb.toString();
  }

  private static Put put(String row, String col, long ts, String value) {
    return new Put(Bytes.toBytes(row)).addColumn(CF, Bytes.toBytes(col), ts, Bytes.toBytes(value));
  }

  private static void data(RemoteHTable t) throws Exception {
    t.put(put("r1", "a", 1000, "v1"));
    t.put(put("r1", "a", 2000, "v2"));
    t.put(put("r1", "b", 1000, "b1"));
    t.put(Arrays.asList(put("r2", "a", 1000, "x2"), put("r3", "a", 1000, "x3"),
        put("r3", "b", 1000, "y3"), put("r 4/+%", "a", 1000, "odd")));
    System.out.println("put: ok");
    byte[] r1 = Bytes.toBytes("r1");
    System.out.println("get r1: " + show(t.get(new Get(r1))));
    System.out.println("get r1 versions: " + show(t.get(new Get(r1).readVersions(3))));
    System.out.println(
        "get r1 time range: " + show(t.get(new Get(r1).setTimeRange(0, 1500).readVersions(3))));
    System.out.println("get r1 timestamp: " + show(t.get(new Get(r1).setTimestamp(1000))));
    System.out.println(
        "get r1 column: " + show(t.get(new Get(r1).addColumn(CF, Bytes.toBytes("b")))));
    System.out.println("get r1 family: " + show(t.get(new Get(r1).addFamily(CF))));
    System.out.println("get odd row: " + show(t.get(new Get(Bytes.toBytes("r 4/+%")))));
    System.out.println("get missing: " + show(t.get(new Get(Bytes.toBytes("nope")))));
    Result[] many = t.get(Arrays.asList(new Get(r1), new Get(Bytes.toBytes("nope")),
        new Get(Bytes.toBytes("r3"))));
    List<String> shown = new ArrayList<>();
    for (Result r : many) {
      shown.add(show(r));
    }
    System.out.println("multi get: " + shown);
    System.out.println("exists r2: " + t.exists(new Get(Bytes.toBytes("r2"))));
    t.delete(new Delete(Bytes.toBytes("r2")));
    System.out.println("delete row: " + show(t.get(new Get(Bytes.toBytes("r2")))));
    t.delete(new Delete(Bytes.toBytes("r3")).addColumns(CF, Bytes.toBytes("b")));
    System.out.println("delete column: " + show(t.get(new Get(Bytes.toBytes("r3")))));
    boolean applied = t.checkAndMutate(r1, CF).qualifier(Bytes.toBytes("a"))
        .ifEquals(Bytes.toBytes("nope")).thenPut(put("r1", "a", 3000, "v3"));
    System.out.println("checkAndPut wrong value: " + applied);
    applied = t.checkAndMutate(r1, CF).qualifier(Bytes.toBytes("a"))
        .ifEquals(Bytes.toBytes("v2")).thenPut(put("r1", "a", 3000, "v3"));
    System.out.println("checkAndPut right value: " + applied + " " + show(t.get(new Get(r1))));
    applied = t.checkAndMutate(r1, CF).qualifier(Bytes.toBytes("b"))
        .ifEquals(Bytes.toBytes("nope")).thenDelete(new Delete(r1).addColumns(CF, Bytes.toBytes("b")));
    System.out.println("checkAndDelete wrong value: " + applied);
    applied = t.checkAndMutate(r1, CF).qualifier(Bytes.toBytes("b"))
        .ifEquals(Bytes.toBytes("b1")).thenDelete(new Delete(r1));
    System.out.println("checkAndDelete right value: " + applied + " " + show(t.get(new Get(r1))));
    Put now = new Put(Bytes.toBytes("r5")).addColumn(CF, Bytes.toBytes("a"), Bytes.toBytes("n"));
    t.put(now);
    Result r5 = t.get(new Get(Bytes.toBytes("r5")));
    long ts = r5.rawCells()[0].getTimestamp();
    System.out.println("put without timestamp: recent=" + (Math.abs(System.currentTimeMillis() - ts) < 600_000));
    t.delete(new Delete(Bytes.toBytes("r5")));
  }

  private static void scans(RemoteHTable t) throws Exception {
    for (int i = 0; i < 5; i++) {
      t.put(put("s" + i, "a", 1000, "s" + i));
    }
    System.out.println("scan all: " + scan(t, new Scan()));
    System.out.println(
        "scan range: " + scan(t, new Scan().withStartRow(Bytes.toBytes("s1")).withStopRow(Bytes.toBytes("s3"))));
    System.out.println("scan prefix filter: " + scan(t, new Scan().setFilter(new PrefixFilter(Bytes.toBytes("s")))));
    System.out.println("scan page filter: "
        + scan(t, new Scan().withStartRow(Bytes.toBytes("s")).setFilter(new PageFilter(2))));
    System.out.println("scan filter list: " + scan(t, new Scan().setFilter(new FilterList(
        new PrefixFilter(Bytes.toBytes("s")),
        new ValueFilter(CompareFilter.CompareOp.GREATER_OR_EQUAL, new BinaryComparator(Bytes.toBytes("s3")))))));
    System.out.println("scan family: " + scan(t, new Scan().addFamily(Bytes.toBytes("g"))));
  }

  private static String scan(RemoteHTable t, Scan s) throws IOException {
    List<String> rows = new ArrayList<>();
    try (ResultScanner scanner = t.getScanner(s)) {
      for (Result r : scanner) {
        rows.add(show(r));
      }
    }
    return rows.toString();
  }

  private static void regions(Client client) throws Exception {
    Response r = client.get("/" + TABLE + "/regions", Constants.MIMETYPE_PROTOBUF);
    TableInfoModel info = new TableInfoModel();
    info.getObjectFromMessage(r.getBody());
    List<String> shown = new ArrayList<>();
    for (TableRegionModel region : info.getRegions()) {
      shown.add("[" + Bytes.toStringBinary(region.getStartKey()) + ","
          + Bytes.toStringBinary(region.getEndKey()) + ")");
    }
    System.out.println("regions: " + r.getCode() + " " + info.getName() + " " + shown);
    Response missing = client.get("/rest_missing/regions", Constants.MIMETYPE_PROTOBUF);
    System.out.println("regions missing: " + missing.getCode());
    Response rows = client.get("/" + TABLE + "/s*", Constants.MIMETYPE_JSON);
    System.out.println("prefix scan json: " + rows.getCode() + " "
        + new String(rows.getBody(), StandardCharsets.UTF_8).contains("\"Row\""));
  }

  private static void drop(RemoteAdmin admin) throws Exception {
    admin.deleteTable(TABLE);
    System.out.println("deleteTable: ok");
    System.out.println("isTableAvailable after drop: " + admin.isTableAvailable(TABLE));
    TableListModel list = admin.getTableList();
    boolean listed = false;
    for (TableModel t : list.getTables()) {
      listed |= t.getName().equals(TABLE);
    }
    System.out.println("listed after drop: " + listed);
  }
}
