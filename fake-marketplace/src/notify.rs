//! eBay's Notification API and Identity API, faked, and the fake as the sender of
//! notifications.
//!
//! * getPublicKey (`GET /commerce/notification/v1/public_key/{kid}`, an application token):
//!   `{"algorithm":"ECDSA","digest":"SHA1","key":"-----BEGIN PUBLIC KEY-----…-----END PUBLIC KEY-----"}`,
//!   the PEM without line breaks as eBay sends it; an unknown `kid` is a 404.
//! * getUser (`GET /commerce/identity/v1/user/`, a user token whose scopes hold
//!   `…/oauth/api_scope/commerce.identity.readonly`, else 403 as eBay answers): the fake's current user
//!   ([`FakeMarketplace::set_user`]), `{"userId": …, "username": …, "accountType": "INDIVIDUAL"}`.
//! * [`FakeMarketplace::run_challenge`]: eBay's check of an endpoint (`GET
//!   <endpoint>?challenge_code=…`, the answer compared with SHA-256 over the code, the
//!   verification token and the endpoint URL).
//! * [`FakeMarketplace::send_notification`]: a signed `MARKETPLACE_ACCOUNT_DELETION`
//!   notification `POST`ed to an endpoint with `X-EBAY-SIGNATURE` (ECDSA P-256 over SHA-1 of
//!   the body, DER, as eBay signs), again with the same `notificationId` as eBay's retries, or
//!   tampered ([`Tamper`]).
//!
//! * updateConfig (`PUT /commerce/notification/v1/config`, `alertEmail`, else 195025),
//!   createDestination (`POST …/destination`: eBay's challenge run against the endpoint before
//!   the 201, whose `Location` names the destination; 195016 to 195021, 195003 before a
//!   config) and createSubscription (`POST …/subscription`, ORDER_CONFIRMATION only, with a
//!   seller's user token granting `commerce.notification.subscription`, else 403 195011;
//!   195006 to 195012, 195015, 195027, 195003), each with an application token where eBay's
//!   description asks for one. `http://` endpoints are taken (loopback tests).
//! * ORDER_CONFIRMATION (eBay's AsyncAPI contract `order_confirmation.yaml`): when a buyer
//!   completes checkout ([`FakeMarketplace::buy`] paid at once, or
//!   [`FakeMarketplace::complete_payment`]), the fake `POST`s a signed notification whose
//!   `notification.data.orderId` names the order to every endpoint subscribed to the topic for
//!   the order's seller (createSubscription, or in-process
//!   [`FakeMarketplace::subscribe_order_confirmations`]), before
//!   the purchase returns; [`FakeMarketplace::fault_next_notification`] drops the next one or
//!   sends it twice (the same `notificationId`), and [`FakeMarketplace::sent_notifications`]
//!   says what was sent and answered.
//!
//! The client side of HTTP here is a few lines over `TcpStream` (plain `http://` only: the
//! endpoint under test listens on loopback).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha1::Sha1;
use sha2::{Digest as _, Sha256};

use crate::{FakeMarketplace, FakeState, Request, Response, Route, lock};

/// getPublicKey's path below the API host (`{kid}` appended).
pub const PUBLIC_KEY_PATH: &str = "/commerce/notification/v1/public_key/";
/// getUser's path below the API host.
pub const USER_PATH: &str = "/commerce/identity/v1/user/";
/// The scope getUser needs, after `…/oauth/api_scope` (eBay's
/// `https://api.ebay.com/oauth/api_scope/commerce.identity.readonly`).
pub const IDENTITY_SCOPE_SUFFIX: &str = "/commerce.identity.readonly";

/// The eBay user getUser answers for the fake's user tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeUser {
    /// `userId`: eBay's immutable id of the user.
    pub user_id: String,
    /// `username`.
    pub username: String,
}

impl Default for FakeUser {
    fn default() -> Self {
        Self {
            user_id: "fakeSeller0001".into(),
            username: "fake_seller".into(),
        }
    }
}

