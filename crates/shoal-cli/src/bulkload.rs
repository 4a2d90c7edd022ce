//! `shoal bulkload DIR TABLE`: a directory of HBase HFiles (one
//! subdirectory per family, as `HFileOutputFormat2` writes it) into an
//! existing table; each region takes, in one commit, the cells of the files
//! whose rows reach it.

use crate::import::inputs::{ServerArgs, by_age, check_inputs, hex, location_url, open};
use anyhow::bail;
use shoal_client::proto as pb;

/// Arguments of `shoal bulkload`.
#[derive(Debug, clap::Args)]
pub struct BulkloadArgs {
    /// A directory of HFiles as HBase's HFileOutputFormat2 writes it: one
    /// subdirectory per column family (a path, file:///…, s3://…).
    dir: String,
    /// The table to load into (it must exist, with those families).
    table: String,
    #[command(flatten)]
    server: ServerArgs,
}

/// Runs `shoal bulkload DIR TABLE`: every HFile under DIR/<family>/ into
/// the table; each region takes, in one commit, the cells of the files
/// whose rows reach it (read from each file's index first).
pub async fn run(args: BulkloadArgs) -> anyhow::Result<()> {
    let url = location_url(&args.dir)?;
    let bucket = open(&url).await?;
    let mut files: Vec<pb::BulkLoadFile> = Vec::new();
    for o in bucket.list("").await? {
        let Some((family, name)) = o.path.split_once('/') else {
            continue;
        };
        if name.contains('/') || name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        files.push(pb::BulkLoadFile {
            family: family.to_string(),
            location: url.clone(),
            path: o.path.clone(),
        });
    }
    if files.is_empty() {
        bail!("{url}: no HFiles under <family>/ directories");
    }
    let facts = check_inputs(&bucket, files.iter().map(|f| f.path.clone()).collect()).await?;
    for f in &files {
        let family = &facts[&f.path].family;
        if !family.is_empty() && family[..] != *f.family.as_bytes() {
            bail!(
                "{}: holds family {:?} but lies in directory {:?}",
                f.path,
                String::from_utf8_lossy(family),
                f.family
            );
        }
    }
    by_age(&mut files, &facts);
    let client = args.server.connect().await?;
    let table = client.table(args.table.clone());
    let regions = client.admin().describe(&args.table).await?.regions;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let (mut loads, mut cells) = (0u64, 0u64);
    for region in &regions {
        let mine: Vec<pb::BulkLoadFile> = files
            .iter()
            .filter(|f| facts[&f.path].overlaps(&region.start_row, &region.end_row))
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut start = region.start_row.to_vec();
        loop {
            let answer = table
                .bulk_load(pb::BulkLoadRequest {
                    table: String::new(),
                    start_row: start.clone(),
                    end_row: region.end_row.to_vec(),
                    files: mine.clone(),
                    load_key: format!("bulkload:{url}:{stamp}:{}", hex(&start)),
                })
                .await?;
            loads += 1;
            cells += answer.cells;
            let end = answer.region_end;
            if end.is_empty() || (!region.end_row.is_empty() && end[..] >= region.end_row[..]) {
                break;
            }
            start = end;
        }
    }
    eprintln!(
        "loaded {} files into {loads} regions of {}: {cells} cells",
        files.len(),
        args.table
    );
    Ok(())
}
