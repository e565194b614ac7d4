//! Shipping an order: the Fulfillment API's createShippingFulfillment,
//! getShippingFulfillments and getShippingFulfillment under eBay's names, and
//! [`Orders::ship`](crate::aio::Orders::ship), the idempotent shipment.
//!
//! createShippingFulfillment is not idempotent: eBay creates one more fulfillment each time it
//! is sent. A POST whose answer was lost (a time-out, a dropped connection, a 5xx, a 201
//! without `Location`) may or may not have created one, so `ship` never sends it again
//! blindly: it reads getShippingFulfillments first, and again after every unclear answer,
//! and sends the POST only while no fulfillment with the tracking number covers the line
//! items. Retried after a time-out or run again after a crash, an order's line items get one
//! fulfillment with that tracking number, never two.

use std::collections::{BTreeMap, HashSet};
use std::time::SystemTime;

use marketplace_client::api::{ApiError, ApiRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::aio::{Orders, path};
use crate::error::OrdersError;
use crate::filter::check_order_id;
use crate::time::format_timestamp;

/// LineItemReference: a line item of the order and how many of it a fulfillment holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineItemReference {
    /// The line item's `lineItemId` (getOrders' `lineItems.lineItemId`).
    #[serde(default)]
    pub line_item_id: String,
    /// How many of it (eBay's default: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u32>,
}

impl LineItemReference {
    /// `quantity` of the line item `line_item_id`.
    pub fn new(line_item_id: impl Into<String>, quantity: u32) -> Self {
        Self {
            line_item_id: line_item_id.into(),
            quantity: Some(quantity),
        }
    }
}

/// ShippingFulfillmentDetails: createShippingFulfillment's request body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShippingFulfillmentDetails {
    /// The line items in the package, and how many of each.
    #[serde(default)]
    pub line_items: Vec<LineItemReference>,
    /// When the package was shipped (`2015-08-04T19:09:02.768Z`; eBay's default: now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipped_date: Option<String>,
    /// The carrier's eBay code (`USPS`, `UPS`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_carrier_code: Option<String>,
    /// The carrier's tracking number (alphanumeric only, as eBay says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_number: Option<String>,
}

/// ShippingFulfillment: a fulfillment of an order, as getShippingFulfillment(s) answers it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShippingFulfillment {
    /// Its id (the tracking number, when one was given at creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_id: Option<String>,
    /// The line items it ships.
    #[serde(default)]
    pub line_items: Vec<LineItemReference>,
    /// The carrier's tracking number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipment_tracking_number: Option<String>,
    /// When it was shipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipped_date: Option<String>,
    /// The carrier's eBay code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_carrier_code: Option<String>,
    /// Every other field eBay sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// ShippingFulfillmentPagedCollection: getShippingFulfillments' answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShippingFulfillmentPagedCollection {
    /// Every fulfillment of the order.
    #[serde(default)]
    pub fulfillments: Vec<ShippingFulfillment>,
    /// How many there are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// eBay's warnings, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Value>,
}

/// A package of an order to mark shipped: [`Orders::ship`](crate::aio::Orders::ship)'s input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipment {
    /// The order's `orderId`.
    pub order_id: String,
    /// The line items and quantities in the package; none: every line item with quantity
    /// left to ship, all of what is left.
    pub line_items: Vec<LineItemReference>,
    /// The carrier's eBay code.
    pub carrier: String,
    /// The carrier's tracking number (alphanumeric; surrounding whitespace is set aside, and
    /// a fulfillment whose number differs only in letter case is this one's).
    pub tracking_number: String,
    /// When the package was shipped (eBay's default: when eBay receives the call).
    pub shipped_date: Option<SystemTime>,
}

impl Shipment {
    /// The whole rest of `order_id` (every line item left to ship), shipped with `carrier`
    /// under `tracking_number`.
    pub fn new(
        order_id: impl Into<String>,
        carrier: impl Into<String>,
        tracking_number: impl Into<String>,
    ) -> Self {
        Self {
            order_id: order_id.into(),
            line_items: Vec::new(),
            carrier: carrier.into(),
            tracking_number: tracking_number.into(),
            shipped_date: None,
        }
    }

