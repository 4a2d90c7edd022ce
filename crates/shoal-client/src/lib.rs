//! Async Rust client for Shoal.
