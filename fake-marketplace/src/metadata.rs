//! The Sell Metadata API's getItemConditionPolicies
//! (`GET /sell/metadata/v1/marketplace/{marketplace_id}/get_item_condition_policies`) and
//! getListingStructurePolicies (`…/get_listing_structure_policies`), for every leaf of each
//! tree the fake serves.
//!
//! The policies are **made up** (the fake has no real answer; [`made_up_policy`] says which
//! leaf gets which), deterministic and shaped by eBay's OpenAPI description of the Metadata
//! API; every answer carries `X-Fake-Marketplace: made-up` so that nothing taken from the fake
//! is mistaken for eBay's. A test sets a category's policy with
//! [`FakeMarketplace::set_item_condition_policy`].
//!
//! As eBay answers: `filter=categoryIds:{a|b|c}` gives a leaf's own policy and a parent's
//! leaves'; more than 50 ids: the first 50 and warning 46004; an unknown id: 400, errorId
//! 46003; a filter of another form: 400, errorId 46002; an unknown marketplace (or one the
//! fake holds no tree of): 400, errorId 46001; no policy to give: `204 No Content`. The token
//! needs `https://api.ebay.com/oauth/api_scope` or `…/sell.inventory` (else eBay's 403,
//! errorId 1100); the restricted (refurbished) conditions are answered only to a token with
//! `sell.inventory`.
//!
//! getListingStructurePolicies answers the same way (the same filter, errors, warning and
//! `204`), each category's `variationsSupported` made up by [`made_up_variations_supported`]
//! (a test sets one with [`FakeMarketplace::set_variations_supported`]) and labelled
//! `X-Fake-Marketplace: made-up`; a parent named in the filter is answered too, beside its
//! leaves, as eBay's reference says. Its token needs `https://api.ebay.com/oauth/api_scope`,
//! the only scope eBay's description lists for it.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_tree::tree::CategoryTree;

use crate::http::{Request, Response};
use crate::taxonomy::MADE_UP_HEADER;
use crate::{FakeMarketplace, FakeState, Route, lock};

/// The path pattern of getItemConditionPolicies.
pub const CONDITION_POLICIES_PATTERN: &str =
    "/sell/metadata/v1/marketplace/{marketplace_id}/get_item_condition_policies";

/// The getItemConditionPolicies path of `marketplace_id`.
pub fn condition_policies_path(marketplace_id: &str) -> String {
    CONDITION_POLICIES_PATTERN.replace("{marketplace_id}", marketplace_id)
}

/// The path pattern of getListingStructurePolicies.
pub const STRUCTURE_POLICIES_PATTERN: &str =
    "/sell/metadata/v1/marketplace/{marketplace_id}/get_listing_structure_policies";

/// The getListingStructurePolicies path of `marketplace_id`.
pub fn structure_policies_path(marketplace_id: &str) -> String {
    STRUCTURE_POLICIES_PATTERN.replace("{marketplace_id}", marketplace_id)
}

// The error ids eBay's OpenAPI description of the Metadata API lists for
// getItemConditionPolicies (domain `API_METADATA`).

/// errorId: an internal failure (HTTP 500, category `APPLICATION`).
pub const ERROR_INTERNAL: u32 = 46000;
/// errorId: the marketplace id is not found (HTTP 400).
pub const ERROR_MARKETPLACE_NOT_FOUND: u32 = 46001;
/// errorId: the filter is invalid (HTTP 400).
pub const ERROR_INVALID_FILTER: u32 = 46002;
/// errorId: a category id is not found for the marketplace (HTTP 400).
pub const ERROR_CATEGORY_NOT_FOUND: u32 = 46003;
/// warningId: only the first 50 category ids of the filter were considered (HTTP 200).
pub const WARNING_ONLY_50: u32 = 46004;

/// The most category ids eBay considers in one filter.
pub const MAX_FILTER_IDS: usize = 50;

