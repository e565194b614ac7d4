//! The Inventory API (`/sell/inventory/v1`): inventory items, offers, publishing, the three
//! bulk calls and inventory locations, per seller, checked as eBay checks them from the data
//! the fake serves (its trees, the aspects getItemAspectsForCategory answers):
//!
//! * createOrReplaceInventoryItem, createOffer, updateOffer and the bulk calls without a
//!   `Content-Language` that is a marketplace's locale, or with a `Content-Type` other than
//!   `application/json`: 400, errorId 25709 naming the header;
//! * a value outside one of eBay's enumerations (`condition` outside ConditionEnum, such as
//!   `USED`; `format`, `listingDuration`, a package's weight or length unit): 400, errorId 2004
//!   of domain `ACCESS` ("Could not serialize field [condition]"), the whole request refused;
//!   an auction offer without `listingDuration`: createOffer's 25755;
//! * createOffer and bulkCreateOffer of a `marketplaceId` that is not the Inventory API's
//!   MarketplaceEnum value (`EBAY_MOTORS_US`, the Taxonomy API's id of eBay Motors, where the
//!   Inventory API says `EBAY_MOTORS`): 400, errorId 25709;
//! * a second createOffer for the same SKU, marketplace and format: 400, errorId 25002 with
//!   the existing offer's `offerId` as a parameter, as eBay answers;
//! * publishOffer of an offer whose category is not a leaf of the marketplace's tree (or no
//!   category): 25005; a required aspect missing: 25002 naming it ("The item specific Brand is
//!   missing"); a value outside a `SELECTION_ONLY` list: 25002 naming the aspect and value; a
//!   condition the category's (made-up) getItemConditionPolicies policy does not take, or
//!   none where it requires one: 25021 naming the condition and the category; a
//!   price in another currency than the marketplace's: 25003; a missing policy: 25007, 25008,
//!   25009; no picture: 25014; no description (the product's or `listingDescription`): 25017;
//!   a `listingDuration` the format does not take (fixed price: `GTC`): 25016; nothing to sell
//!   (quantity 0): 25004; a price not above 0 or with more decimals than its currency: 25003;
//!   a `conditionDescription` over 1,000 characters: 25080;
//! * the reads other clients make: getOffer, getInventoryItems (a page of `limit`, 1 to 200,
//!   default 25) and getOffers (`limit`, default 100), each page numbered by `offset` with
//!   `total`, `href`, `prev` and `next` as eBay's Offers and InventoryItems describe them
//!   (invalid pagination values: 25706); deleteOffer (an unknown offer: 25713);
//! * inventory item groups (createOrReplaceInventoryItemGroup, getInventoryItemGroup,
//!   deleteInventoryItemGroup, publishOfferByInventoryItemGroup,
//!   withdrawOfferByInventoryItemGroup): see `inventory_groups.rs`;
//! * faults on demand ([`crate::FakeMarketplace::fail_next`] on a path: a 500 once, a 25025).
//!
//! A seller is the user a token was issued for: the fake's user ([`crate::FakeUser`], its
//! `username`) when the consent page granted the token's code ([`crate::IssuedToken::user`]). As eBay's Inventory API reference gives each call's scope, a call needs a user
//! token with `https://api.ebay.com/oauth/api_scope/sell.inventory` (the calls that only read:
//! `…/sell.inventory.readonly` also does); an application token, a token with `api_scope`
//! only, or a `.readonly` token on a call that writes is refused with eBay's 403, errorId 1100.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use marketplaces::Marketplace;
use serde_json::{Map, Value, json};

use crate::{FakeState, Request, Response, Route, lock};

const BASE: &str = "/sell/inventory/v1";

#[path = "inventory_stock.rs"]
mod stock;

#[path = "inventory_groups.rs"]
mod groups;

#[derive(Default)]
struct Seller {
    items: BTreeMap<String, Value>,
    offers: BTreeMap<String, Value>,
    locations: BTreeMap<String, Value>,
    /// The inventory item groups, by key (inventory_groups.rs).
    groups: BTreeMap<String, groups::Group>,
    /// bulkUpdatePriceQuantity's revisions of each listing, by (listing id, Pacific day).
    revisions: BTreeMap<(String, i64), u32>,
}

/// Every seller's inventory.
#[derive(Default)]
pub(crate) struct InventoryState {
    sellers: Mutex<HashMap<String, Seller>>,
}

/// An error body of the Inventory API (domain `API_INVENTORY`).
fn error(status: u16, id: u32, message: &str, parameters: &[(&str, &str)]) -> Response {
    Response::json(
        status,
        &json!({ "errors": [error_value(id, message, parameters)] }),
    )
}

fn error_value(id: u32, message: &str, parameters: &[(&str, &str)]) -> Value {
    let category = if id == 25001 || id == 25025 {
        "APPLICATION"
    } else {
        "REQUEST"
    };
    json!({
        "errorId": id,
        "domain": "API_INVENTORY",
        "subdomain": "Selling",
        "category": category,
        "message": message,
        "parameters": parameters
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect::<Vec<_>>(),
    })
}

/// True for the calls that only read, which eBay's Inventory API reference lets a
/// `sell.inventory.readonly` token make (getInventoryItem, getInventoryItems, getOffer,
/// getOffers, getInventoryLocation(s), bulkGetInventoryItem, getListingFees); every other call
/// needs `sell.inventory`.
fn only_reads(request: &Request) -> bool {
    request.method.eq_ignore_ascii_case("GET")
        || (request.method.eq_ignore_ascii_case("POST")
            && (request.path.ends_with("/bulk_get_inventory_item")
                || request.path.ends_with("/offer/get_listing_fees")))
}

/// The seller of the request's token, or the answer to send: 401 for a token the fake did not
/// issue (or an expired one), and eBay's 403 with errorId 1100 ("Access denied",
/// "Insufficient permissions to fulfill the request.") for a token without the call's scope.
/// The Inventory API takes user tokens only (its security scheme is the authorization-code
/// flow): an application token, whatever its scope, is refused with 1100, as is a user token
/// with `api_scope` alone, or with `sell.inventory.readonly` for a call that writes.
fn seller(request: &Request, state: &FakeState) -> Result<String, Response> {
    let token = match state.check_scope(request, "/sell.inventory") {
        Ok(token) => token,
        Err(denied) if only_reads(request) => state
            .check_scope(request, "/sell.inventory.readonly")
            .map_err(|_| denied)?,
        Err(denied) => return Err(denied),
    };
    if !token.token_type.starts_with("User") {
        return Err(state.insufficient_scope());
    }
    Ok(state.seller_of(&token))
}

