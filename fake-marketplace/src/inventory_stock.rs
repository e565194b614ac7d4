//! bulkUpdatePriceQuantity (`POST /sell/inventory/v1/bulk_update_price_quantity`), as eBay's
//! Inventory API reference describes it:
//!
//! * at most 25 requests a call (the `BulkPriceQuantity` type: "one or more inventory items
//!   (up to 25)"; the call's own description says "only one SKU (one product) can be updated
//!   per call", which the type contradicts: the fake takes 25); none or more: 400, errorId
//!   25709 naming `requests`;
//! * each request (a `PriceQuantity`: `sku` with `shipToLocationAvailability.quantity`, and/or
//!   `offers`, each `offerId` with `availableQuantity` and/or `price`) applied whole or not at
//!   all, answered in `responses` with its own `statusCode` (one `PriceQuantityResponse` an
//!   offer, or one for the item when the request names no offer): 200, or 400 with errorId
//!   25709 ("Invalid value for {fieldName}") naming the field: a SKU not in the inventory
//!   (`sku`), an offer the seller does not have or of another SKU (`offerId`), a negative
//!   quantity (`quantity`, `availableQuantity`), a price that is not a positive amount in the
//!   offer's currency with at most two decimals (`price`); the whole answer 200 when every
//!   request succeeded, else 207;
//! * both fields kept in step as eBay lists them: the item's quantity is set from
//!   `shipToLocationAvailability`, each offer's `availableQuantity` from its `offers` entry,
//!   and an offer holding more than the item's new quantity is lowered to it;
//! * each listing (a published offer's `listingId`) revised at most 250 times a calendar day
//!   (the call's description: "Each listing can be revised up to 250 times in one calendar
//!   day"): a request that changes the item's quantity revises every published listing of the
//!   SKU, an `offers` entry its own listing. The reference gives no timezone for that day;
//!   the fake counts in Pacific time (America/Los_Angeles), the day eBay's call limits reset
//!   at ("the day starts at midnight, 00:00:00 PST", GetApiAccessRules). The reference gives
//!   no error id for the 251st revision either: the fake answers the call's user error,
//!   errorId 25002 ("Any User error. {additionalInfo}"), its `additionalInfo` naming the
//!   listing and the count; that text is the fake's own, labelled so.

use serde_json::{Value, json};

use super::{error_value, requests, seller, with_seller};
use crate::{FakeState, Request, Response};

/// The revisions of a listing eBay takes in one calendar day.
const REVISIONS_A_DAY: u32 = 250;

/// An `offers` entry checked: the offer's id, its new `availableQuantity` and price.
type OfferChange = (String, Option<u64>, Option<Value>);

/// A request's failure: the field eBay's 25709 names and why.
fn invalid(field: &str, why: &str) -> Value {
    error_value(
        25709,
        &format!("Invalid value for {field}. {why}"),
        &[("fieldName", field)],
    )
}

/// Whether `value` is a positive amount with at most two decimals.
fn valid_price(value: &str) -> bool {
    let (whole, decimals) = value.split_once('.').unwrap_or((value, ""));
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && decimals.len() <= 2
        && decimals.bytes().all(|b| b.is_ascii_digit())
        && value.parse::<f64>().is_ok_and(|v| v > 0.0)
}

pub(super) fn bulk_update_price_quantity(request: &Request, state: &FakeState) -> Response {
    let seller = match seller(request, state) {
        Ok(s) => s,
        Err(response) => return response,
    };
    let requests = match requests(request) {
        Ok(r) => r,
        Err(response) => return response,
    };
    let day = pacific_day(state.now());
    let mut responses = Vec::new();
    with_seller(state, &seller, |s| {
        for r in &requests {
            responses.extend(apply(s, r, day));
        }
    });
    let all = responses
        .iter()
        .all(|r| r["statusCode"].as_u64().is_some_and(|s| s < 300));
    Response::json(
        if all { 200 } else { 207 },
        &json!({ "responses": responses }),
    )
}

