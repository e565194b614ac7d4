//! The Fulfillment API's issueRefund (`POST /sell/fulfillment/v1/order/{order_id}/issue_refund`)
//! as eBay's OpenAPI description of the Fulfillment API (sell_fulfillment_v1_oas3.json,
//! v1.20.7) and its API reference give it, on the orders of [`orders`](crate::orders).
//!
//! * A user token with `https://api.ebay.com/oauth/api_scope/sell.finances` (the scope the
//!   description gives issueRefund; else eBay's 403, errorId 1100).
//! * The digital signature ([`FakeState::check_signature`]): a signature sent is always
//!   verified (403, 215120 or 215122 when it fails), and one is required (400, 215001 without
//!   it) for an order sold on a UK or EU marketplace (its line items' `listingMarketplaceId`:
//!   EBAY_GB, EBAY_DE, EBAY_FR, EBAY_IT, EBAY_ES, EBAY_AT, EBAY_BE, EBAY_NL, EBAY_IE,
//!   EBAY_PL), the fake's stand-in for a seller domiciled there (eBay: "an additional
//!   security verification via Digital Signatures is required for certain API calls that are
//!   made on behalf of EU/UK sellers, including issueRefund").
//! * An order that is not one of the token's seller's: 404, errorId 34913 ("Can not find the
//!   order.").
//! * The body, with the description's error ids: none or not a JSON object 34902,
//!   `reasonForRefund` missing or not one of ReasonForRefundEnum 34903, neither (or both)
//!   `orderLevelRefundAmount` and `refundItems` 34905, an amount without `value` 34906, a
//!   `value` that is not positive with at most two decimals 34907, no `currency` 34908,
//!   another currency than the order's 34909, a refund item without `lineItemId` or
//!   `legacyReference` 34910 (without `legacyItemId` 34911, `legacyTransactionId` 34912), a
//!   line item that is not in the order 34914, a `comment` over 100 characters 34921 (the
//!   limit of eBay's API reference and of the description's `IssueRefundRequest.comment`,
//!   "Max Length: 100"; the description's text of 34921 says 1000, the field's own limit is
//!   the one enforced, as marketplace-orders checks it); more
//!   than the order's total minus what was refunded: 400, 34915 ("The refund amount exceeds
//!   order amount."); more than a line item's total minus its refunds: 409, 34924 ("The item
//!   refund amount exceeds the item remaining amount."); while a refund of the order made by
//!   other means ([`FakeMarketplace::refund_by_other_means`]) is still `PENDING`: 400, 34922
//!   ("Refund can't be issued while previous refund is processing.").
//! * A refund accepted: 200 `{"refundId", "refundStatus": "PENDING"}` (eBay processes
//!   refunds asynchronously), recorded on the order as getOrder shows it: an order-level
//!   refund in `paymentSummary.refunds` (`refundId`, `refundStatus` `PENDING`, `amount`), a
//!   line item's in its `refunds` (`refundId`, `amount`; with
//!   [`FakeMarketplace::list_line_item_refunds_at_order_level`] in `paymentSummary.refunds`
//!   too, under the same `refundId`, counted once); `orderPaymentStatus` becomes
//!   `PARTIALLY_REFUNDED` or, once everything paid is refunded, `FULLY_REFUNDED`; the order's
//!   `lastModifiedDate` moves. [`FakeMarketplace::complete_refunds`] completes the pending
//!   refunds (`REFUNDED`, `refundDate`, `refundReferenceId`).
//!
//! An answer lost after the refund is recorded (what a client must survive without refunding
//! twice) is `Fault::CutOffBody` on the order's issue_refund path (the route runs, half its
//! answer is sent), or `Fault::Delay` past the client's time-out.

use std::sync::atomic::Ordering;

use marketplaces::Marketplace;
use serde_json::{Value, json};

use crate::http::{Request, Response};
use crate::orders::with_order;
use crate::{FakeMarketplace, FakeState, Route};

/// issueRefund's path, as the description writes it.
pub const ISSUE_REFUND_PATH: &str = "/sell/fulfillment/v1/order/{order_id}/issue_refund";

