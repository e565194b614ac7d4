//! eBay's own shapes of the Fulfillment API's answers, under eBay's field names (getOrders'
//! `OrderSearchPagedCollection`, getOrder's `Order` and the types inside it), from eBay's
//! description (`sell_fulfillment_v1_oas3.json`, v1.20.7); each field's doc is the first
//! sentence of eBay's. A field this crate does not name is kept as it came (`other`), and the
//! containers it does not type (`program`, `taxes`, `appliedPromotions`, …) as JSON values,
//! so an order written back out has everything eBay sent.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::time::parse_timestamp;

/// getOrders' `orders`, refused past [`MAX_LIMIT`](crate::filter::MAX_LIMIT) orders (eBay's
/// largest page) as the array is read, so a page never holds more in memory.
fn at_most_a_page<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Order>, D::Error> {
    struct Page;
    impl<'de> serde::de::Visitor<'de> for Page {
        type Value = Vec<Order>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "an array of at most {} orders", crate::filter::MAX_LIMIT)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let most = crate::filter::MAX_LIMIT as usize;
            let mut orders = Vec::new();
            while let Some(order) = seq.next_element::<Order>()? {
                if orders.len() == most {
                    return Err(serde::de::Error::custom(format!(
                        "getOrders answered more than {most} orders on one page (eBay's \
                         largest page, limit's maximum): refused"
                    )));
                }
                orders.push(order);
            }
            Ok(orders)
        }
    }
    d.deserialize_seq(Page)
}

/// eBay's `OrderSearchPagedCollection`: This type contains the specifications for the collection of
/// orders that match the search or filter criteria of a getOrders call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderSearchPagedCollection {
    /// The URI of the getOrders call request that produced the current page of the result set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// The maximum number of orders returned per page of the result set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// The getOrders call URI to use if you wish to view the next page of the result set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// The number of results skipped in the result set before listing the first returned result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// This array contains one or more orders that are part of the current result set, that is
    /// controlled by the input criteria.
    /// At most [`MAX_LIMIT`](crate::filter::MAX_LIMIT) (200): a longer array is refused as
    /// it is read, before it is held in memory (16 bytes an order on the wire are a whole
    /// `Order` once decoded: a million of them took 2.4 GB).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "at_most_a_page"
    )]
    pub orders: Vec<Order>,
    /// The getOrders call URI for the previous result set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
    /// The total number of orders in the results set based on the current input criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// This array is returned if one or more errors or warnings occur with the call request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Value>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Order`: This type contains the details of an order, including information about the