pub(crate) struct NotifyState {
    signer: NotificationSigner,
    pub(crate) user: std::sync::Mutex<FakeUser>,
    /// (seller username, endpoint) subscribed to ORDER_CONFIRMATION.
    subscriptions: std::sync::Mutex<Vec<(String, String)>>,
    /// updateConfig's `alertEmail` (none: createDestination and createSubscription answer 195003).
    alert_email: std::sync::Mutex<Option<String>>,
    /// createDestination's destinations: (destinationId, endpoint, status).
    destinations: std::sync::Mutex<Vec<(String, String, String)>>,
    /// createSubscription's subscriptions: (seller, topicId, destinationId).
    created: std::sync::Mutex<Vec<(String, String, String)>>,
    faults: std::sync::Mutex<std::collections::VecDeque<DeliveryFault>>,
    sent: std::sync::Mutex<Vec<SentNotification>>,
}

impl NotifyState {
    pub(crate) fn new(base_url: &str) -> Self {
        Self {
            signer: NotificationSigner::of_fake(base_url),
            user: std::sync::Mutex::new(FakeUser::default()),
            subscriptions: std::sync::Mutex::default(),
            alert_email: std::sync::Mutex::default(),
            destinations: std::sync::Mutex::default(),
            created: std::sync::Mutex::default(),
            faults: std::sync::Mutex::default(),
            sent: std::sync::Mutex::default(),
        }
    }
}

/// The topic eBay sends when a buyer completes checkout.
pub const ORDER_CONFIRMATION_TOPIC: &str = "ORDER_CONFIRMATION";

/// A fault of the next notification the fake sends ([`FakeMarketplace::fault_next_notification`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryFault {
    /// Not sent at all (lost on the way).
    Drop,
    /// Sent twice, the same body (the same `notificationId`) both times.
    Twice,
}

/// A notification the fake sent (or dropped), as [`FakeMarketplace::sent_notifications`]
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentNotification {
    /// `metadata.topic`.
    pub topic: String,
    /// `notification.notificationId`.
    pub notification_id: String,
    /// `notification.data.orderId`.
    pub order_id: String,
    /// Where it went.
    pub endpoint: String,
    /// What the endpoint answered to each delivery: a status, or the I/O error's text; empty
    /// when the notification was dropped.
    pub answers: Vec<Result<u16, String>>,
}

/// An ORDER_CONFIRMATION body as eBay sends it: `metadata{topic, schemaVersion, deprecated}`,
/// `notification{notificationId, eventDate, publishDate, publishAttemptCount, data{orderId}}`.
pub fn order_confirmation_body(notification_id: &str, order_id: &str, at: &str) -> String {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Body<'a> {
        metadata: Metadata,
        notification: Notification<'a>,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Metadata {
        topic: &'static str,
        schema_version: &'static str,
        deprecated: bool,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Notification<'a> {
        notification_id: &'a str,
        event_date: &'a str,
        publish_date: &'a str,
        publish_attempt_count: u32,
        data: Data<'a>,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Data<'a> {
        order_id: &'a str,
    }
    serde_json::to_string(&Body {
        metadata: Metadata {
            topic: ORDER_CONFIRMATION_TOPIC,
            schema_version: "1.0",
            deprecated: false,
        },
        notification: Notification {
            notification_id,
            event_date: at,
            publish_date: at,
            publish_attempt_count: 1,
            data: Data { order_id },
        },
    })
    .unwrap_or_default()
}

/// Sends ORDER_CONFIRMATION for `order_id` of `seller` (a username) to each endpoint
/// subscribed for that seller, as the next fault says; called with no lock of the fake held.
pub(crate) fn order_confirmed(state: &FakeState, seller: &str, order_id: &str, at: &str) {
    let endpoints: Vec<String> = lock(&state.notify.subscriptions)
        .iter()
        .filter(|(s, _)| s == seller)
        .map(|(_, e)| e.clone())
        .collect();
    for endpoint in endpoints {
        let notification_id = format!(
            "{:08x}-fake-4c0f-8d1e-{:012x}",
            state.next_id(),
            state.next_id()
        );
        let body = order_confirmation_body(&notification_id, order_id, at);
        let header = state.notify.signer.signature_header(body.as_bytes());
        let times = match lock(&state.notify.faults).pop_front() {
            Some(DeliveryFault::Drop) => 0,
            Some(DeliveryFault::Twice) => 2,
            None => 1,
        };
        let answers = (0..times)
            .map(|_| {
                send(
                    "POST",
                    &endpoint,
                    &[
                        ("Content-Type", "application/json"),
                        ("X-EBAY-SIGNATURE", &header),
                    ],
                    body.as_bytes(),
                )
                .map(|d| d.status)
                .map_err(|e| e.to_string())
            })
            .collect();
        lock(&state.notify.sent).push(SentNotification {
            topic: ORDER_CONFIRMATION_TOPIC.to_owned(),
            notification_id,
            order_id: order_id.to_owned(),
            endpoint,
            answers,
        });
    }
}

