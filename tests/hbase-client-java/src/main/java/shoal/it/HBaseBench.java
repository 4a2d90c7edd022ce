// The Java client's side of bench/hbase-client.sh: YCSB-shaped rows (key
// "user" + an FNV hash, ten 100-byte fields in family "family") written and
// read by N threads through HBase's own client, with each call's latency.
//
//   java -cp ... shoal.it.HBaseBench <host:port> load <table> <records> <threads>
//   java -cp ... shoal.it.HBaseBench <host:port> get <table> <records> <seconds> <threads>
//
// Prints one line: "<op> ops=N seconds=S ops_per_sec=X p50_us=A p99_us=B p999_us=C".
package shoal.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

public final class HBaseBench {
  private static final byte[] FAMILY = "family".getBytes(StandardCharsets.UTF_8);

  static String key(long i) {
    // YCSB's FNV-1a 64 hash of the record number, as its keys are made.
    long h = 0xCBF29CE484222325L;
    long v = i;
    for (int k = 0; k < 8; k++) {
      h ^= v & 0xff;
      h *= 1099511628211L;
      v >>= 8;
    }
    return "user" + Math.abs(h);
  }

  interface Op {
    void run(Table t, ThreadLocalRandom rnd, long i) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    String addr = args[0];
    String mode = args[1];
    TableName tn = TableName.valueOf(args[2]);
    long records = Long.parseLong(args[3]);
    try (Connection conn = ConnectionFactory.createConnection(HBaseClientIT.conf(addr))) {
      if (mode.equals("load")) {
        int threads = Integer.parseInt(args[4]);
        try (Admin admin = conn.getAdmin()) {
          if (!admin.tableExists(tn)) {
            byte[][] splits = new byte[9][];
            for (int d = 1; d <= 9; d++) {
              splits[d - 1] = ("user" + d).getBytes(StandardCharsets.UTF_8);
            }
            admin.createTable(TableDescriptorBuilder.newBuilder(tn)
                .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build(), splits);
          }
        }
        byte[] value = new byte[100];
        Arrays.fill(value, (byte) 'x');
        run(conn, tn, "put", threads, records, 0, (t, rnd, i) -> {
          Put p = new Put(key(i).getBytes(StandardCharsets.UTF_8));
          for (int f = 0; f < 10; f++) {
            p.addColumn(FAMILY, ("field" + f).getBytes(StandardCharsets.UTF_8), value);
          }
          t.put(p);
        });
      } else if (mode.equals("get")) {
        long seconds = Long.parseLong(args[4]);
        int threads = Integer.parseInt(args[5]);
        run(conn, tn, "get", threads, Long.MAX_VALUE, seconds, (t, rnd, i) -> {
          Result r = t.get(new Get(key(rnd.nextLong(records)).getBytes(StandardCharsets.UTF_8)));
          if (r.size() != 10) {
            throw new AssertionError("a row of " + r.size() + " cells");
          }
        });
      } else {
        throw new IllegalArgumentException("mode load or get");
      }
    }
  }

  /** Runs `op` from `threads` threads until `count` calls or `seconds` pass. */
  static void run(Connection conn, TableName tn, String name, int threads, long count,
      long seconds, Op op) throws Exception {
    long deadline = seconds > 0 ? System.nanoTime() + seconds * 1_000_000_000L : Long.MAX_VALUE;
    List<long[]> lat = new ArrayList<>();
    long[] done = new long[threads];
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> ts = new ArrayList<>();
    long start = System.nanoTime();
    for (int k = 0; k < threads; k++) {
      final int me = k;
      long[] mine = new long[1 << 22];
      lat.add(mine);
      Thread th = new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        try (Table t = conn.getTable(tn)) {
          int n = 0;
          for (long i = me; i < count && System.nanoTime() < deadline; i += threads) {
            long t0 = System.nanoTime();
            op.run(t, rnd, i);
            long us = (System.nanoTime() - t0) / 1000;
            if (n < mine.length) {
              mine[n] = us;
            }
            n++;
          }
          done[me] = n;
        } catch (Throwable e) {
          failed.set(e);
        }
      });
      ts.add(th);
      th.start();
    }
    for (Thread th : ts) {
      th.join();
    }
    if (failed.get() != null) {
      throw new RuntimeException(failed.get());
    }
    double secs = (System.nanoTime() - start) / 1e9;
    long total = 0;
    for (long d : done) {
      total += d;
    }
    long[] all = new long[(int) Math.min(total, Integer.MAX_VALUE - 8)];
    int at = 0;
    for (int k = 0; k < threads; k++) {
      int n = (int) Math.min(done[k], lat.get(k).length);
      System.arraycopy(lat.get(k), 0, all, at, n);
      at += n;
    }
    long[] sorted = Arrays.copyOf(all, at);
    Arrays.sort(sorted);
    System.out.printf("%s ops=%d seconds=%.2f ops_per_sec=%.0f p50_us=%d p99_us=%d p999_us=%d%n",
        name, total, secs, total / secs, pct(sorted, 0.50), pct(sorted, 0.99), pct(sorted, 0.999));
  }

  static long pct(long[] sorted, double q) {
    if (sorted.length == 0) {
      return 0;
    }
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  }
}