/// The Metadata part of the fake's state: the policies tests set, by marketplace and category
/// (`None`: the category has no policy).
#[derive(Default)]
pub(crate) struct MetadataState {
    policies: Mutex<HashMap<(Marketplace, u32), Option<Value>>>,
    /// The `variationsSupported` tests set (getListingStructurePolicies).
    structure: Mutex<HashMap<(Marketplace, u32), Option<bool>>>,
}

impl FakeMarketplace {
    /// Answers `policy` for the category `category_id` of `site` from now on (getItemConditionPolicies,
    /// and publishOffer's condition check), instead of [`made_up_policy`]: eBay's
    /// `ItemConditionPolicy` without its ids (`{"itemConditionRequired": true, "itemConditions":
    /// [{"conditionId": "1000", …}]}`; `categoryId` and `categoryTreeId` are filled in).
    /// `None`: the category has no policy (left out of answers; publishOffer checks nothing).
    pub fn set_item_condition_policy(
        &self,
        site: Marketplace,
        category_id: u32,
        policy: Option<Value>,
    ) {
        lock(&self.state().metadata.policies).insert((site, category_id), policy);
    }
}

/// The trading-card leaves that get condition descriptors: eBay's "CCG Individual Cards"
/// (183454 on EBAY_US), the sports (261328) and non-sport (183050) "Trading Card Singles", by
/// id, or by the names eBay's reference gives them.
fn is_trading_card_singles(tree: &CategoryTree, id: u32) -> bool {
    let Some(c) = tree.get(id).filter(|c| c.leaf) else {
        return false;
    };
    matches!(id, 183454 | 261328 | 183050)
        || matches!(
            c.name.as_str(),
            "CCG Individual Cards"
                | "Sports Trading Card Singles"
                | "Sports Trading Cards Singles"
                | "Non-Sport Trading Card Singles"
        )
}

fn condition(id: u32, description: &str, help: &str) -> Value {
    json!({
        "conditionId": id.to_string(),
        "conditionDescription": description,
        "conditionHelpText": help,
    })
}

fn values(values: &[(u32, &str)]) -> Value {
    values
        .iter()
        .map(|(id, name)| {
            json!({"conditionDescriptorValueId": id.to_string(), "conditionDescriptorValueName": name})
        })
        .collect()
}

/// Graded (2750) and Ungraded (4000) trading cards, with the descriptors eBay's Inventory API
/// documents for them: a graded card names its Professional Grader (27501) and Grade (27502),
/// each required with the other, and may give its Certification Number (27503, free text of
/// at most 30 characters); an ungraded card its Card Condition (40001).
fn trading_card_conditions() -> Value {
    let mut graded = condition(
        2750,
        "Graded",
        "Professionally graded and encapsulated by a grading service.",
    );
    graded["conditionDescriptors"] = json!([
        {
            "conditionDescriptorId": "27501",
            "conditionDescriptorName": "Professional Grader",
            "conditionDescriptorHelpText": "Select the professional grader",
            "conditionDescriptorConstraint": {
                "applicableToConditionDescriptorIds": ["27502"],
                "cardinality": "SINGLE", "mode": "SELECTION_ONLY", "usage": "REQUIRED",
            },
            "conditionDescriptorValues": values(&[
                (275010, "Professional Sports Authenticator (PSA)"),
                (275011, "Beckett Collectors Club Grading (BCCG)"),
                (275012, "Beckett Vintage Grading (BVG)"),
                (275013, "Beckett Grading Services (BGS)"),
                (275015, "Certified Guaranty Company (CGC)"),
                (275016, "Sportscard Guaranty Corporation (SGC)"),
            ]),
        },
        {
            "conditionDescriptorId": "27502",
            "conditionDescriptorName": "Grade",
            "conditionDescriptorHelpText": "Select the grade",
            "conditionDescriptorConstraint": {
                "applicableToConditionDescriptorIds": ["27501"],
                "cardinality": "SINGLE", "mode": "SELECTION_ONLY", "usage": "REQUIRED",
            },
            "conditionDescriptorValues": values(&[
                (275020, "10"), (275021, "9.5"), (275022, "9"), (275023, "8.5"), (275024, "8"),
            ]),
        },
        {
            "conditionDescriptorId": "27503",
            "conditionDescriptorName": "Certification Number",
            "conditionDescriptorHelpText": "Enter the certification number",
            "conditionDescriptorConstraint": {
                "cardinality": "SINGLE", "mode": "FREE_TEXT", "maxLength": 30,
            },
        },
    ]);
    let mut ungraded = condition(4000, "Ungraded", "A card that has not been graded.");
    ungraded["conditionDescriptors"] = json!([{
        "conditionDescriptorId": "40001",
        "conditionDescriptorName": "Card Condition",
        "conditionDescriptorHelpText": "Select ungraded condition",
        "conditionDescriptorConstraint": {
            "cardinality": "SINGLE", "mode": "SELECTION_ONLY", "usage": "REQUIRED",
            "defaultConditionDescriptorValueId": "400010",
        },
        "conditionDescriptorValues": values(&[
            (400010, "Near mint or better"), (400011, "Excellent"), (400012, "Very good"),
            (400013, "Poor"),
        ]),
    }]);
    json!([graded, ungraded])
}