fn with_seller<T>(state: &FakeState, seller: &str, f: impl FnOnce(&mut Seller) -> T) -> T {
    let mut sellers = lock(&state.inventory.sellers);
    f(sellers.entry(seller.to_owned()).or_default())
}

/// The published offer of `listing_id` of `seller` (`user:{username}`) moved to
/// `marketplace`, its price in `currency` (`FakeMarketplace::add_listing_on`, in refunds.rs).
pub(crate) fn move_listing(
    state: &FakeState,
    seller: &str,
    listing_id: &str,
    marketplace: &str,
    currency: &str,
) -> Result<(), String> {
    with_seller(state, seller, |s| {
        let offer = s
            .offers
            .values_mut()
            .find(|o| o["listing"]["listingId"] == json!(listing_id))
            .ok_or_else(|| format!("{seller} has no listing {listing_id}"))?;
        offer["marketplaceId"] = json!(marketplace);
        offer["pricingSummary"]["price"]["currency"] = json!(currency);
        Ok(())
    })
}

fn body(request: &Request) -> Result<Value, Response> {
    serde_json::from_slice(&request.body).map_err(|_| {
        error(
            400,
            25709,
            "Invalid request. Invalid value for field body: not JSON.",
            &[],
        )
    })
}

/// The headers eBay's Inventory API reference requires of a call with a body
/// (createOrReplaceInventoryItem, createOffer, updateOffer, the bulk creates): a
/// `Content-Language` that is a locale of a marketplace (`en-US`, `de-DE`, `fr-CA`, …), and a
/// `Content-Type` of `application/json`; each missing or another value is 400, errorId 25709
/// ("Invalid value for {fieldName}") naming the header.
fn needs_content_language(request: &Request) -> Result<(), Response> {
    let language = request.header("Content-Language").map(str::trim);
    let locale = |l: &str| {
        Marketplace::ALL.iter().any(|m| {
            m.default_language().eq_ignore_ascii_case(l)
                || m.other_tree()
                    .is_some_and(|(o, _)| o.eq_ignore_ascii_case(l))
        })
    };
    match language {
        None | Some("") => {
            return Err(error(
                400,
                25709,
                "Invalid value for header Content-Language. The header Content-Language is required.",
                &[("fieldName", "Content-Language")],
            ));
        }
        Some(l) if !locale(l) => {
            return Err(error(
                400,
                25709,
                &format!(
                    "Invalid value for header Content-Language. {l} is not a supported locale."
                ),
                &[("fieldName", "Content-Language")],
            ));
        }
        Some(_) => {}
    }
    let content_type = request.header("Content-Type").unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case("application/json") {
        return Err(error(
            400,
            25709,
            &format!(
                "Invalid value for header Content-Type. {content_type:?} is not supported: application/json is."
            ),
            &[("fieldName", "Content-Type")],
        ));
    }
    Ok(())
}

/// What eBay answers a body with a value outside one of its enumerations (an unknown
/// `condition` such as `USED`, a `format` such as `FIXED`): it cannot read the request, 400
/// with errorId 2004 ("Invalid request", the reason naming the field), domain `ACCESS`.
fn not_serializable(field: &str) -> Value {
    json!({
        "errorId": 2004,
        "domain": "ACCESS",
        "category": "REQUEST",
        "message": "Invalid request",
        "longMessage": "The request has errors. For help, see the documentation for this API.",
        "parameters": [{"name": "reason", "value": format!("Could not serialize field [{field}]")}],
    })
}

/// The field of an inventory item (createOrReplaceInventoryItem's `InventoryItem`) whose value
/// is not one of its enumeration's: `condition` (ConditionEnum, with the deprecated
/// `MANUFACTURER_REFURBISHED` it still takes), `packageWeightAndSize.weight.unit`
/// (WeightUnitOfMeasureEnum), `packageWeightAndSize.dimensions.unit`
/// (LengthUnitOfMeasureEnum).
fn item_enum_error(item: &Value) -> Option<Value> {
    let outside = |value: &Value, allowed: &dyn Fn(&str) -> bool| {
        !value.is_null() && value.as_str().is_none_or(|v| !allowed(v))
    };
    if outside(&item["condition"], &|c| {
        c == "MANUFACTURER_REFURBISHED" || marketplaces::Condition::from_name(c).is_some()
    }) {
        return Some(not_serializable("condition"));
    }
    let package = &item["packageWeightAndSize"];
    if outside(&package["weight"]["unit"], &|u| {
        ["POUND", "KILOGRAM", "OUNCE", "GRAM"].contains(&u)
    }) {
        return Some(not_serializable("unit"));
    }
    if outside(&package["dimensions"]["unit"], &|u| {
        ["INCH", "FEET", "CENTIMETER", "METER"].contains(&u)
    }) {
        return Some(not_serializable("unit"));
    }
    None
}

/// The field of an offer (createOffer's `EbayOfferDetailsWithKeys`) whose value is not one of
/// its enumeration's: `format` (FormatTypeEnum) or `listingDuration` (ListingDurationEnum).
fn offer_enum_error(offer: &Value) -> Option<Value> {
    let outside = |value: &Value, allowed: &[&str]| {
        !value.is_null() && value.as_str().is_none_or(|v| !allowed.contains(&v))
    };
    if outside(&offer["format"], &["AUCTION", "FIXED_PRICE"]) {
        return Some(not_serializable("format"));
    }
    let durations = [
        "DAYS_1", "DAYS_3", "DAYS_5", "DAYS_7", "DAYS_10", "DAYS_21", "DAYS_30", "GTC",
    ];
    if outside(&offer["listingDuration"], &durations) {
        return Some(not_serializable("listingDuration"));
    }
    None
}

