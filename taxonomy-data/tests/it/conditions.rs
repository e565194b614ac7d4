//! Condition policies (getItemConditionPolicies) in the build: the committed snapshots carry
//! none; a site's condition-policy file is compiled in (each distinct policy once, an index
//! per category), deterministically; one out of step with its tree is left out; an invalid
//! one fails the build naming the file and the policy.

use std::path::{Path, PathBuf};

use marketplaces::Marketplace;
use taxonomy_codegen::build_script::generate_for;
use taxonomy_data::{Condition, Site};
use taxonomy_tree::conditions::{self, ConditionEntry, ConditionRule};
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// A fresh directory holding the committed US snapshot.
fn us_only(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = Marketplace::Us.snapshot_file_name();
    std::fs::copy(committed().join(file), dir.join(file)).unwrap();
    dir
}

fn rule(required: bool, conditions: &[Condition]) -> ConditionRule {
    ConditionRule {
        required,
        conditions: conditions
            .iter()
            .map(|&condition| ConditionEntry {
                condition,
                descriptors: Vec::new(),
            })
            .collect(),
    }
}

/// Writes a condition-policy file for `tree` beside the US snapshot in `dir`: three policies
/// over four leaves.
fn write_policies(dir: &Path, tree: &CategoryTree) {
    let snapshot = dir.join(Marketplace::Us.snapshot_file_name());
    let (file, _) = conditions::from_answer(
        [
            (9355, rule(true, &[Condition::New, Condition::UsedGood])),
            (179, rule(true, &[Condition::New, Condition::UsedGood])),
            (111418, rule(false, &[Condition::New])),
            (172009, rule(false, &[])),
        ],
        tree,
        "written by taxonomy-data/tests/it/conditions.rs",
        false,
        &conditions::path_beside(&snapshot),
    )
    .unwrap();
    std::fs::write(
        conditions::path_beside(&snapshot),
        conditions::to_string(&file),
    )
    .unwrap();
}

fn us_tree() -> CategoryTree {
    snapshot::read(&committed().join(Marketplace::Us.snapshot_file_name())).unwrap()
}

/// The generated tables of the US site alone (its `SiteTables` literal).
fn us_tables(code: &str) -> &str {
    let start = code.find("pub(crate) static US: SiteTables").unwrap();
    let end = start + code[start..].find("\n};").unwrap();
    &code[start..end]
}

#[test]
fn the_committed_snapshots_compile_in_no_condition_policies() {
    for site in Site::compiled_in() {
        assert!(!site.has_condition_policies(), "{site}");
        assert_eq!(site.condition_policies_source(), None, "{site}");
        assert_eq!(site.condition_table_bytes(), 0, "{site}");
        assert!(site.leaves().all(|leaf| leaf.condition_policy().is_none()
            && leaf.conditions().is_none()
            && leaf.condition_required().is_none()));
    }
}

#[test]
fn a_conditions_file_compiles_in_each_policy_once_and_an_index_per_category_deterministically() {
    let dir = us_only("conditions-in-step");
    let tree = us_tree();
    write_policies(&dir, &tree);
    let code = generate_for(&[Marketplace::Us], &dir, Vec::new()).unwrap();
    assert_eq!(
        code,
        generate_for(&[Marketplace::Us], &dir, Vec::new()).unwrap()
    );
    let us = us_tables(&code);
    assert!(
        us.contains(
            "conditions_source: Some(\"written by taxonomy-data/tests/it/conditions.rs\"),"
        ),
        "{}",
        &us[us.len() - 2000..]
    );
    assert!(us.contains("conditions_made_up: false,"));
    assert_eq!(us.matches("::marketplaces::ConditionPolicy {").count(), 3);
    // One u8 a category (the root included), in position order: 4 name a policy.
    let index = &us[us.find("ConditionIndex::Narrow(&[").unwrap()..];
    let values: Vec<u8> = index["ConditionIndex::Narrow(&[".len()..index.find("])").unwrap()]
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(values.len(), tree.categories.len());
    assert_eq!(values.iter().filter(|&&v| v != u8::MAX).count(), 4);
    let at = |id: u32| values[tree.categories.iter().position(|c| c.id == id).unwrap()];
    assert_eq!(at(9355), at(179));
    assert_ne!(at(9355), at(111418));
    assert_eq!(at(15032), u8::MAX); // a parent has none
    // The other sites, not selected, have none.
    assert!(code.contains("conditions_source: None,"));
}

#[test]
fn a_conditions_file_out_of_step_with_its_tree_is_left_out() {
    let dir = us_only("conditions-out-of-step");
    let mut older = us_tree();
    older.meta.version = "133".into();
    write_policies(&dir, &older);
    let code = generate_for(&[Marketplace::Us], &dir, Vec::new()).unwrap();
    let us = us_tables(&code);
    assert!(
        us.contains("conditions_source: None,"),
        "{}",
        &us[us.len() - 400..]
    );
    assert!(us.contains("condition_policies: &[],"));
}

#[test]
fn an_invalid_conditions_file_fails_the_build_naming_the_file_and_the_policy() {
    let dir = us_only("conditions-invalid");
    write_policies(&dir, &us_tree());
    let path = conditions::path_beside(&dir.join(Marketplace::Us.snapshot_file_name()));
    // 15032 (Cell Phones & Accessories) is not a leaf.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("111418", "15032");
    std::fs::write(&path, text).unwrap();
    let error = generate_for(&[Marketplace::Us], &dir, Vec::new())
        .unwrap_err()
        .to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("policy "), "{error}");
    assert!(error.contains("15032"), "{error}");
    assert!(error.contains("`snapshot refresh`"), "{error}");
}

