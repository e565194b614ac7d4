//! The Fulfillment API's shipping fulfillments (`/sell/fulfillment/v1/order/{orderId}/
//! shipping_fulfillment`): createShippingFulfillment, getShippingFulfillments and
//! getShippingFulfillment as eBay's OpenAPI description of the Fulfillment API
//! (sell_fulfillment_v1_oas3.json) and its API reference give them, over the orders of
//! [`orders`](crate::orders).
//!
//! createShippingFulfillment needs a user token with
//! `https://api.ebay.com/oauth/api_scope/sell.fulfillment` (the two reads also take
//! `…/sell.fulfillment.readonly`; else eBay's 403, errorId 1100). It answers `201` with a
//! `Location` header, `{base}/sell/fulfillment/v1/order/{orderId}/shipping_fulfillment/{id}`,
//! the id being the tracking number (as eBay's reference says; a second fulfillment of the
//! order with the same number, or one without a number, gets a number of the fake's). eBay's
//! errors, each a 400 of domain `API_FULFILLMENT`:
//!
//! * 32100 "Invalid Order Id: {orderId}": not an order of the token's seller (or its payment
//!   is still pending);
//! * 32200 "Invalid line item id: {lineItemId}": a line item that is not the order's;
//! * 32210 "Duplicate line item in the request";
//! * 32300 "Invalid shipment tracking number or carrier": a tracking number that is not
//!   letters and digits, a carrier code not in [`CARRIERS`], or one of the two without the
//!   other;
//! * 32500 "Invalid shipped date": not eBay's timestamp format;
//! * 32600 "Invalid input data": a body that is not ShippingFulfillmentDetails, no line
//!   items, a quantity that is not a whole number above 0, or above what is left to ship of
//!   the line item.
//!
//! A fulfillment moves the order on as eBay's do: each line item's
//! `lineItemFulfillmentStatus` becomes `IN_PROGRESS` (part shipped) or `FULFILLED`, the
//! order's `orderFulfillmentStatus` `IN_PROGRESS` or `FULFILLED` (every line item), its
//! `fulfillmentHrefs` gets the fulfillment's URI and its `lastModifiedDate` moves.
//!
//! getShippingFulfillment of an id the order has not: 400, errorId 32110 ("Invalid shipping
//! fulfillment ID: {fulfillmentId}").
//!
//! [`Fault::AnswerDropped`](crate::Fault::AnswerDropped) on the POST creates the fulfillment
//! and closes the connection without answering: a client that sends it again blindly ships
//! twice.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::http::{Request, Response};
use crate::{FakeMarketplace, FakeState, Route, lock};

/// The shipping carrier codes the fake takes (a few of eBay's ShippingCarrierCodeType).
pub const CARRIERS: &[&str] = &[
    "USPS",
    "UPS",
    "FedEx",
    "DHL",
    "DHLGlobalMail",
    "CanadaPost",
    "RoyalMail",
    "ParcelForce",
    "DeutschePost",
    "Hermes",
    "AustraliaPost",
    "Other",
];

/// The path of an order's shipping fulfillments.
pub fn fulfillments_path(order_id: &str) -> String {
    format!("/sell/fulfillment/v1/order/{order_id}/shipping_fulfillment")
}

/// The fulfillments the fake holds, by order id, in the order they were created.
#[derive(Default)]
pub(crate) struct FulfillmentsState {
    by_order: Mutex<BTreeMap<String, Vec<Value>>>,
}

pub(crate) fn routes() -> Vec<Route> {
    let list = "/sell/fulfillment/v1/order/{orderId}/shipping_fulfillment";
    vec![
        Route::new("POST", list, create),
        Route::new("GET", list, get_all),
        Route::new("GET", &format!("{list}/{{fulfillmentId}}"), get_one),
    ]
}