/// The scope the description gives issueRefund (a suffix of `…/oauth/api_scope`).
pub const REFUND_SCOPE: &str = "/sell.finances";

/// ReasonForRefundEnum's values (eBay's API reference).
const REASONS: [&str; 7] = [
    "BUYER_CANCEL",
    "SELLER_CANCEL",
    "ITEM_NOT_RECEIVED",
    "BUYER_RETURN",
    "ITEM_NOT_AS_DESCRIBED",
    "OTHER_ADJUSTMENT",
    "SHIPPING_DISCOUNT",
];

/// The marketplaces whose sellers' issueRefund needs a signature (the UK's and the EU's).
const SIGNED_MARKETPLACES: [&str; 10] = [
    "EBAY_GB", "EBAY_DE", "EBAY_FR", "EBAY_IT", "EBAY_ES", "EBAY_AT", "EBAY_BE", "EBAY_NL",
    "EBAY_IE", "EBAY_PL",
];

/// The maximum length of `comment`: eBay's API reference and the description's
/// `IssueRefundRequest.comment` ("Max Length: 100"); 34921's text says 1000.
const MAX_COMMENT: usize = 100;

pub(crate) fn routes() -> Vec<Route> {
    vec![Route::new("POST", ISSUE_REFUND_PATH, issue_refund)]
}

/// An error of the Fulfillment API, as the description lists it (domain `API_FULFILLMENT`).
fn error(status: u16, id: u32, category: &str, message: &str) -> Response {
    Response::json(
        status,
        &json!({"errors": [{
            "errorId": id, "domain": "API_FULFILLMENT", "category": category,
            "message": message,
        }]}),
    )
}

fn request_error(id: u32, message: &str) -> Response {
    error(400, id, "REQUEST", message)
}

/// A money value in cents: positive, at most two decimals.
fn cents(value: &str) -> Option<u64> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    if whole.is_empty()
        || fraction.len() > 2
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let fraction: u64 = format!("{fraction:0<2}").parse().ok()?;
    whole.checked_mul(100)?.checked_add(fraction)
}

fn format_cents(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The cents of an `Amount` the fake wrote (0 when it has none).
fn amount_cents(amount: &Value) -> u64 {
    amount["value"].as_str().and_then(cents).unwrap_or(0)
}

/// Whether `order` has a refund made by other means than issueRefund (a return's refund,
/// Seller Hub: [`FakeMarketplace::refund_by_other_means`]) still processing: `PENDING`,
/// without a `refundId`. issueRefund refuses a refund of the order meanwhile (400, errorId
/// 34922, "Refund can't be issued while previous refund is processing."). The fake's own
/// issueRefund refunds, also `PENDING` until [`FakeMarketplace::complete_refunds`], do not
/// hold the next one up: eBay's description does not say how long its processing lasts.
fn processing_elsewhere(order: &Value) -> bool {
    order["paymentSummary"]["refunds"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| r["refundStatus"] == json!("PENDING") && r.get("refundId").is_none())
}

/// What was refunded of `order`: its order-level refunds and its line items' refunds, a line
/// item's refund also listed at the order level (by its `refundId`) counted once.
fn refunded_of_order(order: &Value) -> u64 {
    let listed: Vec<&Value> = order["paymentSummary"]["refunds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("refundId"))
        .collect();
    let lines: Vec<Value> = order["lineItems"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|l| l["refunds"].as_array().cloned().unwrap_or_default())
        .filter(|r| r.get("refundId").is_none_or(|id| !listed.contains(&id)))
        .collect();
    refunded(&order["paymentSummary"]["refunds"]) + refunded(&Value::Array(lines))
}

/// The sum of the refunds in `refunds` (an array of OrderRefund or LineItemRefund), failed
/// ones left out.
fn refunded(refunds: &Value) -> u64 {
    refunds
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["refundStatus"] != json!("FAILED"))
        .map(|r| amount_cents(&r["amount"]))
        .sum()
}

/// A checked amount (`SimpleAmount`) of the request: its cents, or eBay's error.
fn checked_amount(amount: &Value, currency: &str) -> Result<u64, Response> {
    let Some(value) = amount.get("value") else {
        return Err(request_error(34906, "The amount value must be specified."));
    };
    let value = value
        .as_str()
        .and_then(cents)
        .filter(|c| *c > 0)
        .ok_or_else(|| {
            request_error(
                34907,
                "The amount value must be positive and within two decimals.",
            )
        })?;
    match amount.get("currency").and_then(Value::as_str) {
        None => Err(request_error(
            34908,
            "The amount currency must be specified.",
        )),
        Some(c) if c != currency => Err(request_error(34909, "The amount currency isn't correct.")),
        Some(_) => Ok(value),
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(response) => return response,
        }
    };
}

