//! Refunds: the Fulfillment API's issueRefund
//! (`POST /sell/fulfillment/v1/order/{order_id}/issue_refund`), checked against the order
//! before it is sent, and idempotent by a key the caller gives.
//!
//! # What is checked before sending
//!
//! The order is read first (getOrder), and a refund that eBay would refuse, or that would
//! take more than the buyer paid, is refused without sending issueRefund
//! ([`OrdersError::Refund`], naming the field and what is wrong): an amount in another
//! currency than the order's (`pricingSummary.total.currency`); more than the order's total
//! minus what is already refunded (`paymentSummary.refunds` and every line item's `refunds`,
//! failed ones left out, a refund listed in both by one `refundId` counted once); a line item's more than its `total` minus its refunds; a line item
//! that is not in the order. The request's own shape is checked before anything is sent
//! ([`OrdersError::Invalid`]): a positive amount of at most two decimals, the whole order or
//! line items (not both, not neither), a comment of at most 100 characters (the description's
//! `comment` "Max Length").
//!
//! # Idempotent by the caller's key
//!
//! eBay's issueRefund takes no idempotency key, and nothing of the request comes back on the
//! order: getOrder's refunds (`OrderRefund`, `LineItemRefund`) carry `refundId`,
//! `refundReferenceId`, the amount (the seller's net amount, which may differ from the amount
//! asked for: eBay-collected tax is not in it), a status and a date, never the `comment`.
//! So the key cannot travel inside the refund; it is recorded in the caller's
//! [`RefundStore`], with the request and the refund ids the order had before the first
//! attempt, **before** issueRefund is sent:
//!
//! * a key recorded with its `refundId`: that refund is answered again, nothing is sent;
//! * a key recorded without one (an answer that never arrived, a crash after sending): the
//!   order is read again, and a refund that was not there before, where this request refunds
//!   (the order's refunds for a whole-order refund, those line items' refunds for line
//!   items), is this key's refund; only when there is none is issueRefund sent again;
//! * after an unclear answer (a time-out, a dropped connection, a cut-off answer, a 5xx, a
//!   429) the order is read again the same way before any retry, so a refund eBay recorded
//!   is never asked for twice. issueRefund is sent with `ApiRequest::sent_once`: the client does
//!   not retry it on its own;
//! * a key recorded for another order or another request is refused;
//! * the first record of a key is a claim ([`RefundStore::claim`], atomic): of two workers
//!   given the same key at once (a notification delivered twice), one records it and may
//!   send; the other takes the recorded path above (the order read again), never sending
//!   without looking.
//!
//! eBay refuses a refund while another of the order's refunds is processing (errorId 34922),
//! so the new refund of an order between two reads is the one this key sent, unless someone
//! refunded the same order at the same moment by other means (Seller Hub): then this key
//! takes that refund as its own and refunds nothing more; it never refunds twice.
//!
//! # Signed
//!
//! issueRefund needs eBay's digital signature for sellers domiciled in the EU or the UK: give
//! the `ApiClient` the seller's key with `with_signing_key` (marketplace-client's `signing`
//! feature); every request it sends is signed. Without it eBay answers 400, errorId 215001,
//! which comes back as [`OrdersError::Api`] (the client's `ApiError::Signature`). The call
//! needs a user token with the `sell.finances` scope (the scope eBay's description gives
//! issueRefund).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Mutex;

use marketplace_client::api::{ApiError, ApiRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::OrdersError;
use crate::filter::check_order_id;
use crate::model::{Amount, Order};

/// A [`RefundStore`]'s error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// eBay's `ReasonForRefundEnum`: why the refund is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RefundReason {
    /// A full refund because the buyer cancelled the order.
    BuyerCancel,
    /// A full refund because the seller cancelled the order.
    SellerCancel,
    /// A full refund because the buyer never received the item.
    ItemNotReceived,
    /// A full refund because the buyer returned the item (not for 'Not as Described').
    BuyerReturn,
    /// A partial or full refund because the item is 'Not as Described'.
    ItemNotAsDescribed,
    /// A partial or full refund for no specific reason.
    OtherAdjustment,
    /// A partial refund passing a shipping discount on to the buyer.
    ShippingDiscount,
}

