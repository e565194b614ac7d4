//! The fake's buyers and its Fulfillment API orders (getOrders, getOrder), held to eBay's
//! OpenAPI description (`tests/contract/sell_fulfillment_v1_oas3.json`, see
//! `tests/contract/README.md`) over real HTTP: each route is a documented operation, each
//! answer has a documented status, a 200's body is of the documented schema, each error id is
//! documented for its status with its domain and category; a sale lowers the offer's
//! quantity and a listing at 0 ends; the filters, paging, `orderIds`, cancellations, pending
//! payments, the scope and the faults behave as eBay documents them.

use crate::openapi;

use crate::inventory_support as fake_inventory;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fake_marketplace::orders::{
    GET_ORDERS_PATH, PaymentOutcome, Purchase, format_timestamp, system_error,
};
use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::api::{ApiClient, ApiError, ApiRequest};
use marketplace_listing::{Condition, ListingBuilder};
use openapi::{Document, Operation};
use serde_json::Value;
use taxonomy_macros::{aspects, category};

/// The Fulfillment API's scope, as the fake's scope URL suffix.
const FULFILLMENT: &str = "/sell.fulfillment";

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_fulfillment_v1_oas3.json"),
    )
}

fn operation(doc: &Document, id: &str) -> Operation {
    doc.operations()
        .into_iter()
        .find(|o| o.id == id)
        .unwrap_or_else(|| panic!("{id} is documented"))
}

/// A client of `fake` for the fake's seller with `sell.fulfillment` (and `sell.inventory`).
fn seller_api(fake: &FakeMarketplace) -> ApiClient {
    fake_inventory::api_with(
        fake,
        fake_inventory::seller_tokens(fake, &[FULFILLMENT, fake_inventory::INVENTORY]),
    )
}

fn get_orders(api: &ApiClient, query: &[(&str, &str)]) -> Result<Value, ApiError> {
    let mut request = ApiRequest::get(GET_ORDERS_PATH);
    for (k, v) in query {
        request = request.query(*k, *v);
    }
    api.send(request).map(|r| r.json::<Value>().unwrap())
}

fn get_order(api: &ApiClient, id: &str) -> Result<Value, ApiError> {
    api.send(ApiRequest::get(format!("{GET_ORDERS_PATH}/{id}")))
        .map(|r| r.json::<Value>().unwrap())
}

