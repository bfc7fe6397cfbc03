//! Exact counts of what the guest asked of the store ([`Stats`]), and the
//! kind of call each count goes to.

/// Exact counts of what the guest asked of the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Every key-value call (get, set, delete, exists, list-keys, increment,
    /// cas.new, cas.current, swap, and each batch call).
    pub calls: u64,
    /// Value bytes read and written.
    pub bytes: u64,
    pub gets: u64,
    /// `set`, `delete` and the batch writes.
    pub writes: u64,
    pub increments: u64,
    /// `cas.new`, `cas.current` and `swap`.
    pub cas: u64,
    /// `batch::get-many` (which fails every request on Spin's Redis).
    pub get_many: u64,
    /// `batch::set-many` (also counted in `writes`).
    pub set_many: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Read,
    Write,
    Increment,
    Cas,
}

impl Stats {
    /// Counts one call of `kind` and the value bytes it sends.
    pub(super) fn count(&mut self, kind: Kind, bytes_out: usize) {
        self.calls += 1;
        self.bytes += bytes_out as u64;
        match kind {
            Kind::Read => self.gets += 1,
            Kind::Write => self.writes += 1,
            Kind::Increment => self.increments += 1,
            Kind::Cas => self.cas += 1,
        }
    }
}
