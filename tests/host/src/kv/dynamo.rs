//! Spin's AWS DynamoDB key-value backend (`key-value-aws`, Spin 4.0.2),
//! rebuilt over DynamoDB's JSON API (AWS DynamoDB Local in our tests) with
//! the requests Spin's `store.rs` makes per call:
//! - one table, partition key `PK` (string), value `VAL` (binary), version
//!   `VER` (number, written only by a compare-and-swap);
//! - `get` GetItem (consistent here: this engine serves tests and
//!   preloading), `set` PutItem, `delete` DeleteItem;
//! - `increment`: a consistent GetItem, then a one-item TransactWriteItems
//!   conditioned on the value read (or on its absence); counters are decimal
//!   text; no retry, so of two concurrent increments of one key one fails;
//! - `set-many` / `delete-many`: BatchWriteItem, unprocessed items re-sent:
//!   neither atomic nor ordered; `get-many`: BatchGetItem;
//! - compare-and-swap: `current` reads `VAL` and `VER`; `swap` writes `VAL`
//!   and adds 1 to `VER`, conditioned on the version seen, or on the value
//!   seen when there is no version, or on the key's absence; any failure of
//!   the write is reported as `cas-failed`.
//!
//! Requests carry a syntactically valid but unsigned `Authorization`:
//! DynamoDB Local checks that one is there, not its signature.

use std::time::Duration;

use anyhow::{anyhow, Result};
use base64::Engine as _;
use serde_json::{json, Value};

use super::{Engine, EngineCas, KeyValue, KvError, KvResult};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;
/// BatchWriteItem takes at most 25 requests.
const BATCH_WRITE_MAX: usize = 25;

/// A table of a DynamoDB endpoint (`http://127.0.0.1:8000`, say).
#[derive(Clone)]
pub struct DynamoEngine {
    endpoint: String,
    table: String,
    agent: ureq::Agent,
}

impl DynamoEngine {
    /// The table `table` at `endpoint` (it must exist: Spin never creates it).
    pub fn open(endpoint: &str, table: &str) -> Result<DynamoEngine> {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let engine = DynamoEngine {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            table: table.to_string(),
            agent,
        };
        engine
            .call("DescribeTable", json!({ "TableName": table }))
            .map_err(|e| anyhow!("table {table} at {endpoint}: {e}"))?;
        Ok(engine)
    }

    /// One request of the JSON API; DynamoDB's error type and message on failure.
    fn call(&self, operation: &str, body: Value) -> KvResult<Value> {
        let mut response = self
            .agent
            .post(&self.endpoint)
            .header("x-amz-target", &format!("DynamoDB_20120810.{operation}"))
            .header("content-type", "application/x-amz-json-1.0")
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=petstore/20260101/us-east-1/dynamodb/aws4_request, \
                 SignedHeaders=host, Signature=00",
            )
            .send(body.to_string())
            .map_err(|e| KvError::Store(format!("{operation}: {e}")))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| KvError::Store(format!("{operation}: {e}")))?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status != 200 {
            let kind = value["__type"].as_str().unwrap_or("error");
            let kind = kind.rsplit('#').next().unwrap_or(kind);
            let message = value["message"]
                .as_str()
                .or(value["Message"].as_str())
                .unwrap_or(&text);
            return Err(KvError::Store(format!("{operation}: {kind}: {message}")));
        }
        Ok(value)
    }

    fn key(key: &str) -> Value {
        json!({ "PK": { "S": key } })
    }

    fn item(key: &str, value: &[u8]) -> Value {
        json!({ "PK": { "S": key }, "VAL": { "B": B64.encode(value) } })
    }

    fn binary(value: &Value) -> Option<Vec<u8>> {
        B64.decode(value["B"].as_str()?).ok()
    }

    /// Every item of the table (a Scan, page by page), projected.
    fn scan(&self, projection: &str) -> KvResult<Vec<Value>> {
        let mut items = Vec::new();
        let mut start: Option<Value> = None;
        loop {
            let mut request =
                json!({ "TableName": self.table, "ProjectionExpression": projection });
            if let Some(key) = start.take() {
                request["ExclusiveStartKey"] = key;
            }
            let page = self.call("Scan", request)?;
            items.extend(page["Items"].as_array().cloned().unwrap_or_default());
            match page.get("LastEvaluatedKey") {
                Some(key) if !key.is_null() => start = Some(key.clone()),
                _ => return Ok(items),
            }
        }
    }

    /// BatchWriteItem of `requests`, re-sending what comes back unprocessed.
    fn batch_write(&self, requests: Vec<Value>) -> KvResult<()> {
        let mut pending = json!({ self.table.clone(): requests });
        loop {
            let answer = self.call("BatchWriteItem", json!({ "RequestItems": pending }))?;
            match answer.get("UnprocessedItems") {
                Some(left) if left.as_object().is_some_and(|o| !o.is_empty()) => {
                    pending = left.clone();
                }
                _ => return Ok(()),
            }
        }
    }

    fn transact_update(&self, update: Value) -> KvResult<()> {
        self.call(
            "TransactWriteItems",
            json!({ "TransactItems": [ { "Update": update } ] }),
        )
        .map(drop)
    }
}

