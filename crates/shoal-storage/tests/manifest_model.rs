//! Property test: random sequences of opens, commits and GCs by three would-be owners of
//! one region. After every step, `load_latest` is exactly the live owner's last committed
//! state (its file set, its epoch), no commit by a fenced owner ever becomes visible, and
//! every file of the newest manifest still exists.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use proptest::prelude::*;
use shoal_storage::manifest::{
    FilePins, GcOptions, ManifestError, ManifestStore, ManifestWriter, StoreFile,
};
use shoal_storage::object::Bucket;
use shoal_storage::sst::FileId;

const DIR: &str = "data/ef/t1/r2";
const OWNERS: usize = 3;

#[derive(Debug, Clone)]
enum Step {
    Open(usize),
    /// Owner, and whether to drop the oldest file as well as adding one.
    Commit(usize, bool),
    Gc(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0..OWNERS).prop_map(Step::Open),
        4 => (0..OWNERS, any::<bool>()).prop_map(|(o, drop)| Step::Commit(o, drop)),
        1 => (0..OWNERS).prop_map(Step::Gc),
    ]
}

fn file(id: FileId) -> StoreFile {
    StoreFile {
        id,
        path: format!("{DIR}/cf/{id}.sst"),
        size: 3,
        cell_count: 1,
        max_seq: 1,
        min_timestamp: 0,
        max_timestamp: 0,
        first_row: Bytes::new(),
        last_row: Bytes::new(),
    }
}

async fn run(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let bucket = Bucket::memory();
    let store = ManifestStore::new(bucket.clone(), DIR);
    let mut writers: Vec<Option<ManifestWriter>> = (0..OWNERS).map(|_| None).collect();
    let mut live: Option<usize> = None;
    let mut model: Vec<FileId> = Vec::new(); // the live state's files, oldest first
    let mut fenced_ids: BTreeSet<FileId> = BTreeSet::new();
    let gc_options = GcOptions {
        grace: Duration::ZERO,
        now: SystemTime::now() + Duration::from_secs(86_400),
    };
    for step in steps {
        match step {
            Step::Open(o) => {
                let w = store
                    .open_owner(Bytes::new(), Bytes::new())
                    .await
                    .expect("open");
                prop_assert_eq!(
                    w.current().files().map(|f| f.id).collect::<Vec<_>>(),
                    model.clone()
                );
                writers[o] = Some(w);
                live = Some(o);
            }
            Step::Commit(o, drop_oldest) => {
                let Some(w) = writers[o].as_mut() else {
                    continue;
                };
                let id = FileId::generate();
                bucket
                    .put(&file(id).path, Bytes::from_static(b"sst"))
                    .await
                    .expect("put");
                let result = w
                    .commit(|m| {
                        let files = m.stores.entry("cf".into()).or_default();
                        if drop_oldest && !files.is_empty() {
                            files.remove(0);
                        }
                        files.push(file(id));
                    })
                    .await
                    .map(|_| ());
                if live == Some(o) {
                    prop_assert!(result.is_ok(), "live owner's commit failed: {:?}", result);
                    if drop_oldest && !model.is_empty() {
                        model.remove(0);
                    }
                    model.push(id);
                } else {
                    prop_assert!(
                        matches!(result, Err(ManifestError::Fenced { .. })),
                        "fenced owner's commit: {:?}",
                        result
                    );
                    fenced_ids.insert(id);
                }
            }
            Step::Gc(o) => {
                let Some(w) = writers[o].as_ref() else {
                    continue;
                };
                let result = w.gc(&gc_options, &FilePins::new()).await;
                if live == Some(o) {
                    prop_assert!(result.is_ok(), "live owner's GC failed: {:?}", result);
                } else {
                    prop_assert!(
                        matches!(result, Err(ManifestError::Fenced { .. })),
                        "{:?}",
                        result
                    );
                }
            }
        }
        let latest = store.load_latest().await.expect("load");
        match (live, latest) {
            (None, latest) => prop_assert!(latest.is_none()),
            (Some(o), Some(latest)) => {
                let ids: Vec<FileId> = latest.files().map(|f| f.id).collect();
                prop_assert_eq!(&ids, &model);
                let w = writers[o].as_ref().expect("live writer");
                prop_assert_eq!(&latest, w.current());
                prop_assert!(ids.iter().all(|id| !fenced_ids.contains(id)));
                for f in latest.files() {
                    prop_assert!(
                        bucket.exists(&f.path).await.expect("head"),
                        "{} deleted",
                        f.path
                    );
                }
            }
            (Some(_), None) => prop_assert!(false, "an owner opened but nothing is committed"),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn live_owner_state_is_what_readers_see(steps in prop::collection::vec(step(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(run(steps))?;
    }
}
