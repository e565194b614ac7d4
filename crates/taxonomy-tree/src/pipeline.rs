//! The one road from a get-category-tree response to a committed snapshot:
//! decode → validate → compare → atomic write.
//!
//! `snapshot import` (saved responses) and `snapshot refresh` (live downloads) both go through
//! [`prepare`] and [`commit_all`]; nothing else writes into `snapshots/`. Preparing never touches
//! the disk, so a caller handling several sites can prepare them all and commit only when every
//! one succeeded.
//!
//! ## A commit killed half-way
//!
//! A commit renames its files one by one, so a process killed in the middle (power cut,
//! SIGKILL) leaves some sites new and some old, and a site's tree and expired-category file
//! can belong to different trees. Every such state builds and is repaired by the next
//! `refresh`, because:
//!
//! - each file is whole (see [`crate::atomic`]);
//! - the expired-category file names the tree it was checked against (version and
//!   fingerprint), so a file beside another tree is *out of step*
//!   ([`expired::read_in_step`]): the build compiles the site in without it, and `refresh`
//!   counts the site as stale and downloads it again;
//! - a site's mapping is renamed before its tree, so the only half-way state is the old tree
//!   beside the new mapping, which is out of step (never a new tree beside no mapping, which
//!   would look current);
//! - the commit holds the directory's lock and first removes what a killed commit left
//!   (temporary and kept files), so the next run leaves none.
//!
//! `tests/it/interrupted_commit.rs` kills `snapshot refresh` and `snapshot import` with SIGKILL
//! after each rename, with the test hook [`STOP_AFTER_RENAMES_ENV`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::conditions::{self, ConditionRule, ConditionsError, LeftOut};
use crate::decode::{DecodeError, Provenance, decode_tree};
use crate::diff::TreeDiff;
use crate::expired::{self, ExpiredError, ExpiredMapping};
use crate::snapshot::{self, SnapshotError};
use crate::structure::{self, StructureError};
use crate::tree::CategoryTree;
use marketplaces::Marketplace;

