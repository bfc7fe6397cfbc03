//! A black-box HTTP client for the petstore, as any client sees it: requests
//! over a real socket (ureq), replies as status, headers and body, and the
//! walks and checks the suites share. It knows nothing of who serves the API
//! (a real `spin up`, or the test host).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use petstore_testkit::Reader;
use serde_json::Value;

/// The API key every suite's deployments accept (besides a rotated one).
pub const KEY: &str = "e2e-key";
pub const ROTATED_KEY: &str = "rotated-key";
pub const STATUSES: [&str; 3] = ["available", "pending", "sold"];

/// One answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// Header names in lower case; a repeated header keeps its last value.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// Asserts an Error body of this status and code: exactly the three
    /// fields of the contract, `status` equal to the HTTP status.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json();
        assert_eq!(body["code"], code, "{body}");
        assert_eq!(body["status"], status);
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(body.as_object().map(|o| o.len()), Some(3), "{body}");
    }

    /// The ids of a list page, in the order served.
    pub fn ids(&self) -> Vec<i64> {
        self.pets().iter().map(pet_id).collect()
    }

    /// The pets of a list page.
    pub fn pets(&self) -> Vec<Value> {
        match self.json() {
            Value::Array(pets) => pets,
            other => panic!("not a list of pets: {other}"),
        }
    }

    /// The id of a 201's pet, checked against its `Location`.
    pub fn created_id(&self) -> i64 {
        assert_eq!(self.status, 201, "{}", self.body);
        let id = pet_id(&self.json());
        assert_eq!(
            self.header("location"),
            Some(format!("/v1/pets/{id}").as_str())
        );
        id
    }

    /// The target of `Link: <…>; rel="next"`, if any.
    pub fn next_link(&self) -> Option<String> {
        self.header("link").map(petstore_testkit::next_target)
    }
}

fn pet_id(pet: &Value) -> i64 {
    pet["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("pet without id: {pet}"))
}

/// The API at one base address (`http://127.0.0.1:port`).
#[derive(Debug, Clone)]
pub struct Api {
    pub base: String,
    agent: ureq::Agent,
}

impl Api {
    pub fn new(base: String) -> Api {
        Api::with_timeout(base, Duration::from_secs(30))
    }

    /// A client that gives up on a request after `timeout` (a probe's).
    pub fn with_timeout(base: String, timeout: Duration) -> Api {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirect is an answer to look at (`/` → `/docs`), not follow.
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .build()
            .into();
        Api { base, agent }
    }

    /// Sends any request; `auth` is the bearer key (None: no header). Panics
    /// if no answer comes (see [`Api::try_get_public`]).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        auth: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        self.try_send(method, path, auth, headers, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// As [`Api::send`]; an error when no answer came.
    pub fn try_send(
        &self,
        method: &str,
        path: &str,
        auth: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Reply, ureq::Error> {
        let mut builder = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(key) = auth {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(body.map(<[u8]>::to_vec).unwrap_or_default())
            .expect("a valid request");
        self.exchange(request)
    }

    /// `POST /v1/pets` with an `Idempotency-Key`; an error when no answer
    /// came in time (a client then retries with the same key).
    pub fn try_post_keyed(&self, key: &str, body: &str) -> Result<Reply, ureq::Error> {
        let headers = [
            ("content-type", "application/json"),
            ("idempotency-key", key),
        ];
        self.try_send(
            "POST",
            "/v1/pets",
            Some(KEY),
            &headers,
            Some(body.as_bytes()),
        )
    }

    /// `GET` without a key; an error when no answer came in time (a wedged
    /// instance, say).
    pub fn try_get_public(&self, path: &str) -> Result<Reply, ureq::Error> {
        self.try_send("GET", path, None, &[], None)
    }

    fn exchange(&self, request: http::Request<Vec<u8>>) -> Result<Reply, ureq::Error> {
        let mut response = self.agent.run(request)?;
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        Ok(Reply {
            status: response.status().as_u16(),
            headers,
            body: response.body_mut().read_to_string()?,
        })
    }

    /// `GET` with the key.
    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, Some(KEY), &[], None)
    }

    /// `GET` with the key and more headers.
    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send("GET", path, Some(KEY), headers, None)
    }

    /// `POST /v1/pets` with the key and a JSON body.
    pub fn post(&self, body: &str) -> Reply {
        self.post_with(body, &[])
    }

    /// `POST /v1/pets` with an `Idempotency-Key`.
    pub fn post_keyed(&self, key: &str, body: &str) -> Reply {
        self.post_with(body, &[("idempotency-key", key)])
    }

    pub fn post_with(&self, body: &str, headers: &[(&str, &str)]) -> Reply {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        self.send("POST", "/v1/pets", Some(KEY), &all, Some(body.as_bytes()))
    }

    /// Creates a pet (category 2), asserting the 201; its id.
    pub fn create(&self, name: &str, status: &str) -> i64 {
        let r = self.post(&pet_body(name, status));
        let id = r.created_id();
        assert_eq!(r.json()["status"], status);
        id
    }

    /// The ids of the pets named `name`: in the unfiltered walk, and in the
    /// walk of `status`.
    pub fn named(&self, name: &str, status: &str) -> (Vec<i64>, Vec<i64>) {
        let of = |path: &str| {
            self.walk_pets(path)
                .into_iter()
                .filter(|p| p["name"] == name)
                .map(|p| p["id"].as_i64().expect("an id"))
                .collect::<Vec<_>>()
        };
        (
            of("/v1/pets?limit=100"),
            of(&format!("/v1/pets?limit=100&status={status}")),
        )
    }

    /// Follows `Link: rel="next"` from `path`; the pets in walk order.
    pub fn walk_pets(&self, path: &str) -> Vec<Value> {
        petstore_testkit::walk_pets(self, path)
    }

    /// Follows `Link: rel="next"` from `first`; every page's target, the
    /// first's and the last's (the list's end) included.
    pub fn walk_targets(&self, first: &str) -> Vec<String> {
        let mut pages = vec![first.to_string()];
        while let Some(next) = self.get(pages.last().expect("a page")).next_link() {
            pages.push(next);
        }
        pages
    }

    /// Follows `Link: rel="next"` from `path`; the ids in walk order.
    pub fn walk(&self, path: &str) -> Vec<i64> {
        petstore_testkit::walk(self, path)
    }

    /// The whole catalogue as its walks show it, in pages of 100; pets from
    /// id `fetch_from` on also fetched one by one:
    /// `petstore_testkit::assert_consistent`.
    pub fn assert_consistent(&self, expected: &BTreeSet<i64>, fetch_from: i64) {
        petstore_testkit::assert_consistent(self, expected, 100, fetch_from, "over HTTP");
    }
}

