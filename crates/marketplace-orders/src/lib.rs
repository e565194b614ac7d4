//! # marketplace-orders
//!
//! A seller's orders from eBay's Fulfillment API, for the backend that ships them.
//!
//! * [`aio::Orders`]: getOrders and getOrder over marketplace-client's async `ApiClient` (a
//!   user token of the seller with the `sell.fulfillment` or `sell.fulfillment.readonly`
//!   scope); [`blocking::Orders`]: the same for blocking code;
//! * [`Order`] and the types inside it ([`LineItem`], [`Buyer`], [`PricingSummary`],
//!   [`CancelStatus`], [`FulfillmentStartInstruction`], …): eBay's shapes under eBay's names,
//!   every field eBay sends and this crate does not name kept (`other`), both ways with serde;
//! * [`OrderFilter`], [`GetOrders`], [`OrderIds`]: getOrders' query built from types, never a
//!   hand-written string (`creationdate` and `lastmodifieddate` ranges in eBay's timestamp
//!   format, the `orderfulfillmentstatus` combinations eBay supports, 1 to 200 orders a page,
//!   1 to 50 order ids), refused before sending where eBay would refuse it;
//! * [`aio::OrderPages`]: offset paging to the end that survives orders changing while it
//!   pages ([`aio::Orders::modified_between`]: every order changed in a time range);
//! * [`OrdersError`]: eBay's errors of these calls typed ([`ErrorKind`]: 30500, 30700 to
//!   31100, 32100, 32800), eBay's message kept;
//! * [`Shipment`] and [`aio::Orders::ship`]: an order's line items marked shipped with a
//!   tracking number once (createShippingFulfillment, idempotent: getShippingFulfillments
//!   read first and after every unclear answer); [`ShippingFulfillment`] and the other
//!   shapes of the shipping fulfillment calls under eBay's names;
//! * [`feed::OrderFeed`] ([`blocking::OrderFeed`]): every change of a seller's orders handed
//!   to the application's handler once per record of its [`feed::FeedStore`], incremental on
//!   `lastmodifieddate` with a watermark and an overlap window; [`feed::FileStore`]: at least
//!   once, the [`feed::ChangeKey`] (`orderId`, `lastModifiedDate`) handed over for the
//!   application's own de-duplication;
//! * [`refund`]: issueRefund ([`aio::Orders::issue_refund`], [`blocking::Orders::issue_refund`]),
//!   the whole order or line items, checked against the order before it is sent (currency,
//!   never more than is left to refund, line items of the order), idempotent by the
//!   caller's key ([`refund::RefundStore`]): a retry never refunds twice.
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use marketplace_orders::{DateRange, GetOrders, Order, OrderFilter};
//!
//! // The orders changed since a watermark, 200 a page.
//! let watermark = UNIX_EPOCH + Duration::from_millis(1_463_300_743_511);
//! let query = GetOrders::new(OrderFilter::new().last_modified(DateRange::since(watermark)));
//! assert_eq!(
//!     query.query()?[0],
//!     ("filter", "lastmodifieddate:[2016-05-15T08:25:43.511Z..]".to_owned())
//! );
//!
//! // An order as getOrder answers it; a field this crate does not name is kept.
//! let order: Order = serde_json::from_str(
//!     r#"{"orderId": "12-34567-89012", "lastModifiedDate": "2016-05-15T08:25:43.511Z",
//!         "buyer": {"username": "buyer_1"}, "somethingNew": 1}"#,
//! )?;
//! assert_eq!(order.last_modified(), Some(watermark));
//! assert_eq!(order.other["somethingNew"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Against the service (or the fake marketplace), with a user token of the seller:
//!
//! ```no_run
//! # fn run(api: marketplace_client::api::ApiClient) -> Result<(), marketplace_orders::OrdersError> {
//! use marketplace_orders::{blocking::Orders, FulfillmentStatuses, GetOrders, OrderFilter};
//!
//! let orders = Orders::new(api);
//! let to_ship = OrderFilter::new().fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress);
//! for page in orders.pages(GetOrders::new(to_ship)) {
//!     for order in page? {
//!         let order = orders.get_order(&order.order_id)?; // with its cancel requests
//!         println!("{} {:?}", order.order_id, order.cancel_state());
//!     }
//! }
//! # Ok(()) }
//! ```

pub mod aio;
pub mod blocking;
mod error;
pub mod feed;
mod filter;
mod model;
pub mod refund;
mod shipment;
mod time;

pub use error::{ErrorKind, FulfillmentError, OrdersError};
pub use filter::{
    DateRange, FieldGroup, FulfillmentStatuses, GetOrders, MAX_LIMIT, MAX_ORDER_IDS, OrderFilter,
    OrderIds,
};
pub use model::{
    Address, Amount, Buyer, CancelRequest, CancelStatus, DeliveryCost, ExtendedContact,
    FulfillmentStartInstruction, ItemLocation, LineItem, LineItemFulfillmentInstructions,
    LineItemRefund, Order, OrderRefund, OrderSearchPagedCollection, Payment, PaymentSummary,
    PhoneNumber, PricingSummary, ShippingStep, TaxAddress,
};
pub use shipment::{
    LineItemReference, Shipment, Shipped, ShippingFulfillment, ShippingFulfillmentDetails,
    ShippingFulfillmentPagedCollection,
};
pub use time::{format_timestamp, parse_timestamp};
