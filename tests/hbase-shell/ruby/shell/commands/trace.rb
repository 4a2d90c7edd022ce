# Shoal's stand-in for hbase-shell 2.4.17's `trace` command (put ahead of
# the hbase-shell jar on the classpath by crates/shoal-cli/tests/hbase_shell_e2e.rs).
# The original imports org.apache.hadoop.hbase.trace.SpanReceiverHost and HTrace,
# which HBase 2.6's client no longer has (2.6 traces with OpenTelemetry), so
# the 2.4 shell cannot even load on 2.6 jars with it. This one only refuses.

module Shell
  module Commands
    class Trace < Command
      def help
        'HTrace tracing is not available on the HBase 2.6 client.'
      end

      def command(*_args)
        raise 'trace: HTrace is not in the HBase 2.6 client'
      end
    end
  end
end
