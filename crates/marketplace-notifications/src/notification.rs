//! A notification's body as types: `{"metadata": {"topic": …}, "notification": {…}}`.

use std::fmt;

/// The topic of Marketplace Account Deletion notifications.
pub const ACCOUNT_DELETION_TOPIC: &str = "MARKETPLACE_ACCOUNT_DELETION";
/// The topic eBay sends when a buyer completes checkout (eBay's AsyncAPI contract
/// `order_confirmation.yaml`).
pub const ORDER_CONFIRMATION_TOPIC: &str = "ORDER_CONFIRMATION";

/// A notification, decoded from its (verified) body.
#[derive(Debug, Clone, PartialEq)]
pub enum Notification {
    /// `MARKETPLACE_ACCOUNT_DELETION`: a user asked eBay to delete their data.
    AccountDeletion(AccountDeletion),
    /// `ORDER_CONFIRMATION`: a buyer completed checkout; read the order with getOrder (or
    /// getOrders by `orderIds`).
    OrderConfirmation(OrderConfirmation),
    /// Any other topic, passed through as JSON.
    Other {
        /// `metadata.topic`.
        topic: String,
        /// `notification.notificationId` (eBay's retries repeat it).
        notification_id: String,
        /// The whole body.
        body: serde_json::Value,
    },
}

/// A `MARKETPLACE_ACCOUNT_DELETION` notification. Its `Debug` leaves out the user's personal
/// data (username, user id, EIAS token).
#[derive(Clone, PartialEq, Eq)]
pub struct AccountDeletion {
    /// `notification.notificationId`: the same in each retry of one notification.
    pub notification_id: String,
    /// `notification.eventDate` (ISO 8601, as sent): when the user asked.
    pub event_date: String,
    /// `notification.publishDate` (ISO 8601, as sent): when this attempt was sent.
    pub publish_date: String,
    /// `notification.publishAttemptCount`: 1 for the first attempt.
    pub publish_attempt_count: u32,
    /// `notification.data.username`: the user's eBay username.
    pub username: String,
    /// `notification.data.userId`: the user's immutable eBay user id (what getUser answers
    /// as `userId`).
    pub user_id: String,
    /// `notification.data.eiasToken`: the user's EIAS token.
    pub eias_token: String,
    /// `metadata.schemaVersion`, if sent.
    pub schema_version: Option<String>,
}

impl fmt::Debug for AccountDeletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccountDeletion")
            .field("notification_id", &self.notification_id)
            .field("event_date", &self.event_date)
            .field("publish_date", &self.publish_date)
            .field("publish_attempt_count", &self.publish_attempt_count)
            .finish_non_exhaustive()
    }
}

/// An `ORDER_CONFIRMATION` notification (eBay's AsyncAPI contract `order_confirmation.yaml`):
/// sent when a buyer completes checkout, once per line item, and again when a failed payment's
/// checkout completes later; the seller reads the order by its `orderId`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderConfirmation {
    /// `notification.notificationId`: the same in each retry of one notification.
    pub notification_id: String,
    /// `notification.eventDate` (ISO 8601, as sent): when checkout completed.
    pub event_date: String,
    /// `notification.publishDate` (ISO 8601, as sent): when this attempt was sent.
    pub publish_date: String,
    /// `notification.publishAttemptCount`: 1 for the first attempt.
    pub publish_attempt_count: u32,
    /// `notification.data.orderId`: the order to read.
    pub order_id: String,
    /// `notification.data` as sent, every field kept (`orderId` included).
    pub data: serde_json::Value,
    /// `metadata.schemaVersion`, if sent.
    pub schema_version: Option<String>,
}

