// The timestamps of one seed's run (HBaseDiff): the explicit ones the
// generator writes and reads with, all outside the window where either
// server's clock can stamp a cell; the time-range bounds; and how a timestamp
// is spelled, in Java lines and in canonical answers (server-stamped ones,
// which differ between the two clusters, become NOW).
package shoal.it.diff;

final class Times {
  static final long MINUTE = 60_000L;
  static final long HOUR = 60 * MINUTE;
  static final long DAY = 24 * HOUR;

  /** The seed's start (ms): every server-stamped cell is at or after t0 - 1 minute. */
  final long t0;
  /** Timestamps a write may carry: ancient (expired under family b's TTL), past, future. */
  final long[] explicit;
  /** Time-range bounds: never inside the window of server-stamped cells. */
  final long[] bounds;

  Times(long t0) {
    this.t0 = t0;
    this.explicit = new long[] {
      0, 100, 101, 102, 103, 105, 110, t0 - 2 * HOUR, t0 - HOUR, t0 + HOUR, t0 + 2 * HOUR
    };
    this.bounds = new long[] {
      0, 100, 101, 102, 103, 104, 106, 111, t0 - 90 * MINUTE, t0 - 30 * MINUTE,
      t0 + 30 * MINUTE, t0 + 90 * MINUTE, Long.MAX_VALUE
    };
  }

  /** True for a timestamp a server may have stamped (the two clusters' clocks differ there). */
  boolean isNow(long ts) {
    return ts >= t0 - MINUTE && ts <= System.currentTimeMillis() + 10 * MINUTE;
  }

  /** A timestamp in an answer: NOW for a server-stamped one, else as in Java lines. */
  String canon(long ts) {
    return isNow(ts) ? "NOW" : java(ts);
  }

  /** A timestamp in a Java line: LATEST, T+delta near the seed's start, else the number. */
  String java(long ts) {
    if (ts == Long.MAX_VALUE) {
      return "LATEST";
    }
    long d = ts - t0;
    if (Math.abs(d) <= 10 * DAY) {
      return d >= 0 ? "T+" + d : "T-" + (-d);
    }
    return Long.toString(ts);
  }
}
