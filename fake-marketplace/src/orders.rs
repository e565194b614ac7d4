//! Buyers, and the Fulfillment API's orders (`/sell/fulfillment/v1/order`): getOrders and
//! getOrder as eBay's OpenAPI description of the Fulfillment API
//! (sell_fulfillment_v1_oas3.json, v1.20.7) and its API reference give them.
//!
//! A test sells with [`FakeMarketplace::buy`] (or [`FakeMarketplace::buy_with`] and a
//! [`Purchase`]: how many, whether the payment completes, fails or is still pending, the
//! buyer's name and country), or over HTTP with the fake's own test route
//! [`BUY_PATH`] (what `fake-marketplace buy --listing ID --quantity N` sends): a published
//! listing (publishOffer's `listingId`) of any seller becomes an order of that seller. The
//! offer's `availableQuantity` and the inventory item's ship-to-location quantity go down by
//! the quantity bought, the listing's `soldQuantity` up, and a listing at 0 ends (getOffers
//! shows `listing.listingStatus` `ENDED`). Orders then change: [`FakeMarketplace::cancel_order`]
//! (a buyer's cancel request), [`FakeMarketplace::complete_cancel`],
//! [`FakeMarketplace::complete_payment`] (a pending payment completes: the order appears to
//! getOrders with its old `creationDate`) and [`FakeMarketplace::touch_order`]; each moves the
//! order's `lastModifiedDate` forward (never two changes of an order at the same millisecond).
//! A checkout completed (a purchase paid at once, or `complete_payment`) sends ORDER_CONFIRMATION
//! to the endpoints subscribed for the seller (see [`notify`](crate::notify)).
//!
//! getOrders and getOrder need a user token with
//! `https://api.ebay.com/oauth/api_scope/sell.fulfillment` or `…/sell.fulfillment.readonly`
//! (else eBay's 403, errorId 1100) and answer the orders of the token's seller:
//!
//! * `filter`: `creationdate:[FROM..TO]`, `lastmodifieddate:[FROM..TO]` (`TO` may be left out:
//!   `[FROM..]`; both given: only `creationdate` is used, as eBay says),
//!   `orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}` or `{FULFILLED|IN_PROGRESS}` (the two
//!   combinations eBay supports), comma-separated; timestamps in eBay's format
//!   (`2016-03-21T08:25:43.511Z`), both ends included. eBay's errors: an unknown criterion
//!   30700, a value that is not a range or a supported status set 30800, a timestamp that is
//!   not one 30810, no start 30820, a range over two years 30830, a start after the end 30840,
//!   an end (or start) in the future 30850;
//! * `orderIds`: at most 50 (30900), comma-separated; with it, `filter`, `limit` and `offset`
//!   are ignored, as eBay says; ids that are none of the seller's orders are left out;
//! * `limit` 1 to 200, default 50 (31100 otherwise), `offset` from 0 (31000), `total`, `href`,
//!   `next` and `prev`; `fieldGroups` only `TAX_BREAKDOWN` (32800);
//! * the orders sorted by `creationDate`, the newest first (eBay's reference does not say how
//!   it sorts; with this order an order bought while a client pages shifts the older ones to a
//!   later page, so an offset walk sees an order twice, never misses one);
//! * `cancelStatus` always present, and getOrders leaves its `cancelRequests` empty while
//!   getOrder fills them, as eBay's developers report of getOrders;
//! * an order whose payment is still pending is not answered (eBay: "getOrders does not include
//!   pending-payment purchases"); getOrder answers it as an unknown order;
//! * getOrder of an id that is not one of the seller's orders: 400, errorId 32100 ("Invalid
//!   order ID: {orderId}");
//! * a system error: [`system_error`] is eBay's 500 with errorId 30500, to queue with
//!   [`FakeMarketplace::fail_next`] (a 500 page), `Fault::Delay` a slow page, and
//!   [`FakeMarketplace::on_orders_page`] runs a test's code after a page is read and before it
//!   is answered (an order bought or changed while a client pages).
//!
//! The buyer: `buyer.username` (from 2025-09-26 eBay sends some developers an immutable user
//! id in its place for U.S. buyers: [`Purchase::immutable_user_id`] does so),
//! `buyer.taxAddress` and `buyer.buyerRegistrationAddress` with the buyer's country.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::http::{Request, Response};
use crate::{FakeMarketplace, FakeState, Fault, Route, lock};

