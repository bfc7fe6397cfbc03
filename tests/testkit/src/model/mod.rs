//! The model of what the service promises: given a history of concurrent
//! requests (when each was sent, when its answer came, what it was), which
//! answers `docs/decisions.md` allows. It knows nothing of the store or the
//! code: the explorer's schedules and real `spin up` runs are judged alike.
//!
//! A pet is *committed* from the moment its create was acknowledged (a 201)
//! or any answer showed it, whichever came first. Every rule is in
//! [`rules`], named after its sentence of decisions.md.

mod history;
mod rules;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

pub use history::{Answer, Call, Event, History};
pub use rules::Rule;

/// How far ids may fall below ids committed before a create was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdOrder {
    /// One counter: above every one of them.
    Above,
    /// Lanes: at most this far below the highest of them (127; 63 with 16).
    Within(i64),
    /// The replicated layout (the edge build): drawn at random, no order.
    Random,
}

/// What a run may expect of the service it ran against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Promise {
    pub ids: IdOrder,
    /// The run stored unreadable data on purpose: a 500 is its answer.
    pub corrupt: bool,
    /// The store may fail (faults injected, a network cut): a 503
    /// `store_unavailable` is an answer; without, it is a bug.
    pub faults: bool,
    /// The replicated layout (the edge build): lists show a pet only once it
    /// settled (a `settle` event after its commit: the clock moved past
    /// the horizon), in creation order, not by id; a getPet through another
    /// replica than the create's finds a pet only once it settled; a keyed
    /// create promises one pet only to attempts that reached each other's
    /// records ([`Model::within_reach`]).
    pub settles: bool,
}

/// An answer the promises do not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} (\"{}\"): {}",
            self.rule,
            self.rule.sentence(),
            self.detail
        )
    }
}

/// Every violation of the promises in `history`.
pub fn check(history: &History, promise: &Promise) -> Vec<Violation> {
    let mut model = Model::new(history, promise);
    model.pets();
    model.creates();
    model.get_pets();
    model.walks();
    model.health();
    model.errors();
    model.violations
}

/// A pet as the history showed it.
struct Shown {
    pet: Value,
    /// When it was committed: its 201, or the first answer that showed it.
    committed: u64,
}

struct Model<'h> {
    events: &'h [Event],
    promise: &'h Promise,
    /// The creates of each name (all the retries of one keyed create).
    by_name: BTreeMap<String, Vec<usize>>,
    pets: BTreeMap<i64, Shown>,
    /// The replicated layout: pets whose create's write landed late (its
    /// 503 names them), and when that answer came.
    late: BTreeMap<i64, u64>,
    violations: Vec<Violation>,
}

/// Words of the edge build's 503 for a create whose write landed past its
/// window (`ApiError::CreateLandedLate`), before the pet's id.
const LANDED_LATE: &str = "to store pet ";
/// Words of the edge build's 503 for a keyed retry that found its key's
/// record but not yet its pet (`ApiError::KeyedPetNotFound`).
const KEYED_NOT_FOUND: &str = "Idempotency-Key's pet is not found yet";

impl<'h> Model<'h> {
    fn new(history: &'h History, promise: &'h Promise) -> Self {
        let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (at, event) in history.events.iter().enumerate() {
            if let Call::Create { body, .. } = &event.call {
                by_name.entry(name_of(body)).or_default().push(at);
            }
        }
        let late = history
            .events
            .iter()
            .filter(|_| promise.settles)
            .filter_map(|e| Some((landed_late(&e.answer)?, e.end)))
            .collect();
        Model {
            events: &history.events,
            promise,
            by_name,
            pets: BTreeMap::new(),
            late,
            violations: Vec::new(),
        }
    }

    fn violation(&mut self, rule: Rule, detail: String) {
        self.violations.push(Violation { rule, detail });
    }