/// One `PriceQuantity` request applied whole, or refused whole: its responses.
fn apply(s: &mut super::Seller, r: &Value, day: i64) -> Vec<Value> {
    let offers: Vec<Value> = r["offers"].as_array().cloned().unwrap_or_default();
    let mut sku = r["sku"].as_str().map(str::to_owned);
    let quantity = &r["shipToLocationAvailability"]["quantity"];
    let answer = |sku: &Option<String>, status: u16, errors: Vec<Value>| -> Vec<Value> {
        let base = |offer_id: Option<&Value>| {
            let mut v = json!({"statusCode": status});
            if let Some(sku) = sku {
                v["sku"] = json!(sku);
            }
            if let Some(id) = offer_id {
                v["offerId"] = id.clone();
            }
            if !errors.is_empty() {
                v["errors"] = json!(errors);
            }
            v
        };
        if offers.is_empty() {
            vec![base(None)]
        } else {
            offers.iter().map(|o| base(Some(&o["offerId"]))).collect()
        }
    };
    // Every check first: the request is applied whole or not at all.
    let mut check = || -> Result<(Option<u64>, Vec<OfferChange>), Value> {
        let item_quantity = match quantity {
            Value::Null => None,
            q => Some(q.as_u64().ok_or_else(|| {
                invalid("quantity", "The quantity must be an integer of 0 or more.")
            })?),
        };
        if let Some(sku) = &sku
            && !s.items.contains_key(sku)
        {
            return Err(invalid(
                "sku",
                &format!("{sku} could not be found or is not available in the system."),
            ));
        }
        if item_quantity.is_some() && sku.is_none() {
            return Err(invalid(
                "sku",
                "The sku is required with shipToLocationAvailability.",
            ));
        }
        let mut changes = Vec::new();
        for o in &offers {
            let id = o["offerId"].as_str().unwrap_or_default();
            let Some(held) = s.offers.get(id) else {
                return Err(invalid(
                    "offerId",
                    &format!("This Offer is not available : {id}."),
                ));
            };
            let held_sku = held["sku"].as_str().unwrap_or_default().to_owned();
            match &sku {
                Some(sku) if *sku != held_sku => {
                    return Err(invalid(
                        "offerId",
                        &format!("The offer {id} is of SKU {held_sku}, not {sku}."),
                    ));
                }
                None => sku = Some(held_sku),
                Some(_) => {}
            }
            if changes.iter().any(|(c, _, _)| c == id) {
                return Err(invalid(
                    "offerId",
                    &format!("The offer {id} is named twice."),
                ));
            }
            let available = match &o["availableQuantity"] {
                Value::Null => None,
                q => Some(q.as_u64().ok_or_else(|| {
                    invalid(
                        "availableQuantity",
                        "The availableQuantity must be an integer of 0 or more.",
                    )
                })?),
            };
            let price = match &o["price"] {
                Value::Null => None,
                p => {
                    let currency = held["pricingSummary"]["price"]["currency"].as_str();
                    let value = p["value"].as_str().unwrap_or_default();
                    if !valid_price(value)
                        || currency.is_some_and(|c| p["currency"].as_str() != Some(c))
                    {
                        return Err(invalid(
                            "price",
                            &format!(
                                "The price {value} {} is not a positive amount in {}.",
                                p["currency"].as_str().unwrap_or_default(),
                                currency.unwrap_or("the offer's currency")
                            ),
                        ));
                    }
                    Some(p.clone())
                }
            };
            if available.is_none() && price.is_none() {
                return Err(invalid(
                    "offers",
                    &format!("The offer {id} has neither availableQuantity nor price."),
                ));
            }
            changes.push((id.to_owned(), available, price));
        }
        Ok((item_quantity, changes))
    };
    let (item_quantity, changes) = match check() {
        Ok(c) => c,
        Err(e) => return answer(&sku, 400, vec![e]),
    };
    let sku_name = sku.clone().unwrap_or_default();
    // The listings this request revises, each counted against its 250 a day.
    let live = |o: &Value| {
        (o["status"] == json!("PUBLISHED"))
            .then(|| o["listing"]["listingId"].as_str().map(str::to_owned))
            .flatten()
    };
    let mut listings: Vec<String> = Vec::new();
    for (id, o) in &s.offers {
        let named = changes.iter().any(|(c, _, _)| c == id);
        if (named || (item_quantity.is_some() && o["sku"] == json!(sku_name)))
            && let Some(listing) = live(o)
            && !listings.contains(&listing)
        {
            listings.push(listing);
        }
    }
    if let Some(full) = listings
        .iter()
        .find(|l| s.revisions.get(&((*l).clone(), day)).copied().unwrap_or(0) >= REVISIONS_A_DAY)
    {
        // The fake's own text: the reference names no error for the 251st revision.
        let info = format!(
            "The listing {full} has been revised {REVISIONS_A_DAY} times today, the most in \
             one calendar day; it can be revised again on the next calendar day."
        );
        let e = error_value(
            25002,
            &format!("A user error has occurred. {info}"),
            &[("additionalInfo", &info)],
        );
        return answer(&sku, 400, vec![e]);
    }
    for listing in listings {
        *s.revisions.entry((listing, day)).or_insert(0) += 1;
    }
    if let Some(q) = item_quantity {
        if let Some(item) = s.items.get_mut(&sku_name) {
            item["availability"]["shipToLocationAvailability"]["quantity"] = json!(q);
        }
        // eBay lists the lesser of the two: an offer cannot hold more than the item.
        for o in s.offers.values_mut() {
            if o["sku"] == json!(sku_name) && o["availableQuantity"].as_u64().is_some_and(|a| a > q)
            {
                o["availableQuantity"] = json!(q);
            }
        }
    }
    for (id, available, price) in changes {
        if let Some(o) = s.offers.get_mut(&id) {
            if let Some(a) = available {
                o["availableQuantity"] = json!(a);
            }
            if let Some(p) = price {
                o["pricingSummary"]["price"] = p;
            }
        }
    }
    answer(&sku, 200, Vec::new())
}