const BASE: &str = "/sell/fulfillment/v1";

/// getOrders' path.
pub const GET_ORDERS_PATH: &str = "/sell/fulfillment/v1/order";

/// The fake's own test route (not eBay's): `POST` a JSON body `{"listingId", "quantity",
/// "payment": "PAID" | "FAILED" | "PENDING", "buyerUsername", "buyerCountry"}` (only
/// `listingId` required; `quantity` 1 by default) and a published listing is bought:
/// `201 {"orderId": …}`, or `400 {"error": …}` naming what was wrong. No token needed: it
/// stands for a buyer on eBay's site. `fake-marketplace buy` sends it.
pub const BUY_PATH: &str = "/fake-marketplace/buy";

/// The most order ids getOrders takes (errorId 30900 beyond).
const MAX_ORDER_IDS: usize = 50;

/// A hook run after a getOrders page is read, before it is answered: the fake's state and
/// the page's offset.
type PageHook = Arc<dyn Fn(&FakeState, u64) + Send + Sync>;

/// An order the fake holds.
struct StoredOrder {
    /// The seller key (as the Inventory API's: `user:{username}`).
    seller: String,
    /// Milliseconds since the epoch.
    created: u64,
    /// Milliseconds since the epoch.
    modified: u64,
    /// The Order, `lastModifiedDate` and `cancelStatus.cancelRequests` included.
    order: Value,
}

impl StoredOrder {
    fn pending(&self) -> bool {
        self.order["orderPaymentStatus"] == json!("PENDING")
    }
}

/// The orders part of the fake's state.
#[derive(Default)]
pub(crate) struct OrdersState {
    orders: Mutex<BTreeMap<String, StoredOrder>>,
    page_hook: Mutex<Option<PageHook>>,
    /// Whether issueRefund lists a line item's refund in `paymentSummary.refunds` too
    /// ([`FakeMarketplace::list_line_item_refunds_at_order_level`]).
    pub(crate) line_refunds_at_order_level: std::sync::atomic::AtomicBool,
}

/// How a purchase's payment goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaymentOutcome {
    /// Paid at checkout: `orderPaymentStatus` `PAID` (the default).
    #[default]
    Paid,
    /// The payment failed: `FAILED`.
    Failed,
    /// Not paid yet: the order is not answered until [`FakeMarketplace::complete_payment`].
    Pending,
}

impl PaymentOutcome {
    fn status(self) -> &'static str {
        match self {
            Self::Paid => "PAID",
            Self::Failed => "FAILED",
            Self::Pending => "PENDING",
        }
    }

    /// `PAID`, `FAILED` or `PENDING`, as eBay's OrderPaymentStatusEnum names them.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PAID" => Some(Self::Paid),
            "FAILED" => Some(Self::Failed),
            "PENDING" => Some(Self::Pending),
            _ => None,
        }
    }
}

/// A buyer's purchase of a published listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    /// The listing bought (publishOffer's `listingId`).
    pub listing_id: String,
    /// How many (at least 1, at most what the offer has available).
    pub quantity: u32,
    /// How the payment goes.
    pub payment: PaymentOutcome,
    /// The buyer's eBay username.
    pub buyer_username: String,
    /// The buyer's country (ISO 3166 alpha-2, as eBay's CountryCodeEnum).
    pub buyer_country: String,
    /// Send an immutable user id in `buyer.username` (eBay does so for U.S. buyers to some
    /// developers since 2025-09-26).
    pub immutable_user_id: bool,
}

impl Purchase {
    /// `quantity` of `listing_id`, paid, by `fake_buyer` of the US.
    pub fn of(listing_id: impl Into<String>, quantity: u32) -> Self {
        Self {
            listing_id: listing_id.into(),
            quantity,
            payment: PaymentOutcome::Paid,
            buyer_username: "fake_buyer".into(),
            buyer_country: "US".into(),
            immutable_user_id: false,
        }
    }

    /// With the payment `outcome`.
    pub fn payment(mut self, outcome: PaymentOutcome) -> Self {
        self.payment = outcome;
        self
    }

    /// By `username` of `country`.
    pub fn buyer(mut self, username: impl Into<String>, country: impl Into<String>) -> Self {
        self.buyer_username = username.into();
        self.buyer_country = country.into();
        self
    }