fn ids(page: &Value) -> Vec<String> {
    page["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect()
}

/// The error's single id, checked against what `op` documents for its status (domain
/// `API_FULFILLMENT`, the category listed).
fn documented_error(op: &Operation, e: &ApiError) -> u32 {
    let status = e.status().expect("an HTTP answer");
    let documented = op
        .responses
        .get(&status)
        .unwrap_or_else(|| panic!("{}: status {status} is not documented: {e}", op.id));
    let errors = e.service_errors();
    assert_eq!(errors.len(), 1, "{e}");
    let got = &errors[0];
    let listed = documented
        .errors
        .iter()
        .find(|d| d.id == got.error_id)
        .unwrap_or_else(|| {
            panic!(
                "{}: errorId {} not documented for {status}",
                op.id, got.error_id
            )
        });
    assert_eq!(got.domain.as_deref(), Some(listed.domain.as_str()), "{e}");
    assert_eq!(
        got.category.as_deref(),
        Some(listed.category.as_str()),
        "{e}"
    );
    got.error_id
}

/// A timestamp `secs` from the fake's now, in eBay's format.
fn at(fake: &FakeMarketplace, secs: i64) -> String {
    let now = fake
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    format_timestamp((now + secs * 1000) as u64)
}

#[test]
fn the_fakes_order_calls_are_documented_and_answer_as_documented() {
    let doc = document();
    assert_eq!(doc.base_path(), "/sell/fulfillment/v1");
    let ops = doc.operations();
    let fake = FakeMarketplace::new();
    for (method, pattern) in fake
        .route_patterns()
        .iter()
        .filter(|(_, p)| p.starts_with("/sell/fulfillment/"))
    {
        // Path parameters compared without their names (`{orderId}`, `{order_id}`).
        let shape = |p: &str| {
            p.split('/')
                .map(|s| if s.starts_with('{') { "{}" } else { s })
                .collect::<Vec<_>>()
                .join("/")
        };
        assert!(
            ops.iter()
                .any(|o| o.method == *method && shape(&o.path) == shape(pattern)),
            "{method} {pattern} is not documented"
        );
    }
    let get_orders_op = operation(&doc, "getOrders");
    let get_order_op = operation(&doc, "getOrder");
    for op in [&get_orders_op, &get_order_op] {
        assert!(
            op.scopes
                .iter()
                .any(|s| s == "https://api.ebay.com/oauth/api_scope/sell.fulfillment"),
            "{:?}",
            op.scopes
        );
        let served = fake
            .route_patterns()
            .iter()
            .any(|(m, p)| *m == op.method && *p == op.path);
        assert!(served, "{} is not served", op.id);
    }
    let listing = fake.add_listing("fake_seller", "CUP-1", 10, "9.99");
    let paid = fake.buy(&listing, 2).unwrap();
    let failed = fake
        .buy_with(
            &Purchase::of(&listing, 1)
                .payment(PaymentOutcome::Failed)
                .buyer("hans_kauft", "DE"),
        )
        .unwrap();
    let immutable = fake
        .buy_with(&Purchase::of(&listing, 1).immutable_user_id())
        .unwrap();
    fake.cancel_order(&paid).unwrap();
    let api = seller_api(&fake);
    let page = get_orders(&api, &[("limit", "2")]).unwrap();
    assert_eq!(
        doc.conformance(&page, "OrderSearchPagedCollection"),
        Vec::<String>::new()
    );
    assert_eq!(page["total"], 3);
    assert!(
        page["next"].as_str().unwrap().contains("offset=2"),
        "{page}"
    );
    for id in [&paid, &failed, &immutable] {
        let order = get_order(&api, id).unwrap();
        assert_eq!(
            doc.conformance(&order, "Order"),
            Vec::<String>::new(),
            "{order}"
        );
        assert_eq!(order["orderId"], id.as_str());
    }
    let failed_order = get_order(&api, &failed).unwrap();
    assert_eq!(failed_order["orderPaymentStatus"], "FAILED");
    assert_eq!(failed_order["buyer"]["username"], "hans_kauft");
    let immutable_order = get_order(&api, &immutable).unwrap();
    assert_ne!(immutable_order["buyer"]["username"], "fake_buyer");

    // Every error id the fake answers is documented for its status, domain and category.
    let cases: [(&[(&str, &str)], u32); 13] = [
        (&[("filter", "price:[1..2]")], 30700),
        (
            &[("filter", "creationdate:2016-03-21T08:25:43.511Z")],
            30800,
        ),
        (&[("filter", "orderfulfillmentstatus:{NOT_STARTED}")], 30800),
        (&[("filter", "lastmodifieddate:[yesterday..]")], 30810),
        (
            &[("filter", "creationdate:[..2016-03-21T08:25:43.511Z]")],
            30820,
        ),
        (
            &[(
                "filter",
                "creationdate:[2016-03-21T08:25:43.511Z..2019-03-21T08:25:43.511Z]",
            )],
            30830,
        ),
        (
            &[(
                "filter",
                "creationdate:[2016-04-21T08:25:43.511Z..2016-03-21T08:25:43.511Z]",
            )],
            30840,
        ),
        (
            &[("filter", "creationdate:[2999-01-01T00:00:00.000Z..]")],
            30850,
        ),
        (&[("limit", "201")], 31100),
        (&[("limit", "0")], 31100),
        (&[("offset", "-1")], 31000),
        (&[("fieldGroups", "EVERYTHING")], 32800),
        (&[], 0),
    ];
    let many: Vec<String> = (0..51).map(|i| format!("01-00000-{i:05}")).collect();
    let many = many.join(",");
    for (query, id) in cases
        .iter()
        .chain([(&[("orderIds", many.as_str())][..], 30900)].iter())
    {
        if *id == 0 {
            continue;
        }
        let e = get_orders(&api, query).unwrap_err();
        assert_eq!(documented_error(&get_orders_op, &e), *id, "{query:?}: {e}");
    }
    let e = get_order(&api, "no-such-order").unwrap_err();
    assert_eq!(documented_error(&get_order_op, &e), 32100);
    assert!(
        e.service_errors()[0]
            .message
            .contains("Invalid order ID: no-such-order"),
        "{e}"
    );
    let e = api
        .send(ApiRequest::get(format!("{GET_ORDERS_PATH}/{paid}")).query("fieldGroups", "ALL"))
        .unwrap_err();
    assert_eq!(documented_error(&get_order_op, &e), 32800);
    // The fault: eBay's 500 with 30500.
    fake.fail_next(GET_ORDERS_PATH, system_error());
    let e = get_orders(&api, &[]).unwrap_err();
    assert_eq!(documented_error(&get_orders_op, &e), 30500);
    assert_eq!(get_orders(&api, &[]).unwrap()["total"], 3);
}

#[test]
fn a_sale_lowers_the_offers_quantity_and_a_listing_sold_out_ends() {
    let fake = FakeMarketplace::new();
    let inventory = fake_inventory::inventory(&fake);
    let listing = ListingBuilder::new(
        "DELL-1",
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell OptiPlex 7010")
    .description("A Dell OptiPlex 7010 desktop, tested and working.")
    .condition(Condition::UsedExcellent)
    .quantity(3)
    .price("149.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
    .image("https://example.com/1.jpg")
    .build()
    .unwrap();
    let published = inventory.publish(&listing).unwrap();
    let api = seller_api(&fake);
    let offer = |api: &ApiClient| -> Value {
        let offers: Value = api
            .send(ApiRequest::get("/sell/inventory/v1/offer").query("sku", "DELL-1"))
            .unwrap()
            .json()
            .unwrap();
        offers["offers"][0].clone()
    };
    let item = |api: &ApiClient| -> Value {
        api.send(ApiRequest::get("/sell/inventory/v1/inventory_item/DELL-1"))
            .unwrap()
            .json()
            .unwrap()
    };
    let order = fake.buy(&published.listing_id, 2).unwrap();
    let after = offer(&api);
    assert_eq!(after["availableQuantity"], 1);
    assert_eq!(after["listing"]["listingStatus"], "ACTIVE");
    assert_eq!(after["listing"]["soldQuantity"], 2);
    assert_eq!(
        item(&api)["availability"]["shipToLocationAvailability"]["quantity"],
        1
    );
    let sold = get_order(&api, &order).unwrap();
    assert_eq!(sold["lineItems"][0]["sku"], "DELL-1");
    assert_eq!(sold["lineItems"][0]["title"], "Dell OptiPlex 7010");
    assert_eq!(sold["lineItems"][0]["lineItemCost"]["value"], "298.00");
    assert_eq!(sold["lineItems"][0]["listingMarketplaceId"], "EBAY_US");
    // More than is left is refused, naming the listing; the last one ends the listing.
    let refused = fake.buy(&published.listing_id, 2).unwrap_err();
    assert!(refused.contains("has 1 available, 2 asked"), "{refused}");
    fake.buy(&published.listing_id, 1).unwrap();
    let ended = offer(&api);
    assert_eq!(ended["availableQuantity"], 0);
    assert_eq!(ended["status"], "PUBLISHED");
    assert_eq!(ended["listing"]["listingStatus"], "ENDED");
    let refused = fake.buy(&published.listing_id, 1).unwrap_err();
    assert!(refused.contains("is not active"), "{refused}");
    assert!(
        fake.buy("999", 1)
            .unwrap_err()
            .contains("no published listing 999")
    );
}

#[test]
fn get_orders_filters_by_creation_date_modification_date_and_fulfillment_status() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "PEN-1", 100, "1.00");
    let old = fake.buy(&listing, 1).unwrap();
    fake.advance_clock(Duration::from_secs(3600));
    let new = fake.buy(&listing, 1).unwrap();
    let api = seller_api(&fake);
    let half_hour_ago = at(&fake, -1800);
    let created_since = format!("creationdate:[{half_hour_ago}..]");
    assert_eq!(
        ids(&get_orders(&api, &[("filter", &created_since)]).unwrap()),
        [new.as_str()]
    );
    let created_before = format!("creationdate:[{}..{half_hour_ago}]", at(&fake, -7200));
    assert_eq!(
        ids(&get_orders(&api, &[("filter", &created_before)]).unwrap()),
        [old.as_str()]
    );
    // The old order changes: it is modified since half an hour ago, still created before.
    fake.touch_order(&old).unwrap();
    let modified_since = format!("lastmodifieddate:[{half_hour_ago}..]");
    let mut modified = ids(&get_orders(&api, &[("filter", &modified_since)]).unwrap());
    modified.sort();
    let mut both = vec![old.clone(), new.clone()];
    both.sort();
    assert_eq!(modified, both);
    // Both ranges given: only creationdate counts, as eBay says.
    let combined = format!("{created_before},{modified_since}");
    assert_eq!(
        ids(&get_orders(&api, &[("filter", &combined)]).unwrap()),
        [old.as_str()]
    );
    // The newest creation first, eBay's supported status sets.
    let unshipped = "orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}";
    assert_eq!(
        ids(&get_orders(&api, &[("filter", unshipped)]).unwrap()),
        [new.clone(), old.clone()]
    );
    let shipped = "orderfulfillmentstatus:{FULFILLED|IN_PROGRESS}";
    assert!(ids(&get_orders(&api, &[("filter", shipped)]).unwrap()).is_empty());
    // A lastModifiedDate moves forward on every change, never twice the same.
    let before = get_order(&api, &new).unwrap()["lastModifiedDate"].clone();
    fake.touch_order(&new).unwrap();
    fake.touch_order(&new).unwrap();
    let after = get_order(&api, &new).unwrap();
    assert!(
        after["lastModifiedDate"].as_str() > before.as_str(),
        "{after}"
    );
    assert_eq!(after["creationDate"], before);
}

#[test]
fn get_orders_pages_to_the_end_and_an_order_bought_while_paging_is_seen_not_lost() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "BOLT-1", 1000, "0.10");
    let mut bought = Vec::new();
    for _ in 0..7 {
        bought.push(fake.buy(&listing, 1).unwrap());
        fake.advance_clock(Duration::from_millis(5));
    }
    let api = seller_api(&fake);
    // Paging with `next` to the end: every order once, newest first.
    let mut seen = Vec::new();
    let mut page = get_orders(&api, &[("limit", "3")]).unwrap();
    loop {
        assert_eq!(page["total"], 7);
        seen.extend(ids(&page));
        let Some(next) = page["next"].as_str() else {
            break;
        };
        let query = next.split_once('?').unwrap().1.to_owned();
        let offset = query.split("offset=").nth(1).unwrap().to_owned();
        assert!(!page["prev"].is_null() || offset == "3", "{page}");
        page = get_orders(&api, &[("limit", "3"), ("offset", &offset)]).unwrap();
    }
    let mut newest_first = bought.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first);
    // A buyer buys while the first page is answered, and an order changes: the walk sees the
    // order at the page's edge twice (the offsets shifted), misses none of those it started
    // with (the new one, before the walk's first page now, is the next walk's).
    let fired = Arc::new(AtomicBool::new(false));
    let hook_fired = fired.clone();
    let listing_for_hook = listing.clone();
    let changed = bought[0].clone();
    fake.on_orders_page(move |state, offset| {
        if offset == 0 && !hook_fired.swap(true, Ordering::SeqCst) {
            state.buy(&Purchase::of(&listing_for_hook, 1)).unwrap();
            state.touch_order(&changed).unwrap();
        }
    });
    fake.advance_clock(Duration::from_millis(5));
    let mut walked = Vec::new();
    let mut offset = 0;
    loop {
        let page = get_orders(&api, &[("limit", "3"), ("offset", &offset.to_string())]).unwrap();
        walked.extend(ids(&page));
        if page["next"].is_null() {
            break;
        }
        offset += 3;
    }
    assert!(fired.load(Ordering::SeqCst));
    assert_eq!(walked.len(), 7 + 1, "{walked:?}"); // one seen twice
    for id in &bought {
        assert!(walked.contains(id), "{id} lost: {walked:?}");
    }
    let edge = &newest_first[2];
    assert_eq!(
        walked.iter().filter(|id| *id == edge).count(),
        2,
        "{walked:?}"
    );
    fake.clear_orders_page_hook();
    assert_eq!(get_orders(&api, &[]).unwrap()["total"], 8);
}

