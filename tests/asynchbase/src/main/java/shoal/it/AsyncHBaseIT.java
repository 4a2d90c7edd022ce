package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import org.hbase.async.GetRequest;
import org.hbase.async.HBaseClient;
import org.hbase.async.KeyValue;
import org.hbase.async.PutRequest;

/**
 * asynchbase (OpenTSDB's client), which finds HBase only through ZooKeeper,
 * against Shoal's read-only ZooKeeper registry: puts and gets a few cells.
 * The Rust test (crates/shoal-cli/tests/zk_registry_e2e.rs) creates the
 * table first (asynchbase cannot) and compares what this prints.
 *
 * <p>Usage: AsyncHBaseIT zk-host:zk-port znode-parent table
 */
public final class AsyncHBaseIT {
  private static final long WAIT_MS = 60_000;

  private static void out(String line) {
    System.out.println(line);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: AsyncHBaseIT <zk-host:zk-port> <znode-parent> <table>");
      System.exit(2);
    }
    String table = args[2];
    HBaseClient client = new HBaseClient(args[0], args[1]);
    try {
      client.ensureTableExists(table).join(WAIT_MS);
      out("table exists " + table);
      for (int i = 0; i < 3; i++) {
        client.put(new PutRequest(table, "row" + i, "f", "q", "v" + i)).join(WAIT_MS);
      }
      out("put 3");
      for (int i = 0; i < 3; i++) {
        ArrayList<KeyValue> kvs = client.get(new GetRequest(table, "row" + i)).join(WAIT_MS);
        StringBuilder line = new StringBuilder("get row" + i);
        for (KeyValue kv : kvs) {
          line.append(' ')
              .append(new String(kv.qualifier(), StandardCharsets.UTF_8))
              .append('=')
              .append(new String(kv.value(), StandardCharsets.UTF_8));
        }
        out(line.toString());
      }
      ArrayList<KeyValue> none = client.get(new GetRequest(table, "absent")).join(WAIT_MS);
      out("get absent " + none.size());
    } finally {
      client.shutdown().join(WAIT_MS);
    }
    out("done");
  }
}
