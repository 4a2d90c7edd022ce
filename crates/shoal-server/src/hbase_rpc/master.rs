//! `MasterService` as the 2.5/2.6 `Admin` calls it, and
//! `ClientMetaService` (the registry a client without ZooKeeper asks for
//! the cluster id, the master and the meta region). Shoal's table changes
//! finish before they answer, so every "procedure" is done by the time
//! the client asks `getProcedureResult`.

use super::NativeRpc;
use super::errors::{self, RpcError};
use super::meta;
use super::names::{self, TableRef};
use super::relay;
use crate::catalog::{BloomName, CompressionName, FamilyPatch, FamilySchema, ImcName, TableRecord};
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;

fn attr(name: &str, value: impl ToString) -> pb::BytesBytesPair {
    pb::BytesBytesPair {
        first: Bytes::copy_from_slice(name.as_bytes()),
        second: Bytes::from(value.to_string()),
    }
}

/// HBase's `TableSchema` of a Shoal table. HBase 2.6's master writes the
/// store file tracker into every table it creates (`hbase shell`'s
/// `describe` shows it under `TABLE_ATTRIBUTES`); Shoal's tables answer
/// with HBase's default, the one a table copied to HBase would get.
pub fn table_schema(t: &TableRecord) -> pb::TableSchema {
    pb::TableSchema {
        table_name: Some(meta::table_name(&t.name)),
        attributes: vec![
            attr("IS_META", "false"),
            attr("hbase.store.file-tracker.impl", "DEFAULT"),
        ],
        column_families: t.families.iter().map(family_schema).collect(),
        configuration: Vec::new(),
    }
}

/// Err for a table attribute or configuration value Shoal does not keep:
/// refused by name, not accepted and dropped. The two attributes Shoal's
/// own descriptors carry (so `hbase shell`'s `alter`, which sends the
/// descriptor back, passes) are accepted with their values.
fn check_table_attributes(schema: &pb::TableSchema) -> Result<(), RpcError> {
    for a in &schema.attributes {
        let key = String::from_utf8_lossy(&a.first);
        let value = String::from_utf8_lossy(&a.second);
        let kept = matches!(
            (&*key, &*value),
            ("IS_META", "false") | ("hbase.store.file-tracker.impl", "DEFAULT")
        );
        if !kept {
            return Err(RpcError::invalid(format!(
                "table attribute {key} => '{value}' is not kept by Shoal (it keeps families and \
                 their settings; region sizes, durability and compactions are server settings, \
                 docs/config.md): leave it out"
            )));
        }
    }
    if let Some(c) = schema.configuration.first() {
        return Err(RpcError::invalid(format!(
            "table configuration {} => '{}' is not kept by Shoal: leave it out",
            c.name, c.value
        )));
    }
    Ok(())
}