/// The phone, laptop and tablet leaves, which take the conditions eBay's category pages list
/// for them (refurbished grades, seller refurbished, used, for parts), one required: by id on
/// EBAY_US (9355 "Cell Phones & Smartphones", 177 "PC Laptops & Netbooks", 111422 "Apple
/// Laptops", 171485 "Tablets & eBook Readers") or by those names.
fn is_phone_or_computer(tree: &CategoryTree, id: u32) -> bool {
    let Some(c) = tree.get(id).filter(|c| c.leaf) else {
        return false;
    };
    matches!(id, 9355 | 177 | 111422 | 171485)
        || matches!(
            c.name.as_str(),
            "Cell Phones & Smartphones"
                | "PC Laptops & Netbooks"
                | "Apple Laptops"
                | "Tablets & eBook Readers"
        )
}

/// The top-level categories whose leaves take no item condition on eBay (a ticket, a
/// service, a property is not new or used): on EBAY_US 1305 "Tickets & Experiences", 316
/// "Specialty Services" and 10542 "Real Estate", or those names.
const NO_CONDITION_ROOTS: [(u32, &str); 3] = [
    (1305, "Tickets & Experiences"),
    (316, "Specialty Services"),
    (10542, "Real Estate"),
];

/// Whether the leaf `id` lies under one of [`NO_CONDITION_ROOTS`].
fn takes_no_condition(tree: &CategoryTree, id: u32) -> bool {
    let mut at = tree.get(id);
    // A tree's depth is bounded (taxonomy_tree's MAX_LEVEL); the bound guards a cycle anyway.
    for _ in 0..64 {
        let Some(c) = at else { return false };
        if c.parent == Some(0) {
            return NO_CONDITION_ROOTS
                .iter()
                .any(|(root, name)| c.id == *root || c.name == *name);
        }
        at = c.parent.and_then(|p| tree.get(p));
    }
    false
}

/// The fake's made-up policy of the leaf `id` of `tree` (`None` for a category that is not a
/// leaf of it), without `categoryId` and `categoryTreeId`. Made up, deterministic, and
/// plausible for the common leaves:
///
/// * the trading-card singles (183454, 261328, 183050 on EBAY_US): a condition required,
///   Graded (2750) or Ungraded (4000), with their condition descriptors;
/// * phones, laptops and tablets (`is_phone_or_computer`: 9355, 177, 111422, 171485 on
///   EBAY_US): a condition required, New (1000), New other (1500), Certified - Refurbished
///   (2000), Excellent, Very Good and Good - Refurbished (2010, 2020, 2030; the four
///   `RESTRICTED`), Seller refurbished (2500), Used (3000), For parts or not working (7000);
/// * the leaves of Tickets & Experiences, Specialty Services and Real Estate: no condition
///   (none listed, none required), as eBay's;
/// * a leaf whose id is 5 modulo 7: a condition required, New (1000) or Used (3000);
/// * any other leaf: New (1000), New other (1500), Excellent - Refurbished (2010,
///   `RESTRICTED`), Used (3000), For parts or not working (7000), none required.
pub fn made_up_policy(tree: &CategoryTree, id: u32) -> Option<Value> {
    made_up_kind(tree, id).map(made_up_body)
}

