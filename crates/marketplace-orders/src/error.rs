//! The Fulfillment API's errors of getOrders, getOrder, createShippingFulfillment,
//! getShippingFulfillments and getShippingFulfillment, typed from the error ids its OpenAPI
//! description lists (`x-response-codes`: 30500, 30700–31100, 32100–32800, 34100–34500), each
//! with eBay's own error (its message, parameters) kept.

use marketplace_client::api::ApiError;
use marketplace_client::model::ServiceError;

/// What a Fulfillment API error id of the order and shipping fulfillment calls means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// 30500: "System error" (retried).
    System,
    /// 30700: "Invalid filter name: {fieldname}".
    InvalidFilterName,
    /// 30800: "Invalid filter value {fieldvalue} for filter {fieldname}".
    InvalidFilterValue,
    /// 30810: "Invalid date format".
    InvalidDateFormat,
    /// 30820: "Start date is missing".
    StartDateMissing,
    /// 30830: "Time range between start date and end date must be within '{allowedTime}'
    /// years."
    DateRangeTooLong,
    /// 30840: "Start date should be before end date".
    StartAfterEnd,
    /// 30850: "Start and end dates can't be in the future".
    DateInFuture,
    /// 30900: "Exceeded maximum number of order IDs (the current limit is 50)".
    TooManyOrderIds,
    /// 31000: "Invalid offset: {offsetvalue}".
    InvalidOffset,
    /// 31100: "Invalid limit: {limitvalue}".
    InvalidLimit,
    /// 32100: "Invalid order ID: {orderId}" (getOrder).
    InvalidOrderId,
    /// 32800: "Invalid field group: {fieldGroup}".
    InvalidFieldGroup,
    /// 32110: "Invalid shipping fulfillment ID: {fulfillmentId}" (getShippingFulfillment).
    InvalidFulfillmentId,
    /// 32200: "Invalid line item id: {lineItemId}" (createShippingFulfillment: a line item
    /// that is not the order's).
    InvalidLineItemId,
    /// 32210: "Duplicate line item in the request".
    DuplicateLineItem,
    /// 32300: "Invalid shipment tracking number or carrier".
    InvalidTracking,
    /// 32400: "Requested user is suspended".
    UserSuspended,
    /// 32500: "Invalid shipped date".
    InvalidShippedDate,
    /// 32600: "Invalid input data" (a quantity of none, or above what is left to ship).
    InvalidInputData,
    /// 34100: "Maximum tracking number for order is exceeded".
    TooManyTrackingNumbers,
    /// 34200: "Line Items contain Global Shipping Program and non-Global Shipping Program
    /// orders".
    MixedGlobalShipping,
    /// 34300: "Mark As Shipped for multiple Global Shipping Program line items is not
    /// supported".
    GlobalShippingMultipleLineItems,
    /// 34500: "Please use PUT operation for updating shipping fulfillment".
    UsePutToUpdate,
    /// Another id (a token's 1001, an access error's 1100, …), as eBay sent it.
    Other(u32),
}

impl ErrorKind {
    /// The kind of eBay's error id.
    pub fn of(error_id: u32) -> ErrorKind {
        match error_id {
            30500 => ErrorKind::System,
            30700 => ErrorKind::InvalidFilterName,
            30800 => ErrorKind::InvalidFilterValue,
            30810 => ErrorKind::InvalidDateFormat,
            30820 => ErrorKind::StartDateMissing,
            30830 => ErrorKind::DateRangeTooLong,
            30840 => ErrorKind::StartAfterEnd,
            30850 => ErrorKind::DateInFuture,
            30900 => ErrorKind::TooManyOrderIds,
            31000 => ErrorKind::InvalidOffset,
            31100 => ErrorKind::InvalidLimit,
            32100 => ErrorKind::InvalidOrderId,
            32800 => ErrorKind::InvalidFieldGroup,
            32110 => ErrorKind::InvalidFulfillmentId,
            32200 => ErrorKind::InvalidLineItemId,
            32210 => ErrorKind::DuplicateLineItem,
            32300 => ErrorKind::InvalidTracking,
            32400 => ErrorKind::UserSuspended,
            32500 => ErrorKind::InvalidShippedDate,
            32600 => ErrorKind::InvalidInputData,
            34100 => ErrorKind::TooManyTrackingNumbers,
            34200 => ErrorKind::MixedGlobalShipping,
            34300 => ErrorKind::GlobalShippingMultipleLineItems,
            34500 => ErrorKind::UsePutToUpdate,
            other => ErrorKind::Other(other),
        }
    }

    /// Whether eBay says to try again: 30500 (system error).
    pub fn is_retryable(self) -> bool {
        self == ErrorKind::System
    }
}

/// One of eBay's errors, typed, with eBay's own error kept (its message, parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FulfillmentError {
    /// What its id means.
    pub kind: ErrorKind,
    /// eBay's error as sent (the client's sanitizer has passed over it).
    pub error: ServiceError,
}

impl From<ServiceError> for FulfillmentError {
    fn from(error: ServiceError) -> Self {
        Self {
            kind: ErrorKind::of(error.error_id),
            error,
        }
    }
}

