//! The gateway: each `Hbase` call routed by name to the group of calls that
//! runs it (`calls::tables`, `reads`, `writes`, `counters`, `scans`), as
//! the gateway's caller, and counted in the server's request metrics.

use super::calls::{counters, reads, scans, tables, writes};
use super::fault::Fault;
use super::scanners::Scanners;
use super::wire::{Struct, Value};
use crate::host::Host;
use crate::metrics::RequestOp;
use bytes::Bytes;

/// The gateway: the host, and the scanners its clients opened.
pub struct Gateway {
    host: Host,
    scanners: Scanners,
    /// Who every call acts as (`auth.thrift_user`; anyone with auth off).
    caller: crate::security::Caller,
}

impl Gateway {
    /// A gateway over `host`.
    pub fn new(host: Host, scanners: Scanners) -> Gateway {
        let caller = host.security().thrift_caller();
        Gateway {
            host,
            scanners,
            caller,
        }
    }

    /// The scanners (for the expiry sweep).
    pub fn scanners(&self) -> &Scanners {
        &self.scanners
    }

    /// Runs `method` with `args` for a client at `peer` (audit lines name
    /// it): the answer (None for void) or the fault. Counted in the
    /// server's request metrics under the gRPC call it matches, so the
    /// status page and `/metrics` show Thrift traffic too.
    pub async fn call(
        &self,
        peer: Option<std::net::SocketAddr>,
        method: &str,
        args: &Struct,
    ) -> Result<Option<Value>, Fault> {
        let start = std::time::Instant::now();
        let caller = self.caller.clone().with_peer(peer);
        let outcome = self.dispatch(&caller, method, args).await;
        if let Some(op) = request_op(method) {
            self.host
                .requests()
                .record(op, start.elapsed(), outcome.is_ok());
        }
        outcome
    }

    /// The group of calls `method` belongs to runs it.
    async fn dispatch(
        &self,
        caller: &crate::security::Caller,
        method: &str,
        args: &Struct,
    ) -> Result<Option<Value>, Fault> {
        let h = self.host.access(caller);
        match method {
            "getTableNames"
            | "getTableNamesWithIsTableEnabled"
            | "isTableEnabled"
            | "enableTable"
            | "disableTable"
            | "compact"
            | "majorCompact"
            | "getColumnDescriptors"
            | "getTableRegions"
            | "createTable"
            | "deleteTable" => tables::call(h, method, args).await,
            "get"
            | "getVer"
            | "getVerTs"
            | "getRow"
            | "getRowWithColumns"
            | "getRowTs"
            | "getRowWithColumnsTs"
            | "getRows"
            | "getRowsWithColumns"
            | "getRowsTs"
            | "getRowsWithColumnsTs"
            | "getRowOrBefore"
            | "getRegionInfo" => reads::call(h, method, args).await,
            "mutateRow" | "mutateRowTs" | "mutateRows" | "mutateRowsTs" | "deleteAll"
            | "deleteAllTs" | "deleteAllRow" | "deleteAllRowTs" | "checkAndPut" => {
                writes::call(h, method, args).await
            }
            "atomicIncrement" | "increment" | "incrementRows" | "append" => {
                counters::call(h, method, args).await
            }
            "scannerOpenWithScan"
            | "scannerOpen"
            | "scannerOpenWithStop"
            | "scannerOpenWithPrefix"
            | "scannerOpenTs"
            | "scannerOpenWithStopTs"
            | "scannerGet"
            | "scannerGetList"
            | "scannerClose" => scans::call(h, &self.scanners, method, args).await,
            // ---- the rest of upstream's Hbase.thrift
            "getThriftServerType" => Ok(Some(Value::I32(1))), // ONE: this is Thrift1
            "getClusterId" => Ok(Some(Value::Binary(Bytes::from_static(b"shoal")))),
            "grant" | "revoke" => Err(Fault::io(format!(
                "{method}: permissions are not supported by Shoal yet"
            ))),
            _ => Err(Fault::unknown_method(method)),
        }
    }
}

/// The request metric a method counts under (None: unknown methods).
fn request_op(method: &str) -> Option<RequestOp> {
    Some(match method {
        "get"
        | "getVer"
        | "getVerTs"
        | "getRow"
        | "getRowWithColumns"
        | "getRowTs"
        | "getRowWithColumnsTs"
        | "getRowOrBefore" => RequestOp::Get,
        "getRows" | "getRowsWithColumns" | "getRowsTs" | "getRowsWithColumnsTs" => {
            RequestOp::MultiGet
        }
        "mutateRow" | "mutateRowTs" | "deleteAll" | "deleteAllTs" | "deleteAllRow"
        | "deleteAllRowTs" => RequestOp::Mutate,
        "mutateRows" | "mutateRowsTs" => RequestOp::MultiMutate,
        "atomicIncrement" | "increment" | "incrementRows" => RequestOp::Increment,
        "append" => RequestOp::Append,
        "checkAndPut" => RequestOp::CheckAndMutate,
        m if m.starts_with("scanner") => RequestOp::Scan,
        "getTableNames"
        | "getTableNamesWithIsTableEnabled"
        | "isTableEnabled"
        | "enableTable"
        | "disableTable"
        | "compact"
        | "majorCompact"
        | "getColumnDescriptors"
        | "getTableRegions"
        | "createTable"
        | "deleteTable"
        | "getRegionInfo"
        | "getThriftServerType"
        | "getClusterId"
        | "grant"
        | "revoke" => RequestOp::Admin,
        _ => return None,
    })
}
