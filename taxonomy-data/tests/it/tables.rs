//! The compiled-in tables against the snapshots they were generated from: every category of
//! every site, looked up by id and by path, with every field compared; and every id that is
//! not a category, missed.

use std::path::PathBuf;

use marketplaces::Marketplace;
use taxonomy_data::{LeafCategory, LeafError, Site};
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

fn snapshots_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

fn load(site: Site) -> CategoryTree {
    snapshot::read_site(site.marketplace(), &snapshots_dir()).unwrap()
}

/// The sites with a committed snapshot: compiled in by default.
fn with_snapshots() -> Vec<Site> {
    snapshot::sites_in(&snapshots_dir())
        .into_iter()
        .map(Site::from)
        .collect()
}

#[test]
fn every_site_with_a_snapshot_is_compiled_in_and_no_other() {
    let expected = with_snapshots();
    assert_eq!(expected, [Site::Us, Site::Gb, Site::Au, Site::De]);
    assert_eq!(Site::compiled_in().collect::<Vec<_>>(), expected);
    assert_eq!(Site::ALL.len(), Marketplace::ALL.len());
    for site in Site::ALL {
        assert_eq!(site.marketplace().variant(), format!("{site:?}"));
        if !expected.contains(&site) {
            assert_eq!(site.category_count(), 0, "{site}");
            assert_eq!(site.category(9355), None, "{site}");
            assert_eq!(
                LeafCategory::new(site, 9355),
                Err(LeafError::SiteNotCompiledIn { site })
            );
            assert_eq!(site.language(), site.marketplace().default_language());
            assert_eq!(taxonomy_data::versions::EBAY_FR_TREE_VERSION, "");
        }
    }
}

#[test]
fn every_category_of_every_site_matches_its_snapshot() {
    for site in with_snapshots() {
        let tree = load(site);
        assert_eq!(site.category_count(), tree.len(), "{site}");
        assert_eq!(site.leaf_count(), tree.leaf_count(), "{site}");
        assert_eq!(site.tree_version(), tree.meta.version, "{site}");
        assert_eq!(site.taken_at(), tree.meta.taken_at, "{site}");
        assert_eq!(site.language(), tree.meta.language, "{site}");
        assert_eq!(site.note(), tree.meta.note.as_deref(), "{site}");
        for c in tree.listable() {
            let got = site
                .category(c.id)
                .unwrap_or_else(|| panic!("{site} {} missing", c.id));
            assert_eq!(got.id(), c.id);
            assert_eq!(got.name(), c.name, "{site} {}", c.id);
            assert_eq!(got.is_leaf(), c.leaf, "{site} {}", c.id);
            assert_eq!(
                got.parent().map_or(0, |p| p.id()),
                c.parent.unwrap(),
                "{site} {}",
                c.id
            );
            let children: Vec<u32> = got.children().map(|k| k.id()).collect();
            assert_eq!(children, c.children, "{site} {}", c.id);
            // The path walks the parents, and resolves back to the category.
            let path: Vec<u32> = got.path().map(|p| p.id()).collect();
            assert_eq!(path.len(), usize::from(got.level()));
            assert_eq!(path.last(), Some(&c.id));
            let mut up = Some(got);
            for &id in path.iter().rev() {
                assert_eq!(up.map(|u| u.id()), Some(id));
                up = up.and_then(|u| u.parent());
            }
            assert!(up.is_none());
            let by_path = site.category_by_path(&got.path().to_string());
            assert_eq!(by_path, Some(got), "{site} {}", got.path());
            assert_eq!(LeafCategory::new(site, c.id).is_ok(), c.leaf);
        }
        let all: Vec<u32> = site.categories().map(|c| c.id()).collect();
        let expected: Vec<u32> = tree.listable().map(|c| c.id).collect();
        assert_eq!(all, expected, "{site}: categories() in id order");
        assert_eq!(site.leaves().count(), tree.leaf_count());
        let top: Vec<u32> = site.top_level().map(|c| c.id()).collect();
        assert_eq!(top, tree.get(0).unwrap().children);
    }
}

#[test]
fn ids_that_are_not_categories_are_missed() {
    for site in with_snapshots() {
        let tree = load(site);
        let max = tree.categories.last().unwrap().id;
        let mut misses = 0;
        for id in (0..=max + 1_000).chain([u32::MAX, u32::MAX - 1, 1 << 31]) {
            let expected = id != 0 && tree.get(id).is_some();
            assert_eq!(site.category(id).is_some(), expected, "{site} {id}");
            misses += usize::from(!expected);
        }
        assert!(
            misses > 400_000 || site != Site::Us,
            "{site}: {misses} misses checked"
        );
    }
}

