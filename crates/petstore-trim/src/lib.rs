//! Trims a core WebAssembly module built by `cargo`: drops the custom
//! sections that describe WIT worlds the module does not need. Spin turns a
//! `wasm32-wasip1` module into a component with the type information of its
//! `component-type:*` sections; spin-sdk 5.2 links in the type of Spin's
//! whole `platform` world (39 KB), and its executor's `wasi` crate three
//! worlds more (33 KB), while our own world (`wit/world.wit`) and the SDK's
//! HTTP trigger world already describe every import the module has
//! (`scripts/check-imports` builds the component from the trimmed module to
//! show it). Nothing else of the module changes, byte for byte.

/// Sections whose name contains one of these are dropped.
pub const DROPPED: [&str; 2] = [
    // spin-sdk's bindings of Spin's whole platform.
    ":spin:up@",
    // The `wasi` crate's worlds (spin-executor's dependency).
    "rust-wasi-from-crates-io",
];

/// The module without the custom sections named by [`DROPPED`]; `None` if
/// `module` is not a core module this reader understands.
pub fn trim(module: &[u8]) -> Option<Vec<u8>> {
    let header = module.get(..8)?;
    if header != b"\0asm\x01\0\0\0" {
        return None;
    }
    let mut out = header.to_vec();
    let mut at = 8;
    while at < module.len() {
        let start = at;
        let id = module[at];
        let (size, after) = leb128(module, at + 1)?;
        let end = after.checked_add(size)?;
        let payload = module.get(after..end)?;
        if !(id == 0 && dropped(payload)) {
            out.extend_from_slice(&module[start..end]);
        }
        at = end;
    }
    Some(out)
}

/// Whether a custom section's payload (its name first) names a dropped world.
fn dropped(payload: &[u8]) -> bool {
    let Some((len, at)) = leb128(payload, 0) else {
        return false;
    };
    let name = payload.get(at..at + len).unwrap_or_default();
    let name = String::from_utf8_lossy(name);
    name.starts_with("component-type:") && DROPPED.iter().any(|d| name.contains(d))
}

/// An unsigned LEB128 at `at` (at most 5 bytes): its value, and where the
/// rest begins.
fn leb128(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for i in 0..5 {
        let byte = *bytes.get(at + i)?;
        value |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, at + i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(name: &str, data: &[u8]) -> Vec<u8> {
        let mut payload = vec![name.len() as u8];
        payload.extend_from_slice(name.as_bytes());
        payload.extend_from_slice(data);
        let mut section = vec![0, payload.len() as u8];
        section.extend(payload);
        section
    }

    #[test]
    fn only_the_named_worlds_go() {
        let mut module = b"\0asm\x01\0\0\0".to_vec();
        let kept = custom("component-type:wit-bindgen:0.51.0:petstore:world", b"ours");
        let gone = custom(
            "component-type:wit-bindgen:0.51.0:spin:up@3.6.0:platform",
            b"sdk",
        );
        let name = custom("name", b"names");
        let code = [10u8, 3, 1, 0, 11];
        for part in [&kept[..], &gone, &name, &code] {
            module.extend_from_slice(part);
        }
        let trimmed = trim(&module).unwrap();
        let mut expected = b"\0asm\x01\0\0\0".to_vec();
        for part in [&kept[..], &name, &code] {
            expected.extend_from_slice(part);
        }
        assert_eq!(trimmed, expected);
        assert_eq!(
            trim(&trimmed).unwrap(),
            trimmed,
            "trimming twice changes nothing"
        );
        assert_eq!(trim(b"not wasm"), None);
        assert_eq!(
            trim(&module[..module.len() - 1]),
            None,
            "a section cut short"
        );
    }
}
