//! Histories of real runs, for the model of what the service promises
//! (`petstore_testkit::model`): clients that mix creates, keyed creates on
//! a few repeated keys, getPets of committed ids and walks that follow the
//! list's end, through several instances of one store, each request timed
//! on one clock (sent, answered); then every walk and keyed create taken
//! to its end and the whole list walked, so that every promise shows.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use petstore_testkit::model::{self, Answer, Call, Event, History, IdOrder, Promise, Violation};
use serde_json::{json, Value};

use crate::client::{Api, KEY, STATUSES};
use crate::line::Line;
use crate::stores::{Backend, Store};

/// What the clients do.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    pub clients: usize,
    /// Requests in all, spread over the clients.
    pub operations: usize,
    /// Keys the keyed creates share (each with its own pet).
    pub keys: usize,
}

/// The history of one run.
pub struct Run {
    pub history: History,
    /// Requests the clients made, and those that finished the run.
    pub mixed: usize,
    pub finishing: usize,
}

/// What the clients share: the clock, the history, the ids committed.
struct Shared {
    began: Instant,
    history: Mutex<History>,
    committed: Mutex<Vec<i64>>,
}

impl Shared {
    fn now(&self) -> u64 {
        self.began.elapsed().as_nanos() as u64
    }
}

/// A client's walk: the list it follows and where it goes next.
struct Walk {
    id: u64,
    status: Option<&'static str>,
    target: String,
    /// A page came without a `next` link.
    ended: bool,
    /// ...and was requested once more, as a client that follows the list.
    followed: bool,
}

impl Walk {
    fn new(id: u64, status: Option<&'static str>) -> Walk {
        let target = match status {
            Some(s) => format!("/v1/pets?limit=10&status={s}"),
            None => "/v1/pets?limit=10".to_string(),
        };
        Walk {
            id,
            status,
            target,
            ended: false,
            followed: false,
        }
    }
}

/// One client: its number, its instance, its walk.
struct Client<'a> {
    n: usize,
    shared: &'a Shared,
    api: &'a Api,
    walk: Walk,
    walks: u64,
}

impl Client<'_> {
    /// Sends one request, records it.
    fn send(
        &self,
        call: Call,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> (Event, Option<String>) {
        let start = self.shared.now();
        let reply = self
            .api
            .try_send(method, path, Some(KEY), headers, body.map(str::as_bytes));
        let end = self.shared.now();
        let (answer, next) = match reply {
            Ok(reply) => {
                let next = reply.header("link").and_then(petstore_testkit::next_of);
                let replayed = reply.header("idempotent-replayed").is_some();
                let answer = Answer::of(
                    &call,
                    reply.status,
                    reply.body.as_bytes(),
                    next.is_some(),
                    replayed,
                );
                (answer, next)
            }
            Err(_) => (Answer::Lost, None),
        };
        let event = Event {
            client: self.n,
            replica: None,
            start,
            end,
            call,
            answer,
        };
        self.shared.history.lock().unwrap().push(event.clone());
        if let Answer::Created { pet, .. } = &event.answer {
            if let Some(id) = pet["id"].as_i64() {
                self.shared.committed.lock().unwrap().push(id);
            }
        }
        (event, next)
    }

    fn create(&self, body: Value, key: Option<&str>) -> Event {
        let call = Call::Create {
            body: body.clone(),
            key: key.map(str::to_string),
        };
        let mut headers = vec![("content-type", "application/json")];
        if let Some(key) = key {
            headers.push(("idempotency-key", key));
        }
        self.send(call, "POST", "/v1/pets", &headers, Some(&body.to_string()))
            .0
    }

    fn get_pet(&self, id: i64) {
        self.send(
            Call::GetPet { id },
            "GET",
            &format!("/v1/pets/{id}"),
            &[],
            None,
        );
    }

    fn health(&self) {
        self.send(Call::Health, "GET", "/v1/health", &[], None);
    }

    /// The next page of the client's walk; once it ended, its last page
    /// again (as a client that follows the list does), then a new walk.
    fn page(&mut self) {
        if self.walk.followed {
            self.walks += 1;
            let status = [None, Some("available"), Some("sold")][(self.walks % 3) as usize];
            self.walk = Walk::new(self.n as u64 * 1_000_000 + self.walks, status);
        }
        let call = Call::Page {
            walk: self.walk.id,
            status: self.walk.status.map(str::to_string),
            limit: 10,
            first: !self.walk.target.contains("cursor="),
        };
        let target = self.walk.target.clone();
        let (event, next) = self.send(call, "GET", &target, &[], None);
        if let Answer::Page { .. } = event.answer {
            match next {
                Some(next) => {
                    self.walk.target = next;
                    self.walk.ended = false;
                }
                None if self.walk.ended => self.walk.followed = true,
                None => self.walk.ended = true,
            }
        }
    }

    /// Follows the walk to its end, then asks for its last page once more.
    fn finish_walk(&mut self) {
        for _ in 0..10_000 {
            if self.walk.followed {
                return;
            }
            self.page();
        }
    }
}

/// The body a keyed create sends with key `k`.
fn keyed_body(k: usize) -> Value {
    json!({"name": format!("key-{k}"), "categoryId": 1, "status": STATUSES[k % 3]})
}

