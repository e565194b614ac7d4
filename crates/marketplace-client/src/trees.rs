//! Fetching the trees of several sites from the live service at once (getCategoryTree, then
//! getExpiredCategories), each through the pipeline (decode, validate, compare) without writing: `snapshot refresh` commits the result
//! when every site succeeded, and the build script uses the trees directly.
//!
//! Each full tree (getCategoryTree) takes 2 to 5 seconds, so the sites are fetched concurrently, one
//! thread each, with one shared client and token source.
//!
//! Before downloading a tree again, ask whether it changed: the service advises comparing
//! `categoryTreeVersion` with the one held. [`check_versions`] asks getDefaultCategoryTreeId (a
//! few hundred bytes) for each site and says, with [`Staleness`], which held trees must be
//! downloaded again; `snapshot refresh` and the build script download only those.

use std::path::Path;

use crate::model::DefaultTreeId;
use crate::taxonomy::{ApiError, TaxonomyClient};
use marketplaces::Marketplace;
use taxonomy_tree::clock::today_utc;
use taxonomy_tree::conditions::{
    self, ConditionEntry, ConditionRule, ConditionsFile, DescriptorEntry,
};
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::expired::{self, ExpiredError, ExpiredMapping};
use taxonomy_tree::pipeline::{self, PipelineError, Prepared};
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::{CategoryTree, TreeMeta};

/// What happens to one site during a refresh, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The request is on its way.
    Fetching,
    /// The body arrived (its size in bytes); decoding and validating.
    Decoding(usize),
    /// Decoded, validated and compared.
    Done,
    /// Failed; the message says why.
    Failed(String),
}

/// Why a site could not be refreshed.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    /// The download failed.
    #[error("{site}: download failed: {source}")]
    Fetch {
        /// The site.
        site: Marketplace,
        /// The client's error.
        source: ApiError,
    },
    /// The body did not decode or validate, or is another site's tree.
    #[error("{site}: {source}")]
    Pipeline {
        /// The site.
        site: Marketplace,
        /// What was wrong.
        source: PipelineError,
    },
    /// getDefaultCategoryTreeId failed, so whether the tree changed is unknown.
    #[error("{site}: the version check (getDefaultCategoryTreeId) failed: {source}")]
    VersionCheck {
        /// The site.
        site: Marketplace,
        /// The client's error.
        source: ApiError,
    },
    /// The fetching thread panicked (a bug).
    #[error("{site}: the fetch panicked")]
    Panicked {
        /// The site.
        site: Marketplace,
    },
}

/// Fetches every site in `sites` concurrently and prepares each against the committed snapshot
/// in `snapshots_dir`. Nothing is written. `on_progress` is called from the fetching threads.
pub fn fetch_and_prepare(
    client: &TaxonomyClient,
    sites: &[Marketplace],
    language: Option<&str>,
    snapshots_dir: &Path,
    on_progress: &(dyn Fn(Marketplace, Progress) + Sync),
) -> Vec<Result<Prepared, RefreshError>> {
    let taken_at = today_utc();
    per_site_concurrently(sites.iter().copied(), |site| {
        on_progress(site, Progress::Fetching);
        let result = fetch_one(
            client,
            site,
            language,
            &taken_at,
            snapshots_dir,
            on_progress,
        );
        match &result {
            Ok(_) => on_progress(site, Progress::Done),
            Err(e) => on_progress(site, Progress::Failed(e.to_string())),
        }
        result
    })
}

/// Runs `work` for every site on a thread of its own and returns the results in the order of
/// `sites`; a thread that panicked gives [`RefreshError::Panicked`].
fn per_site_concurrently<T: Send>(
    sites: impl Iterator<Item = Marketplace>,
    work: impl Fn(Marketplace) -> Result<T, RefreshError> + Sync,
) -> Vec<Result<T, RefreshError>> {
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = sites
            .map(|site| (site, scope.spawn(move || work(site))))
            .collect();
        handles
            .into_iter()
            .map(|(site, handle)| {
                handle
                    .join()
                    .unwrap_or(Err(RefreshError::Panicked { site }))
            })
            .collect()
    })
}