/// The notification key of the fake at a base URL, and eBay's side of a notification:
/// signing and sending. A fake's key is derived from its address (fixed for that address,
/// different between two fakes: a key of one fake does not verify the other's
/// notifications), so that `fake-marketplace notify --fake URL` signs with the key the
/// running fake at `URL` serves on getPublicKey.
#[derive(Clone)]
pub struct NotificationSigner {
    kid: String,
    key: SigningKey,
    pem_one_line: String,
}

impl std::fmt::Debug for NotificationSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationSigner")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl NotificationSigner {
    /// The key of the fake whose base URL is `base_url` (as it prints it, e.g.
    /// `http://127.0.0.1:41234`).
    pub fn of_fake(base_url: &str) -> Self {
        let base_url = base_url.trim_end_matches('/');
        let seed = Sha256::digest(format!("fake-marketplace notification key {base_url}"));
        let key = SigningKey::from_slice(&seed).expect("a SHA-256 output is a valid P-256 scalar");
        let pem = key
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .expect("a P-256 public key encodes as a PEM");
        // A UUID, as eBay's key ids are (version 4 and variant bits set, from the key's hash).
        let hex = format!("{:x}", Sha256::digest(pem.as_bytes()));
        let kid = format!(
            "{}-{}-4{}-a{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..32]
        );
        Self {
            kid,
            key,
            pem_one_line: pem.lines().collect(),
        }
    }

    /// The key id (the `kid` of the signature headers).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as getPublicKey answers it: a PEM without line breaks.
    pub fn public_key_pem(&self) -> &str {
        &self.pem_one_line
    }

    /// The `X-EBAY-SIGNATURE` header over `body`.
    pub fn signature_header(&self, body: &[u8]) -> String {
        let signature: Signature = self
            .key
            .sign_prehash(&Sha1::digest(body))
            .expect("a SHA-1 digest is a valid prehash for P-256");
        // eBay's key order (`serde_json::json!` sorts the keys).
        #[derive(serde::Serialize)]
        struct Header<'a> {
            alg: &'a str,
            kid: &'a str,
            signature: String,
            digest: &'a str,
        }
        let json = serde_json::to_string(&Header {
            alg: "ecdsa",
            kid: &self.kid,
            signature: base64_encode(signature.to_der().as_bytes()),
            digest: "SHA1",
        })
        .unwrap_or_default();
        base64_encode(json.as_bytes())
    }

    /// `POST`s `notice` to `endpoint` (an `http://` URL) with its `X-EBAY-SIGNATURE`, as eBay
    /// sends a notification, spoiled as `notice.tamper` says.
    pub fn send(&self, endpoint: &str, notice: &AccountDeletionNotice) -> io::Result<Delivery> {
        let body = notice.body();
        let header = match notice.tamper {
            Tamper::Signature => self.signature_header(b"{\"another\":\"message\"}"),
            _ => self.signature_header(body.as_bytes()),
        };
        let body = match notice.tamper {
            Tamper::Body => {
                let name = &notice.username;
                let mut changed = name.clone();
                let last = changed.pop().unwrap_or('x');
                changed.push(if last == 'z' { 'y' } else { 'z' });
                body.replace(&format!("\"{name}\""), &format!("\"{changed}\""))
            }
            _ => body,
        };
        send(
            "POST",
            endpoint,
            &[
                ("Content-Type", "application/json"),
                ("X-EBAY-SIGNATURE", &header),
            ],
            body.as_bytes(),
        )
    }
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "GET",
            "/commerce/notification/v1/public_key/{kid}",
            public_key,
        ),
        Route::new("GET", USER_PATH, get_user),
        Route::new("PUT", CONFIG_PATH, update_config),
        Route::new("POST", DESTINATION_PATH, create_destination),
        Route::new("POST", SUBSCRIPTION_PATH, create_subscription),
    ]
}

