//! # marketplace-notifications
//!
//! eBay's Marketplace Account Deletion notifications, which every application that uses
//! eBay's APIs must receive (or be exempted from): eBay checks the endpoint with a challenge,
//! then sends a signed notification each time a user asks eBay to delete their data. The same
//! endpoint takes ORDER_CONFIRMATION notifications (a buyer completed checkout), verified and
//! de-duplicated by `notificationId` alike, typed as [`OrderConfirmation`]: its `order_id` is
//! what a seller's order feed wakes for (marketplace-orders' `OrderFeed::wake`).
//!
//! The crate root is the protocol without I/O and without a clock, for any HTTP stack:
//!
//! * [`challenge_response`]: the answer to `GET <endpoint>?challenge_code=…`, SHA-256 over
//!   the code, the [`VerificationToken`] and the endpoint URL (displays as hex);
//! * [`PublicKey::from_pem`]: a key of getPublicKey's answer (a PEM with or without line
//!   breaks);
//! * [`verify`]: the `X-EBAY-SIGNATURE` header checked over the body (ECDSA P-256, SHA-1);
//! * [`Notification`]: the body as types ([`AccountDeletion`], [`OrderConfirmation`] with the
//!   `orderId` to read with getOrder, other topics as JSON).
//!
//! With the feature `client` (default): [`PublicKeyCache`] (getPublicKey, cached),
//! [`NotificationEndpoint`] (the whole endpoint) and [`subscribe`] (updateConfig,
//! createDestination, createSubscription: an endpoint subscribed from code) for async code;
//! the key cache and the endpoint driven on a runtime of their own for blocking code
//! ([`blocking`]).
//!
//! ```
//! use marketplace_notifications::{Notification, VerificationToken, challenge_response};
//!
//! // At start-up: a token outside eBay's rule is refused, naming the rule.
//! let token = VerificationToken::new("a-token-of-at-least-32-characters_0123")?;
//! // GET https://seller.example/ebay/notifications?challenge_code=abc
//! let answer = challenge_response("abc", &token, "https://seller.example/ebay/notifications");
//! let body = answer.to_json(); // {"challengeResponse":"<64 hex digits>"}, 200, application/json
//! # assert_eq!(body.len(), 88);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod challenge;
mod compact;
mod notification;
mod signature;

pub use challenge::{
    ChallengeResponse, TOKEN_MAX_CHARS, TOKEN_MIN_CHARS, TokenError, VerificationToken,
    challenge_response,
};
pub use notification::{
    ACCOUNT_DELETION_TOPIC, AccountDeletion, Notification, NotificationError,
    ORDER_CONFIRMATION_TOPIC, OrderConfirmation,
};
pub use signature::{
    KeyError, MAX_HEADER_BYTES, PublicKey, SignatureHeader, SignedForm, VerifyError, encode_header,
    verify,
};

#[cfg(feature = "client")]
mod accounts;
#[cfg(feature = "axum")]
pub mod axum;
#[cfg(feature = "client")]
pub mod blocking;
#[cfg(feature = "client")]
mod handler;
#[cfg(feature = "client")]
mod keys;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "client")]
pub mod subscribe;

#[cfg(feature = "client")]
pub use accounts::{
    AccountUsers, AccountUsersError, EbayUser, IDENTITY_SCOPE, get_user, identity_base_url,
};
#[cfg(feature = "client")]
pub use handler::{
    CallbackError, DEDUP_CAPACITY, DEDUP_RETENTION, EndpointAnswer, EndpointError, MAX_BODY_BYTES,
    NotificationEndpoint,
};
#[cfg(feature = "client")]
pub use keys::{
    DEFAULT_CAPACITY, DEFAULT_KEY_TTL, DEFAULT_UNKNOWN_TTL, KeyFetchError, MAX_KID_CHARS,
    PublicKeyCache,
};