/// Why a response could not become a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The response did not decode or validate.
    #[error("{origin}: {source}")]
    Decode {
        /// Where the response came from (a file name or a URL).
        origin: String,
        /// What was wrong with it.
        source: DecodeError,
    },
    /// The tree id is not one of the known sites.
    #[error(
        "{origin}: category tree {tree_id} is not the tree of a known marketplace (known: {})",
        known_trees()
    )]
    UnknownSite {
        /// Where the response came from.
        origin: String,
        /// The tree id it carries.
        tree_id: u32,
    },
    /// The tree id and the marketplace id name different sites.
    #[error(
        "{origin}: category tree {tree_id} belongs to {expected}, but the response says {}",
        crate::tree::escaped(found)
    )]
    WrongMarketplace {
        /// Where the response came from.
        origin: String,
        /// The tree id.
        tree_id: u32,
        /// The marketplace of that tree.
        expected: Marketplace,
        /// The marketplace the response names.
        found: String,
    },
    /// Writing the snapshot failed; the old file is intact.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The expired-category mapping does not hold against the new tree (see
    /// [`expired`] for the rule), or its file could not be read or written.
    #[error(transparent)]
    Expired(#[from] ExpiredError),
    /// The condition policies (getItemConditionPolicies) do not fit the tree, or their file
    /// cannot be written.
    #[error(transparent)]
    Conditions(#[from] ConditionsError),
    /// The listing-structure policies (getListingStructurePolicies) do not fit the tree.
    #[error(transparent)]
    Structure(#[from] StructureError),
}

/// The tree ids of every marketplace, for messages: `0 EBAY_US, 100 EBAY_MOTORS_US, …`.
fn known_trees() -> String {
    let mut known = Vec::new();
    for m in Marketplace::ALL {
        known.push(format!("{} {m}", m.tree_id()));
        if let Some((language, tree)) = m.other_tree() {
            known.push(format!("{tree} {m} ({language})"));
        }
    }
    known.join(", ")
}

/// A decoded, validated tree ready to replace a site's snapshot.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The site.
    pub site: Marketplace,
    /// The new tree.
    pub tree: CategoryTree,
    /// The snapshot file it will replace.
    pub path: PathBuf,
    /// The changes against the committed snapshot; `None` when there was none (or it was
    /// unreadable, see `previous_error`).
    pub diff: Option<TreeDiff>,
    /// Why the committed snapshot could not be read, if it could not.
    pub previous_error: Option<String>,
    /// The rendered snapshot.
    pub text: String,
    /// `true` when the rendered snapshot differs from the bytes on disk (provenance included).
    pub changed: bool,
    /// `true` when the tree itself differs from the committed one: its categories, version,
    /// tree id, marketplace, language or completeness (not when only the date or source
    /// differs). This is what makes a snapshot stale.
    pub content_changed: bool,
    /// `true` when the committed snapshot was partial (`"complete": false`) and this tree is
    /// complete: writing it ends the downloads a partial snapshot causes on every refresh,
    /// even when no category changed.
    pub now_complete: bool,
    /// `true` when the committed snapshot was partial and the service gave back the same
    /// version with the same categories (a server that serves the partial copy itself, such
    /// as a fake over the snapshots): nothing says that this copy is complete, so it keeps
    /// the committed snapshot's provenance and stays partial.
    pub still_partial: bool,
    /// The expired-category file beside the snapshot (`EBAY_US.expired.json`).
    pub expired_path: PathBuf,
    /// The expired-category mapping that goes with `tree`: the committed one while it holds
    /// against the new tree, or the service's answer once [`with_expired`] set it.
    pub expired: Vec<ExpiredMapping>,
    /// The committed mapping (empty when there is no file).
    pub previous_expired: Vec<ExpiredMapping>,
    /// The new expired-category file, when it differs from the committed one (`None`: the file
    /// is left as it is): the service's answer ([`with_expired`]), or the committed mapping
    /// rewritten for the new tree when it holds against it but names another tree.
    pub expired_text: Option<String>,
    /// Why the committed mapping cannot go with the new tree; [`commit_all`] refuses to
    /// write while it is set (a refresh replaces the mapping with [`with_expired`]).
    pub expired_problem: Option<ExpiredError>,
    /// The condition-policy file beside the snapshot (`EBAY_US.conditions.json`).
    pub conditions_path: PathBuf,
    /// The new condition-policy file, when the service's answer ([`with_conditions`])
    /// differs from the committed one (`None`: the file is left as it is).
    pub conditions_text: Option<String>,
    /// What the service's policies came to ([`with_conditions`]); `None` when they were not
    /// fetched.
    pub conditions: Option<ConditionsReport>,
    /// The listing-structure file beside the snapshot (`EBAY_US.structure.json`).
    pub structure_path: PathBuf,
    /// The new listing-structure file, when the service's answer ([`with_structure`]) differs
    /// from the committed one (`None`: the file is left as it is).
    pub structure_text: Option<String>,
    /// What the service's listing-structure policies came to ([`with_structure`]); `None`
    /// when they were not fetched.
    pub structure: Option<StructureReport>,
}

/// What a site's listing-structure policies (getListingStructurePolicies) came to, for the
/// refresh's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructureReport {
    /// Leaves that take variations.
    pub supported: usize,
    /// Leaves that do not.
    pub not_supported: usize,
    /// Leaves of the tree.
    pub leaves: usize,
    /// The committed file's leaves (`None`: there was no file).
    pub previous: Option<usize>,
    /// Whether the answer was marked as made up (the toolkit's fake marketplace).
    pub made_up: bool,
    /// What the answer held that the file leaves out.
    pub left_out: structure::LeftOut,
    /// Why the service gave no policies for the site ([`structure_unavailable`]: its
    /// Metadata API refused the marketplace, errorId 46001). Nothing is written.
    pub unavailable: Option<String>,
}

