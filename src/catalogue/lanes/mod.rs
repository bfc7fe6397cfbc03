//! The lanes layout (DynamoDB, `catalogue_layout = lanes`): ids come from
//! `w` lanes (32; 16 on a store 1.3.0 claimed), each a log of rounds;
//! round `n` of lane `k` is id `base + w·(n − 1) + k`. A create claims the next round of a lane by a
//! compare-and-swap of the lane's head, which holds that round's pet, after
//! storing the pet the head held before: so every round up to the head's is
//! a pet, stored or in the head, and there are no holes and no create
//! half-done. Lists merge the lanes; a cursor keeps one number per lane.
//! docs/key-value-layout.md, "The lanes layout".

mod claim;
mod head;
mod ids;
pub mod keyed;
mod merge;
mod pieces;

pub use claim::create;
pub use head::Head;
pub use ids::{lanes_of, rounds_below, Lanes};
pub use merge::page;
pub use pieces::first_keys;
