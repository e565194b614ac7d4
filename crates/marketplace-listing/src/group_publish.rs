//! The inventory item group calls (createOrReplaceInventoryItemGroup, getInventoryItemGroup,
//! deleteInventoryItemGroup, publishOfferByInventoryItemGroup,
//! withdrawOfferByInventoryItemGroup, and deleteOffer for a variant removed from a group)
//! and [`Inventory::publish_group`], idempotent as [`Inventory::publish`] is.

use std::collections::HashSet;

use marketplace_client::api::{ApiError, ApiRequest};
use marketplaces::Marketplace;
use serde_json::{Value, json};

use super::{BULK_LIMIT, Inventory, format_of, item_error, listing_id, marketplace_of, path};
use crate::check::{Catalog, CompiledIn, Problems};
use crate::error::{ErrorKind, ListingError};
use crate::variation_problem::VariationProblem;
use crate::{GroupListing, InventoryItemGroup, Listing, Problem, ProblemKind, check_group};

/// A group published: its listing and each variant's offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPublished {
    /// The group's key.
    pub inventory_item_group_key: String,
    /// The eBay listing's id (publishOfferByInventoryItemGroup).
    pub listing_id: String,
    /// Each variant's `(sku, offerId)`, in the file's order.
    pub offers: Vec<(String, String)>,
    /// The SKUs removed from the group since it was last sent (no longer in the listing's
    /// variants), each of whose offers on the marketplace was deleted.
    pub removed: Vec<String>,
}

