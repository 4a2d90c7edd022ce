//! WAL history scenarios against buckets: segment times, the checkpoint, recovery that skips history, deletion by age, the PITR reader, dead runs.