fn issue_refund(request: &Request, state: &FakeState) -> Response {
    let token = tri!(state.check_scope(request, REFUND_SCOPE));
    if !token.token_type.starts_with("User") {
        return state.insufficient_scope();
    }
    let seller = state.seller_of(&token);
    // eBay's gateway verifies a signature it is sent, whatever the call.
    if request.header("x-ebay-signature-key").is_some() {
        tri!(state.check_signature(request));
    }
    let id = request.param("order_id").unwrap_or_default().to_owned();
    let refund_id = format!("5{:09}", state.next_id());
    let answer = with_order(state, &seller, &id, |order, _| {
        match refund(request, state, order, &refund_id) {
            Ok(()) => (
                true,
                Response::json(
                    200,
                    &json!({"refundId": refund_id, "refundStatus": "PENDING"}),
                ),
            ),
            Err(refused) => (false, refused),
        }
    });
    answer.unwrap_or_else(|| error(404, 34913, "REQUEST", "Can not find the order."))
}

/// Checks the refund against `order` and records it there, or eBay's error answer.
fn refund(
    request: &Request,
    state: &FakeState,
    order: &mut Value,
    refund_id: &str,
) -> Result<(), Response> {
    let signed = order["lineItems"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|l| {
            l["listingMarketplaceId"]
                .as_str()
                .is_some_and(|m| SIGNED_MARKETPLACES.contains(&m))
        });
    if signed {
        state.check_signature(request)?;
    }
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    if !body.is_object() {
        return Err(request_error(34902, "Request can't be empty."));
    }
    if !body["reasonForRefund"]
        .as_str()
        .is_some_and(|r| REASONS.contains(&r))
    {
        return Err(request_error(34903, "The refund reason must be specified."));
    }
    if body["comment"]
        .as_str()
        .is_some_and(|c| c.chars().count() > MAX_COMMENT)
    {
        return Err(request_error(
            34921,
            "The comment exceeds the length limit, please make sure it doesn't exceed 1000 \
             characters.",
        ));
    }
    if processing_elsewhere(order) {
        return Err(request_error(
            34922,
            "Refund can't be issued while previous refund is processing.",
        ));
    }
    let whole = body.get("orderLevelRefundAmount");
    let items = body.get("refundItems").and_then(Value::as_array);
    let either = "Either orderLevelRefundAmount or refundItems must be specified.";
    let total = &order["pricingSummary"]["total"];
    let currency = total["currency"].as_str().unwrap_or("USD").to_owned();
    let already = refunded_of_order(order);
    let remaining = amount_cents(total).saturating_sub(already);
    let asked = match (whole, items) {
        (Some(amount), None) => {
            let asked = checked_amount(amount, &currency)?;
            if asked > remaining {
                return Err(request_error(
                    34915,
                    "The refund amount exceeds order amount.",
                ));
            }
            order["paymentSummary"]["refunds"]
                .as_array_mut()
                .map(|r| {
                    r.push(json!({"refundId": refund_id, "refundStatus": "PENDING",
                        "amount": {"value": format_cents(asked), "currency": currency}}))
                })
                .ok_or_else(|| request_error(34902, "Request can't be empty."))?;
            asked
        }
        (None, Some(items)) if !items.is_empty() => {
            // Every item checked before any is recorded.
            let mut found = Vec::new();
            for item in items {
                let asked = checked_amount(&item["refundAmount"], &currency)?;
                let line = line_of(order, item)?;
                let line_total = amount_cents(&order["lineItems"][line]["total"]);
                let line_left =
                    line_total.saturating_sub(refunded(&order["lineItems"][line]["refunds"]));
                let earlier: u64 = found
                    .iter()
                    .filter(|(l, _)| *l == line)
                    .map(|(_, a)| a)
                    .sum();
                if asked + earlier > line_left {
                    return Err(error(
                        409,
                        34924,
                        "BUSINESS",
                        "The item refund amount exceeds the item remaining amount.",
                    ));
                }
                found.push((line, asked));
            }
            let asked: u64 = found.iter().map(|(_, a)| a).sum();
            if asked > remaining {
                return Err(request_error(
                    34915,
                    "The refund amount exceeds order amount.",
                ));
            }
            for (line, amount) in found {
                if let Some(r) = order["lineItems"][line]["refunds"].as_array_mut() {
                    r.push(json!({"refundId": refund_id,
                        "amount": {"value": format_cents(amount), "currency": currency}}));
                }
            }
            if state
                .orders
                .line_refunds_at_order_level
                .load(Ordering::Relaxed)
                && let Some(r) = order["paymentSummary"]["refunds"].as_array_mut()
            {
                r.push(json!({"refundId": refund_id, "refundStatus": "PENDING",
                    "amount": {"value": format_cents(asked), "currency": currency}}));
            }
            asked
        }
        _ => return Err(request_error(34905, either)),
    };
    order["orderPaymentStatus"] = json!(if asked == remaining {
        "FULLY_REFUNDED"
    } else {
        "PARTIALLY_REFUNDED"
    });
    Ok(())
}