#[test]
fn order_ids_answer_those_orders_and_the_filter_is_ignored() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "NUT-1", 100, "0.20");
    let a = fake.buy(&listing, 1).unwrap();
    let b = fake.buy(&listing, 1).unwrap();
    fake.buy(&listing, 1).unwrap();
    let api = seller_api(&fake);
    let asked = format!("{a},{b},99-99999-99999");
    let page = get_orders(
        &api,
        &[
            ("orderIds", &asked),
            ("filter", "orderfulfillmentstatus:{FULFILLED|IN_PROGRESS}"),
            ("limit", "1"),
        ],
    )
    .unwrap();
    let mut got = ids(&page);
    got.sort();
    let mut want = vec![a, b];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(page["total"], 2);
    // 50 is the most: 50 answer, 51 are refused (30900).
    let fifty = vec![want[0].clone(); 50].join(",");
    assert!(get_orders(&api, &[("orderIds", &fifty)]).is_ok());
    let fifty_one = vec![want[0].clone(); 51].join(",");
    let e = get_orders(&api, &[("orderIds", &fifty_one)]).unwrap_err();
    assert_eq!(e.error_id(), Some(30900), "{e}");
}

#[test]
fn get_orders_leaves_cancel_requests_empty_and_get_order_fills_them() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "LAMP-1", 5, "30.00");
    let order = fake.buy(&listing, 1).unwrap();
    let api = seller_api(&fake);
    let listed = &get_orders(&api, &[]).unwrap()["orders"][0];
    assert_eq!(listed["cancelStatus"]["cancelState"], "NONE_REQUESTED");
    assert_eq!(
        listed["cancelStatus"]["cancelRequests"],
        serde_json::json!([])
    );
    fake.cancel_order(&order).unwrap();
    let listed = get_orders(&api, &[]).unwrap()["orders"][0].clone();
    assert_eq!(listed["cancelStatus"]["cancelState"], "IN_PROGRESS");
    assert_eq!(
        listed["cancelStatus"]["cancelRequests"],
        serde_json::json!([])
    );
    let single = get_order(&api, &order).unwrap();
    let request = &single["cancelStatus"]["cancelRequests"][0];
    assert_eq!(request["cancelInitiator"], "BUYER");
    assert_eq!(request["cancelRequestState"], "REQUESTED");
    fake.complete_cancel(&order).unwrap();
    let single = get_order(&api, &order).unwrap();
    assert_eq!(single["cancelStatus"]["cancelState"], "CANCELED");
    assert_eq!(
        single["cancelStatus"]["cancelRequests"][0]["cancelRequestState"],
        "COMPLETED"
    );
    assert!(single["lastModifiedDate"].as_str() > listed["lastModifiedDate"].as_str());
}