    /// Every pet any answer showed: one value per id, asked for by a create
    /// sent before the answer ended, the value that create stores.
    fn pets(&mut self) {
        for (at, event) in self.events.iter().enumerate() {
            for pet in event.answer.pets() {
                let Some(id) = pet["id"].as_i64().filter(|id| *id >= 1) else {
                    self.violation(
                        Rule::IdsNeverReusedOrDuplicated,
                        format!("event {at} shows a pet without a positive id: {pet}"),
                    );
                    continue;
                };
                match self.pets.get_mut(&id) {
                    Some(shown) if shown.pet != *pet => {
                        let detail =
                            format!("pet {id} was {} and then {pet} (event {at})", shown.pet);
                        let rule = if name_of(&shown.pet) == name_of(pet) {
                            Rule::PetsNeverChange
                        } else {
                            Rule::IdsNeverReusedOrDuplicated
                        };
                        self.violation(rule, detail);
                    }
                    Some(shown) => shown.committed = shown.committed.min(event.end),
                    None => {
                        let shown = Shown {
                            pet: pet.clone(),
                            committed: event.end,
                        };
                        self.pets.insert(id, shown);
                    }
                }
                self.stored_value(at, pet);
            }
        }
    }

    /// `pet` (shown by event `at`) is what a create of its name asked for.
    fn stored_value(&mut self, at: usize, pet: &Value) {
        let name = name_of(pet);
        let asked = self.by_name.get(&name).and_then(|creates| {
            creates
                .iter()
                .find(|c| self.events[**c].start <= self.events[at].end)
        });
        let expected = asked.map(|c| match &self.events[*c].call {
            Call::Create { body, .. } => stored(body, pet["id"].as_i64().unwrap_or(0)),
            _ => Value::Null,
        });
        if expected.as_ref() != Some(pet) {
            self.violation(
                Rule::ResponsesShowTheStoredValue,
                format!("event {at} shows {pet}; a create asked for {expected:?}"),
            );
        }
    }

    /// Each create (each name: a keyed create's retries share it) made at
    /// most one pet; one that said nothing changed made none; keyed
    /// creates answer the same pet every time; ids keep their order.
    fn creates(&mut self) {
        let mut ids_of: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        for (id, shown) in &self.pets {
            ids_of.entry(name_of(&shown.pet)).or_default().insert(*id);
        }
        let groups: Vec<(String, Vec<usize>)> = self
            .by_name
            .iter()
            .map(|(n, c)| (n.clone(), c.clone()))
            .collect();
        for (name, creates) in groups {
            let mut ids = ids_of.remove(&name).unwrap_or_default();
            let keyed = creates.iter().any(|c| match &self.events[*c].call {
                Call::Create { key, .. } => key.is_some(),
                _ => false,
            });
            if keyed && self.promise.settles {
                self.orphans(&creates, &mut ids);
            }
            let relaxed = keyed && self.promise.settles && !self.within_reach(&creates);
            if ids.len() > 1 && !relaxed {
                let rule = match keyed {
                    true => Rule::KeyedCreateExactlyOnce,
                    false => Rule::IdsNeverReusedOrDuplicated,
                };
                self.violation(rule, format!("the create of {name} made pets {ids:?}"));
            }
            let created: BTreeSet<String> = creates
                .iter()
                .filter_map(|c| match &self.events[*c].answer {
                    Answer::Created { pet, .. } => Some(pet.to_string()),
                    _ => None,
                })
                .collect();
            if created.len() > 1 && !relaxed {
                self.violation(
                    Rule::KeyedCreateExactlyOnce,
                    format!("the creates of {name} answered different pets: {created:?}"),
                );
            }
            if keyed && relaxed {
                self.converged(&name, &creates);
            }
            let nothing = creates
                .iter()
                .all(|c| changed_nothing(&self.events[*c].answer));
            if nothing && !ids.is_empty() {
                self.violation(
                    Rule::NothingWasChanged,
                    format!(
                        "every create of {name} said nothing was changed, yet pets {ids:?} exist"
                    ),
                );
            }
            if let Some(id) = ids.first() {
                let sent = creates.iter().map(|c| self.events[*c].start).min();
                self.order(*id, sent.unwrap_or(0), &name);
            }
        }
    }

