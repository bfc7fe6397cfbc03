//! What the store must hold after every run, whatever the requests saw:
//! the promises of the formats (docs/key-value-layout.md,
//! docs/replicated-layout.md) checked on the keys and values themselves,
//! read here from the formats table, not through the component's code. A
//! bug that breaks one is caught though no client read the broken part yet.

use std::collections::{BTreeMap, BTreeSet};

use petstore_testkit::model::Answer;
use serde_json::Value;

use crate::world::World;

/// A merged block's header (`ixm:{status}:{j}`, positions 32j + 1 to
/// 32j + 32, a line each: `<position> <id> <pet JSON>`).
const BLOCK: &str = "petstore-index-piece 2";
const BLOCK_LEN: i64 = 32;
/// A replicated index piece's header: `<start t> <start id> <made ms>`,
/// then an entry's key a line; 200 entries when full.
const PIECE: &str = "petstore-replicated-piece 1 ";
const PIECE_ENTRIES: usize = 200;

/// What the store breaks, a sentence each.
pub fn check(world: &World) -> Vec<String> {
    let stored: BTreeMap<String, Vec<u8>> = world
        .shared
        .keys()
        .into_iter()
        .filter_map(|k| Some((k.clone(), world.shared.peek(&k)?)))
        .collect();
    let mut pets = pets(&stored);
    if world.layout.layout == "replicated" {
        replicated(&stored, &pets, &acknowledged(world))
    } else {
        // On lanes a lane's newest pet is in its head, not yet `pet:{id}`:
        // the pets the run's answers showed count as stored too.
        for (id, status) in world.shown_in(0..usize::MAX) {
            pets.entry(id).or_insert(Pet {
                status,
                stamp: None,
            });
        }
        blocks(&stored, &pets)
    }
}

/// A committed pet: its status, and its create's time if stamped.
struct Pet {
    status: String,
    stamp: Option<u64>,
}

/// The committed pets by id (a pending record is none).
fn pets(stored: &BTreeMap<String, Vec<u8>>) -> BTreeMap<i64, Pet> {
    let mut pets = BTreeMap::new();
    for (key, value) in stored {
        let Some(id) = key.strip_prefix("pet:").and_then(|id| id.parse().ok()) else {
            continue;
        };
        let text = String::from_utf8_lossy(value);
        if text.starts_with("petstore-pending") {
            continue;
        }
        // Bare JSON, or after a line `petstore-pet 1 <nonce or +time>`.
        let (head, json) = match text.strip_prefix("petstore-pet 1 ") {
            Some(rest) => rest.split_once('\n').unwrap_or((rest, "")),
            None => ("", &*text),
        };
        let stamp = head.strip_prefix('+').and_then(|t| t.parse().ok());
        if let Ok(pet) = serde_json::from_str::<Value>(json) {
            let status = pet["status"].as_str().unwrap_or_default().to_string();
            pets.insert(id, Pet { status, stamp });
        }
    }
    pets
}

/// Lanes: each merged block lists, at each of its positions, the pet a
/// walk of its status has there, among every pet stored. A block written
/// before its ids settled is shifted once a create lands below its last.
fn blocks(stored: &BTreeMap<String, Vec<u8>>, pets: &BTreeMap<i64, Pet>) -> Vec<String> {
    let mut broken = Vec::new();
    for (key, value) in stored.range("ixm:".to_string()..="ixm;".to_string()) {
        let mut parts = key.split(':').skip(1);
        let (Some(status), Some(Ok(j))) = (parts.next(), parts.next().map(str::parse::<i64>))
        else {
            continue;
        };
        let text = String::from_utf8_lossy(value);
        // Unreadable: a state's garbage, which pages answer for.
        let Some(lines) = text.strip_prefix(BLOCK) else {
            continue;
        };
        let ids: Vec<i64> = pets
            .iter()
            .filter(|(_, p)| p.status == status)
            .map(|(id, _)| *id)
            .collect();
        for line in lines.split('\n').skip(1) {
            let mut words = line.splitn(3, ' ');
            let position: i64 = words.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let id: i64 = words.next().and_then(|i| i.parse().ok()).unwrap_or(0);
            let within = (BLOCK_LEN * j + 1..=BLOCK_LEN * (j + 1)).contains(&position);
            let there = ids.get(position as usize - 1).copied();
            if !within || there != Some(id) {
                broken.push(format!(
                    "{key} lists pet {id} at position {position}, where the {status} pets stored have {there:?}"
                ));
                break;
            }
        }
    }
    broken
}