fn fetch_one(
    client: &TaxonomyClient,
    site: Marketplace,
    language: Option<&str>,
    taken_at: &str,
    snapshots_dir: &Path,
    on_progress: &(dyn Fn(Marketplace, Progress) + Sync),
) -> Result<Prepared, RefreshError> {
    let body = client
        .fetch_tree_body(site, language)
        .map_err(|source| RefreshError::Fetch { site, source })?;
    on_progress(site, Progress::Decoding(body.bytes.len()));
    let provenance = Provenance {
        language: body.language.clone(),
        taken_at: taken_at.to_string(),
        source: format!("{} (Accept-Language: {})", body.url, body.language),
        note: None,
    };
    let prepared = pipeline::prepare(&body.bytes, body.url.as_str(), &provenance, snapshots_dir)
        .map_err(|source| RefreshError::Pipeline { site, source })?;
    if prepared.site != site {
        return Err(RefreshError::Pipeline {
            site,
            source: PipelineError::WrongMarketplace {
                origin: body.url.to_string(),
                tree_id: prepared.tree.meta.tree_id,
                expected: site,
                found: prepared.tree.meta.marketplace_id.clone(),
            },
        });
    }
    // The expired leaves and their replacements (getExpiredCategories), checked against the
    // new tree and committed with it.
    let expired = client
        .expired_categories(site)
        .map_err(|source| RefreshError::Fetch { site, source })?;
    let source = client.config().expired_categories_url(site.tree_id());
    pipeline::with_expired(
        prepared,
        expired.mappings.iter().map(|m| ExpiredMapping {
            from: m.from,
            to: m.to,
        }),
        source.as_str(),
    )
    .map_err(|source| RefreshError::Pipeline { site, source })
}

/// [`with_condition_policies`] for each prepared site of `results`, concurrently (a failed
/// site stays as it failed): what `snapshot refresh` does with the trees
/// [`fetch_and_prepare`] gave.
pub fn with_condition_policies_each(
    client: &TaxonomyClient,
    results: Vec<Result<Prepared, RefreshError>>,
) -> Vec<Result<Prepared, RefreshError>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = results
            .into_iter()
            .map(|result| match result {
                Ok(prepared) => {
                    let site = prepared.site;
                    Ok((
                        site,
                        scope.spawn(move || with_condition_policies(client, prepared)),
                    ))
                }
                Err(e) => Err(e),
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                let (site, handle) = handle?;
                handle
                    .join()
                    .unwrap_or(Err(RefreshError::Panicked { site }))
            })
            .collect()
    })
}

/// Fetches `prepared`'s site's condition policies (getItemConditionPolicies, every category in
/// one gzipped answer) and sets them on it, checked against its tree: they are committed with
/// it ([`pipeline::with_conditions`]); then its listing-structure policies
/// ([`with_structure_policies`]). A marketplace the Metadata API refuses (errorId 46001)
/// is no error: its tree goes on alone, its policies marked unavailable
/// ([`pipeline::conditions_unavailable`]).
pub fn with_condition_policies(
    client: &TaxonomyClient,
    prepared: Prepared,
) -> Result<Prepared, RefreshError> {
    let site = prepared.site;
    let Fetched {
        rules,
        unknown,
        url,
        made_up,
    } = match fetch_condition_rules(client, site) {
        Ok(fetched) => fetched,
        // eBay's Metadata API does not serve every marketplace its Taxonomy API does
        // (getItemConditionPolicies: 46001, "marketplace id not found"): the tree is still
        // refreshed, and the report says the policies are unavailable.
        Err(RefreshError::Fetch { source, .. }) if source.error_id() == Some(46001) => {
            let why = format!(
                "getItemConditionPolicies refused {} (errorId 46001): {}",
                site.marketplace_id(),
                source
            );
            let prepared = pipeline::conditions_unavailable(prepared, why);
            return with_structure_policies(client, prepared);
        }
        Err(e) => return Err(e),
    };
    let mut prepared = pipeline::with_conditions(prepared, rules, &url, made_up)
        .map_err(|source| RefreshError::Pipeline { site, source })?;
    if let Some(report) = prepared.conditions.as_mut() {
        report.left_out.unknown_conditions = unknown;
    }
    with_structure_policies(client, prepared)
}

