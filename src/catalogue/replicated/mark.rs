//! What `ctr:id` holds in a store of the replicated layout: a mark that
//! the first creates write, so that the default build refuses the store
//! instead of misreading it, and this build refuses the default's.

use crate::errors::ApiError;

use crate::catalogue::layout::unknown_format;

/// The mark (not a counter: any other release refuses it, never misreads).
pub const MARK: &str = "petstore-replicated 1";

/// `ctr:id` as read: absent or this layout's mark, else refused.
pub fn check_mark(word: Option<&[u8]>) -> Result<(), ApiError> {
    match word {
        None => Ok(()),
        Some(bytes) if bytes == MARK.as_bytes() => Ok(()),
        Some(bytes) => Err(unknown_format(bytes)),
    }
}