impl Reader for Api {
    fn read(&self, target: &str) -> (u16, Value, Option<String>) {
        let r = self.get(target);
        let body = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let next = r.header("link").and_then(petstore_testkit::next_of);
        (r.status, body, next)
    }
}

impl Api {
    /// Every pet that getPet returns, among ids `1..=max_id`, is in the
    /// unfiltered walk and in the walk of its own status, and those walks
    /// list nothing else: whatever its create answered, a pet is visible
    /// everywhere or nowhere. The visible pets, by id.
    pub fn assert_visible_pets_are_listed(&self, max_id: i64) -> BTreeMap<i64, Value> {
        let mut visible = BTreeMap::new();
        for id in 1..=max_id {
            let r = self.get(&format!("/v1/pets/{id}"));
            match r.status {
                200 => {
                    visible.insert(id, r.json());
                }
                404 => r.assert_error(404, "not_found"),
                other => panic!("getPet {id}: {other} {}", r.body),
            }
        }
        let listed: BTreeMap<i64, Value> = self
            .walk_pets("/v1/pets?limit=100")
            .into_iter()
            .map(|p| (pet_id(&p), p))
            .collect();
        assert_eq!(
            listed, visible,
            "the unfiltered walk lists the fetchable pets"
        );
        for status in STATUSES {
            let walked: BTreeSet<i64> = self
                .walk(&format!("/v1/pets?limit=100&status={status}"))
                .into_iter()
                .collect();
            let of_status: BTreeSet<i64> = visible
                .iter()
                .filter(|(_, p)| p["status"] == status)
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(walked, of_status, "the walk of {status}");
        }
        visible
    }
}

/// A createPet body (category 2).
pub fn pet_body(name: &str, status: &str) -> String {
    format!(r#"{{"name":"{name}","categoryId":2,"status":"{status}"}}"#)
}

/// The ids the clients created, each at most once: fails on an id handed
/// out twice.
pub fn distinct_ids(ids: Vec<i64>) -> BTreeSet<i64> {
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len(), "duplicate ids");
    distinct
}

/// The suites' one fan-out: `total` jobs on `clients` threads that start
/// together (a barrier), job `i` on thread `i % clients`, each thread's in
/// order; the results in job order. A job that panics fails the test.
pub fn fan_out<T: Send + 'static>(
    clients: usize,
    total: usize,
    job: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let job = std::sync::Arc::new(job);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            let (job, barrier) = (job.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                (t..total)
                    .step_by(clients)
                    .map(|i| (i, job(i)))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut done: Vec<(usize, T)> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a client thread"))
        .collect();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, result)| result).collect()
}
