//! A build on a store it does not serve, as a client and an operator see it:
//! every answer that is not the refusal is reported, not only the first.

use std::collections::BTreeMap;

use petstore_e2e::client::{pet_body, Reply};
use petstore_e2e::spin::SpinUp;
use petstore_e2e::stores::Store;
use serde_json::Value;

use super::made::{Build, Left, LISTS};
use crate::edge_build::SETTLE;

const ID: &str = "x-request-id";

/// A request that must answer 503 `misconfigured`: what it was, its
/// request id (its log line's), its answer.
struct Asked {
    what: String,
    id: String,
    reply: Reply,
}

fn ask(what: String, id: &str, reply: Reply) -> Asked {
    let id = id.to_string();
    Asked { what, id, reply }
}

/// `serving` on the store `left` describes, which `owner` serves (None: no
/// build does): lists (first pages, and the other build's next pages),
/// the probe, getPet of an absent id and creates answer 503
/// `misconfigured`, whose log line names what `ctr:id` holds; getPet of a
/// stored pet may serve it as its build did. Nothing is written. Then the
/// store, cleared, is served by the same process. What was wrong; what
/// was seen is printed, in one piece (the tests run side by side).
pub fn refused_by(serving: Build, store: &Store, left: &Left, owner: Option<Build>) -> Vec<String> {
    let before = store.snapshot();
    let holds = shown(before.get("ctr:id").expect("ctr:id stored"));
    let case = format!(
        "{serving:?} build on {:?}, ctr:id {holds:?}:",
        store.backend
    );
    let spin = serving.start(store);
    let mut seen = vec![case.clone()];
    let (mut asked, mut wrong) = reads(&spin, left, &mut seen);
    // Creates last: a create is what would write, or wedge Spin's store.
    let body = pet_body("Foreign", "sold");
    let r = spin.api.post_with(&body, &[(ID, "create")]);
    asked.push(ask("POST /v1/pets".into(), "create", r));
    let keyed = [(ID, "create-keyed"), ("idempotency-key", "foreign-key")];
    let r = spin.api.post_with(&body, &keyed);
    asked.push(ask("POST /v1/pets, keyed".into(), "create-keyed", r));
    wrong.extend(causes(&spin, &asked, &holds, owner, &mut seen));
    wrong.extend(changes(&before, &store.snapshot()));
    if let Err(why) = serves_its_own_kind(&spin, store, serving) {
        wrong.push(format!(
            "the store cleared, the same process answered {why}"
        ));
    }
    // An empty 500 is Spin's host failing, not the component: its panics.
    let output = spin.output();
    let panics = output.lines().filter(|l| l.contains("panicked"));
    seen.extend(panics.take(2).map(|l| format!("  spin: {l}")));
    println!("{}", seen.join("\n"));
    if !wrong.is_empty() {
        wrong.insert(0, case);
    }
    wrong
}