impl RefundReason {
    /// The reason of eBay's name (`BUYER_CANCEL`), `None` for another name.
    pub fn from_name(name: &str) -> Option<Self> {
        serde_json::from_value(Value::String(name.to_owned())).ok()
    }
}

/// eBay's `SimpleAmount`: an amount of the request, `value` in `currency`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimpleAmount {
    /// A three-letter ISO 4217 code (the order's currency).
    pub currency: String,
    /// The amount, a decimal text of at most two decimals (`12.34`).
    pub value: String,
}

impl SimpleAmount {
    /// `value` (`"12.34"`) in `currency` (`"GBP"`).
    pub fn new(value: impl Into<String>, currency: impl Into<String>) -> Self {
        Self {
            currency: currency.into(),
            value: value.into(),
        }
    }
}

/// eBay's `LegacyReference`: a line item named by the Trading API's item and transaction ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyReference {
    /// The listing's id.
    pub legacy_item_id: String,
    /// The sale's transaction id.
    pub legacy_transaction_id: String,
}

/// eBay's `RefundItem`: the refund of one line item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundItem {
    /// The amount refunded for this line item.
    pub refund_amount: SimpleAmount,
    /// The line item's `lineItemId` (or `legacy_reference`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_item_id: Option<String>,
    /// The line item by the Trading API's ids (or `line_item_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_reference: Option<LegacyReference>,
}

impl RefundItem {
    /// `amount` of the line item `line_item_id`.
    pub fn new(line_item_id: impl Into<String>, amount: SimpleAmount) -> Self {
        Self {
            refund_amount: amount,
            line_item_id: Some(line_item_id.into()),
            legacy_reference: None,
        }
    }
}

/// eBay's `IssueRefundRequest`: issueRefund's body, the whole order
/// ([`whole_order`](Self::whole_order)) or line items ([`line_items`](Self::line_items)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueRefundRequest {
    /// Why (eBay's ReasonForRefundEnum).
    pub reason_for_refund: RefundReason,
    /// The seller's free text to the buyer, at most 100 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The line items refunded, each with its amount.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refund_items: Vec<RefundItem>,
    /// The amount refunded of the whole order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_level_refund_amount: Option<SimpleAmount>,
}

impl IssueRefundRequest {
    /// A refund of `amount` of the whole order.
    pub fn whole_order(reason: RefundReason, amount: SimpleAmount) -> Self {
        Self {
            reason_for_refund: reason,
            comment: None,
            refund_items: Vec::new(),
            order_level_refund_amount: Some(amount),
        }
    }

    /// A refund of line items, each with its amount.
    pub fn line_items(reason: RefundReason, items: Vec<RefundItem>) -> Self {
        Self {
            reason_for_refund: reason,
            comment: None,
            refund_items: items,
            order_level_refund_amount: None,
        }
    }

    /// With the seller's `comment` to the buyer (at most 100 characters).
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = Some(comment.into());
        self
    }

    /// The request's own shape, as eBay takes it: `Err((field, what is wrong))`.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(comment) = &self.comment
            && comment.chars().count() > MAX_COMMENT
        {
            return Err((
                "comment",
                format!(
                    "{} characters; eBay's description gives comment a maximum length of \
                     {MAX_COMMENT}",
                    comment.chars().count()
                ),
            ));
        }
        match (
            &self.order_level_refund_amount,
            self.refund_items.is_empty(),
        ) {
            (Some(amount), true) => check_amount("orderLevelRefundAmount", amount),
            (None, false) => {
                let mut seen = HashSet::new();
                for (n, item) in self.refund_items.iter().enumerate() {
                    check_amount("refundItems.refundAmount", &item.refund_amount)
                        .map_err(|(what, why)| (what, format!("refundItems[{n}]: {why}")))?;
                    let line = match (&item.line_item_id, &item.legacy_reference) {
                        (Some(id), None) if !id.is_empty() => id.clone(),
                        (None, Some(legacy)) => format!("legacy {}", legacy.legacy_item_id),
                        _ => {
                            return Err((
                                "refundItems.lineItemId",
                                format!(
                                    "refundItems[{n}] needs a lineItemId or a legacyReference \
                                     (one of them)"
                                ),
                            ));
                        }
                    };
                    if !seen.insert(line.clone()) {
                        return Err((
                            "refundItems.lineItemId",
                            format!("refundItems[{n}]: line item {line} is refunded twice"),
                        ));
                    }
                }
                Ok(())
            }
            (Some(_), false) => Err((
                "orderLevelRefundAmount",
                "both orderLevelRefundAmount and refundItems: a refund is of the whole order \
                 or of line items"
                    .to_owned(),
            )),
            (None, true) => Err((
                "orderLevelRefundAmount",
                "neither orderLevelRefundAmount nor refundItems: nothing to refund".to_owned(),
            )),
        }
    }
}