/// Fetches `prepared`'s site's listing-structure policies (getListingStructurePolicies, every
/// category in one gzipped answer: whether each takes listings with variations) and sets them
/// on it, checked against its tree: they are committed with it
/// ([`pipeline::with_structure`]). [`with_condition_policies`] ends with it, so `snapshot
/// refresh` fetches both for each site. A marketplace the Metadata API refuses (errorId
/// 46001) is no error: its tree goes on, its listing-structure policies marked unavailable
/// ([`pipeline::structure_unavailable`]). A category the answer gives no
/// `variationsSupported` is left out (its policy is not known).
pub fn with_structure_policies(
    client: &TaxonomyClient,
    prepared: Prepared,
) -> Result<Prepared, RefreshError> {
    let site = prepared.site;
    let (answer, url, made_up) = match client.all_listing_structure_policies_marked(site) {
        Ok(fetched) => fetched,
        Err(source) if source.error_id() == Some(46001) => {
            let why = format!(
                "getListingStructurePolicies refused {} (errorId 46001): {}",
                site.marketplace_id(),
                source
            );
            return Ok(pipeline::structure_unavailable(prepared, why));
        }
        Err(source) => return Err(RefreshError::Fetch { site, source }),
    };
    let policies = answer
        .listing_structure_policies
        .iter()
        .filter_map(|p| Some((p.category_id, p.variations_supported?)));
    pipeline::with_structure(prepared, policies, &url, made_up)
        .map_err(|source| RefreshError::Pipeline { site, source })
}

/// A site's getItemConditionPolicies answer as [`condition_rules`] makes it, with the URL asked
/// and the server's made-up mark.
struct Fetched {
    rules: Vec<(u32, ConditionRule)>,
    unknown: std::collections::BTreeMap<String, u32>,
    url: String,
    made_up: bool,
}

/// Asks `site`'s condition policies (every category in one gzipped answer) and makes them
/// the file's rules.
fn fetch_condition_rules(
    client: &TaxonomyClient,
    site: Marketplace,
) -> Result<Fetched, RefreshError> {
    let (answer, url, made_up) = client
        .all_item_condition_policies_marked(site)
        .map_err(|source| RefreshError::Fetch { site, source })?;
    let (rules, unknown) = condition_rules(&answer);
    Ok(Fetched {
        rules,
        unknown,
        url,
        made_up,
    })
}

/// The condition policies (getItemConditionPolicies, every category in one gzipped answer) of
/// each site of `trees`, asked concurrently, each made into the condition-policy file of the
/// tree given with it ([`conditions::from_answer`]: its leaves only, checked against it; the
/// server's made-up mark kept): what taxonomy-data's `live` build caches beside the trees it
/// uses. `dir` names the file in errors (`dir/EBAY_US.conditions.json`). Condition ids this
/// toolkit does not know are left out, as [`with_condition_policies`] leaves them out.
pub fn condition_policies_of_trees(
    client: &TaxonomyClient,
    trees: &[(Marketplace, &CategoryTree)],
    dir: &Path,
) -> Vec<Result<ConditionsFile, RefreshError>> {
    per_site_concurrently(trees.iter().map(|(site, _)| *site), |site| {
        let Some((_, tree)) = trees.iter().find(|(s, _)| *s == site) else {
            unreachable!("every site comes from `trees`")
        };
        let fetched = fetch_condition_rules(client, site)?;
        let path = conditions::path_beside(&dir.join(site.snapshot_file_name()));
        conditions::from_answer(fetched.rules, tree, &fetched.url, fetched.made_up, &path)
            .map(|(file, _left_out)| file)
            .map_err(|e| RefreshError::Pipeline {
                site,
                source: e.into(),
            })
    })
}

/// Prepares each committed snapshot of `sites` in `snapshots_dir` again, unchanged, with its
/// condition policies fetched ([`with_condition_policies`]): what `snapshot refresh` does for
/// the sites whose tree did not change, since policies change without a new tree version.
pub fn condition_policies_of_committed(
    client: &TaxonomyClient,
    sites: &[Marketplace],
    snapshots_dir: &Path,
) -> Vec<Result<Prepared, RefreshError>> {
    per_site_concurrently(sites.iter().copied(), |site| {
        let path = snapshots_dir.join(site.snapshot_file_name());
        let tree = snapshot::read(&path).map_err(|e| RefreshError::Pipeline {
            site,
            source: e.into(),
        })?;
        let origin = path.display().to_string();
        let prepared = pipeline::prepare_tree(tree, &origin, snapshots_dir)
            .map_err(|source| RefreshError::Pipeline { site, source })?;
        with_condition_policies(client, prepared)
    })
}