/// A well-spread number from `i` (the client's choices, reproducible).
fn spread(i: usize) -> usize {
    (i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17) as usize
}

/// Runs `mix` against `apis` (several instances of one store, taken in
/// turn), then finishes every walk and keyed create and walks every list.
pub fn run(apis: &[Api], mix: Mix) -> Run {
    let shared = Arc::new(Shared {
        began: Instant::now(),
        history: Mutex::new(History::default()),
        committed: Mutex::new(Vec::new()),
    });
    let apis: Arc<Vec<Api>> = Arc::new(apis.to_vec());
    let threads: Vec<_> = (0..mix.clients)
        .map(|n| {
            let (shared, apis) = (shared.clone(), apis.clone());
            std::thread::spawn(move || {
                let api = &apis[n % apis.len()];
                let mut client = Client {
                    n,
                    shared: &shared,
                    api,
                    walk: Walk::new(n as u64 * 1_000_000, None),
                    walks: 0,
                };
                for i in (n..mix.operations).step_by(mix.clients) {
                    let draw = spread(i);
                    match draw % 20 {
                        0..=7 => {
                            let body = json!({"name": format!("c{i}"), "categoryId": 1, "status": STATUSES[i % 3]});
                            client.create(body, None);
                        }
                        8..=10 => {
                            let k = draw / 20 % mix.keys;
                            client.create(keyed_body(k), Some(&format!("key-{k}")));
                        }
                        11..=14 => {
                            let committed = shared.committed.lock().unwrap().clone();
                            if let Some(last) = committed.last() {
                                let pick = if draw.is_multiple_of(2) { *last } else { committed[draw / 40 % committed.len()] };
                                client.get_pet(pick);
                            }
                        }
                        15..=18 => client.page(),
                        _ => client.health(),
                    }
                }
                client.finish_walk();
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a client");
    }
    let mixed = shared.history.lock().unwrap().events.len();
    finish(&shared, &apis[0], mix);
    let history = shared.history.lock().unwrap().clone();
    let finishing = history.events.len() - mixed;
    Run {
        history,
        mixed,
        finishing,
    }
}

/// Every keyed create retried with its key until it answers 201 (waiting
/// out a 409's lease), a fresh walk of every list, every committed pet
/// fetched.
fn finish(shared: &Shared, api: &Api, mix: Mix) {
    let mut client = Client {
        n: mix.clients,
        shared,
        api,
        walk: Walk::new(mix.clients as u64 * 1_000_000, None),
        walks: 0,
    };
    for k in 0..mix.keys {
        let sent = shared.history.lock().unwrap().events.iter().any(|e| {
            matches!(&e.call, Call::Create { key: Some(key), .. } if *key == format!("key-{k}"))
        });
        if !sent {
            continue;
        }
        for _ in 0..30 {
            let event = client.create(keyed_body(k), Some(&format!("key-{k}")));
            match event.answer {
                Answer::Created { .. } => break,
                Answer::Error { status: 409, .. } => std::thread::sleep(Duration::from_millis(500)),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
    for status in [None, Some("available"), Some("pending"), Some("sold")] {
        client.walks += 1;
        client.walk = Walk::new(mix.clients as u64 * 1_000_000 + client.walks, status);
        client.finish_walk();
    }
    let committed: BTreeSet<i64> = shared.committed.lock().unwrap().iter().copied().collect();
    for id in committed {
        client.get_pet(id);
    }
}

/// A run on real `spin up`, judged.
pub struct Judged {
    pub run: Run,
    pub violations: Vec<Violation>,
    /// Where the history was written, from the workspace.
    pub path: String,
    pub seconds: f64,
    pub layout: &'static str,
}

/// `mix` on a fresh store of `backend` through two `spin up` instances (on
/// DynamoDB, the second reaches the store through a line `one_way_ms`
/// each way), the history written to `target/histories/{name}.jsonl`, then
/// judged by the model with the promises of the store's layout.
pub fn on_spin(backend: Backend, mix: Mix, one_way_ms: u64, name: &str) -> Judged {
    let store = Store::new(backend);
    let local = crate::dynamo::local()
        .endpoint
        .trim_start_matches("http://")
        .to_string();
    let line = Line::start(&local, Duration::from_millis(one_way_ms)).expect("the line");
    let a = store.start();
    let b = match backend {
        Backend::Dynamo => store
            .launch()
            .env("AWS_ENDPOINT_URL", line.endpoint())
            .start(),
        _ => store.start(),
    };
    let began = Instant::now();
    let run = run(&[a.api.clone(), b.api.clone()], mix);
    let seconds = began.elapsed().as_secs_f64();
    let promise = Promise {
        ids: match store.layout {
            "lanes" => IdOrder::Within(127),
            _ => IdOrder::Above,
        },
        corrupt: false,
        faults: false,
        settles: false,
    };
    let path = format!("target/histories/{name}.jsonl");
    let file = crate::workspace().join(&path);
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("target/histories");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).expect("the history file"));
    run.history.write(&mut out).expect("the history written");
    let violations = model::check(&run.history, &promise);
    Judged {
        run,
        violations,
        path,
        seconds,
        layout: store.layout,
    }
}