impl Inventory {
    /// createOrReplaceInventoryItemGroup: `group` under `key`, in the language of
    /// `marketplace` (`Content-Language`, which eBay requires: 25709 otherwise).
    pub async fn create_or_replace_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
        group: &InventoryItemGroup,
    ) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::put_segments(path(&["inventory_item_group", key]))
                .marketplace(marketplace)
                .content_language(marketplace.default_language())
                .json(group)
                .operation("createOrReplaceInventoryItemGroup")
        })
        .await?;
        Ok(())
    }

    /// getInventoryItemGroup: the group `key`, or `None` when eBay has none (25705).
    pub async fn get_inventory_item_group(
        &self,
        key: &str,
    ) -> Result<Option<InventoryItemGroup>, ListingError> {
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["inventory_item_group", key]))
                    .operation("getInventoryItemGroup")
            })
            .await;
        match answer {
            Ok(answer) => Ok(Some(answer.json()?)),
            Err(e) if is_group_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// deleteInventoryItemGroup: the group `key` (its inventory items stay).
    pub async fn delete_inventory_item_group(&self, key: &str) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::delete_segments(path(&["inventory_item_group", key]))
                .operation("deleteInventoryItemGroup")
        })
        .await?;
        Ok(())
    }

    /// publishOfferByInventoryItemGroup: the unpublished offers of the group `key`'s variants
    /// on `marketplace` published as one listing with variations; the listing's id.
    pub async fn publish_offer_by_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
    ) -> Result<String, ListingError> {
        let body = group_body(key, marketplace);
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["offer", "publish_by_inventory_item_group"]))
                    .marketplace(marketplace)
                    .json(&body)
                    .operation("publishOfferByInventoryItemGroup")
            })
            .await?;
        listing_id(&answer, "publishOfferByInventoryItemGroup")
    }

    /// withdrawOfferByInventoryItemGroup: ends the group `key`'s listing on `marketplace`
    /// (its offers stay, unpublished; none live: 25725).
    pub async fn withdraw_offer_by_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
    ) -> Result<(), ListingError> {
        let body = group_body(key, marketplace);
        self.call(|| {
            ApiRequest::post_segments(path(&["offer", "withdraw_by_inventory_item_group"]))
                .marketplace(marketplace)
                .json(&body)
                .operation("withdrawOfferByInventoryItemGroup")
        })
        .await?;
        Ok(())
    }

    /// deleteOffer: the offer `offer_id` (a published one leaves its listing).
    pub async fn delete_offer(&self, offer_id: &str) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::delete_segments(path(&["offer", offer_id])).operation("deleteOffer")
        })
        .await?;
        Ok(())
    }

    /// Publishes `group`, checked first against the compiled-in trees and rules
    /// ([`CompiledIn`]); see [`publish_group_with`](Self::publish_group_with).
    pub async fn publish_group(
        &self,
        group: &GroupListing,
    ) -> Result<GroupPublished, ListingError> {
        self.publish_group_with(group, &CompiledIn).await
    }

    /// Publishes `group` as one listing with variations, idempotent: [`check_group`] against
    /// `catalog` first (a problem: [`ListingError::Refused`], nothing sent); getInventoryItemGroup
    /// (the variants it held); getInventoryItem of each variant it did not hold (a SKU eBay
    /// holds in another group, by its `groupIds`: [`ListingError::Refused`], nothing written);
    /// the variants' inventory items (bulkCreateOrReplaceInventoryItem,
    /// [`BULK_LIMIT`] a call); each variant's offer found by getOffers (updated with updateOffer
    /// when it differs) or created (bulkCreateOffer, [`BULK_LIMIT`] a call; its 25002 "already
    /// exists" names the offer, which is then used); the offers of the variants the group held
    /// and the file no longer has deleted (deleteOffer: the variant leaves the listing, nothing
    /// else changes); createOrReplaceInventoryItemGroup with the variants' SKUs as
    /// `variantSKUs`; publishOfferByInventoryItemGroup. Every step reads before it creates, so
    /// a run stopped between any two calls and run again gives one group, one listing (its id
    /// the same on every publish) and one offer per variant.
    pub async fn publish_group_with(
        &self,
        group: &GroupListing,
        catalog: &(dyn Catalog + Sync),
    ) -> Result<GroupPublished, ListingError> {
        let problems = check_group(group, catalog, &HashSet::new());
        if !problems.is_empty() {
            return Err(ListingError::Refused(Problems(problems)));
        }
        let Some(first) = group.variants.first() else {
            return Err(ListingError::Answer {
                operation: "publish_group",
                what: "a variant",
            });
        };
        let marketplace = marketplace_of(&first.offer)?;
        let key = group
            .inventory_item_group
            .inventory_item_group_key
            .clone()
            .unwrap_or_default();
        let held = self.get_inventory_item_group(&key).await?;
        self.refuse_variants_of_other_groups(group, &key, held.as_ref())
            .await?;
        for chunk in group.variants.chunks(BULK_LIMIT) {
            let items: Vec<(&str, &crate::InventoryItem)> = chunk
                .iter()
                .map(|v| (v.offer.sku.as_str(), &v.inventory_item))
                .collect();
            let answers = self
                .bulk_create_or_replace_inventory_item(marketplace, &items)
                .await?;
            if let Some(refused) = answers
                .iter()
                .find(|a| !(200..300).contains(&a.status_code))
            {
                return Err(item_error(refused));
            }
        }
        let offers = self.variant_offers(&group.variants, marketplace).await?;
        let wanted: HashSet<&str> = group
            .variants
            .iter()
            .map(|v| v.offer.sku.as_str())
            .collect();
        let mut removed = Vec::new();
        for sku in held.iter().flat_map(|h| &h.variant_skus) {
            if wanted.contains(sku.as_str()) {
                continue;
            }
            for record in self.get_offers(sku, marketplace).await? {
                self.delete_offer(&record.offer_id).await?;
            }
            removed.push(sku.clone());
        }
        let mut sent = group.inventory_item_group.clone();
        sent.inventory_item_group_key = None;
        sent.variant_skus = group.variants.iter().map(|v| v.offer.sku.clone()).collect();
        self.create_or_replace_inventory_item_group(&key, marketplace, &sent)
            .await?;
        let listing_id = self
            .publish_offer_by_inventory_item_group(&key, marketplace)
            .await?;
        Ok(GroupPublished {
            inventory_item_group_key: key,
            listing_id,
            offers,
            removed,
        })
    }

    /// [`ListingError::Refused`] naming each variant whose SKU eBay holds in another group
    /// (getInventoryItem's `groupIds`, which eBay's reference of
    /// withdrawOfferByInventoryItemGroup names as where an item's group keys are), before any
    /// write: createOrReplaceInventoryItemGroup would refuse the group (25703, "SKU is already
    /// a member of another group") only after bulkCreateOrReplaceInventoryItem had rewritten
    /// the other group's items. The SKUs `held` (this group as eBay holds it) lists are this
    /// group's and not read; a SKU not in the inventory (25702) is in no group.
    async fn refuse_variants_of_other_groups(
        &self,
        group: &GroupListing,
        key: &str,
        held: Option<&InventoryItemGroup>,
    ) -> Result<(), ListingError> {
        let ours: HashSet<&str> = held
            .iter()
            .flat_map(|h| &h.variant_skus)
            .map(String::as_str)
            .collect();
        let mut problems = Vec::new();
        for (i, variant) in group.variants.iter().enumerate() {
            let sku = variant.offer.sku.as_str();
            if ours.contains(sku) {
                continue;
            }
            let item = match self.get_inventory_item(sku).await {
                Ok(item) => item,
                Err(e) if e.errors().iter().any(|e| e.kind == ErrorKind::SkuNotFound) => continue,
                Err(e) => return Err(e),
            };
            let others = item
                .other
                .get("groupIds")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|other| *other != key);
            for other in others {
                problems.push(Problem {
                    field: format!("variants[{i}].offer.sku"),
                    kind: ProblemKind::Variation(VariationProblem::InAnotherGroup {
                        group: other.to_owned(),
                    }),
                });
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ListingError::Refused(Problems(problems)))
        }
    }

    /// Each variant's offer id: the one getOffers gives for (SKU, marketplace, format),
    /// updated when it differs, else created with bulkCreateOffer.
    async fn variant_offers(
        &self,
        variants: &[Listing],
        marketplace: Marketplace,
    ) -> Result<Vec<(String, String)>, ListingError> {
        let mut ids: Vec<Option<String>> = Vec::with_capacity(variants.len());
        for variant in variants {
            let held = self.get_offers(&variant.offer.sku, marketplace).await?;
            ids.push(self.held_offer(variant, &held).await?);
        }
        let missing: Vec<usize> = (0..variants.len()).filter(|i| ids[*i].is_none()).collect();
        for chunk in missing.chunks(BULK_LIMIT) {
            let offers: Vec<&crate::Offer> = chunk.iter().map(|i| &variants[*i].offer).collect();
            let answers = self.bulk_create_offer(&offers).await?;
            for &i in chunk {
                let offer = &variants[i].offer;
                let answer = answers.iter().find(|a| {
                    a.sku.as_deref() == Some(offer.sku.as_str())
                        && a.format.as_deref().is_none_or(|f| f == format_of(offer))
                });
                let Some(answer) = answer else {
                    return Err(ListingError::Answer {
                        operation: "bulkCreateOffer",
                        what: "a response for every SKU",
                    });
                };
                let existing = answer.errors.iter().find_map(|e| match &e.kind {
                    ErrorKind::User {
                        offer_id: Some(id), ..
                    } => Some(id.clone()),
                    _ => None,
                });
                ids[i] = match (&answer.offer_id, existing) {
                    (Some(id), _) if (200..300).contains(&answer.status_code) => Some(id.clone()),
                    (_, Some(id)) => {
                        self.update_offer(&id, offer).await?;
                        Some(id)
                    }
                    _ => return Err(item_error(answer)),
                };
            }
        }
        Ok(variants
            .iter()
            .zip(ids)
            .map(|(v, id)| (v.offer.sku.clone(), id.unwrap_or_default()))
            .collect())
    }
}

/// The body of publishOfferByInventoryItemGroup and withdrawOfferByInventoryItemGroup.
fn group_body(key: &str, marketplace: Marketplace) -> Value {
    json!({
        "inventoryItemGroupKey": key,
        "marketplaceId": marketplace.inventory_marketplace_id(),
    })
}

/// eBay's 25705: no inventory item group of that key.
fn is_group_not_found(e: &ListingError) -> bool {
    e.errors()
        .iter()
        .any(|e| e.kind == ErrorKind::GroupNotFound)
        || matches!(
            e,
            ListingError::Inventory {
                source: ApiError::Service { status: 404, .. },
                ..
            }
        )
}
