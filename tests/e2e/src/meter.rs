//! A meter between Spin and DynamoDB (Local): an HTTP/1.1 proxy that asks
//! DynamoDB for the capacity each call consumes (it adds
//! `"ReturnConsumedCapacity":"TOTAL"` to the request's JSON: DynamoDB Local
//! checks no signature) and counts the items each read asked for and found.
//! DynamoDB Local reports 0 units for an item that does not exist; real
//! DynamoDB charges it as a read of up to 4 KB ("If you perform a read
//! operation on an item that doesn't exist, DynamoDB will still consume
//! read throughput", AWS DynamoDB Developer Guide): the meter charges each
//! absent item of a strongly consistent read 1 unit, of an eventually
//! consistent one 0.5 (DynamoDB Local charges them itself in a `GetItem`,
//! not in a `BatchGetItem`). Responses pass unchanged.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use petstore::model::PetStatus;
use serde_json::Value;

use crate::spin::SpinUp;
use crate::stores::{Backend, Store};

/// What the calls carried since the last [`Meter::take`] consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Consumed {
    /// DynamoDB operations (a `BatchGetItem` is one).
    pub calls: u64,
    /// Items the reads asked for, and those that exist.
    pub items_read: u64,
    pub items_found: u64,
    /// Read units: as DynamoDB Local reports them, plus the absent items'.
    pub read_units: f64,
    pub write_units: f64,
    /// Conditional writes DynamoDB refused: a compare-and-swap's `swap`
    /// (or an `increment`) that another call's write beat.
    pub refused: u64,
    /// Calls by operation, in the order of [`OPERATIONS`].
    pub by_operation: [u64; 5],
    /// Items the writes put (a `BatchWriteItem`'s requests, a
    /// transaction's items, a `PutItem`).
    pub items_written: u64,
    /// Keys the scans returned (a `list-keys`: Spin projects the key
    /// only), and the bytes of those keys.
    pub scanned_keys: u64,
    pub scanned_key_bytes: u64,
}

impl Consumed {
    pub fn absent(&self) -> u64 {
        self.items_read - self.items_found
    }

    pub fn units(&self) -> f64 {
        self.read_units + self.write_units
    }
}

/// A running meter; its threads live as long as the process.
pub struct Meter {
    address: String,
    consumed: Arc<Mutex<Consumed>>,
}

impl Meter {
    /// Listens on a free loopback port and carries each connection to
    /// `target` (`host:port`: DynamoDB Local, or a line in front of it).
    pub fn start(target: &str) -> std::io::Result<Meter> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = format!("http://{}", listener.local_addr()?);
        let consumed = Arc::new(Mutex::new(Consumed::default()));
        let (shared, target) = (consumed.clone(), target.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (shared, target) = (shared.clone(), target.clone());
                std::thread::spawn(move || {
                    if let Ok(server) = TcpStream::connect(&target) {
                        let _ = carry(client, server, &shared);
                    }
                });
            }
        });
        Ok(Meter { address, consumed })
    }

    /// `http://127.0.0.1:port`, for `AWS_ENDPOINT_URL`.
    pub fn endpoint(&self) -> &str {
        &self.address
    }

    /// What was consumed since the last call, and a fresh count.
    pub fn take(&self) -> Consumed {
        std::mem::take(&mut *self.consumed.lock().expect("the meter"))
    }
}

/// The capacity table's store (BENCHMARKS.md): a DynamoDB Local table of
/// `layout` holding `pets` pets, 1 in 10 sold, and `spin up` reaching it
/// through a meter.
pub fn metered_store(layout: &'static str, pets: usize) -> std::io::Result<(Store, Meter, SpinUp)> {
    let store = Store::with_layout(Backend::Dynamo, layout);
    store.preload(pets, |n| {
        if n % 10 == 9 {
            PetStatus::Sold
        } else {
            PetStatus::Available
        }
    });
    let local = crate::dynamo::local().endpoint.clone();
    let meter = Meter::start(local.trim_start_matches("http://"))?;
    let spin = store
        .launch()
        .env("AWS_ENDPOINT_URL", meter.endpoint())
        .start();
    Ok((store, meter, spin))
}