    /// With `quantity` of the line item `line_item_id` in the package.
    pub fn line_item(mut self, line_item_id: impl Into<String>, quantity: u32) -> Self {
        self.line_items
            .push(LineItemReference::new(line_item_id, quantity));
        self
    }

    /// Shipped at `when`.
    pub fn shipped_at(mut self, when: SystemTime) -> Self {
        self.shipped_date = Some(when);
        self
    }

    /// What eBay would refuse, refused before sending: the order id, an empty or
    /// non-alphanumeric tracking number (eBay's 32300), an empty carrier, a quantity of 0 or a
    /// line item named twice (32600, 32210).
    fn check(&self) -> Result<(), OrdersError> {
        let invalid = |what, reason: String| Err(OrdersError::Invalid { what, reason });
        if let Err(reason) = check_order_id(&self.order_id) {
            return invalid(
                "orderId",
                format!("the order id {:?} {reason}", self.order_id),
            );
        }
        let tracking = self.tracking_number.trim();
        if tracking.is_empty() || !tracking.chars().all(|c| c.is_ascii_alphanumeric()) {
            return invalid(
                "trackingNumber",
                format!(
                    "{:?} is not a tracking number: eBay takes letters and digits only, no \
                     space or hyphen (errorId 32300)",
                    self.tracking_number
                ),
            );
        }
        if self.carrier.trim().is_empty() || self.carrier.chars().any(char::is_whitespace) {
            return invalid(
                "shippingCarrierCode",
                format!(
                    "{:?} is not a carrier code (eBay's ShippingCarrierCodeType: USPS, UPS, …)",
                    self.carrier
                ),
            );
        }
        let mut named = HashSet::new();
        for item in &self.line_items {
            if item.quantity == Some(0) {
                return invalid(
                    "lineItems.quantity",
                    format!(
                        "line item {}: a quantity of 0 (eBay takes a whole number above 0)",
                        item.line_item_id
                    ),
                );
            }
            if !named.insert(item.line_item_id.as_str()) {
                return invalid(
                    "lineItems.lineItemId",
                    format!(
                        "line item {} is named twice (eBay refuses it: errorId 32210)",
                        item.line_item_id
                    ),
                );
            }
        }
        Ok(())
    }

    /// Whether `fulfillment` is this shipment already made: the same tracking number (as
    /// [`same_tracking_number`] compares them), and each line item named here in it (at
    /// least the quantity named, when eBay says one).
    fn made_as(&self, fulfillment: &ShippingFulfillment) -> bool {
        fulfillment
            .shipment_tracking_number
            .as_deref()
            .is_some_and(|theirs| same_tracking_number(theirs, &self.tracking_number))
            && self.line_items.iter().all(|wanted| {
                fulfillment.line_items.iter().any(|has| {
                    has.line_item_id == wanted.line_item_id
                        && match (has.quantity, wanted.quantity) {
                            (Some(has), Some(wanted)) => has >= wanted,
                            _ => true,
                        }
                })
            })
    }
}

/// Whether two tracking numbers are one, as `ship` looks for a fulfillment already made.
///
/// Neither eBay's API reference of createShippingFulfillment or getShippingFulfillments nor
/// the Fulfillment API's OpenAPI description says how eBay compares tracking numbers: they
/// say only that a tracking number is letters and digits ("Spaces, hyphens, and all other
/// special characters are not supported"). So only what cannot make two numbers differ is
/// set aside: surrounding whitespace, and the case of ASCII letters (carriers' numbers, such
/// as UPS's `1Z…`, are printed upper case and typed either way), so that a rerun with
/// `1z999…` finds the fulfillment made with `1Z999…` and posts nothing. Hyphens or spaces
/// inside a number are not set aside: `check` refuses them before anything is sent.
fn same_tracking_number(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// What [`Orders::ship`](crate::aio::Orders::ship) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipped {
    /// The fulfillment's id (createShippingFulfillment's `Location`, or the one found).
    pub fulfillment_id: String,
    /// `true`: created by this call; `false`: it was already there (nothing was sent).
    pub created: bool,
}

