//! The lanes layout (`catalogue_layout = lanes`, DynamoDB): ids from 32
//! lanes (16 on a store 1.3.0 claimed), each a log whose next round a create claims by compare-and-swap
//! of its head. Creates one at a time get 1, 2, 3, …; racing ones spread
//! and every walk (unfiltered, by status) stays exact; a failure or a lost
//! reply at every call of a create; status pages full at any share.

mod common;

use std::collections::BTreeSet;

use common::{assert_error, json, page_ids, Api};
use petstore_testkit::{next_of, Backend, Fault, MemStore, Op};

/// An instance configured for lanes over `store`.
fn lanes_on(store: &MemStore) -> Api {
    let mut api = Api::on(store.clone());
    api.set_variable("key_value_backend", "aws_dynamo");
    api.set_variable("catalogue_layout", "lanes");
    api
}

fn lanes() -> Api {
    lanes_on(&MemStore::new(Backend::Dynamo))
}

const STATUSES: [&str; 3] = ["available", "pending", "sold"];

#[test]
fn creates_one_at_a_time_get_1_2_3_and_each_is_four_calls() {
    let api = lanes();
    let ids: Vec<i64> = (0..80).map(|i| api.create("p", STATUSES[i % 3])).collect();
    assert_eq!(ids, (1..=80).collect::<Vec<_>>());
    let mark = String::from_utf8(api.store.peek("ctr:id").unwrap()).unwrap();
    assert_eq!(mark, "petstore-lanes 2 1 0 0");
    let keys = api.store.keys();
    assert!(!keys
        .iter()
        .any(|k| k.starts_with("slot:") || k.starts_with("ctr:s")));
    // 80 creates over 32 lanes: 3 rounds in lanes 0-15, 2 in the rest; each
    // lane's last pet is in its head, the others stored.
    assert!(api.store.peek("pet:1").is_some() && api.store.peek("pet:80").is_none());
    let head = String::from_utf8(api.store.peek("lane:15").unwrap()).unwrap();
    assert!(head.starts_with("petstore-lane 1 3 "), "{head}");
    api.store.reset_counts();
    assert_eq!(api.create("p", "sold"), 81);
    let ops = api.store.ops();
    assert!(
        matches!(&ops[..], [Op::GetMany(_), Op::SetMany(stored), Op::CasBegin(h), Op::Swap(s)]
            if h == "lane:16" && s == "lane:16" && stored.contains(&"pet:49".to_string())),
        "{ops:?}"
    );
    api.assert_consistent(&(1..=81).collect(), "lanes");
}

#[test]
fn getpet_finds_a_pet_its_lane_holds_in_its_head() {
    let api = lanes();
    let id = api.create("Rex", "sold");
    assert!(
        api.store.peek(&format!("pet:{id}")).is_none(),
        "in the head"
    );
    let r = api.get(&format!("/v1/pets/{id}"));
    assert_eq!(json(&r)["name"], "Rex");
    assert_error(&api.get("/v1/pets/2"), 404, "not_found");
    assert_error(&api.get("/v1/pets/17"), 404, "not_found");
}

#[test]
fn racing_creates_from_two_instances_spread_and_walks_stay_exact() {
    let store = MemStore::new(Backend::Dynamo);
    let a = lanes_on(&store);
    let b = lanes_on(&store);
    let mut expected = BTreeSet::new();
    for i in 0..60u8 {
        a.random.set([i; 16]);
        b.random.set([i.wrapping_mul(7).wrapping_add(3); 16]);
        // b creates between a's read of the heads and its claim.
        let racer = lanes_on(&store);
        racer.random.set([i.wrapping_add(101); 16]);
        let raced = std::rc::Rc::new(std::cell::Cell::new(0));
        let seen = raced.clone();
        store.before(
            |op| matches!(op, Op::CasBegin(k) if k.starts_with("lane:")),
            move |_| seen.set(racer.create("r", "pending")),
        );
        expected.insert(a.create("a", STATUSES[i as usize % 3]));
        expected.insert(raced.get());
        expected.insert(b.create("b", "sold"));
    }
    assert_eq!(expected.len(), 180, "no id twice");
    a.assert_consistent(&expected, "after races");
    b.assert_consistent(&expected, "from the other instance");
}