/// The maximum length of issueRefund's `comment`: 100 characters, as eBay's API reference
/// (the `IssueRefundRequest` type: "Max Length: 100") and the OpenAPI description's schema
/// (sell_fulfillment_v1_oas3.json, `IssueRefundRequest.comment`) give it. The same
/// description's error 34921 speaks of 1000 characters; the field's own limit is the one
/// taken (the stricter: a comment of at most 100 characters is accepted under either), and
/// the fake marketplace refuses a longer one with 34921 the same way.
const MAX_COMMENT: usize = 100;

fn check_amount(what: &'static str, amount: &SimpleAmount) -> Result<(), (&'static str, String)> {
    match cents(&amount.value) {
        Some(c) if c > 0 => Ok(()),
        _ => Err((
            what,
            format!(
                "the value {:?} is not a positive amount of at most two decimals (12.34)",
                amount.value
            ),
        )),
    }
}

/// A decimal text of at most two decimals in cents (`"12.3"` is 1230).
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

/// eBay's `Refund`: issueRefund's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refund {
    /// The refund's id (not returned when `refundStatus` is `FAILED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_id: Option<String>,
    /// `PENDING` when the refund was accepted (eBay processes it asynchronously), `FAILED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_status: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// What a [`RefundStore`] keeps of a key: the refund asked for, the refunds the order had
/// before its first attempt, and the refund's id once it is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundRecord {
    /// The order refunded.
    pub order_id: String,
    /// The request.
    pub request: IssueRefundRequest,
    /// The `refundId`s of the order's refunds before the first attempt (a refund without
    /// one, made by other means and not yet issued, is never taken for this key's).
    pub before: Vec<String>,
    /// The refund's id, once eBay answered it or the order showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_id: Option<String>,
}

/// Where the caller keeps its refund keys (its database, beside the refund's business
/// record): a key's [`RefundRecord`] is claimed ([`claim`](Self::claim)) before issueRefund
/// is sent and written again with the refund's id. A write must be durable when it returns.
pub trait RefundStore: Send + Sync {
    /// The record of `key`, if any.
    fn get(&self, key: &str)
    -> impl Future<Output = Result<Option<RefundRecord>, BoxError>> + Send;
    /// Records `record` under `key` (replacing the one before).
    fn put(
        &self,
        key: &str,
        record: &RefundRecord,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
    /// Records `record` under `key` only if `key` has no record yet, in one atomic step:
    /// `Ok(None)` when this call recorded it (the key is this caller's), else the record
    /// already there, untouched. Two workers given the same key at once (a notification
    /// delivered twice) both call it; exactly one gets `None`. A database store does it in
    /// one statement (`INSERT … ON CONFLICT (key) DO NOTHING`, then reads the row when
    /// nothing was inserted), never a read followed by a write.
    fn claim(
        &self,
        key: &str,
        record: &RefundRecord,
    ) -> impl Future<Output = Result<Option<RefundRecord>, BoxError>> + Send;
}

/// A [`RefundStore`] in memory: a retry within the process never refunds twice (a restarted
/// process forgets its keys: use a store of your database for that).
#[derive(Debug, Default)]
pub struct MemoryRefundStore {
    records: Mutex<HashMap<String, RefundRecord>>,
}

impl MemoryRefundStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<String, RefundRecord>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl RefundStore for MemoryRefundStore {
    fn get(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<RefundRecord>, BoxError>> + Send {
        std::future::ready(Ok(self.records().get(key).cloned()))
    }

    fn put(
        &self,
        key: &str,
        record: &RefundRecord,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.records().insert(key.to_owned(), record.clone());
        std::future::ready(Ok(()))
    }

    fn claim(
        &self,
        key: &str,
        record: &RefundRecord,
    ) -> impl Future<Output = Result<Option<RefundRecord>, BoxError>> + Send {
        // One lock for the look and the write: no other claim comes between them.
        let mut records = self.records();
        let theirs = match records.entry(key.to_owned()) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.get().clone()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(record.clone());
                None
            }
        };
        std::future::ready(Ok(theirs))
    }
}