/// An error of the Fulfillment API (domain `API_FULFILLMENT`, category `REQUEST`).
fn error(id: u32, message: &str, parameters: &[(&str, &str)]) -> Response {
    Response::json(
        400,
        &json!({"errors": [{
            "errorId": id, "domain": "API_FULFILLMENT", "category": "REQUEST",
            "message": message,
            "parameters": parameters.iter().map(|(n, v)| json!({"name": n, "value": v}))
                .collect::<Vec<_>>(),
        }]}),
    )
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(response) => return response,
        }
    };
}

/// The seller of a user token with `sell.fulfillment` (or, to read, its `.readonly` form).
fn seller(request: &Request, state: &FakeState, write: bool) -> Result<String, Response> {
    let token = state
        .check_scope(request, "/sell.fulfillment")
        .or_else(|e| {
            if write {
                Err(e)
            } else {
                state.check_scope(request, "/sell.fulfillment.readonly")
            }
        })?;
    if !token.token_type.starts_with("User") {
        return Err(state.insufficient_scope());
    }
    Ok(state.seller_of(&token))
}

/// The order of the path, of the token's seller.
fn order(request: &Request, state: &FakeState, write: bool) -> Result<(String, Value), Response> {
    let seller = seller(request, state, write)?;
    let id = request.param("orderId").unwrap_or_default().to_owned();
    match crate::orders::sellers_order(state, &id, &seller) {
        Some(order) => Ok((id, order)),
        None => {
            let message = if write {
                "Invalid Order Id"
            } else {
                "Invalid order ID"
            };
            Err(error(
                32100,
                &format!("{message}: {id}"),
                &[("orderId", &id)],
            ))
        }
    }
}

fn get_all(request: &Request, state: &FakeState) -> Response {
    let (id, _) = tri!(order(request, state, false));
    let all = lock(&state.fulfillments.by_order)
        .get(&id)
        .cloned()
        .unwrap_or_default();
    Response::json(200, &json!({"fulfillments": all, "total": all.len()}))
}

fn get_one(request: &Request, state: &FakeState) -> Response {
    let (id, _) = tri!(order(request, state, false));
    let wanted = request
        .param("fulfillmentId")
        .unwrap_or_default()
        .to_owned();
    let found = lock(&state.fulfillments.by_order).get(&id).and_then(|all| {
        all.iter()
            .find(|f| f["fulfillmentId"] == json!(wanted))
            .cloned()
    });
    match found {
        Some(f) => Response::json(200, &f),
        None => error(
            32110,
            &format!("Invalid shipping fulfillment ID: {wanted}"),
            &[("fulfillmentId", &wanted)],
        ),
    }
}

/// How many of each line item the fulfillments `all` ship.
fn shipped(all: &[Value]) -> BTreeMap<String, u64> {
    let mut shipped = BTreeMap::new();
    for item in all
        .iter()
        .flat_map(|f| f["lineItems"].as_array().into_iter().flatten())
    {
        let id = item["lineItemId"].as_str().unwrap_or_default().to_owned();
        *shipped.entry(id).or_insert(0) += item["quantity"].as_u64().unwrap_or(1);
    }
    shipped
}