/// Everything a call of this crate can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OrdersError {
    /// Refused before sending (nothing was sent): `what` names the parameter, `reason` says
    /// what eBay takes.
    #[error("{what}: {reason}; nothing was sent")]
    Invalid {
        /// The parameter or field (`limit`, `orderIds`, `lastmodifieddate`, …).
        what: &'static str,
        /// What was wrong, and what eBay takes.
        reason: String,
    },
    /// eBay refused the call: its errors, typed, and the client's error (status, URL, eBay's
    /// messages).
    #[error("{source}")]
    Fulfillment {
        /// eBay's errors, typed.
        errors: Vec<FulfillmentError>,
        /// The client's error.
        source: ApiError,
    },
    /// getOrder answered 404: eBay has no order `order_id` for this seller (or it is more
    /// than two years old).
    #[error("getOrder: eBay has no order {order_id} for this seller (HTTP 404)")]
    NotFound {
        /// The order id asked for.
        order_id: String,
    },
    /// Any other failure of the call (transport, token, an answer that is not eBay's shape).
    #[error(transparent)]
    Api(ApiError),
    /// getOrders answered a page of orders all handed over before, which no change of its
    /// `total` explains (the same orders on every page): the walk ends here rather than ask
    /// for pages forever; the orders it handed over are all it got.
    #[error(
        "getOrders answered at offset {offset} only orders it had answered before (total \
         {total}): the walk stops rather than ask for pages forever; the orders after it were \
         not read"
    )]
    Repeating {
        /// The offset of the page of repeats.
        offset: u32,
        /// The `total` that page claimed (`none` when it had none).
        total: String,
    },
    /// createShippingFulfillment answered success without a `Location` header naming the new
    /// fulfillment: it may have been created ([`aio::Orders::ship`](crate::aio::Orders::ship)
    /// reads getShippingFulfillments before it tries again).
    #[error(
        "createShippingFulfillment of order {order_id} answered without a Location header          naming the fulfillment: it may or may not have been created"
    )]
    NoLocation {
        /// The order shipped.
        order_id: String,
    },
    /// A refund refused before issueRefund was sent, checked against the order getOrder
    /// answered (its currency, what is left to refund, its line items) or against the key's
    /// record: `what` names the field, `reason` what is wrong.
    #[error("{what}: {reason}; no refund was asked for (issueRefund not sent)")]
    Refund {
        /// The field (`orderLevelRefundAmount.currency`, `refundItems[0].lineItemId`, `key`, …).
        what: String,
        /// What was wrong.
        reason: String,
    },
    /// The caller's refund store failed to read or write the key's record (before issueRefund
    /// was sent, or after eBay's answer: then the refund may be issued, and the same key again
    /// finds it on the order).
    #[error("the refund store failed for the key {key:?}: {source}")]
    RefundStore {
        /// The refund's key.
        key: String,
        /// The store's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl From<ApiError> for OrdersError {
    fn from(source: ApiError) -> Self {
        match &source {
            ApiError::Service { errors, .. } => OrdersError::Fulfillment {
                errors: errors.iter().cloned().map(FulfillmentError::from).collect(),
                source,
            },
            _ => OrdersError::Api(source),
        }
    }
}

impl OrdersError {
    /// eBay's typed errors (empty for a failure that is not eBay's error answer).
    pub fn errors(&self) -> &[FulfillmentError] {
        match self {
            OrdersError::Fulfillment { errors, .. } => errors,
            _ => &[],
        }
    }

    /// The HTTP status eBay answered, when it answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            OrdersError::Fulfillment { source, .. } | OrdersError::Api(source) => match source {
                ApiError::Service { status, .. }
                | ApiError::Signature { status, .. }
                | ApiError::Http { status, .. } => Some(*status),
                _ => None,
            },
            OrdersError::NotFound { .. } => Some(404),
            OrdersError::Invalid { .. }
            | OrdersError::Repeating { .. }
            | OrdersError::NoLocation { .. } => None,
            OrdersError::Refund { .. } | OrdersError::RefundStore { .. } => None,
        }
    }

    /// Whether to try again: eBay's 30500, or a 5xx (which the client has already retried).
    pub(crate) fn is_retryable(&self) -> bool {
        self.errors().iter().any(|e| e.kind.is_retryable())
            || matches!(self, OrdersError::Fulfillment { .. } | OrdersError::Api(_)
                if self.status().is_some_and(|s| s >= 500))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_id_the_description_lists_for_the_shipping_fulfillment_calls_is_typed() {
        let description: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/contract/sell_fulfillment_v1_oas3.json"
        ))
        .unwrap();
        let mut ids = Vec::new();
        let base = "/order/{orderId}/shipping_fulfillment";
        for (path, method) in [
            (base.to_owned(), "post"),
            (base.to_owned(), "get"),
            (format!("{base}/{{fulfillmentId}}"), "get"),
        ] {
            let responses = &description["paths"][path.as_str()][method]["responses"];
            for (_, response) in responses.as_object().unwrap() {
                if let Some(errors) = response["x-response-codes"]["errors"].as_object() {
                    ids.extend(errors.keys().map(|id| id.parse::<u32>().unwrap()));
                }
            }
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 13, "{ids:?}");
        for id in ids {
            assert!(
                !matches!(ErrorKind::of(id), ErrorKind::Other(_)),
                "{id} is not typed"
            );
        }
    }

    #[test]
    fn every_error_id_the_description_lists_for_get_orders_and_get_order_is_typed() {
        let description: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/contract/sell_fulfillment_v1_oas3.json"
        ))
        .unwrap();
        let mut ids = Vec::new();
        for path in ["/order", "/order/{orderId}"] {
            let responses = &description["paths"][path]["get"]["responses"];
            for (_, response) in responses.as_object().unwrap() {
                if let Some(errors) = response["x-response-codes"]["errors"].as_object() {
                    ids.extend(errors.keys().map(|id| id.parse::<u32>().unwrap()));
                }
            }
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 13, "{ids:?}");
        for id in ids {
            assert!(
                !matches!(ErrorKind::of(id), ErrorKind::Other(_)),
                "{id} is not typed"
            );
        }
        assert_eq!(ErrorKind::of(1001), ErrorKind::Other(1001));
        assert!(ErrorKind::of(30500).is_retryable());
        assert!(!ErrorKind::of(30800).is_retryable());
    }
}