    /// The id of a create sent at `sent` against the ids committed before.
    fn order(&mut self, id: i64, sent: u64, name: &str) {
        let highest = self
            .pets
            .iter()
            .filter(|(_, shown)| shown.committed < sent)
            .map(|(id, _)| *id)
            .max();
        let Some(highest) = highest else { return };
        let (ok, rule) = match self.promise.ids {
            IdOrder::Above => (id > highest, Rule::IdAboveEveryAcknowledged),
            IdOrder::Within(below) => (id >= highest - below, Rule::IdAtMost127Below),
            IdOrder::Random => return,
        };
        if !ok {
            self.violation(
                rule,
                format!("{name} got id {id}; id {highest} was committed before it was sent"),
            );
        }
    }

    /// Whether each attempt of a keyed create reached the records of those
    /// before it: none ran at the same time as another (without atomics
    /// there is no lease), and each was served by the replica of every
    /// earlier one, or sent after a settle that followed it. Only then is
    /// a keyed create exactly once on the replicated layout.
    fn within_reach(&self, creates: &[usize]) -> bool {
        creates.iter().all(|a| {
            creates.iter().all(|b| {
                let (ea, eb) = (&self.events[*a], &self.events[*b]);
                let (first, then) = if ea.start <= eb.start {
                    (ea, eb)
                } else {
                    (eb, ea)
                };
                a == b
                    || (first.end < then.start
                        && (first.replica == then.replica
                            || self.settled_between(first.end, then.start)))
            })
        })
    }

    /// Whether a `settle` came between `from` and `to`.
    fn settled_between(&self, from: u64, to: u64) -> bool {
        self.events
            .iter()
            .any(|e| e.call == Call::Settle && from < e.start && e.start < to)
    }

    /// A keyed create whose attempts did not reach each other's records:
    /// once they replicated, the attempts sent after a settle that followed
    /// every earlier one, if they reach each other, answer one pet.
    fn converged(&mut self, name: &str, creates: &[usize]) {
        let mut attempts = creates.to_vec();
        attempts.sort_by_key(|c| self.events[*c].start);
        let settled = (1..attempts.len()).find(|k| {
            let before = attempts[..*k].iter().map(|c| self.events[*c].end).max();
            before.is_some_and(|end| self.settled_between(end, self.events[attempts[*k]].start))
        });
        let Some(k) = settled else { return };
        let after = &attempts[k..];
        if !self.within_reach(after) {
            return;
        }
        let answered: BTreeSet<String> = after
            .iter()
            .filter_map(|c| match &self.events[*c].answer {
                Answer::Created { pet, .. } => Some(pet.to_string()),
                _ => None,
            })
            .collect();
        if answered.len() > 1 {
            self.violation(
                Rule::KeyedReplaysConverge,
                format!(
                    "once settled, the creates of {name} answered different pets: {answered:?}"
                ),
            );
        }
    }

    /// When a pet committed at `committed` may first be listed: at once,
    /// or (the replicated layout) at the first `settle` after it; `None`:
    /// not within this history.
    fn listable(&self, committed: u64) -> Option<u64> {
        if !self.promise.settles {
            return Some(committed);
        }
        self.events
            .iter()
            .filter(|e| e.call == Call::Settle && e.start > committed)
            .map(|e| e.start)
            .min()
    }

    /// When pet `id` may first be listed: as [`Model::listable`], from its
    /// commit or, if its write landed late, from the 503 that said so.
    fn listable_pet(&self, id: i64, shown: &Shown) -> Option<u64> {
        let landed = self
            .late
            .get(&id)
            .map_or(shown.committed, |at| (*at).max(shown.committed));
        self.listable(landed)
    }

