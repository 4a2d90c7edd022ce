//! `[snapshots]`: the point-in-time window (how far back a table can be
//! cloned or restored to any millisecond) and how often its base snapshots
//! are taken. Off by default.

use serde::Deserialize;
use std::time::Duration;

/// `[snapshots]`
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SnapshotsSection {
    /// How far back a table can be cloned or restored as of any instant
    /// (e.g. "24h"); absent = off (default). Needs `wal.backend = "object"`.
    #[serde(with = "optional_duration")]
    pub point_in_time_window: Option<Duration>,
    /// How often each table gets a base snapshot the window restores from
    /// (default: a quarter of the window, at least 1m and at most 1h). A
    /// point in time reads the newest base at or before it, then replays
    /// the WAL's history from that base to the instant.
    #[serde(with = "optional_duration")]
    pub point_in_time_base_every: Option<Duration>,
}

/// The point-in-time settings once checked: both durations known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointInTime {
    /// The window.
    pub window: Duration,
    /// Base snapshot interval.
    pub base_every: Duration,
}

impl PointInTime {
    /// How long the WAL's and the catalog's history are kept: the window,
    /// plus the base before it (up to one interval older), plus a margin
    /// for a base that is late.
    pub fn history(&self) -> Duration {
        self.window + self.base_every * 2 + Duration::from_secs(600)
    }
}

impl SnapshotsSection {
    /// The checked settings, `None` when the window is off.
    pub fn point_in_time(&self) -> Option<PointInTime> {
        let window = self.point_in_time_window?;
        let base_every = self.point_in_time_base_every.unwrap_or_else(|| {
            (window / 4).clamp(Duration::from_secs(60), Duration::from_secs(3600))
        });
        Some(PointInTime { window, base_every })
    }

    /// Checks ranges; the error names the key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if let Some(w) = self.point_in_time_window
            && !(Duration::from_secs(1)..=Duration::from_secs(90 * 24 * 3600)).contains(&w)
        {
            return Err((
                "snapshots.point_in_time_window",
                format!("{w:?} is outside 1s..90 days"),
            ));
        }
        if let Some(b) = self.point_in_time_base_every {
            if self.point_in_time_window.is_none() {
                return Err((
                    "snapshots.point_in_time_base_every",
                    "set only with snapshots.point_in_time_window".into(),
                ));
            }
            if b < Duration::from_secs(1) {
                return Err((
                    "snapshots.point_in_time_base_every",
                    format!("{b:?} is below 1s"),
                ));
            }
        }
        Ok(())
    }
}

/// `Option<Duration>` as an optional humantime string.
mod optional_duration {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(&s).map(Some).map_err(|e| {
            serde::de::Error::custom(format!("{s:?} is not a duration like \"24h\": {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ServerConfig;
    use std::time::Duration;

    #[test]
    fn the_window_is_off_by_default_and_needs_the_object_wal() {
        let c = ServerConfig::from_toml("").expect("default");
        assert!(c.snapshots.point_in_time().is_none());
        let e = ServerConfig::from_toml("[snapshots]\npoint_in_time_window = \"24h\"\n")
            .expect_err("local WAL refused");
        let text = e.to_string();
        assert!(
            text.contains("wal.backend") && text.contains("local WAL"),
            "{text}"
        );
        let c = ServerConfig::from_toml(
            "[wal]\nbackend = \"object\"\n[snapshots]\npoint_in_time_window = \"24h\"\n",
        )
        .expect("object WAL");
        let pit = c.snapshots.point_in_time().expect("on");
        assert_eq!(pit.window, Duration::from_secs(24 * 3600));
        assert_eq!(pit.base_every, Duration::from_secs(3600));
        let e = ServerConfig::from_toml(
            "[wal]\nbackend = \"object\"\n[snapshots]\npoint_in_time_window = \"soon\"\n",
        )
        .expect_err("not a duration");
        assert!(e.to_string().contains("not a duration"), "{e}");
    }
}