impl Engine for DynamoEngine {
    fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        let answer = self.call(
            "GetItem",
            json!({ "TableName": self.table, "Key": Self::key(key),
                    "ConsistentRead": true, "ProjectionExpression": "VAL" }),
        )?;
        Ok(Self::binary(&answer["Item"]["VAL"]))
    }

    fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        self.call(
            "PutItem",
            json!({ "TableName": self.table, "Item": Self::item(key, value) }),
        )
        .map(drop)
    }

    fn delete(&self, key: &str) -> KvResult<()> {
        self.call(
            "DeleteItem",
            json!({ "TableName": self.table, "Key": Self::key(key) }),
        )
        .map(drop)
    }

    fn exists(&self, key: &str) -> KvResult<bool> {
        let answer = self.call(
            "GetItem",
            json!({ "TableName": self.table, "Key": Self::key(key),
                    "ConsistentRead": true, "ProjectionExpression": "PK" }),
        )?;
        Ok(answer["Item"]["PK"].is_object())
    }

    fn list_keys(&self) -> KvResult<Vec<String>> {
        Ok(self
            .scan("PK")?
            .iter()
            .filter_map(|item| item["PK"]["S"].as_str().map(str::to_string))
            .collect())
    }

    /// A consistent read, then one conditional update: no retry.
    fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let old = match self.get(key)? {
            None => None,
            Some(bytes) => Some(
                std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok())
                    .ok_or_else(|| KvError::Store(format!("{key}: not a decimal counter")))?,
            ),
        };
        let new = old.unwrap_or(0) + delta;
        let mut update = json!({
            "TableName": self.table,
            "Key": Self::key(key),
            "UpdateExpression": "SET #VAL = :new_val",
            "ExpressionAttributeNames": { "#VAL": "VAL" },
            "ExpressionAttributeValues": { ":new_val": { "B": B64.encode(new.to_string()) } },
        });
        match old {
            Some(old) => {
                update["ConditionExpression"] = json!("#VAL = :old_val");
                update["ExpressionAttributeValues"][":old_val"] =
                    json!({ "B": B64.encode(old.to_string()) });
            }
            None => update["ConditionExpression"] = json!("attribute_not_exists (#VAL)"),
        }
        self.transact_update(update)?;
        Ok(new)
    }

    fn cas_new(&self, key: &str) -> KvResult<Box<dyn EngineCas>> {
        Ok(Box::new(DynamoCas {
            engine: self.clone(),
            key: key.to_string(),
            seen: Seen::Unknown,
        }))
    }

    fn get_many(&self, keys: &[String]) -> KvResult<Vec<KeyValue>> {
        let wanted: Vec<Value> = keys.iter().map(|k| Self::key(k)).collect();
        let mut found = Vec::new();
        for chunk in wanted.chunks(100) {
            let answer = self.call(
                "BatchGetItem",
                json!({ "RequestItems": { self.table.clone(): {
                    "Keys": chunk, "ConsistentRead": true, "ProjectionExpression": "PK,VAL" } } }),
            )?;
            for item in answer["Responses"][&self.table]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(pk) = item["PK"]["S"].as_str() {
                    found.push((pk.to_string(), Self::binary(&item["VAL"])));
                }
            }
        }
        Ok(found)
    }

    /// One BatchWriteItem (Spin does not split it: more than 25 pairs fail).
    fn set_many(&self, pairs: &[(String, Vec<u8>)]) -> KvResult<()> {
        let requests = pairs
            .iter()
            .map(|(k, v)| json!({ "PutRequest": { "Item": Self::item(k, v) } }))
            .collect();
        self.batch_write(requests)
    }

    fn delete_many(&self, keys: &[String]) -> KvResult<()> {
        let requests = keys
            .iter()
            .map(|k| json!({ "DeleteRequest": { "Key": Self::key(k) } }))
            .collect();
        self.batch_write(requests)
    }

    fn peek(&self, key: &str) -> Option<Vec<u8>> {
        self.get(key).ok().flatten()
    }

    fn largest_value(&self) -> usize {
        self.scan("VAL")
            .unwrap_or_default()
            .iter()
            .filter_map(|item| Self::binary(&item["VAL"]))
            .map(|v| v.len())
            .max()
            .unwrap_or(0)
    }

    fn key_count(&self) -> usize {
        self.scan("PK").map_or(0, |items| items.len())
    }

    fn load(&self, values: &[(String, Vec<u8>)]) -> Result<()> {
        for chunk in values.chunks(BATCH_WRITE_MAX) {
            self.set_many(chunk).map_err(|e| anyhow!("{e}"))?;
        }
        Ok(())
    }
}

