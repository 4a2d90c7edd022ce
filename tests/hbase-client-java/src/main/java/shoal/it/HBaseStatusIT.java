package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.ClusterMetrics.Option;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.Size;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BalanceRequest;
import org.apache.hadoop.hbase.client.BalanceResponse;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionStatesCount;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * HBase's cluster-status Admin calls through the stock client (hbase-client
 * 2.6.1), as `hbase shell`'s `status` and `alter` and MapReduce's
 * `TableInputFormat` make them: the Rust test
 * (crates/shoal-cli/tests/hbase_snapshot_e2e.rs) runs this program against a
 * real standalone HBase 2.6.1 and against `shoal serve` and compares their
 * outputs line by line. Each step prints one line `step: outcome` holding
 * only what must be the same on both: counts of servers and of this
 * program's regions, table names, region names against `getRegions`, the
 * balancer's answers — not sizes or times, and not regions of other tables
 * (HBase's own system regions, or tables of another test sharing the
 * server).
 *
 * <p>Usage: HBaseStatusIT host:port
 */
public final class HBaseStatusIT {
  private static final byte[] CF = b("f");
  private static final TableName T = TableName.valueOf("status_t");
  private static final TableName U = TableName.valueOf("status_u");
  private static final TableName MISSING = TableName.valueOf("status_missing");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void say(String step, Object outcome) {
    System.out.println(step + ": " + outcome);
    System.out.flush();
  }

  /** The region metrics of table `t` among `all`, by region name. */
  private static List<RegionMetrics> of(TableName t, Iterable<RegionMetrics> all) {
    List<RegionMetrics> out = new ArrayList<>();
    for (RegionMetrics m : all) {
      TableName n = RegionInfo.getTable(m.getRegionName());
      if (n.equals(t)) {
        out.add(m);
      }
    }
    out.sort((a, c) -> a.getNameAsString().compareTo(c.getNameAsString()));
    return out;
  }

  /** Every region metric of every live server. */
  private static List<RegionMetrics> regions(ClusterMetrics m) {
    List<RegionMetrics> out = new ArrayList<>();
    for (ServerMetrics s : m.getLiveServerMetrics().values()) {
      out.addAll(s.getRegionMetrics().values());
    }
    return out;
  }

  /** True if `metrics` name exactly the regions `getRegions` lists. */
  private static boolean sameRegions(Admin admin, TableName t, List<RegionMetrics> metrics)
      throws Exception {
    TreeSet<String> a = new TreeSet<>();
    for (RegionInfo r : admin.getRegions(t)) {
      a.add(r.getRegionNameAsString());
    }
    TreeSet<String> m = new TreeSet<>();
    for (RegionMetrics r : metrics) {
      m.add(r.getNameAsString());
    }
    return a.equals(m);
  }

  /** The distinct store counts of `metrics`. */
  private static TreeSet<Integer> stores(List<RegionMetrics> metrics) {
    TreeSet<Integer> out = new TreeSet<>();
    for (RegionMetrics r : metrics) {
      out.add(r.getStoreCount());
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HBaseStatusIT <host:port>");
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
      tables(conn, admin);
      clusterMetrics(admin);
      subsets(admin);
      regionMetrics(admin);
      balancer(admin);
      alter(admin);
    }
    System.out.println("done status");
  }