/// Which of [`made_up_policy`]'s answers a leaf gets: the answer depends on this alone.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum MadeUp {
    TradingCards,
    PhoneOrComputer,
    NoCondition,
    NewOrUsed,
    Common,
}

/// The kind of the leaf `id` of `tree` (`None` for a category that is not a leaf of it).
fn made_up_kind(tree: &CategoryTree, id: u32) -> Option<MadeUp> {
    tree.get(id).filter(|c| c.leaf)?;
    Some(if is_trading_card_singles(tree, id) {
        MadeUp::TradingCards
    } else if is_phone_or_computer(tree, id) {
        MadeUp::PhoneOrComputer
    } else if takes_no_condition(tree, id) {
        MadeUp::NoCondition
    } else if id % 7 == 5 {
        MadeUp::NewOrUsed
    } else {
        MadeUp::Common
    })
}

/// The policy of a leaf of the kind `kind`, without `categoryId` and `categoryTreeId`.
fn made_up_body(kind: MadeUp) -> Value {
    let new = || {
        condition(
            1000,
            "New",
            "A brand-new, unused, unopened, undamaged item.",
        )
    };
    let new_other = || {
        condition(
            1500,
            "New other (see details)",
            "A new, unused item with absolutely no signs of wear.",
        )
    };
    let used = || condition(3000, "Used", "An item that has been used previously.");
    let parts = || {
        condition(
            7000,
            "For parts or not working",
            "An item that does not function as intended.",
        )
    };
    let restricted = |id: u32, name: &str| {
        let mut c = condition(
            id,
            name,
            "Restored to working order by the manufacturer or a vetted refurbisher.",
        );
        c["usage"] = json!("RESTRICTED");
        c
    };
    match kind {
        MadeUp::TradingCards => json!({
            "itemConditionRequired": true,
            "itemConditions": trading_card_conditions(),
        }),
        MadeUp::PhoneOrComputer => json!({"itemConditionRequired": true, "itemConditions": [
            new(),
            new_other(),
            restricted(2000, "Certified - Refurbished"),
            restricted(2010, "Excellent - Refurbished"),
            restricted(2020, "Very Good - Refurbished"),
            restricted(2030, "Good - Refurbished"),
            condition(2500, "Seller refurbished", "Restored to working order by the seller or a third party."),
            used(),
            parts(),
        ]}),
        MadeUp::NoCondition => json!({"itemConditionRequired": false, "itemConditions": []}),
        MadeUp::NewOrUsed => {
            json!({"itemConditionRequired": true, "itemConditions": [new(), used()]})
        }
        MadeUp::Common => json!({"itemConditionRequired": false, "itemConditions": [
            new(),
            new_other(),
            restricted(2010, "Excellent - Refurbished"),
            used(),
            parts(),
        ]}),
    }
}

/// The policy served for the category `id` of `site` (whose tree is `tree`): the one a test
/// set, else [`made_up_policy`]; with `categoryId` and `categoryTreeId`.
pub(crate) fn policy_of(
    state: &FakeState,
    site: Marketplace,
    tree: &CategoryTree,
    id: u32,
) -> Option<Value> {
    let set = lock(&state.metadata.policies).get(&(site, id)).cloned();
    let mut policy = match set {
        Some(policy) => policy?,
        None => made_up_policy(tree, id)?,
    };
    if let Some(fields) = policy.as_object_mut() {
        fields.insert("categoryId".into(), json!(id.to_string()));
        fields.insert(
            "categoryTreeId".into(),
            json!(tree.meta.tree_id.to_string()),
        );
    }
    Some(policy)
}

/// The error body of the Metadata API with one error.
fn error(status: u16, id: u32, message: &str, parameters: &[(&str, &str)]) -> Response {
    Response::json(
        status,
        &json!({"errors": [error_value(id, message, parameters)]}),
    )
    .with_header(MADE_UP_HEADER, "made-up")
}