/// updateConfig's path.
pub const CONFIG_PATH: &str = "/commerce/notification/v1/config";
/// createDestination's path.
pub const DESTINATION_PATH: &str = "/commerce/notification/v1/destination";
/// createSubscription's path.
pub const SUBSCRIPTION_PATH: &str = "/commerce/notification/v1/subscription";

/// An application token (client credentials), or the answer refusing the request.
fn application_token(request: &Request, state: &FakeState, call: &str) -> Result<(), Response> {
    match state.check_bearer(request) {
        Err(denied) => Err(denied),
        Ok(token) if token.token_type != "Application Access Token" => Err(error(
            403,
            1100,
            &format!("Access denied: {call} takes an application token"),
        )),
        Ok(_) => Ok(()),
    }
}

fn body_json(request: &Request) -> serde_json::Value {
    serde_json::from_slice(&request.body).unwrap_or(serde_json::Value::Null)
}

fn no_config(state: &FakeState) -> Option<Response> {
    lock(&state.notify.alert_email).is_none().then(|| {
        error(
            409,
            195003,
            "Please provide configurations required for notifications. Refer to /config",
        )
    })
}

/// updateConfig: `{"alertEmail"}` (an application token).
fn update_config(request: &Request, state: &FakeState) -> Response {
    if let Err(denied) = application_token(request, state, "updateConfig") {
        return denied;
    }
    let body = body_json(request);
    match body["alertEmail"].as_str() {
        Some(email) if email.contains('@') && !email.starts_with('@') && !email.ends_with('@') => {
            *lock(&state.notify.alert_email) = Some(email.to_owned());
            Response::new(204, Vec::new())
        }
        _ => error(400, 195025, "Invalid or missing email."),
    }
}

/// createDestination: `{"name", "status", "deliveryConfig": {"endpoint",
/// "verificationToken"}}` (an application token); the endpoint's challenge is run before the
/// answer, as eBay does.
fn create_destination(request: &Request, state: &FakeState) -> Response {
    if let Err(denied) = application_token(request, state, "createDestination") {
        return denied;
    }
    let body = body_json(request);
    let name = body["name"].as_str().unwrap_or("");
    if name.is_empty() || name.len() > 64 || name.contains(['<', '>']) {
        return error(
            400,
            195016,
            "Invalid name. Markups or lengths greater than 64 not supported",
        );
    }
    let endpoint = body["deliveryConfig"]["endpoint"].as_str().unwrap_or("");
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return error(400, 195017, "Invalid or missing endpoint.");
    }
    let status = body["status"].as_str().unwrap_or("");
    if status != "ENABLED" && status != "DISABLED" {
        return error(
            400,
            195018,
            "Invalid or missing destination status. Supported values:[ENABLED,DISABLED]",
        );
    }
    let Some(token) = body["deliveryConfig"]["verificationToken"].as_str() else {
        return error(
            400,
            195019,
            "Invalid or missing verification token for this endpoint.",
        );
    };
    if let Some(refused) = no_config(state) {
        return refused;
    }
    if lock(&state.notify.destinations)
        .iter()
        .any(|(_, e, _)| e == endpoint)
    {
        return error(409, 195021, "Destination exists for this endpoint");
    }
    let passed = FakeMarketplace::challenge(state, endpoint, token).is_ok_and(|o| o.passed());
    if !passed {
        return error(
            409,
            195020,
            "Challenge verification failed for requested endpoint",
        );
    }
    let id = format!(
        "{:08x}-fake-4d57-9a1b-{:012x}",
        state.next_id(),
        state.next_id()
    );
    lock(&state.notify.destinations).push((id.clone(), endpoint.to_owned(), status.to_owned()));
    Response::json(201, &serde_json::json!({})).with_header(
        "Location",
        format!("{}{DESTINATION_PATH}/{id}", state.base_url()),
    )
}

