//! listPets as a client sees it: ascending ids, `limit` and its bounds,
//! the status filter, `next` links with only the parameters used, walks
//! that visit every pet once, and a malformed cursor.

mod common;

use common::{assert_error, json, page_ids, Api};
use petstore_testkit::{next_target, Backend, MemStore};
use serde_json::json;

#[test]
fn list_is_ascending_and_respects_limit_default_and_bounds() {
    let api = Api::new();
    for i in 0..25 {
        api.create(&format!("p{i}"), ["available", "pending", "sold"][i % 3]);
    }
    let r = api.get("/v1/pets");
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let ids: Vec<i64> = page_ids(&r);
    assert_eq!(
        ids,
        (1..=20).collect::<Vec<_>>(),
        "default limit 20, ascending id"
    );
    assert_eq!(
        json(&api.get("/v1/pets?limit=1")).as_array().unwrap().len(),
        1
    );
    assert_eq!(
        json(&api.get("/v1/pets?limit=100"))
            .as_array()
            .unwrap()
            .len(),
        25
    );
    let first = &json(&api.get("/v1/pets?limit=1"))[0];
    assert_eq!(
        first,
        &json!({"id":1,"name":"p0","categoryId":1,"status":"available"})
    );
    for bad in ["0", "101", "-1", "abc", "1.5", ""] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?limit={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("limit"), "{m}");
    }
    for bad in ["lost", "SOLD", ""] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?status={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("status"), "{m}");
    }
    assert_eq!(
        json(&api.get("/v1/pets?foo=1&limit=2"))
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn empty_catalogue_lists_an_empty_array_without_link() {
    let api = Api::new();
    let r = api.get("/v1/pets");
    assert_eq!(r.body, b"[]");
    assert_eq!(r.header("link"), None);
    let r = api.get("/v1/pets?status=sold");
    assert_eq!(r.body, b"[]");
}

#[test]
fn status_filter_returns_only_that_status_in_ascending_order() {
    let api = Api::new();
    for i in 0..40 {
        api.create(
            &format!("p{i}"),
            if i % 4 == 0 { "sold" } else { "available" },
        );
    }
    let sold = api.walk("/v1/pets?status=sold&limit=3");
    assert_eq!(sold, (0..10).map(|i| i * 4 + 1).collect::<Vec<_>>());
    let r = api.get("/v1/pets?status=sold&limit=100");
    for pet in json(&r).as_array().unwrap() {
        assert_eq!(pet["status"], "sold");
    }
    assert!(api.walk("/v1/pets?status=pending").is_empty());
}

#[test]
fn link_next_carries_only_the_parameters_used_plus_cursor() {
    let api = Api::new();
    for _ in 0..5 {
        api.create("a", "sold");
    }
    let r = api.get("/v1/pets?limit=2&status=sold&foo=bar");
    assert_next(
        &r,
        r#"</v1/pets?limit=2&status=sold&cursor=c3>; rel="next""#,
    );
    let r = api.get("/v1/pets?limit=2");
    assert_next(&r, r#"</v1/pets?limit=2&cursor=c3>; rel="next""#);
    for _ in 0..20 {
        api.create("b", "pending");
    }
    let r = api.get("/v1/pets");
    assert_next(&r, r#"</v1/pets?cursor=c21>; rel="next""#);
    let r = api.get(&next_target(r.header("link").unwrap()));
    assert_eq!(json(&r).as_array().unwrap().len(), 5);
    // A page with pets links on, also at the end of the list: a client
    // that follows the list resumes there (docs/decisions.md).
    assert_next(&r, r#"</v1/pets?cursor=c26>; rel="next""#);
    let end = api.get(&next_target(r.header("link").unwrap()));
    assert_eq!(
        (end.body.as_slice(), end.header("link")),
        (&b"[]"[..], None),
        "the walk ends"
    );
    assert_next(
        &api.get("/v1/pets?limit=25"),
        r#"</v1/pets?limit=25&cursor=c26>; rel="next""#,
    );
}

/// The sync protocol: the walk ends at a page with no `next`; requesting
/// that page again lists what was created since, once, and links on.
#[test]
fn the_last_page_requested_again_lists_what_is_new_and_nothing_twice() {
    let api = Api::new();
    for _ in 0..3 {
        api.create("a", "sold");
    }
    let walked = api.walk("/v1/pets?limit=2");
    assert_eq!(walked, [1, 2, 3]);
    let last = "/v1/pets?limit=2&cursor=c4";
    assert_eq!(api.get(last).header("link"), None, "the walk ended here");
    assert!(page_ids(&api.get(last)).is_empty());
    for _ in 0..3 {
        api.create("b", "sold");
    }
    let r = api.get(last);
    assert_eq!(page_ids(&r), [4, 5]);
    assert_next(&r, r#"</v1/pets?limit=2&cursor=c6>; rel="next""#);
    assert_eq!(api.walk(last), [4, 5, 6]);
}

#[test]
fn walking_next_links_visits_every_pet_exactly_once() {
    let api = Api::new();
    let mut by_status = std::collections::BTreeMap::<&str, Vec<i64>>::new();
    for i in 0..230 {
        let status = ["available", "pending", "sold"][(i * 7 % 11) % 3];
        by_status
            .entry(status)
            .or_default()
            .push(api.create("w", status));
    }
    for limit in [1, 7, 20, 32, 33, 100] {
        assert_eq!(
            api.walk(&format!("/v1/pets?limit={limit}")),
            (1..=230).collect::<Vec<_>>()
        );
        for (status, ids) in &by_status {
            assert_eq!(
                &api.walk(&format!("/v1/pets?limit={limit}&status={status}")),
                ids
            );
        }
    }
}

#[test]
fn malformed_cursor_is_400() {
    let api = Api::new();
    api.create("a", "sold");
    for bad in ["x", "c0", "c-1", "", "1", "c1.5", "%ZZ", "c01"] {
        let m = assert_error(
            &api.get(&format!("/v1/pets?cursor={bad}")),
            400,
            "invalid_parameter",
        );
        assert!(m.contains("cursor") || m.contains("encoded"), "{bad}: {m}");
    }
    // A well-formed cursor past the end is an empty last page.
    let r = api.get("/v1/pets?cursor=c500");
    assert_eq!(
        (r.status.as_u16(), r.body.as_slice(), r.header("link")),
        (200, &b"[]"[..], None)
    );
}

/// Any cursor the document's pattern takes is answered (schemathesis
/// generates them): on a counters store, a lanes part (which only a moved
/// store's walk writes) names lanes it does not have, read as empty; a
/// lanes part alone says the counters ids were all listed: the walk ends.
#[test]
fn a_cursor_with_a_lanes_part_on_a_counters_store_is_answered() {
    let sqlite = Api::new();
    let mut dynamo = Api::on(MemStore::new(Backend::Dynamo));
    dynamo.set_variable("key_value_backend", "aws_dynamo");
    for api in [sqlite, dynamo] {
        for name in ["a", "b", "c"] {
            api.create(name, "sold");
        }
        let lanes = format!("l{}", ["0"; 32].join("-"));
        let r = api.get(&format!("/v1/pets?limit=2&cursor=c2{lanes}"));
        assert_eq!(r.status.as_u16(), 200);
        assert_eq!(
            json(&r),
            json!([
                {"id": 2, "name": "b", "categoryId": 1, "status": "sold"},
                {"id": 3, "name": "c", "categoryId": 1, "status": "sold"}
            ])
        );
        let r = api.get(&format!("/v1/pets?cursor={lanes}"));
        assert_eq!(
            (r.status.as_u16(), r.body.as_slice(), r.header("link")),
            (200, &b"[]"[..], None)
        );
        let r = api.get(&format!("/v1/pets?cursor={lanes}&status=sold"));
        assert_eq!((r.status.as_u16(), r.body.as_slice()), (200, &b"[]"[..]));
    }
}

/// The edge build's cursor (`r<time>.<id>`, which the document's pattern
/// takes): none of its pets are in this build's store, so its walk ends.
#[test]
fn an_edge_builds_cursor_ends_the_walk() {
    let api = Api::new();
    api.create("a", "sold");
    let r = api.get("/v1/pets?cursor=r1800000000000.12345");
    assert_eq!(
        (r.status.as_u16(), r.body.as_slice(), r.header("link")),
        (200, &b"[]"[..], None)
    );
}

/// A store the edge build wrote (its mark in `ctr:id`) is refused, never
/// misread as an empty counters store.
#[test]
fn a_store_the_edge_build_wrote_is_refused() {
    let api = Api::new();
    api.store.put("ctr:id", b"petstore-replicated 1");
    let health = api.get("/v1/health");
    assert_eq!(
        (health.status.as_u16(), json(&health)["code"].as_str()),
        (503, Some("misconfigured"))
    );
    let r = api.post(r#"{"name":"a","categoryId":1,"status":"sold"}"#);
    assert!(r.status.is_server_error(), "{}", r.status);
    assert_eq!(api.store.peek("ctr:id").unwrap(), b"petstore-replicated 1");
    assert!(api.get("/v1/pets").status.is_server_error());
}

/// The page's `Link` is exactly this `next` link.
fn assert_next(page: &petstore::response::Response, link: &str) {
    assert_eq!(page.header("link"), Some(link));
}