/// The index in `order["lineItems"]` of a refund item's line item, or eBay's error.
fn line_of(order: &Value, item: &Value) -> Result<usize, Response> {
    let lines = order["lineItems"].as_array().cloned().unwrap_or_default();
    let position = if let Some(id) = item.get("lineItemId") {
        let id = id.as_str().unwrap_or_default();
        lines.iter().position(|l| l["lineItemId"] == json!(id))
    } else if let Some(legacy) = item.get("legacyReference") {
        let Some(item_id) = legacy["legacyItemId"].as_str() else {
            return Err(request_error(
                34911,
                "Legacy item id must be specified for item level refund if you use \
                 legacyReference.",
            ));
        };
        if legacy["legacyTransactionId"].as_str().is_none() {
            return Err(request_error(
                34912,
                "Legacy transaction id must be specified for item level refund if you use \
                 legacyReference.",
            ));
        }
        lines
            .iter()
            .position(|l| l["legacyItemId"] == json!(item_id))
    } else {
        return Err(request_error(
            34910,
            "Either legacyReference or lineItemId must be specified for item level refund.",
        ));
    };
    position.ok_or_else(|| request_error(34914, "Can't find the item in the order."))
}

impl FakeMarketplace {
    /// [`add_listing`](Self::add_listing) on `marketplace` (`EBAY_GB`), priced in its
    /// currency: what a seller of that marketplace sells (an order of it needs a signed
    /// issueRefund when the marketplace is the UK's or an EU one). `None` for a marketplace id
    /// the fake does not know.
    pub fn add_listing_on(
        &self,
        marketplace: &str,
        username: &str,
        sku: &str,
        quantity: u32,
        price: &str,
    ) -> Option<String> {
        let currency = Marketplace::from_marketplace_id(marketplace)?.currency();
        let listing = self.add_listing(username, sku, quantity, price);
        crate::inventory::move_listing(
            self.state(),
            &format!("user:{username}"),
            &listing,
            marketplace,
            currency,
        )
        .ok()?;
        Some(listing)
    }