/// Whether a failed createShippingFulfillment may have created the fulfillment all the
/// same: no answer (a time-out, a dropped connection, a cut-off answer), a 5xx, or a 201
/// without `Location`.
fn unclear(error: &OrdersError) -> bool {
    match error {
        OrdersError::NoLocation { .. } => true,
        OrdersError::Api(
            ApiError::Timeout { .. } | ApiError::Transport { .. } | ApiError::Truncated { .. },
        ) => true,
        _ => error.status().is_some_and(|s| s >= 500),
    }
}

impl Orders {
    /// getShippingFulfillments: every fulfillment of the order `order_id`.
    pub async fn get_shipping_fulfillments(
        &self,
        order_id: &str,
    ) -> Result<ShippingFulfillmentPagedCollection, OrdersError> {
        checked(order_id)?;
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["order", order_id, "shipping_fulfillment"]))
                    .operation("getShippingFulfillments")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// getShippingFulfillment: the fulfillment `fulfillment_id` of the order `order_id`
    /// (eBay's 32110 for an id it does not know, 32100 for an order).
    pub async fn get_shipping_fulfillment(
        &self,
        order_id: &str,
        fulfillment_id: &str,
    ) -> Result<ShippingFulfillment, OrdersError> {
        checked(order_id)?;
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&[
                    "order",
                    order_id,
                    "shipping_fulfillment",
                    fulfillment_id,
                ]))
                .operation("getShippingFulfillment")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// createShippingFulfillment, sent once (never again by this call or the client, whatever
    /// the answer): the new fulfillment's id, from the `Location` header of eBay's 201. Not
    /// idempotent: [`ship`](Self::ship) is the call to retry.
    pub async fn create_shipping_fulfillment(
        &self,
        order_id: &str,
        details: &ShippingFulfillmentDetails,
    ) -> Result<String, OrdersError> {
        checked(order_id)?;
        let request = ApiRequest::post_segments(path(&["order", order_id, "shipping_fulfillment"]))
            .json(details)
            .operation("createShippingFulfillment")
            .sent_once();
        let answer = self.transport.send(request).await?;
        answer
            .header("Location")
            .map(|l| l.split(['?', '#']).next().unwrap_or_default())
            .and_then(|l| l.trim_end_matches('/').rsplit('/').next())
            .filter(|id| !id.is_empty() && *id != "shipping_fulfillment")
            .map(str::to_owned)
            .ok_or_else(|| OrdersError::NoLocation {
                order_id: order_id.to_owned(),
            })
    }

    /// Marks `shipment` shipped, once: getShippingFulfillments first, and when a fulfillment
    /// with its tracking number already covers its line items, that one (nothing is
    /// created); else createShippingFulfillment (with no line items named: every line item
    /// with quantity left to ship, from getOrder less the fulfillments). After an unclear
    /// answer (a time-out, a dropped connection, a 5xx, a 201 without `Location`) it reads
    /// getShippingFulfillments again before it sends the POST again, up to
    /// [`with_retries`](Self::with_retries) times. So a retry, or a run after a crash, never
    /// gives the line items a second fulfillment with that tracking number.
    pub async fn ship(&self, shipment: &Shipment) -> Result<Shipped, OrdersError> {
        shipment.check()?;
        let order_id = shipment.order_id.as_str();
        let shipped_date = shipment
            .shipped_date
            .map(|t| format_timestamp(t, "shippedDate"))
            .transpose()?;
        let mut delay = self.backoff;
        let mut attempt = 0;
        loop {
            let existing = self.get_shipping_fulfillments(order_id).await?;
            if let Some(made) = existing.fulfillments.iter().find(|f| shipment.made_as(f)) {
                return Ok(Shipped {
                    fulfillment_id: made
                        .fulfillment_id
                        .clone()
                        .unwrap_or_else(|| shipment.tracking_number.trim().to_owned()),
                    created: false,
                });
            }
            let line_items = if shipment.line_items.is_empty() {
                self.left_to_ship(order_id, &existing).await?
            } else {
                shipment.line_items.clone()
            };
            let details = ShippingFulfillmentDetails {
                line_items,
                shipped_date: shipped_date.clone(),
                shipping_carrier_code: Some(shipment.carrier.clone()),
                tracking_number: Some(shipment.tracking_number.trim().to_owned()),
            };
            match self.create_shipping_fulfillment(order_id, &details).await {
                Ok(fulfillment_id) => {
                    return Ok(Shipped {
                        fulfillment_id,
                        created: true,
                    });
                }
                Err(e) if unclear(&e) && attempt < self.retries => {}
                Err(e) => return Err(e),
            }
            attempt += 1;
            self.transport.sleep(delay).await;
            delay = delay.saturating_mul(2);
        }
    }

    /// Every line item of the order with quantity left to ship (getOrder), less what the
    /// fulfillments `existing` ship (one of eBay's without a quantity: the whole line item).
    async fn left_to_ship(
        &self,
        order_id: &str,
        existing: &ShippingFulfillmentPagedCollection,
    ) -> Result<Vec<LineItemReference>, OrdersError> {
        let order = self.get_order(order_id).await?;
        let mut shipped: BTreeMap<&str, Option<u64>> = BTreeMap::new();
        for item in existing.fulfillments.iter().flat_map(|f| &f.line_items) {
            let entry = shipped.entry(item.line_item_id.as_str()).or_insert(Some(0));
            *entry = match (*entry, item.quantity) {
                (Some(sum), Some(q)) => Some(sum + u64::from(q)),
                _ => None,
            };
        }
        let left: Vec<LineItemReference> = order
            .line_items
            .iter()
            .filter_map(|item| {
                let id = item.line_item_id.as_deref()?;
                let bought = item.quantity.unwrap_or(1);
                let done = match shipped.get(id) {
                    Some(None) => bought,
                    Some(Some(n)) => *n,
                    None => 0,
                };
                let left = u32::try_from(bought.saturating_sub(done)).ok()?;
                (left > 0).then(|| LineItemReference::new(id, left))
            })
            .collect();
        if left.is_empty() {
            return Err(OrdersError::Invalid {
                what: "lineItems",
                reason: format!(
                    "order {order_id} has nothing left to ship: its fulfillments (none with \
                     this tracking number) ship every line item"
                ),
            });
        }
        Ok(left)
    }
}