/// The calendar day in Pacific time (America/Los_Angeles: UTC-8, UTC-7 from the second Sunday
/// of March to the first Sunday of November, at 2:00 local) of `at`, as days since 1970-01-01.
pub(crate) fn pacific_day(at: std::time::SystemTime) -> i64 {
    let secs = match at.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    (secs + pacific_offset(secs)).div_euclid(86_400)
}

/// Pacific time's offset from UTC at `secs` (seconds since the epoch, UTC).
fn pacific_offset(secs: i64) -> i64 {
    let days = secs.div_euclid(86_400);
    let (year, _, _) = crate::orders::civil_from_days(days);
    let sunday_on_or_after = |d: i64| d + (7 - (d + 4).rem_euclid(7)) % 7;
    // 2:00 PST is 10:00 UTC; 2:00 PDT is 9:00 UTC.
    let start =
        (sunday_on_or_after(crate::orders::days_from_civil(year, 3, 1)) + 7) * 86_400 + 10 * 3_600;
    let end = sunday_on_or_after(crate::orders::days_from_civil(year, 11, 1)) * 86_400 + 9 * 3_600;
    if (start..end).contains(&secs) {
        -7 * 3_600
    } else {
        -8 * 3_600
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::pacific_day;

    #[test]
    fn the_pacific_day_turns_at_local_midnight_in_winter_and_summer() {
        // 2026-01-15T07:59:59Z is 23:59:59 PST on the 14th; 08:00Z is midnight of the 15th.
        let jan = |s| pacific_day(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(jan(1_768_463_999) + 1, jan(1_768_464_000));
        // 2026-07-15T06:59:59Z is 23:59:59 PDT on the 14th; 07:00Z is midnight of the 15th.
        assert_eq!(jan(1_784_098_799) + 1, jan(1_784_098_800));
    }
}