fn error_value(id: u32, message: &str, parameters: &[(&str, &str)]) -> Value {
    let mut e = json!({
        "errorId": id,
        "domain": "API_METADATA",
        "category": if id == ERROR_INTERNAL { "APPLICATION" } else { "REQUEST" },
        "message": message,
    });
    if !parameters.is_empty() {
        e["parameters"] = parameters
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect();
    }
    e
}

/// The ids of `filter=categoryIds:{a|b|c}` (blanks around each tolerated), or `None` when the
/// filter has another form.
fn filter_ids(filter: &str) -> Option<Vec<u32>> {
    let list = filter
        .trim()
        .strip_prefix("categoryIds:")?
        .trim()
        .strip_prefix('{')?
        .strip_suffix('}')?;
    list.split('|')
        .map(|id| id.trim().parse::<u32>().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|ids| !ids.is_empty())
}

/// The leaves at or below `id` in `tree`, in the tree's order.
fn leaves_below(tree: &CategoryTree, id: u32, out: &mut Vec<u32>) {
    let mut stack = vec![id];
    while let Some(at) = stack.pop() {
        let Some(c) = tree.get(at) else { continue };
        if c.leaf {
            out.push(at);
        } else {
            stack.extend(c.children.iter().rev());
        }
    }
}

/// What a Metadata API request of `state` asks for: its marketplace, that marketplace's tree,
/// the category ids its filter names (`None`: no filter, every category; the first 50 when
/// more, with warning 46004 in the warnings) and the warnings; or eBay's error answer (46001,
/// 46002, 46003, 46000).
type Asked = (Marketplace, Arc<CategoryTree>, Option<Vec<u32>>, Vec<Value>);

fn asked(request: &Request, state: &FakeState) -> Result<Asked, Response> {
    let marketplace = request.param("marketplace_id").unwrap_or_default();
    let not_found = || {
        error(
            400,
            ERROR_MARKETPLACE_NOT_FOUND,
            "The specified marketplace ID was not found.",
            &[("marketplace_id", marketplace)],
        )
    };
    let Some(site) = Marketplace::from_marketplace_id(marketplace) else {
        return Err(not_found());
    };
    let tree = match state.taxonomy.tree(site) {
        Ok(tree) => tree,
        Err(crate::taxonomy::Unavailable::Missing) => return Err(not_found()),
        Err(e) => {
            return Err(error(
                500,
                ERROR_INTERNAL,
                "There was a problem with an eBay internal system or process. Contact eBay developer support for assistance.",
                &[("reason", &e.to_string())],
            ));
        }
    };
    let mut warnings = Vec::new();
    let Some(filter) = request.query_param("filter") else {
        return Ok((site, tree, None, warnings));
    };
    let Some(mut ids) = filter_ids(&filter) else {
        return Err(error(
            400,
            ERROR_INVALID_FILTER,
            "The filter value is invalid. Sample supported values: filter=categoryIds:{catId1|catId2|catId3}.",
            &[("filter", &filter)],
        ));
    };
    if ids.len() > MAX_FILTER_IDS {
        ids.truncate(MAX_FILTER_IDS);
        warnings.push(error_value(
            WARNING_ONLY_50,
            "Only 50 Category IDs specified in the filter are considered.",
            &[],
        ));
    }
    if let Some(unknown) = ids.iter().find(|id| tree.get(**id).is_none()) {
        return Err(error(
            400,
            ERROR_CATEGORY_NOT_FOUND,
            "The specified categoryId was not found for the marketplace.",
            &[("categoryId", &unknown.to_string())],
        ));
    }
    Ok((site, tree, Some(ids), warnings))
}