/// One HTTP/1.1 message: its head's lines and its body.
struct Message {
    head: Vec<String>,
    body: Vec<u8>,
}

impl Message {
    fn read(from: &mut impl BufRead) -> std::io::Result<Option<Message>> {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            if from.read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let line = line.trim_end_matches(['\r', '\n']).to_string();
            if line.is_empty() {
                break;
            }
            head.push(line);
        }
        let header = |name: &str| {
            head.iter().find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        let mut body = Vec::new();
        if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut size = String::new();
                from.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut chunk = vec![0; n + 2];
                from.read_exact(&mut chunk)?;
                body.extend_from_slice(&chunk[..n]);
                if n == 0 {
                    break;
                }
            }
            head.retain(|l| !l.to_ascii_lowercase().starts_with("transfer-encoding"));
            head.push(format!("Content-Length: {}", body.len()));
        } else if let Some(length) = header("content-length").and_then(|v| v.parse().ok()) {
            body = vec![0; length];
            from.read_exact(&mut body)?;
        }
        Ok(Some(Message { head, body }))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.iter().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The message with another body, its length said.
    fn with_body(mut self, body: Vec<u8>) -> Message {
        self.head
            .retain(|l| !l.to_ascii_lowercase().starts_with("content-length"));
        self.head.push(format!("Content-Length: {}", body.len()));
        self.body = body;
        self
    }

    fn write(&self, to: &mut impl Write) -> std::io::Result<()> {
        let mut out = self.head.join("\r\n").into_bytes();
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(&self.body);
        to.write_all(&out)
    }
}

/// Carries one connection's requests, each metered, until either side
/// closes it.
fn carry(client: TcpStream, server: TcpStream, consumed: &Mutex<Consumed>) -> std::io::Result<()> {
    let (mut client_in, mut client_out) = (BufReader::new(client.try_clone()?), client);
    let (mut server_in, mut server_out) = (BufReader::new(server.try_clone()?), server);
    while let Some(request) = Message::read(&mut client_in)? {
        let operation = request
            .header("x-amz-target")
            .and_then(|t| t.rsplit('.').next())
            .unwrap_or("")
            .to_string();
        let mut asked: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let request = match asked.as_object_mut() {
            Some(object) => {
                object.insert("ReturnConsumedCapacity".into(), "TOTAL".into());
                let body = serde_json::to_vec(&asked).expect("JSON");
                request.with_body(body)
            }
            None => request,
        };
        request.write(&mut server_out)?;
        let Some(response) = Message::read(&mut server_in)? else {
            return Ok(());
        };
        let answered: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
        let mut consumed = consumed.lock().expect("the meter");
        count(&mut consumed, &operation, &asked, &answered);
        drop(consumed);
        response.write(&mut client_out)?;
    }
    Ok(())
}

/// The operations [`Consumed::by_operation`] counts: `GetItem` (a `get`,
/// or a compare-and-swap's `current`), `BatchGetItem` (a `get-many`),
/// `BatchWriteItem` (a `set-many`), `TransactWriteItems` (a `swap`),
/// `Scan` (a page of `list-keys`: Spin scans the whole table).
pub const OPERATIONS: [&str; 5] = [
    "GetItem",
    "BatchGetItem",
    "BatchWriteItem",
    "TransactWriteItems",
    "Scan",
];

