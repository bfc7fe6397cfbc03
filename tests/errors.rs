//! The one error type as the log line reads it (status, code, message,
//! then what the log may add) and as a cause chain keeps it.

use std::error::Error;

use petstore::errors::ApiError;
use petstore::store::StoreError;

#[test]
fn an_error_reads_as_its_answer_and_keeps_its_cause() {
    let e = ApiError::StoreUnavailable(StoreError("timeout".into()));
    assert_eq!(
        e.to_string(),
        "503 store_unavailable: the data store is unavailable; nothing was changed, \
         retry later (key-value store: timeout)"
    );
    assert_eq!(e.source().unwrap().to_string(), "key-value store: timeout");
    let wrong = ApiError::Unauthorized { wrong_key: true };
    assert_eq!(
        wrong.to_string(),
        "401 unauthorized: the API key is not valid"
    );
    assert!(wrong.source().is_none());
}
