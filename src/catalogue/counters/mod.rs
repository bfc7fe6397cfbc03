//! The counters layout: an id counter, a counter and slots per status; every
//! store of 1.0.0–1.2.0, SQLite, Redis. docs/key-value-layout.md.

mod carry;
mod create;
mod keyed;
mod walk;

pub use create::Taken;
pub use keyed::{follow, keyed};
pub use walk::{first_keys, walk, End};