/// buyer, order history, shipping fulfillments, line items, costs, payments, and order fulfillment
/// status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// This container consists of information about the order's buyer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<Buyer>,
    /// This field contains any comments that the buyer left for the seller about the order during
    /// checkout process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer_checkout_notes: Option<String>,
    /// This container consists of order cancellation information if a cancel request has been made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_status: Option<CancelStatus>,
    /// The date and time that the order was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_date: Option<String>,
    /// This field is only returned if true, and indicates that eBay will collect tax (US state-
    /// mandated sales tax, Federal and Provincial Sales Tax in Canada, 'Goods and Services' tax in
    /// Canada, Australia, and New Zealand, and VAT collected for UK and EU countries,) for at least
    /// one line item in the order, and remit the tax to the taxing authority of the buyer's
    /// residence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebay_collect_and_remit_tax: Option<bool>,
    /// This array contains a list of one or more getShippingFulfillment call URIs that can be used
    /// to retrieve shipping fulfillments that have been set up for the order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fulfillment_hrefs: Vec<String>,
    /// This container consists of a set of specifications for fulfilling the order, including the
    /// type of fulfillment, shipping carrier and service, shipping address, and estimated delivery
    /// window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fulfillment_start_instructions: Vec<FulfillmentStartInstruction>,
    /// The date and time that the order was last modified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified_date: Option<String>,
    /// This array contains the details for all line items that comprise the order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_items: Vec<LineItem>,
    /// The degree to which fulfillment of the order is complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_fulfillment_status: Option<String>,
    /// The unique identifier of the order.
    pub order_id: String,
    /// The enumeration value returned in this field indicates the current payment status of an
    /// order, or in case of a refund request, the current status of the refund.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_payment_status: Option<String>,
    /// This container consists of detailed payment information for the order, including buyer
    /// payment for the order, refund information (if applicable), and seller payment holds (if
    /// applicable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_summary: Option<PaymentSummary>,
    /// This container consists of a summary of cumulative costs and charges for all line items of
    /// an order, including item price, price adjustments, sales taxes, delivery costs, and order
    /// discounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing_summary: Option<PricingSummary>,
    /// This container is returned for orders that are eligible for eBay's Authenticity Guarantee
    /// service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<Value>,
    /// An eBay-generated identifier that is used to identify and manage orders through the Selling
    /// Manager and Selling Manager Pro tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sales_record_reference: Option<String>,
    /// The unique eBay user ID of the seller who sold the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller_id: Option<String>,
    /// This is the cumulative base amount used to calculate the final value fees for each order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_fee_basis_amount: Option<Amount>,
    /// This is the cumulative fees accrued for the order and deducted from the seller payout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_marketplace_fee: Option<Amount>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Buyer`: This type contains information about the order's buyer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Buyer {
    /// Buyer's contact information that includes the buyer's name, email, phone number, and
    /// address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer_registration_address: Option<ExtendedContact>,
    /// This container consists of address information that can be used by sellers for tax purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_address: Option<TaxAddress>,
    /// This container consists of taxpayer identification information for buyers from Italy, Spain,
    /// or Guatemala.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identifier: Option<Value>,
    /// The buyer's eBay user ID. Since 2025-09-26 eBay sends some developers, for U.S. buyers,
    /// the buyer's immutable user id here in place of the username (eBay's "Data Handling
    /// Compliance"): it is kept as sent, whichever it is. Use it as the buyer's key, not as a
    /// name to show. An identity field eBay adds beside it stays in `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ExtendedContact`: This type contains shipping and contact information for a buyer or an
/// eBay shipping partner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtendedContact {
    /// The company name associated with the buyer or eBay shipping partner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// This container shows the shipping address of the buyer or eBay shipping partner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_address: Option<Address>,
    /// This field contains the email address of the buyer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The full name of the buyer or eBay shipping partner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_name: Option<String>,
    /// The primary telephone number of the buyer or eBay shipping partner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_phone: Option<PhoneNumber>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Address`: This type contains the details of a geographical address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    /// The first line of the street address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line1: Option<String>,
    /// The second line of the street address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line2: Option<String>,
    /// The city of the shipping destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// The country of the shipping destination, represented as a two-letter ISO 3166-1 alpha-2
    /// country code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country_code: Option<String>,
    /// The county of the shipping destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub county: Option<String>,
    /// The postal code of the shipping destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// The state or province of the shipping destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_or_province: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PhoneNumber`: This type contains a string field representing a telephone number.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneNumber {
    /// The primary telephone number for the shipping recipient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `TaxAddress`: This container consists of address information that can be used by sellers
/// for tax purpose.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaxAddress {
    /// The city name that can be used by sellers for tax purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// The country code that can be used by sellers for tax purpose, represented as a two-letter
    /// ISO 3166-1 alpha-2 country code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country_code: Option<String>,
    /// The postal code that can be used by sellers for tax purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// The state name that can be used by sellers for tax purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_or_province: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PricingSummary`: This type contains a summary of cumulative costs and charges for all