    /// A getPet sent once its pet was committed found it.
    fn get_pets(&mut self) {
        for (at, event) in self.events.iter().enumerate() {
            let Call::GetPet { id } = event.call else {
                continue;
            };
            let Some(shown) = self.pets.get(&id) else {
                continue;
            };
            let found = matches!(&event.answer, Answer::Found { .. });
            let failed = matches!(&event.answer, Answer::Error { status, .. } if *status >= 500)
                || event.answer == Answer::Lost;
            let reached = self.reached(id, shown.committed, event);
            if shown.committed < event.start && reached && !found && !failed {
                self.violation(
                    Rule::AcknowledgedPetIsFound,
                    format!(
                        "getPet {id} (event {at}, sent at {}) answered {:?}; pet {id} was committed at {}",
                        event.start, event.answer, shown.committed
                    ),
                );
            }
        }
    }

    /// Whether a getPet, `event`, reaches pet `id` (committed at
    /// `committed`): always on one store; on replicas, through the replica
    /// whose create of it answered 201 before it was sent, or once the pet
    /// settled (a record may travel apart from its pet).
    fn reached(&self, id: i64, committed: u64, event: &Event) -> bool {
        if event.replica.is_none() || !self.promise.settles {
            return true;
        }
        let created_there = self.events.iter().any(|e| {
            e.replica == event.replica
                && e.end < event.start
                && matches!(&e.answer, Answer::Created { pet, replayed: false } if pet["id"] == id)
        });
        created_there || self.listable(committed).is_some_and(|at| at < event.start)
    }

    /// Each walk: the pages of one `walk` number, in the order sent.
    fn walks(&mut self) {
        let mut walks: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (at, event) in self.events.iter().enumerate() {
            if let Call::Page { walk, .. } = event.call {
                walks.entry(walk).or_default().push(at);
            }
        }
        for (walk, mut pages) in walks {
            pages.sort_by_key(|at| self.events[*at].start);
            self.walk(walk, &pages);
        }
    }

    fn walk(&mut self, walk: u64, pages: &[usize]) {
        let Call::Page { status, limit, .. } = &self.events[pages[0]].call else {
            return;
        };
        let (status, limit) = (status.clone(), *limit);
        let began = self.events[pages[0]].start;
        let mut listed: Vec<(i64, usize)> = Vec::new();
        for (n, at) in pages.iter().enumerate() {
            let event = &self.events[*at];
            let Answer::Page { pets, next } = &event.answer else {
                continue;
            };
            let ids: Vec<i64> = pets.iter().filter_map(|p| p["id"].as_i64()).collect();
            if !self.promise.settles && ids.windows(2).any(|w| w[0] >= w[1]) {
                self.violation(
                    Rule::AscendingWithinEveryPage,
                    format!("walk {walk}, page {n}: {ids:?}"),
                );
            }
            if let Some(status) = &status {
                for pet in pets.iter().filter(|p| p["status"] != **status) {
                    self.violation(
                        Rule::StatusPageHoldsOnlyThatStatus,
                        format!("walk {walk} of {status}, page {n}: {pet}"),
                    );
                }
            }
            for id in &ids {
                if let Some((_, first)) = listed.iter().find(|(seen, _)| seen == id) {
                    let detail = format!("walk {walk}: pet {id} on page {first} and page {n}");
                    self.violation(Rule::NoPetTwiceInOneWalk, detail);
                }
                listed.push((*id, n));
            }
            if !pets.is_empty() && !next {
                self.violation(
                    Rule::WalkEndsAtAnEmptyPage,
                    format!("walk {walk}, page {n} lists {ids:?} and links no next page"),
                );
            }
            if *next && pets.len() < limit {
                self.full(walk, pages, n);
            }
            if !next {
                self.none_missed(walk, status.as_deref(), &listed, began, event.start, n);
            }
        }
    }

    /// Page `n` of `walk` held fewer than its limit: no pet a later page
    /// lists was committed before it was requested.
    fn full(&mut self, walk: u64, pages: &[usize], n: usize) {
        let requested = self.events[pages[n]].start;
        let later: Vec<i64> = pages[n + 1..]
            .iter()
            .flat_map(|at| self.events[*at].answer.pets())
            .filter_map(|p| p["id"].as_i64())
            .filter(|id| {
                let listable = self.pets.get(id).and_then(|s| self.listable_pet(*id, s));
                listable.is_some_and(|at| at < requested)
            })
            .collect();
        if !later.is_empty() {
            self.violation(
                Rule::FullPages,
                format!("walk {walk}, page {n} was not full, yet later pages list {later:?}, committed before it"),
            );
        }
    }