pub fn assert_refused(wrong: Vec<String>) {
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The reads: those that must be refused, and what getPet of a stored pet
/// answered wrong (neither the pet as stored nor the refusal).
fn reads(spin: &SpinUp, left: &Left, seen: &mut Vec<String>) -> (Vec<Asked>, Vec<String>) {
    let api = &spin.api;
    let mut asked = Vec::new();
    let pages = LISTS.iter().map(|l| l.to_string());
    for (n, target) in pages.chain(left.pages.iter().cloned()).enumerate() {
        let id = format!("page-{n}");
        let r = api.get_with(&target, &[(ID, &id)]);
        asked.push(ask(format!("GET {target}"), &id, r));
    }
    asked.push(ask("GET /v1/health".into(), "probe", spin.probe("probe")));
    // A miss cannot tell an absent pet from one this build cannot read.
    let absent = (7_777_777..).find(|id| !left.pets.contains_key(id));
    let target = format!("/v1/pets/{}", absent.unwrap());
    let r = api.get_with(&target, &[(ID, "get-absent")]);
    asked.push(ask(format!("GET {target}"), "get-absent", r));
    let (mut wrong, mut served, mut refused) = (Vec::new(), 0, 0);
    for (n, (id, json)) in left.pets.iter().enumerate() {
        let (target, request) = (format!("/v1/pets/{id}"), format!("get-{n}"));
        let r = api.get_with(&target, &[(ID, &request)]);
        match r.status {
            200 if r.body == *json => served += 1,
            503 => {
                refused += 1;
                asked.push(ask(format!("GET {target}"), &request, r));
            }
            status => wrong.push(format!("GET {target}: {status} {:?}, not {json}", r.body)),
        }
    }
    let stored = left.pets.len();
    seen.push(format!(
        "  getPet of the {stored} pets stored: {served} served as stored, {refused} 503"
    ));
    (asked, wrong)
}

/// Each refusal is the contract's Error body, 503 `misconfigured`, and
/// its log line's cause names what `ctr:id` holds (and the build that
/// serves such a store); each cause is seen once.
fn causes(
    spin: &SpinUp,
    asked: &[Asked],
    holds: &str,
    owner: Option<Build>,
    seen: &mut Vec<String>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut printed = Vec::new();
    for Asked { what, id, reply } in asked {
        if !misconfigured(reply) {
            wrong.push(format!("{what}: {} {:?}", reply.status, reply.body));
            continue;
        }
        let cause = spin.log_line(id)["cause"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let names = |part: &str| cause.contains(part);
        // A SQLite counter is 8 bytes: its number, or that it is a counter.
        let counter = holds.bytes().all(|b| b.is_ascii_digit()) && names("counter");
        if !(names(holds) || counter) {
            wrong.push(format!(
                "{what}: its cause does not name {holds:?}: {cause}"
            ));
        }
        if let Some(owner) = owner.map(Build::named).filter(|o| !names(o)) {
            wrong.push(format!(
                "{what}: its cause does not name the {owner}: {cause}"
            ));
        }
        if !printed.contains(&cause) {
            seen.push(format!("  cause ({what}): {cause}"));
            printed.push(cause);
        }
    }
    wrong
}

/// How a cause shows `ctr:id`: its text (a lanes mark by its name alone:
/// its numbers are the store's), or a SQLite counter as its number.
fn shown(word: &[u8]) -> String {
    match std::str::from_utf8(word) {
        Ok(text) if text.starts_with("petstore-lanes ") => "petstore-lanes".into(),
        Ok(text) if text.bytes().all(|b| b.is_ascii_graphic() || b == b' ') => text.into(),
        _ => match <[u8; 8]>::try_from(word) {
            Ok(bytes) => i64::from_le_bytes(bytes).to_string(),
            Err(_) => String::from_utf8_lossy(word).into_owned(),
        },
    }
}

/// The contract's Error body, 503 `misconfigured` (`Reply::assert_error`'s
/// checks, as a question).
fn misconfigured(r: &Reply) -> bool {
    let body: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    r.status == 503
        && r.header("content-type") == Some("application/json")
        && body["code"] == "misconfigured"
        && body["status"] == 503
        && body["message"].as_str().is_some_and(|m| !m.is_empty())
        && body.as_object().map(|o| o.len()) == Some(3)
}

/// The keys written, changed or removed between two snapshots.
fn changes(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let mut changed = Vec::new();
    for (key, value) in after {
        match before.get(key) {
            None => changed.push(format!("written: {key} = {:?}", text(value))),
            Some(was) if was != value => changed.push(format!(
                "changed: {key}: {:?} → {:?}",
                text(was),
                text(value)
            )),
            Some(_) => {}
        }
    }
    let gone = before.keys().filter(|k| !after.contains_key(*k));
    changed.extend(gone.map(|key| format!("removed: {key}")));
    changed
}

/// Cleared from outside while `spin` runs, the store is served at once: a
/// create, the list showing it, getPet, the probe. A process wedged by an
/// earlier request (Spin's SQLite mutex poisoned by a panic) fails here.
fn serves_its_own_kind(spin: &SpinUp, store: &Store, build: Build) -> Result<(), String> {
    store.clear();
    let api = &spin.api;
    let created = api.post(&pet_body("Home", "sold"));
    if created.status != 201 {
        return Err(format!(
            "POST /v1/pets: {} {:?}",
            created.status, created.body
        ));
    }
    let id = created.created_id();
    if build == Build::Edge {
        std::thread::sleep(SETTLE);
    }
    let page = api.get("/v1/pets");
    if page.status != 200 || page.ids() != [id] {
        return Err(format!(
            "GET /v1/pets: {} {:?}, not [{id}]",
            page.status, page.body
        ));
    }
    let pet = api.get(&format!("/v1/pets/{id}"));
    if (pet.status, &pet.body) != (200, &created.body) {
        return Err(format!("GET /v1/pets/{id}: {} {:?}", pet.status, pet.body));
    }
    let health = spin.probe("probe-cleared");
    match health.status {
        200 => Ok(()),
        status => Err(format!("GET /v1/health: {status} {:?}", health.body)),
    }
}