#[test]
fn a_failure_or_lost_reply_at_any_call_of_a_create_is_503_with_nothing_or_a_true_201() {
    for fault in [Fault::Fail as fn(u64) -> Fault, Fault::LoseReply] {
        for call in 1..=5u64 {
            let api = lanes();
            for i in 0..20 {
                api.create("before", STATUSES[i % 3]);
            }
            let before: BTreeSet<i64> = (1..=20).collect();
            api.store.reset_counts();
            api.store.inject(fault(call));
            let r = api.post(r#"{"name":"x","categoryId":1,"status":"sold"}"#);
            let mut expected = before.clone();
            match r.status.as_u16() {
                201 => {
                    expected.insert(json(&r)["id"].as_i64().unwrap());
                }
                503 => {}
                other => panic!("{other} at call {call}"),
            }
            api.store.clear_faults();
            api.assert_consistent(&expected, &format!("{fault:?} at call {call}"));
            assert_eq!(api.create("after", "sold"), 1 + *expected.last().unwrap());
        }
    }
}

#[test]
fn a_walk_with_creates_between_its_pages_lists_every_earlier_pet_once() {
    let api = lanes();
    let mut before: BTreeSet<i64> = (0..50).map(|i| api.create("p", STATUSES[i % 3])).collect();
    for target in ["/v1/pets?limit=7", "/v1/pets?limit=3&status=sold"] {
        let mut seen = Vec::new();
        let mut next = Some(target.to_string());
        let mut n = 0;
        while let Some(page) = next {
            let r = api.get(&page);
            seen.extend(page_ids(&r));
            next = r.header("link").and_then(next_of);
            // Two creates, in lanes drawn apart, between the first 20 pages.
            if n < 20 {
                api.random.set([n; 16]);
                before.insert(api.create("new", "sold"));
                api.random.set([n + 77; 16]);
                api.create("new", "available");
            }
            n += 1;
            assert!(n < 200, "{target}: the walk does not end");
        }
        let distinct: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!(distinct.len(), seen.len(), "{target}: once each");
        let wanted = if target.contains("sold") { 2 } else { 0 };
        let earlier = (1..=50).filter(|id| wanted == 0 || (id - 1) % 3 == wanted);
        for id in earlier {
            assert!(distinct.contains(&id), "{target}: {id} missing");
        }
    }
}

#[test]
fn status_pages_are_full_at_any_share() {
    let api = lanes();
    // 1 in 50 sold, 1 in 2 pending, the rest available.
    for n in 1..=600 {
        let status = match n {
            n if n % 50 == 0 => "sold",
            n if n % 2 == 0 => "pending",
            _ => "available",
        };
        api.create("p", status);
    }
    for (status, count) in [("sold", 12), ("pending", 288), ("available", 300)] {
        for limit in [5, 20, 100] {
            let mut next = Some(format!("/v1/pets?limit={limit}&status={status}"));
            let mut pages = Vec::new();
            while let Some(target) = next {
                let r = api.get(&target);
                pages.push(page_ids(&r).len());
                next = r.header("link").and_then(next_of);
            }
            let full = count / limit;
            assert!(
                pages[..full].iter().all(|n| *n == limit),
                "{status} {limit}: {pages:?}"
            );
            assert_eq!(pages.iter().sum::<usize>(), count, "{status} {limit}");
            assert!(
                pages.len() <= count.div_ceil(limit) + 1,
                "{status} {limit}: {pages:?}"
            );
        }
    }
}

/// The rounds of the 32 heads (`petstore-lane 1 <round> ...`).
fn rounds(store: &MemStore) -> Vec<u64> {
    (0..32)
        .map(|k| match store.peek(&format!("lane:{k}")) {
            Some(head) => String::from_utf8(head)
                .unwrap()
                .split(' ')
                .nth(2)
                .unwrap()
                .parse()
                .unwrap(),
            None => 0,
        })
        .collect()
}

#[test]
fn creates_that_read_the_heads_at_one_moment_keep_lanes_within_4_rounds() {
    let store = MemStore::new(Backend::Dynamo);
    let first = lanes_on(&store);
    for i in 0..32 {
        first.create("p", STATUSES[i % 3]);
    }
    // 48 creates read the heads at one moment and draw the same lane: each
    // claims only after the next has read and claimed (a hook before its
    // first claim runs the next create).
    let racers: Vec<Api> = (0..48).map(|_| lanes_on(&store)).collect();
    for racer in &racers {
        racer.random.set([9; 16]);
    }
    let made = std::rc::Rc::new(std::cell::RefCell::new(BTreeSet::new()));
    for racer in racers.into_iter().skip(1) {
        let made = made.clone();
        store.before(
            |op| matches!(op, Op::CasBegin(k) if k.starts_with("lane:")),
            move |_| {
                let id = racer.create("r", "sold");
                made.borrow_mut().insert(id);
            },
        );
    }
    let leader = lanes_on(&store);
    leader.random.set([9; 16]);
    let id = leader.create("r", "sold");
    made.borrow_mut().insert(id);
    let made = made.borrow().clone();
    assert_eq!(made.len(), 48, "no id twice");
    let rounds = rounds(&store);
    let (fewest, most) = (rounds.iter().min().unwrap(), rounds.iter().max().unwrap());
    assert!(most - fewest <= 4, "{rounds:?}");
    // A create after them: at most 127 below the highest acknowledged.
    let next = first.create("after", "sold");
    assert!(made.last().unwrap() - next <= 127, "{next} after {made:?}");
    let all: BTreeSet<i64> = (1..=32).chain(made).chain([next]).collect();
    first.assert_consistent(&all, "after the stale claims");
}

/// A store 1.3.0 claimed has 16 lanes (`petstore-lanes 1`): this release
/// keeps it at 16, so that 1.3.0 instances beside it read every id it
/// hands out, and its cursors carry 16 numbers, as 1.3.0's do.
#[test]
fn a_store_of_16_lanes_stays_of_16_lanes() {
    let store = MemStore::new(Backend::Dynamo);
    store.put("ctr:id", b"petstore-lanes 1 1 0 0");
    let api = lanes_on(&store);
    let ids: Vec<i64> = (0..40).map(|i| api.create("p", STATUSES[i % 3])).collect();
    assert_eq!(ids, (1..=40).collect::<Vec<_>>(), "in turn over 16 lanes");
    assert!(store.peek("lane:16").is_none(), "no 17th lane");
    let head = String::from_utf8(store.peek("lane:7").unwrap()).unwrap();
    assert!(head.starts_with("petstore-lane 1 3 "), "{head}");
    let health = json(&api.request(http::Method::GET, "/v1/health", &[], b""));
    assert_eq!(
        (health["layout"].as_str(), health["lanes"].as_i64()),
        (Some("lanes"), Some(16))
    );
    // Racing creates stay in the 16 lanes.
    let mut expected: BTreeSet<i64> = ids.into_iter().collect();
    for i in 0..40u8 {
        api.random.set([i.wrapping_mul(37); 16]);
        expected.insert(api.create("r", "sold"));
    }
    assert!(store.peek("lane:16").is_none(), "no 17th lane");
    api.assert_consistent(&expected, "16 lanes");
    // getPet of a lane's newest pet, held in its head.
    let newest = *expected.last().unwrap();
    assert!(
        store.peek(&format!("pet:{newest}")).is_none(),
        "in the head"
    );
    assert_eq!(json(&api.get(&format!("/v1/pets/{newest}")))["id"], newest);
    // A cursor of 16 numbers; one of 32, which this store never made, is
    // read for its 16 lanes (any cursor the document's pattern takes is
    // answered): here, the walk's start.
    let r = api.get("/v1/pets?limit=5");
    let next = r.header("link").and_then(next_of).unwrap();
    let cursor = next.split("cursor=").nth(1).unwrap();
    let digits = cursor.strip_prefix('l').unwrap().split_once('.').unwrap().1;
    let digits = digits.split_once('_').map_or(digits, |(d, _)| d);
    assert_eq!(digits.len(), 16, "{cursor}");
    let wide = api.get(&format!("/v1/pets?limit=5&cursor=l0.{}", "0".repeat(32)));
    assert_eq!(wide.status.as_u16(), 200);
    assert_eq!(wide.body, r.body, "the first page");
    assert_eq!(
        String::from_utf8(store.peek("ctr:id").unwrap()).unwrap(),
        "petstore-lanes 1 1 0 0"
    );
}

/// A follower of a status list, with every lane gaining a pet of that
/// status between its polls: each page writes back at most 25 pieces
/// (DynamoDB's `BatchWriteItem`), and the pieces a page skipped go first
/// on the next, so that every lane's newest piece is written within two
/// polls (1.4.0 took the first 25 by key, and lanes 3-9 never were).
#[test]
fn a_follower_keeps_every_lanes_newest_piece_written_within_two_polls() {
    let api = lanes();
    let mut follower = petstore_testkit::Follower::new("/v1/pets?limit=100&status=sold");
    // Lane k's newest piece of sold pets, and how many polls it went unwritten.
    let piece = |lane: usize, pets: u64| format!("ix3:sold:{lane}:{}", (pets - 1) / 32);
    let mut unwritten = [0u32; 32];
    for poll in 1..=12u64 {
        for _ in 0..32 {
            api.create("s", "sold");
        }
        let before: Vec<Option<Vec<u8>>> =
            (0..32).map(|k| api.store.peek(&piece(k, poll))).collect();
        follower.poll(&api);
        for (lane, before) in before.iter().enumerate() {
            let after = api.store.peek(&piece(lane, poll));
            let written = after.is_some() && after != *before;
            unwritten[lane] = if written { 0 } else { unwritten[lane] + 1 };
            assert!(
                unwritten[lane] < 2,
                "poll {poll}: lane {lane}'s newest piece unwritten two polls running"
            );
        }
    }
    let expected: BTreeSet<i64> = (1..=12 * 32).collect();
    follower.assert_saw_exactly(&expected, "the follower");
}

/// getPet's calls: a stored pet, one `get` (no more than before the fix);
/// a pet still in its lane's head, the `get` and one `get-many` of
/// `ctr:id` and the heads it may be in; and when a create in its lane stores the pet and
/// moves the head on between those two, a third call, a `get` of the pet
/// now stored (1.4.0 answered 404 there).
#[test]
fn getpet_of_a_pet_its_lane_moved_past_between_two_reads_finds_it_stored() {
    let store = MemStore::new(Backend::Dynamo);
    let api = lanes_on(&store);
    for i in 0..32 {
        api.create(&format!("p{i}"), STATUSES[i % 3]);
    }
    let racer = lanes_on(&store);
    api.store.reset_counts();
    assert_eq!(json(&api.get("/v1/pets/1"))["name"], "p0");
    assert!(matches!(&api.store.ops()[..], [Op::Get(_), Op::GetMany(_)]));
    store.before(
        |op| matches!(op, Op::GetMany(keys) if keys.contains(&"lane:0".to_string())),
        move |_| assert_eq!(racer.create("r", "sold"), 33),
    );
    api.store.reset_counts();
    assert_eq!(json(&api.get("/v1/pets/1"))["name"], "p0");
    let ops: Vec<Op> = api
        .store
        .ops()
        .into_iter()
        .filter(|op| !matches!(op, Op::SetMany(_) | Op::CasBegin(_) | Op::Swap(_)))
        .collect();
    assert!(
        matches!(&ops[..], [Op::Get(a), Op::GetMany(_), Op::GetMany(heads), Op::Get(b)]
            if a == "pet:1" && b == "pet:1" && heads == &["ctr:id".to_string(), "lane:0".to_string()]),
        "{ops:?}"
    );
    api.store.reset_counts();
    assert_eq!(json(&api.get("/v1/pets/1"))["name"], "p0");
    assert!(
        matches!(&api.store.ops()[..], [Op::Get(_)]),
        "stored: one get"
    );
}

/// A page that reads the heads writes in its cursor how many rounds every
/// lane had stored (`_<r>`); a page of the unfiltered list whose entries
/// all lie within them reads no head: `ctr:id` and the pieces of its
/// rounds, one `get-many`. So does a walk's first page over blocks that
/// hold its ids in a row (its word: the rounds they hold whole); over
/// blocks that do not, it reads the heads next. A cursor whose word claims more
/// than the lanes stored gets the same pets, read from the heads.
#[test]
fn a_page_within_the_rounds_its_cursor_says_are_stored_reads_no_heads() {
    let api = lanes();
    for i in 0..640 {
        api.create(&format!("p{i}"), STATUSES[i % 3]);
    }
    // Pieces written by a walk first, as a warm store has them; its first
    // page finds no block, then reads the heads and writes the blocks.
    api.store.reset_counts();
    let cold = api.get("/v1/pets?limit=100");
    assert_eq!(page_ids(&cold), (1..=100).collect::<Vec<_>>());
    assert!(
        matches!(&api.store.ops()[..], [Op::GetMany(blocks), Op::GetMany(heads), Op::GetMany(_), Op::SetMany(_)]
            if blocks.len() == 5 && heads.contains(&"lane:31".to_string())),
        "{:?}",
        api.store.ops()
    );
    assert!(next_of(cold.header("link").unwrap())
        .unwrap()
        .ends_with("_19"));
    assert_eq!(
        walk(&api, "/v1/pets?limit=100"),
        (1..=640).collect::<Vec<_>>()
    );
    let mut next = Some("/v1/pets?limit=100".to_string());
    let (mut seen, mut without_heads, mut pages) = (Vec::new(), 0, 0);
    while let Some(target) = next {
        api.store.reset_counts();
        let r = api.get(&target);
        assert_eq!(r.status, 200);
        seen.extend(page_ids(&r));
        next = r.header("link").and_then(next_of);
        let ops = api.store.ops();
        let heads = ops
            .iter()
            .any(|op| matches!(op, Op::GetMany(k) if k.contains(&"lane:0".to_string())));
        if !heads {
            without_heads += 1;
            // 640 pets: 20 rounds in each lane, 19 of them stored; the
            // first page knows the 4 rounds whose blocks it read.
            let first = target == "/v1/pets?limit=100";
            assert!(first || target.ends_with("_19"), "{target}");
            let word = next.as_deref().and_then(|n| n.rsplit('_').next());
            assert_eq!(word, Some(if first { "4" } else { "19" }), "{target}");
            // `ctr:id` and the 4 blocks of 32 ids a page of 100 reaches.
            assert!(
                matches!(&ops[..], [Op::GetMany(keys)] if keys.len() == 5
                    && keys.iter().all(|k| k == "ctr:id" || k.starts_with("ix3:all:"))),
                "{target}: {ops:?}"
            );
        }
        pages += 1;
    }
    assert_eq!(seen, (1..=640).collect::<Vec<_>>());
    // The first page within its blocks; the second reads the heads (its
    // cursor knows 4 rounds); pages 3 to 6 end by round 19; the 7th
    // reaches round 20, in the heads, and the 8th is the list's end
    // (empty, no link).
    assert_eq!((pages, without_heads), (8, 5));

    // A word that claims more: the page lists what is stored until it
    // finds a round absent, then reads the heads; the walk stays exact.
    let first = api.get("/v1/pets?limit=100");
    let second = api.get(&next_of(first.header("link").unwrap()).unwrap());
    let cursor = next_of(second.header("link").unwrap()).unwrap();
    assert!(cursor.ends_with("_19"), "{cursor}");
    for claim in ["_20", "_21", "_40", "_999999"] {
        let claimed = cursor.replace("_19", claim);
        assert_eq!(
            walk(&api, &claimed),
            (201..=640).collect::<Vec<_>>(),
            "{claim}"
        );
    }
}

/// A status list's settled part is merged across the lanes in blocks of
/// 32 of its positions (`ixm:{status}:{j}`), written whole by the pages
/// that read the lanes (each goes on to the end of the block it ends in);
/// a page there, whose cursor is exact (a word: its lanes listed the pets
/// up to one id, every lane past it), reads `ctr:id` and its blocks alone.
/// Walks stay exact while creates run.
#[test]
fn a_status_page_over_its_settled_part_reads_the_merged_blocks_alone() {
    let api = lanes();
    for i in 0..640 {
        api.create(&format!("p{i}"), STATUSES[i % 3]);
    }
    let sold = |last: i64| -> Vec<i64> { (1..=last).filter(|id| id % 3 == 0).collect() };
    let target = "/v1/pets?limit=50&status=sold";
    // Each page of a walk: its ids, whether it read `ctr:id` and the
    // blocks alone, and its cursor's word.
    let pages = || {
        let mut next = Some(target.to_string());
        let mut pages = Vec::new();
        while let Some(at) = next {
            api.store.reset_counts();
            let r = api.get(&at);
            assert_eq!(r.status, 200);
            next = r.header("link").and_then(next_of);
            let ops = api.store.ops();
            let merged = matches!(&ops[..], [Op::GetMany(keys)]
                if keys.iter().all(|k| k == "ctr:id" || k.starts_with("ixm:sold:")));
            let word = next
                .as_deref()
                .map(|n| n.rsplit_once('_').map(|(_, w)| w.to_string()));
            pages.push((page_ids(&r), merged, word.flatten()));
        }
        pages
    };
    let ids = |pages: &[(Vec<i64>, bool, Option<String>)]| -> Vec<i64> {
        pages.iter().flat_map(|(ids, _, _)| ids.clone()).collect()
    };
    // Cold: every page reads the lanes (none tries blocks no page wrote),
    // and the settled ones write blocks.
    let cold = pages();
    assert_eq!(ids(&cold), sold(640));
    assert!(cold.iter().all(|(_, merged, _)| !merged));
    let with = |prefix: &str| -> Vec<String> {
        let keys = api.store.keys().into_iter();
        keys.filter(|k| k.starts_with(prefix)).collect()
    };
    let blocks = with("ixm:sold:");
    // 213 sold; ids to 608 settled (19 rounds of 32 lanes): 202 of them,
    // 6 whole blocks.
    assert_eq!(blocks.len(), 6, "{blocks:?}");
    assert!(with("ixm:available:").is_empty());

    // Warm: the first page reads the lanes, and the next page's blocks
    // with them (there: its word is `2`); positions 51 to 150 come from
    // the blocks alone (pages 2 and 3); the 4th reaches block 6, not
    // settled, and reads the lanes; then 200, 213, and the end.
    let warm = pages();
    assert_eq!(ids(&warm), sold(640));
    let shape: Vec<(bool, Option<&str>)> =
        warm.iter().map(|(_, m, w)| (*m, w.as_deref())).collect();
    assert_eq!(
        shape,
        [
            (false, Some("2")),
            (true, Some("2")),
            (true, Some("2")),
            (false, Some("1")),
            (false, None),
            (false, None)
        ]
    );

    // Creates while a walk goes on over the blocks: it lists every sold
    // pet once, the new ones too.
    let first = api.get(target);
    let mut ids = page_ids(&first);
    for i in 640..700 {
        api.create(&format!("p{i}"), STATUSES[i % 3]);
    }
    ids.extend(walk(&api, &next_of(first.header("link").unwrap()).unwrap()));
    assert_eq!(ids, sold(700));
}

/// A status cursor not made here that claims to be exact (its word) is
/// answered, but checked before a page writes blocks by it: the block that
/// holds its position must say its last pet, and every lane's next pet be
/// past it. One whose lanes are shifted (one lane a pet on, another a pet
/// back: the same position) writes nothing, and its next cursor claims
/// nothing; the blocks stay as they were, and walks stay exact.
#[test]
fn a_cursor_that_claims_a_position_it_is_not_at_writes_no_block() {
    let api = lanes();
    for i in 0..640 {
        api.create(&format!("p{i}"), STATUSES[i % 3]);
    }
    let target = "/v1/pets?limit=50&status=sold";
    let sold: Vec<i64> = (1..=640).filter(|id| id % 3 == 0).collect();
    assert_eq!(walk(&api, target), sold);
    let blocks = || -> Vec<(String, Option<Vec<u8>>)> {
        let keys = api
            .store
            .keys()
            .into_iter()
            .filter(|k| k.starts_with("ixm:"));
        keys.map(|k| (k.clone(), api.store.peek(&k))).collect()
    };
    let before = blocks();
    assert_eq!(before.len(), 6);
    // The cursor after positions 1 to 100: `l<base>.<a digit per lane>_w`.
    let second = next_of(api.get(target).header("link").unwrap()).unwrap();
    let cursor = next_of(api.get(&second).header("link").unwrap()).unwrap();
    let (head, word) = cursor.rsplit_once('_').unwrap();
    let (prefix, digits) = head.split_once("&cursor=l").unwrap();
    let (base, digits) = digits.split_once('.').unwrap();
    let mut lanes: Vec<u32> = digits.chars().map(|d| d.to_digit(36).unwrap()).collect();
    let at = lanes.iter().sum::<u32>() + 32 * base.parse::<u32>().unwrap();
    assert_eq!(at, 100, "{cursor}, word {word}");
    let forge = |lanes: &[u32]| -> String {
        let digits: String = lanes
            .iter()
            .map(|n| char::from_digit(*n, 36).unwrap())
            .collect();
        format!("{prefix}&cursor=l{base}.{digits}_1")
    };
    // Lane 0 three pets on, past its next three (the 107th, 139th and
    // 171st: a page from there that took the cursor on its word would
    // number the pets before the 171st one too low, and write block 4,
    // positions 129 to 160, so); then also the last lane with any a pet
    // back, one listed again.
    lanes[0] += 3;
    let on = forge(&lanes);
    let back = lanes.iter().rposition(|n| *n > 0).unwrap();
    lanes[back] -= 1;
    for forged in [on, forge(&lanes)] {
        let r = api.get(&forged);
        assert_eq!(r.status, 200, "{forged}");
        assert_eq!(page_ids(&r).len(), 50, "a full page, as the store holds it");
        let next = next_of(r.header("link").unwrap()).unwrap();
        assert!(!next.contains('_'), "it claims no position: {next}");
        assert_eq!(blocks(), before, "{forged}: no block written by it");
    }
    assert_eq!(walk(&api, target), sold);
}

fn walk(api: &Api, target: &str) -> Vec<i64> {
    let mut ids = Vec::new();
    let mut next = Some(target.to_string());
    while let Some(target) = next {
        let r = api.get(&target);
        ids.extend(page_ids(&r));
        next = r.header("link").and_then(next_of);
    }
    ids
}