/// What `current` saw, which conditions the swap (Spin's `CasState`).
enum Seen {
    Versioned(String),
    Unversioned(String),
    Unset,
    Unknown,
}

struct DynamoCas {
    engine: DynamoEngine,
    key: String,
    seen: Seen,
}

impl EngineCas for DynamoCas {
    fn current(&mut self) -> KvResult<Option<Vec<u8>>> {
        let answer = self.engine.call(
            "GetItem",
            json!({ "TableName": self.engine.table, "Key": DynamoEngine::key(&self.key),
                    "ConsistentRead": true, "ProjectionExpression": "VAL,VER" }),
        )?;
        let item = &answer["Item"];
        let value = item["VAL"]["B"].as_str().map(str::to_string);
        self.seen = match (&value, item["VER"]["N"].as_str()) {
            (Some(_), Some(version)) => Seen::Versioned(version.to_string()),
            (Some(v), None) => Seen::Unversioned(v.clone()),
            (None, _) => Seen::Unset,
        };
        Ok(value.and_then(|v| B64.decode(v).ok()))
    }

    fn swap(&mut self, value: &[u8]) -> KvResult<bool> {
        let mut update = json!({
            "TableName": self.engine.table,
            "Key": DynamoEngine::key(&self.key),
            "UpdateExpression": "SET #VAL = :val ADD #VER :increment",
            "ExpressionAttributeNames": { "#VAL": "VAL", "#VER": "VER" },
            "ExpressionAttributeValues": {
                ":val": { "B": B64.encode(value) }, ":increment": { "N": "1" } },
        });
        match &self.seen {
            Seen::Versioned(version) => {
                update["ConditionExpression"] = json!("#VER = :ver");
                update["ExpressionAttributeValues"][":ver"] = json!({ "N": version });
            }
            Seen::Unversioned(old) => {
                update["ConditionExpression"] = json!("#VAL = :old_val");
                update["ExpressionAttributeValues"][":old_val"] = json!({ "B": old });
            }
            Seen::Unset => update["ConditionExpression"] = json!("attribute_not_exists (#VAL)"),
            Seen::Unknown => {}
        }
        // Spin reports any failure of the write as `cas-failed`.
        Ok(self.engine.transact_update(update).is_ok())
    }
}
