//! The Account API's business policies (`/sell/account/v1`): getFulfillmentPolicies,
//! getPaymentPolicies and getReturnPolicies (`?marketplace_id=…`), per seller (the user a
//! token was issued for) and marketplace, as eBay's OpenAPI description of the Account API
//! (sell_account_v1_oas3.json) gives them.
//!
//! Each seller starts with one **made-up** policy of each kind on every marketplace
//! ([`seeded_policy_id`]: "Standard shipping", "Managed payments", "30 days returns", ids
//! that tell the marketplace apart); a test adds more with [`FakeMarketplace::add_policy`].
//! As eBay answers: a token without `…/sell.account` or `…/sell.account.readonly` (or an
//! application token): 403, errorId 1100; no `marketplace_id`: 400, errorId 20401; one that is
//! not a marketplace: 400, errorId 20403.
//!
//! publishOffer (inventory.rs) refuses an offer naming a policy the seller has on another
//! marketplace than the offer's (`policy_marketplace`), as eBay does (25007, 25008, 25009:
//! "invalid data in the associated … policy").

use std::collections::HashMap;
use std::sync::Mutex;

use marketplaces::Marketplace;
use serde_json::{Value, json};

use crate::http::{Request, Response};
use crate::{FakeMarketplace, FakeState, Route, lock};

const BASE: &str = "/sell/account/v1";

/// A kind of business policy: its path, the answer's array, the id field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// getFulfillmentPolicies: `fulfillmentPolicies`, `fulfillmentPolicyId`.
    Fulfillment,
    /// getPaymentPolicies: `paymentPolicies`, `paymentPolicyId`.
    Payment,
    /// getReturnPolicies: `returnPolicies`, `returnPolicyId`.
    Return,
}

impl PolicyKind {
    const ALL: [PolicyKind; 3] = [Self::Fulfillment, Self::Payment, Self::Return];

    fn path(self) -> &'static str {
        match self {
            Self::Fulfillment => "fulfillment_policy",
            Self::Payment => "payment_policy",
            Self::Return => "return_policy",
        }
    }

    fn array(self) -> &'static str {
        match self {
            Self::Fulfillment => "fulfillmentPolicies",
            Self::Payment => "paymentPolicies",
            Self::Return => "returnPolicies",
        }
    }

    /// The id field, in a policy and in an offer's `listingPolicies`.
    pub(crate) fn id_field(self) -> &'static str {
        match self {
            Self::Fulfillment => "fulfillmentPolicyId",
            Self::Payment => "paymentPolicyId",
            Self::Return => "returnPolicyId",
        }
    }

    fn seeded_name(self) -> &'static str {
        match self {
            Self::Fulfillment => "Standard shipping",
            Self::Payment => "Managed payments",
            Self::Return => "30 days returns",
        }
    }

    /// The kind whose offer field is `field` (`fulfillmentPolicyId`, …).
    pub(crate) fn of_field(field: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.id_field() == field)
    }
}

/// The policies tests added: (seller, kind) -> (marketplace, policy).
type Added = HashMap<(String, PolicyKind), Vec<(Marketplace, Value)>>;

/// The Account part of the fake's state.
#[derive(Default)]
pub(crate) struct AccountState {
    added: Mutex<Added>,
}

/// The id of the made-up policy of `kind` every seller has on `marketplace`: a digit for the
/// kind (5 fulfillment, 6 payment, 7 return), the marketplace's position in eBay's table, and
/// `000001` (`"5000001"` on EBAY_US's…): eBay's ids are long numbers, unique per seller.
pub fn seeded_policy_id(kind: PolicyKind, marketplace: Marketplace) -> String {
    let digit = match kind {
        PolicyKind::Fulfillment => 5,
        PolicyKind::Payment => 6,
        PolicyKind::Return => 7,
    };
    let position = Marketplace::ALL
        .iter()
        .position(|m| *m == marketplace)
        .unwrap_or_default();
    format!("{digit}{position:02}000001")
}