fn condition_policies(request: &Request, state: &FakeState) -> Response {
    let token = match state.check_scope(request, "") {
        Ok(token) => token,
        Err(denied) => match state.check_scope(request, "/sell.inventory") {
            Ok(token) => token,
            Err(_) => return denied,
        },
    };
    let restricted_too = token
        .scopes
        .iter()
        .any(|s| s.ends_with("/oauth/api_scope/sell.inventory"));
    let (site, tree, named, warnings) = match asked(request, state) {
        Ok(asked) => asked,
        Err(answer) => return answer,
    };
    let categories: Vec<u32> = match named {
        None => tree.listable().filter(|c| c.leaf).map(|c| c.id).collect(),
        Some(ids) => {
            let mut leaves = Vec::new();
            for id in ids {
                leaves_below(&tree, id, &mut leaves);
            }
            let mut seen = BTreeSet::new();
            leaves.retain(|id| seen.insert(*id));
            leaves
        }
    };
    // Written as text: a site's answer names every leaf (tens of thousands), and the made-up
    // policies are a handful of bodies, each serialized once.
    let set: HashMap<u32, Option<Value>> = lock(&state.metadata.policies)
        .iter()
        .filter(|((s, _), _)| *s == site)
        .map(|((_, id), policy)| (*id, policy.clone()))
        .collect();
    let without_restricted = |mut policy: Value| {
        if !restricted_too && let Some(list) = policy["itemConditions"].as_array_mut() {
            list.retain(|c| c["usage"] != json!("RESTRICTED"));
        }
        policy
    };
    let tree_id = tree.meta.tree_id.to_string();
    let mut made_up: HashMap<MadeUp, String> = HashMap::new();
    let mut policies = Vec::new();
    for id in categories {
        let entry = match set.get(&id) {
            Some(None) => continue,
            Some(Some(_)) => match policy_of(state, site, &tree, id) {
                Some(policy) => without_restricted(policy).to_string(),
                None => continue,
            },
            None => {
                let Some(kind) = made_up_kind(&tree, id) else {
                    continue;
                };
                // `{"itemConditionRequired":…,"itemConditions":[…]}`: the keys come after
                // `categoryId` and `categoryTreeId` in serde_json's (sorted) order.
                let body = made_up
                    .entry(kind)
                    .or_insert_with(|| without_restricted(made_up_body(kind)).to_string());
                format!(
                    "{{\"categoryId\":\"{id}\",\"categoryTreeId\":\"{tree_id}\",{}",
                    &body[1..]
                )
            }
        };
        policies.push(entry);
    }
    policies_answer("itemConditionPolicies", &policies, warnings)
}

/// A Metadata API answer listing `policies` (each a JSON object, as text) under `key`, with
/// `warnings`; `204 No Content` when both are empty, as eBay answers.
fn policies_answer(key: &str, policies: &[String], warnings: Vec<Value>) -> Response {
    if policies.is_empty() && warnings.is_empty() {
        return Response::new(204, Vec::new()).with_header(MADE_UP_HEADER, "made-up");
    }
    let mut body = format!("{{\"{key}\":[{}]", policies.join(","));
    if !warnings.is_empty() {
        body.push_str(",\"warnings\":");
        body.push_str(&Value::Array(warnings).to_string());
    }
    body.push('}');
    Response::new(200, body)
        .with_header("Content-Type", "application/json")
        .with_header(MADE_UP_HEADER, "made-up")
}

// ---- getListingStructurePolicies ----

/// The top-level category whose leaves always take variations in the fake's made-up
/// listing-structure policies: Clothing, Shoes & Accessories (11450 on EBAY_US), or that name.
const CLOTHING_ROOT: (u32, &str) = (11450, "Clothing, Shoes & Accessories");

/// The top-level category above `id` in `tree` (`id` itself when it is one), if any.
fn top_level(tree: &CategoryTree, id: u32) -> Option<&taxonomy_tree::tree::Category> {
    let mut at = tree.get(id);
    // A tree's depth is bounded (taxonomy_tree's MAX_LEVEL); the bound guards a cycle anyway.
    for _ in 0..64 {
        let c = at?;
        if c.parent == Some(0) {
            return Some(c);
        }
        at = c.parent.and_then(|p| tree.get(p));
    }
    None
}