/// line items of an order, including item price, price adjustments, sales taxes, delivery costs,
/// and order discounts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingSummary {
    /// This container shows the total amount of any adjustments that were applied to the cost of
    /// the item(s) in the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjustment: Option<Amount>,
    /// This container shows the total cost of delivering the order to the buyer, before any
    /// shipping/delivery discount is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_cost: Option<Amount>,
    /// This container shows the total amount of delivery discounts (including shipping discounts)
    /// that apply to the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_discount: Option<Amount>,
    /// This container shows the total amount of any special fees applied to the order, such as a
    /// tire recycling fee or an electronic waste fee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fee: Option<Amount>,
    /// This container shows the total amount of all item price discounts (including promotions)
    /// that apply to the order and reduce its cost to the buyer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_discount: Option<Amount>,
    /// This container shows the cumulative costs of of all units of all line items in the order,
    /// before any discount is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_subtotal: Option<Amount>,
    /// This container shows the total amount of tax for the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax: Option<Amount>,
    /// The total cost of the order after adding all line item costs, delivery costs, sales tax, and
    /// special fees, and then subtracting all special discounts and price adjustments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Amount`: This type defines the monetary value of an amount.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Amount {
    /// A three-letter ISO 4217 code that indicates the currency of the amount in the
    /// convertedFromValue field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converted_from_currency: Option<String>,
    /// The monetary amount before any conversion is performed, in the currency specified by the
    /// convertedFromCurrency field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converted_from_value: Option<String>,
    /// A three-letter ISO 4217 code that indicates the currency of the amount in the value field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// The monetary amount, in the currency specified by the currency field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `CancelStatus`: This type contains information about any requests that have been made to
/// cancel an order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelStatus {
    /// The date and time the order was cancelled, if applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_date: Option<String>,
    /// This array contains details of one or more buyer requests to cancel the order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancel_requests: Vec<CancelRequest>,
    /// The state of the order with regard to cancellation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_state: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `CancelRequest`: This type contains information about a buyer request to cancel an order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRequest {
    /// The date and time that the order cancellation was completed, if applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_completed_date: Option<String>,
    /// This string value indicates the party who made the initial cancellation request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_initiator: Option<String>,
    /// The reason why the cancelInitiator initiated the cancellation request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    /// The date and time that the order cancellation was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_requested_date: Option<String>,
    /// The unique identifier of the order cancellation request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_request_id: Option<String>,
    /// The current stage or condition of the cancellation request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_request_state: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `FulfillmentStartInstruction`: This type contains a set of specifications for processing
/// a fulfillment of an order, including the type of fulfillment, shipping carrier and service,
/// addressing details, and estimated delivery window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FulfillmentStartInstruction {
    /// This container provides information used by the installation provider concerning appointment
    /// details selected by the buyer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appointment: Option<Value>,
    /// This field is only returned if its value is true and indicates that the fulfillment will be
    /// shipped via eBay's Global Shipping Program, eBay International Shipping, or the Authenticity
    /// Guarantee service program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebay_supported_fulfillment: Option<bool>,
    /// This container is only returned if the value of ebaySupportedFulfillment field is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_destination_address: Option<Address>,
    /// The enumeration value returned in this field indicates the method of fulfillment that will
    /// be used to deliver this set of line items (this package) to the buyer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_instructions_type: Option<String>,
    /// This is the estimated latest date that the fulfillment will be completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_estimated_delivery_date: Option<String>,
    /// This is the estimated earliest date that the fulfillment will be completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_estimated_delivery_date: Option<String>,
    /// This container is only returned for In-Store Pickup orders, and it indicates the specific
    /// merchant's store where the buyer will pick up the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pickup_step: Option<Value>,
    /// This container consists of shipping information for this fulfillment, including the shipping
    /// carrier, the shipping service option, and the shipment destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_step: Option<ShippingStep>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ShippingStep`: This type contains shipping information for a fulfillment, including the