/// What a site's condition policies came to, for the refresh's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionsReport {
    /// Distinct policies.
    pub policies: usize,
    /// Leaves with a policy.
    pub categories: usize,
    /// Leaves of the tree.
    pub leaves: usize,
    /// The committed file's distinct policies and leaves (`None`: there was no file).
    pub previous: Option<(usize, usize)>,
    /// Whether the answer was marked as made up (the toolkit's fake marketplace).
    pub made_up: bool,
    /// What the answer held that the file leaves out.
    pub left_out: LeftOut,
    /// Why the answer was not written: it held more than a bound of [`conditions`] allows
    /// (the error names the bound and the figure). The committed file is kept as it is, and
    /// `policies` and `categories` are its own (0 without one).
    pub refused: Option<String>,
    /// Why the service gave no policies for the site ([`conditions_unavailable`]: its
    /// Metadata API refused the marketplace, errorId 46001). Nothing is written: the
    /// committed file, if any, is kept as it is, and `policies` and `categories` are its own.
    pub unavailable: Option<String>,
}

impl Prepared {
    /// The mappings that are new since the committed file (or whose replacement changed): the
    /// leaves that expired since the last snapshot.
    pub fn newly_expired(&self) -> impl Iterator<Item = ExpiredMapping> + '_ {
        self.expired
            .iter()
            .filter(|m| !self.previous_expired.contains(m))
            .copied()
    }
}

/// Decodes and validates `body`, and compares it with the committed snapshot in
/// `snapshots_dir`. Nothing is written.
pub fn prepare(
    body: &[u8],
    origin: &str,
    provenance: &Provenance,
    snapshots_dir: &Path,
) -> Result<Prepared, PipelineError> {
    let tree = decode_tree(body, provenance).map_err(|source| PipelineError::Decode {
        origin: origin.to_string(),
        source,
    })?;
    prepare_tree(tree, origin, snapshots_dir)
}