  static void tables(Connection conn, Admin admin) throws Exception {
    admin.createTable(
        TableDescriptorBuilder.newBuilder(T)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF))
            .build(),
        new byte[][] {b("r3"), b("r6"), b("r9")});
    admin.createTable(
        TableDescriptorBuilder.newBuilder(U)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF))
            .build());
    try (Table t = conn.getTable(T)) {
      // Rows in two of the four regions.
      for (String row : new String[] {"r0", "r1", "r7", "r8"}) {
        t.put(new Put(b(row)).addColumn(CF, b("q"), b("v-" + row)));
      }
    }
    say("create", "regions=" + admin.getRegions(T).size() + "+" + admin.getRegions(U).size());
  }

  /**
   * The cluster's metrics once they show this program's regions: HBase's
   * master learns a new region's load at the region server's next report
   * (every 3 s), Shoal's answers at once.
   */
  static ClusterMetrics settled(Admin admin) throws Exception {
    long deadline = System.currentTimeMillis() + 20_000;
    while (true) {
      ClusterMetrics m = admin.getClusterMetrics();
      boolean all = of(T, regions(m)).size() == 4 && of(U, regions(m)).size() == 1;
      if (all || System.currentTimeMillis() > deadline) {
        return m;
      }
      Thread.sleep(200);
    }
  }

  /**
   * `balance()` until the balancer runs (HBase's does not while regions
   * are in transition, as when another test shares the server), bounded.
   */
  static BalanceResponse balanced(Admin admin) throws Exception {
    long deadline = System.currentTimeMillis() + 20_000;
    while (true) {
      BalanceResponse r = admin.balance(BalanceRequest.defaultInstance());
      if (r.isBalancerRan() || System.currentTimeMillis() > deadline) {
        return r;
      }
      Thread.sleep(200);
    }
  }

  static void clusterMetrics(Admin admin) throws Exception {
    ClusterMetrics m = settled(admin);
    say("live servers", m.getLiveServerMetrics().size());
    say("servers by name", m.getServersName().size());
    say("dead servers", m.getDeadServerNames().size());
    say("backup masters", m.getBackupMasterNames().size());
    say("master", m.getMasterName() != null);
    say("hbase version", m.getHBaseVersion());
    say("cluster id", m.getClusterId() != null && !m.getClusterId().isEmpty());
    say("balancer on", m.getBalancerOn());
    // Only this program's tables: another test may be moving its own
    // regions on the same HBase at this moment.
    say(
        "regions in transition of this program's tables",
        m.getRegionStatesInTransition().stream()
            .filter(s -> s.getRegion().getTable().equals(T) || s.getRegion().getTable().equals(U))
            .count());
    List<RegionMetrics> t = of(T, regions(m));
    List<RegionMetrics> u = of(U, regions(m));
    say("cluster regions", T.getNameAsString() + "=" + t.size() + " " + U.getNameAsString() + "="
        + u.size());
    say("cluster region names as getRegions", sameRegions(admin, T, t) && sameRegions(admin, U, u));
    say("cluster stores per region", stores(t));
    Map<TableName, RegionStatesCount> counts = m.getTableRegionStatesCount();
    RegionStatesCount tc = counts.get(T);
    say(
        "table region states",
        tc == null
            ? "none"
            : "open=" + tc.getOpenRegions() + " closed=" + tc.getClosedRegions() + " rit="
                + tc.getRegionsInTransition() + " total=" + tc.getTotalRegions());
    say("admin.getRegionServers", admin.getRegionServers().size());
  }

  static void subsets(Admin admin) throws Exception {
    ClusterMetrics m = admin.getClusterMetrics(EnumSet.of(Option.LIVE_SERVERS));
    say(
        "subset LIVE_SERVERS",
        "servers=" + m.getLiveServerMetrics().size() + " master=" + (m.getMasterName() != null)
            + " version=" + m.getHBaseVersion() + " balancer=" + m.getBalancerOn()
            + " clusterId=" + m.getClusterId());
    m = admin.getClusterMetrics(EnumSet.of(Option.MASTER, Option.BALANCER_ON, Option.HBASE_VERSION));
    say(
        "subset MASTER,BALANCER_ON,HBASE_VERSION",
        "servers=" + m.getLiveServerMetrics().size() + " master=" + (m.getMasterName() != null)
            + " version=" + m.getHBaseVersion() + " balancer=" + m.getBalancerOn()
            + " deadServers=" + m.getDeadServerNames().size());
  }

  static void regionMetrics(Admin admin) throws Exception {
    List<ServerName> servers = new ArrayList<>(admin.getRegionServers());
    Collections.sort(servers);
    int all = 0;
    int ofT = 0;
    List<RegionMetrics> tAll = new ArrayList<>();
    List<RegionMetrics> tOnly = new ArrayList<>();
    int missing = 0;
    for (ServerName s : servers) {
      List<RegionMetrics> every = admin.getRegionMetrics(s);
      tAll.addAll(of(T, every));
      all += of(T, every).size() + of(U, every).size();
      List<RegionMetrics> t = admin.getRegionMetrics(s, T);
      ofT += t.size();
      tOnly.addAll(t);
      missing += admin.getRegionMetrics(s, MISSING).size();
    }
    say("getRegionMetrics(server)", "regions of this program's tables=" + all);
    say("getRegionMetrics(server, table)", "regions=" + ofT + " all of the table="
        + (of(T, tOnly).size() == tOnly.size()));
    say("getRegionMetrics(server, table) names as getRegions", sameRegions(admin, T, tOnly));
    say("getRegionMetrics(server, missing table)", missing);
    // What MapReduce's RegionSizeCalculator reads: sizes in MB after a
    // flush (the written regions have store files; their sizes round up
    // to 1 MB, as HBase rounds them).
    admin.flush(T);
    List<RegionMetrics> flushed = new ArrayList<>();
    for (ServerName s : servers) {
      flushed.addAll(admin.getRegionMetrics(s, T));
    }
    int withFiles = 0;
    TreeSet<Long> sizes = new TreeSet<>();
    for (RegionMetrics r : flushed) {
      if (r.getStoreFileCount() > 0) {
        withFiles++;
        sizes.add((long) r.getStoreFileSize().get(Size.Unit.MEGABYTE));
      }
    }
    say("after flush", "regions with store files=" + withFiles + " their store file MB=" + sizes);
  }

  static void balancer(Admin admin) throws Exception {
    say("isBalancerEnabled", admin.isBalancerEnabled());
    say("balancerSwitch off", "previous=" + admin.balancerSwitch(false, true));
    say("isBalancerEnabled after off", admin.isBalancerEnabled());
    say("balance while off", admin.balance());
    say("cluster metrics balancer while off",
        admin.getClusterMetrics(EnumSet.of(Option.BALANCER_ON)).getBalancerOn());
    say("balancerSwitch on", "previous=" + admin.balancerSwitch(true, true));
    say("balance", balanced(admin).isBalancerRan());
    BalanceResponse r = balanced(admin);
    say(
        "balance(request)",
        "ran=" + r.isBalancerRan() + " calculated=" + r.getMovesCalculated() + " executed="
            + r.getMovesExecuted());
  }

  /** As the shell's `alter`: modifyTable, then wait until the regions show it. */
  static void alter(Admin admin) throws Exception {
    TableDescriptor d = admin.getDescriptor(T);
    admin.modifyTable(
        TableDescriptorBuilder.newBuilder(d)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(b("g")))
            .build());
    long deadline = System.currentTimeMillis() + 30_000;
    TreeSet<Integer> seen = new TreeSet<>();
    while (System.currentTimeMillis() < deadline) {
      List<RegionMetrics> t = of(T, regions(admin.getClusterMetrics(EnumSet.of(Option.LIVE_SERVERS))));
      seen = stores(t);
      if (t.size() == 4 && seen.size() == 1 && seen.contains(2)) {
        break;
      }
      Thread.sleep(200);
    }
    say("alter then wait", "stores per region=" + seen + " families="
        + admin.getDescriptor(T).getColumnFamilyCount());
  }
}