/// createSubscription: `{"topicId", "status", "destinationId", "payload": {"format",
/// "schemaVersion", "deliveryProtocol"}}`. ORDER_CONFIRMATION is a seller's topic: a user
/// token with `commerce.notification.subscription` (else 403, 195011); the seller's
/// checkouts are sent to the destination from then on (when `ENABLED`).
fn create_subscription(request: &Request, state: &FakeState) -> Response {
    let token = match state.check_bearer(request) {
        Ok(token) => token,
        Err(denied) => return denied,
    };
    let body = body_json(request);
    let topic = body["topicId"].as_str().unwrap_or("");
    if topic != ORDER_CONFIRMATION_TOPIC {
        return error(400, 195027, "Invalid or missing topic id.");
    }
    let status = body["status"].as_str().unwrap_or("");
    if status != "ENABLED" && status != "DISABLED" {
        return error(400, 195006, "Invalid or missing subscription status.");
    }
    let payload = &body["payload"];
    if payload["schemaVersion"].as_str() != Some("1.0") {
        return error(
            400,
            195008,
            "Invalid or missing schema version. Please refer to /topic/{topic_id} for supported schema versions.",
        );
    }
    if payload["format"].as_str() != Some("JSON") {
        return error(
            400,
            195009,
            "Specified format is not supported for the topic.",
        );
    }
    if payload["deliveryProtocol"].as_str() != Some("HTTPS") {
        return error(400, 195010, "Invalid or missing protocol");
    }
    let destination_id = body["destinationId"].as_str().unwrap_or("");
    let destination = lock(&state.notify.destinations)
        .iter()
        .find(|(id, _, _)| id == destination_id)
        .cloned();
    let Some((_, endpoint, destination_status)) = destination else {
        return error(400, 195007, "Invalid or missing destination id.");
    };
    let authorized = token.token_type == "User Access Token"
        && token
            .scopes
            .iter()
            .any(|s| s.ends_with("/oauth/api_scope/commerce.notification.subscription"));
    if !authorized {
        return error(403, 195011, "Not authorized for this topic.");
    }
    if let Some(refused) = no_config(state) {
        return refused;
    }
    let seller = state.seller_of(&token);
    let seller = seller.strip_prefix("user:").unwrap_or(&seller).to_owned();
    let key = (seller.clone(), topic.to_owned(), destination_id.to_owned());
    let mut created = lock(&state.notify.created);
    if created.contains(&key) {
        return error(409, 195012, "Subscription already exists");
    }
    if status == "ENABLED" && destination_status != "ENABLED" {
        return error(
            409,
            195015,
            "The subscription cannot be enabled since the destination is not enabled.",
        );
    }
    created.push(key);
    drop(created);
    if status == "ENABLED" {
        lock(&state.notify.subscriptions).push((seller, endpoint));
    }
    let id = format!(
        "{:08x}-fake-4e5b-8c2d-{:012x}",
        state.next_id(),
        state.next_id()
    );
    Response::json(201, &serde_json::json!({})).with_header(
        "Location",
        format!("{}{SUBSCRIPTION_PATH}/{id}", state.base_url()),
    )
}

fn error(status: u16, error_id: u32, message: &str) -> Response {
    Response::json(
        status,
        &serde_json::json!({"errors": [{
            "errorId": error_id,
            "domain": "API_NOTIFICATION",
            "category": "REQUEST",
            "message": message,
        }]}),
    )
}

fn public_key(request: &Request, state: &FakeState) -> Response {
    match state.check_bearer(request) {
        Err(denied) => return denied,
        Ok(token) if token.token_type != "Application Access Token" => {
            return error(
                403,
                1100,
                "Access denied: getPublicKey takes an application token",
            );
        }
        Ok(_) => {}
    }
    let signer = &state.notify.signer;
    if request.param("kid") != Some(signer.kid()) {
        return error(404, 195001, "The public key was not found for the key id.");
    }
    Response::json(
        200,
        &serde_json::json!({
            "algorithm": "ECDSA",
            "digest": "SHA1",
            "key": signer.public_key_pem(),
        }),
    )
}