/// Like [`prepare`], for a tree already decoded.
pub fn prepare_tree(
    mut tree: CategoryTree,
    origin: &str,
    snapshots_dir: &Path,
) -> Result<Prepared, PipelineError> {
    let tree_id = tree.meta.tree_id;
    let site = Marketplace::from_tree_id(tree_id).ok_or_else(|| PipelineError::UnknownSite {
        origin: origin.to_string(),
        tree_id,
    })?;
    if !tree
        .meta
        .marketplace_id
        .eq_ignore_ascii_case(site.marketplace_id())
    {
        return Err(PipelineError::WrongMarketplace {
            origin: origin.to_string(),
            tree_id,
            expected: site,
            found: tree.meta.marketplace_id.clone(),
        });
    }
    let path = snapshots_dir.join(site.snapshot_file_name());
    let mut text = snapshot::to_string(&tree);
    let mut now_complete = false;
    let mut still_partial = false;
    let (diff, previous_error, changed, content_changed) = match std::fs::read_to_string(&path) {
        Ok(old_text) => match snapshot::parse(&old_text, &path) {
            Ok(old) => {
                if !old.meta.complete
                    && old.meta.version == tree.meta.version
                    && old.meta.language == tree.meta.language
                    && old.categories == tree.categories
                {
                    still_partial = true;
                    tree.meta = old.meta.clone();
                    text = snapshot::to_string(&tree);
                }
                let changed = old_text != text;
                now_complete = !old.meta.complete && tree.meta.complete;
                let content_changed = old.categories != tree.categories
                    || old.meta.version != tree.meta.version
                    || old.meta.tree_id != tree.meta.tree_id
                    || old.meta.marketplace_id != tree.meta.marketplace_id
                    || old.meta.language != tree.meta.language
                    || old.meta.complete != tree.meta.complete;
                (
                    Some(TreeDiff::between(&old, &tree)),
                    None,
                    changed,
                    content_changed,
                )
            }
            Err(e) => (None, Some(e.to_string()), old_text != text, true),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None, true, true),
        Err(e) => (None, Some(format!("{}: {e}", path.display())), true, true),
    };
    // The committed mapping stays while it holds against the new tree; written for another
    // tree, it is rewritten for this one, so that it stays in step (see the module's
    // documentation).
    let expired_path = expired::path_beside(&path);
    let mut expired_text = None;
    let (previous_expired, expired_problem) = match std::fs::read_to_string(&expired_path) {
        Ok(text) => match expired::parse_unchecked(&text, &expired_path) {
            Ok(file) => {
                let problem = expired::checked(file.clone(), &text, &expired_path, &tree).err();
                if problem.is_none() && expired::out_of_step(&file, &tree).is_some() {
                    expired_text = Some(expired::to_string(&expired::carried_to(&file, &tree)));
                }
                (file.mappings, problem)
            }
            Err(e) => (Vec::new(), Some(e)),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
        Err(e) => (
            Vec::new(),
            Some(ExpiredError::Io {
                path: expired_path.clone(),
                source: std::sync::Arc::new(e),
            }),
        ),
    };
    // The committed condition policies are never rewritten for another tree: a file out of
    // step stays so (what an interrupted commit leaves must stay visible), and the build
    // leaves it out with a warning until a refresh fetches the policies again.
    let conditions_path = conditions::path_beside(&path);
    let structure_path = structure::path_beside(&path);
    Ok(Prepared {
        site,
        tree,
        path,
        diff,
        previous_error,
        text,
        changed,
        content_changed,
        now_complete,
        still_partial,
        expired_path,
        expired: previous_expired.clone(),
        previous_expired,
        expired_text,
        expired_problem,
        conditions_path,
        conditions_text: None,
        conditions: None,
        structure_path,
        structure_text: None,
        structure: None,
    })
}

/// `prepared` without new condition policies, because the service has none to give for
/// its site (`why`: e.g. getItemConditionPolicies refused the marketplace, errorId 46001): the
/// tree is committed alone, the committed policy file (if any) kept as it is, and the report
/// says why ([`ConditionsReport::unavailable`]).
pub fn conditions_unavailable(mut prepared: Prepared, why: String) -> Prepared {
    let previous = std::fs::read_to_string(&prepared.conditions_path)
        .ok()
        .and_then(|text| conditions::parse_unchecked(&text, &prepared.conditions_path).ok())
        .map(|old| (old.policies.len(), old.category_count()));
    let (policies, categories) = previous.unwrap_or_default();
    prepared.conditions_text = None;
    prepared.conditions = Some(ConditionsReport {
        policies,
        categories,
        leaves: prepared.tree.categories.iter().filter(|c| c.leaf).count(),
        previous,
        made_up: false,
        left_out: LeftOut::default(),
        refused: None,
        unavailable: Some(why),
    });
    prepared
}

/// Sets the tree's condition policies from the service's answer (getItemConditionPolicies),
/// one `(category id, rule)` a category, checked against the new tree (see [`conditions`]).
/// The file is rewritten when the policies, the tree or `made_up` changed; an answer without
/// a policy for any leaf creates no file. An answer above a bound of [`conditions`] (more
/// distinct policies, descriptors or values than eBay's data can hold) is not written: the
/// committed file is kept, and [`ConditionsReport::refused`] says why.
pub fn with_conditions(
    mut prepared: Prepared,
    policies: impl IntoIterator<Item = (u32, ConditionRule)>,
    source: &str,
    made_up: bool,
) -> Result<Prepared, PipelineError> {
    let answer = conditions::from_answer(
        policies,
        &prepared.tree,
        source,
        made_up,
        &prepared.conditions_path,
    );
    let committed = std::fs::read_to_string(&prepared.conditions_path)
        .ok()
        .and_then(|text| conditions::parse_unchecked(&text, &prepared.conditions_path).ok());
    let (file, left_out) = match answer {
        Ok(answer) => answer,
        Err(e) if e.is_above_bound() => {
            let previous = committed.map(|old| (old.policies.len(), old.category_count()));
            let (policies, categories) = previous.unwrap_or_default();
            prepared.conditions_text = None;
            prepared.conditions = Some(ConditionsReport {
                policies,
                categories,
                leaves: prepared.tree.categories.iter().filter(|c| c.leaf).count(),
                previous,
                made_up,
                left_out: LeftOut::default(),
                refused: Some(e.to_string()),
                unavailable: None,
            });
            return Ok(prepared);
        }
        Err(e) => return Err(e.into()),
    };
    let same = match &committed {
        Some(old) => {
            old.policies == file.policies
                && old.tree_id == file.tree_id
                && old.version == file.version
                && old.tree_fingerprint == file.tree_fingerprint
                && old.marketplace_id == file.marketplace_id
                && old.made_up == file.made_up
        }
        // Absent and empty are the same; an unreadable file is rewritten.
        None => file.policies.is_empty() && !prepared.conditions_path.exists(),
    };
    prepared.conditions_text = (!same).then(|| conditions::to_string(&file));
    prepared.conditions = Some(ConditionsReport {
        policies: file.policies.len(),
        categories: file.category_count(),
        leaves: prepared.tree.categories.iter().filter(|c| c.leaf).count(),
        previous: committed.map(|old| (old.policies.len(), old.category_count())),
        made_up,
        left_out,
        refused: None,
        unavailable: None,
    });
    Ok(prepared)
}

/// `prepared` without new listing-structure policies, because the service has none to give
/// for its site (`why`: getListingStructurePolicies refused the marketplace, errorId 46001):
/// the committed file (if any) is kept as it is, and the report says why.
pub fn structure_unavailable(mut prepared: Prepared, why: String) -> Prepared {
    let previous = std::fs::read_to_string(&prepared.structure_path)
        .ok()
        .and_then(|text| structure::parse_unchecked(&text, &prepared.structure_path).ok());
    prepared.structure_text = None;
    prepared.structure = Some(StructureReport {
        supported: previous.as_ref().map_or(0, |f| f.supported.len()),
        not_supported: previous.as_ref().map_or(0, |f| f.not_supported.len()),
        leaves: prepared.tree.categories.iter().filter(|c| c.leaf).count(),
        previous: previous.map(|f| f.category_count()),
        made_up: false,
        left_out: structure::LeftOut::default(),
        unavailable: Some(why),
    });
    prepared
}

/// Sets the tree's listing-structure policies from the service's answer
/// (getListingStructurePolicies), one `(category id, variationsSupported)` a category,
/// checked against the new tree (see [`structure`]). The file is rewritten when the policies,
/// the tree or `made_up` changed; an answer without a policy for any leaf creates no file.
pub fn with_structure(
    mut prepared: Prepared,
    policies: impl IntoIterator<Item = (u32, bool)>,
    source: &str,
    made_up: bool,
) -> Result<Prepared, PipelineError> {
    let (file, left_out) = structure::from_answer(
        policies,
        &prepared.tree,
        source,
        made_up,
        &prepared.structure_path,
    )?;
    let committed = std::fs::read_to_string(&prepared.structure_path)
        .ok()
        .and_then(|text| structure::parse_unchecked(&text, &prepared.structure_path).ok());
    let same = match &committed {
        Some(old) => {
            old.supported == file.supported
                && old.not_supported == file.not_supported
                && old.tree_id == file.tree_id
                && old.version == file.version
                && old.tree_fingerprint == file.tree_fingerprint
                && old.marketplace_id == file.marketplace_id
                && old.made_up == file.made_up
        }
        // Absent and empty are the same; an unreadable file is rewritten.
        None => file.category_count() == 0 && !prepared.structure_path.exists(),
    };
    prepared.structure_text = (!same).then(|| structure::to_string(&file));
    prepared.structure = Some(StructureReport {
        supported: file.supported.len(),
        not_supported: file.not_supported.len(),
        leaves: prepared.tree.categories.iter().filter(|c| c.leaf).count(),
        previous: committed.map(|old| old.category_count()),
        made_up,
        left_out,
        unavailable: None,
    });
    Ok(prepared)
}

/// Sets the tree's expired-category mapping from the service's answer (getExpiredCategories),
/// checked against the new tree (see [`expired`] for the rule). The file is
/// rewritten when the mappings or the tree's version changed; an empty answer creates no file.
pub fn with_expired(
    mut prepared: Prepared,
    mappings: impl IntoIterator<Item = ExpiredMapping>,
    source: &str,
) -> Result<Prepared, PipelineError> {
    let file = expired::from_answer(mappings, &prepared.tree, source, &prepared.expired_path)?;
    let committed = std::fs::read_to_string(&prepared.expired_path)
        .ok()
        .and_then(|text| expired::parse_unchecked(&text, &prepared.expired_path).ok());
    let same = match &committed {
        Some(old) => {
            old.mappings == file.mappings
                && old.tree_id == file.tree_id
                && old.version == file.version
                && old.tree_fingerprint == file.tree_fingerprint
                && old.marketplace_id == file.marketplace_id
        }
        // Absent and empty are the same: no new file for nothing.
        None => file.mappings.is_empty() && !prepared.expired_path.exists(),
    };
    prepared.expired_text = (!same).then(|| expired::to_string(&file));
    prepared.expired = file.mappings;
    prepared.expired_problem = None;
    Ok(prepared)
}

/// When [`commit_all`] replaces a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteWhen {
    /// When any byte would change, provenance included (`import`: the caller states it).
    AnyChange,
    /// Only when the tree changed (`refresh`: an unchanged tree keeps its recorded date, so
    /// refreshing does not churn the files).
    TreeChanged,
}