fn family_schema(f: &FamilySchema) -> pb::ColumnFamilySchema {
    let compression = f.compression.hbase_name();
    let bloom = f.bloom.hbase_name();
    let imc = match f.in_memory_compaction {
        ImcName::None => "NONE",
        ImcName::Basic => "BASIC",
        ImcName::Eager => "EAGER",
    };
    // TTL: HBase's FOREVER is Integer.MAX_VALUE seconds.
    let ttl = if f.ttl_seconds == 0 {
        i32::MAX as u64
    } else {
        f.ttl_seconds
    };
    pb::ColumnFamilySchema {
        name: Bytes::copy_from_slice(f.name.as_bytes()),
        attributes: vec![
            attr("BLOCKCACHE", f.cache_data_on_read),
            attr("BLOCKSIZE", f.block_size),
            attr("BLOOMFILTER", bloom),
            attr("COMPRESSION", compression),
            attr("IN_MEMORY", f.in_memory),
            attr("IN_MEMORY_COMPACTION", imc),
            attr("KEEP_DELETED_CELLS", f.keep_deleted_cells.hbase_name()),
            attr("MIN_VERSIONS", f.min_versions),
            attr("PREFETCH_BLOCKS_ON_OPEN", f.prefetch_on_open),
            attr("TTL", ttl),
            attr("VERSIONS", f.max_versions),
        ],
        configuration: Vec::new(),
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, RpcError> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(RpcError::invalid(format!(
            "{key}: {v:?} is not true or false"
        ))),
    }
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, RpcError> {
    v.trim()
        .parse()
        .map_err(|_| RpcError::invalid(format!("{key}: {v:?} is not a number in range")))
}

/// A family's settings from the attributes HBase's client sends (those it
/// set; every other setting keeps Shoal's default). Settings Shoal has no
/// use for (replication scope, encodings) are ignored.
pub fn family_patch(cf: &pb::ColumnFamilySchema) -> Result<FamilyPatch, RpcError> {
    let name = String::from_utf8(cf.name.to_vec())
        .map_err(|_| RpcError::invalid("a column family name that is not UTF-8"))?;
    let mut p = FamilyPatch {
        name,
        ..Default::default()
    };
    let pairs = cf
        .attributes
        .iter()
        .map(|a| {
            (
                String::from_utf8_lossy(&a.first).into_owned(),
                String::from_utf8_lossy(&a.second).into_owned(),
            )
        })
        .chain(
            cf.configuration
                .iter()
                .map(|c| (c.name.clone(), c.value.clone())),
        );
    for (key, v) in pairs {
        let v = v.as_str();
        match key.as_str() {
            "VERSIONS" => p.max_versions = Some(parse_num(&key, v)?),
            "MIN_VERSIONS" => p.min_versions = Some(parse_num(&key, v)?),
            "TTL" => {
                let secs: u64 = if v.eq_ignore_ascii_case("FOREVER") {
                    0
                } else {
                    parse_num(&key, v)?
                };
                p.ttl_seconds = Some(if secs >= i32::MAX as u64 { 0 } else { secs });
            }
            "BLOCKSIZE" => p.block_size = Some(parse_num(&key, v)?),
            "KEEP_DELETED_CELLS" => {
                let k = crate::catalog::schema::KeepDeletedName::from_hbase_name(v);
                let why = || RpcError::invalid(format!("{key}: {v:?} is not FALSE, TRUE or TTL"));
                p.keep_deleted_cells = Some(k.ok_or_else(why)?);
            }
            "IN_MEMORY" => p.in_memory = Some(parse_bool(&key, v)?),
            "BLOCKCACHE" => p.cache_data_on_read = Some(parse_bool(&key, v)?),
            "PREFETCH_BLOCKS_ON_OPEN" => p.prefetch_on_open = Some(parse_bool(&key, v)?),
            "COMPRESSION" => {
                p.compression = Some(match v.to_ascii_uppercase().as_str() {
                    "NONE" => CompressionName::None,
                    "LZ4" => CompressionName::Lz4,
                    "ZSTD" => CompressionName::Zstd,
                    other => {
                        return Err(RpcError::invalid(format!(
                            "COMPRESSION {other} is not supported by Shoal: use NONE, LZ4 or ZSTD"
                        )));
                    }
                })
            }
            "BLOOMFILTER" => {
                p.bloom = Some(match v.to_ascii_uppercase().as_str() {
                    "NONE" => BloomName::None,
                    "ROW" => BloomName::Row,
                    "ROWCOL" => BloomName::Rowcol,
                    other => {
                        return Err(RpcError::invalid(format!(
                            "BLOOMFILTER {other} is not supported by Shoal: use NONE, ROW or ROWCOL"
                        )));
                    }
                })
            }
            "IN_MEMORY_COMPACTION" => {
                p.in_memory_compaction = Some(match v.to_ascii_uppercase().as_str() {
                    "NONE" => ImcName::None,
                    "BASIC" => ImcName::Basic,
                    "EAGER" | "ADAPTIVE" => ImcName::Eager,
                    other => {
                        return Err(RpcError::invalid(format!(
                            "IN_MEMORY_COMPACTION {other} is not one of NONE, BASIC, EAGER"
                        )));
                    }
                })
            }
            other => tracing::debug!(key = other, "column family attribute ignored"),
        }
    }
    Ok(p)
}

impl NativeRpc {
    /// A user table named by the client, or the error HBase would give.
    pub(super) fn user_table(&self, t: &pb::TableName) -> Result<String, RpcError> {
        match names::table_ref(&t.namespace, &t.qualifier) {
            TableRef::Table(name) => Ok(name),
            TableRef::Meta => Err(RpcError::invalid(
                "hbase:meta is Shoal's catalog, served read-only",
            )),
        }
    }

    pub(super) fn procedure(&self) -> u64 {
        self.procedures
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// One MasterService call: the encoded answer. In cluster mode a
    /// server that is not master relays table changes to the master
    /// (unless the call was relayed to it already).
    pub(super) async fn master(
        &self,
        method: &str,
        param: Bytes,
        relayed: bool,
    ) -> Result<Vec<u8>, RpcError> {
        if let Some(master) = self.master_to_relay_to(method, relayed) {
            return self.relay_to_master(&master?, method, param).await;
        }
        match method {
            "CreateTable" | "DeleteTable" | "TruncateTable" | "truncateTable" | "EnableTable"
            | "DisableTable" | "ModifyTable" | "AddColumn" | "ModifyColumn" | "DeleteColumn"
            | "FlushTable" | "SplitRegion" | "SplitTableRegion" => {
                self.change_tables(method, param).await
            }
            "GetTableDescriptors"
            | "GetTableNames"
            | "ListTableDescriptorsByNamespace"
            | "ListTableNamesByNamespace"
            | "GetTableState"
            | "GetSchemaAlterStatus" => self.list_tables(method, param).await,
            "ListNamespaceDescriptors"
            | "ListNamespaces"
            | "GetNamespaceDescriptor"
            | "CreateNamespace"
            | "DeleteNamespace"
            | "ModifyNamespace" => self.namespace_call(method, param).await,
            "GetClusterStatus" | "IsBalancerEnabled" | "SetBalancerRunning" | "Balance" => {
                self.cluster_status_call(method, param).await
            }
            "IsMasterRunning"
            | "ExecProcedure"
            | "ExecProcedureWithRet"
            | "IsProcedureDone"
            | "getProcedureResult" => self.master_and_procedures(method, param).await,
            "Snapshot"
            | "IsSnapshotDone"
            | "GetCompletedSnapshots"
            | "DeleteSnapshot"
            | "RestoreSnapshot" => self.snapshots(method, param).await,
            "MoveRegion" => self.move_region_call(param).await,
            "getSecurityCapabilities" | "IsNormalizerEnabled" | "SetNormalizerRunning" => {
                self.capabilities_call(method, param)
            }
            _ => Err(not_served(method)),
        }
    }

    /// The master a table change `method` goes to: `None` when this server
    /// answers the call itself (a single node, the master, relaying off,
    /// a call that changes no table or one relayed here already); an error
    /// while no master is known.
    fn master_to_relay_to(&self, method: &str, relayed: bool) -> Option<Result<String, RpcError>> {
        if self.relay
            && !relayed
            && relay::changes_tables(method)
            && let Some(cluster) = self.host.native_cluster()
            && !cluster.is_master
        {
            return Some(cluster.master.ok_or_else(|| {
                RpcError::not_master(
                    "this server is not the cluster's master, and no master is known now \
                     (one is being elected); table changes go to the master",
                )
            }));
        }
        None
    }

    /// Relays a table change to the master at `master` and returns its
    /// answer, once this server's catalog shows the change.
    async fn relay_to_master(
        &self,
        master: &str,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        let answer = relay::to_master(master, method, param).await?;
        // What the client reads next here shows the change.
        self.host.catch_up_catalog().await;
        Ok(answer)
    }

    /// A table change's answer: done, under a new procedure id.
    fn done(&self) -> Vec<u8> {
        pb::CreateTableResponse {
            proc_id: Some(self.procedure()),
        }
        .encode_to_vec()
    }

    /// The calls that change a table (create, delete, truncate, enable,
    /// disable, alter its families, flush, split): done before they answer.
    async fn change_tables(&self, method: &str, param: Bytes) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        Ok(match method {
            "CreateTable" => {
                let r: pb::CreateTableRequest = errors::request(method, param)?;
                self.create_table(r).await?
            }
            "DeleteTable" => {
                let r: pb::DeleteTableRequest = errors::request(method, param)?;
                access.drop_table(&self.user_table(&r.table_name)?).await?;
                self.done()
            }
            "TruncateTable" | "truncateTable" => {
                let r: pb::TruncateTableRequest = errors::request(method, param)?;
                access
                    .truncate_table(&self.user_table(&r.table_name)?)
                    .await?;
                self.done()
            }
            "EnableTable" => {
                let r: pb::EnableTableRequest = errors::request(method, param)?;
                access
                    .enable_table(&self.user_table(&r.table_name)?)
                    .await?;
                self.done()
            }
            "DisableTable" => {
                let r: pb::DisableTableRequest = errors::request(method, param)?;
                access
                    .disable_table(&self.user_table(&r.table_name)?)
                    .await?;
                self.done()
            }
            "ModifyTable" => {
                let r: pb::ModifyTableRequest = errors::request(method, param)?;
                self.modify_table(r).await?
            }
            "AddColumn" | "ModifyColumn" => {
                let r: pb::AddColumnRequest = errors::request(method, param)?;
                self.add_or_modify_column(method, r).await?
            }
            "DeleteColumn" => {
                let r: pb::DeleteColumnRequest = errors::request(method, param)?;
                let name = self.user_table(&r.table_name)?;
                let family = String::from_utf8_lossy(&r.column_name).into_owned();
                access.alter_table(&name, Vec::new(), vec![family]).await?;
                self.done()
            }
            "FlushTable" => {
                let r: pb::FlushTableRequest = errors::request(method, param)?;
                access.flush_table(&self.user_table(&r.table_name)?).await?;
                self.done()
            }
            "SplitRegion" | "SplitTableRegion" => {
                let r: pb::SplitTableRegionRequest = errors::request(method, param)?;
                let name = self.user_table(&r.region_info.table_name)?;
                access
                    .split(&name, r.split_row.filter(|r| !r.is_empty()))
                    .await?;
                pb::SplitTableRegionResponse {
                    proc_id: Some(self.procedure()),
                }
                .encode_to_vec()
            }
            _ => return Err(not_served(method)),
        })
    }

    /// `CreateTable`: the table with the families (and split keys) asked.
    async fn create_table(&self, r: pb::CreateTableRequest) -> Result<Vec<u8>, RpcError> {
        let name = self.user_table(
            r.table_schema
                .table_name
                .as_ref()
                .ok_or_else(|| RpcError::invalid("CreateTable without a table name"))?,
        )?;
        check_table_attributes(&r.table_schema)?;
        let families = r
            .table_schema
            .column_families
            .iter()
            .map(family_patch)
            .collect::<Result<Vec<_>, _>>()?;
        self.access()
            .create_table(&name, families, r.split_keys)
            .await?;
        Ok(self.done())
    }

    /// `ModifyTable`: the families sent are set, those not sent dropped.
    async fn modify_table(&self, r: pb::ModifyTableRequest) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        let name = self.user_table(&r.table_name)?;
        check_table_attributes(&r.table_schema)?;
        let current = access.describe_table(&name).await?;
        let upsert = r
            .table_schema
            .column_families
            .iter()
            .map(family_patch)
            .collect::<Result<Vec<_>, _>>()?;
        let delete = current
            .families
            .iter()
            .filter(|f| !upsert.iter().any(|u| u.name == f.name))
            .map(|f| f.name.clone())
            .collect();
        access.alter_table(&name, upsert, delete).await?;
        Ok(self.done())
    }

    /// `AddColumn` (the family must be new) or `ModifyColumn` (it must
    /// exist): sets the family's settings.
    async fn add_or_modify_column(
        &self,
        method: &str,
        r: pb::AddColumnRequest,
    ) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        let name = self.user_table(&r.table_name)?;
        let current = access.describe_table(&name).await?;
        let patch = family_patch(&r.column_families)?;
        let exists = current.families.iter().any(|f| f.name == patch.name);
        if method == "AddColumn" && exists {
            return Err(RpcError::fatal(
                "org.apache.hadoop.hbase.InvalidFamilyOperationException",
                format!(
                    "column family {} already exists in table {name}",
                    patch.name
                ),
            ));
        }
        if method == "ModifyColumn" && !exists {
            return Err(RpcError::fatal(
                "org.apache.hadoop.hbase.InvalidFamilyOperationException",
                format!(
                    "column family {} does not exist in table {name}",
                    patch.name
                ),
            ));
        }
        access.alter_table(&name, vec![patch], Vec::new()).await?;
        Ok(self.done())
    }

    /// The calls that read the catalog's tables: descriptors, names and
    /// states, schema-change progress.
    async fn list_tables(&self, method: &str, param: Bytes) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "GetTableDescriptors" => {
                let r: pb::GetTableDescriptorsRequest = errors::request(method, param)?;
                self.table_descriptors(r).await?
            }
            "GetTableNames" => {
                let r: pb::GetTableNamesRequest = errors::request(method, param)?;
                let tables = self
                    .listed_tables(r.regex.as_deref(), r.namespace.as_deref())
                    .await?;
                pb::GetTableNamesResponse {
                    table_names: tables.iter().map(|t| meta::table_name(&t.name)).collect(),
                }
                .encode_to_vec()
            }
            "ListTableDescriptorsByNamespace" => {
                let r: pb::ListTableDescriptorsByNamespaceRequest = errors::request(method, param)?;
                let tables = self.listed_tables(None, Some(&r.namespace_name)).await?;
                pb::ListTableDescriptorsByNamespaceResponse {
                    table_schema: tables.iter().map(table_schema).collect(),
                }
                .encode_to_vec()
            }
            "ListTableNamesByNamespace" => {
                let r: pb::ListTableNamesByNamespaceRequest = errors::request(method, param)?;
                let tables = self.listed_tables(None, Some(&r.namespace_name)).await?;
                pb::ListTableNamesByNamespaceResponse {
                    table_name: tables.iter().map(|t| meta::table_name(&t.name)).collect(),
                }
                .encode_to_vec()
            }
            "GetTableState" => {
                let r: pb::GetTableStateRequest = errors::request(method, param)?;
                self.table_state(r).await?
            }
            "GetSchemaAlterStatus" => {
                let r: pb::GetSchemaAlterStatusRequest = errors::request(method, param)?;
                let t = self
                    .access()
                    .describe_table(&self.user_table(&r.table_name)?)
                    .await?;
                // Shoal applies a schema change to every region before it
                // answers: nothing is left to update.
                pb::GetSchemaAlterStatusResponse {
                    yet_to_update_regions: Some(0),
                    total_regions: Some(t.regions.len() as u32),
                }
                .encode_to_vec()
            }
            _ => return Err(not_served(method)),
        })
    }

    /// `GetTableDescriptors`: the schemas of the tables listed (by name,
    /// or by pattern and namespace).
    async fn table_descriptors(
        &self,
        r: pb::GetTableDescriptorsRequest,
    ) -> Result<Vec<u8>, RpcError> {
        let tables = self
            .listed_tables(r.regex.as_deref(), r.namespace.as_deref())
            .await?;
        let wanted: Vec<String> = r
            .table_names
            .iter()
            .filter_map(|t| match names::table_ref(&t.namespace, &t.qualifier) {
                TableRef::Table(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut schemas: Vec<pb::TableSchema> = tables
            .iter()
            .filter(|t| r.table_names.is_empty() || wanted.contains(&t.name))
            .map(table_schema)
            .collect();
        // hbase:meta when named (as HBase, not in listings of user tables).
        if r.table_names
            .iter()
            .any(|t| matches!(names::table_ref(&t.namespace, &t.qualifier), TableRef::Meta))
        {
            schemas.push(meta::meta_schema());
        }
        Ok(pb::GetTableDescriptorsResponse {
            table_schema: schemas,
        }
        .encode_to_vec())
    }

    /// `GetTableState`: enabled or disabled (`hbase:meta` is enabled).
    async fn table_state(&self, r: pb::GetTableStateRequest) -> Result<Vec<u8>, RpcError> {
        let enabled = match names::table_ref(&r.table_name.namespace, &r.table_name.qualifier) {
            TableRef::Meta => true,
            _ => {
                self.access()
                    .describe_table(&self.user_table(&r.table_name)?)
                    .await?
                    .enabled
            }
        };
        Ok(pb::GetTableStateResponse {
            table_state: pb::TableState {
                state: if enabled { 0 } else { 1 },
            },
        }
        .encode_to_vec())
    }

    /// The calls about the master itself and its procedures: running,
    /// flush procedures, and their results (every
    /// procedure is done when it answers).
    async fn master_and_procedures(&self, method: &str, param: Bytes) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "IsMasterRunning" => pb::IsMasterRunningResponse {
                is_master_running: true,
            }
            .encode_to_vec(),
            "ExecProcedure" | "ExecProcedureWithRet" => {
                let r: pb::ExecProcedureRequest = errors::request(method, param)?;
                self.exec_procedure(r).await?
            }
            "IsProcedureDone" => pb::IsProcedureDoneResponse {
                done: Some(true),
                snapshot: None,
            }
            .encode_to_vec(),
            "getProcedureResult" => {
                let r: pb::GetProcedureResultRequest = errors::request(method, param)?;
                let known = r.proc_id > 0
                    && r.proc_id < self.procedures.load(std::sync::atomic::Ordering::Relaxed);
                pb::GetProcedureResultResponse {
                    // FINISHED (2) or NOT_FOUND (0).
                    state: if known { 2 } else { 0 },
                    submitted_time: None,
                    last_update: None,
                    result: None,
                    exception: None,
                }
                .encode_to_vec()
            }
            _ => return Err(not_served(method)),
        })
    }

    /// `ExecProcedure`: only `flush-table-proc`, which flushes the table
    /// named.
    async fn exec_procedure(&self, r: pb::ExecProcedureRequest) -> Result<Vec<u8>, RpcError> {
        let p = r.procedure;
        if p.signature != "flush-table-proc" {
            return Err(RpcError::invalid(format!(
                "procedure {:?} is not supported (flush-table-proc is)",
                p.signature
            )));
        }
        let table = p.instance.unwrap_or_default();
        match names::table_ref_str(table.as_bytes()) {
            TableRef::Table(t) => {
                self.access().flush_table(&t).await?;
            }
            _ => return Err(RpcError::invalid(format!("cannot flush {table:?}"))),
        }
        Ok(pb::ExecProcedureResponse {
            expected_timeout: Some(0),
            return_data: None,
        }
        .encode_to_vec())
    }

    /// The tables a listing call names: by Java regex on the name (as
    /// HBase prints it: `ns:t`, or `t` in `default`), in a namespace if one
    /// is given (which must exist).
    async fn listed_tables(
        &self,
        regex: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Vec<TableRecord>, RpcError> {
        let namespace = namespace.filter(|n| !n.is_empty());
        let pattern = match regex.filter(|r| !r.is_empty()) {
            Some(r) => Some(
                regex::Regex::new(&format!("^(?:{r})$"))
                    .map_err(|e| RpcError::invalid(format!("table name pattern {r:?}: {e}")))?,
            ),
            None => None,
        };
        let mut tables = match namespace {
            Some(ns) => self.access().list_tables_in(ns).await?,
            None => self.access().list_tables().await,
        };
        tables.retain(|t| pattern.as_ref().is_none_or(|p| p.is_match(&t.name)));
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(tables)
    }

    /// A server named by its native-RPC address: this one with its start
    /// code, another as HBase names a server it knows only by address.
    pub(super) fn server_at(&self, address: &str) -> pb::ServerName {
        super::registry_facts::server_name_at(&self.me, address)
    }

    /// One ClientMetaService call: the encoded answer, from the facts
    /// every registry door tells (`registry_facts.rs` says what they are
    /// on a single node and in a cluster). The client asks the registry
    /// again when a call to the meta location fails, so a dead server's
    /// answer is not kept.
    pub(super) fn registry(&self, method: &str) -> Result<Vec<u8>, RpcError> {
        let facts = super::registry_facts::RegistryFacts::now(&self.host, &self.me);
        let (master, servers, at) = (facts.master, facts.servers, facts.meta);
        Ok(match method {
            "GetClusterId" => pb::GetClusterIdResponse {
                cluster_id: Some(self.cluster_id.clone()),
            }
            .encode_to_vec(),
            "GetActiveMaster" => pb::GetActiveMasterResponse {
                server_name: master.as_deref().map(|m| self.server_at(m)),
            }
            .encode_to_vec(),
            "GetMetaRegionLocations" => pb::GetMetaRegionLocationsResponse {
                meta_locations: vec![pb::RegionLocation {
                    region_info: meta::meta_region_info(),
                    server_name: Some(self.server_at(&at)),
                    seq_num: 1,
                }],
            }
            .encode_to_vec(),
            "GetBootstrapNodes" => pb::GetBootstrapNodesResponse {
                server_name: servers.iter().map(|s| self.server_at(s)).collect(),
            }
            .encode_to_vec(),
            "GetMasters" => {
                let mut masters: Vec<pb::GetMastersResponseEntry> = Vec::new();
                if let Some(m) = &master {
                    masters.push(pb::GetMastersResponseEntry {
                        server_name: self.server_at(m),
                        is_active: true,
                    });
                }
                for s in servers.iter().filter(|s| Some(*s) != master.as_ref()) {
                    masters.push(pb::GetMastersResponseEntry {
                        server_name: self.server_at(s),
                        is_active: false,
                    });
                }
                pb::GetMastersResponse {
                    master_servers: masters,
                }
                .encode_to_vec()
            }
            _ => {
                return Err(RpcError::fatal(
                    errors::UNKNOWN_PROTOCOL,
                    format!("ClientMetaService.{method} is not served by Shoal"),
                ));
            }
        })
    }
}

