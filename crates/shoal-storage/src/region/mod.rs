//! A region: one key range of one table, durable on the object store.
pub mod versions;