/// The ids a create answered 201 for: acknowledged, so promised.
fn acknowledged(world: &World) -> BTreeSet<i64> {
    let history = world.history();
    let created = history.events.iter().filter_map(|e| match &e.answer {
        Answer::Created { pet, .. } => pet["id"].as_i64(),
        _ => None,
    });
    created.collect()
}

/// An entry `ixr:{t}:{id}:{status}`: its place and status.
fn entry(key: &str) -> Option<((u64, i64), &str)> {
    let mut parts = key.strip_prefix("ixr:")?.split(':');
    let t = parts.next()?.parse().ok()?;
    let id = parts.next()?.parse().ok()?;
    Some(((t, id), parts.next()?))
}

/// The replicated layout: a pet has one entry, at its create's time and
/// in its status; each index piece holds entries of its list past its
/// start, created by the time it was made, ascending, and every entry of
/// an acknowledged create in that span (up to its last, once full).
fn replicated(
    stored: &BTreeMap<String, Vec<u8>>,
    pets: &BTreeMap<i64, Pet>,
    acknowledged: &BTreeSet<i64>,
) -> Vec<String> {
    let mut broken = Vec::new();
    let entries: Vec<((u64, i64), &str)> = stored.keys().filter_map(|k| entry(k)).collect();
    let mut seen = BTreeMap::new();
    for &((t, id), status) in &entries {
        if let Some(other) = seen.insert(id, t) {
            broken.push(format!("pet {id} has two entries, at {other} and {t}"));
        }
        match pets.get(&id) {
            Some(pet) if pet.stamp.is_some_and(|s| s != t) || pet.status != status => {
                broken.push(format!(
                    "pet {id}'s entry is at {t} ({status}), its record at {:?} ({})",
                    pet.stamp, pet.status
                ))
            }
            _ => {}
        }
    }
    for (key, value) in stored.range("ixp:".to_string()..="ixp;".to_string()) {
        let list = key.split(':').nth(1).unwrap_or_default();
        let text = String::from_utf8_lossy(value);
        let Some(rest) = text.strip_prefix(PIECE) else {
            continue;
        };
        let mut lines = rest.split('\n');
        let head: Vec<u64> = lines
            .next()
            .unwrap_or_default()
            .split(' ')
            .filter_map(|w| w.parse().ok())
            .collect();
        let [start_t, start_id, made] = head[..] else {
            continue;
        };
        let start = (start_t, start_id as i64);
        let held: Vec<(u64, i64)> = lines.filter_map(entry).map(|(p, _)| p).collect();
        let in_list = |status: &str| list == "all" || list == status;
        let fits = |p: &(u64, i64)| *p > start && p.0 <= made;
        if held.iter().any(|p| !fits(p)) || held.windows(2).any(|w| w[0] >= w[1]) {
            broken.push(format!(
                "{key} (from {start:?}, made at {made}) holds {held:?}: past its time or out of order"
            ));
            continue;
        }
        let full = held.len() == PIECE_ENTRIES;
        let last = held.last().copied().unwrap_or(start);
        let missed = entries.iter().find(|(p, status)| {
            let span = fits(p) && (!full || *p <= last);
            span && in_list(status) && acknowledged.contains(&p.1) && !held.contains(p)
        });
        if let Some((p, _)) = missed {
            broken.push(format!(
                "{key} (from {start:?}, made at {made}) lacks the entry at {p:?} of an acknowledged create"
            ));
        }
    }
    broken
}
