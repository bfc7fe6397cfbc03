//! What DynamoDB Local's own CPU pays for each kind of call a lanes create
//! makes (Spin's DynamoDB backend: `get-many` is a `BatchGetItem`,
//! `set-many` a `BatchWriteItem`, `current` a consistent `GetItem`, `swap`
//! a `TransactWriteItems` of one update): the engine alone on one
//! keep-alive connection, `--counted` calls of each after as many unmeasured,
//! CPU time of its process from `/proc`. On this machine the engine shares
//! two cores with Spin and the clients, so this is what caps creates per
//! second ([BENCHMARKS.md], "creates per second").

use anyhow::{bail, Result};
use base64::Engine as _;
use petstore_e2e::{cpu, dynamo};

use crate::load::{raw, Connection};
use crate::options::Options;

/// A value the size of a lane's head (a pet's JSON and its header).
const VALUE_BYTES: usize = 300;

pub fn run(o: &Options) -> Result<()> {
    let local = dynamo::local();
    let table = "petstore-engine";
    local.create_table(table);
    let mut connection = Connection::open(local.endpoint.trim_start_matches("http://"))?;
    let value = base64::engine::general_purpose::STANDARD.encode([b'x'; VALUE_BYTES]);
    let item = |key: &str| format!(r#"{{"PK":{{"S":"{key}"}},"VAL":{{"B":"{value}"}}}}"#);
    for k in 0..64 {
        let body = format!(
            r#"{{"TableName":"{table}","Item":{}}}"#,
            item(&format!("lane:{k}"))
        );
        call(&mut connection, "PutItem", &body)?;
    }
    let batch_get = |n: usize| {
        let keys: Vec<String> = (0..n)
            .map(|k| format!(r#"{{"PK":{{"S":"lane:{k}"}}}}"#))
            .collect();
        format!(
            r#"{{"RequestItems":{{"{table}":{{"Keys":[{}],"ConsistentRead":true,"ProjectionExpression":"PK,VAL"}}}}}}"#,
            keys.join(",")
        )
    };
    let calls: Vec<(&str, &str, String)> = vec![
        (
            "`current`: GetItem, consistent",
            "GetItem",
            format!(
                r#"{{"TableName":"{table}","Key":{{"PK":{{"S":"lane:1"}}}},"ConsistentRead":true,"ProjectionExpression":"VAL,VER"}}"#
            ),
        ),
        (
            "`get-many` of 2 items (a round read back)",
            "BatchGetItem",
            batch_get(2),
        ),
        ("`get-many` of 8 items", "BatchGetItem", batch_get(8)),
        (
            "`get-many` of 33 items (a create's first read)",
            "BatchGetItem",
            batch_get(33),
        ),
        (
            "`set-many` of 2 items (a pet and its entry)",
            "BatchWriteItem",
            format!(
                r#"{{"RequestItems":{{"{table}":[{{"PutRequest":{{"Item":{}}}}},{{"PutRequest":{{"Item":{}}}}}]}}}}"#,
                item("pet:1"),
                item("sx:available:0:1")
            ),
        ),
        (
            "`swap`: TransactWriteItems of 1 update",
            "TransactWriteItems",
            format!(
                r##"{{"TransactItems":[{{"Update":{{"TableName":"{table}","Key":{{"PK":{{"S":"lane:5"}}}},"UpdateExpression":"SET #VAL = :val ADD #VER :one","ExpressionAttributeNames":{{"#VAL":"VAL","#VER":"VER"}},"ExpressionAttributeValues":{{":val":{{"B":"{value}"}},":one":{{"N":"1"}}}}}}}}]}}"##
            ),
        ),
    ];
    println!("## DynamoDB Local's CPU a call, {} calls each\n", o.counted);
    println!("| call | engine CPU ms a call | ms a call, wall |");
    println!("|---|---:|---:|");
    for (name, target, body) in &calls {
        for _ in 0..o.counted {
            call(&mut connection, target, body)?;
        }
        let (cpu_before, started) = (cpu::of_process(local.pid), std::time::Instant::now());
        for _ in 0..o.counted {
            call(&mut connection, target, body)?;
        }
        let n = o.counted as f64;
        println!(
            "| {name} | {:.2} | {:.2} |",
            1000.0 * (cpu::of_process(local.pid) - cpu_before) / n,
            started.elapsed().as_secs_f64() * 1000.0 / n
        );
    }
    Ok(())
}

/// One call of DynamoDB's JSON protocol (DynamoDB Local checks that a
/// signature is there, not what it is).
fn call(connection: &mut Connection, target: &str, body: &str) -> Result<()> {
    let target = format!("DynamoDB_20120810.{target}");
    let headers = [
        ("x-amz-target", target.as_str()),
        ("content-type", "application/x-amz-json-1.0"),
        ("x-amz-date", "20261126T000000Z"),
        (
            "authorization",
            "AWS4-HMAC-SHA256 Credential=petstore/20261126/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
        ),
    ];
    let status = connection.exchange(&raw("POST", "/", &headers, body))?;
    if status != 200 {
        bail!("{target}: {status}");
    }
    Ok(())
}
