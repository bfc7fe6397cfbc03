//! Every release's marks and cursors held to the rule of docs/decisions.md,
//! "Extending a mark or a cursor": each has the one shape the rule gives
//! (a mark: `petstore-<layout> <format> <numbers>` and `<name>=<value>`
//! words; a cursor: its parts, then up to 3 words `_<a-z><0-9 a-z>…`); this release
//! serves each as its release wrote it, and the same with a word a later
//! 2.x release may add; and it refuses loudly what a later format would be,
//! never misreading it.

mod common;

use common::{api, assert_error, json, page_ids, Api, Setup, BACKENDS};

/// The lanes layout on DynamoDB, the counters layout on SQLite.
const LANES: Setup = BACKENDS[4];
const COUNTERS: Setup = BACKENDS[1];

/// Every mark a release wrote in `ctr:id`: the release, the mark, the
/// layout health says (and its lanes).
const MARKS: [(&str, &str, &str, Option<i64>); 3] = [
    ("1.3.0", "petstore-lanes 1 33 20 5", "lanes", Some(16)),
    ("1.4.0–2.1.0", "petstore-lanes 2 1 0 0", "lanes", Some(32)),
    (
        "2.0.0 reads, none writes",
        "petstore-lanes 2 65 40 7 lanes=64",
        "lanes",
        Some(64),
    ),
];

/// The rule's shape of a mark: a counter, or `petstore-<layout> <format>`,
/// numbers, then `<name>=<value>` words.
fn mark_shape(mark: &str) -> bool {
    let mut words = mark.split(' ');
    let layout = words.next().and_then(|w| w.strip_prefix("petstore-"));
    let layout_ok =
        layout.is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_lowercase()));
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    let (mut numbers, mut named) = (0, false);
    for word in words {
        match word.split_once('=') {
            None if digits(word) && !named => numbers += 1,
            Some((name, value)) if !name.is_empty() && digits_or_letters(value) => named = true,
            _ => return false,
        }
    }
    (layout_ok && numbers >= 1) || digits(mark)
}

