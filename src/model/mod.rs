//! The contract's types, and the parsing that turns raw input into them:
//! a request body becomes a [`NewPet`] (`new_pet`), a query string a
//! [`ListQuery`] (`query`) with its [`Cursor`] (`cursor`), an `Idempotency-Key` header an
//! [`IdempotencyKey`] (`idempotency_key`), once; past this module the core
//! only handles validated values.

mod cursor;
mod idempotency_key;
mod new_pet;
mod pet;
mod query;

pub use cursor::{number, padded, split_digits, Cursor};
pub use idempotency_key::IdempotencyKey;
pub use new_pet::{NewPet, PetName};
pub use pet::{Pet, PetStatus, DEFAULT_LIMIT, MAX_LIMIT, MAX_NAME_CHARS, MIN_LIMIT};
pub use query::{parse_digits, ListName, ListQuery};