/// Why a body is not a notification: the field (a JSON path such as
/// `notification.data.userId`) and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotificationError {
    /// The body is not JSON.
    #[error("the notification is not JSON: {reason}")]
    NotJson {
        /// What the JSON parser said.
        reason: String,
    },
    /// A field is missing or of the wrong type.
    #[error("the notification's field {field} is missing or not {expected}")]
    Field {
        /// The field's path.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

impl Notification {
    /// Decodes a notification's body.
    pub fn from_json(body: &[u8]) -> Result<Self, NotificationError> {
        let value: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| NotificationError::NotJson {
                reason: e.to_string(),
            })?;
        let text = |field: &'static str, pointer: &str| {
            value
                .pointer(pointer)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
                .ok_or(NotificationError::Field {
                    field,
                    expected: "a string",
                })
        };
        let topic = text("metadata.topic", "/metadata/topic")?;
        let notification_id = text(
            "notification.notificationId",
            "/notification/notificationId",
        )?;
        if topic != ACCOUNT_DELETION_TOPIC && topic != ORDER_CONFIRMATION_TOPIC {
            return Ok(Notification::Other {
                topic,
                notification_id,
                body: value,
            });
        }
        let publish_attempt_count = value
            .pointer("/notification/publishAttemptCount")
            .and_then(|v| v.as_u64())
            .and_then(|n| u32::try_from(n).ok())
            .ok_or(NotificationError::Field {
                field: "notification.publishAttemptCount",
                expected: "a whole number",
            })?;
        let schema_version = value
            .pointer("/metadata/schemaVersion")
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        if topic == ORDER_CONFIRMATION_TOPIC {
            let order_id = text("notification.data.orderId", "/notification/data/orderId")?;
            if order_id.is_empty() {
                return Err(NotificationError::Field {
                    field: "notification.data.orderId",
                    expected: "a non-empty string",
                });
            }
            return Ok(Notification::OrderConfirmation(OrderConfirmation {
                event_date: text("notification.eventDate", "/notification/eventDate")?,
                publish_date: text("notification.publishDate", "/notification/publishDate")?,
                publish_attempt_count,
                order_id,
                data: value
                    .pointer("/notification/data")
                    .cloned()
                    .unwrap_or_default(),
                schema_version,
                notification_id,
            }));
        }
        Ok(Notification::AccountDeletion(AccountDeletion {
            event_date: text("notification.eventDate", "/notification/eventDate")?,
            publish_date: text("notification.publishDate", "/notification/publishDate")?,
            publish_attempt_count,
            username: text("notification.data.username", "/notification/data/username")?,
            user_id: text("notification.data.userId", "/notification/data/userId")?,
            eias_token: text(
                "notification.data.eiasToken",
                "/notification/data/eiasToken",
            )?,
            schema_version,
            notification_id,
        }))
    }

    /// `metadata.topic`.
    pub fn topic(&self) -> &str {
        match self {
            Notification::AccountDeletion(_) => ACCOUNT_DELETION_TOPIC,
            Notification::OrderConfirmation(_) => ORDER_CONFIRMATION_TOPIC,
            Notification::Other { topic, .. } => topic,
        }
    }

    /// `notification.notificationId`.
    pub fn notification_id(&self) -> &str {
        match self {
            Notification::AccountDeletion(d) => &d.notification_id,
            Notification::OrderConfirmation(o) => &o.notification_id,
            Notification::Other {
                notification_id, ..
            } => notification_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"metadata":{"topic":"MARKETPLACE_ACCOUNT_DELETION","schemaVersion":"1.0","deprecated":false},"notification":{"notificationId":"49feeaeb-4982-42d9-a377-9645b8479411_33f7e043-fed8-442b-9d44-791923bd9a6d","eventDate":"2021-03-19T20:43:59.462Z","publishDate":"2021-03-19T20:43:59.679Z","publishAttemptCount":1,"data":{"username":"test_user","userId":"ma8vp1jySJC","eiasToken":"nY+sHZ2PrBmdj6wVnY+sEZ2PrA2dj6wJnY+gAZGEpwmdj6x9nY+seQ=="}}}"#;

    #[test]
    fn an_account_deletion_is_typed() {
        let Notification::AccountDeletion(d) = Notification::from_json(SAMPLE.as_bytes()).unwrap()
        else {
            panic!("not an account deletion");
        };
        assert_eq!(d.user_id, "ma8vp1jySJC");
        assert_eq!(d.username, "test_user");
        assert_eq!(d.publish_attempt_count, 1);
        assert_eq!(d.event_date, "2021-03-19T20:43:59.462Z");
        assert_eq!(d.schema_version.as_deref(), Some("1.0"));
        let debug = format!("{d:?}");
        assert!(
            !debug.contains("test_user") && !debug.contains("ma8vp1jySJC"),
            "{debug}"
        );
    }

    #[test]
    fn an_order_confirmation_is_typed_with_its_order_id_and_its_data_kept() {
        let body = r#"{"metadata":{"topic":"ORDER_CONFIRMATION","schemaVersion":"1.0","deprecated":false},"notification":{"notificationId":"n-1","eventDate":"2026-01-02T03:04:05.678Z","publishDate":"2026-01-02T03:04:06.789Z","publishAttemptCount":2,"data":{"orderId":"12-34567-89012","lineItemId":"10000000001"}}}"#;
        let n = Notification::from_json(body.as_bytes()).unwrap();
        assert_eq!(n.topic(), ORDER_CONFIRMATION_TOPIC);
        assert_eq!(n.notification_id(), "n-1");
        let Notification::OrderConfirmation(o) = n else {
            panic!("not an order confirmation");
        };
        assert_eq!(o.order_id, "12-34567-89012");
        assert_eq!(o.publish_attempt_count, 2);
        assert_eq!(o.data["lineItemId"], "10000000001");
        for (spoiled, field) in [
            (
                body.replace("\"orderId\"", "\"order\""),
                "notification.data.orderId",
            ),
            (
                body.replace("\"12-34567-89012\"", "\"\""),
                "notification.data.orderId",
            ),
            (
                body.replace("\"publishAttemptCount\":2", "\"publishAttemptCount\":-2"),
                "notification.publishAttemptCount",
            ),
        ] {
            let error = Notification::from_json(spoiled.as_bytes()).unwrap_err();
            assert!(error.to_string().contains(field), "{error}");
        }
    }

    #[test]
    fn other_topics_pass_through_and_missing_fields_are_named() {
        let other = SAMPLE.replace("MARKETPLACE_ACCOUNT_DELETION", "ITEM_MARKED_SHIPPED");
        let n = Notification::from_json(other.as_bytes()).unwrap();
        assert_eq!(n.topic(), "ITEM_MARKED_SHIPPED");
        assert!(n.notification_id().starts_with("49feeaeb"));
        let no_user = SAMPLE.replace("\"userId\"", "\"user\"");
        assert_eq!(
            Notification::from_json(no_user.as_bytes())
                .unwrap_err()
                .to_string(),
            "the notification's field notification.data.userId is missing or not a string"
        );
        let count = SAMPLE.replace("\"publishAttemptCount\":1", "\"publishAttemptCount\":\"1\"");
        assert!(matches!(
            Notification::from_json(count.as_bytes()),
            Err(NotificationError::Field {
                field: "notification.publishAttemptCount",
                ..
            })
        ));
        assert!(matches!(
            Notification::from_json(b"[1"),
            Err(NotificationError::NotJson { .. })
        ));
    }
}