fn digits_or_letters(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// The rule's shape of a cursor: `c…`, `l…` or `r…` parts, in that order
/// (`_` inside them leads a number: a lanes part's own word, or when the
/// positions a counters part carries were first seen), then at most 3
/// words of 1 to 18 of `0-9 a-z`, each led by a letter.
fn cursor_shape(cursor: &str) -> bool {
    let mut parts = cursor;
    for _ in 0..3 {
        match parts.rsplit_once('_') {
            Some((before, w))
                if w.len() <= 18
                    && w.starts_with(|c: char| c.is_ascii_lowercase())
                    && digits_or_letters(w) =>
            {
                parts = before
            }
            _ => break,
        }
    }
    let letters: String = parts.chars().filter(|c| "clr".contains(*c)).collect();
    let ordered = ["c", "l", "cl", "r"].contains(&letters.as_str());
    let digit = |w: &str| w.starts_with(|c: char| c.is_ascii_digit());
    ordered && parts.split('_').skip(1).all(digit)
}

fn health(api: &Api) -> (u16, serde_json::Value, Option<String>) {
    let handled = api.handle_health();
    let status = handled.response.status.as_u16();
    (status, json(&handled.response), handled.detail)
}

#[test]
fn every_releases_mark_is_served_as_written_and_with_a_later_word() {
    for (release, mark, layout, lanes) in MARKS {
        assert!(mark_shape(mark), "{release}: {mark}");
        for mark in [mark.to_string(), format!("{mark} hint=7a")] {
            let api = api(LANES);
            api.store.put("ctr:id", mark.as_bytes());
            let (status, body, cause) = health(&api);
            assert_eq!(status, 200, "{release} {mark}: {cause:?}");
            assert_eq!(
                (body["layout"].as_str(), body["lanes"].as_i64()),
                (Some(layout), lanes)
            );
            let id = api.create("Rex", "sold");
            assert_eq!(api.walk("/v1/pets?limit=7"), vec![id], "{release} {mark}");
        }
    }
    // Counters: the counter itself; moved: the mark a move writes.
    let mut api = api(Setup {
        layout: "counters",
        ..LANES
    });
    api.create("Rex", "sold");
    assert!(mark_shape(
        &String::from_utf8(api.store.peek("ctr:id").unwrap()).unwrap()
    ));
    api.set_variable("catalogue_layout", "lanes");
    let moved = api.create("Kitty", "sold");
    let mark = String::from_utf8(api.store.peek("ctr:id").unwrap()).unwrap();
    assert!(
        mark.starts_with("petstore-lanes 2 33 1 ") && mark_shape(&mark),
        "{mark}"
    );
    api.store
        .put("ctr:id", format!("{mark} hint=7a").as_bytes());
    assert_eq!(health(&api).1["move"]["ids_before"], 1);
    assert_eq!(api.walk("/v1/pets?limit=7"), vec![1, moved]);
}

#[test]
fn a_mark_of_a_later_format_or_none_is_refused_loudly_never_misread() {
    for mark in [
        "petstore-lanes 10 33 20 5",
        "petstore-lanes 2x 33 20 5",
        "petstore-lanes 3 1 0 0",
        "petstore-lanes 1 33 20 5 lanes=32",
        "petstore-lanes 2 1 0 0 lanes=65",
        "petstore-lanes 2 1 0 0 lanes=32 lanes=32",
        "petstore-lanes 2 1 0 0 Hint=1",
        "petstore-lanes 2 1 0",
        "petstore-lanes 2 33 40 0",
        "petstore-replicated 1",
        "petstore-shards 1 4",
    ] {
        let api = api(LANES);
        api.store.put("ctr:id", mark.as_bytes());
        let (status, body, cause) = health(&api);
        assert_eq!(
            (status, body["code"].as_str()),
            (503, Some("misconfigured")),
            "{mark}"
        );
        let cause = cause.unwrap_or_default();
        let names = cause.contains(&mark[..mark.len().min(30)]);
        let says = cause.contains("the release that wrote it") || cause.contains("edge build");
        assert!(names && says, "{mark}: {cause}");
        assert_error(&api.post(common::REX), 503, "misconfigured");
        assert_error(&api.get("/v1/pets"), 503, "misconfigured");
        assert_eq!(
            api.store.peek("ctr:id").as_deref(),
            Some(mark.as_bytes()),
            "nothing written"
        );
    }
}

/// Every cursor shape a release wrote: the release, the store it walks,
/// the cursor (a walk of 40 pets, 7 a page), what follows it.
#[test]
fn every_releases_cursor_goes_on_and_a_later_word_changes_nothing() {
    let lanes = |first: u64, n: usize| format!("l{first}.{}", "0".repeat(n));
    let dashes = |n: usize| format!("l{}", vec!["1"; n].join("-"));
    let cursors: [(&str, Setup, String); 9] = [
        ("1.0.0–2.1.0", COUNTERS, "c8".into()),
        ("1.3.0–2.1.0", COUNTERS, "c9u1_1800000000".into()),
        ("1.3.0–2.1.0, 16 lanes", LANES, dashes(16)),
        ("1.4.0–2.1.0", LANES, lanes(0, 32)),
        ("1.6.0–2.1.0", LANES, format!("{}_1", lanes(1, 32))),
        (
            "1.7.0–2.1.0, a status",
            LANES,
            format!("{}_1", lanes(0, 32)),
        ),
        ("1.3.0–2.1.0, moved", LANES, format!("c2{}", lanes(0, 32))),
        (
            "1.5.0–2.1.0, the edge build's",
            LANES,
            "r1800000000000.5".into(),
        ),
        (
            "2.1.0, the edge build's, naming its piece",
            LANES,
            "r1800000000000.5_p3".into(),
        ),
    ];
    for (release, setup, cursor) in cursors {
        assert!(cursor_shape(&cursor), "{release}: {cursor}");
        let api = api(setup);
        for i in 0..40 {
            api.create(&format!("p{i}"), ["available", "sold"][i % 2]);
        }
        let list = if release.contains("status") {
            "&status=sold"
        } else {
            ""
        };
        let asked = format!("/v1/pets?limit=7{list}&cursor={cursor}");
        let first = api.get(&asked);
        assert_eq!(
            first.status.as_u16(),
            200,
            "{release} {cursor}: {:?}",
            json(&first)
        );
        // As many words as the rule leaves room for after the cursor's own.
        let own = cursor.matches("_p").count();
        for words in ["_zz", "_a1b2_c7_x"].map(|w| &w[..w.len() - 3 * own]) {
            let again = api.get(&format!("{asked}{words}"));
            assert_eq!(again.status.as_u16(), 200, "{release} {cursor}{words}");
            assert_eq!(
                page_ids(&again),
                page_ids(&first),
                "{release} {cursor}{words}"
            );
            assert_eq!(
                again.header("link"),
                first.header("link"),
                "{release} {cursor}{words}"
            );
        }
    }
    // A part this release does not know, or a fourth word: malformed.
    let api = api(LANES);
    for cursor in [
        "x5",
        "c5x2",
        "l0.00_1_a_b_c_d",
        "c5_a_b_c_d",
        "c5_7",
        "r1.2_0",
        "l0.00_1_a_7",
        "l1000000000000000",
        "l3.00-5",
        "l1_01",
    ] {
        let r = api.get(&format!("/v1/pets?cursor={cursor}"));
        assert_error(&r, 400, "invalid_parameter");
    }
    // The largest entries a lanes part takes, on either list, with either
    // word: answered (past every lane: an empty page, the walk's end).
    let far = format!("l999999999999999.{}", "0".repeat(32));
    for cursor in [far.clone(), format!("{far}_1"), format!("{far}_2")] {
        for list in ["", "&status=sold"] {
            let r = api.get(&format!("/v1/pets?cursor={cursor}{list}"));
            assert_eq!((r.status.as_u16(), r.body.as_slice()), (200, &b"[]"[..]));
        }
    }
    // A word claiming more rounds stored than any lane has: read as any
    // page reads the heads.
    for i in 0..10 {
        api.create(&format!("p{i}"), "sold");
    }
    let claims = format!(
        "/v1/pets?limit=7&cursor=l0.{}_999999999999999999",
        "0".repeat(32)
    );
    assert_eq!(
        page_ids(&api.get(&claims)),
        page_ids(&api.get("/v1/pets?limit=7"))
    );
}