/// `n` distinct policies, policy `i` over leaf `i + 1` (not checked against a tree: the
/// generator takes a checked file).
fn many_policies(n: u32) -> conditions::ConditionsFile {
    let policies = (0..n)
        .map(|i| conditions::PolicyGroup {
            // A distinct set of conditions for each i (its bits).
            rule: rule(
                false,
                &Condition::ALL
                    .iter()
                    .enumerate()
                    .filter(|(bit, _)| i >> bit & 1 == 1)
                    .map(|(_, c)| *c)
                    .collect::<Vec<_>>(),
            ),
            category_ids: vec![i + 1],
        })
        .collect();
    conditions::ConditionsFile {
        tree_id: 0,
        marketplace_id: "EBAY_US".into(),
        version: "1".into(),
        tree_fingerprint: 0,
        source: "many".into(),
        made_up: false,
        policies,
    }
}

/// The numbers of a generated index, in order.
fn index_values(source: &str, variant: &str) -> Vec<u32> {
    let open = format!("crate::ConditionIndex::{variant}(&[");
    let start = source
        .find(&open)
        .unwrap_or_else(|| panic!("no {open} in {source}"))
        + open.len();
    let end = start + source[start..].find("])").unwrap();
    source[start..end]
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn the_index_is_a_byte_below_255_policies_and_two_from_255() {
    use taxonomy_codegen::codegen::conditions_source;
    // Position 0 is the root; positions 1..=n hold ids 1..=n, each with policy id - 1; one
    // more id has no policy.
    let positions = |n: u32| (0..=n + 1).collect::<Vec<u32>>();
    let expected = |n: u32, none: u32| {
        let mut values = vec![none];
        values.extend(0..n);
        values.push(none);
        values
    };
    let narrow = conditions_source(Some(&many_policies(254)), &positions(254));
    assert_eq!(index_values(&narrow, "Narrow"), expected(254, 255));
    let wide = conditions_source(Some(&many_policies(255)), &positions(255));
    assert_eq!(index_values(&wide, "Wide"), expected(255, 65535));
}

/// 2,000 distinct policies (the bound, `conditions::MAX_POLICIES`), each a card's:
/// Like New with the same Professional Grader of 5 values (2,000 descriptors and 10,000
/// values in the file, both bounds), and a distinct set of the other conditions (its bits).
fn at_the_bound_sharing_one_descriptor() -> conditions::ConditionsFile {
    use conditions::DescriptorEntry;
    let grader = DescriptorEntry {
        id: 27501,
        name: "Professional Grader".into(),
        required: true,
        multiple: false,
        free_text: false,
        max_length: None,
        values: [
            "Professional Sports Authenticator (PSA)",
            "Beckett Collectors Club Grading (BCCG)",
            "Beckett Vintage Grading (BVG)",
            "Beckett Grading Services (BGS)",
            "Certified Guaranty Company (CGC)",
        ]
        .iter()
        .zip(275010..)
        .map(|(name, id)| (id, name.to_string()))
        .collect(),
        requires: vec![],
    };
    let mut file = many_policies(2_000);
    for group in &mut file.policies {
        // Distinct still: whether the bits held Like New is now `required`.
        group.rule.required = group
            .rule
            .conditions
            .iter()
            .any(|c| c.condition == Condition::LikeNew);
        group
            .rule
            .conditions
            .retain(|c| c.condition != Condition::LikeNew);
        group.rule.conditions.insert(
            0,
            ConditionEntry {
                condition: Condition::LikeNew,
                descriptors: vec![grader.clone()],
            },
        );
    }
    file
}

#[test]
fn the_generated_policies_grow_with_distinct_facts_not_with_their_repetitions() {
    use taxonomy_codegen::codegen::conditions_source;
    let file = at_the_bound_sharing_one_descriptor();
    assert_eq!(file.policies.len(), 2_000);
    let mut rules: Vec<_> = file.policies.iter().map(|p| &p.rule).collect();
    rules.sort();
    rules.dedup();
    assert_eq!(rules.len(), 2_000, "the policies are distinct");
    // The distinct facts: each policy and each condition it allows, each distinct allowed
    // condition, descriptor and value.
    let allowed: usize = file.policies.iter().map(|p| p.rule.conditions.len()).sum();
    let distinct_conditions = Condition::ALL.len() + 1;
    let facts = file.policies.len() + allowed + distinct_conditions + 1 + 5;
    let source = conditions_source(Some(&file), &[]);
    // 32 bytes a fact: a policy's literal is about 60 bytes, a condition it names 4 (`C12,`),
    // a distinct condition, descriptor or value about 120. Written out in every policy, the
    // shared descriptor alone was 2,000 copies of about 700 bytes.
    assert!(
        source.len() < 32 * facts,
        "{} bytes of source for {facts} distinct facts",
        source.len()
    );
    // Each value's name once.
    assert_eq!(
        source
            .matches("\"Professional Sports Authenticator (PSA)\"")
            .count(),
        1
    );
}
