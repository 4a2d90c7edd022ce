// The differential test: seeded random operation sequences driven through
// the stock hbase-client against two clusters, A (a real HBase) and B
// (Shoal), on identical fresh tables, every answer compared. Run by
// crates/shoal-cli/tests/hbase_diff_e2e.rs (CI) and scripts/hbase-diff (the
// long mode):
//
//   java -cp ... shoal.it.HBaseDiff --a host:port --b host:port
//       [--seeds FROM..TO | --seed S] [--ops N] [--minimize [--minimize-max K]]
//       [--verbose] [--jobs N] [--max-seconds S] [--max-divergences N]
//       [--include ALLOWED-NAME]... [--exclude FEATURE]...
//       [--allow KNOWN-CLASS | --allow known | --allow -KNOWN-CLASS]...
//
// Prints the allow-list, a line per seed, each divergence (seed, operation
// index, its class when known, the operation as Java, both answers;
// minimized with --minimize), and `summary seeds=… ops=… divergences=…
// allowed=…`. Exits 1 when a divergence outside the allow-list was seen, 2
// on bad arguments. --jobs: seeds run by N workers at once (each its own
// tables and connections). --max-seconds, --max-divergences: no seed
// starts after that long, or after that many divergences (the summary
// counts the seeds run). The parts are in shoal.it.diff (Runner and
// Worker: the comparison; Gen: the operation mix; Allow and KnownBugs: the
// allow-list and the divergence classes already known).
package shoal.it;

import java.util.LinkedHashSet;
import java.util.Set;
import shoal.it.diff.Runner;

public final class HBaseDiff {
  private static void usage(String why) {
    System.err.println("HBaseDiff: " + why);
    System.err.println("usage: HBaseDiff --a host:port --b host:port [--seeds FROM..TO | --seed S]"
        + " [--ops N] [--minimize [--minimize-max K]] [--verbose] [--jobs N] [--max-seconds S]"
        + " [--max-divergences N] [--include NAME]... [--exclude FEATURE]..."
        + " [--allow KNOWN-CLASS|known|-KNOWN-CLASS]...");
    System.exit(2);
  }

  /**
   * Silences log4j 1 (reload4j, which hadoop-common brings and slf4j then
   * binds): the client logs every retried call's stack trace, and the
   * answers, errors included, are what this program prints.
   */
  private static void quietLog4j() {
    try {
      Class<?> logger = Class.forName("org.apache.log4j.Logger");
      Class<?> level = Class.forName("org.apache.log4j.Level");
      Object root = logger.getMethod("getRootLogger").invoke(null);
      logger.getMethod("setLevel", level).invoke(root, level.getField("OFF").get(null));
    } catch (ReflectiveOperationException | RuntimeException e) {
      // no log4j on the classpath: nothing to silence
    }
  }

  public static void main(String[] args) throws Exception {
    // slf4j-simple: only the client's warnings, not its INFO chatter.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    quietLog4j();
    String addrA = null;
    String addrB = null;
    long from = 1;
    long to = 10;
    int ops = 300;
    boolean minimize = false;
    int minimizeMax = 3;
    boolean verbose = false;
    Set<String> include = new LinkedHashSet<>();
    Set<String> exclude = new LinkedHashSet<>();
    Set<String> allowKnown = new LinkedHashSet<>();
    long maxSeconds = 0;
    int jobs = 1;
    int maxDivergences = 0;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String next = i + 1 < args.length ? args[i + 1] : null;
      switch (arg) {
        case "--a":
          addrA = next;
          i++;
          break;
        case "--b":
          addrB = next;
          i++;
          break;
        case "--seeds": {
          if (next == null || !next.contains("..")) {
            usage("--seeds FROM..TO");
          }
          String[] p = next.split("\\.\\.", 2);
          from = Long.parseLong(p[0]);
          to = Long.parseLong(p[1]);
          i++;
          break;
        }
        case "--seed":
          from = to = Long.parseLong(next);
          i++;
          break;
        case "--ops":
          ops = Integer.parseInt(next);
          i++;
          break;
        case "--minimize":
          minimize = true;
          break;
        case "--minimize-max":
          minimizeMax = Integer.parseInt(next);
          i++;
          break;
        case "--verbose":
          verbose = true;
          break;
        case "--include":
          include.add(next);
          i++;
          break;
        case "--exclude":
          exclude.add(next);
          i++;
          break;
        case "--max-seconds":
          maxSeconds = Long.parseLong(next);
          i++;
          break;
        case "--max-divergences":
          maxDivergences = Integer.parseInt(next);
          i++;
          break;
        case "--jobs":
          jobs = Integer.parseInt(next);
          i++;
          break;
        case "--allow":
          allowKnown.add(next);
          i++;
          break;
        default:
          usage("unknown argument " + arg);
      }
    }
    if (addrA == null || addrB == null) {
      usage("--a and --b are required");
    }
    if (from > to || ops < 1) {
      usage("nothing to run");
    }
    Runner.Options o = new Runner.Options(from, to, ops, minimize, minimizeMax, verbose, include,
        exclude, allowKnown, maxSeconds, jobs, maxDivergences);
    Runner runner;
    try {
      runner = new Runner(addrA, addrB, o);
    } catch (IllegalArgumentException e) {
      usage(e.getMessage());
      return;
    }
    System.out.println("HBaseDiff: A (hbase) " + addrA + ", B (shoal) " + addrB + ", seeds "
        + from + ".." + to + ", " + ops + " ops each, " + jobs + " job(s)");
    runner.allow().print(System.out);
    int code = runner.run();
    System.out.flush();
    System.exit(code);
  }
}