/// shipping carrier, the shipping service option, the shipment destination, and the Global Shipping
/// Program reference ID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShippingStep {
    /// The unique identifier of the shipping carrier being used to ship the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_carrier_code: Option<String>,
    /// The unique identifier of the shipping service option being used to ship the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_service_code: Option<String>,
    /// This container consists of shipping and contact information about the individual or
    /// organization to whom the fulfillment package will be shipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_to: Option<ExtendedContact>,
    /// This is the unique identifer of the Global Shipping Program (GSP) shipment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_to_reference_id: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `LineItem`: This type contains the details of each line item in an order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineItem {
    /// This array contains information about one or more sales promotions or discounts applied to
    /// the line item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_promotions: Vec<Value>,
    /// This array is only returned for a Parts & Accessory item, and identifies the buyer's motor
    /// vehicle that is compatible with the part or accessory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compatibility_properties: Vec<Value>,
    /// This container consists of a breakdown of all costs associated with the fulfillment of the
    /// line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_cost: Option<DeliveryCost>,
    /// The cost of the line item after applying any discounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discounted_line_item_cost: Option<Amount>,
    /// This container will be returned if the order line item is subject to a 'Collect and Remit'
    /// tax that eBay will collect and remit to the proper taxing authority on the buyer's
    /// behalf.'Collect and Remit' tax includes:US state-mandated sales taxFederal and Provincial
    /// Sales Tax in Canada'Goods and Services' tax in Canada, Australia, New Zealand, and JerseyVAT
    /// collected for the UK, EU countries, Kazakhstan, and BelarusSales & Service Tax (SST) in
    /// MalaysiaThe amount of this tax is shown in the amount field, and the type of tax is shown in
    /// the taxType field.eBay will display the tax type and amount during checkout in accordance
    /// with the buyer's address, and handle collection and remittance of the tax without requiring
    /// the seller to take any action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ebay_collect_and_remit_taxes: Vec<Value>,
    /// This container consists of a breakdown of costs that are collected by eBay from the buyer
    /// for this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebay_collected_charges: Option<Value>,
    /// This container consists of information that is needed by the seller to send a digital gift
    /// card to the buyer, or recipient of the digital gift card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_details: Option<Value>,
    /// This container field describes the physical location of the order line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_location: Option<ItemLocation>,
    /// The eBay-generated legacy listing item ID of the listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_item_id: Option<String>,
    /// The unique identifier of a single variation within a multiple-variation listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_variation_id: Option<String>,
    /// The selling price of the line item before applying any discounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_item_cost: Option<Amount>,
    /// This container consists of information related to shipping dates and expectations, including
    /// the 'ship-by date' and expected delivery windows that are based on the seller's stated
    /// handling time and the shipping service option that will be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_item_fulfillment_instructions: Option<LineItemFulfillmentInstructions>,
    /// This enumeration value indicates the current fulfillment status of the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_item_fulfillment_status: Option<String>,
    /// This is the unique identifier of an eBay order line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_item_id: Option<String>,
    /// An array of one or more line items related to the corresponding order, but not a part of
    /// that order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked_order_line_items: Vec<Value>,
    /// The unique identifier of the eBay marketplace where the line item was listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_marketplace_id: Option<String>,
    /// Contains information about the eBay programs, if any, under which the line item was listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<Value>,
    /// The unique identifier of the eBay marketplace where the line item was listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purchase_marketplace_id: Option<String>,
    /// The number of units of the line item in the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u64>,
    /// This array is always returned, but is returned as an empty array unless the seller has
    /// submitted a partial or full refund to the buyer for the order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refunds: Vec<LineItemRefund>,
    /// Seller-defined Stock-Keeping Unit (SKU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// The eBay listing type of the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sold_format: Option<String>,
    /// Contains a list of taxes applied to the line item, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taxes: Vec<Value>,
    /// The title of the listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// This is the total price that the buyer must pay for the line item after all costs (item
    /// cost, delivery cost, taxes,) are added, minus any discounts and/or promotions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
    /// An array of aspect name-value pairs that identifies the specific variation of a multi-
    /// variation listing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variation_aspects: Vec<Value>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `LineItemFulfillmentInstructions`: This type contains the specifications for processing