/// The fake's made-up `variationsSupported` of the leaf `id` of `tree` (`None` for a category
/// that is not a leaf of it). Made up, deterministic, and plausible for the common leaves:
///
/// * the leaves of Clothing, Shoes & Accessories (11450 on EBAY_US): `true` (sizes and
///   colours);
/// * the leaves of Tickets & Experiences, Specialty Services and Real Estate (1305, 316,
///   10542 on EBAY_US): `false`, as those take no item condition either;
/// * any other leaf whose id is 3 modulo 11: `false`;
/// * any other leaf: `true`.
pub fn made_up_variations_supported(tree: &CategoryTree, id: u32) -> Option<bool> {
    tree.get(id).filter(|c| c.leaf)?;
    let top = top_level(tree, id);
    let under = |(root, name): (u32, &str)| top.is_some_and(|c| c.id == root || c.name == name);
    if under(CLOTHING_ROOT) {
        return Some(true);
    }
    if NO_CONDITION_ROOTS.iter().any(|root| under(*root)) {
        return Some(false);
    }
    Some(id % 11 != 3)
}

impl FakeMarketplace {
    /// Answers `supported` as the `variationsSupported` of the category `category_id` of
    /// `site` from now on (getListingStructurePolicies), instead of
    /// [`made_up_variations_supported`]; `None`: the category has no policy (left out of
    /// answers).
    pub fn set_variations_supported(
        &self,
        site: Marketplace,
        category_id: u32,
        supported: Option<bool>,
    ) {
        lock(&self.state().metadata.structure).insert((site, category_id), supported);
    }
}

/// `variationsSupported` of the category `id` of `site` (whose tree is `tree`): the one a test
/// set, else [`made_up_variations_supported`] for a leaf, else (a parent named in a filter)
/// whether any leaf below it takes variations.
pub(crate) fn variations_supported_of(
    state: &FakeState,
    site: Marketplace,
    tree: &CategoryTree,
    id: u32,
) -> Option<bool> {
    if let Some(set) = lock(&state.metadata.structure).get(&(site, id)) {
        return *set;
    }
    if tree.get(id)?.leaf {
        return made_up_variations_supported(tree, id);
    }
    let mut leaves = Vec::new();
    leaves_below(tree, id, &mut leaves);
    Some(
        leaves
            .iter()
            .any(|leaf| variations_supported_of(state, site, tree, *leaf) == Some(true)),
    )
}

/// getListingStructurePolicies: every leaf without a filter; with one, each category named
/// (a parent's own policy too, as eBay's reference says) and the leaves below it.
fn structure_policies(request: &Request, state: &FakeState) -> Response {
    // eBay's description lists the application scope alone for this call.
    if let Err(denied) = state.check_scope(request, "") {
        return denied;
    }
    let (site, tree, named, warnings) = match asked(request, state) {
        Ok(asked) => asked,
        Err(answer) => return answer,
    };
    let categories: Vec<u32> = match named {
        None => tree.listable().filter(|c| c.leaf).map(|c| c.id).collect(),
        Some(ids) => {
            let mut out = Vec::new();
            for id in ids {
                if tree.get(id).is_some_and(|c| !c.leaf) {
                    out.push(id);
                }
                leaves_below(&tree, id, &mut out);
            }
            let mut seen = BTreeSet::new();
            out.retain(|id| seen.insert(*id));
            out
        }
    };
    // Written as text, as the condition policies are (tens of thousands of leaves).
    let tree_id = tree.meta.tree_id.to_string();
    let policies: Vec<String> = categories
        .iter()
        .filter_map(|id| {
            let supported = variations_supported_of(state, site, &tree, *id)?;
            Some(format!(
                "{{\"categoryId\":\"{id}\",\"categoryTreeId\":\"{tree_id}\",\"variationsSupported\":{supported}}}"
            ))
        })
        .collect();
    policies_answer("listingStructurePolicies", &policies, warnings)
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("GET", CONDITION_POLICIES_PATTERN, condition_policies),
        Route::new("GET", STRUCTURE_POLICIES_PATTERN, structure_policies),
    ]
}