fn create(request: &Request, state: &FakeState) -> Response {
    let invalid = || error(32600, "Invalid input data", &[]);
    let bad_tracking = || error(32300, "Invalid shipment tracking number or carrier", &[]);
    // One creation at a time: the check of what is left and the write are one step.
    let mut by_order = lock(&state.fulfillments.by_order);
    let (order_id, order) = tri!(order(request, state, true));
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return invalid();
    };
    if !body.is_object() {
        return invalid();
    }
    let tracking = body.get("trackingNumber").and_then(Value::as_str);
    let carrier = body.get("shippingCarrierCode").and_then(Value::as_str);
    match (tracking, carrier) {
        (None, None) => {}
        (Some(t), Some(c))
            if !t.is_empty()
                && t.bytes().all(|b| b.is_ascii_alphanumeric())
                && CARRIERS.contains(&c) => {}
        _ => return bad_tracking(),
    }
    let now = state.now();
    let shipped_date = match body.get("shippedDate") {
        None => crate::orders::format_timestamp(
            now.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        ),
        Some(Value::String(d)) if crate::orders::parse_timestamp(d).is_some() => d.clone(),
        Some(_) => return error(32500, "Invalid shipped date", &[]),
    };
    let Some(items) = body.get("lineItems").and_then(Value::as_array) else {
        return invalid();
    };
    if items.is_empty() {
        return invalid();
    }
    let existing = by_order.entry(order_id.clone()).or_default();
    let done = shipped(existing);
    let bought: BTreeMap<String, u64> = order["lineItems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            Some((
                l["lineItemId"].as_str()?.to_owned(),
                l["quantity"].as_u64()?,
            ))
        })
        .collect();
    let mut named = HashSet::new();
    let mut references = Vec::new();
    for item in items {
        let Some(id) = item.get("lineItemId").and_then(Value::as_str) else {
            return invalid();
        };
        let Some(&quantity_bought) = bought.get(id) else {
            return error(
                32200,
                &format!("Invalid line item id: {id}"),
                &[("lineItemId", id)],
            );
        };
        if !named.insert(id.to_owned()) {
            return error(32210, "Duplicate line item in the request", &[]);
        }
        let quantity = match item.get("quantity") {
            None => 1,
            Some(q) => match q.as_u64() {
                Some(q) if q > 0 => q,
                _ => return invalid(),
            },
        };
        let left = quantity_bought.saturating_sub(done.get(id).copied().unwrap_or(0));
        if quantity > left {
            return invalid();
        }
        references.push(json!({"lineItemId": id, "quantity": quantity}));
    }
    let taken: HashSet<&str> = existing
        .iter()
        .filter_map(|f| f["fulfillmentId"].as_str())
        .collect();
    let fulfillment_id = match tracking {
        Some(t) if !taken.contains(t) => t.to_owned(),
        _ => format!("{}", 9_000_000_000u64 + state.next_id()),
    };
    let mut fulfillment = json!({
        "fulfillmentId": fulfillment_id,
        "lineItems": references,
        "shippedDate": shipped_date,
    });
    if let (Some(t), Some(c)) = (tracking, carrier) {
        fulfillment["shipmentTrackingNumber"] = json!(t);
        fulfillment["shippingCarrierCode"] = json!(c);
    }
    existing.push(fulfillment);
    let done = shipped(existing);
    let href = format!(
        "{}{}/{fulfillment_id}",
        state.base_url(),
        fulfillments_path(&order_id)
    );
    let moved = crate::orders::change_order(state, &order_id, |order, _| {
        let mut all_done = true;
        let mut any = false;
        for line in order["lineItems"].as_array_mut().into_iter().flatten() {
            let id = line["lineItemId"].as_str().unwrap_or_default();
            let shipped = done.get(id).copied().unwrap_or(0);
            let quantity = line["quantity"].as_u64().unwrap_or(1);
            let status = if shipped >= quantity {
                "FULFILLED"
            } else if shipped > 0 {
                "IN_PROGRESS"
            } else {
                "NOT_STARTED"
            };
            all_done &= shipped >= quantity;
            any |= shipped > 0;
            line["lineItemFulfillmentStatus"] = json!(status);
        }
        let status = if all_done {
            "FULFILLED"
        } else if any {
            "IN_PROGRESS"
        } else {
            "NOT_STARTED"
        };
        order["orderFulfillmentStatus"] = json!(status);
        if let Some(hrefs) = order["fulfillmentHrefs"].as_array_mut() {
            hrefs.push(json!(href));
        } else {
            order["fulfillmentHrefs"] = json!([href]);
        }
    });
    if moved.is_err() {
        return invalid();
    }
    Response::json(201, &json!({})).with_header("Location", href)
}

impl FakeMarketplace {
    /// The shipping fulfillments of the order `order_id`, as getShippingFulfillments answers
    /// them, in the order they were created.
    pub fn shipping_fulfillments(&self, order_id: &str) -> Vec<Value> {
        lock(&self.state().fulfillments.by_order)
            .get(order_id)
            .cloned()
            .unwrap_or_default()
    }
}
