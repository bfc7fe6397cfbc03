//! The API reference page: a Spin component of its own, routed at `/`,
//! `/docs` and `/docs/...`, that serves our page (`page/`, compiled in) and
//! the viewer's files (swagger-ui-dist, copied from npm at build time and
//! mounted at `/viewer`). It reads no store and no variable.

pub mod pages;

#[cfg(target_arch = "wasm32")]
mod spin;