/// Test hook, inert unless set: `TAXONOMY_TEST_STOP_AFTER_RENAMES=N` makes [`commit_all`]
/// stop the process once `N` of its renames are done (`0`: before the first; the number of
/// files: after the last, before the kept files are removed). It says so on stderr, then
/// waits for a minute to be killed (a test sends SIGKILL) and aborts if it was not. Only
/// `tests/it/interrupted_commit.rs` sets it.
pub const STOP_AFTER_RENAMES_ENV: &str = "TAXONOMY_TEST_STOP_AFTER_RENAMES";

/// The [`STOP_AFTER_RENAMES_ENV`] hook for [`crate::atomic::commit_all_observed`].
fn stop_after_renames_hook() -> impl FnMut(usize) {
    let stop_at = std::env::var(STOP_AFTER_RENAMES_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    move |done| {
        if stop_at == Some(done) {
            eprintln!(
                "{STOP_AFTER_RENAMES_ENV}: stopped after {done} renames of the commit (a test hook), waiting to be killed"
            );
            std::thread::sleep(Duration::from_secs(60));
            std::process::abort();
        }
    }
}

/// Removes what killed commits into `dir` left: the temporary and kept files of every
/// snapshot and expired-category file. While the caller holds the directory's lock (see
/// [`crate::atomic::lock_dir`]), which every commit takes, all of them go, whatever their
/// age; without it (a directory that cannot be locked), only those older than
/// [`crate::atomic::STALE_AFTER`].
fn remove_leftovers(dir: &Path, locked: bool) {
    let older_than = if locked {
        Duration::ZERO
    } else {
        crate::atomic::STALE_AFTER
    };
    for site in Marketplace::ALL {
        let snapshot = dir.join(site.snapshot_file_name());
        crate::atomic::remove_leftovers(&expired::path_beside(&snapshot), older_than);
        crate::atomic::remove_leftovers(&conditions::path_beside(&snapshot), older_than);
        crate::atomic::remove_leftovers(&structure::path_beside(&snapshot), older_than);
        crate::atomic::remove_leftovers(&snapshot, older_than);
    }
}

/// Replaces every snapshot of `prepared` in `dir` (the snapshots directory they were prepared
/// against) that `when` says changed, all or nothing: every new file is first written and
/// flushed beside its target, and only when all of them are staged are they renamed into
/// place; a failed rename puts back the files already replaced (see
/// [`crate::atomic::commit_all`]). Returns the paths written. Each site's expired-category
/// file (see [`with_expired`]), condition-policy file ([`with_conditions`]) and
/// listing-structure file ([`with_structure`]) are part of the same commit, renamed before the
/// site's tree.
///
/// The commit holds the lock of `dir` and first removes what killed commits left there, even
/// when there is nothing to write. A process killed during the commit leaves a directory
/// that builds and that the next `refresh` repairs (see the [module documentation](self)).
pub fn commit_all(
    dir: &Path,
    prepared: &[Prepared],
    when: WriteWhen,
) -> Result<Vec<PathBuf>, PipelineError> {
    // The committed expired mappings must hold against the trees that replace theirs.
    if let Some(problem) = prepared.iter().find_map(|p| p.expired_problem.clone()) {
        return Err(problem.into());
    }
    let lock = crate::atomic::lock_dir(dir).map_err(|source| SnapshotError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    remove_leftovers(dir, lock.is_held());
    let mut staged = Vec::new();
    for p in prepared {
        // The expired mapping first: renamed before its tree, so that a commit killed between
        // the two leaves the old tree beside the new mapping, which is out of step with it
        // (never the new tree beside the old mapping or none, which could look current). Its
        // text was checked against `p.tree` in `with_expired` (or `prepare`).
        if let Some(text) = &p.expired_text {
            let s =
                crate::atomic::stage(&p.expired_path, text.as_bytes(), None).map_err(|source| {
                    ExpiredError::Io {
                        path: p.expired_path.clone(),
                        source: std::sync::Arc::new(source),
                    }
                })?;
            staged.push(s);
        }
        // The condition policies likewise, before the tree: their header names the tree.
        if let Some(text) = &p.conditions_text {
            let s = crate::atomic::stage(&p.conditions_path, text.as_bytes(), None).map_err(
                |source| ConditionsError::Io {
                    path: p.conditions_path.clone(),
                    source: std::sync::Arc::new(source),
                },
            )?;
            staged.push(s);
        }
        // The listing-structure policies likewise (getListingStructurePolicies).
        if let Some(text) = &p.structure_text {
            let s = crate::atomic::stage(&p.structure_path, text.as_bytes(), None).map_err(
                |source| StructureError::Io {
                    path: p.structure_path.clone(),
                    source: std::sync::Arc::new(source),
                },
            )?;
            staged.push(s);
        }
        let write = match when {
            WriteWhen::AnyChange => p.changed,
            WriteWhen::TreeChanged => p.content_changed,
        };
        if write {
            // `p.text` was rendered from a validated tree in `prepare`.
            let s = crate::atomic::stage(&p.path, p.text.as_bytes(), None).map_err(|source| {
                SnapshotError::Io {
                    path: p.path.clone(),
                    source,
                }
            })?;
            staged.push(s);
        }
    }
    let written: Vec<PathBuf> = staged.iter().map(|s| s.path().to_path_buf()).collect();
    crate::atomic::commit_all_observed(staged, stop_after_renames_hook()).map_err(|e| {
        SnapshotError::Io {
            path: e.path,
            source: e.source,
        }
    })?;
    Ok(written)
}