#[test]
fn sample_facts_from_provenance() {
    let us = Site::Us.category(9355).unwrap();
    assert_eq!(us.name(), "Cell Phones & Smartphones");
    assert!(us.is_leaf());
    let parent = us.parent().unwrap();
    assert_eq!(
        (parent.id(), parent.name()),
        (15032, "Cell Phones & Accessories")
    );
    assert!(!parent.is_leaf());
    assert_eq!(parent.children().len(), 11);
    assert_eq!(
        Site::De.category(9355).unwrap().name(),
        "Handys & Smartphones"
    );
    assert_eq!(
        Site::Gb.category(9355).unwrap().name(),
        "Mobile & Smart Phones"
    );
    assert_eq!(Site::Au.category(9355).unwrap().name(), "Mobile Phones");
    assert!(Site::Us.category(463_773).is_some());
    assert_eq!(Site::Us.category_count(), 17_104);
    assert_eq!(Site::Us.leaf_count(), 15_111);
}

#[test]
fn sites_by_marketplace_and_tree_id() {
    for site in Site::ALL {
        assert_eq!(Site::from_marketplace_id(site.marketplace_id()), Some(site));
        assert_eq!(Site::from_tree_id(site.tree_id()), Some(site));
        assert_eq!(site.to_string(), site.marketplace_id());
    }
    assert_eq!(Site::from_marketplace_id("ebay_fr"), Some(Site::Fr));
    assert_eq!("EBAY_MOTORS_US".parse::<Site>(), Ok(Site::MotorsUs));
    assert!("EBAY_XX".parse::<Site>().is_err());
    // `FromStr` is the one parser of site names: the forms the commands take, and the
    // marketplace a refused name meant.
    assert_eq!("de".parse::<Site>(), Ok(Site::De));
    assert_eq!("77".parse::<Site>(), Ok(Site::De));
    let uk = "EBAY_UK".parse::<Site>().unwrap_err();
    assert_eq!(uk.closest(), Some(Marketplace::Gb));
    assert!(
        uk.to_string()
            .contains("did you mean EBAY_GB (United Kingdom)?"),
        "{uk}"
    );
    assert_eq!(Site::from_marketplace_id(""), None);
    assert_eq!(
        Site::from_marketplace_id("EBAY_US_AND_SOME_MUCH_LONGER_TEXT"),
        None
    );
    assert_eq!(Site::from_tree_id(1), None);
    assert_eq!(Site::from_tree_id(210), Some(Site::Ca));
}

#[test]
fn leaf_errors_say_what_is_wrong() {
    assert_eq!(
        LeafCategory::new(Site::Us, 15032),
        Err(LeafError::NotALeaf {
            site: Site::Us,
            id: 15032
        })
    );
    assert_eq!(
        LeafCategory::new(Site::Us, 0),
        Err(LeafError::UnknownCategory {
            site: Site::Us,
            id: 0
        })
    );
    let message = LeafCategory::new(Site::Us, 15032).unwrap_err().to_string();
    assert!(
        message.contains("15032") && message.contains("not a leaf"),
        "{message}"
    );
    let message = LeafCategory::new(Site::De, 77).unwrap_err().to_string();
    assert!(message.contains("EBAY_DE has no category 77"), "{message}");
}

#[test]
fn leaves_below_a_category_are_its_leaf_descendants() {
    for site in Site::ALL {
        for top in site.top_level() {
            let leaves: Vec<u32> = top.leaves().map(|l| l.id()).collect();
            let mut expected: Vec<u32> = site
                .leaves()
                .filter(|l| l.path().next().map(|c| c.id()) == Some(top.id()))
                .map(|l| l.id())
                .collect();
            let mut got = leaves.clone();
            got.sort_unstable();
            expected.sort_unstable();
            assert_eq!(got, expected, "{site} {}", top.id());
        }
    }
}

#[test]
fn version_constants_are_the_snapshots() {
    use taxonomy_data::versions::*;
    let pairs = [
        (Site::Us, EBAY_US_TREE_VERSION, EBAY_US_TAKEN_AT),
        (Site::Gb, EBAY_GB_TREE_VERSION, EBAY_GB_TAKEN_AT),
        (Site::De, EBAY_DE_TREE_VERSION, EBAY_DE_TAKEN_AT),
        (Site::Au, EBAY_AU_TREE_VERSION, EBAY_AU_TAKEN_AT),
    ];
    for (site, version, taken_at) in pairs {
        let tree = load(site);
        assert_eq!(
            (version, taken_at),
            (tree.meta.version.as_str(), tree.meta.taken_at.as_str())
        );
    }
}
