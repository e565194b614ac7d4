//! The condition policies (getItemConditionPolicies) compiled into taxonomy-data, checked
//! against the condition-policy files they were compiled from: a program outside the
//! workspace, built against taxonomy-data with `TAXONOMY_SNAPSHOTS_DIR` set to a snapshots
//! directory, prints every leaf's compiled-in policy, and [`check_compiled_conditions`]
//! compares it with the file beside each tree. Any snapshots directory will do: one written
//! by a test ([`write_every_leaf_policies`]), or one `snapshot refresh` wrote.
//!
//! Used as `#[path = "common/conditions.rs"] mod conditions;` beside `mod common;`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use marketplaces::{Condition, Marketplace};
use taxonomy_tree::conditions::{
    self, ConditionEntry, ConditionRule, ConditionsFile, DescriptorEntry,
};
use taxonomy_tree::snapshot;

use crate::common;

/// What one compiled-in site says of its condition policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteConditions {
    /// The site.
    pub site: Marketplace,
    /// `Site::has_condition_policies`.
    pub has_policies: bool,
    /// `Site::condition_policies_made_up`.
    pub made_up: bool,
    /// `Site::leaf_count`.
    pub leaves: usize,
    /// Leaves whose `LeafCategory::condition_policy` is `Some`.
    pub leaves_with_policy: usize,
    /// `Site::condition_table_bytes`.
    pub table_bytes: usize,
}

/// The probe: per compiled-in site a header line, then per leaf its id and its policy's
/// `Debug` (`-`: none).
const PROBE_MAIN: &str = r#"
use taxonomy_data::Site;

fn main() {
    for site in Site::compiled_in() {
        println!(
            "site {} {} {} {} {}",
            site,
            site.has_condition_policies(),
            site.condition_policies_made_up(),
            site.leaf_count(),
            site.condition_table_bytes()
        );
        for leaf in site.leaves() {
            match leaf.condition_policy() {
                Some(policy) => {
                    assert_eq!(leaf.conditions(), Some(policy.conditions));
                    assert_eq!(leaf.condition_required(), Some(policy.required));
                    println!("{}\t{:?}", leaf.id(), policy);
                }
                None => {
                    assert_eq!((leaf.conditions(), leaf.condition_required()), (None, None));
                    println!("{}\t-", leaf.id());
                }
            }
        }
    }
}
"#;