/// A refund issued (now, or by an earlier attempt of the same key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedRefund {
    /// The refund's `refundId`.
    pub refund_id: String,
    /// Its status when last seen (`PENDING`; `None` when a line item's refund, which has no
    /// status on the order, was found there).
    pub refund_status: Option<String>,
    /// Whether an earlier attempt of the key had issued it (nothing was refunded now).
    pub replayed: bool,
}

/// The `refundId`s of every refund the order shows (order level and line items).
///
/// Only `refundId`: a refund issueRefund made always carries one (its answer's `refundId`),
/// while a refund made by other means (a return, Seller Hub) may show none, and gets its
/// `refundReferenceId` only later (getOrder: "not returned until the refund has been
/// issued"). An id that appears later on a refund that was there before must not pass for
/// this key's refund.
fn refund_ids(order: &Order) -> Vec<String> {
    let mut ids = Vec::new();
    if let Some(summary) = &order.payment_summary {
        ids.extend(summary.refunds.iter().filter_map(|r| r.refund_id.clone()));
    }
    for line in &order.line_items {
        ids.extend(line.refunds.iter().filter_map(|r| r.refund_id.clone()));
    }
    ids
}

/// The line item of `order` a refund item names, by index.
fn line_of(order: &Order, item: &RefundItem) -> Option<usize> {
    order
        .line_items
        .iter()
        .position(|l| match &item.line_item_id {
            Some(id) => l.line_item_id.as_deref() == Some(id),
            None => item
                .legacy_reference
                .as_ref()
                .is_some_and(|r| l.legacy_item_id.as_deref() == Some(&r.legacy_item_id)),
        })
}

/// A refund of `order` not among `before`, where `request` refunds: the key's refund.
fn new_refund(
    order: &Order,
    before: &[String],
    request: &IssueRefundRequest,
) -> Option<IssuedRefund> {
    let new = |id: Option<&String>| id.filter(|id| !before.contains(id)).cloned();
    if request.order_level_refund_amount.is_some() {
        return order.payment_summary.as_ref().and_then(|s| {
            s.refunds
                .iter()
                .filter(|r| r.refund_status.as_deref() != Some("FAILED"))
                .find_map(|r| {
                    // refundId only (see refund_ids): a refundReferenceId is no refund of ours.
                    new(r.refund_id.as_ref()).map(|id| IssuedRefund {
                        refund_id: id,
                        refund_status: r.refund_status.clone(),
                        replayed: true,
                    })
                })
        });
    }
    request.refund_items.iter().find_map(|item| {
        let line = &order.line_items[line_of(order, item)?];
        line.refunds.iter().find_map(|r| {
            new(r.refund_id.as_ref()).map(|id| IssuedRefund {
                refund_id: id,
                refund_status: None,
                replayed: true,
            })
        })
    })
}

/// The cents of an amount eBay sent in `currency` (`None`: none, or another currency).
fn amount_cents(amount: Option<&Amount>) -> Option<u64> {
    amount.and_then(|a| a.value.as_deref()).and_then(cents)
}

