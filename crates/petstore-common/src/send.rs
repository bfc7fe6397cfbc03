//! Delivers a response to Spin: whole, before handing it over, unless it is
//! too large. Used by the API and the reference page. (The benchmarks'
//! floor writes its body with the SDK's own sink instead, so that what this
//! file costs is counted as ours.) Its failures are text for the access
//! log: what was being done, and the host's error.

use spin_sdk::http::{Fields, OutgoingBody, OutgoingResponse, ResponseOutparam};

/// Past this many bytes a body is handed to Spin before it is written: until
/// Spin has the response nothing drains the body's buffer, and on Spin 4.0.2
/// a body of 1.7 MB written first blocks forever (458 KB went through). The
/// API's largest body, a page of 100 of the longest pets, is about 130 KB;
/// only the reference page's viewer bundle is larger.
const WHOLE_MAX: usize = 256 * 1024;

/// Sends a response. Up to [`WHOLE_MAX`], whole — head, `content-length`,
/// body, finish — and only then sets the outparam: Spin then sends it in one
/// go, without the 40 ms delayed-ACK stall a head-first response suffers on
/// keep-alive. A larger body is streamed after the head.
pub fn deliver(
    outparam: ResponseOutparam,
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body_bytes: &[u8],
) -> Result<(), String> {
    let (outgoing, body) = head(status, headers, body_bytes.len())?;
    if body_bytes.len() > WHOLE_MAX {
        outparam.set(outgoing);
        return write_all(body, body_bytes);
    }
    write_all(body, body_bytes)?;
    outparam.set(outgoing);
    Ok(())
}

/// Writes the body and finishes it.
fn write_all(body: OutgoingBody, bytes: &[u8]) -> Result<(), String> {
    write(&body, bytes)?;
    OutgoingBody::finish(body, None).map_err(|e| format!("finishing the body: {e:?}"))
}

/// The response's head, with its `content-length`, and its body to write.
fn head(
    status: u16,
    mut headers: Vec<(String, Vec<u8>)>,
    length: usize,
) -> Result<(OutgoingResponse, OutgoingBody), String> {
    // 204 and 304 have no body, and no content-length (RFC 9110 §8.6).
    if status != 204 && status != 304 {
        headers.push((
            "content-length".to_string(),
            length.to_string().into_bytes(),
        ));
    }
    let fields = Fields::from_list(&headers).map_err(|e| format!("the headers: {e:?}"))?;
    let outgoing = OutgoingResponse::new(fields);
    outgoing
        .set_status_code(status)
        .map_err(|()| format!("status code {status} rejected"))?;
    let body = outgoing.body().map_err(|()| "body taken".to_string())?;
    Ok((outgoing, body))
}

/// Writes all of `bytes` to `body`, as fast as its stream takes them.
fn write(body: &OutgoingBody, bytes: &[u8]) -> Result<(), String> {
    let stream = body.write().map_err(|()| "body stream taken".to_string())?;
    let mut rest = bytes;
    while !rest.is_empty() {
        let permitted = stream
            .check_write()
            .map_err(|e| format!("waiting to write the body: {e:?}"))?;
        if permitted == 0 {
            stream.subscribe().block();
            continue;
        }
        let n = rest
            .len()
            .min(usize::try_from(permitted).unwrap_or(usize::MAX));
        stream
            .write(&rest[..n])
            .map_err(|e| format!("writing the body: {e:?}"))?;
        rest = &rest[n..];
    }
    stream
        .blocking_flush()
        .map_err(|e| format!("flushing the body: {e:?}"))
}