    /// The order's pending refunds are done: `REFUNDED`, with a `refundDate` and a
    /// `refundReferenceId` (order-level ones; a line item's refunds get the date and the
    /// reference). An error naming the order when the fake has none.
    pub fn complete_refunds(&self, order_id: &str) -> Result<(), String> {
        let seller = seller_of_order(self, order_id)?;
        let next = self.state().next_id();
        with_order(self.state(), &seller, order_id, |order, at| {
            let mut refunds: Vec<&mut Value> = Vec::new();
            if let Some(r) = order["paymentSummary"]["refunds"].as_array_mut() {
                refunds.extend(
                    r.iter_mut()
                        .filter(|r| r["refundStatus"] == json!("PENDING")),
                );
            }
            let changed = !refunds.is_empty();
            for (n, refund) in refunds.into_iter().enumerate() {
                refund["refundStatus"] = json!("REFUNDED");
                refund["refundDate"] = json!(at);
                refund["refundReferenceId"] = json!(format!("R{next:08}{n:02}"));
            }
            for line in order["lineItems"].as_array_mut().into_iter().flatten() {
                for refund in line["refunds"].as_array_mut().into_iter().flatten() {
                    if refund.get("refundDate").is_none() {
                        refund["refundDate"] = json!(at);
                    }
                }
            }
            (changed, ())
        })
        .ok_or_else(|| format!("no order {order_id} on the fake"))
    }
}

impl FakeMarketplace {
    /// With `on`, issueRefund lists a refund of line items in `paymentSummary.refunds` as
    /// well as in each line item's `refunds`, under the same `refundId` (one entry of the
    /// refund's whole amount), as getOrder may show it (eBay's `LineItemRefund.refundId`
    /// and `OrderRefund.refundId` are the one id issueRefund answered). Off by default.
    pub fn list_line_item_refunds_at_order_level(&self, on: bool) {
        self.state()
            .orders
            .line_refunds_at_order_level
            .store(on, Ordering::Relaxed);
    }

    /// A refund of `value` (in the order's currency) of the whole order made by other means
    /// than issueRefund (a return's refund, Seller Hub), not yet issued: `PENDING`, with
    /// neither `refundId` nor `refundReferenceId` (eBay's getOrder: the reference "is not
    /// returned until the refund has been issued").
    /// [`complete_refunds`](Self::complete_refunds) issues it (`REFUNDED`, a
    /// `refundReferenceId`, still no `refundId`). An error naming the order when the fake
    /// has none.
    pub fn refund_by_other_means(&self, order_id: &str, value: &str) -> Result<(), String> {
        let seller = seller_of_order(self, order_id)?;
        let cents = cents(value).ok_or_else(|| format!("{value:?} is not an amount"))?;
        with_order(self.state(), &seller, order_id, |order, _| {
            let currency = order["pricingSummary"]["total"]["currency"].clone();
            let refund = json!({"refundStatus": "PENDING",
                "amount": {"value": format_cents(cents), "currency": currency}});
            match order["paymentSummary"]["refunds"].as_array_mut() {
                Some(refunds) => refunds.push(refund),
                None => {
                    return (
                        false,
                        Err(format!("order {order_id} has no paymentSummary")),
                    );
                }
            }
            order["orderPaymentStatus"] = json!("PARTIALLY_REFUNDED");
            (true, Ok(()))
        })
        .ok_or_else(|| format!("no order {order_id} on the fake"))?
    }
}

/// The seller key of the order `order_id`.
fn seller_of_order(fake: &FakeMarketplace, order_id: &str) -> Result<String, String> {
    let order = fake
        .order(order_id)
        .ok_or_else(|| format!("no order {order_id} on the fake"))?;
    Ok(format!(
        "user:{}",
        order["sellerId"].as_str().unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_positive_cents_of_at_most_two_decimals() {
        assert_eq!(cents("12.34"), Some(1234));
        assert_eq!(cents("12.3"), Some(1230));
        assert_eq!(cents("12"), Some(1200));
        for bad in ["", ".5", "1.234", "-1", "1e3", "1,00", " 1"] {
            assert_eq!(cents(bad), None, "{bad:?}");
        }
        assert_eq!(format_cents(1205), "12.05");
    }
}