/// The refund checked against the order as getOrder answered it: `Err((field, what is
/// wrong))`.
fn check_against(order: &Order, request: &IssueRefundRequest) -> Result<(), (String, String)> {
    let id = &order.order_id;
    let total = order
        .pricing_summary
        .as_ref()
        .and_then(|p| p.total.as_ref());
    let (Some(currency), Some(paid)) =
        (total.and_then(|t| t.currency.clone()), amount_cents(total))
    else {
        return Err((
            "pricingSummary.total".to_owned(),
            format!(
                "getOrder answered order {id} without a total in a currency: what was paid is unknown"
            ),
        ));
    };
    let live = |status: &Option<String>| status.as_deref() != Some("FAILED");
    let order_level = order.payment_summary.iter().flat_map(|s| &s.refunds);
    // A refund listed at the order level and on its line item is one refund (getOrder may
    // list a line item's refund in both `paymentSummary.refunds` and the line item's
    // `refunds`, with the same `refundId`): counted once, at the order level.
    let listed: HashSet<&str> = order_level
        .clone()
        .filter_map(|r| r.refund_id.as_deref())
        .collect();
    let mut refunded: u64 = order_level
        .filter(|r| live(&r.refund_status))
        .filter_map(|r| amount_cents(r.amount.as_ref()))
        .sum();
    let line_refunded = |n: usize| -> u64 {
        order.line_items[n]
            .refunds
            .iter()
            .filter_map(|r| amount_cents(r.amount.as_ref()))
            .sum()
    };
    refunded += order
        .line_items
        .iter()
        .flat_map(|l| &l.refunds)
        .filter(|r| !r.refund_id.as_deref().is_some_and(|id| listed.contains(id)))
        .filter_map(|r| amount_cents(r.amount.as_ref()))
        .sum::<u64>();
    let left = paid.saturating_sub(refunded);
    let check_currency = |what: &str, amount: &SimpleAmount| {
        if amount.currency == currency {
            Ok(())
        } else {
            Err((
                format!("{what}.currency"),
                format!(
                    "{} is not the currency of order {id}, which was paid in {currency}",
                    amount.currency
                ),
            ))
        }
    };
    let asked = if let Some(amount) = &request.order_level_refund_amount {
        check_currency("orderLevelRefundAmount", amount)?;
        cents(&amount.value).unwrap_or(0)
    } else {
        let mut asked = 0;
        for (n, item) in request.refund_items.iter().enumerate() {
            let what = format!("refundItems[{n}]");
            check_currency(&format!("{what}.refundAmount"), &item.refund_amount)?;
            let Some(line) = line_of(order, item) else {
                let name = item
                    .line_item_id
                    .clone()
                    .or_else(|| {
                        item.legacy_reference
                            .as_ref()
                            .map(|r| format!("legacy item {}", r.legacy_item_id))
                    })
                    .unwrap_or_default();
                let lines: Vec<&str> = order
                    .line_items
                    .iter()
                    .filter_map(|l| l.line_item_id.as_deref())
                    .collect();
                return Err((
                    format!("{what}.lineItemId"),
                    format!(
                        "{name} is not a line item of order {id} (its line items: {})",
                        lines.join(", ")
                    ),
                ));
            };
            let amount = cents(&item.refund_amount.value).unwrap_or(0);
            let line_paid = amount_cents(order.line_items[line].total.as_ref()).unwrap_or(0);
            let line_left = line_paid.saturating_sub(line_refunded(line));
            if amount > line_left {
                return Err((
                    format!("{what}.refundAmount"),
                    format!(
                        "{} {currency} is more than is left to refund of line item {} of order \
                         {id}: {} paid, {} refunded, {} left",
                        item.refund_amount.value,
                        order.line_items[line]
                            .line_item_id
                            .as_deref()
                            .unwrap_or("?"),
                        format_cents(line_paid),
                        format_cents(line_refunded(line)),
                        format_cents(line_left)
                    ),
                ));
            }
            asked += amount;
        }
        asked
    };
    if asked > left {
        let what = if request.order_level_refund_amount.is_some() {
            "orderLevelRefundAmount.value"
        } else {
            "refundItems"
        };
        return Err((
            what.to_owned(),
            format!(
                "{} {currency} is more than is left to refund of order {id}: {} paid, {} \
                 refunded, {} left",
                format_cents(asked),
                format_cents(paid),
                format_cents(refunded),
                format_cents(left)
            ),
        ));
    }
    Ok(())
}

