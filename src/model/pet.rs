//! The contract's Pet and its status, and the bounds the contract puts on
//! names and pages.

use serde::{Deserialize, Serialize};

/// Longest accepted pet name, in Unicode characters.
pub const MAX_NAME_CHARS: usize = 200;
/// `limit` bounds and default (contract: 1..=100, default 20).
pub const MIN_LIMIT: usize = 1;
pub const MAX_LIMIT: usize = 100;
pub const DEFAULT_LIMIT: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PetStatus {
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    pub const ALL: [PetStatus; 3] = [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    pub fn as_str(self) -> &'static str {
        match self {
            PetStatus::Available => "available",
            PetStatus::Pending => "pending",
            PetStatus::Sold => "sold",
        }
    }

    pub fn parse(s: &str) -> Option<PetStatus> {
        PetStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A pet as stored and returned. Field order is the contract's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pet {
    pub id: i64,
    pub name: String,
    #[serde(rename = "categoryId")]
    pub category_id: i64,
    pub status: PetStatus,
}
