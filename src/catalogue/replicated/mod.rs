//! The replicated layout, the edge build's: a store without atomics whose
//! replicas apply writes late and in any order (Akamai Functions).
//! docs/replicated-layout.md.

mod create;
mod entry;
mod mend;
mod pieces;

pub(super) use create::RECORD;
pub use create::{create, draw, keys_at};
pub(super) use pieces::HEADER as PIECE;

use super::created::{Clock, Page, Result};
use super::reader::{found as found_in, BATCH_KEYS};
use super::{cursor::Parts, cursor::Placed, record::listed};
use crate::{model::ListName, model::ListQuery, store::KvStore};
use pieces::{make, piece_key, Piece, PIECES_WRITTEN};
use {create::LANDS_WITHIN_MS, entry::Entry};

/// The replicated layout's mark in `ctr:id`: not a counter, so each build
/// refuses the other's store.
pub const MARK: &[u8] = b"petstore-replicated 1";

/// The keys a page reads first, with `ctr:id`: the piece its cursor names
/// and the next (a walk's first page: pieces 0 and 1); none for a cursor
/// made by the other build, or one that names no piece (2.0.0's).
pub fn first_keys(list: ListName, parts: &Parts) -> Vec<String> {
    hinted(list, start(parts).flatten())
}

/// The keys of the piece hinted and the next, if one is.
fn hinted(list: ListName, hint: Option<u64>) -> Vec<String> {
    let two = |n| vec![piece_key(list, n), piece_key(list, n + 1)];
    hint.map_or(Vec::new(), two)
}

/// Where a page starts: `None` for the other build's cursor (its walk has
/// ended here); else the piece hinted, if any.
fn start(parts: &Parts) -> Option<Option<u64>> {
    let ours = parts.counted().is_none() && parts.laned().is_none();
    ours.then(|| parts.placed().map_or(Some(0), |_| parts.piece()))
}

/// A page of what has settled by the horizon (`settle`: the delays of
/// `Deployment::settle_ms`), from the first keys `found`: pets past the
/// cursor's place from piece `n` (the hint) on: one `get-many` of the mark
/// and pieces `n` and `n + 1`, one of the pets. `list-keys` only to make
/// pieces (one missing after a full one, or the open one `interval` behind;
/// mending halves first), or where the pieces do not follow on from the
/// place (or no piece is hinted): then the page is made from the list's
/// entries, as 2.0.0's were.
pub fn page<S: KvStore>(
    store: &S,
    found: &[(String, Vec<u8>)],
    (clock, query, parts): (&Clock, &ListQuery, &Parts),
    (settle_ms, interval): (u64, u64),
) -> Result<Page> {
    let Some(hint) = start(parts) else {
        return Ok(Page::default());
    };
    let horizon = clock.now_ms.saturating_sub(LANDS_WITHIN_MS + settle_ms);
    let (list, limit) = (query.list(), query.limit);
    let mut n = hint.unwrap_or_default();
    let read = |k: &String| found_in(found, k).and_then(|b| Piece::decode(list, b));
    let mut pieces: Vec<Option<Piece>> = hinted(list, hint).iter().map(read).collect();
    let (mut shown, mut notes, mut made) = (Vec::new(), Vec::new(), false);
    let (mut at, mut i, mut last) = (parts.placed().unwrap_or_default(), 0, n);
    // Up to where every entry was shown or passed; where the chain's
    // next piece starts, if known (the list's start, a full piece's end).
    let (mut covered, mut chain) = (at, (hint == Some(0)).then_some(Placed::default()));
    loop {
        let from = match pieces.get_mut(i).and_then(Option::take) {
            Some(piece) if piece.start() <= covered => {
                let before = shown.len();
                let past = piece.entries().iter().filter(|e| e.place() > at);
                shown.extend(past.take(limit - before).cloned());
                if shown.len() > before {
                    (at, last) = (shown[shown.len() - 1].place(), n + i as u64);
                }
                let stale = piece.made_ms().saturating_add(interval) < horizon;
                if shown.len() == limit || !(piece.full() || stale) {
                    break;
                }
                if piece.full() {
                    chain = piece.entries().last().map(Entry::place);
                    (covered, i) = (covered.max(chain.unwrap_or_default()), i + 1);
                    continue;
                }
                Some(piece.start())
            }
            Some(_) => None,
            None => chain,
        };
        if made || (from.is_none() && !shown.is_empty()) {
            break;
        }
        // The keys' strings go once mended and parsed.
        let (entries, until) = mend::mend(store, &store.list_keys()?, horizon)?;
        let fresh = make(&entries, list, from.unwrap_or_default(), until);
        if from.is_none() {
            // The whole list's pieces, read from the one past `at`.
            let past = |p: &Piece| p.entries().last().is_some_and(|e| e.place() > at);
            (n, i) = (0, fresh.iter().take_while(|p| p.full() && !past(p)).count());
            pieces.clear();
        } else {
            let writes: Vec<(String, Vec<u8>)> = (fresh.iter().zip(n + i as u64..))
                .take(PIECES_WRITTEN)
                .map(|(piece, k)| (piece_key(list, k), piece.encode()))
                .collect();
            if let Err(e) = store.set_many(&writes) {
                let first = &writes[0].0;
                notes.push(format!("index pieces from {first} not written ({e})"));
            }
            pieces.truncate(i);
        }
        pieces.extend(fresh.into_iter().map(Some));
        made = true;
    }
    pets(store, &shown, last, notes)
}

/// The pets of `entries` (a replica behind its listing may miss some),
/// and the cursor past them, naming piece `last`.
fn pets(store: &impl KvStore, entries: &[Entry], last: u64, notes: Vec<String>) -> Result<Page> {
    let keys: Vec<String> = entries.iter().map(Entry::key).collect();
    let mut found = Vec::new();
    for chunk in keys.chunks(BATCH_KEYS) {
        found.extend(store.get_many(chunk)?);
    }
    let mut pets = Vec::with_capacity(entries.len());
    for key in &keys {
        if let Some(json) = found_in(&found, key) {
            pets.push(listed(key, json.to_vec())?);
        }
    }
    // The list's end links on too; the empty page ends a walk.
    let next = entries.last().map(|e| e.place().cursor(last));
    Ok(Page::new(pets, next, notes))
}