/// Whether eBay may have acted on a request whose answer was `error`: no answer, a cut-off
/// one, a time-out, a 5xx, a 429.
fn unclear(error: &OrdersError) -> bool {
    match error {
        OrdersError::Api(e) | OrdersError::Fulfillment { source: e, .. } => {
            matches!(
                e,
                ApiError::Transport { .. }
                    | ApiError::Truncated { .. }
                    | ApiError::Timeout { .. }
                    | ApiError::RateLimited { .. }
            ) || e.status().is_some_and(|s| s >= 500)
        }
        _ => false,
    }
}

/// A key's record checked against this call: `Err` when the key was given to another order or
/// request, the refund when the record has its id (answered again, nothing sent), else
/// `None` (the key's refund is still to be found or issued).
fn recorded_refund(
    key: &str,
    record: &RefundRecord,
    order_id: &str,
    request: &IssueRefundRequest,
) -> Result<Option<IssuedRefund>, OrdersError> {
    if record.order_id != order_id || record.request != *request {
        return Err(OrdersError::Refund {
            what: "key".to_owned(),
            reason: format!(
                "the key {key:?} was given to another refund (order {}, {}); a key names one \
                 refund",
                record.order_id,
                serde_json::to_string(&record.request).unwrap_or_default()
            ),
        });
    }
    Ok(record.refund_id.as_ref().map(|id| IssuedRefund {
        refund_id: id.clone(),
        refund_status: None,
        replayed: true,
    }))
}

fn store_error(key: &str, source: BoxError) -> OrdersError {
    OrdersError::RefundStore {
        key: key.to_owned(),
        source,
    }
}

impl crate::aio::Orders {
    /// issueRefund of the order `order_id` as `request` asks, once per `key` (see the
    /// [module](self)): checked against the order (getOrder) before it is sent, recorded in
    /// `store` before it is sent, and after an unclear answer the order read again before any
    /// retry (at most [`with_retries`](Self::with_retries) retries). A key already recorded
    /// with its refund answers that refund and sends nothing.
    pub async fn issue_refund<S: RefundStore>(
        &self,
        store: &S,
        key: &str,
        order_id: &str,
        request: &IssueRefundRequest,
    ) -> Result<IssuedRefund, OrdersError> {
        if key.is_empty() {
            return Err(OrdersError::Invalid {
                what: "key",
                reason: "the refund's idempotency key is empty".to_owned(),
            });
        }
        check_order_id(order_id).map_err(|reason| OrdersError::Invalid {
            what: "orderId",
            reason: format!("the order id {order_id:?} {reason}"),
        })?;
        request
            .check()
            .map_err(|(what, reason)| OrdersError::Invalid { what, reason })?;
        let recorded = store.get(key).await.map_err(|e| store_error(key, e))?;
        if let Some(record) = &recorded
            && let Some(done) = recorded_refund(key, record, order_id, request)?
        {
            return Ok(done);
        }
        let mut order = self.get_order(order_id).await?;
        let mut record = match recorded {
            Some(record) => record,
            None => {
                let record = RefundRecord {
                    order_id: order_id.to_owned(),
                    request: request.clone(),
                    before: refund_ids(&order),
                    refund_id: None,
                };
                check_against(&order, request)
                    .map_err(|(what, reason)| OrdersError::Refund { what, reason })?;
                let theirs = store
                    .claim(key, &record)
                    .await
                    .map_err(|e| store_error(key, e))?;
                match theirs {
                    None => record,
                    // Another worker claimed the key since `get`: its record (and the
                    // refunds the order had before *its* attempt) rules. Without its
                    // refund's id yet, the order is read again and the key's refund looked
                    // for there, as for a record left by a crash; nothing is sent blind.
                    Some(theirs) => {
                        if let Some(done) = recorded_refund(key, &theirs, order_id, request)? {
                            return Ok(done);
                        }
                        order = self.get_order(order_id).await?;
                        theirs
                    }
                }
            }
        };
        let body = serde_json::to_vec(request).map_err(|e| OrdersError::Invalid {
            what: "request",
            reason: e.to_string(),
        })?;
        let mut delay = self.backoff;
        let mut attempt = 0;
        loop {
            // An earlier attempt (of this call or of one before it) may have refunded.
            if let Some(found) = new_refund(&order, &record.before, request) {
                record.refund_id = Some(found.refund_id.clone());
                store
                    .put(key, &record)
                    .await
                    .map_err(|e| store_error(key, e))?;
                return Ok(found);
            }
            check_against(&order, request)
                .map_err(|(what, reason)| OrdersError::Refund { what, reason })?;
            let sent = self
                .transport
                .send(
                    ApiRequest::post_segments(crate::aio::path(&[
                        "order",
                        order_id,
                        "issue_refund",
                    ]))
                    .json_bytes(body.clone())
                    .operation("issueRefund")
                    .sent_once(),
                )
                .await
                .map_err(OrdersError::from);
            let error = match sent {
                Ok(answer) => {
                    let refund: Refund = answer.json()?;
                    let Some(id) = refund.refund_id else {
                        return Err(OrdersError::Refund {
                            what: "refundStatus".to_owned(),
                            reason: format!(
                                "issueRefund answered {} without a refundId: eBay did not \
                                 refund order {order_id}",
                                refund.refund_status.as_deref().unwrap_or("no status")
                            ),
                        });
                    };
                    record.refund_id = Some(id.clone());
                    store
                        .put(key, &record)
                        .await
                        .map_err(|e| store_error(key, e))?;
                    return Ok(IssuedRefund {
                        refund_id: id,
                        refund_status: refund.refund_status,
                        replayed: false,
                    });
                }
                Err(e) => e,
            };
            if !unclear(&error) || attempt >= self.retries {
                return Err(error);
            }
            attempt += 1;
            self.transport.sleep(delay).await;
            delay = delay.saturating_mul(2);
            // What eBay did with the attempt whose answer was lost: read before retrying.
            order = self.get_order(order_id).await?;
        }
    }
}

