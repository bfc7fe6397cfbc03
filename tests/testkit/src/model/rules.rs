//! The promises the model checks, each named after the sentence of
//! `docs/decisions.md` it checks (quoted; a test checks that every quote is
//! there, word for word, white space aside, so that the two cannot drift).

/// One promise of `docs/decisions.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    IdsNeverReusedOrDuplicated,
    PetsNeverChange,
    ResponsesShowTheStoredValue,
    IdAboveEveryAcknowledged,
    IdAtMost127Below,
    AcknowledgedPetIsFound,
    WalkListsEveryCommittedPetOnce,
    NoPetTwiceInOneWalk,
    NoneMissedWhenFollowing,
    StatusPageHoldsOnlyThatStatus,
    AscendingWithinEveryPage,
    FullPages,
    WalkEndsAtAnEmptyPage,
    NothingWasChanged,
    KeyedCreateExactlyOnce,
    KeyedReplaysConverge,
    HealthSaysWhatTheStoreHolds,
    InternalErrorOnlyForUnreadableData,
    StoreUnavailableOnlyWhenItFailed,
}

impl Rule {
    pub const ALL: [Rule; 19] = [
        Rule::IdsNeverReusedOrDuplicated,
        Rule::PetsNeverChange,
        Rule::ResponsesShowTheStoredValue,
        Rule::IdAboveEveryAcknowledged,
        Rule::IdAtMost127Below,
        Rule::AcknowledgedPetIsFound,
        Rule::WalkListsEveryCommittedPetOnce,
        Rule::NoPetTwiceInOneWalk,
        Rule::NoneMissedWhenFollowing,
        Rule::StatusPageHoldsOnlyThatStatus,
        Rule::AscendingWithinEveryPage,
        Rule::FullPages,
        Rule::WalkEndsAtAnEmptyPage,
        Rule::NothingWasChanged,
        Rule::KeyedCreateExactlyOnce,
        Rule::KeyedReplaysConverge,
        Rule::HealthSaysWhatTheStoreHolds,
        Rule::InternalErrorOnlyForUnreadableData,
        Rule::StoreUnavailableOnlyWhenItFailed,
    ];

    /// The words of `docs/decisions.md` this rule checks, as written there.
    pub fn sentence(self) -> &'static str {
        match self {
            Rule::IdsNeverReusedOrDuplicated => {
                "never reused or duplicated, also with many instances creating at once"
            }
            Rule::PetsNeverChange => "**Pets never change** after they are created",
            Rule::ResponsesShowTheStoredValue => {
                "**Default status** on create: `available`; responses show the stored value."
            }
            Rule::IdAboveEveryAcknowledged => {
                "one counter, so a create's id is above every id committed before it was sent."
            }
            Rule::IdAtMost127Below => {
                "a create's id may be below ids committed before it was sent: by at most 127 (63 with 16 lanes)."
            }
            Rule::AcknowledgedPetIsFound => {
                "a getPet sent once a pet is committed finds it."
            }
            Rule::WalkListsEveryCommittedPetOnce => {
                "every pet committed before a walk of the `next` links began appears in it exactly once"
            }
            Rule::NoPetTwiceInOneWalk => "no pet ever appears twice in one walk",
            Rule::NoneMissedWhenFollowing => {
                "every pet committed before that request was sent has been shown"
            }
            Rule::StatusPageHoldsOnlyThatStatus => {
                "a page of a `status` lists only pets of that status"
            }
            Rule::AscendingWithinEveryPage => {
                "**Order**: ascending `id` within every page, unfiltered or by status."
            }
            Rule::FullPages => {
                "every page holds `limit` pets unless it is the last of the walk"
            }
            Rule::WalkEndsAtAnEmptyPage => "**the walk ends at the page without one**, which is empty",
            Rule::NothingWasChanged => "nothing was changed",
            Rule::KeyedCreateExactlyOnce => "the service creates the pet **exactly once**",
            Rule::KeyedReplaysConverge => "every replay answers the same one of them",
            Rule::HealthSaysWhatTheStoreHolds => {
                "`GET /v1/health` says which layout the store holds"
            }
            Rule::InternalErrorOnlyForUnreadableData => "unexpected (unreadable stored data)",
            Rule::StoreUnavailableOnlyWhenItFailed => "the key-value store failed",
        }
    }
}