fn policy(kind: PolicyKind, marketplace: Marketplace, id: &str, name: &str) -> Value {
    let mut policy = json!({
        kind.id_field(): id,
        "name": name,
        "marketplaceId": marketplace.marketplace_id(),
        "categoryTypes": [{"name": "ALL_EXCLUDING_MOTORS_VEHICLES", "default": true}],
    });
    match kind {
        PolicyKind::Fulfillment => policy["handlingTime"] = json!({"unit": "DAY", "value": 1}),
        PolicyKind::Payment => policy["immediatePay"] = json!(true),
        PolicyKind::Return => {
            policy["returnsAccepted"] = json!(true);
            policy["returnPeriod"] = json!({"unit": "DAY", "value": 30});
            policy["returnShippingCostPayer"] = json!("BUYER");
        }
    }
    policy
}

/// Every policy of `kind` `seller` has on `marketplace`: the made-up one, then those added.
fn policies_of(
    state: &FakeState,
    seller: &str,
    kind: PolicyKind,
    marketplace: Marketplace,
) -> Vec<Value> {
    let seeded = seeded_policy_id(kind, marketplace);
    let mut all = vec![policy(kind, marketplace, &seeded, kind.seeded_name())];
    if let Some(added) = lock(&state.account.added).get(&(seller.to_owned(), kind)) {
        all.extend(
            added
                .iter()
                .filter(|(m, _)| *m == marketplace)
                .map(|(_, p)| p.clone()),
        );
    }
    all
}

/// The marketplace on which `seller` has the policy `id` of `kind`, if any.
pub(crate) fn policy_marketplace(
    state: &FakeState,
    seller: &str,
    kind: PolicyKind,
    id: &str,
) -> Option<Marketplace> {
    if let Some(m) = Marketplace::ALL
        .iter()
        .find(|m| seeded_policy_id(kind, **m) == id)
    {
        return Some(*m);
    }
    lock(&state.account.added)
        .get(&(seller.to_owned(), kind))?
        .iter()
        .find(|(_, p)| p[kind.id_field()].as_str() == Some(id))
        .map(|(m, _)| *m)
}

fn error(status: u16, id: u32, message: &str, field: &str) -> Response {
    Response::json(
        status,
        &json!({"errors": [{
            "errorId": id, "domain": "API_ACCOUNT", "category": "REQUEST", "message": message,
            "parameters": [{"name": "fieldName", "value": field}],
        }]}),
    )
}

pub(crate) fn routes() -> Vec<Route> {
    PolicyKind::ALL
        .into_iter()
        .map(|kind| {
            Route::new(
                "GET",
                &format!("{BASE}/{}", kind.path()),
                move |request: &Request, state: &FakeState| get_policies(request, state, kind),
            )
        })
        .collect()
}

/// The seller of the request's user token with an Account API scope, or the answer to send.
fn seller(request: &Request, state: &FakeState) -> Result<String, Response> {
    let token = state
        .check_scope(request, "/sell.account")
        .or_else(|_| state.check_scope(request, "/sell.account.readonly"))?;
    if !token.token_type.starts_with("User") {
        return Err(state.insufficient_scope());
    }
    Ok(state.seller_of(&token))
}

fn get_policies(request: &Request, state: &FakeState, kind: PolicyKind) -> Response {
    let seller = match seller(request, state) {
        Ok(seller) => seller,
        Err(response) => return response,
    };
    let Some(id) = request.query_param("marketplace_id") else {
        return error(400, 20401, "Missing field marketplaceId.", "marketplaceId");
    };
    let Some(marketplace) = Marketplace::from_marketplace_id(&id) else {
        return error(400, 20403, "Invalid marketplaceId.", "marketplaceId");
    };
    let policies = policies_of(state, &seller, kind, marketplace);
    Response::json(
        200,
        &json!({
            kind.array(): policies, "total": policies.len(), "limit": 20, "offset": 0,
            "href": format!("{}{BASE}/{}?marketplace_id={id}", state.base_url(), kind.path()),
        }),
    )
}

impl FakeMarketplace {
    /// Gives the fake's user (the seller its user tokens are issued for) a policy of `kind`
    /// on `marketplace`, with `id` and `name`, from now on: getFulfillmentPolicies (…) list it,
    /// and publishOffer refuses it on an offer of another marketplace.
    pub fn add_policy(&self, kind: PolicyKind, marketplace: Marketplace, id: &str, name: &str) {
        let state = self.state();
        let seller = format!("user:{}", lock(&state.notify.user).username);
        lock(&state.account.added)
            .entry((seller, kind))
            .or_default()
            .push((marketplace, policy(kind, marketplace, id, name)));
    }
}