fn get_user(request: &Request, state: &FakeState) -> Response {
    match state.check_bearer(request) {
        Err(denied) => denied,
        Ok(token) if token.token_type != "User Access Token" => {
            error(403, 1100, "Access denied: getUser takes a user token")
        }
        Ok(token)
            if !token
                .scopes
                .iter()
                .any(|s| s.ends_with(&format!("/oauth/api_scope{IDENTITY_SCOPE_SUFFIX}"))) =>
        {
            error(
                403,
                1100,
                "Access denied: Insufficient permissions to fulfill the request (getUser needs the scope commerce.identity.readonly)",
            )
        }
        Ok(_) => {
            let user = lock(&state.notify.user).clone();
            Response::json(
                200,
                &serde_json::json!({
                    "userId": user.user_id,
                    "username": user.username,
                    "accountType": "INDIVIDUAL",
                }),
            )
        }
    }
}

/// How a sent notification is spoiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tamper {
    /// Signed as eBay signs.
    #[default]
    None,
    /// The body changed after signing (the username's last character).
    Body,
    /// The signature of another message.
    Signature,
}

/// A `MARKETPLACE_ACCOUNT_DELETION` notification to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountDeletionNotice {
    /// `notificationId` (the same for eBay's retries of one notification).
    pub notification_id: String,
    /// `data.userId`.
    pub user_id: String,
    /// `data.username`.
    pub username: String,
    /// `data.eiasToken`.
    pub eias_token: String,
    /// `publishAttemptCount` (1 for the first attempt).
    pub attempt: u32,
    /// How it is spoiled, if at all.
    pub tamper: Tamper,
}

impl AccountDeletionNotice {
    /// A first attempt for `user`, with a fresh `notificationId` from `fake`.
    pub fn new(fake: &FakeMarketplace, user: &FakeUser) -> Self {
        Self::with_id(
            format!(
                "{:08x}-fake-4982-42d9-a377-{:012x}",
                fake.state.next_id(),
                fake.state.next_id()
            ),
            user,
        )
    }

    /// A first attempt for `user` with `notificationId` `notification_id`.
    pub fn with_id(notification_id: impl Into<String>, user: &FakeUser) -> Self {
        Self {
            notification_id: notification_id.into(),
            user_id: user.user_id.clone(),
            username: user.username.clone(),
            eias_token: format!("nY+sHZ2PrBmdj6wVnY+s{}==", user.user_id),
            attempt: 1,
            tamper: Tamper::None,
        }
    }

    /// The same notification again, as eBay retries it (`publishAttemptCount` + 1).
    pub fn retry(&self) -> Self {
        Self {
            attempt: self.attempt + 1,
            ..self.clone()
        }
    }

    /// The same notification, spoiled.
    pub fn tampered(&self, tamper: Tamper) -> Self {
        Self {
            tamper,
            ..self.clone()
        }
    }

    /// The body as eBay sends it (compact JSON, its keys in eBay's order).
    pub fn body(&self) -> String {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            metadata: Metadata,
            notification: Notification<'a>,
        }
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Metadata {
            topic: &'static str,
            schema_version: &'static str,
            deprecated: bool,
        }
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Notification<'a> {
            notification_id: &'a str,
            event_date: &'a str,
            publish_date: &'a str,
            publish_attempt_count: u32,
            data: Data<'a>,
        }
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Data<'a> {
            username: &'a str,
            user_id: &'a str,
            eias_token: &'a str,
        }
        serde_json::to_string(&Body {
            metadata: Metadata {
                topic: "MARKETPLACE_ACCOUNT_DELETION",
                schema_version: "1.0",
                deprecated: false,
            },
            notification: Notification {
                notification_id: &self.notification_id,
                event_date: "2026-01-02T03:04:05.678Z",
                publish_date: "2026-01-02T03:04:06.789Z",
                publish_attempt_count: self.attempt,
                data: Data {
                    username: &self.username,
                    user_id: &self.user_id,
                    eias_token: &self.eias_token,
                },
            },
        })
        .unwrap_or_default()
    }
}

