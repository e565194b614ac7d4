//! Fetching the trees of several sites from the live service at once (getCategoryTree, then
//! getExpiredCategories), each through the pipeline (decode, validate, compare) without writing: `snapshot refresh` commits the result
//! when every site succeeded, and the build script uses the trees directly.
//!
//! Each full tree (getCategoryTree) takes 2 to 5 seconds, so the sites are fetched concurrently, one
//! thread each, with one shared client and token source.

use std::path::Path;

use crate::taxonomy::{TaxonomyClient, TaxonomyError};
use marketplaces::Marketplace;
use taxonomy_tree::clock::today_utc;
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::expired::ExpiredMapping;
use taxonomy_tree::pipeline::{self, PipelineError, Prepared};

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
        source: TaxonomyError,
    },
    /// The body did not decode or validate, or is another site's tree.
    #[error("{site}: {source}")]
    Pipeline {
        /// The site.
        site: Marketplace,
        /// What was wrong.
        source: PipelineError,
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
    std::thread::scope(|scope| {
        let handles: Vec<_> = sites
            .iter()
            .map(|&site| {
                let taken_at = taken_at.clone();
                let handle = scope.spawn(move || {
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
                });
                (site, handle)
            })
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
