//! A client that keeps a copy of the catalogue in sync (it follows the
//! list to its end, then requests that last page again, as
//! docs/decisions.md tells it to) is shown every pet exactly once, while
//! creates run: on the counters layout a create's id and position are
//! taken before its commit, so the follower meets them half-done and
//! carries them; on the lanes layout a round is a pet the moment its head
//! moves. Each follower polls inside creates, at every step of them.

mod common;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use common::{api, Setup, BACKENDS};
use petstore_testkit::{Follower, Op};

const LISTS: [&str; 2] = ["/v1/pets?limit=7", "/v1/pets?limit=5&status=sold"];

/// The steps of a create a follower polls inside.
fn inside(setup: Setup) -> Vec<fn(&Op) -> bool> {
    if setup.lanes() {
        vec![
            |op| matches!(op, Op::CasBegin(k) if k.starts_with("lane:")),
            |op| matches!(op, Op::Swap(k) if k.starts_with("lane:")),
        ]
    } else {
        vec![
            |op| matches!(op, Op::Increment(k) if k.starts_with("ctr:") && k != "ctr:id"),
            |op| matches!(op, Op::SetMany(_) | Op::Set(_)),
        ]
    }
}

#[test]
fn a_follower_polling_inside_creates_is_shown_every_pet_once() {
    for setup in BACKENDS {
        let api = api(setup);
        let followers: Vec<Rc<RefCell<Follower>>> = LISTS
            .iter()
            .map(|l| Rc::new(RefCell::new(Follower::new(l))))
            .collect();
        for (i, follower) in followers.iter().enumerate() {
            follower.borrow_mut().poll(&api);
            assert!(follower.borrow().seen.is_empty(), "{i}");
        }
        let (mut all, mut sold) = (BTreeSet::new(), BTreeSet::new());
        for n in 0..120usize {
            // Each follower polls inside one step of this create, in turn,
            // and a create of another client runs inside it too (so ids
            // commit out of their order).
            for (i, follower) in followers.iter().enumerate() {
                let when = inside(setup)[(n + i) % 2];
                let (f, reader) = (follower.clone(), api.twin());
                api.store
                    .before(when, move |_| f.borrow_mut().poll(&reader));
            }
            if n % 3 == 0 {
                let other = api.twin();
                let made = Rc::new(RefCell::new(None));
                let slot = made.clone();
                api.store.before(inside(setup)[1], move |_| {
                    *slot.borrow_mut() = Some(other.create("other", "sold"))
                });
                let id = api.create("p", ["available", "sold"][n % 2]);
                all.insert(id);
                if n % 2 == 1 {
                    sold.insert(id);
                }
                let other = made.borrow_mut().take();
                if let Some(other) = other {
                    all.insert(other);
                    sold.insert(other);
                }
            } else {
                let id = api.create("p", ["available", "sold"][n % 2]);
                all.insert(id);
                if n % 2 == 1 {
                    sold.insert(id);
                }
            }
            api.store.clear_hooks();
        }
        for follower in &followers {
            follower.borrow_mut().poll(&api);
        }
        let context = format!("{setup:?}");
        followers[0]
            .borrow()
            .assert_saw_exactly(&all, &format!("{context}, all"));
        followers[1]
            .borrow()
            .assert_saw_exactly(&sold, &format!("{context}, sold"));
    }
}

#[test]
fn a_walk_past_more_stopped_creates_than_a_cursor_carries_ends_once_they_are_given_up() {
    for setup in BACKENDS.into_iter().filter(|s| !s.lanes()) {
        let api = api(setup);
        let ids: Vec<i64> = (0..120).map(|_| api.create("p", "sold")).collect();
        // 65 creates that took their id and stored nothing (stopped).
        for id in &ids[20..85] {
            api.store.remove(&format!("pet:{id}"));
        }
        let kept: BTreeSet<i64> = ids[..20].iter().chain(&ids[85..]).copied().collect();
        for list in ["/v1/pets?limit=100", "/v1/pets?limit=100&status=sold"] {
            let context = format!("{setup:?} {list}");
            // A client following `next`; where a page makes no progress,
            // it asks again 30 s later.
            let (mut url, mut seen, mut requests) = (list.to_string(), Vec::new(), 0);
            loop {
                let r = api.get(&url);
                assert_eq!(r.status.as_u16(), 200, "{context}");
                seen.extend(common::page_ids(&r));
                requests += 1;
                assert!(
                    requests < 40,
                    "{context}: the walk never ends ({} shown)",
                    seen.len()
                );
                match r.header("link").and_then(petstore_testkit::next_of) {
                    Some(next) if next == url => api.advance_ms(30_000),
                    Some(next) => url = next,
                    None => break,
                }
            }
            let distinct: BTreeSet<i64> = seen.iter().copied().collect();
            assert_eq!(
                (distinct.len(), &distinct),
                (seen.len(), &kept),
                "{context}"
            );
            assert_eq!(api.walk(list).into_iter().collect::<BTreeSet<_>>(), kept);
        }
    }
}