/// createOffer's errorId 25755: an auction offer without `listingDuration`.
fn auction_duration_error(offer: &Value) -> Option<Value> {
    (offer["format"] == json!("AUCTION") && offer["listingDuration"].is_null())
        .then(|| error_value(25755, "listingDuration is required for auction offer.", &[]))
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(response) => return response,
        }
    };
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("PUT", &format!("{BASE}/inventory_item/{{sku}}"), put_item),
        Route::new("GET", &format!("{BASE}/inventory_item/{{sku}}"), get_item),
        Route::new(
            "DELETE",
            &format!("{BASE}/inventory_item/{{sku}}"),
            delete_item,
        ),
        Route::new("GET", &format!("{BASE}/inventory_item"), get_items),
        Route::new("GET", &format!("{BASE}/offer"), get_offers),
        Route::new("POST", &format!("{BASE}/offer"), create_offer),
        Route::new("PUT", &format!("{BASE}/offer/{{offerId}}"), update_offer),
        Route::new("GET", &format!("{BASE}/offer/{{offerId}}"), get_offer),
        Route::new("DELETE", &format!("{BASE}/offer/{{offerId}}"), delete_offer),
        Route::new(
            "POST",
            &format!("{BASE}/offer/{{offerId}}/publish"),
            publish,
        ),
        Route::new(
            "POST",
            &format!("{BASE}/offer/{{offerId}}/withdraw"),
            withdraw,
        ),
        Route::new(
            "POST",
            &format!("{BASE}/bulk_create_or_replace_inventory_item"),
            bulk_items,
        ),
        Route::new(
            "POST",
            &format!("{BASE}/bulk_get_inventory_item"),
            bulk_get_items,
        ),
        Route::new("POST", &format!("{BASE}/bulk_create_offer"), bulk_offers),
        Route::new("POST", &format!("{BASE}/bulk_publish_offer"), bulk_publish),
        Route::new(
            "POST",
            &format!("{BASE}/location/{{merchantLocationKey}}"),
            create_location,
        ),
        Route::new(
            "GET",
            &format!("{BASE}/location/{{merchantLocationKey}}"),
            get_location,
        ),
        Route::new("GET", &format!("{BASE}/location"), get_locations),
        Route::new(
            "POST",
            &format!("{BASE}/bulk_update_price_quantity"),
            stock::bulk_update_price_quantity,
        ),
        Route::new(
            "PUT",
            &format!("{BASE}/inventory_item_group/{{inventoryItemGroupKey}}"),
            groups::put_group,
        ),
        Route::new(
            "GET",
            &format!("{BASE}/inventory_item_group/{{inventoryItemGroupKey}}"),
            groups::get_group,
        ),
        Route::new(
            "DELETE",
            &format!("{BASE}/inventory_item_group/{{inventoryItemGroupKey}}"),
            groups::delete_group,
        ),
        Route::new(
            "POST",
            &format!("{BASE}/offer/publish_by_inventory_item_group"),
            groups::publish_by_group,
        ),
        Route::new(
            "POST",
            &format!("{BASE}/offer/withdraw_by_inventory_item_group"),
            groups::withdraw_by_group,
        ),
    ]
}

/// What createOrReplaceInventoryItem (and its bulk form) answers a body that is not an
/// InventoryItem object: it stores objects only, so the reads can add the SKU to them.
const NOT_AN_ITEM: &str = "Invalid request. Invalid value for field inventoryItem: not an object.";

fn put_item(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let item = tri!(body(request));
    if !item.is_object() {
        return error(400, 25709, NOT_AN_ITEM, &[]);
    }
    if let Some(e) = item_enum_error(&item) {
        return Response::json(400, &json!({ "errors": [e] }));
    }
    let sku = request.param("sku").unwrap_or_default().to_owned();
    with_seller(state, &seller, |s| s.items.insert(sku, item));
    Response::new(204, Vec::new())
}

fn sku_not_found(sku: &str) -> Response {
    error(
        400,
        25702,
        &format!("{sku} could not be found or is not available in the system."),
        &[("skuValue", sku)],
    )
}

fn get_item(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let sku = request.param("sku").unwrap_or_default();
    match with_seller(state, &seller, |s| s.items.get(sku).cloned()) {
        Some(mut item) => {
            item["sku"] = json!(sku);
            // eBay's getInventoryItem lists the groups the item is a variant of in `groupIds`
            // (absent when none).
            let groups = with_seller(state, &seller, |s| groups::groups_of(s, sku));
            if !groups.is_empty() {
                item["groupIds"] = json!(groups);
            }
            Response::json(200, &item)
        }
        None => sku_not_found(sku),
    }
}

fn delete_item(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let sku = request.param("sku").unwrap_or_default().to_owned();
    let found = with_seller(state, &seller, |s| {
        s.offers.retain(|_, o| o["sku"] != json!(sku));
        s.items.remove(&sku).is_some()
    });
    if found {
        Response::new(204, Vec::new())
    } else {
        sku_not_found(&sku)
    }
}

/// A page of a paginated read (getOffers, getInventoryItems): eBay's `limit` (records a page,
/// from 1 to `max`, `default` when absent) and `offset` (the page number, from 0).
struct Page {
    limit: usize,
    offset: usize,
}

impl Page {
    /// The request's `limit` and `offset`, or eBay's 400 with errorId 25706 ("You have
    /// provided invalid pagination values.") naming the parameter.
    fn of(request: &Request, default: usize, max: usize) -> Result<Page, Response> {
        let invalid = |name: &str, rule: &str| {
            let info = format!("{name} must be {rule}");
            error(
                400,
                25706,
                &format!("You have provided invalid pagination values. {info}."),
                &[("additionalInfo", &info)],
            )
        };
        let limit = match request.query_param("limit") {
            None => default,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if (1..=max).contains(&n) => n,
                _ => return Err(invalid("limit", &format!("an integer from 1 to {max}"))),
            },
        };
        let offset = match request.query_param("offset") {
            None => 0,
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map_err(|_| invalid("offset", "an integer of 0 or more"))?,
        };
        Ok(Page { limit, offset })
    }

    /// The records of this page out of `all`.
    fn of_records(&self, all: Vec<Value>) -> Vec<Value> {
        all.into_iter()
            .skip(self.offset.saturating_mul(self.limit))
            .take(self.limit)
            .collect()
    }

    /// The answer's `href`, and `prev` and `next` when there are such pages (`total`
    /// records), as eBay's Offers and InventoryItems give them: the call's URL with the
    /// page's `limit` and `offset` (`query` holds the other parameters, encoded).
    fn links(&self, path: &str, query: &str, total: usize) -> Map<String, Value> {
        let url = |offset: usize| format!("{path}?{query}limit={}&offset={offset}", self.limit);
        let mut links = Map::new();
        links.insert("href".into(), json!(url(self.offset)));
        if self.offset > 0 {
            let last = total.saturating_sub(1) / self.limit;
            links.insert("prev".into(), json!(url((self.offset - 1).min(last))));
        }
        if self.offset.saturating_add(1).saturating_mul(self.limit) < total {
            links.insert("next".into(), json!(url(self.offset + 1)));
        }
        links
    }
}