/// Adds one call to `consumed`.
fn count(consumed: &mut Consumed, operation: &str, asked: &Value, answered: &Value) {
    consumed.calls += 1;
    if let Some(at) = OPERATIONS.iter().position(|k| *k == operation) {
        consumed.by_operation[at] += 1;
    }
    let kind = answered["__type"].as_str().unwrap_or("");
    consumed.refused += u64::from(kind.ends_with("#TransactionCanceledException"));
    let units: f64 = match &answered["ConsumedCapacity"] {
        Value::Array(each) => each
            .iter()
            .filter_map(|c| c["CapacityUnits"].as_f64())
            .sum(),
        one => one["CapacityUnits"].as_f64().unwrap_or(0.0),
    };
    let absent_unit = |consistent: &Value| {
        if consistent.as_bool() == Some(true) {
            1.0
        } else {
            0.5
        }
    };
    match operation {
        "GetItem" => {
            // DynamoDB Local already charges an absent `GetItem`; its
            // `BatchGetItem` charges absent items nothing.
            let found = answered.get("Item").is_some();
            consumed.items_read += 1;
            consumed.items_found += u64::from(found);
            consumed.read_units += match found {
                true => units,
                false => units.max(absent_unit(&asked["ConsistentRead"])),
            };
        }
        "BatchGetItem" => {
            let (mut read, mut found, mut absent_units) = (0, 0, 0.0);
            if let Some(tables) = asked["RequestItems"].as_object() {
                for (table, request) in tables {
                    let keys = request["Keys"].as_array().map_or(0, Vec::len) as u64;
                    let got = answered["Responses"][table].as_array().map_or(0, Vec::len) as u64;
                    let unprocessed = answered["UnprocessedKeys"][table]["Keys"]
                        .as_array()
                        .map_or(0, Vec::len) as u64;
                    let processed = keys - unprocessed.min(keys);
                    read += processed;
                    found += got;
                    absent_units += (processed - got.min(processed)) as f64
                        * absent_unit(&request["ConsistentRead"]);
                }
            }
            consumed.items_read += read;
            consumed.items_found += found;
            consumed.read_units += units + absent_units;
        }
        // Billed by the size of every item the scan reads, whatever it
        // returns (Spin projects the key only): DynamoDB Local reports it.
        "Scan" => {
            let count = |field: &str| answered[field].as_u64().unwrap_or(0);
            consumed.items_read += count("ScannedCount");
            consumed.items_found += count("Count");
            consumed.read_units += units;
            let items = answered["Items"].as_array().map_or(&[][..], Vec::as_slice);
            consumed.scanned_keys += items.len() as u64;
            consumed.scanned_key_bytes += items
                .iter()
                .filter_map(|item| item["PK"]["S"].as_str())
                .map(|key| key.len() as u64)
                .sum::<u64>();
        }
        _ => {
            consumed.write_units += units;
            consumed.items_written += match operation {
                "BatchWriteItem" => asked["RequestItems"].as_object().map_or(0, |tables| {
                    tables
                        .values()
                        .filter_map(Value::as_array)
                        .map(Vec::len)
                        .sum()
                }) as u64,
                "TransactWriteItems" => {
                    asked["TransactItems"].as_array().map_or(0, Vec::len) as u64
                }
                "PutItem" | "UpdateItem" | "DeleteItem" => 1,
                _ => 0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `list-keys` is read capacity, never write: the scan's units and
    /// the items it examined.
    #[test]
    fn a_scan_is_booked_as_reads_of_every_item_scanned() {
        let mut consumed = Consumed::default();
        let asked = json!({"TableName": "petstore", "ProjectionExpression": "PK"});
        let answered = json!({
            "Items": [{"PK": {"S": "pet:1"}}, {"PK": {"S": "ctr:id"}}],
            "Count": 2,
            "ScannedCount": 2,
            "ConsumedCapacity": {"TableName": "petstore", "CapacityUnits": 0.5},
        });
        count(&mut consumed, "Scan", &asked, &answered);
        assert_eq!(
            consumed,
            Consumed {
                calls: 1,
                items_read: 2,
                items_found: 2,
                read_units: 0.5,
                by_operation: [0, 0, 0, 0, 1],
                scanned_keys: 2,
                scanned_key_bytes: 11,
                ..Consumed::default()
            }
        );
    }
}