/// The error for a MasterService call Shoal does not serve.
pub(super) fn not_served(method: &str) -> RpcError {
    RpcError::fatal(
        errors::UNKNOWN_PROTOCOL,
        format!(
            "MasterService.{method} is not served by Shoal (docs/hbase-client.md lists what is)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_attributes_shoal_does_not_keep_are_refused_by_name() {
        let mut t = pb::TableSchema {
            table_name: None,
            attributes: vec![
                attr("IS_META", "false"),
                attr("hbase.store.file-tracker.impl", "DEFAULT"),
            ],
            column_families: Vec::new(),
            configuration: Vec::new(),
        };
        assert!(
            check_table_attributes(&t).is_ok(),
            "what Shoal answers comes back"
        );
        t.attributes.push(attr("MAX_FILESIZE", 1 << 30));
        let e = check_table_attributes(&t).expect_err("MAX_FILESIZE");
        assert!(e.message.contains("MAX_FILESIZE"), "{}", e.message);
        t.attributes.pop();
        t.configuration.push(pb::NameStringPair {
            name: "hbase.hregion.max.filesize".into(),
            value: "1".into(),
        });
        assert!(check_table_attributes(&t).is_err());
    }

    #[test]
    fn family_attributes_round_trip() {
        let cf = pb::ColumnFamilySchema {
            name: Bytes::from_static(b"cf"),
            attributes: vec![
                attr("VERSIONS", 3),
                attr("TTL", "86400"),
                attr("BLOOMFILTER", "ROWCOL"),
                attr("COMPRESSION", "NONE"),
                attr("IN_MEMORY", "true"),
                attr("REPLICATION_SCOPE", "0"),
            ],
            configuration: Vec::new(),
        };
        let p = family_patch(&cf).unwrap();
        let f = p.apply(FamilySchema::new("cf"));
        assert_eq!(f.max_versions, 3);
        assert_eq!(f.ttl_seconds, 86400);
        assert_eq!(f.bloom, BloomName::Rowcol);
        assert!(f.in_memory);
        let back = family_schema(&f);
        let p2 = family_patch(&back).unwrap();
        assert_eq!(p2.apply(FamilySchema::new("cf")), f);
        let bad = pb::ColumnFamilySchema {
            attributes: vec![attr("COMPRESSION", "SNAPPY")],
            ..cf.clone()
        };
        assert!(family_patch(&bad).unwrap_err().message.contains("SNAPPY"));
        let forever = pb::ColumnFamilySchema {
            attributes: vec![attr("TTL", i32::MAX)],
            ..cf
        };
        assert_eq!(family_patch(&forever).unwrap().ttl_seconds, Some(0));
    }
}