/// `value` percent-encoded for a query (RFC 3986's unreserved characters kept).
fn query_encoded(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// getOffers: the offers of `sku` (on `marketplace_id`, in `format` when given), a page of
/// `limit` (default 100) at page `offset`, with `total` (every offer of the SKU), `size` (the
/// offers on this page), `limit`, `href` and, where there are such pages, `prev` and `next`.
fn get_offers(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let page = tri!(Page::of(request, 100, usize::MAX));
    let sku = request.query_param("sku").unwrap_or_default();
    let marketplace = request.query_param("marketplace_id");
    let format = request.query_param("format");
    let offers: Vec<Value> = with_seller(state, &seller, |s| {
        s.offers
            .values()
            .filter(|o| o["sku"] == json!(sku))
            .filter(|o| {
                marketplace
                    .as_deref()
                    .is_none_or(|m| o["marketplaceId"] == json!(m))
            })
            .filter(|o| format.as_deref().is_none_or(|f| o["format"] == json!(f)))
            .cloned()
            .collect()
    });
    if offers.is_empty() {
        // eBay answers a SKU without offers 404.
        return error(
            404,
            25713,
            "This Offer is not available : no offer of this SKU.",
            &[],
        );
    }
    let total = offers.len();
    let mut query = format!("sku={}&", query_encoded(&sku));
    if let Some(m) = &marketplace {
        query.push_str(&format!("marketplace_id={}&", query_encoded(m)));
    }
    if let Some(f) = &format {
        query.push_str(&format!("format={}&", query_encoded(f)));
    }
    let offers = page.of_records(offers);
    let mut answer = page.links(&request.path, &query, total);
    answer.insert("total".into(), json!(total));
    answer.insert("size".into(), json!(offers.len()));
    answer.insert("limit".into(), json!(page.limit));
    answer.insert("offers".into(), json!(offers));
    Response::json(200, &Value::Object(answer))
}

/// getInventoryItems: the seller's inventory items (each with its `sku`), a page of `limit`
/// (1 to 200, default 25) at page `offset`, with `total` (every item), `size` (the number of
/// pages, as eBay's InventoryItems describes it), `limit`, `href`, `prev` and `next`.
fn get_items(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let page = tri!(Page::of(request, 25, 200));
    let items: Vec<Value> = with_seller(state, &seller, |s| {
        s.items
            .iter()
            .map(|(sku, item)| {
                let mut item = item.clone();
                item["sku"] = json!(sku);
                item
            })
            .collect()
    });
    let total = items.len();
    let mut answer = page.links(&request.path, "", total);
    answer.insert("total".into(), json!(total));
    answer.insert("size".into(), json!(total.div_ceil(page.limit)));
    answer.insert("limit".into(), json!(page.limit));
    answer.insert("inventoryItems".into(), json!(page.of_records(items)));
    Response::json(200, &Value::Object(answer))
}

/// getOffer: the offer `offerId` of the seller, or eBay's 400 with errorId 25713.
fn get_offer(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let id = request.param("offerId").unwrap_or_default();
    match with_seller(state, &seller, |s| s.offers.get(id).cloned()) {
        Some(offer) => Response::json(200, &offer),
        None => offer_not_found(id),
    }
}

/// deleteOffer: the offer `offerId` is removed (a published one's listing ends with it), 204;
/// an offer the seller does not have is eBay's 400 with errorId 25713.
fn delete_offer(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let id = request.param("offerId").unwrap_or_default();
    if with_seller(state, &seller, |s| s.offers.remove(id).is_some()) {
        Response::new(204, Vec::new())
    } else {
        offer_not_found(id)
    }
}

/// Creates the offer `offer` for `seller`: its id, or eBay's error for it (status, error).
fn new_offer(state: &FakeState, seller: &str, mut offer: Value) -> Result<String, (u16, Value)> {
    if let Some(e) = offer_enum_error(&offer).or_else(|| auction_duration_error(&offer)) {
        return Err((400, e));
    }
    let sku = offer["sku"].as_str().unwrap_or_default().to_owned();
    let marketplace = offer["marketplaceId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if offer.get("format").is_none() {
        offer["format"] = json!("FIXED_PRICE");
    }
    let format = offer["format"].clone();
    // The Inventory API's MarketplaceEnum (EBAY_MOTORS, not the Taxonomy API's
    // EBAY_MOTORS_US): another value is refused at createOffer, as eBay refuses an invalid
    // enumeration value.
    if Marketplace::from_inventory_marketplace_id(&marketplace).is_none() {
        return Err((
            400,
            error_value(
                25709,
                &format!(
                    "Invalid value for marketplaceId: {marketplace} is not a MarketplaceEnum value."
                ),
                &[("fieldName", "marketplaceId")],
            ),
        ));
    }
    let next = state.next_id();
    with_seller(state, seller, |s| {
        if !s.items.contains_key(&sku) {
            return Err((
                400,
                error_value(
                    25702,
                    &format!("{sku} could not be found or is not available in the system."),
                    &[("skuValue", &sku)],
                ),
            ));
        }
        if let Some((id, _)) = s.offers.iter().find(|(_, o)| {
            o["sku"] == json!(sku)
                && o["marketplaceId"] == json!(marketplace)
                && o["format"] == format
        }) {
            return Err((
                400,
                error_value(
                    25002,
                    "A user error has occurred. Offer entity already exists.",
                    &[("offerId", id)],
                ),
            ));
        }
        let id = format!("{}", 5_000_000_000u64 + next);
        offer["offerId"] = json!(id);
        offer["status"] = json!("UNPUBLISHED");
        s.offers.insert(id.clone(), offer);
        Ok(id)
    })
}

fn create_offer(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let offer = tri!(body(request));
    match new_offer(state, &seller, offer) {
        Ok(id) => Response::json(201, &json!({"offerId": id, "warnings": []})),
        Err((status, e)) => Response::json(status, &json!({"errors": [e]})),
    }
}

fn offer_not_found(id: &str) -> Response {
    error(
        400,
        25713,
        &format!("This Offer is not available : {id}."),
        &[],
    )
}

fn update_offer(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let update = tri!(body(request));
    if let Some(e) = offer_enum_error(&update) {
        return Response::json(400, &json!({ "errors": [e] }));
    }
    let id = request.param("offerId").unwrap_or_default().to_owned();
    let found = with_seller(state, &seller, |s| match s.offers.get_mut(&id) {
        Some(offer) => {
            let keep: Map<String, Value> = [
                "offerId",
                "sku",
                "marketplaceId",
                "format",
                "status",
                "listing",
            ]
            .iter()
            .filter_map(|k| offer.get(*k).map(|v| ((*k).to_owned(), v.clone())))
            .collect();
            let mut replaced = update.as_object().cloned().unwrap_or_default();
            replaced.extend(keep);
            *offer = Value::Object(replaced);
            true
        }
        None => false,
    });
    if found {
        Response::new(204, Vec::new())
    } else {
        offer_not_found(&id)
    }
}

/// The checks of publishOffer, as eBay makes them: the first error found.
fn publish_error(
    state: &FakeState,
    seller: &str,
    item: Option<&Value>,
    offer: &Value,
) -> Option<Value> {
    let marketplace = offer["marketplaceId"]
        .as_str()
        .and_then(Marketplace::from_inventory_marketplace_id);
    let category = offer["categoryId"]
        .as_str()
        .and_then(|c| c.trim().parse::<u32>().ok());
    let leaf = match (marketplace, category) {
        (Some(m), Some(id)) => state
            .taxonomy
            .tree(m)
            .ok()
            .and_then(|tree| tree.get(id).map(|c| c.leaf))
            .unwrap_or(false),
        _ => false,
    };
    if !leaf {
        return Some(error_value(
            25005,
            "The eBay listing associated with the inventory item, or the unpublished offer has an invalid category ID.",
            &[],
        ));
    }
    if let (Some(site), Some(id)) = (marketplace, category)
        && let Some(e) = condition_error(state, site, id, item)
    {
        return Some(e);
    }
    let aspects = item
        .and_then(|i| i["product"]["aspects"].as_object())
        .cloned()
        .unwrap_or_default();
    let rules = crate::taxonomy::item_aspects_of(state, category.unwrap_or_default());
    for rule in rules["aspects"].as_array().into_iter().flatten() {
        let name = rule["localizedAspectName"].as_str().unwrap_or_default();
        let given = aspects
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_array().cloned())
            .unwrap_or_default();
        let constraint = &rule["aspectConstraint"];
        if constraint["aspectRequired"] == json!(true) && given.is_empty() {
            let text = format!(
                "The item specific {name} is missing. Add {name} to this listing, enter a valid value, and then try again."
            );
            return Some(error_value(
                25002,
                &format!("A user error has occurred. {text}"),
                &[("0", &text)],
            ));
        }
        if constraint["aspectMode"] == json!("SELECTION_ONLY") {
            let allowed: Vec<&str> = rule["aspectValues"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v["localizedValue"].as_str())
                .collect();
            if let Some(bad) = given
                .iter()
                .filter_map(Value::as_str)
                .find(|v| !allowed.iter().any(|a| a.eq_ignore_ascii_case(v)))
            {
                let text = format!("The value {bad} is not allowed for the item specific {name}.");
                return Some(error_value(
                    25002,
                    &format!("A user error has occurred. {text}"),
                    &[("0", &text)],
                ));
            }
        }
    }
    let price = &offer["pricingSummary"]["price"];
    if let Some(m) = marketplace
        && price["currency"].as_str() != Some(m.currency())
    {
        return Some(error_value(
            25003,
            &format!(
                "The eBay listing associated with the inventory item, or the unpublished offer has an invalid price: the currency of {} is {}.",
                m.marketplace_id(),
                m.currency()
            ),
            &[],
        ));
    }
    for (field, id) in [
        ("fulfillmentPolicyId", 25007),
        ("paymentPolicyId", 25008),
        ("returnPolicyId", 25009),
    ] {
        if offer["listingPolicies"][field]
            .as_str()
            .is_none_or(str::is_empty)
        {
            return Some(error_value(
                id,
                &format!(
                    "The eBay listing associated with the inventory item, or the unpublished offer has invalid policy information: {field} is missing."
                ),
                &[],
            ));
        }
        // A policy of the seller's other marketplace (a GB policy on a DE offer): createOffer
        // takes it, publishOffer refuses it (publishOffer's 25007, 25008, 25009: "invalid
        // data in the associated … policy"). An id the fake does not know as any seller
        // policy is let through (the fake's tests name made-up ids).
        let policy = offer["listingPolicies"][field].as_str().unwrap_or_default();
        if let (Some(kind), Some(m)) = (crate::account::PolicyKind::of_field(field), marketplace)
            && let Some(other) = crate::account::policy_marketplace(state, seller, kind, policy)
            && other != m
        {
            let kind_name = &field[..field.len() - "PolicyId".len()];
            return Some(error_value(
                id,
                &format!(
                    "The eBay listing associated with the inventory item, or the unpublished offer has invalid data in the associated {kind_name} policy. The policy {policy} is of {}, not {}.",
                    other.marketplace_id(),
                    m.marketplace_id()
                ),
                &[(field, policy)],
            ));
        }
    }
    listing_fields_error(item, offer, marketplace)
}