impl crate::blocking::Orders {
    /// [`aio::Orders::issue_refund`](crate::aio::Orders::issue_refund), over a store whose
    /// futures are ready at once ([`MemoryRefundStore`], or a store of blocking calls): a
    /// store that awaits a runtime belongs on the async front.
    pub fn issue_refund<S: RefundStore>(
        &self,
        store: &S,
        key: &str,
        order_id: &str,
        request: &IssueRefundRequest,
    ) -> Result<IssuedRefund, OrdersError> {
        crate::blocking::wait(self.inner.issue_refund(store, key, order_id, request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_sent_in_ebays_shape_and_its_shape_checked_first() {
        let request = IssueRefundRequest::line_items(
            RefundReason::ItemNotAsDescribed,
            vec![RefundItem::new(
                "10000000001",
                SimpleAmount::new("5.5", "GBP"),
            )],
        )
        .comment("scratched");
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            serde_json::json!({"reasonForRefund": "ITEM_NOT_AS_DESCRIBED", "comment": "scratched",
                "refundItems": [{"refundAmount": {"currency": "GBP", "value": "5.5"},
                    "lineItemId": "10000000001"}]})
        );
        assert!(request.check().is_ok());
        for bad in ["0", "-1", "1.234", "", "1e2"] {
            let request = IssueRefundRequest::whole_order(
                RefundReason::BuyerCancel,
                SimpleAmount::new(bad, "GBP"),
            );
            assert_eq!(
                request.check().unwrap_err().0,
                "orderLevelRefundAmount",
                "{bad:?}"
            );
        }
        let long = IssueRefundRequest::whole_order(
            RefundReason::BuyerCancel,
            SimpleAmount::new("1", "GBP"),
        )
        .comment("x".repeat(101));
        assert_eq!(long.check().unwrap_err().0, "comment");
        assert_eq!(
            RefundReason::from_name("SHIPPING_DISCOUNT"),
            Some(RefundReason::ShippingDiscount)
        );
        assert_eq!(RefundReason::from_name("NOPE"), None);
    }
}
