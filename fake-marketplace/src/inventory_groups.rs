//! Inventory item groups (a listing with variations), as eBay's Inventory API reference
//! describes them:
//!
//! * createOrReplaceInventoryItemGroup (`PUT /inventory_item_group/{inventoryItemGroupKey}`):
//!   the group stored as given (an `InventoryItemGroup` object; not one: 25709), 201 when new,
//!   204 when replaced; the headers of the calls with a body (25709 naming the header); a
//!   `variantSKUs` entry the seller has no inventory item for: 25702; a SKU that belongs to
//!   another group: 25703; a SKU already live as a single-SKU listing: 25704. A SKU removed from
//!   the `variantSKUs` of a published group leaves its listing: its offer is unpublished, the
//!   other variants stay live under the same listing id;
//! * getInventoryItemGroup and deleteInventoryItemGroup: an unknown key is 25705;
//! * publishOfferByInventoryItemGroup (`POST /offer/publish_by_inventory_item_group`,
//!   `{"inventoryItemGroupKey", "marketplaceId"}`): an unknown group is 25705; then each
//!   variant's offer on that marketplace checked as publishOffer checks it (its item with the
//!   group's shared aspects), and the group as a whole: a variant without an offer on the
//!   marketplace, an axis (`variesBy.specifications`) that the category's aspects do not
//!   enable for variations (`aspectEnabledForVariations` false in getItemAspectsForCategory's
//!   answer; an aspect the category does not name is a custom axis and taken), a variant
//!   without exactly one value of an axis among that axis's values, two variants with the same
//!   combination of values, variants of different categories, formats or policies; a category
//!   whose listing-structure policy takes no variations (`variationsSupported` false) is
//!   25005 ("Invalid category. {additionalInfo}": the closest id eBay documents for the call,
//!   none naming variations). eBay's description gives none of the other group refusals an
//!   id of its own: the fake answers the
//!   call's user error, errorId 25002 ("Any User error. {additionalInfo}"), with an
//!   `additionalInfo` that is the fake's own text, labelled so. A published group keeps its
//!   listing id on every later publish; every variant's offer is then `PUBLISHED` with that
//!   `listing.listingId` (what getOffers of a variant's SKU reads back);
//! * withdrawOfferByInventoryItemGroup (same body): the group's live offers on the marketplace
//!   unpublished, 204; none live: 25725 ("No offer found").

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{
    Seller, body, error, error_value, needs_content_language, publish_error, seller, with_seller,
};
use crate::{FakeState, Request, Response};

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(response) => return response,
        }
    };
}

/// A group as the fake holds it: what createOrReplaceInventoryItemGroup stored, and the
/// listing id once published (on its variants' offers, not in the group's own fields).
#[derive(Clone, Debug)]
pub(super) struct Group {
    value: Value,
    listing_id: Option<String>,
}

fn group_not_found(key: &str) -> Response {
    error(
        400,
        25705,
        &format!(
            "The Inventory Item Group named {key} could not be found or is not available in the system."
        ),
        &[("inventoryItemGroupKey", key)],
    )
}