/// publishOffer's required fields and values (the Inventory API reference: the fields
/// required to publish an offer, createOffer's and InventoryItem's fields), each refused as
/// eBay refuses it: no picture (25014), no description (25017), a `listingDuration` the format
/// does not take (25016), nothing to sell (25004), a price that is not above 0 or has more
/// decimals than its currency (25003), a `conditionDescription` over 1,000 characters
/// (25080).
fn listing_fields_error(
    item: Option<&Value>,
    offer: &Value,
    marketplace: Option<Marketplace>,
) -> Option<Value> {
    let null = Value::Null;
    let item = item.unwrap_or(&null);
    let product = &item["product"];
    let info = |id: u32, prefix: &str, text: &str| {
        Some(error_value(
            id,
            &format!("{prefix} {text}"),
            &[("additionalInfo", text)],
        ))
    };
    const LISTING: &str =
        "The eBay listing associated with the inventory item, or the unpublished offer has";
    if product["imageUrls"].as_array().is_none_or(Vec::is_empty) {
        return info(
            25014,
            &format!("{LISTING} invalid pictures."),
            "At least one picture is required: product.imageUrls is empty.",
        );
    }
    let blank = |v: &Value| v.as_str().is_none_or(|t| t.trim().is_empty());
    if blank(&product["description"]) && blank(&offer["listingDescription"]) {
        return info(
            25017,
            "Missing information in fields.",
            "A description is required: product.description or listingDescription.",
        );
    }
    let format = offer["format"].as_str().unwrap_or("FIXED_PRICE");
    if let Some(duration) = offer["listingDuration"].as_str() {
        let allowed: &[&str] = if format == "AUCTION" {
            &["DAYS_1", "DAYS_3", "DAYS_5", "DAYS_7", "DAYS_10"]
        } else {
            &["GTC"]
        };
        if !allowed.contains(&duration) {
            let text = format!(
                "A {format} offer takes listingDuration {}, not {duration}.",
                allowed.join(", ")
            );
            return Some(error_value(
                25016,
                &format!("The listingDuration value is invalid. {text}"),
                &[("fieldName", "listingDuration"), ("additionalInfo", &text)],
            ));
        }
    }
    let quantity = offer
        .get("availableQuantity")
        .filter(|q| !q.is_null())
        .unwrap_or(&item["availability"]["shipToLocationAvailability"]["quantity"]);
    if quantity.as_u64().is_none_or(|q| q == 0) {
        return info(
            25004,
            &format!("{LISTING} an invalid quantity."),
            "The quantity must be at least 1 to publish.",
        );
    }
    let value = offer["pricingSummary"]["price"]["value"]
        .as_str()
        .unwrap_or_default()
        .trim();
    let decimals = value.split_once('.').map_or(0, |(_, f)| f.len());
    let max = marketplace.map_or(2, |m| m.currency_decimals() as usize);
    let positive = value.parse::<f64>().is_ok_and(|v| v > 0.0 && v.is_finite());
    if !positive || decimals > max {
        return info(
            25003,
            &format!("{LISTING} an invalid price."),
            &format!("The price {value:?} is not an amount above 0 with at most {max} decimals."),
        );
    }
    let condition_description = item["conditionDescription"].as_str().unwrap_or_default();
    if condition_description.chars().count() > 1_000 {
        return Some(error_value(
            25080,
            "The value of the conditionDescription field is invalid. Field must not exceed 1000 characters.",
            &[("0", "conditionDescription"), ("replaceable_value", "1000")],
        ));
    }
    None
}