/// the fulfillment of a line item, including the handling window and the delivery window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineItemFulfillmentInstructions {
    /// Although this field is still returned, it can be ignored since eBay Guaranteed Delivery is
    /// no longer a supported feature on any marketplace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guaranteed_delivery: Option<bool>,
    /// The estimated latest date and time that the buyer can expect to receive the line item based
    /// on the seller's stated handling time and the transit times of the available shipping service
    /// options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_estimated_delivery_date: Option<String>,
    /// The estimated earliest date and time that the buyer can expect to receive the line item
    /// based on the seller's stated handling time and the transit times of the available shipping
    /// service options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_estimated_delivery_date: Option<String>,
    /// The latest date and time by which the seller should ship line item in order to meet the
    /// expected delivery window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_by_date: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `DeliveryCost`: This type contains a breakdown of all costs associated with the
/// fulfillment of a line item.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryCost {
    /// The amount of any shipping discount that has been applied to the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discount_amount: Option<Amount>,
    /// The amount of any handing cost that has been applied to the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handling_cost: Option<Amount>,
    /// The amount of any import charges applied to international shipping of the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_charges: Option<Amount>,
    /// The total cost of shipping all units of the line item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_cost: Option<Amount>,
    /// This field shows the fee due to eBay's international shipping provider for a line item that
    /// is being shipped through the Global Shipping Program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipping_intermediation_fee: Option<Amount>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ItemLocation`: This type describes the physical location of an order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemLocation {
    /// The two-letter ISO 3166 code representing the country of the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country_code: Option<String>,
    /// Indicates the geographical location of the item (along with the values in the countryCode
    /// and postalCode fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The postal code of the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PaymentSummary`: This type contains information about the various monetary exchanges
/// that apply to the net balance due for the order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentSummary {
    /// This array consists of payment information for the order, including payment status, payment
    /// method, payment amount, and payment date.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payments: Vec<Payment>,
    /// This array is always returned, but is returned as an empty array unless the seller has
    /// submitted a partial or full refund to the buyer for the order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refunds: Vec<OrderRefund>,
    /// This is the total price that the seller receives for the entire order after all costs (item
    /// cost, delivery cost, taxes) are added for all line items, minus any discounts and/or
    /// promotions for any of the line items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_due_seller: Option<Amount>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Payment`: This type is used to provide details about the seller payments for an order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    /// The amount that seller receives for the order via the payment method mentioned in
    /// Payment.paymentMethod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Amount>,
    /// The date and time that the payment was received by the seller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_date: Option<String>,
    /// This container is only returned if eBay is temporarily holding the seller's funds for the
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payment_holds: Vec<Value>,
    /// The payment method used to pay for the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method: Option<String>,
    /// This field is only returned if payment has been made by the buyer, and the paymentMethod is
    /// ESCROW. This field contains a special ID for ESCROW.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_reference_id: Option<String>,
    /// The enumeration value returned in this field indicates the status of the payment for the
    /// order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_status: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `OrderRefund`: a refund of the whole order, as getOrder shows it in
/// `paymentSummary.refunds`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderRefund {
    /// The refund amount (the seller's net amount: eBay-collected tax is not in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Amount>,
    /// When the refund was issued (not returned until it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_date: Option<String>,
    /// issueRefund's `refundId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_id: Option<String>,
    /// eBay's identifier of the refund (not returned until it is issued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_reference_id: Option<String>,
    /// The refund's status (RefundStatusEnum: `PENDING`, `REFUNDED`, `FAILED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_status: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `LineItemRefund`: a refund of a line item, as getOrder shows it in the line item's
