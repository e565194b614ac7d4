//! Subscribing an endpoint to a topic from code, with eBay's Notification API: updateConfig
//! (the alert email eBay requires before any destination or subscription: 195003 otherwise),
//! createDestination (eBay sends the endpoint its challenge before it answers, so the endpoint
//! must already be serving, with the same verification token) and createSubscription.

use marketplace_client::aio::api::{ApiClient, ApiError, ApiRequest, ApiResponse};

use crate::{ORDER_CONFIRMATION_TOPIC, VerificationToken};

/// A Notification API call that failed: the call, and eBay's error (its `errorId` and message
/// kept, see [`SubscribeError::error_id`]) or what was wrong with its answer.
#[derive(Debug, thiserror::Error)]
pub enum SubscribeError {
    /// The call failed or eBay refused it (for example 195020: the endpoint's challenge
    /// failed; 195011: the token may not subscribe to the topic).
    #[error("{call}: {source}")]
    Api {
        /// `updateConfig`, `createDestination` or `createSubscription`.
        call: &'static str,
        /// The client's error, eBay's error body included.
        source: ApiError,
    },
    /// eBay answered 201 without a `Location` header ending in the new resource's id.
    #[error("{call} answered {status} without a Location naming the new {what}")]
    NoLocation {
        /// `createDestination` or `createSubscription`.
        call: &'static str,
        /// The status answered.
        status: u16,
        /// `destination` or `subscription`.
        what: &'static str,
    },
}

impl SubscribeError {
    /// eBay's `errorId` (195000 to 195027 for these calls), when eBay answered with one.
    pub fn error_id(&self) -> Option<u32> {
        match self {
            SubscribeError::Api { source, .. } => source.error_id(),
            SubscribeError::NoLocation { .. } => None,
        }
    }

    /// The HTTP status eBay answered, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            SubscribeError::Api { source, .. } => source.status(),
            SubscribeError::NoLocation { status, .. } => Some(*status),
        }
    }
}

/// What [`subscribe_to_order_confirmations`] created: the ids eBay gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscribed {
    /// createDestination's destination id.
    pub destination_id: String,
    /// createSubscription's subscription id.
    pub subscription_id: String,
}

fn path(rest: &str) -> Vec<&str> {
    let mut segments = vec!["commerce", "notification", "v1"];
    segments.push(rest);
    segments
}

/// The id at the end of a 201's `Location` header.
fn created_id(
    answer: &ApiResponse,
    call: &'static str,
    what: &'static str,
) -> Result<String, SubscribeError> {
    answer
        .header("Location")
        .and_then(|l| l.trim_end_matches('/').rsplit('/').next())
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or(SubscribeError::NoLocation {
            call,
            status: answer.status(),
            what,
        })
}

/// updateConfig: the application's alert email (`alertEmail`), which eBay requires before
/// createDestination and createSubscription. `app` holds an application token.
pub async fn update_config(app: &ApiClient, alert_email: &str) -> Result<(), SubscribeError> {
    let request = ApiRequest::put_segments(path("config"))
        .operation("updateConfig")
        .json(&serde_json::json!({ "alertEmail": alert_email }));
    app.send(request)
        .await
        .map(drop)
        .map_err(|source| SubscribeError::Api {
            call: "updateConfig",
            source,
        })
}

/// createDestination: `endpoint` (exactly the URL the endpoint hashes in its challenge
/// answer), enabled, with its verification token, under `name` (at most 64 characters). eBay
/// runs the challenge before it answers. The destination id. `app` holds an application token.
pub async fn create_destination(
    app: &ApiClient,
    name: &str,
    endpoint: &str,
    token: &VerificationToken,
) -> Result<String, SubscribeError> {
    const CALL: &str = "createDestination";
    let request = ApiRequest::post_segments(path("destination"))
        .operation(CALL)
        .json(&serde_json::json!({
            "name": name,
            "status": "ENABLED",
            "deliveryConfig": {"endpoint": endpoint, "verificationToken": token.secret()},
        }));
    let answer = app
        .send(request)
        .await
        .map_err(|source| SubscribeError::Api { call: CALL, source })?;
    created_id(&answer, CALL, "destination")
}

/// createSubscription: `topic_id` (schema version 1.0, JSON over HTTPS, enabled) to the
/// destination `destination_id`. A seller's topic (ORDER_CONFIRMATION) takes that seller's
/// user token granting `https://api.ebay.com/oauth/api_scope/commerce.notification.subscription`
/// (eBay: 195011 otherwise). The subscription id.
pub async fn create_subscription(
    api: &ApiClient,
    topic_id: &str,
    destination_id: &str,
) -> Result<String, SubscribeError> {
    const CALL: &str = "createSubscription";
    let request = ApiRequest::post_segments(path("subscription"))
        .operation(CALL)
        .json(&serde_json::json!({
            "topicId": topic_id,
            "status": "ENABLED",
            "destinationId": destination_id,
            "payload": {"format": "JSON", "schemaVersion": "1.0", "deliveryProtocol": "HTTPS"},
        }));
    let answer = api
        .send(request)
        .await
        .map_err(|source| SubscribeError::Api { call: CALL, source })?;
    created_id(&answer, CALL, "subscription")
}

/// The three calls in eBay's order: updateConfig with `alert_email` and createDestination for
/// `endpoint` (through `app`, an application token), then createSubscription to
/// ORDER_CONFIRMATION through `seller` (the seller's user token granting
/// `commerce.notification.subscription`). The endpoint must be answering the challenge.
pub async fn subscribe_to_order_confirmations(
    app: &ApiClient,
    seller: &ApiClient,
    alert_email: &str,
    name: &str,
    endpoint: &str,
    token: &VerificationToken,
) -> Result<Subscribed, SubscribeError> {
    update_config(app, alert_email).await?;
    let destination_id = create_destination(app, name, endpoint, token).await?;
    let subscription_id =
        create_subscription(seller, ORDER_CONFIRMATION_TOPIC, &destination_id).await?;
    Ok(Subscribed {
        destination_id,
        subscription_id,
    })
}