    /// With an immutable user id in `buyer.username` instead of the name.
    pub fn immutable_user_id(mut self) -> Self {
        self.immutable_user_id = true;
        self
    }
}

/// eBay's 500 of the Fulfillment API (errorId 30500, "System error"), to queue with
/// [`FakeMarketplace::fail_next`] on [`GET_ORDERS_PATH`] or an order's path.
pub fn system_error() -> Fault {
    Fault::Status {
        status: 500,
        body: json!({"errors": [{
            "errorId": 30500, "domain": "API_FULFILLMENT", "category": "APPLICATION",
            "message": "System error",
        }]})
        .to_string(),
        headers: vec![("Content-Type".into(), "application/json".into())],
    }
}

/// eBay's timestamp format: `2016-03-21T08:25:43.511Z` (UTC, milliseconds).
pub fn format_timestamp(millis: u64) -> String {
    let secs = millis / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        millis % 1000
    )
}

/// Milliseconds since the epoch of a timestamp in eBay's format (`2016-03-21T08:25:43.511Z`;
/// the fraction may be left out or have 1 to 3 digits).
pub fn parse_timestamp(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u64> {
        let s = text.get(r)?;
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let (y, mo, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (h, mi, s) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let millis = match &text[19..text.len() - 1] {
        "" => 0,
        frac => {
            let f = frac.strip_prefix('.')?;
            if f.is_empty() || f.len() > 3 {
                return None;
            }
            digits(20..20 + f.len())? * 10u64.pow(3 - f.len() as u32)
        }
    };
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59
    {
        return None;
    }
    let days = u64::try_from(days_from_civil(y as i64, mo, d)).ok()?;
    Some(((days * 86_400 + h * 3600 + mi * 60 + s) * 1000) + millis)
}

fn days_in_month(y: u64, m: u64) -> u64 {
    match m {
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a date (Howard Hinnant's algorithm); the stock's Pacific day
/// (inventory_stock.rs) reads it too.
pub(crate) fn days_from_civil(y: i64, m: u64, d: u64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u64, u64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u64;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u64;
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An error of the Fulfillment API (domain `API_FULFILLMENT`, category `REQUEST`).
fn error(status: u16, id: u32, message: &str, parameters: &[(&str, &str)]) -> Response {
    Response::json(
        status,
        &json!({"errors": [{
            "errorId": id, "domain": "API_FULFILLMENT", "category": "REQUEST",
            "message": message,
            "parameters": parameters.iter().map(|(n, v)| json!({"name": n, "value": v}))
                .collect::<Vec<_>>(),
        }]}),
    )
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("GET", GET_ORDERS_PATH, get_orders),
        Route::new("GET", &format!("{BASE}/order/{{orderId}}"), get_order),
        Route::new("POST", BUY_PATH, buy_route),
    ]
}

/// The seller of the request's user token with a Fulfillment API scope, or the answer.
fn seller(request: &Request, state: &FakeState) -> Result<String, Response> {
    let token = state
        .check_scope(request, "/sell.fulfillment")
        .or_else(|_| state.check_scope(request, "/sell.fulfillment.readonly"))?;
    if !token.token_type.starts_with("User") {
        return Err(state.insufficient_scope());
    }
    Ok(state.seller_of(&token))
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(response) => return response,
        }
    };
}

/// `fieldGroups`: only `TAX_BREAKDOWN` (32800 otherwise).
fn check_field_groups(request: &Request) -> Result<(), Response> {
    match request.query_param("fieldGroups") {
        Some(g) if g.split(',').any(|g| g != "TAX_BREAKDOWN") => Err(error(
            400,
            32800,
            &format!("Invalid field group: {g}"),
            &[("fieldGroup", &g)],
        )),
        _ => Ok(()),
    }
}

/// What a getOrders filter keeps.
#[derive(Default)]
struct Filter {
    /// (field, from, to): creationdate wins over lastmodifieddate.
    range: Option<(&'static str, u64, Option<u64>)>,
    statuses: Option<Vec<String>>,
}

impl Filter {
    fn keeps(&self, order: &StoredOrder) -> bool {
        let range_ok = self.range.is_none_or(|(field, from, to)| {
            let at = if field == "creationdate" {
                order.created
            } else {
                order.modified
            };
            at >= from && to.is_none_or(|to| at <= to)
        });
        let status_ok = self.statuses.as_ref().is_none_or(|set| {
            order.order["orderFulfillmentStatus"]
                .as_str()
                .is_some_and(|s| set.iter().any(|w| w == s))
        });
        range_ok && status_ok
    }
}

/// Parses getOrders' `filter` as eBay documents it.
fn parse_filter(text: &str, now: u64) -> Result<Filter, Response> {
    const TWO_YEARS: u64 = 2 * 366 * 86_400_000;
    let mut filter = Filter::default();
    let mut creation = None;
    let mut modified = None;
    for criterion in text.split(',').filter(|c| !c.trim().is_empty()) {
        let (name, value) = criterion.split_once(':').unwrap_or((criterion, ""));
        let bad_value = || {
            error(
                400,
                30800,
                &format!("Invalid filter value {value} for filter {name}"),
                &[("fieldvalue", value), ("fieldname", name)],
            )
        };
        match name {
            "creationdate" | "lastmodifieddate" => {
                let inner = value
                    .strip_prefix('[')
                    .and_then(|v| v.strip_suffix(']'))
                    .ok_or_else(bad_value)?;
                let (from, to) = inner.split_once("..").ok_or_else(bad_value)?;
                if from.is_empty() {
                    return Err(error(400, 30820, "Start date is missing", &[]));
                }
                let date = |t: &str| {
                    parse_timestamp(t).ok_or_else(|| error(400, 30810, "Invalid date format", &[]))
                };
                let from = date(from)?;
                let to = if to.is_empty() { None } else { Some(date(to)?) };
                if from > now || to.is_some_and(|t| t > now) {
                    return Err(error(
                        400,
                        30850,
                        "Start and end dates can't be in the future",
                        &[],
                    ));
                }
                if to.is_some_and(|t| from > t) {
                    return Err(error(
                        400,
                        30840,
                        "Start date should be before end date",
                        &[],
                    ));
                }
                if to.unwrap_or(now).saturating_sub(from) > TWO_YEARS {
                    return Err(error(
                        400,
                        30830,
                        "Time range between start date and end date must be within '2' years.",
                        &[("allowedTime", "2")],
                    ));
                }
                if name == "creationdate" {
                    creation = Some(("creationdate", from, to));
                } else {
                    modified = Some(("lastmodifieddate", from, to));
                }
            }
            "orderfulfillmentstatus" => {
                let inner = value
                    .strip_prefix('{')
                    .and_then(|v| v.strip_suffix('}'))
                    .ok_or_else(bad_value)?;
                let mut set: Vec<String> = inner.split('|').map(str::to_owned).collect();
                set.sort();
                let supported = [["IN_PROGRESS", "NOT_STARTED"], ["FULFILLED", "IN_PROGRESS"]];
                if !supported.iter().any(|s| s[..] == set[..]) {
                    return Err(bad_value());
                }
                filter.statuses = Some(set);
            }
            _ => {
                return Err(error(
                    400,
                    30700,
                    &format!("Invalid filter name: {name}"),
                    &[("fieldname", name)],
                ));
            }
        }
    }
    filter.range = creation.or(modified);
    Ok(filter)
}

/// A getOrders number parameter: absent `default`, else a whole number in `range`.
fn number(
    request: &Request,
    name: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
    id: u32,
) -> Result<u64, Response> {
    let Some(text) = request.query_param(name) else {
        return Ok(default);
    };
    match text.trim().parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(error(
            400,
            id,
            &format!("Invalid {name}: {text}"),
            &[(&format!("{name}value"), &text)],
        )),
    }
}

/// The order as getOrders answers it: `cancelStatus.cancelRequests` empty.
fn as_listed(order: &Value) -> Value {
    let mut order = order.clone();
    order["cancelStatus"]["cancelRequests"] = json!([]);
    order
}

fn get_orders(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(check_field_groups(request));
    let href = |query: &str| format!("{}{GET_ORDERS_PATH}?{query}", state.base_url());
    if let Some(ids) = request.query_param("orderIds") {
        let ids: Vec<&str> = ids.split(',').filter(|i| !i.is_empty()).collect();
        if ids.len() > MAX_ORDER_IDS {
            return error(
                400,
                30900,
                "Exceeded maximum number of order IDs (the current limit is 50)",
                &[],
            );
        }
        let orders: Vec<Value> = {
            let all = lock(&state.orders.orders);
            ids.iter()
                .filter_map(|id| all.get(*id))
                .filter(|o| o.seller == seller && !o.pending())
                .map(|o| as_listed(&o.order))
                .collect()
        };
        return Response::json(
            200,
            &json!({
                "href": href(request.query.as_deref().unwrap_or("")),
                "total": orders.len(), "limit": ids.len(), "offset": 0,
                "orders": orders, "warnings": [],
            }),
        );
    }
    let limit = tri!(number(request, "limit", 50, 1..=200, 31100));
    let offset = tri!(number(request, "offset", 0, 0..=u64::from(u32::MAX), 31000));
    let now = millis(state.now());
    let filter_text = request.query_param("filter");
    let filter = tri!(parse_filter(filter_text.as_deref().unwrap_or(""), now));
    let (total, page) = {
        let all = lock(&state.orders.orders);
        let mut matching: Vec<&StoredOrder> = all
            .values()
            .filter(|o| o.seller == seller && !o.pending() && filter.keeps(o))
            .collect();
        matching.sort_by(|a, b| {
            b.created.cmp(&a.created).then_with(|| {
                b.order["orderId"]
                    .as_str()
                    .cmp(&a.order["orderId"].as_str())
            })
        });
        let page: Vec<Value> = matching
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .map(|o| as_listed(&o.order))
            .collect();
        (matching.len() as u64, page)
    };
    let hook = lock(&state.orders.page_hook).clone();
    if let Some(hook) = hook {
        hook(state, offset);
    }
    let query = |offset: u64| {
        let mut q = format!("limit={limit}&offset={offset}");
        if let Some(f) = &filter_text {
            q = format!("filter={}&{q}", crate::http::percent_encode(f));
        }
        q
    };
    let mut answer = json!({
        "href": href(&query(offset)), "total": total, "limit": limit, "offset": offset,
        "orders": page, "warnings": [],
    });
    if offset + limit < total {
        answer["next"] = json!(href(&query(offset + limit)));
    }
    if offset > 0 {
        answer["prev"] = json!(href(&query(offset.saturating_sub(limit))));
    }
    Response::json(200, &answer)
}

fn get_order(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(check_field_groups(request));
    let id = request.param("orderId").unwrap_or_default().to_owned();
    let found = lock(&state.orders.orders)
        .get(&id)
        .filter(|o| o.seller == seller && !o.pending())
        .map(|o| o.order.clone());
    match found {
        Some(order) => Response::json(200, &order),
        None => error(
            400,
            32100,
            &format!("Invalid order ID: {id}"),
            &[("orderId", &id)],
        ),
    }
}

/// The fake's own buy route (see [`BUY_PATH`]).
fn buy_route(request: &Request, state: &FakeState) -> Response {
    let refuse = |what: String| Response::json(400, &json!({"error": what}));
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return refuse("the body is not JSON".into());
    };
    let Some(listing) = body["listingId"].as_str() else {
        return refuse("listingId (a string) is missing".into());
    };
    let mut purchase = Purchase::of(listing, 1);
    if !body["quantity"].is_null() {
        match body["quantity"]
            .as_u64()
            .and_then(|q| u32::try_from(q).ok())
        {
            Some(q) => purchase.quantity = q,
            None => return refuse(format!("quantity {} is not a count", body["quantity"])),
        }
    }
    if let Some(p) = body["payment"].as_str() {
        match PaymentOutcome::from_name(p) {
            Some(p) => purchase.payment = p,
            None => return refuse(format!("payment {p:?}: PAID, FAILED or PENDING")),
        }
    }
    if let Some(u) = body["buyerUsername"].as_str() {
        purchase.buyer_username = u.to_owned();
    }
    if let Some(c) = body["buyerCountry"].as_str() {
        purchase.buyer_country = c.to_owned();
    }
    match buy(state, &purchase) {
        Ok(order_id) => Response::json(201, &json!({"orderId": order_id})),
        Err(e) => refuse(e),
    }
}

/// A money amount in eBay's Amount shape.
fn amount(value: f64, currency: &str) -> Value {
    json!({"value": format!("{value:.2}"), "currency": currency})
}

/// Sells `purchase`: the new order's id, or what was wrong (naming the listing).
fn buy(state: &FakeState, purchase: &Purchase) -> Result<String, String> {
    let listing = &purchase.listing_id;
    if purchase.quantity == 0 {
        return Err(format!("listing {listing}: a purchase of 0 items"));
    }
    if purchase.buyer_country.len() != 2
        || !purchase
            .buyer_country
            .bytes()
            .all(|c| c.is_ascii_uppercase())
    {
        return Err(format!(
            "buyer country {:?} is not a two-letter country code",
            purchase.buyer_country
        ));
    }
    let next = state.next_id();
    let now = millis(state.now());
    // The offer: lowered under the inventory's lock.
    let sold = crate::inventory::sell(state, listing, purchase.quantity)?;
    let order_id = format!(
        "{:02}-{:05}-{:05}",
        10 + next % 90,
        next / 100_000 % 100_000,
        next % 100_000
    );
    let currency = sold.price["currency"].as_str().unwrap_or("USD").to_owned();
    let unit: f64 = sold.price["value"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let subtotal = unit * f64::from(purchase.quantity);
    let fee = (subtotal * 0.1325 * 100.0).round() / 100.0;
    let buyer_name = if purchase.immutable_user_id {
        format!("{:x}", 0x5e11_0000_0000u64 + next)
    } else {
        purchase.buyer_username.clone()
    };
    let at = format_timestamp(now);
    let paid = purchase.payment == PaymentOutcome::Paid;
    let address = json!({"countryCode": purchase.buyer_country, "postalCode": "95125",
        "city": "San Jose", "addressLine1": "2025 Hamilton Avenue"});
    let order = json!({
        "orderId": order_id,
        "creationDate": at,
        "lastModifiedDate": at,
        "orderFulfillmentStatus": "NOT_STARTED",
        "orderPaymentStatus": purchase.payment.status(),
        "sellerId": sold.seller.strip_prefix("user:").unwrap_or(&sold.seller),
        "buyer": {
            "username": buyer_name,
            "taxAddress": {"countryCode": purchase.buyer_country, "postalCode": "95125"},
            "buyerRegistrationAddress": {"fullName": "Fake Buyer", "contactAddress": address,
                "email": "fake.buyer@example.com"},
        },
        "pricingSummary": {
            "priceSubtotal": amount(subtotal, &currency),
            "deliveryCost": amount(0.0, &currency),
            "total": amount(subtotal, &currency),
        },
        "cancelStatus": {"cancelState": "NONE_REQUESTED", "cancelRequests": []},
        "paymentSummary": {
            "totalDueSeller": amount(subtotal - fee, &currency),
            "payments": if paid { json!([payment(&at, subtotal, &currency, next)]) } else { json!([]) },
            "refunds": [],
        },
        "fulfillmentStartInstructions": [{
            "fulfillmentInstructionsType": "SHIP_TO",
            "ebaySupportedFulfillment": false,
            "shippingStep": {"shippingServiceCode": "USPSPriority",
                "shipTo": {"fullName": "Fake Buyer", "contactAddress": address}},
        }],
        "fulfillmentHrefs": [],
        "lineItems": [{
            "lineItemId": format!("{}", 10_000_000_000u64 + next),
            "legacyItemId": listing,
            "sku": sold.sku,
            "title": sold.title,
            "quantity": purchase.quantity,
            "lineItemCost": amount(subtotal, &currency),
            "total": amount(subtotal, &currency),
            "deliveryCost": {"shippingCost": amount(0.0, &currency)},
            "soldFormat": sold.format,
            "listingMarketplaceId": sold.marketplace,
            "purchaseMarketplaceId": sold.marketplace,
            "lineItemFulfillmentStatus": "NOT_STARTED",
            "appliedPromotions": [],
            "taxes": [],
            "refunds": [],
        }],
        "salesRecordReference": format!("{next}"),
        "totalFeeBasisAmount": amount(subtotal, &currency),
        "totalMarketplaceFee": amount(fee, &currency),
    });
    let seller = sold.seller.clone();
    lock(&state.orders.orders).insert(
        order_id.clone(),
        StoredOrder {
            seller: sold.seller,
            created: now,
            modified: now,
            order,
        },
    );
    if paid {
        // Checkout complete: ORDER_CONFIRMATION to the seller's subscribed endpoints.
        let seller = seller.strip_prefix("user:").unwrap_or(&seller);
        crate::notify::order_confirmed(state, seller, &order_id, &at);
    }
    Ok(order_id)
}

fn payment(at: &str, total: f64, currency: &str, reference: u64) -> Value {
    json!({"paymentMethod": "EBAY", "paymentReferenceId": format!("P{reference:010}"),
        "paymentDate": at, "amount": amount(total, currency), "paymentStatus": "PAID"})
}

/// Changes the order `id` with `change` and moves its `lastModifiedDate` forward (at least a
/// millisecond past the last one); an error naming the order when there is none.
fn change(
    state: &FakeState,
    id: &str,
    change: impl FnOnce(&mut Value, &str),
) -> Result<(), String> {
    let now = millis(state.now());
    let mut orders = lock(&state.orders.orders);
    let order = orders
        .get_mut(id)
        .ok_or_else(|| format!("no order {id} on the fake"))?;
    order.modified = now.max(order.modified + 1);
    let at = format_timestamp(order.modified);
    change(&mut order.order, &at);
    order.order["lastModifiedDate"] = json!(at);
    Ok(())
}

/// The order `id` of `seller` as getOrder answers it (`None`: none, or its payment is still
/// pending), for the shipping fulfillments ([`fulfillments`](crate::fulfillments)).
pub(crate) fn sellers_order(state: &FakeState, id: &str, seller: &str) -> Option<Value> {
    lock(&state.orders.orders)
        .get(id)
        .filter(|o| o.seller == seller && !o.pending())
        .map(|o| o.order.clone())
}

/// [`change`], for the shipping fulfillments.
pub(crate) fn change_order(
    state: &FakeState,
    id: &str,
    f: impl FnOnce(&mut Value, &str),
) -> Result<(), String> {
    change(state, id, f)
}

/// The seller's order `id` (not one whose payment is pending) held under the orders' lock
/// for `f` (the refunds of `refunds.rs`), with the `lastModifiedDate` it gets if it changes:
/// when `f` answers `(true, _)` the order changed and its `lastModifiedDate` moves forward.
/// `None` when `seller` has no such order.
pub(crate) fn with_order<T>(
    state: &FakeState,
    seller: &str,
    id: &str,
    f: impl FnOnce(&mut Value, &str) -> (bool, T),
) -> Option<T> {
    let now = millis(state.now());
    let mut orders = lock(&state.orders.orders);
    let order = orders
        .get_mut(id)
        .filter(|o| o.seller == seller && !o.pending())?;
    let modified = now.max(order.modified + 1);
    let at = format_timestamp(modified);
    let (changed, answer) = f(&mut order.order, &at);
    if changed {
        order.modified = modified;
        order.order["lastModifiedDate"] = json!(at);
    }
    Some(answer)
}

impl FakeState {
    /// [`FakeMarketplace::buy_with`], for a hook ([`FakeMarketplace::on_orders_page`]).
    pub fn buy(&self, purchase: &Purchase) -> Result<String, String> {
        buy(self, purchase)
    }

    /// [`FakeMarketplace::touch_order`], for a hook.
    pub fn touch_order(&self, order_id: &str) -> Result<(), String> {
        change(self, order_id, |_, _| {})
    }
}

impl FakeMarketplace {
    /// A buyer buys `quantity` of the published listing `listing_id` (publishOffer's
    /// `listingId`), paid at once: the new order's id, or what was wrong (no such listing,
    /// ended, fewer available), naming the listing. See the [`orders`](crate::orders) module.
    pub fn buy(&self, listing_id: &str, quantity: u32) -> Result<String, String> {
        buy(self.state(), &Purchase::of(listing_id, quantity))
    }

    /// A buyer buys as `purchase` says (see [`Purchase`]).
    pub fn buy_with(&self, purchase: &Purchase) -> Result<String, String> {
        buy(self.state(), purchase)
    }

    /// The buyer asks to cancel the order: `cancelStatus.cancelState` `IN_PROGRESS` with a
    /// cancel request `REQUESTED` by the `BUYER` (getOrder shows it; getOrders leaves
    /// `cancelRequests` empty).
    pub fn cancel_order(&self, order_id: &str) -> Result<(), String> {
        let next = self.state().next_id();
        change(self.state(), order_id, |order, at| {
            order["cancelStatus"] = json!({
                "cancelState": "IN_PROGRESS",
                "cancelRequests": [{
                    "cancelInitiator": "BUYER", "cancelReason": "BUYER_ASKED_CANCEL",
                    "cancelRequestedDate": at, "cancelRequestId": format!("{}", 5_000_000_000u64 + next),
                    "cancelRequestState": "REQUESTED",
                }],
            });
        })
    }

    /// The cancellation is done: `cancelState` `CANCELED`, `cancelledDate`, its request
    /// `COMPLETED` (a cancel request first if none was made).
    pub fn complete_cancel(&self, order_id: &str) -> Result<(), String> {
        let requested = lock(&self.state().orders.orders)
            .get(order_id)
            .is_some_and(|o| o.order["cancelStatus"]["cancelState"] != json!("NONE_REQUESTED"));
        if !requested {
            self.cancel_order(order_id)?;
        }
        change(self.state(), order_id, |order, at| {
            let status = &mut order["cancelStatus"];
            status["cancelState"] = json!("CANCELED");
            status["cancelledDate"] = json!(at);
            if let Some(requests) = status["cancelRequests"].as_array_mut() {
                for r in requests {
                    r["cancelRequestState"] = json!("COMPLETED");
                    r["cancelCompletedDate"] = json!(at);
                }
            }
        })
    }

    /// A pending (or failed) payment completes: `orderPaymentStatus` `PAID` with its payment;
    /// a pending order now appears to getOrders, with its first `creationDate`.
    pub fn complete_payment(&self, order_id: &str) -> Result<(), String> {
        let next = self.state().next_id();
        change(self.state(), order_id, |order, at| {
            order["orderPaymentStatus"] = json!("PAID");
            let total = order["pricingSummary"]["total"].clone();
            let value: f64 = total["value"]
                .as_str()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            let currency = total["currency"].as_str().unwrap_or("USD").to_owned();
            order["paymentSummary"]["payments"] = json!([payment(at, value, &currency, next)]);
        })?;
        // Checkout complete again: another ORDER_CONFIRMATION, as eBay's topic describes.
        let (seller, at) = {
            let orders = lock(&self.state().orders.orders);
            let order = orders
                .get(order_id)
                .ok_or_else(|| format!("no order {order_id} on the fake"))?;
            (
                order.seller.clone(),
                order.order["lastModifiedDate"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        };
        let seller = seller.strip_prefix("user:").unwrap_or(&seller);
        crate::notify::order_confirmed(self.state(), seller, order_id, &at);
        Ok(())
    }

    /// Something else about the order changed (a message, an address): only its
    /// `lastModifiedDate` moves.
    pub fn touch_order(&self, order_id: &str) -> Result<(), String> {
        self.state().touch_order(order_id)
    }

    /// The order `order_id` as getOrder answers it (`None`: no such order), pending ones
    /// included.
    pub fn order(&self, order_id: &str) -> Option<Value> {
        lock(&self.state().orders.orders)
            .get(order_id)
            .map(|o| o.order.clone())
    }

    /// Runs `hook` after each getOrders page is read and before it is answered, with the
    /// page's `offset` (an order bought or changed while a client pages), until
    /// [`clear_orders_page_hook`](Self::clear_orders_page_hook).
    pub fn on_orders_page(&self, hook: impl Fn(&FakeState, u64) + Send + Sync + 'static) {
        *lock(&self.state().orders.page_hook) = Some(Arc::new(hook));
    }

    /// Removes the hook [`on_orders_page`](Self::on_orders_page) set.
    pub fn clear_orders_page_hook(&self) {
        *lock(&self.state().orders.page_hook) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_back_as_written() {
        for t in [0, 1_458_548_743_511, 1_764_396_000_001, 4_102_444_800_000] {
            assert_eq!(parse_timestamp(&format_timestamp(t)), Some(t));
        }
        assert_eq!(
            format_timestamp(1_458_548_743_511),
            "2016-03-21T08:25:43.511Z"
        );
        assert_eq!(
            parse_timestamp("2016-03-21T08:25:43Z"),
            Some(1_458_548_743_000)
        );
        for bad in [
            "2016-02-30T08:25:43.511Z",
            "2016-03-21 08:25:43Z",
            "x",
            "2016-03-21T08:25:43.5111Z",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