fn checked(order_id: &str) -> Result<(), OrdersError> {
    check_order_id(order_id).map_err(|reason| OrdersError::Invalid {
        what: "orderId",
        reason: format!("the order id {order_id:?} {reason}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fulfillment_is_the_shipment_only_with_its_tracking_number_and_line_items() {
        let shipment = Shipment::new("12-34567-89012", "USPS", "9400111").line_item("1", 2);
        let made = ShippingFulfillment {
            shipment_tracking_number: Some("9400111".into()),
            line_items: vec![LineItemReference::new("1", 2)],
            ..ShippingFulfillment::default()
        };
        assert!(shipment.made_as(&made));
        let other_number = ShippingFulfillment {
            shipment_tracking_number: Some("9400112".into()),
            ..made.clone()
        };
        assert!(!shipment.made_as(&other_number));
        let fewer = ShippingFulfillment {
            line_items: vec![LineItemReference::new("1", 1)],
            ..made
        };
        assert!(!shipment.made_as(&fewer));
    }

    #[test]
    fn a_tracking_number_with_a_hyphen_or_a_line_item_named_twice_is_refused_before_sending() {
        let hyphen = Shipment::new("12-34567-89012", "USPS", "9400-111");
        assert!(
            hyphen
                .check()
                .unwrap_err()
                .to_string()
                .contains("trackingNumber")
        );
        let twice = Shipment::new("12-34567-89012", "USPS", "9400111")
            .line_item("1", 1)
            .line_item("1", 1);
        assert!(twice.check().unwrap_err().to_string().contains("32210"));
    }
}
