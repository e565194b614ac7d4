//! Which API resource a call draws from: eBay counts calls per API resource and names each
//! after its API (getRateLimits' `resources[].name`: `sell.inventory`, `buy.browse`,
//! `commerce.taxonomy`, …). One table maps the path of every REST call this workspace makes
//! to its resource; a path outside it (the OAuth token endpoint, an API not listed) is not
//! counted.

/// One API of the table: the path prefix of its calls, its `apiContext` and `apiName` (the
/// filters of getRateLimits) and the name of the resource its calls count against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiResource {
    /// The path prefix of the API's calls, such as `/sell/inventory/v1/`.
    pub path_prefix: &'static str,
    /// `apiContext`: `sell`, `buy`, `commerce` or `developer`.
    pub api_context: &'static str,
    /// `apiName`: `inventory`, `taxonomy`, …
    pub api_name: &'static str,
    /// The resource's name in getRateLimits' answer (`resources[].name`).
    pub resource: &'static str,
}

const fn row(
    path_prefix: &'static str,
    api_context: &'static str,
    api_name: &'static str,
    resource: &'static str,
) -> ApiResource {
    ApiResource {
        path_prefix,
        api_context,
        api_name,
        resource,
    }
}

/// Every API this workspace calls, and the resource its calls count against.
pub const API_RESOURCES: &[ApiResource] = &[
    // marketplace-listing: the Inventory API (items, offers, publishOffer, the bulk calls,
    // locations, bulkUpdatePriceQuantity).
    row("/sell/inventory/v1/", "sell", "inventory", "sell.inventory"),
    // marketplace-orders: getOrders, getOrder, createShippingFulfillment, issueRefund.
    row(
        "/sell/fulfillment/v1/",
        "sell",
        "fulfillment",
        "sell.fulfillment",
    ),
    // `listing publish`'s policy check: getFulfillmentPolicies, getPaymentPolicies, …
    row("/sell/account/v1/", "sell", "account", "sell.account"),
    // getItemConditionPolicies.
    row("/sell/metadata/v1/", "sell", "metadata", "sell.metadata"),
    // getTransactions, getPayouts (signed).
    row("/sell/finances/v1/", "sell", "finances", "sell.finances"),
    // marketplace-client's Taxonomy client.
    row(
        "/commerce/taxonomy/v1/",
        "commerce",
        "taxonomy",
        "commerce.taxonomy",
    ),
    // getUser (the consent's user).
    row(
        "/commerce/identity/v1/",
        "commerce",
        "identity",
        "commerce.identity",
    ),
    // getPublicKey, subscriptions, destinations.
    row(
        "/commerce/notification/v1/",
        "commerce",
        "notification",
        "commerce.notification",
    ),
    // createSigningKey, getSigningKey(s).
    row(
        "/developer/key_management/v1/",
        "developer",
        "key_management",
        "developer.key_management",
    ),
    // getRateLimits, getUserRateLimits themselves.
    row(
        "/developer/analytics/v1_beta/",
        "developer",
        "analytics",
        "developer.analytics",
    ),
];

/// The API (and resource) of a call to `path` (the URL's path, such as
/// `/sell/inventory/v1/offer/123/publish`), or `None` for a path no API of the table serves.
///
/// ```
/// let api = marketplace_budget::resource_of("/sell/inventory/v1/bulk_update_price_quantity").unwrap();
/// assert_eq!((api.api_context, api.api_name, api.resource), ("sell", "inventory", "sell.inventory"));
/// assert!(marketplace_budget::resource_of("/identity/v1/oauth2/token").is_none());
/// ```
pub fn resource_of(path: &str) -> Option<&'static ApiResource> {
    API_RESOURCES
        .iter()
        .find(|r| path.starts_with(r.path_prefix))
}

/// The API of the table whose resource is named `resource`.
pub fn api_of_resource(resource: &str) -> Option<&'static ApiResource> {
    API_RESOURCES.iter().find(|r| r.resource == resource)
}