/// `conditions` as the condition-policy file's rules take them: a condition, a descriptor of a
/// condition and a value of a descriptor once each (the first kept), and a descriptor's
/// `requires` within its condition's descriptors.
fn tidy(conditions: Vec<ConditionEntry>) -> Vec<ConditionEntry> {
    let mut kept: Vec<ConditionEntry> = Vec::with_capacity(conditions.len());
    for mut c in conditions {
        if kept.iter().any(|k| k.condition == c.condition) {
            continue;
        }
        let mut ids = std::collections::BTreeSet::new();
        c.descriptors.retain(|d| ids.insert(d.id));
        for d in &mut c.descriptors {
            let mut values = std::collections::BTreeSet::new();
            d.values.retain(|v| values.insert(v.0));
            d.requires.retain(|r| ids.contains(r) && *r != d.id);
        }
        kept.push(c);
    }
    kept
}

/// The policies of a getItemConditionPolicies answer as the condition-policy file keeps them,
/// one a category, and the condition ids this toolkit does not know (left out), each with a
/// category that allows it.
pub fn condition_rules(
    answer: &crate::model::ItemConditionPolicyResponse,
) -> (
    Vec<(u32, ConditionRule)>,
    std::collections::BTreeMap<String, u32>,
) {
    use crate::model::{DescriptorCardinality, DescriptorMode, DescriptorUsage};
    let mut unknown = std::collections::BTreeMap::new();
    let rules = answer
        .item_condition_policies
        .iter()
        .map(|policy| {
            let conditions = policy
                .item_conditions
                .iter()
                .filter_map(|c| {
                    let condition = u16::try_from(c.condition_id)
                        .ok()
                        .and_then(marketplaces::Condition::from_id);
                    if condition.is_none() {
                        unknown
                            .entry(c.condition_id.to_string())
                            .or_insert(policy.category_id);
                    }
                    Some(ConditionEntry {
                        condition: condition?,
                        descriptors: c
                            .condition_descriptors
                            .iter()
                            .map(|d| {
                                let constraint = d.condition_descriptor_constraint.as_ref();
                                DescriptorEntry {
                                    id: d.condition_descriptor_id,
                                    name: d.condition_descriptor_name.clone().unwrap_or_default(),
                                    required: constraint.is_some_and(|k| {
                                        k.usage == Some(DescriptorUsage::Required)
                                    }),
                                    multiple: constraint.is_some_and(|k| {
                                        k.cardinality == Some(DescriptorCardinality::Multi)
                                    }),
                                    free_text: constraint
                                        .is_some_and(|k| k.mode == Some(DescriptorMode::FreeText)),
                                    // 0 would refuse every text: taken as no limit.
                                    max_length: constraint
                                        .and_then(|k| k.max_length)
                                        .filter(|n| *n > 0),
                                    values: d
                                        .condition_descriptor_values
                                        .iter()
                                        .map(|v| {
                                            (
                                                v.condition_descriptor_value_id,
                                                v.condition_descriptor_value_name
                                                    .clone()
                                                    .unwrap_or_default(),
                                            )
                                        })
                                        .collect(),
                                    requires: constraint
                                        .map(|k| k.applicable_to_condition_descriptor_ids.clone())
                                        .unwrap_or_default(),
                                }
                            })
                            .collect(),
                    })
                })
                .collect();
            (
                policy.category_id,
                ConditionRule {
                    required: policy.item_condition_required,
                    conditions: tidy(conditions),
                },
            )
        })
        .collect();
    (rules, unknown)
}

/// Why a held tree must be downloaded again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// No tree is held (or it could not be read).
    Missing,
    /// The service has another `categoryTreeVersion`.
    NewVersion {
        /// The version held.
        held: String,
        /// The version getDefaultCategoryTreeId reports.
        current: String,
    },
    /// The held copy is not complete (`"complete": false` in the snapshot).
    Partial,
    /// The held copy's names are in another language than the one asked for.
    Language {
        /// The language held.
        held: String,
        /// The language asked for.
        asked: String,
    },
    /// getDefaultCategoryTreeId names another tree for the marketplace.
    OtherTree {
        /// The tree id held.
        held: u32,
        /// The tree id reported.
        current: u32,
    },
    /// The expired-category file beside the held tree does not go with it: written for
    /// another tree (out of step, as a commit killed half-way leaves it) or unreadable.
    /// Downloading the site again rewrites it.
    Expired {
        /// What is wrong, e.g. `written for version "134", the tree is version "135"`.
        problem: String,
    },
}

