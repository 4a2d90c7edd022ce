//! Shared harness for `shoal-storage` integration tests.
//!
//! - [`child`]: run one of the test binary's own tests as a child process and kill it.
//! - [`moto`]: a real S3-compatible server (moto) on a loopback port, one per test, killed
//!   on drop, with helpers to create buckets and build an `ObjectStoreConfig` for it.
//!
//! Include it from a test file with `mod support;`.
#![allow(dead_code)]

pub mod child;
pub mod moto;

use std::time::Duration;

/// Waits for `condition` to become true, polling every 20 ms, up to `deadline`.
/// Panics with `what` if it does not. (Tests wait on conditions, never on fixed sleeps.)
pub fn wait_until(what: &str, deadline: Duration, mut condition: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !condition() {
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Deterministic, non-repeating test payload of `len` bytes (byte-exact checks catch
/// misplaced parts).
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}