    /// At page `n`, which ends the walk (for now): every pet of its list
    /// committed before it was sent has been listed.
    fn none_missed(
        &mut self,
        walk: u64,
        status: Option<&str>,
        listed: &[(i64, usize)],
        began: u64,
        sent: u64,
        n: usize,
    ) {
        let missed: Vec<(i64, u64)> = self
            .pets
            .iter()
            .filter_map(|(id, s)| Some((id, s, self.listable_pet(*id, s)?)))
            .filter(|(_, _, listable)| *listable < sent)
            // A write that landed late is behind walks begun before.
            .filter(|(id, _, listable)| !self.late.contains_key(id) || *listable < began)
            .filter(|(_, s, _)| status.is_none_or(|st| s.pet["status"] == st))
            .filter(|(id, _, _)| !listed.iter().any(|(seen, _)| seen == *id))
            .map(|(id, _, listable)| (*id, listable))
            .collect();
        for (id, committed) in missed {
            let rule = match committed < began {
                true => Rule::WalkListsEveryCommittedPetOnce,
                false => Rule::NoneMissedWhenFollowing,
            };
            self.violation(
                rule,
                format!("walk {walk} ended (page {n}, sent at {sent}) without pet {id}, committed at {committed}"),
            );
        }
    }

    /// Health's answers: a layout only once a create ran, and never back
    /// (none, counters, lanes; a move waiting, settling, done); the lanes
    /// a store has never change.
    fn health(&mut self) {
        let answers: Vec<(u64, u64, (u8, u8), Value)> = self
            .events
            .iter()
            .filter_map(|e| match (&e.call, &e.answer) {
                (Call::Health, Answer::Health { body }) => {
                    Some((e.start, e.end, health_rank(body), body["lanes"].clone()))
                }
                _ => None,
            })
            .collect();
        for (start, _, rank, _) in &answers {
            let committed = self.pets.values().any(|s| s.committed < *start);
            if committed && rank.0 == 0 {
                self.violation(
                    Rule::HealthSaysWhatTheStoreHolds,
                    format!("health sent at {start} says no layout, yet pets were committed"),
                );
            }
        }
        for (a_start, a_end, a, a_lanes) in &answers {
            for (b_start, _, b, b_lanes) in &answers {
                let wrong = *a_end < *b_start
                    && (b < a || (!a_lanes.is_null() && !b_lanes.is_null() && a_lanes != b_lanes));
                if wrong {
                    self.violation(
                        Rule::HealthSaysWhatTheStoreHolds,
                        format!("health sent at {a_start} said {a:?} {a_lanes}, later at {b_start} {b:?} {b_lanes}"),
                    );
                }
            }
        }
    }

    /// A 500 answers only stored data that cannot be read; a 503
    /// `store_unavailable` only a store that failed.
    fn errors(&mut self) {
        let mut found = Vec::new();
        for (at, e) in self.events.iter().enumerate() {
            let Answer::Error { status, code, .. } = &e.answer else {
                continue;
            };
            if landed_late(&e.answer).is_some() && self.promise.settles {
                continue;
            }
            if self.promise.settles && self.keyed_not_found(at) {
                continue;
            }
            let rule = match (*status, code.as_str()) {
                (500, _) if !self.promise.corrupt => Rule::InternalErrorOnlyForUnreadableData,
                (503, "store_unavailable") if !self.promise.faults => {
                    Rule::StoreUnavailableOnlyWhenItFailed
                }
                _ => continue,
            };
            found.push((rule, format!("event {at}: {e}")));
        }
        for (rule, detail) in found {
            self.violation(rule, detail);
        }
    }
}