impl std::fmt::Display for Staleness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str("no tree held"),
            Self::NewVersion { held, current } => {
                write!(
                    f,
                    "version {} → {}",
                    server_text(held),
                    server_text(current)
                )
            }
            Self::Partial => f.write_str("the held copy is partial"),
            Self::Language { held, asked } => write!(f, "held in {held}, asked for {asked}"),
            Self::OtherTree { held, current } => {
                write!(
                    f,
                    "the marketplace's default tree is now {current} (held: {held})"
                )
            }
            Self::Expired { problem } => write!(
                f,
                "the expired-category file does not go with the tree: {}",
                server_text(problem)
            ),
        }
    }
}

/// Whether `held` is a current copy of the tree getDefaultCategoryTreeId reported in `answer`,
/// in `language`: `None` when it is, else why not. A partial copy, or one in another language,
/// is never current.
///
/// ```
/// use marketplace_client::trees::{staleness, Staleness};
/// use marketplace_client::model::DefaultTreeId;
/// use taxonomy_tree::tree::{CategoryTree, TreeMeta};
/// let held = TreeMeta { tree_id: 0, marketplace_id: "EBAY_US".into(), language: "en-US".into(),
///     version: "134".into(), taken_at: "2026-01-02".into(), source: "doc".into(), note: None,
///     complete: true };
/// let answer = DefaultTreeId { tree_id: 0, tree_version: "134".into() };
/// assert_eq!(staleness(Some(&held), &answer, "en-US"), None);
/// assert_eq!(staleness(Some(&held), &answer, "es-US"),
///     Some(Staleness::Language { held: "en-US".into(), asked: "es-US".into() }));
/// let partial = TreeMeta { complete: false, ..held.clone() };
/// assert_eq!(staleness(Some(&partial), &answer, "en-US"), Some(Staleness::Partial));
/// let newer = DefaultTreeId { tree_id: 0, tree_version: "135".into() };
/// assert!(matches!(staleness(Some(&held), &newer, "en-US"), Some(Staleness::NewVersion { .. })));
/// assert_eq!(staleness(None, &answer, "en-US"), Some(Staleness::Missing));
/// ```
pub fn staleness(
    held: Option<&TreeMeta>,
    answer: &DefaultTreeId,
    language: &str,
) -> Option<Staleness> {
    let Some(held) = held else {
        return Some(Staleness::Missing);
    };
    if held.tree_id != answer.tree_id {
        return Some(Staleness::OtherTree {
            held: held.tree_id,
            current: answer.tree_id,
        });
    }
    // An empty version tells nothing: download.
    if answer.tree_version.is_empty() || held.version != answer.tree_version {
        return Some(Staleness::NewVersion {
            held: held.version.clone(),
            current: answer.tree_version.clone(),
        });
    }
    if !held.language.eq_ignore_ascii_case(language.trim()) {
        return Some(Staleness::Language {
            held: held.language.clone(),
            asked: language.trim().to_owned(),
        });
    }
    if !held.complete {
        return Some(Staleness::Partial);
    }
    None
}

/// What getDefaultCategoryTreeId said of one site, compared with the tree held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCheck {
    /// The site.
    pub site: Marketplace,
    /// The answer.
    pub current: DefaultTreeId,
    /// `None` when the held tree is current, else why it must be downloaded again.
    pub stale: Option<Staleness>,
}

/// Asks getDefaultCategoryTreeId for every site in `held` concurrently and compares each
/// answer with the tree held (`None`: none) in the language the tree would be downloaded in
/// (`language`, else the client's, else the site's; see [`TaxonomyClient::language_for`]).
pub fn check_versions(
    client: &TaxonomyClient,
    held: &[(Marketplace, Option<TreeMeta>)],
    language: Option<&str>,
) -> Vec<Result<VersionCheck, RefreshError>> {
    per_site_concurrently(held.iter().map(|(site, _)| *site), |site| {
        let meta = held
            .iter()
            .find(|(s, _)| *s == site)
            .and_then(|(_, meta)| meta.as_ref());
        let current = client
            .default_tree_id(site.marketplace_id())
            .map_err(|source| RefreshError::VersionCheck { site, source })?;
        let asked = client.language_for(site, language);
        let stale = staleness(meta, &current, &asked);
        Ok(VersionCheck {
            site,
            current,
            stale,
        })
    })
}