/// Builds the probe against taxonomy-data compiled from `snapshots_dir` (an absolute path)
/// and checks, for every compiled-in site, that every leaf's compiled-in policy is the one
/// the condition-policy file beside its tree gives it (read with the build's own reader,
/// `read_in_step`; `None` for a leaf the file does not name, and for every leaf of a site
/// without a file or with one out of step). Returns each site's figures and the build's
/// standard error (its warnings).
pub fn check_compiled_conditions(snapshots_dir: &Path) -> (Vec<SiteConditions>, String) {
    let project = tempfile::tempdir().unwrap();
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    common::write_outside_crate(
        project.path(),
        "conditions-probe",
        "[dependencies]\ntaxonomy-data = { path = {data} }\n",
        PROBE_MAIN,
    );
    let dir = snapshots_dir.display().to_string();
    let build =
        common::build_outside_crate(project.path(), &target, &[("TAXONOMY_SNAPSHOTS_DIR", &dir)]);
    let stderr = String::from_utf8_lossy(&build.stderr).into_owned();
    assert!(build.status.success(), "{stderr}");
    let run = std::process::Command::new(target.join("debug/conditions-probe"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).unwrap();

    let mut sites = Vec::new();
    let mut expected: BTreeMap<u32, String> = BTreeMap::new();
    for line in stdout.lines() {
        if let Some(header) = line.strip_prefix("site ") {
            let f: Vec<&str> = header.split(' ').collect();
            let site = Marketplace::parse(f[0]).unwrap();
            let snapshot = snapshots_dir.join(site.snapshot_file_name());
            let tree = snapshot::read(&snapshot).unwrap();
            let file = conditions::read_in_step(&snapshot, &tree).ok().flatten();
            expected = policies_of(file.as_ref());
            assert_eq!(
                f[1] == "true",
                file.is_some(),
                "{site}: has_condition_policies"
            );
            assert_eq!(
                f[2] == "true",
                file.as_ref().is_some_and(|f| f.made_up),
                "{site}: condition_policies_made_up"
            );
            sites.push(SiteConditions {
                site,
                has_policies: f[1] == "true",
                made_up: f[2] == "true",
                leaves: f[3].parse().unwrap(),
                leaves_with_policy: 0,
                table_bytes: f[4].parse().unwrap(),
            });
            continue;
        }
        let at = sites.last_mut().expect("a site line first");
        let (id, policy) = line.split_once('\t').unwrap();
        let id: u32 = id.parse().unwrap();
        let want = expected.get(&id).map_or("-", String::as_str);
        assert_eq!(policy, want, "{} leaf {id}", at.site);
        if policy != "-" {
            at.leaves_with_policy += 1;
        }
    }
    (sites, stderr)
}

/// Each leaf's policy in `file`, as `ConditionPolicy`'s `Debug` (what the probe prints).
fn policies_of(file: Option<&ConditionsFile>) -> BTreeMap<u32, String> {
    let mut policies = BTreeMap::new();
    for group in file.map_or(&[][..], |f| &f.policies) {
        let text = group.rule.with_policy(|p| format!("{p:?}"));
        for &id in &group.category_ids {
            policies.insert(id, text.clone());
        }
    }
    policies
}

/// The made-up rules [`write_every_leaf_policies`] deals out: required or not, none, a
/// trading card's descriptors.
pub fn made_up_rules() -> Vec<ConditionRule> {
    let plain = |condition| ConditionEntry {
        condition,
        descriptors: Vec::new(),
    };
    let grader = DescriptorEntry {
        id: 27501,
        name: "Professional Grader".into(),
        required: true,
        multiple: false,
        free_text: false,
        max_length: None,
        values: vec![(275010, "PSA".into()), (275011, "BCCG".into())],
        requires: Vec::new(),
    };
    let certification = DescriptorEntry {
        id: 27503,
        name: "Certification Number".into(),
        required: false,
        multiple: false,
        free_text: true,
        max_length: Some(30),
        values: Vec::new(),
        requires: vec![27501],
    };
    vec![
        ConditionRule {
            required: true,
            conditions: vec![
                plain(Condition::New),
                plain(Condition::UsedExcellent),
                plain(Condition::ForPartsOrNotWorking),
            ],
        },
        ConditionRule {
            required: false,
            conditions: vec![plain(Condition::New), plain(Condition::UsedGood)],
        },
        ConditionRule {
            required: false,
            conditions: Vec::new(),
        },
        ConditionRule {
            required: true,
            conditions: vec![
                ConditionEntry {
                    condition: Condition::LikeNew,
                    descriptors: vec![grader, certification],
                },
                plain(Condition::UsedVeryGood),
            ],
        },
        ConditionRule {
            required: true,
            conditions: [
                Condition::New,
                Condition::NewOther,
                Condition::CertifiedRefurbished,
                Condition::SellerRefurbished,
                Condition::UsedExcellent,
                Condition::UsedGood,
                Condition::UsedAcceptable,
                Condition::ForPartsOrNotWorking,
            ]
            .map(plain)
            .to_vec(),
        },
    ]
}

/// Writes `site`'s condition-policy file beside its tree in `dir` (which holds the tree):
/// every leaf gets one of [`made_up_rules`], by its id (`id % 5`), so the file is the same at
/// every run. Marked made up (`madeUp`), as it is. Returns the file.
pub fn write_every_leaf_policies(dir: &Path, site: Marketplace) -> ConditionsFile {
    let snapshot = dir.join(site.snapshot_file_name());
    let tree = snapshot::read(&snapshot).unwrap();
    let rules = made_up_rules();
    let answer = tree
        .categories
        .iter()
        .filter(|c| c.leaf)
        .map(|c| (c.id, rules[c.id as usize % rules.len()].clone()));
    let (file, left_out) = conditions::from_answer(
        answer,
        &tree,
        "made up by tests/common/conditions.rs",
        true,
        &conditions::path_beside(&snapshot),
    )
    .unwrap();
    assert_eq!(left_out, conditions::LeftOut::default());
    let path = conditions::path_beside(&snapshot);
    let text = conditions::to_string(&file);
    conditions::parse(&text, &path, &tree).unwrap();
    std::fs::write(&path, text).unwrap();
    file
}