impl Model<'_> {
    /// On the replicated layout, a keyed attempt that failed (no answer, or
    /// a 503) may have stored its pet without its key's record (a
    /// `set-many` applied in part, no atomics): mended, that pet is listed
    /// as any failed create's may be, and a retry with the key makes the
    /// key's pet (docs/replicated-layout.md, "Keyed creates"). Such a pet,
    /// which no 201 named, is not the key's second pet.
    fn orphans(&self, creates: &[usize], ids: &mut BTreeSet<i64>) {
        let failed = creates.iter().any(|c| {
            matches!(
                self.events[*c].answer,
                Answer::Lost | Answer::Error { status: 503, .. }
            )
        });
        if !failed {
            return;
        }
        let answered: BTreeSet<i64> = creates
            .iter()
            .filter_map(|c| match &self.events[*c].answer {
                Answer::Created { pet, .. } => pet["id"].as_i64(),
                _ => None,
            })
            .collect();
        ids.retain(|id| answered.contains(id));
    }

    /// Event `at` is a keyed create answered "its pet is not found yet"
    /// through a replica that another create with its key, served by
    /// another replica, may not have reached: no settle between them. (On
    /// one store, or once settled, the record and its pet are found alike.)
    fn keyed_not_found(&self, at: usize) -> bool {
        let e = &self.events[at];
        let (Call::Create { key: Some(key), .. }, Answer::Error { message, .. }) =
            (&e.call, &e.answer)
        else {
            return false;
        };
        let apart = |o: &Event| {
            matches!(&o.call, Call::Create { key: Some(k), .. } if k == key)
                && e.replica.is_some()
                && o.replica != e.replica
                && o.start < e.end
                && !self.settled_between(o.end, e.start)
        };
        message.contains(KEYED_NOT_FOUND) && self.events.iter().any(apart)
    }
}

/// The pet a 503 says was stored too late for walks already past its
/// place (the edge build's store was slower than the create's window).
fn landed_late(answer: &Answer) -> Option<i64> {
    let Answer::Error {
        status: 503,
        message,
        ..
    } = answer
    else {
        return None;
    };
    landed_late_pet(message)
}

/// The pet the edge build's "landed late" 503 message names (`… to store
/// pet <id>, …`), if `message` is one.
pub fn landed_late_pet(message: &str) -> Option<i64> {
    let (_, rest) = message.split_once(LANDED_LATE)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The `name` a create asked for, which names the create in a history.
fn name_of(body: &Value) -> String {
    body["name"].as_str().unwrap_or_default().to_string()
}

/// The pet a create of `body` stores with `id`.
fn stored(body: &Value, id: i64) -> Value {
    json!({
        "id": id,
        "name": body["name"],
        "categoryId": body["categoryId"],
        "status": body.get("status").cloned().unwrap_or(json!("available")),
    })
}

/// Whether an answer says the create changed nothing: a refusal (400, 401,
/// 409, 413, 415, 422), or a 503 that says so.
fn changed_nothing(answer: &Answer) -> bool {
    match answer {
        Answer::Error {
            status,
            code,
            message,
        } => {
            matches!(status, 400 | 401 | 409 | 413 | 415 | 422)
                || (*status == 503 && message.contains("nothing was changed"))
                || (*status == 503 && code == "misconfigured")
        }
        _ => false,
    }
}

/// Where a health answer stands: its layout (none, counters, lanes), and
/// on lanes a move's state (none, settling, done). (A counters store's
/// move "waiting for the next create" is the answering instance's
/// `catalogue_layout`, not the store's.)
fn health_rank(body: &Value) -> (u8, u8) {
    let layout = match body["layout"].as_str() {
        Some("counters") => 1,
        Some("lanes") => 2,
        Some("replicated") => 3,
        _ => 0,
    };
    let moving = match body["move"]["state"].as_str() {
        Some("settling") if layout == 2 => 1,
        Some("done") if layout == 2 => 2,
        _ => 0,
    };
    (layout, moving)
}

#[cfg(test)]
mod tests;
