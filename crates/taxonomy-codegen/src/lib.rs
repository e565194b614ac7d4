//! # taxonomy-codegen
//!
//! The generator behind `taxonomy-data`, as a plain library (the way chrono-tz-build is) so
//! that it is tested like any code and the build script is three lines:
//!
//! - [`build_script`]: what `taxonomy-data`'s build script does: pick the sites, obtain each
//!   tree (the committed snapshots, or with the `live` feature the service's trees, cached in
//!   the target directory), generate, tell cargo when to run again;
//! - [`codegen`]: trees to the Rust source of the tables (deterministic);
//! - [`phash`]: the perfect-hash builder over the functions of `taxonomy-hash`;
//! - [`pinned`]: the pinned aspects files (`snapshot aspects pin`), compiled in with the trees.
//!
//! Without `live` it compiles no HTTP, TLS or command-line crate.
//!
//! # Quick start
//!
//! A committed snapshot (here read from text) turned into the source that `taxonomy-data`
//! includes: deterministic, so the same snapshot gives the same bytes.
//!
//! ```
//! use marketplaces::Marketplace;
//! use taxonomy_codegen::codegen::{SiteData, generate};
//!
//! let snapshot = taxonomy_tree::snapshot::to_string(&taxonomy_tree::decode::decode_tree(
//!     br#"{"categoryTreeId": "0", "categoryTreeVersion": "130",
//!          "applicableMarketplaceIds": ["EBAY_US"],
//!          "rootCategoryNode": {"category": {"categoryId": "0", "categoryName": "Root"},
//!            "categoryTreeNodeLevel": 0, "childCategoryTreeNodes": [
//!              {"category": {"categoryId": "9355", "categoryName": "Cell Phones & Smartphones"},
//!               "categoryTreeNodeLevel": 1, "leafCategoryTreeNode": true}]}}"#,
//!     &taxonomy_tree::decode::Provenance {
//!         language: "en-US".into(),
//!         taken_at: "2026-11-25".into(),
//!         source: "an example".into(),
//!         note: None,
//!     },
//! )?);
//! let tree = taxonomy_tree::snapshot::parse(&snapshot, "EBAY_US.json".as_ref())?;
//!
//! let site = SiteData { site: Marketplace::Us, tree: Some(&tree), expired: &[] };
//! let code = generate(&[site])?;
//! assert!(code.contains("Cell Phones & Smartphones"));
//! assert_eq!(generate(&[site])?, code);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod build_script;
pub mod codegen;
pub mod phash;
pub mod pinned;