/// What an endpoint answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The status.
    pub status: u16,
    /// The headers, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Delivery {
    /// The first header called `name` (without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The outcome of [`FakeMarketplace::run_challenge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeOutcome {
    /// The `challenge_code` sent.
    pub challenge_code: String,
    /// The hex the endpoint had to answer.
    pub expected: String,
    /// What it answered.
    pub delivery: Delivery,
}

impl ChallengeOutcome {
    /// Whether eBay would accept the endpoint: 200, `application/json`, and
    /// `challengeResponse` equal to the expected hex.
    pub fn passed(&self) -> bool {
        let json = self
            .delivery
            .header("Content-Type")
            .is_some_and(|t| t.starts_with("application/json"));
        let answered = serde_json::from_slice::<serde_json::Value>(&self.delivery.body)
            .ok()
            .and_then(|v| v["challengeResponse"].as_str().map(str::to_owned));
        self.delivery.status == 200 && json && answered.as_deref() == Some(&self.expected)
    }
}

impl FakeMarketplace {
    /// The key id of the fake's notification key (the `kid` of its signature headers).
    pub fn notification_kid(&self) -> String {
        self.state.notify.signer.kid().to_owned()
    }

    /// The fake's public key as getPublicKey answers it: a PEM without line breaks.
    pub fn notification_public_key_pem(&self) -> String {
        self.state.notify.signer.public_key_pem().to_owned()
    }

    /// The fake's notification key, to sign and send notifications.
    pub fn notification_signer(&self) -> &NotificationSigner {
        &self.state.notify.signer
    }

    /// The user getUser answers from now on.
    pub fn set_user(&self, user: FakeUser) {
        *lock(&self.state.notify.user) = user;
    }

    /// The user getUser answers.
    pub fn user(&self) -> FakeUser {
        lock(&self.state.notify.user).clone()
    }

    /// Runs eBay's challenge against `endpoint` (an `http://` URL, exactly as registered):
    /// `GET <endpoint>?challenge_code=…`, the answer compared with SHA-256 over the code,
    /// `verification_token` and `endpoint`.
    pub fn run_challenge(
        &self,
        endpoint: &str,
        verification_token: &str,
    ) -> io::Result<ChallengeOutcome> {
        Self::challenge(&self.state, endpoint, verification_token)
    }

    fn challenge(
        state: &FakeState,
        endpoint: &str,
        verification_token: &str,
    ) -> io::Result<ChallengeOutcome> {
        let challenge_code = format!(
            "{:x}",
            Sha256::digest(format!("challenge {}", state.next_id()))
        )[..36]
            .to_owned();
        let mut hash = Sha256::new();
        hash.update(challenge_code.as_bytes());
        hash.update(verification_token.as_bytes());
        hash.update(endpoint.as_bytes());
        let expected = format!("{:x}", hash.finalize());
        let separator = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{separator}challenge_code={challenge_code}");
        let delivery = send("GET", &url, &[], b"")?;
        Ok(ChallengeOutcome {
            challenge_code,
            expected,
            delivery,
        })
    }

    /// The `X-EBAY-SIGNATURE` header of the fake's key over `body`.
    pub fn signature_header(&self, body: &[u8]) -> String {
        self.state.notify.signer.signature_header(body)
    }

    /// Subscribes `endpoint` (an `http://` URL) to ORDER_CONFIRMATION for the seller
    /// `seller` (a username, as `add_listing` takes it): each checkout of that seller's
    /// listings from now on is sent there, signed, before the purchase returns.
    pub fn subscribe_order_confirmations(&self, seller: &str, endpoint: &str) {
        lock(&self.state.notify.subscriptions).push((seller.to_owned(), endpoint.to_owned()));
    }

    /// The next notification sent is dropped or sent twice; faults queue up, one a
    /// notification.
    pub fn fault_next_notification(&self, fault: DeliveryFault) {
        lock(&self.state.notify.faults).push_back(fault);
    }

