package shoal.it;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.rest.RESTServer;

/**
 * HBase's own REST gateway (hbase-rest 2.6.1's {@code RESTServer}) in front of a standalone HBase,
 * as the reference crates/shoal-cli/tests/rest_e2e.rs runs {@link HBaseRestIT} against.
 *
 * <p>Usage: {@code HBaseRestServer <zk-port> [rest-port]}. Listens on 127.0.0.1 only (no info
 * server), on the port given or a free one below 32768, prints {@code ready rest=127.0.0.1:P} once
 * serving, and runs until its stdin reaches end of file.
 */
public final class HBaseRestServer {
  private HBaseRestServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HBaseRestServer <zk-port> [rest-port]");
      System.exit(2);
    }
    int port = args.length > 1 ? Integer.parseInt(args[1]) : freePort();
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", "127.0.0.1");
    conf.set("hbase.zookeeper.property.clientPort", args[0]);
    conf.set("hbase.rest.host", "127.0.0.1");
    conf.setInt("hbase.rest.port", port);
    conf.setInt("hbase.rest.info.port", -1);
    conf.setInt("hbase.client.retries.number", 3);
    RESTServer server = new RESTServer(conf);
    server.run();
    System.out.println("ready rest=127.0.0.1:" + port);
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {
      // Runs until the test closes stdin (or exits).
    }
    server.stop();
    System.exit(0);
  }

  /** A port below 32768 that 127.0.0.1 can bind now. */
  private static int freePort() throws IOException {
    InetAddress lo = InetAddress.getByName("127.0.0.1");
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(10_000, 32_768);
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(false);
        s.bind(new InetSocketAddress(lo, port));
        return port;
      } catch (IOException e) {
        // taken: try another
      }
    }
    throw new IOException("no free loopback port below 32768");
  }
}
