//! A Redis outage on real Spin 4.0.2 (docs/spin-platform.md, "A Redis outage"): a
//! request that reaches the store while Redis is down hangs, and from then
//! on every store call of that Spin process hangs, also after Redis is back.
//! The deploy recipes' liveness probe (`GET /v1/health` with a timeout) is
//! what heals it: a new process on the same Redis answers at once.

use std::time::Duration;

use petstore_e2e::client::Api;
use petstore_e2e::stores::{Backend, Store};
use petstore_e2e::workspace;

/// The liveness probe's `timeoutSeconds` in the production recipe.
fn liveness_timeout() -> Duration {
    let recipe =
        std::fs::read_to_string(workspace().join("deploy/spinkube/production/spinapp.yaml"))
            .unwrap();
    let liveness = &recipe[recipe.find("liveness:").expect("a liveness probe")..];
    let seconds = liveness
        .lines()
        .find_map(|l| l.trim().strip_prefix("timeoutSeconds:"))
        .expect("the liveness probe's timeout")
        .trim()
        .parse()
        .unwrap();
    Duration::from_secs(seconds)
}

#[test]
fn after_a_redis_outage_the_instance_stays_wedged_and_a_new_one_answers() {
    let timeout = liveness_timeout();
    let mut store = Store::new(Backend::Redis);
    let spin = store.start();
    let probe = Api::with_timeout(spin.api.base.clone(), timeout);
    let health = |api: &Api| api.try_get_public("/v1/health");
    assert_eq!(health(&probe).unwrap().status, 200);
    let id = spin.api.create("before", "sold");
    assert_eq!(id, 1);

    store.redis().stop();
    // A request reaches the store during the outage: no answer in time.
    let during = health(&probe);
    assert!(
        matches!(during, Err(ureq::Error::Timeout(_))),
        "answered during the outage: {during:?}"
    );
    // Requests that touch no store still answer.
    let unauthorized = Api::with_timeout(spin.api.base.clone(), timeout)
        .try_get_public("/v1/pets")
        .expect("a 401 needs no store");
    unauthorized.assert_error(401, "unauthorized");

    store.redis().restart().unwrap();
    // Redis is back (restart returns once it accepts connections); this
    // instance is not: the probe, which gives Spin the whole liveness
    // timeout to answer, gets none. This asserts a platform fact that
    // docs/spin-platform.md and the recipes' probes rely on: the day a Spin
    // release heals by itself, this fails and the docs must change.
    let after = health(&probe);
    assert!(
        matches!(after, Err(ureq::Error::Timeout(_))),
        "Spin recovered after the outage (docs/spin-platform.md says it does not): {after:?}"
    );

    // What the probe's restart does: a new process on the same Redis.
    let fresh = store.start();
    let r = health(&Api::with_timeout(fresh.api.base.clone(), timeout))
        .expect("a new instance answers within the probe's timeout");
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, r#"{"status":"ok","layout":"none"}"#)
    );
    fresh.api.create("after", "sold");
}