/// The inventory item's `condition` checked against the (fake's) getItemConditionPolicies
/// policy of the offer's category: a condition the category does not take, or none where the
/// category requires one, is eBay's 25021 with its `{additionalInfo}` saying which.
fn condition_error(
    state: &FakeState,
    site: Marketplace,
    category: u32,
    item: Option<&Value>,
) -> Option<Value> {
    let tree = state.taxonomy.tree(site).ok()?;
    let policy = crate::metadata::policy_of(state, site, &tree, category)?;
    let allowed: Vec<u32> = policy["itemConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["conditionId"].as_str()?.parse().ok())
        .collect();
    let given = item
        .and_then(|i| i["condition"].as_str())
        .filter(|c| !c.is_empty());
    let name = tree.get(category).map_or("", |c| c.name.as_str());
    let info = match given {
        None if policy["itemConditionRequired"] == json!(true) => format!(
            "An item condition is required in category {category} ({name}); it takes condition ids {allowed:?}."
        ),
        None => return None,
        Some(condition) => {
            let id = marketplaces::Condition::from_name(condition).map(|c| u32::from(c.id()));
            if id.is_some_and(|id| allowed.contains(&id)) {
                return None;
            }
            match id {
                Some(id) if allowed.is_empty() => format!(
                    "The item condition {condition} ({id}) is not allowed in category {category} ({name}), which takes no item condition."
                ),
                Some(id) => format!(
                    "The item condition {condition} ({id}) is not allowed in category {category} ({name}); it takes condition ids {allowed:?}."
                ),
                None => format!(
                    "The item condition {condition} is not a known condition for category {category} ({name})."
                ),
            }
        }
    };
    Some(error_value(
        25021,
        &format!(
            "The eBay listing associated with the inventory item, or the unpublished offer has invalid item condition information. {info}"
        ),
        &[("additionalInfo", &info)],
    ))
}

/// Publishes the offer `id` of `seller`: its listing id (the same on every publish), or eBay's
/// error (status, error).
///
/// The checks read the taxonomy and the condition policies, which have locks of their own, so
/// they run on a copy of the offer and its item; the offer is then published only if both are
/// still what was checked (a deleteInventoryItem, updateOffer or createOrReplaceInventoryItem
/// may have run in between): gone, the offer is eBay's 25713; changed, it is checked again,
/// and still changing after a few rounds, eBay's 25025 (concurrent access, try again). No
/// order of calls makes it fail to answer.
fn publish_offer(state: &FakeState, seller: &str, id: &str) -> Result<String, (u16, Value)> {
    const ROUNDS: usize = 8;
    for _ in 0..ROUNDS {
        let (item, offer) = with_seller(state, seller, |s| offer_and_item(s, id));
        let Some(offer) = offer else {
            return Err(offer_gone(id));
        };
        if let Some(e) = publish_error(state, seller, item.as_ref(), &offer) {
            return Err((400, e));
        }
        let next = state.next_id();
        let published = with_seller(state, seller, |s| {
            let (item_now, offer_now) = offer_and_item(s, id);
            match offer_now {
                None => Some(Err(offer_gone(id))),
                Some(now) if now != offer || item_now != item => None,
                Some(_) => s.offers.get_mut(id).map(|offer| {
                    let listing_id = match offer["listing"]["listingId"].as_str() {
                        Some(l) => l.to_owned(),
                        None => format!("{}", 110_000_000_000u64 + next),
                    };
                    offer["status"] = json!("PUBLISHED");
                    offer["listing"] = json!({"listingId": listing_id, "listingStatus": "ACTIVE"});
                    Ok(listing_id)
                }),
            }
        });
        if let Some(answer) = published {
            return answer;
        }
    }
    Err((
        500,
        error_value(
            25025,
            "Concurrent access of the same Inventory or Inventory Item Group object is not allowed. Please try again later.",
            &[],
        ),
    ))
}

/// The offer `id` and the inventory item of its SKU, copied.
fn offer_and_item(s: &Seller, id: &str) -> (Option<Value>, Option<Value>) {
    let offer = s.offers.get(id).cloned();
    let item = offer
        .as_ref()
        .and_then(|o| o["sku"].as_str())
        .and_then(|sku| s.items.get(sku).cloned());
    (item, offer)
}

/// publishOffer's answer for an offer that is not (or no longer) there: 25713.
fn offer_gone(id: &str) -> (u16, Value) {
    (
        404,
        error_value(25713, &format!("This Offer is not available : {id}."), &[]),
    )
}

fn publish(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let id = request.param("offerId").unwrap_or_default().to_owned();
    match publish_offer(state, &seller, &id) {
        Ok(listing_id) => Response::json(200, &json!({"listingId": listing_id, "warnings": []})),
        Err((status, e)) => Response::json(status, &json!({"errors": [e]})),
    }
}

fn withdraw(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let id = request.param("offerId").unwrap_or_default().to_owned();
    let listing = with_seller(state, &seller, |s| {
        let offer = s.offers.get_mut(&id)?;
        let listing_id = offer["listing"]["listingId"].as_str()?.to_owned();
        offer["status"] = json!("UNPUBLISHED");
        offer["listing"]["listingStatus"] = json!("ENDED");
        Some(listing_id)
    });
    match listing {
        Some(listing_id) => Response::json(200, &json!({"listingId": listing_id, "warnings": []})),
        None => offer_not_found(&id),
    }
}

/// The requests of a bulk call (at most 25: 25730 otherwise).
fn requests(request: &Request) -> Result<Vec<Value>, Response> {
    let body = body(request)?;
    let requests = body["requests"].as_array().cloned().unwrap_or_default();
    if requests.is_empty() || requests.len() > 25 {
        return Err(error(
            400,
            25709,
            "Invalid request. Invalid value for field requests: from 1 to 25 requests.",
            &[("fieldName", "requests")],
        ));
    }
    Ok(requests)
}

/// A bulk answer: 200 when every item succeeded, else 207.
fn bulk_answer(responses: Vec<Value>) -> Response {
    let all = responses
        .iter()
        .all(|r| r["statusCode"].as_u64().is_some_and(|s| s < 300));
    Response::json(
        if all { 200 } else { 207 },
        &json!({ "responses": responses }),
    )
}

fn bulk_items(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let requests = tri!(requests(request));
    // A value outside an enumeration makes the whole body unreadable, as for the single call.
    if let Some(e) = requests.iter().find_map(item_enum_error) {
        return Response::json(400, &json!({ "errors": [e] }));
    }
    let mut responses = Vec::new();
    for mut item in requests {
        let sku = item["sku"].as_str().unwrap_or_default().to_owned();
        let locale = item["locale"].clone();
        if !item.is_object() {
            responses.push(json!({"sku": sku, "locale": locale, "statusCode": 400,
                "errors": [error_value(25709, NOT_AN_ITEM, &[])]}));
            continue;
        }
        if let Some(fields) = item.as_object_mut() {
            fields.remove("sku");
            fields.remove("locale");
        }
        with_seller(state, &seller, |s| s.items.insert(sku.clone(), item));
        responses.push(json!({"sku": sku, "locale": locale, "statusCode": 200}));
    }
    bulk_answer(responses)
}

/// bulkGetInventoryItem: up to 25 SKUs, each answered with its item (getInventoryItem's
/// shape) or, not in the inventory, statusCode 404 and errorId 25702; 207 when one is missing.
fn bulk_get_items(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let requests = tri!(requests(request));
    let responses = requests
        .iter()
        .map(|r| {
            let sku = r["sku"].as_str().unwrap_or_default();
            match with_seller(state, &seller, |s| s.items.get(sku).cloned()) {
                Some(mut item) => {
                    item["sku"] = json!(sku);
                    json!({"sku": sku, "statusCode": 200, "inventoryItem": item})
                }
                None => json!({"sku": sku, "statusCode": 404, "errors": [error_value(
                    25702,
                    &format!("SKU {sku} is not available in the system"),
                    &[("skuValue", sku)],
                )]}),
            }
        })
        .collect();
    bulk_answer(responses)
}

fn bulk_offers(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    tri!(needs_content_language(request));
    let requests = tri!(requests(request));
    if let Some(e) = requests.iter().find_map(offer_enum_error) {
        return Response::json(400, &json!({ "errors": [e] }));
    }
    let mut responses = Vec::new();
    for offer in requests {
        let mut response = json!({
            "sku": offer["sku"],
            "marketplaceId": offer["marketplaceId"],
            "format": offer.get("format").cloned().unwrap_or(json!("FIXED_PRICE")),
        });
        match new_offer(state, &seller, offer) {
            Ok(id) => {
                response["offerId"] = json!(id);
                response["statusCode"] = json!(200);
            }
            Err((status, e)) => {
                response["statusCode"] = json!(status);
                response["errors"] = json!([e]);
            }
        }
        responses.push(response);
    }
    bulk_answer(responses)
}

fn bulk_publish(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let requests = tri!(requests(request));
    let mut responses = Vec::new();
    for r in requests {
        let id = r["offerId"].as_str().unwrap_or_default().to_owned();
        responses.push(match publish_offer(state, &seller, &id) {
            Ok(listing_id) => json!({"offerId": id, "listingId": listing_id, "statusCode": 200}),
            Err((status, e)) => json!({"offerId": id, "statusCode": status, "errors": [e]}),
        });
    }
    bulk_answer(responses)
}

fn create_location(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let mut location = tri!(body(request));
    let key = request
        .param("merchantLocationKey")
        .unwrap_or_default()
        .to_owned();
    location["merchantLocationKey"] = json!(key);
    location["merchantLocationStatus"] = json!("ENABLED");
    let created = with_seller(state, &seller, |s| {
        if s.locations.contains_key(&key) {
            false
        } else {
            s.locations.insert(key.clone(), location);
            true
        }
    });
    if created {
        Response::new(204, Vec::new())
    } else {
        error(
            409,
            25803,
            "merchantLocationKey already exists.",
            &[("fieldName", "merchantLocationKey")],
        )
    }
}

fn get_location(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    let key = request.param("merchantLocationKey").unwrap_or_default();
    match with_seller(state, &seller, |s| s.locations.get(key).cloned()) {
        Some(location) => Response::json(200, &location),
        None => error(
            400,
            25805,
            "merchantLocationKey Not Found.",
            &[("fieldName", "merchantLocationKey")],
        ),
    }
}

/// getInventoryLocations: the seller's locations, `limit` (default 20, at most 100) from
/// `offset` (default 0), as eBay's `LocationResponse`.
fn get_locations(request: &Request, state: &FakeState) -> Response {
    let seller = tri!(seller(request, state));
    // The description lists no error of a bad `limit` or `offset`: the defaults are taken.
    let number = |name: &str, default: usize| {
        request
            .query_param(name)
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(default)
    };
    let limit = number("limit", 20).clamp(1, 100);
    let offset = number("offset", 0);
    let all: Vec<Value> = with_seller(state, &seller, |s| s.locations.values().cloned().collect());
    let page: Vec<Value> = all.iter().skip(offset).take(limit).cloned().collect();
    Response::json(
        200,
        &json!({"locations": page, "total": all.len(), "limit": limit, "offset": offset}),
    )
}

impl crate::FakeMarketplace {
    /// Gives the fake's user (the seller its user tokens are issued for) an enabled inventory
    /// location `key`, as createInventoryLocation would: getInventoryLocation(s) answer it.
    pub fn add_inventory_location(&self, key: &str) {
        let state = self.state();
        let seller = format!("user:{}", lock(&state.notify.user).username);
        with_seller(state, &seller, |s| {
            s.locations.insert(
                key.to_owned(),
                json!({"merchantLocationKey": key, "merchantLocationStatus": "ENABLED",
                    "location": {"address": {"country": "US", "postalCode": "95125"}},
                    "locationTypes": ["WAREHOUSE"], "name": key}),
            )
        });
    }
}

/// What a buyer bought of a listing (orders.rs builds the order from it).
pub(crate) struct Sold {
    /// The seller key (`user:{username}`).
    pub seller: String,
    pub sku: String,
    pub title: String,
    /// `FIXED_PRICE` or `AUCTION`.
    pub format: String,
    /// The offer's `marketplaceId`.
    pub marketplace: String,
    /// The offer's `pricingSummary.price` (an Amount).
    pub price: Value,
}

/// A buyer buys `quantity` of the published listing `listing_id`, whichever seller's: the
/// offer's `availableQuantity` and the item's ship-to-location quantity go down, the
/// listing's `soldQuantity` up, and at 0 the listing ends (`listing.listingStatus` `ENDED`,
/// as getOffers shows an ended listing). An error naming the listing when there is none, it
/// is not active, or fewer are available.
pub(crate) fn sell(state: &FakeState, listing_id: &str, quantity: u32) -> Result<Sold, String> {
    let mut sellers = lock(&state.inventory.sellers);
    for (seller, s) in sellers.iter_mut() {
        let Some((_, offer)) = s
            .offers
            .iter_mut()
            .find(|(_, o)| o["listing"]["listingId"].as_str() == Some(listing_id))
        else {
            continue;
        };
        if offer["status"] != json!("PUBLISHED")
            || offer["listing"]["listingStatus"] != json!("ACTIVE")
        {
            return Err(format!(
                "listing {listing_id} is not active (its status: {}), nothing to buy",
                offer["listing"]["listingStatus"]
            ));
        }
        let sku = offer["sku"].as_str().unwrap_or_default().to_owned();
        let item = s.items.get_mut(&sku);
        let item_quantity = item
            .as_ref()
            .and_then(|i| i["availability"]["shipToLocationAvailability"]["quantity"].as_u64());
        let available = offer["availableQuantity"]
            .as_u64()
            .or(item_quantity)
            .unwrap_or(0);
        if u64::from(quantity) > available {
            return Err(format!(
                "listing {listing_id} has {available} available, {quantity} asked"
            ));
        }
        let left = available - u64::from(quantity);
        offer["availableQuantity"] = json!(left);
        let sold_before = offer["listing"]["soldQuantity"].as_u64().unwrap_or(0);
        offer["listing"]["soldQuantity"] = json!(sold_before + u64::from(quantity));
        if left == 0 {
            offer["listing"]["listingStatus"] = json!("ENDED");
        }
        let format = offer["format"].as_str().unwrap_or("FIXED_PRICE").to_owned();
        let marketplace = offer["marketplaceId"]
            .as_str()
            .unwrap_or("EBAY_US")
            .to_owned();
        let price = offer["pricingSummary"]["price"].clone();
        let mut title = String::new();
        if let Some(item) = item {
            title = item["product"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let q = item_quantity.unwrap_or(available);
            item["availability"]["shipToLocationAvailability"]["quantity"] =
                json!(q.saturating_sub(u64::from(quantity)));
        }
        return Ok(Sold {
            seller: seller.clone(),
            sku,
            title,
            format,
            marketplace,
            price,
        });
    }
    Err(format!("no published listing {listing_id} on the fake"))
}

impl crate::FakeMarketplace {
    /// Puts a published listing of `quantity` at `price` (in US dollars) on EBAY_US for the
    /// seller `username`, as createOrReplaceInventoryItem, createOffer and publishOffer would
    /// leave it (without their checks): its `listingId`, for tests that sell without
    /// publishing first (many sellers, many listings). getOffers answers it to the seller.
    pub fn add_listing(&self, username: &str, sku: &str, quantity: u32, price: &str) -> String {
        let state = self.state();
        let next = state.next_id();
        let listing_id = format!("{}", 110_000_000_000u64 + next);
        let offer_id = format!("{}", 5_000_000_000u64 + next);
        with_seller(state, &format!("user:{username}"), |s| {
            s.items.insert(
                sku.to_owned(),
                json!({"product": {"title": format!("Fake listing {sku}"),
                        "description": "A listing the fake put up for a test."},
                    "condition": "NEW",
                    "availability": {"shipToLocationAvailability": {"quantity": quantity}}}),
            );
            s.offers.insert(
                offer_id.clone(),
                json!({"offerId": offer_id, "sku": sku, "marketplaceId": "EBAY_US",
                    "format": "FIXED_PRICE", "availableQuantity": quantity,
                    "listingDuration": "GTC",
                    "pricingSummary": {"price": {"value": price, "currency": "USD"}},
                    "status": "PUBLISHED",
                    "listing": {"listingId": listing_id, "listingStatus": "ACTIVE",
                        "soldQuantity": 0}}),
            );
        });
        listing_id
    }
}
