//! Merging iterator: the cells of several sorted sources (memstore segments and
//! SST files) as one sorted stream, each key once.
//!
//! Sources are ordered newest first, so when two sources hold an identical key
//! (all six fields equal — the same write, as WAL replay after a flush can
//! produce) the first source's copy is returned and the others are skipped.

use crate::cell::{Cell, CellKey, KeyRef};
use crate::memstore::{MemKey, Segment};
use crate::sst::{ScanRange, SstError, SstIter, SstReader};
use std::ops::Bound;
use std::sync::Arc;

/// One sorted input.
pub(crate) enum Source {
    /// A memstore segment; `last` is the key returned last (re-seeked each step).
    Mem {
        segment: Arc<Segment>,
        start: Option<MemKey>,
        last: Option<MemKey>,
        end: Bound<CellKey>,
        done: bool,
    },
    /// An SST file.
    Sst(Box<SstIter>),
}

impl Source {
    pub(crate) fn memstore(
        segment: Arc<Segment>,
        range: &ScanRange,
    ) -> Result<Source, crate::cell::CellError> {
        let start = match &range.start {
            Bound::Included(k) | Bound::Excluded(k) => Some(MemKey::new(&k.as_ref())?),
            Bound::Unbounded => None,
        };
        Ok(Source::Mem {
            segment,
            start,
            last: None,
            end: range.end.clone(),
            done: false,
        })
    }

    pub(crate) fn sst(reader: &SstReader, range: ScanRange) -> Source {
        Source::Sst(Box::new(reader.iter(range)))
    }

    async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        match self {
            Source::Sst(it) => it.next().await,
            Source::Mem {
                segment,
                start,
                last,
                end,
                done,
            } => {
                if *done {
                    return Ok(None);
                }
                let entry = match (last.as_ref(), start.take()) {
                    (Some(l), _) => segment.next_after(Some(l)),
                    (None, Some(s)) => segment.first_at_or_after(&s),
                    (None, None) => segment.next_after(None),
                };
                let Some((key, value)) = entry else {
                    *done = true;
                    return Ok(None);
                };
                let Some(cell) = crate::memstore::to_cell(&key, &value) else {
                    *done = true;
                    return Ok(None);
                };
                let within = match end {
                    Bound::Unbounded => true,
                    Bound::Included(e) => cell.key() <= e.as_ref(),
                    Bound::Excluded(e) => cell.key() < e.as_ref(),
                };
                if !within {
                    *done = true;
                    return Ok(None);
                }
                *last = Some(key);
                Ok(Some(cell))
            }
        }
    }
}

/// The merged stream.
pub(crate) struct MergeIter {
    sources: Vec<Source>,
    heads: Vec<Option<Cell>>,
    started: bool,
}

impl MergeIter {
    /// Merges `sources`, newest first.
    pub(crate) fn new(sources: Vec<Source>) -> MergeIter {
        let n = sources.len();
        MergeIter {
            sources,
            heads: vec![None; n],
            started: false,
        }
    }

    /// The next cell in order.
    pub(crate) async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        if !self.started {
            self.started = true;
            for i in 0..self.sources.len() {
                self.heads[i] = self.sources[i].next().await?;
            }
        }
        let mut min: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            if let Some(c) = head {
                let better = match min {
                    None => true,
                    Some(m) => {
                        let cur: KeyRef<'_> =
                            self.heads[m].as_ref().map(|x| x.key()).unwrap_or(c.key());
                        c.key() < cur
                    }
                };
                if better {
                    min = Some(i);
                }
            }
        }
        let Some(m) = min else {
            return Ok(None);
        };
        let out = self.heads[m].take();
        self.heads[m] = self.sources[m].next().await?;
        if let Some(cell) = &out {
            // Skip identical keys in other (older) sources.
            for i in 0..self.heads.len() {
                while self.heads[i]
                    .as_ref()
                    .is_some_and(|h| h.key() == cell.key())
                {
                    self.heads[i] = self.sources[i].next().await?;
                }
            }
        }
        Ok(out)
    }
}
