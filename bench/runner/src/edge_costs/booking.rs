//! One deployment being booked: each request sent with a trace and a
//! request id of its own, grouped into rows, with the meter's count and
//! (on SQLite) the store's keys when each request began.

use std::time::{Duration, Instant};

use anyhow::{ensure, Result};
use petstore_e2e::client::{Api, Reply, KEY};
use petstore_e2e::meter::{Consumed, Meter};
use petstore_e2e::spin::SpinUp;
use petstore_host::kv::KvStore;

/// A request sent, its trace and what the store held when it began.
pub(super) struct Sent {
    pub(super) row: usize,
    pub(super) trace: String,
    pub(super) request_id: String,
    /// SQLite: the store's keys and their bytes before the request.
    pub(super) keys_before: Option<(u64, u64)>,
}

/// One deployment being booked.
pub(super) struct Booking<'a> {
    pub(super) spin: &'a SpinUp,
    /// A client that waits as long as a `list-keys` of the whole store
    /// takes (minutes on DynamoDB Local at 100,000 pets).
    api: Api,
    /// When the current row began.
    began: Instant,
    meter: Option<&'a Meter>,
    /// SQLite: the store, reached directly; its keys' count and bytes.
    direct: Option<KvStore>,
    keys: (u64, u64),
    pub(super) sent: Vec<Sent>,
    pub(super) names: Vec<String>,
    pub(super) used: Vec<Option<Consumed>>,
    pub(super) run: String,
}

impl<'a> Booking<'a> {
    /// Books the deployment `spin` as `run`, with the meter in front of
    /// its store (DynamoDB) or the store reached directly (SQLite).
    pub(super) fn new(
        spin: &'a SpinUp,
        meter: Option<&'a Meter>,
        direct: Option<KvStore>,
        run: String,
    ) -> Booking<'a> {
        Booking {
            spin,
            api: Api::with_timeout(spin.api.base.clone(), Duration::from_secs(3_600)),
            began: Instant::now(),
            meter,
            direct,
            keys: (0, 0),
            sent: Vec::new(),
            names: Vec::new(),
            used: Vec::new(),
            run,
        }
    }
}

impl Booking<'_> {
    /// Starts a row: the meter's count from here on is its.
    pub(super) fn row(&mut self, name: &str) {
        if let Some(meter) = self.meter {
            meter.take();
        }
        self.names.push(name.to_string());
        self.used.push(None);
        self.began = Instant::now();
    }

    /// Ends the current row: the meter's count since it began.
    pub(super) fn end(&mut self) {
        let used = self.meter.map(Meter::take);
        if let Some(last) = self.used.last_mut() {
            *last = used;
        }
        let name = self.names.last().map_or("", String::as_str);
        eprintln!(
            "{}: {name}, {:.1} s",
            self.run,
            self.began.elapsed().as_secs_f64()
        );
    }

    /// One row of one request.
    pub(super) fn one(
        &mut self,
        name: &str,
        method: &str,
        target: &str,
        body: Option<&str>,
    ) -> Result<Reply> {
        self.row(name);
        let reply = self.send(method, target, body)?;
        self.end();
        Ok(reply)
    }

    /// A request of the current row, with a trace of its own.
    pub(super) fn send(&mut self, method: &str, target: &str, body: Option<&str>) -> Result<Reply> {
        let keys_before = match &self.direct {
            Some(direct) => {
                let count = direct.key_count() as u64;
                if count != self.keys.0 {
                    let keys = direct.list_keys().map_err(|e| anyhow::anyhow!("{e}"))?;
                    self.keys = (keys.len() as u64, keys.iter().map(|k| k.len() as u64).sum());
                }
                Some(self.keys)
            }
            None => None,
        };
        let row = self.names.len() - 1;
        let n = self.sent.len();
        let trace = format!("{:016x}{n:016x}", fresh_prefix(&self.run));
        let request_id = format!("{}-{n}", self.run);
        let parent = format!("00-{trace}-00000000000000a1-01");
        let mut headers = vec![
            ("traceparent", parent.as_str()),
            ("x-request-id", request_id.as_str()),
        ];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        let reply = self
            .api
            .send(method, target, Some(KEY), &headers, body.map(str::as_bytes));
        ensure!(
            reply.status < 300,
            "{method} {target}: {} {}",
            reply.status,
            reply.body
        );
        self.sent.push(Sent {
            row,
            trace,
            request_id,
            keys_before,
        });
        Ok(reply)
    }
}

/// A trace-id prefix of this deployment (its run name hashed).
fn fresh_prefix(run: &str) -> u64 {
    run.bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
        .max(1)
}