#[test]
fn an_order_awaiting_payment_is_answered_once_paid_with_its_first_creation_date() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "RUG-1", 5, "80.00");
    let pending = fake
        .buy_with(&Purchase::of(&listing, 1).payment(PaymentOutcome::Pending))
        .unwrap();
    let api = seller_api(&fake);
    assert_eq!(get_orders(&api, &[]).unwrap()["total"], 0);
    assert_eq!(
        get_order(&api, &pending).unwrap_err().error_id(),
        Some(32100)
    );
    fake.advance_clock(Duration::from_secs(600));
    let since = format!("lastmodifieddate:[{}..]", at(&fake, -60));
    assert!(ids(&get_orders(&api, &[("filter", &since)]).unwrap()).is_empty());
    fake.complete_payment(&pending).unwrap();
    let page = get_orders(&api, &[("filter", &since)]).unwrap();
    assert_eq!(ids(&page), [pending.as_str()]);
    let order = &page["orders"][0];
    assert_eq!(order["orderPaymentStatus"], "PAID");
    assert!(order["creationDate"].as_str() < order["lastModifiedDate"].as_str());
    assert_eq!(
        order["paymentSummary"]["payments"][0]["paymentStatus"],
        "PAID"
    );
}

#[test]
fn the_order_calls_need_a_fulfillment_scope_of_a_user_token() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "HAT-1", 5, "15.00");
    let order = fake.buy(&listing, 1).unwrap();
    let inventory_only = fake_inventory::api(&fake);
    for e in [
        get_orders(&inventory_only, &[]).unwrap_err(),
        get_order(&inventory_only, &order).unwrap_err(),
    ] {
        assert_eq!(e.status(), Some(403), "{e}");
        assert_eq!(e.error_id(), Some(1100), "{e}");
    }
    let readonly = fake_inventory::api_with(
        &fake,
        fake_inventory::seller_tokens(&fake, &["/sell.fulfillment.readonly"]),
    );
    assert_eq!(get_orders(&readonly, &[]).unwrap()["total"], 1);
    assert_eq!(
        get_order(&readonly, &order).unwrap()["orderId"],
        order.as_str()
    );
}

