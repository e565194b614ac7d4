//! The offline check of a listing with variations ([`GroupListing`]): every problem eBay would
//! refuse the group or one of its variants for that can be known before a request
//! (createOrReplaceInventoryItemGroup, publishOfferByInventoryItemGroup), each naming its
//! field, as [`check`](crate::check) does for one listing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use crate::check::{check_category, check_listing, missing_text, problem, too_long};
use crate::variation_problem::VariationProblem;
use crate::{Catalog, GroupListing, Problem, ProblemKind, limits};
use marketplaces::Marketplace;

/// eBay's limits of a listing with variations (GeteBayDetails' `VariationDetails`), defined
/// once in `taxonomy-aspects` and read by `variations!` too.
pub use taxonomy_aspects::variation_limits;

fn var(p: &mut Vec<Problem>, field: String, v: VariationProblem) {
    p.push(Problem {
        field,
        kind: ProblemKind::Variation(v),
    });
}

const GROUP: &str = "inventoryItemGroup";

/// Every offline problem of a listing with variations, each naming its field
/// (`inventoryItemGroup.variesBy.specifications[0].name`,
/// `variants[3].inventoryItem.product.aspects["Size"]`), against `catalog` (the compiled-in
/// trees and rules, or a `--dir`'s); `single_skus`: the SKUs of the run's single-SKU listings
/// (a SKU may not be both).
///
/// The group needs its `inventoryItemGroupKey` (createOrReplaceInventoryItemGroup's path
/// parameter), of at most 50 characters. Each variant is checked as a listing is ([`check`](crate::check): SKU, quantity, price,
/// condition against the category's policy, …), its title, description and pictures coming
/// from the group; its aspects (the group's shared ones and its own) against the category's
/// rules, once per distinct set of its own aspects; then the group: each axis an aspect
/// enabled for variations (not Brand), its values allowed where the aspect is selection-only,
/// at most [`variation_limits`]; one value per axis a variant, each one of the axis's values,
/// no combination twice; `aspectsImageVariesBy` an axis with a picture for each value; the
/// variants sharing category, marketplace, format and policies and one currency; `variantSKUs`
/// the variants' SKUs. Whether the category takes variations is
/// [`Catalog::variations_supported`]'s answer; unknown, nothing is said of it.
pub fn check_group(
    group: &GroupListing,
    catalog: &dyn Catalog,
    single_skus: &HashSet<String>,
) -> Vec<Problem> {
    let mut p = Vec::new();
    let g = &group.inventory_item_group;

    // The group's key: the path parameter of createOrReplaceInventoryItemGroup and the
    // `inventoryItemGroupKey` of publishOfferByInventoryItemGroup, so required.
    missing_text(
        &mut p,
        "inventoryItemGroup.inventoryItemGroupKey",
        g.inventory_item_group_key.as_deref(),
    );
    too_long(
        &mut p,
        "inventoryItemGroup.inventoryItemGroupKey",
        g.inventory_item_group_key.as_deref(),
        limits::INVENTORY_ITEM_GROUP_KEY,
    );
    // The group's own fields: what becomes the listing's title, description and pictures.
    missing_text(&mut p, "inventoryItemGroup.title", g.title.as_deref());
    too_long(
        &mut p,
        "inventoryItemGroup.title",
        g.title.as_deref(),
        limits::TITLE,
    );
    too_long(
        &mut p,
        "inventoryItemGroup.subtitle",
        g.subtitle.as_deref(),
        limits::SUBTITLE,
    );
    missing_text(
        &mut p,
        "inventoryItemGroup.description",
        g.description.as_deref(),
    );
    too_long(
        &mut p,
        "inventoryItemGroup.description",
        g.description.as_deref(),
        limits::DESCRIPTION,
    );
    if g.image_urls.is_empty() {
        problem(
            &mut p,
            "inventoryItemGroup.imageUrls",
            ProblemKind::NoPicture,
        );
    } else if g.image_urls.len() > limits::IMAGES {
        problem(
            &mut p,
            "inventoryItemGroup.imageUrls",
            ProblemKind::TooManyImages {
                count: g.image_urls.len(),
                max: limits::IMAGES,
            },
        );
    }
    for (i, url) in g
        .image_urls
        .iter()
        .enumerate()
        .take(limits::PROBLEMS_PER_LIST)
    {
        if !is_https(url) {
            problem(
                &mut p,
                &format!("inventoryItemGroup.imageUrls[{i}]"),
                ProblemKind::NotHttps,
            );
        }
    }

    // The variants' shared offer fields, against the first variant's.
    let first = group.variants.first();
    let first_marketplace =
        first.and_then(|v| Marketplace::from_inventory_marketplace_id(&v.offer.marketplace_id));
    let first_category = first
        .and_then(|v| v.offer.category_id.as_deref())
        .and_then(|c| c.trim().parse::<u32>().ok());
    let leaf = first_marketplace.zip(first_category);
    if group.variants.is_empty() {
        problem(&mut p, "variants", ProblemKind::Missing);
    }
    if group.variants.len() > variation_limits::VARIANTS {
        var(
            &mut p,
            "variants".into(),
            VariationProblem::TooMany {
                what: "variants",
                count: group.variants.len(),
                max: variation_limits::VARIANTS,
            },
        );
    }
    if leaf.and_then(|(m, id)| catalog.variations_supported(m, id)) == Some(false) {
        var(
            &mut p,
            "variants[0].offer.categoryId".into(),
            VariationProblem::CategoryWithoutVariations,
        );
    }

    // The axes.
    let specs = g
        .varies_by
        .as_ref()
        .map(|v| v.specifications.as_slice())
        .unwrap_or_default();
    if specs.is_empty() {
        problem(
            &mut p,
            "inventoryItemGroup.variesBy.specifications",
            ProblemKind::Missing,
        );
    }
    if specs.len() > variation_limits::AXES {
        var(
            &mut p,
            "inventoryItemGroup.variesBy.specifications".into(),
            VariationProblem::TooMany {
                what: "axes",
                count: specs.len(),
                max: variation_limits::AXES,
            },
        );
    }
    // Each axis's key and its values' keys (case ignored, as eBay compares aspects).
    let mut axes: Vec<(String, HashMap<String, usize>)> = Vec::with_capacity(specs.len());
    for (a, spec) in specs.iter().enumerate() {
        let at = format!("{GROUP}.variesBy.specifications[{a}]");
        let name_key = taxonomy_aspects::key(&spec.name);
        if spec.name.trim().is_empty() {
            problem(&mut p, &format!("{at}.name"), ProblemKind::Missing);
        } else if axes.iter().any(|(k, _)| *k == name_key) {
            var(&mut p, format!("{at}.name"), VariationProblem::AxisTwice);
        } else if name_key == "brand" {
            var(&mut p, format!("{at}.name"), VariationProblem::BrandAxis);
        } else if let Some((m, id)) = leaf
            && let Some(rule) = catalog.variation_axis(m, id, &spec.name, &spec.values)
        {
            if !rule.enabled_for_variations {
                var(
                    &mut p,
                    format!("{at}.name"),
                    VariationProblem::AxisNotEnabled {
                        known: rule.aspect.is_some(),
                    },
                );
            }
            for (i, closest) in rule.not_allowed.into_iter().take(limits::PROBLEMS_PER_LIST) {
                var(
                    &mut p,
                    format!("{at}.values[{i}]"),
                    VariationProblem::ValueNotAllowed { closest },
                );
            }
        }
        if g.aspects
            .keys()
            .any(|k| taxonomy_aspects::key(k) == name_key)
        {
            var(
                &mut p,
                format!("{GROUP}.aspects[{:?}]", spec.name),
                VariationProblem::AxisAlsoShared,
            );
        }
        if spec.values.is_empty() {
            problem(&mut p, &format!("{at}.values"), ProblemKind::Missing);
        }
        if spec.values.len() > variation_limits::VALUES_PER_AXIS {
            var(
                &mut p,
                format!("{at}.values"),
                VariationProblem::TooMany {
                    what: "values",
                    count: spec.values.len(),
                    max: variation_limits::VALUES_PER_AXIS,
                },
            );
        }
        let mut values = HashMap::with_capacity(spec.values.len());
        for (i, v) in spec.values.iter().enumerate() {
            if values.insert(taxonomy_aspects::key(v), i).is_some() {
                var(
                    &mut p,
                    format!("{at}.values[{i}]"),
                    VariationProblem::AxisValueTwice,
                );
            }
        }
        axes.push((name_key, values));
    }

    // The picture axis.
    let image_axes = g
        .varies_by
        .as_ref()
        .map(|v| v.aspects_image_varies_by.as_slice())
        .unwrap_or_default();
    let mut image_axis: Option<(usize, Vec<bool>)> = None;
    for (i, name) in image_axes.iter().enumerate() {
        let k = taxonomy_aspects::key(name);
        match axes.iter().position(|(a, _)| *a == k) {
            Some(a) if image_axis.is_none() => {
                image_axis = Some((a, vec![false; specs[a].values.len()]));
            }
            Some(_) => {}
            None => var(
                &mut p,
                format!("{GROUP}.variesBy.aspectsImageVariesBy[{i}]"),
                VariationProblem::ImageAxisNotAnAxis,
            ),
        }
    }

    // The variants.
    let mut combinations: HashMap<Vec<usize>, usize> = HashMap::with_capacity(group.variants.len());
    let mut skus: HashMap<&str, usize> = HashMap::with_capacity(group.variants.len());
    // The aspect problems of each distinct set of a variant's own aspects (axes left out).
    let mut aspect_problems: HashMap<BTreeMap<&str, &[String]>, Vec<Problem>> = HashMap::new();
    let group_keys: Vec<(String, &String, &Vec<String>)> = g
        .aspects
        .iter()
        .map(|(k, v)| (taxonomy_aspects::key(k), k, v))
        .collect();
    let currency = first
        .and_then(|v| v.offer.pricing_summary.as_ref())
        .and_then(|s| s.price.as_ref())
        .map(|p| p.currency.as_str());
    let empty = BTreeMap::new();
    let listed: HashSet<&str> = g.variant_skus.iter().map(String::as_str).collect();
    for (n, variant) in group.variants.iter().enumerate() {
        let at = Variant(n);
        let item = &variant.inventory_item;
        let offer = &variant.offer;
        // As one listing, its title, description and pictures the group's.
        for found in check_listing(variant, catalog, false) {
            let from_group = match (&found.kind, found.field.as_str()) {
                (ProblemKind::Missing, "inventoryItem.product.title") => g.title.is_some(),
                (ProblemKind::NoPicture, _) => !g.image_urls.is_empty(),
                (ProblemKind::NoDescription, _) => g.description.is_some(),
                _ => false,
            };
            if !from_group {
                p.push(Problem {
                    field: format!("{at}.{}", found.field),
                    kind: found.kind,
                });
            }
        }
        // The SKU: once in the group, not also alone, in variantSKUs.
        if !offer.sku.is_empty() {
            if let Some(&other) = skus.get(offer.sku.as_str()) {
                var(
                    &mut p,
                    format!("{at}.offer.sku"),
                    VariationProblem::SkuTwice { other },
                );
            } else {
                skus.insert(&offer.sku, n);
            }
            if single_skus.contains(&offer.sku) {
                var(
                    &mut p,
                    format!("{at}.offer.sku"),
                    VariationProblem::AlsoASingleListing,
                );
            }
            if !listed.contains(offer.sku.as_str()) {
                var(
                    &mut p,
                    format!("{at}.offer.sku"),
                    VariationProblem::NotInVariantSkus,
                );
            }
        }
        // Shared with the first variant.
        if let Some(first) = first.filter(|_| n > 0) {
            let f = &first.offer;
            let pol = policy;
            let fulfillment: fn(&crate::ListingPolicies) -> &Option<String> =
                |l| &l.fulfillment_policy_id;
            let payment: fn(&crate::ListingPolicies) -> &Option<String> = |l| &l.payment_policy_id;
            let returns: fn(&crate::ListingPolicies) -> &Option<String> = |l| &l.return_policy_id;
            for (field, mine, theirs) in [
                (
                    "offer.categoryId",
                    offer.category_id.as_deref(),
                    f.category_id.as_deref(),
                ),
                (
                    "offer.marketplaceId",
                    Some(offer.marketplace_id.as_str()),
                    Some(f.marketplace_id.as_str()),
                ),
                ("offer.format", offer.format.as_deref(), f.format.as_deref()),
                (
                    "offer.listingPolicies.fulfillmentPolicyId",
                    pol(offer, fulfillment),
                    pol(f, fulfillment),
                ),
                (
                    "offer.listingPolicies.paymentPolicyId",
                    pol(offer, payment),
                    pol(f, payment),
                ),
                (
                    "offer.listingPolicies.returnPolicyId",
                    pol(offer, returns),
                    pol(f, returns),
                ),
            ] {
                if mine != theirs {
                    var(
                        &mut p,
                        format!("{at}.{field}"),
                        VariationProblem::DiffersFromFirstVariant {
                            first: theirs.unwrap_or("none").to_owned(),
                        },
                    );
                }
            }
            let mine = offer
                .pricing_summary
                .as_ref()
                .and_then(|s| s.price.as_ref())
                .map(|p| p.currency.as_str());
            if let (Some(mine), Some(first)) = (mine, currency)
                && mine != first
            {
                var(
                    &mut p,
                    format!("{at}.offer.pricingSummary.price.currency"),
                    VariationProblem::DiffersFromFirstVariant {
                        first: first.to_owned(),
                    },
                );
            }
        }
        if offer.format.as_deref().is_some_and(|f| f != "FIXED_PRICE") {
            var(
                &mut p,
                format!("{at}.offer.format"),
                VariationProblem::NotFixedPrice,
            );
        }

        // Its aspects: one value an axis, one of the axis's; the rest as the group's.
        let own = item.product.as_ref().map_or(&empty, |pr| &pr.aspects);
        let mut combination = Vec::with_capacity(axes.len());
        let mut axis_of: Vec<Option<usize>> = Vec::with_capacity(own.len());
        for (name, values) in own {
            // The name as the axis spells it (no allocation), else the same key.
            let axis = specs
                .iter()
                .position(|s| s.name == *name)
                .filter(|&a| a < axes.len())
                .or_else(|| {
                    let k = taxonomy_aspects::key(name);
                    axes.iter().position(|(a, _)| *a == k)
                });
            axis_of.push(axis);
            if axis.is_none()
                && let Some((_, _, gvalues)) = group_keys
                    .iter()
                    .find(|(gk, _, _)| *gk == taxonomy_aspects::key(name))
                && !same_values(values, gvalues)
            {
                var(
                    &mut p,
                    format!("{at}.inventoryItem.product.aspects[{name:?}]"),
                    VariationProblem::DisagreesWithGroup {
                        group: (*gvalues).clone(),
                    },
                );
            }
        }
        for (a, (_, values)) in axes.iter().enumerate() {
            let axis_name = &specs[a].name;
            let given = own
                .iter()
                .zip(&axis_of)
                .find(|(_, ax)| **ax == Some(a))
                .map(|(entry, _)| entry);
            let field = || {
                format!(
                    "{at}.inventoryItem.product.aspects[{:?}]",
                    given.map_or(axis_name.as_str(), |(n, _)| n.as_str())
                )
            };
            match given.map(|(_, v)| v.as_slice()) {
                None | Some([]) => var(&mut p, field(), VariationProblem::NoValueForAxis),
                Some([value]) => match specs[a]
                    .values
                    .iter()
                    .position(|v| v == value)
                    .or_else(|| values.get(&taxonomy_aspects::key(value)).copied())
                {
                    Some(i) => {
                        combination.push(i);
                        if let Some((image, seen)) = image_axis.as_mut()
                            && *image == a
                            && item
                                .product
                                .as_ref()
                                .is_some_and(|pr| !pr.image_urls.is_empty())
                        {
                            seen[i] = true;
                        }
                    }
                    None => var(
                        &mut p,
                        field(),
                        VariationProblem::NotAnAxisValue {
                            values: specs[a].values.clone(),
                        },
                    ),
                },
                Some(more) => var(
                    &mut p,
                    field(),
                    VariationProblem::OneValuePerAxis { count: more.len() },
                ),
            }
        }
        if combination.len() == axes.len() && !axes.is_empty() {
            if let Some(&other) = combinations.get(&combination) {
                var(
                    &mut p,
                    format!("{at}.inventoryItem.product.aspects"),
                    VariationProblem::SameCombination { other },
                );
            } else {
                combinations.insert(combination, n);
            }
        }

        // Against the category's rules, with the group's shared aspects: once per distinct
        // set of the variant's own (non-axis) aspects.
        if let Some((m, id)) = leaf {
            let signature: BTreeMap<&str, &[String]> = own
                .iter()
                .zip(&axis_of)
                .filter(|(_, ax)| ax.is_none())
                .map(|((k, v), _)| (k.as_str(), v.as_slice()))
                .collect();
            let found = aspect_problems.entry(signature).or_insert_with(|| {
                let mut merged = g.aspects.clone();
                for (k, v) in own {
                    merged.insert(k.clone(), v.clone());
                }
                let product = crate::Product {
                    aspects: merged,
                    ..Default::default()
                };
                let mut found = Vec::new();
                check_category(&mut found, catalog, m, id, Some(&product));
                found
            });
            for f in found.iter() {
                if f.field == "offer.categoryId" && n > 0 {
                    continue;
                }
                p.push(Problem {
                    field: format!("{at}.{}", f.field),
                    kind: f.kind.clone(),
                });
            }
        }
    }
    if let Some((a, seen)) = image_axis {
        for (i, value) in specs[a].values.iter().enumerate() {
            if !seen[i] {
                var(
                    &mut p,
                    format!("{GROUP}.variesBy.specifications[{a}].values[{i}]"),
                    VariationProblem::NoPictureForValue {
                        value: value.clone(),
                    },
                );
            }
        }
    }
    // variantSKUs: exactly the variants' SKUs.
    let mut named: HashSet<&str> = HashSet::with_capacity(g.variant_skus.len());
    for (i, sku) in g.variant_skus.iter().enumerate() {
        if !skus.contains_key(sku.as_str()) || !named.insert(sku) {
            var(
                &mut p,
                format!("{GROUP}.variantSKUs[{i}]"),
                VariationProblem::NoSuchVariant,
            );
        }
    }
    if g.variant_skus.len() > variation_limits::VARIANTS {
        var(
            &mut p,
            format!("{GROUP}.variantSKUs"),
            VariationProblem::TooMany {
                what: "variants",
                count: g.variant_skus.len(),
                max: variation_limits::VARIANTS,
            },
        );
    }
    p
}

/// A policy id of the offer (`which` picks it).
fn policy(o: &crate::Offer, which: fn(&crate::ListingPolicies) -> &Option<String>) -> Option<&str> {
    o.listing_policies
        .as_ref()
        .and_then(|l| which(l).as_deref())
}

/// `variants[N]`, written only into a problem's field.
#[derive(Clone, Copy)]
struct Variant(usize);

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "variants[{}]", self.0)
    }
}

fn same_values(a: &[String], b: &[String]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| taxonomy_aspects::key(x) == taxonomy_aspects::key(y))
}

fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        && url.len() > 8
}