/// [`check_versions`] for the snapshots held in `snapshots_dir`: each site's tree is read
/// from its snapshot (none, or unreadable: [`Staleness::Missing`]), and a site whose
/// expired-category file does not go with its tree ([`expired::read_in_step`]: out of step,
/// as a commit killed half-way leaves it, or unreadable) is stale even when its version is
/// current ([`Staleness::Expired`]), so that downloading it again rewrites the file.
pub fn check_snapshots(
    client: &TaxonomyClient,
    snapshots_dir: &Path,
    sites: &[Marketplace],
    language: Option<&str>,
) -> Vec<Result<VersionCheck, RefreshError>> {
    let mut held = Vec::with_capacity(sites.len());
    let mut mapping_problems = Vec::with_capacity(sites.len());
    for &site in sites {
        let path = snapshots_dir.join(site.snapshot_file_name());
        let tree = snapshot::read(&path).ok();
        let problem = tree
            .as_ref()
            .and_then(|tree| expired::read_in_step(&path, tree).err())
            .map(|e| match e {
                ExpiredError::OutOfStep { reason, .. } => reason,
                other => other.to_string(),
            });
        held.push((site, tree.map(|tree| tree.meta)));
        mapping_problems.push(problem);
    }
    check_versions(client, &held, language)
        .into_iter()
        .zip(mapping_problems)
        .map(|(check, problem)| {
            check.map(|mut c| {
                if c.stale.is_none() {
                    c.stale = problem.map(|problem| Staleness::Expired { problem });
                }
                c
            })
        })
        .collect()
}

/// A getItemAspectsForCategory answer as `snapshot aspects pin` and the `live` build keep
/// it: the answer as sent, decoded, and where it came from.
#[derive(Debug)]
pub struct FetchedAspects {
    /// The answer as the service sent it (`{}` for `204 No Content`: a leaf without aspects).
    pub answer: serde_json::Value,
    /// The answer decoded (taxonomy-model's rules).
    pub decoded: crate::model::ItemAspects,
    /// The API host it came from (`api.ebay.com`, `127.0.0.1:41231`).
    pub host: String,
    /// True when the server marked the answer as made up (`X-Fake-Marketplace: made-up`, as
    /// the toolkit's fake marketplace does): rules that are not eBay's.
    pub made_up: bool,
}

/// `site`'s getItemAspectsForCategory answer for `category` of tree `tree_id`, through `api`
/// (an application token suffices): the answer as sent (what a pinned file keeps), decoded
/// (refused if it does not decode, with the category named), and its origin. `204 No
/// Content`, eBay's answer for a leaf without aspects, is the answer `{}`: no aspects.
pub fn item_aspects_answer(
    api: &crate::api::ApiClient,
    site: Marketplace,
    tree_id: u32,
    category: u32,
) -> Result<FetchedAspects, String> {
    let request = crate::api::ApiRequest::get(format!(
        "/commerce/taxonomy/v1/category_tree/{tree_id}/get_item_aspects_for_category"
    ))
    .query("category_id", category.to_string())
    .marketplace(site)
    .operation("getItemAspectsForCategory");
    let response = api
        .send(request)
        .map_err(|e| format!("{site} category {category}: {e}"))?;
    // `204 No Content` (or no body): a leaf without aspects, as the typed client reads it
    // (`TaxonomyClient::item_aspects`), kept as an answer without any field.
    let body = if response.is_empty() {
        &b"{}"[..]
    } else {
        response.bytes()
    };
    let decoded = crate::model::decode::item_aspects(category, body)
        .map_err(|e| format!("{site} category {category}: getItemAspectsForCategory: {e}"))?;
    let answer: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("{site} category {category}: {e}"))?;
    let url = response.url();
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    };
    let made_up = response
        .header("x-fake-marketplace")
        .is_some_and(|v| v.eq_ignore_ascii_case("made-up"));
    Ok(FetchedAspects {
        answer,
        decoded,
        host,
        made_up,
    })
}

/// Text that came from the server (a version, a category name, an error), made safe to print
/// in a `cargo:warning` or keep in a file: known secrets and token-like values removed, control
/// characters escaped (so it cannot start a line of its own), cut to a bounded length. The same
/// sanitizer the clients' errors go through.
pub fn server_text(text: &str) -> String {
    crate::oauth::redact::Redactor::new().text(text)
}