#[test]
fn a_slow_page_is_answered_late_and_a_500_page_once() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "CAP-1", 5, "15.00");
    fake.buy(&listing, 1).unwrap();
    let api = seller_api(&fake);
    get_orders(&api, &[]).unwrap(); // the token fetched
    fake.fail_next(GET_ORDERS_PATH, Fault::Delay(Duration::from_millis(300)));
    let started = Instant::now();
    assert_eq!(get_orders(&api, &[]).unwrap()["total"], 1);
    assert!(started.elapsed() >= Duration::from_millis(300));
    fake.fail_next(GET_ORDERS_PATH, system_error());
    let e = get_orders(&api, &[]).unwrap_err();
    assert_eq!((e.status(), e.error_id()), (Some(500), Some(30500)), "{e}");
    assert_eq!(get_orders(&api, &[]).unwrap()["total"], 1);
}

/// Each seller's token answers that seller's orders, whoever the fake's user is now: the
/// seller is the one whose consent the token comes from, so a fleet feeds many sellers at once.
#[test]
fn each_sellers_token_answers_that_sellers_orders_side_by_side() {
    let fake = FakeMarketplace::new();
    let mut apis = Vec::new();
    for name in ["alice_sells", "bob_sells", "carol_sells"] {
        fake.set_user(fake_marketplace::FakeUser {
            user_id: format!("{name}-id"),
            username: name.into(),
        });
        apis.push((name, seller_api(&fake)));
    }
    let mut bought = Vec::new();
    for (i, (name, _)) in apis.iter().enumerate() {
        let listing = fake.add_listing(name, &format!("SKU-{name}"), 10, "5.00");
        let orders: Vec<String> = (0..=i).map(|_| fake.buy(&listing, 1).unwrap()).collect();
        bought.push(orders);
    }
    // The fake's user is carol now; alice's and bob's tokens still answer their own.
    for ((name, api), orders) in apis.iter().zip(&bought) {
        let page = get_orders(api, &[]).unwrap();
        let mut got = ids(&page);
        got.sort();
        let mut want = orders.clone();
        want.sort();
        assert_eq!(got, want, "{name}");
        for order in &page["orders"].as_array().unwrap()[..] {
            assert_eq!(order["sellerId"], *name);
        }
    }
    let e = get_order(&apis[0].1, &bought[1][0]).unwrap_err();
    assert_eq!(e.error_id(), Some(32100), "bob's order is not alice's: {e}");
}