fn variant_skus(group: &Value) -> Vec<String> {
    group["variantSKUs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The keys of the groups whose `variantSKUs` name `sku`, sorted (getInventoryItem's
/// `groupIds`).
pub(super) fn groups_of(seller: &Seller, sku: &str) -> Vec<String> {
    let mut keys: Vec<String> = seller
        .groups
        .iter()
        .filter(|(_, g)| variant_skus(&g.value).iter().any(|s| s == sku))
        .map(|(key, _)| key.clone())
        .collect();
    keys.sort();
    keys
}

/// createOrReplaceInventoryItemGroup.
pub(super) fn put_group(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let mut group = tri!(body(request));
    if !group.is_object() {
        return error(
            400,
            25709,
            "Invalid value for inventoryItemGroup: not an object.",
            &[("fieldName", "inventoryItemGroup")],
        );
    }
    let key = request
        .param("inventoryItemGroupKey")
        .unwrap_or_default()
        .to_owned();
    group["inventoryItemGroupKey"] = json!(key);
    let skus = variant_skus(&group);
    with_seller(state, &seller, |s| {
        for sku in &skus {
            if !s.items.contains_key(sku) {
                return error(
                    400,
                    25702,
                    &format!("{sku} could not be found or is not available in the system."),
                    &[("skuValue", sku)],
                );
            }
            if let Some((other, _)) = s
                .groups
                .iter()
                .find(|(k, g)| **k != key && variant_skus(&g.value).contains(sku))
            {
                return error(
                    400,
                    25703,
                    &format!(
                        "The following SKU is already a member of another group. SKU : {sku} groupId : {other}"
                    ),
                    &[("skuValue", sku), ("inventoryItemGroupKey", other)],
                );
            }
            let own = s.groups.get(&key).and_then(|g| g.listing_id.clone());
            if let Some(listing) = s
                .offers
                .values()
                .filter(|o| o["sku"] == json!(sku) && o["status"] == json!("PUBLISHED"))
                .filter_map(|o| o["listing"]["listingId"].as_str())
                .find(|l| own.as_deref() != Some(*l))
            {
                return error(
                    400,
                    25704,
                    &format!(
                        "The following SKU is already listed as a single SKU listing. SKU : {sku} Listing ID : {listing}"
                    ),
                    &[("skuValue", sku), ("listingId", listing)],
                );
            }
        }
        let previous = s.groups.get(&key).cloned();
        let created = previous.is_none();
        let listing_id = previous.as_ref().and_then(|g| g.listing_id.clone());
        if let (Some(previous), Some(listing)) = (&previous, &listing_id) {
            // A variant removed from a live group leaves its listing.
            for gone in variant_skus(&previous.value)
                .into_iter()
                .filter(|sku| !skus.contains(sku))
            {
                for offer in s.offers.values_mut().filter(|o| {
                    o["sku"] == json!(gone) && o["listing"]["listingId"] == json!(listing)
                }) {
                    offer["status"] = json!("UNPUBLISHED");
                    offer["listing"]["listingStatus"] = json!("ENDED");
                }
            }
        }
        s.groups.insert(
            key.clone(),
            Group {
                value: group.clone(),
                listing_id,
            },
        );
        if created {
            Response::json(201, &json!({"warnings": []}))
        } else {
            Response::new(204, Vec::new())
        }
    })
}

/// getInventoryItemGroup.
pub(super) fn get_group(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let key = request.param("inventoryItemGroupKey").unwrap_or_default();
    match with_seller(state, &seller, |s| s.groups.get(key).cloned()) {
        Some(group) => Response::json(200, &group.value),
        None => group_not_found(key),
    }
}

/// deleteInventoryItemGroup.
pub(super) fn delete_group(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let key = request.param("inventoryItemGroupKey").unwrap_or_default();
    if with_seller(state, &seller, |s| s.groups.remove(key).is_some()) {
        Response::new(204, Vec::new())
    } else {
        group_not_found(key)
    }
}

/// The group key and marketplace of publishOfferByInventoryItemGroup's and
/// withdrawOfferByInventoryItemGroup's body.
fn group_request(request: &Request) -> Result<(String, String), Response> {
    let body = body(request)?;
    let field = |name: &str| {
        body[name]
            .as_str()
            .filter(|v| !v.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                error(
                    400,
                    25709,
                    &format!("Invalid value for {name}. It is required."),
                    &[("fieldName", name)],
                )
            })
    };
    Ok((field("inventoryItemGroupKey")?, field("marketplaceId")?))
}

/// The call's user error (25002) with the fake's own `additionalInfo` (eBay's description
/// gives the group refusals no id of their own).
fn user_error(info: &str) -> (u16, Value) {
    (
        400,
        error_value(
            25002,
            &format!("Any User error. {info}"),
            &[("additionalInfo", info)],
        ),
    )
}

/// The group's refusals as a whole (see the module's documentation): the first one found.
fn group_error(
    state: &FakeState,
    group: &Value,
    variants: &[(String, Value, Value)],
) -> Option<(u16, Value)> {
    let specifications: Vec<(String, Vec<String>)> = group["variesBy"]["specifications"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let values = s["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            (s["name"].as_str().unwrap_or_default().to_owned(), values)
        })
        .collect();
    let (_, first_item, first_offer) = variants.first()?;
    let _ = first_item;
    for (sku, _, offer) in variants {
        for field in ["categoryId", "format", "listingPolicies"] {
            if offer[field] != first_offer[field] {
                return Some(user_error(&format!(
                    "The variant {sku} has another {field} than the group's other variants."
                )));
            }
        }
    }
    let category = first_offer["categoryId"]
        .as_str()
        .and_then(|c| c.trim().parse::<u32>().ok())
        .unwrap_or_default();
    if let Some(refused) = without_variations(state, first_offer, category) {
        return Some(refused);
    }
    let rules = crate::taxonomy::item_aspects_of(state, category);
    for (name, _) in &specifications {
        let rule = rules["aspects"].as_array().into_iter().flatten().find(|r| {
            r["localizedAspectName"]
                .as_str()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        });
        if let Some(rule) = rule
            && rule["aspectConstraint"]["aspectEnabledForVariations"] != json!(true)
        {
            return Some(user_error(&format!(
                "{name} is not allowed as a variation specific in category {category}."
            )));
        }
    }
    let mut seen = BTreeSet::new();
    for (sku, item, _) in variants {
        let aspects = item["product"]["aspects"].as_object();
        let mut combination = Vec::new();
        for (name, values) in &specifications {
            let given: Vec<&str> = aspects
                .and_then(|a| a.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
                .and_then(|(_, v)| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match given.as_slice() {
                [one] if values.iter().any(|v| v == one) => combination.push((*one).to_owned()),
                _ => {
                    return Some(user_error(&format!(
                        "The variant {sku} needs exactly one value of the variation specific {name} among its values."
                    )));
                }
            }
        }
        if !seen.insert(combination.clone()) {
            return Some(user_error(&format!(
                "The variant {sku} repeats the combination {} of another variant.",
                combination.join(", ")
            )));
        }
    }
    None
}

/// The refusal of a group whose category's listing-structure policy says it takes no
/// variations (getListingStructurePolicies' `variationsSupported` false, as the fake answers
/// it: `FakeMarketplace::set_variations_supported`, else its made-up policy). eBay's Inventory
/// description documents no error id of publishOfferByInventoryItemGroup for exactly this:
/// the closest documented one is 25005, "Invalid category. {additionalInfo}", answered with
/// the fake's own `additionalInfo`.
fn without_variations(state: &FakeState, offer: &Value, category: u32) -> Option<(u16, Value)> {
    let site = offer["marketplaceId"]
        .as_str()
        .and_then(marketplaces::Marketplace::from_inventory_marketplace_id)?;
    let tree = state.taxonomy.tree(site).ok()?;
    if crate::metadata::variations_supported_of(state, site, &tree, category) != Some(false) {
        return None;
    }
    let info = format!(
        "The category {category} does not support listings with variations (variationsSupported is false)."
    );
    Some((
        400,
        error_value(
            25005,
            &format!("Invalid category. {info}"),
            &[("additionalInfo", &info)],
        ),
    ))
}

/// publishOfferByInventoryItemGroup's work: the listing id, or eBay's error.
fn publish_group(
    state: &FakeState,
    seller: &str,
    key: &str,
    marketplace: &str,
) -> Result<String, (u16, Value)> {
    let Some((group, listing_id)) = with_seller(state, seller, |s| {
        s.groups
            .get(key)
            .map(|g| (g.value.clone(), g.listing_id.clone()))
    }) else {
        let text = format!(
            "The Inventory Item Group named {key} could not be found or is not available in the system."
        );
        return Err((
            400,
            error_value(25705, &text, &[("inventoryItemGroupKey", key)]),
        ));
    };
    let skus = variant_skus(&group);
    if skus.is_empty() {
        return Err(user_error(&format!("The group {key} has no variantSKUs.")));
    }
    let mut variants = Vec::new();
    for sku in &skus {
        let found = with_seller(state, seller, |s| {
            let offer = s
                .offers
                .iter()
                .find(|(_, o)| o["sku"] == json!(sku) && o["marketplaceId"] == json!(marketplace))
                .map(|(id, o)| (id.clone(), o.clone()));
            (s.items.get(sku).cloned(), offer)
        });
        match found {
            (Some(item), Some((id, offer))) => variants.push((id, item, offer)),
            _ => {
                return Err(user_error(&format!(
                    "The variant {sku} has no offer on {marketplace}."
                )));
            }
        }
    }
    for (_, item, offer) in &variants {
        // The listing's item specifics: the group's shared aspects with the variant's own.
        let mut merged = item.clone();
        let mut aspects: Map<String, Value> =
            group["aspects"].as_object().cloned().unwrap_or_default();
        if let Some(own) = item["product"]["aspects"].as_object() {
            aspects.extend(own.clone());
        }
        merged["product"]["aspects"] = Value::Object(aspects);
        if merged["product"]["description"].is_null()
            && let Some(d) = group["description"].as_str()
        {
            merged["product"]["description"] = json!(d);
        }
        if merged["product"]["imageUrls"].is_null() {
            merged["product"]["imageUrls"] = group["imageUrls"].clone();
        }
        if let Some(e) = publish_error(state, seller, Some(&merged), offer) {
            return Err((400, e));
        }
    }
    if let Some(e) = group_error(state, &group, &variants) {
        return Err(e);
    }
    let next = state.next_id();
    with_seller(state, seller, |s| {
        let Some(held) = s.groups.get_mut(key) else {
            return Err((
                500,
                error_value(
                    25025,
                    "Concurrent access of Inventory or InventoryItemGroup. Please try again later",
                    &[],
                ),
            ));
        };
        let listing_id = listing_id
            .or_else(|| held.listing_id.clone())
            .unwrap_or_else(|| format!("{}", 110_000_000_000u64 + next));
        held.listing_id = Some(listing_id.clone());
        for (id, _, _) in &variants {
            if let Some(offer) = s.offers.get_mut(id) {
                offer["status"] = json!("PUBLISHED");
                offer["listing"] = json!({"listingId": listing_id, "listingStatus": "ACTIVE"});
            }
        }
        Ok(listing_id)
    })
}

/// publishOfferByInventoryItemGroup.
pub(super) fn publish_by_group(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let (key, marketplace) = tri!(group_request(request));
    match publish_group(state, &seller, &key, &marketplace) {
        Ok(listing_id) => Response::json(200, &json!({"listingId": listing_id, "warnings": []})),
        Err((status, e)) => Response::json(status, &json!({"errors": [e]})),
    }
}

/// withdrawOfferByInventoryItemGroup.
pub(super) fn withdraw_by_group(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let (key, marketplace) = tri!(group_request(request));
    let withdrawn = with_seller(state, &seller, |s| {
        let skus = s.groups.get(&key).map(|g| variant_skus(&g.value))?;
        let mut any = false;
        for offer in s.offers.values_mut().filter(|o| {
            o["status"] == json!("PUBLISHED")
                && o["marketplaceId"] == json!(marketplace)
                && o["sku"]
                    .as_str()
                    .is_some_and(|sku| skus.iter().any(|k| k == sku))
        }) {
            offer["status"] = json!("UNPUBLISHED");
            offer["listing"]["listingStatus"] = json!("ENDED");
            any = true;
        }
        any.then_some(())
    });
    match withdrawn {
        Some(()) => Response::new(204, Vec::new()),
        None => error(400, 25725, "No offer found", &[]),
    }
}