    /// The ORDER_CONFIRMATION notifications sent (or dropped) so far, oldest first.
    pub fn sent_notifications(&self) -> Vec<SentNotification> {
        lock(&self.state.notify.sent).clone()
    }

    /// `POST`s `notice` to `endpoint` (an `http://` URL) with its `X-EBAY-SIGNATURE`, as eBay
    /// sends a notification, spoiled as `notice.tamper` says.
    pub fn send_notification(
        &self,
        endpoint: &str,
        notice: &AccountDeletionNotice,
    ) -> io::Result<Delivery> {
        self.state.notify.signer.send(endpoint, notice)
    }
}

/// Standard base64 with padding (written here, like the decoder, independent of the
/// client's crates).
pub fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.into())
}

/// One HTTP/1.1 exchange over a new connection (`Connection: close`).
fn send(method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Delivery> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| invalid(format!("only http:// endpoints are reached: {url}")))?;
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_owned()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_owned()),
    };
    let stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\nUser-Agent: fake-marketplace notifications\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut writer = &stream;
    writer.write_all(head.as_bytes())?;
    writer.write_all(body)?;
    writer.flush()?;
    let mut raw = Vec::new();
    (&stream).read_to_end(&mut raw)?;
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> io::Result<Delivery> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("the endpoint's answer has no complete head"))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| invalid("head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("the endpoint's answer has no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("Transfer-Encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    } else if let Some((_, len)) = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("Content-Length"))
    {
        let len: usize = len.parse().map_err(|_| invalid("bad Content-Length"))?;
        body.truncate(len);
    }
    Ok(Delivery {
        status,
        headers,
        body,
    })
}

fn dechunk(mut data: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| invalid("bad chunk"))?;
        let size_text = std::str::from_utf8(&data[..line_end]).map_err(|_| invalid("bad chunk"))?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| invalid("bad chunk size"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).ok_or_else(|| invalid("cut-off chunk"))?;
        out.extend_from_slice(chunk);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of every JSON object in `text`, in the order written (a key is a string
    /// followed by `:`; the values here hold no `":`).
    fn keys_in_order(text: &str) -> Vec<String> {
        let mut keys = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('"') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('"') else { break };
            let word = &after[..end];
            rest = &after[end + 1..];
            if rest.starts_with(':') {
                keys.push(word.to_owned());
            }
        }
        keys
    }

    /// eBay's order (its notification SDK's fixtures): `metadata{topic, schemaVersion,
    /// deprecated}`, `notification{notificationId, eventDate, publishDate, publishAttemptCount,
    /// data{username, userId, eiasToken}}`, and the signature header `{alg, kid, signature,
    /// digest}` with a UUID as `kid`.
    #[test]
    fn the_notification_and_its_signature_header_keep_ebays_key_order() {
        let user = FakeUser::default();
        let body =
            AccountDeletionNotice::with_id("49ef0a8b-cf64-4b1b-b0e9-d2d5a8a1b1e5", &user).body();
        assert_eq!(
            keys_in_order(&body),
            [
                "metadata",
                "topic",
                "schemaVersion",
                "deprecated",
                "notification",
                "notificationId",
                "eventDate",
                "publishDate",
                "publishAttemptCount",
                "data",
                "username",
                "userId",
                "eiasToken"
            ]
        );
        let signer = NotificationSigner::of_fake("http://127.0.0.1:8931");
        let header = crate::base64_decode(&signer.signature_header(body.as_bytes())).unwrap();
        let header = String::from_utf8(header).unwrap();
        assert_eq!(
            keys_in_order(&header),
            ["alg", "kid", "signature", "digest"]
        );
        let kid = signer.kid();
        let groups: Vec<usize> = kid.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{kid}");
        assert!(
            kid.chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
            "{kid}"
        );
    }

    #[test]
    fn base64_encode_known_values() {
        assert_eq!(base64_encode(b"abc:def"), "YWJjOmRlZg==");
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert_eq!(base64_encode(b"abc"), "YWJj");
        assert_eq!(base64_encode(b""), "");
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(crate::base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
    }
}