/// What marketplace-orders sends is what eBay's Fulfillment API describes: each getOrders and
/// getOrder request of the crate (a filter of both kinds, a page size and offset, order ids,
/// one order) goes to a documented path, with only documented query parameters and every
/// required one, and each answer decodes into the crate's types.
#[test]
fn marketplace_orders_requests_are_as_the_fulfillment_api_describes_them() {
    use marketplace_orders::blocking::Orders;
    use marketplace_orders::{DateRange, FulfillmentStatuses, GetOrders, OrderFilter, OrderIds};

    let doc = document();
    let operations = [operation(&doc, "getOrders"), operation(&doc, "getOrder")];
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "BOWL-1", 20, "4.50");
    let bought: Vec<String> = (0..5).map(|_| fake.buy(&listing, 1).unwrap()).collect();
    let orders = Orders::new(seller_api(&fake));
    fake.clear_requests();

    let since = fake.now() - Duration::from_secs(3600);
    let modified = GetOrders::new(
        OrderFilter::new()
            .last_modified(DateRange::since(since))
            .fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress),
    )
    .limit(2)
    .unwrap();
    let walked = orders.pages(modified).all().unwrap();
    assert_eq!(walked.len(), 5, "every order, two a page");
    let created = GetOrders::new(OrderFilter::new().created(DateRange::since(since)));
    assert_eq!(orders.get_orders(&created).unwrap().orders.len(), 5);
    let by_id = orders
        .get_orders_by_id(&OrderIds::new(&bought[..3]).unwrap())
        .unwrap();
    assert_eq!(by_id.orders.len(), 3);
    let one = orders.get_order(&bought[0]).unwrap();
    assert_eq!(one.order_id, bought[0]);

    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/sell/fulfillment/v1/order"))
        .collect();
    assert!(sent.len() >= 6, "{} requests", sent.len());
    let mut seen = std::collections::BTreeSet::new();
    for request in &sent {
        let op = operations
            .iter()
            .find(|op| request.method.eq_ignore_ascii_case(&op.method) && op.matches(&request.path))
            .unwrap_or_else(|| {
                panic!(
                    "{} {}: no documented operation",
                    request.method, request.path
                )
            });
        seen.insert(op.id.clone());
        let names: Vec<String> =
            url::form_urlencoded::parse(request.query.as_deref().unwrap_or_default().as_bytes())
                .map(|(name, _)| name.into_owned())
                .collect();
        for name in &names {
            assert!(
                op.parameters_in("query").any(|p| &p.name == name),
                "{}: query parameter {name} is not documented",
                op.id
            );
        }
        for p in op.parameters_in("query").filter(|p| p.required) {
            assert!(names.contains(&p.name), "{}: {} missing", op.id, p.name);
        }
    }
    assert_eq!(seen.len(), 2, "both calls sent: {seen:?}");
}
