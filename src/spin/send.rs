//! Writes a whole response before handing it to Spin. Shared, as a file, with
//! the benchmarks' floor component (`bench/floor`), so both deliver responses
//! the same way and the floor isolates everything else.

use spin_sdk::http::{Fields, OutgoingBody, OutgoingResponse, ResponseOutparam};

/// Writes the whole response — head, `content-length`, body, finish — and
/// only then sets the outparam: Spin then sends it in one go, without the
/// 40 ms delayed-ACK stall a head-first response suffers on keep-alive.
pub fn whole(
    outparam: ResponseOutparam,
    status: u16,
    mut headers: Vec<(String, Vec<u8>)>,
    body_bytes: &[u8],
) -> Result<(), String> {
    // 204 and 304 have no body, and no content-length (RFC 9110 §8.6).
    if status != 204 && status != 304 {
        headers.push((
            "content-length".to_string(),
            body_bytes.len().to_string().into_bytes(),
        ));
    }
    let fields = Fields::from_list(&headers).map_err(|e| format!("headers: {e:?}"))?;
    let outgoing = OutgoingResponse::new(fields);
    outgoing
        .set_status_code(status)
        .map_err(|()| "status code rejected".to_string())?;
    let body = outgoing.body().map_err(|()| "body taken".to_string())?;
    {
        let stream = body.write().map_err(|()| "body stream taken".to_string())?;
        let mut rest = body_bytes;
        while !rest.is_empty() {
            let permitted = stream.check_write().map_err(|e| format!("{e:?}"))?;
            if permitted == 0 {
                stream.subscribe().block();
                continue;
            }
            let n = rest
                .len()
                .min(usize::try_from(permitted).unwrap_or(usize::MAX));
            stream.write(&rest[..n]).map_err(|e| format!("{e:?}"))?;
            rest = &rest[n..];
        }
        stream.blocking_flush().map_err(|e| format!("{e:?}"))?;
    }
    OutgoingBody::finish(body, None).map_err(|e| format!("finish: {e:?}"))?;
    outparam.set(outgoing);
    Ok(())
}