/// `refunds`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineItemRefund {
    /// The refund amount (the seller's net amount: eBay-collected tax is not in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Amount>,
    /// When the refund was issued (not returned until it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_date: Option<String>,
    /// issueRefund's `refundId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_id: Option<String>,
    /// Reserved by eBay for internal or future use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_reference_id: Option<String>,
    /// Every other field, as eBay sent it.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Order {
    /// `lastModifiedDate` as a time; `None` when eBay sent none or a text that is not its
    /// timestamp format (`2016-03-21T08:25:43.511Z`).
    pub fn last_modified(&self) -> Option<SystemTime> {
        self.last_modified_date.as_deref().and_then(parse_timestamp)
    }

    /// `creationDate` as a time; `None` when eBay sent none or a text that is not its
    /// timestamp format.
    pub fn created(&self) -> Option<SystemTime> {
        self.creation_date.as_deref().and_then(parse_timestamp)
    }

    /// The order's cancellation state (`cancelStatus.cancelState`: `NONE_REQUESTED`,
    /// `IN_PROGRESS` or `CANCELED`), when eBay sent it. getOrders leaves `cancelRequests`
    /// empty; getOrder has them.
    pub fn cancel_state(&self) -> Option<&str> {
        self.cancel_status.as_ref()?.cancel_state.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use serde_json::json;

    use super::*;

    /// An order as eBay's getOrder reference shows one (a fixed-price sale shipped by the
    /// seller), with fields eBay may add that this crate does not name: a new top-level
    /// field, one in the buyer (an identity field), one in a line item.
    fn realistic_order() -> Value {
        json!({
            "orderId": "12-03254-84826",
            "legacyOrderId": "110439280029-28874710001",
            "creationDate": "2024-04-18T21:58:08.000Z",
            "lastModifiedDate": "2024-04-18T22:03:07.000Z",
            "orderFulfillmentStatus": "NOT_STARTED",
            "orderPaymentStatus": "PAID",
            "sellerId": "s*****r",
            "buyer": {
                "username": "8cf3dd1a0a2f4f1d9a8a2c3b4d5e6f70",
                "taxAddress": {"stateOrProvince": "CA", "postalCode": "95125", "countryCode": "US"},
                "buyerRegistrationAddress": {
                    "fullName": "Jane Doe",
                    "contactAddress": {
                        "addressLine1": "2145 Hamilton Ave", "city": "San Jose",
                        "stateOrProvince": "CA", "postalCode": "95125", "countryCode": "US"
                    },
                    "primaryPhone": {"phoneNumber": "4085551234"},
                    "email": "abc123@members.ebay.com"
                },
                "userIdentity": {"immutableUserId": "8cf3dd1a0a2f4f1d9a8a2c3b4d5e6f70"}
            },
            "pricingSummary": {
                "priceSubtotal": {"value": "19.99", "currency": "USD"},
                "deliveryCost": {"value": "4.50", "currency": "USD"},
                "total": {"value": "24.49", "currency": "USD"}
            },
            "cancelStatus": {"cancelState": "NONE_REQUESTED", "cancelRequests": []},
            "paymentSummary": {
                "totalDueSeller": {"value": "24.49", "currency": "USD"},
                "refunds": [],
                "payments": [{
                    "paymentMethod": "EBAY", "paymentReferenceId": "1A2B3C",
                    "paymentDate": "2024-04-18T21:58:30.000Z",
                    "amount": {"value": "24.49", "currency": "USD"},
                    "paymentStatus": "PAID"
                }]
            },
            "fulfillmentStartInstructions": [{
                "fulfillmentInstructionsType": "SHIP_TO",
                "minEstimatedDeliveryDate": "2024-04-22T07:00:00.000Z",
                "maxEstimatedDeliveryDate": "2024-04-25T07:00:00.000Z",
                "ebaySupportedFulfillment": false,
                "shippingStep": {
                    "shipTo": {
                        "fullName": "Jane Doe",
                        "contactAddress": {
                            "addressLine1": "2145 Hamilton Ave", "city": "San Jose",
                            "stateOrProvince": "CA", "postalCode": "95125", "countryCode": "US"
                        },
                        "primaryPhone": {"phoneNumber": "4085551234"}
                    },
                    "shippingCarrierCode": "USPS",
                    "shippingServiceCode": "USPSPriority"
                }
            }],
            "fulfillmentHrefs": [],
            "lineItems": [{
                "lineItemId": "10052476783418",
                "legacyItemId": "110439280029",
                "sku": "SKU-1",
                "title": "A widget",
                "lineItemCost": {"value": "19.99", "currency": "USD"},
                "quantity": 1,
                "soldFormat": "FIXED_PRICE",
                "listingMarketplaceId": "EBAY_US",
                "purchaseMarketplaceId": "EBAY_US",
                "lineItemFulfillmentStatus": "NOT_STARTED",
                "total": {"value": "24.49", "currency": "USD"},
                "deliveryCost": {"shippingCost": {"value": "4.50", "currency": "USD"}},
                "appliedPromotions": [],
                "taxes": [],
                "properties": {"buyerProtection": true},
                "lineItemFulfillmentInstructions": {
                    "minEstimatedDeliveryDate": "2024-04-22T07:00:00.000Z",
                    "maxEstimatedDeliveryDate": "2024-04-25T07:00:00.000Z",
                    "shipByDate": "2024-04-20T06:59:59.000Z",
                    "guaranteedDelivery": false
                },
                "itemLocation": {"location": "San Jose", "countryCode": "US", "postalCode": "95125"},
                "newLineItemField": {"x": 1}
            }],
            "salesRecordReference": "1234",
            "totalFeeBasisAmount": {"value": "24.49", "currency": "USD"},
            "totalMarketplaceFee": {"value": "3.42", "currency": "USD"},
            "somethingEbayAddsLater": [1, 2, 3]
        })
    }

    #[test]
    fn a_realistic_order_decodes_with_unknown_fields_kept_and_writes_back_as_sent() {
        let sent = realistic_order();
        let order: Order = serde_json::from_value(sent.clone()).unwrap();
        assert_eq!(order.order_id, "12-03254-84826");
        assert_eq!(
            order.last_modified(),
            Some(UNIX_EPOCH + Duration::from_secs(1_713_477_787))
        );
        assert_eq!(order.cancel_state(), Some("NONE_REQUESTED"));
        let buyer = order.buyer.as_ref().unwrap();
        assert_eq!(
            buyer.username.as_deref(),
            Some("8cf3dd1a0a2f4f1d9a8a2c3b4d5e6f70")
        );
        assert_eq!(
            buyer.other["userIdentity"]["immutableUserId"],
            "8cf3dd1a0a2f4f1d9a8a2c3b4d5e6f70"
        );
        let phone = buyer.buyer_registration_address.as_ref().unwrap();
        assert_eq!(
            phone
                .primary_phone
                .as_ref()
                .unwrap()
                .phone_number
                .as_deref(),
            Some("4085551234")
        );
        let line = &order.line_items[0];
        assert_eq!(line.quantity, Some(1));
        assert_eq!(line.sku.as_deref(), Some("SKU-1"));
        assert_eq!(line.other["newLineItemField"], json!({"x": 1}));
        assert_eq!(order.other["somethingEbayAddsLater"], json!([1, 2, 3]));
        assert_eq!(order.other["legacyOrderId"], "110439280029-28874710001");
        assert_eq!(
            order
                .pricing_summary
                .as_ref()
                .unwrap()
                .total
                .as_ref()
                .unwrap()
                .value
                .as_deref(),
            Some("24.49")
        );
        let step = order.fulfillment_start_instructions[0]
            .shipping_step
            .as_ref()
            .unwrap();
        assert_eq!(step.shipping_carrier_code.as_deref(), Some("USPS"));

        // Written back: everything eBay sent, but the empty arrays (left out, as eBay leaves
        // out what an order does not have).
        let mut expected = sent;
        prune_empty_arrays(&mut expected);
        assert_eq!(serde_json::to_value(&order).unwrap(), expected);
    }

    fn prune_empty_arrays(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
                map.values_mut().for_each(prune_empty_arrays);
            }
            Value::Array(items) => items.iter_mut().for_each(prune_empty_arrays),
            _ => {}
        }
    }

    /// A JSON value with every property `schema` (of eBay's description) has, to `depth`.
    fn every_field(schemas: &Value, schema: &Value, depth: usize) -> Value {
        let schema = match schema["$ref"].as_str() {
            Some(reference) => &schemas[reference.rsplit('/').next().unwrap()],
            None => schema,
        };
        match schema["type"].as_str() {
            Some("string") => json!("x"),
            Some("integer") => json!(1),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            Some("array") => json!([every_field(schemas, &schema["items"], depth)]),
            _ if depth == 0 => json!({}),
            _ => Value::Object(
                schema["properties"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), every_field(schemas, v, depth - 1)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn every_field_of_ebays_order_types_is_named_and_an_order_with_all_of_them_round_trips() {
        let description: Value = serde_json::from_str(include_str!(
            "../../../tests/contract/sell_fulfillment_v1_oas3.json"
        ))
        .unwrap();
        let schemas = &description["components"]["schemas"];
        let page = every_field(
            schemas,
            &json!({"$ref": "#/components/schemas/OrderSearchPagedCollection"}),
            8,
        );
        let decoded: OrderSearchPagedCollection = serde_json::from_value(page.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), page);

        // The types this crate names keep nothing in `other`: each of eBay's fields is named.
        assert!(decoded.other.is_empty(), "{:?}", decoded.other.keys());
        let order = &decoded.orders[0];
        let buyer = order.buyer.as_ref().unwrap();
        let contact = buyer.buyer_registration_address.as_ref().unwrap();
        let instruction = &order.fulfillment_start_instructions[0];
        let step = instruction.shipping_step.as_ref().unwrap();
        let status = order.cancel_status.as_ref().unwrap();
        let payments = order.payment_summary.as_ref().unwrap();
        let line = &order.line_items[0];
        let others: [(&str, &Map<String, Value>); 18] = [
            ("Order", &order.other),
            ("Buyer", &buyer.other),
            ("ExtendedContact", &contact.other),
            ("Address", &contact.contact_address.as_ref().unwrap().other),
            (
                "PhoneNumber",
                &contact.primary_phone.as_ref().unwrap().other,
            ),
            ("TaxAddress", &buyer.tax_address.as_ref().unwrap().other),
            (
                "PricingSummary",
                &order.pricing_summary.as_ref().unwrap().other,
            ),
            (
                "Amount",
                &order.total_marketplace_fee.as_ref().unwrap().other,
            ),
            ("CancelStatus", &status.other),
            ("CancelRequest", &status.cancel_requests[0].other),
            ("FulfillmentStartInstruction", &instruction.other),
            ("ShippingStep", &step.other),
            ("PaymentSummary", &payments.other),
            ("Payment", &payments.payments[0].other),
            ("LineItem", &line.other),
            (
                "LineItemFulfillmentInstructions",
                &line
                    .line_item_fulfillment_instructions
                    .as_ref()
                    .unwrap()
                    .other,
            ),
            ("DeliveryCost", &line.delivery_cost.as_ref().unwrap().other),
            ("ItemLocation", &line.item_location.as_ref().unwrap().other),
        ];
        for (name, other) in others {
            assert!(other.is_empty(), "{name} leaves {:?} unnamed", other.keys());
        }
    }

    #[test]
    fn an_order_without_an_order_id_is_refused_naming_the_field() {
        let err = serde_json::from_value::<Order>(json!({"lastModifiedDate": "x"})).unwrap_err();
        assert!(err.to_string().contains("orderId"), "{err}");
    }
}
