//! What is measured: each operation of the API on a preloaded catalogue,
//! and the floor's request that does the same key-value work.

use petstore_e2e::client::KEY;
use petstore_e2e::stores::Backend;

use crate::load;

pub const CREATE_BODY: &str = r#"{"name":"Bench","categoryId":3,"status":"pending"}"#;
/// A createPet of [`CREATE_BODY`] with the API key, as bytes on the wire,
/// expecting 201.
pub fn create_request() -> load::Request {
    let auth = format!("Bearer {KEY}");
    load::Request {
        fixed: load::raw(
            "POST",
            "/v1/pets",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
            ],
            CREATE_BODY,
        ),
        fresh: None,
        expect: 201,
    }
}

/// The one key of the replay benchmark.
pub const REPLAYED_KEY: &str = "bench-replayed";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Create,
    /// A create with a new `Idempotency-Key` on every request.
    KeyedCreate,
    /// The same `Idempotency-Key` and body every time: replays.
    Replay,
}

impl Kind {
    pub fn creates(self) -> bool {
        self != Kind::Read
    }
}

pub struct Operation {
    pub name: &'static str,
    pub path: String,
    pub kind: Kind,
    /// The size of the values ours reads, which the floor's `get`s read
    /// too: an index piece of 32 pets (about 2.1 KB), or a pet, a counter,
    /// a piece of one pet (under 100 bytes).
    pub value_bytes: usize,
}

/// The value sizes the floor's keys are seeded with.
pub const VALUE_SIZES: [usize; 2] = [PET, PIECE];
const PET: usize = 64;
const PIECE: usize = 2150;

/// Every operation, reads first (creates grow the catalogue).
pub fn all(pets: usize) -> Vec<Operation> {
    let op = |name, path: String, kind| Operation {
        name,
        path,
        kind,
        value_bytes: if name == "listPets?limit=100" || name == "listPets?limit=100, deep cursor" {
            PIECE
        } else {
            PET
        },
    };
    vec![
        op(
            "listPets?limit=100",
            "/v1/pets?limit=100".into(),
            Kind::Read,
        ),
        op(
            "listPets?limit=100&status=sold (1 sold)",
            "/v1/pets?limit=100&status=sold".into(),
            Kind::Read,
        ),
        op(
            "listPets?limit=100, deep cursor",
            format!(
                "/v1/pets?limit=100&cursor=c{}",
                pets.saturating_sub(150).max(1)
            ),
            Kind::Read,
        ),
        op("getPet", format!("/v1/pets/{}", pets / 2 + 1), Kind::Read),
        // On a lanes store, the newest pet of its lane: held by its head.
        op(
            "getPet, the newest pet",
            format!("/v1/pets/{pets}"),
            Kind::Read,
        ),
        op("createPet", "/v1/pets".into(), Kind::Create),
        op(
            "createPet, new Idempotency-Key",
            "/v1/pets".into(),
            Kind::KeyedCreate,
        ),
        op("createPet, replayed", "/v1/pets".into(), Kind::Replay),
    ]
}

/// The floor's request for the same work: as many plain `get`s of values of
/// the size ours reads and the same body size, or for a create the least any create does (one `increment`,
/// one `set` of a new key; on DynamoDB the increment retried as ours are).
pub fn floor_path(op: &Operation, calls: f64, body_bytes: usize, backend: Backend) -> String {
    let retry = u8::from(backend == Backend::Dynamo);
    match op.kind {
        Kind::Create | Kind::KeyedCreate => {
            format!("/floor/x?create=1&retry={retry}&bytes={body_bytes}")
        }
        Kind::Read | Kind::Replay => format!(
            "/floor/x?gets={}&value={}&bytes={body_bytes}",
            calls.round() as u64,
            op.value_bytes
        ),
    }
}
