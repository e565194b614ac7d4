//! eBay's Inventory API errors, typed from the error ids its OpenAPI description lists
//! (`x-response-codes`), each with the server's own error kept.

use marketplace_client::api::ApiError;
use marketplace_client::model::ServiceError;

use crate::check::Problems;

/// What an Inventory API error id means (the Inventory API reference's error ids).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// 25001: a system error (retried).
    System,
    /// 25002: a user error; for a missing item specific, the aspect it names; for a second
    /// offer of a SKU and marketplace, the existing offer's id.
    User {
        /// The aspect named ("The item specific Brand is missing").
        aspect: Option<String>,
        /// The `offerId` parameter (createOffer's "Offer entity already exists").
        offer_id: Option<String>,
    },
    /// 25003: the price (or its currency).
    Price,
    /// 25004: the quantity.
    Quantity,
    /// 25005: the category (not a leaf, unknown).
    Category,
    /// 25007: the fulfillment (shipping) policy.
    FulfillmentPolicy,
    /// 25008: the payment policy.
    PaymentPolicy,
    /// 25009: the return policy.
    ReturnPolicy,
    /// 25014: the pictures.
    Pictures,
    /// 25015: a picture's URL.
    PictureUrl,
    /// 25020: the package's weight or size.
    Package,
    /// 25021: the condition.
    Condition,
    /// 25025: concurrent access to the same inventory item (retried).
    ConcurrentAccess,
    /// 25702: the SKU is not in the inventory.
    SkuNotFound,
    /// 25703: a SKU of the group is already a member of another group
    /// (createOrReplaceInventoryItemGroup).
    SkuInAnotherGroup,
    /// 25704: a SKU of the group is already listed as a single-SKU listing
    /// (createOrReplaceInventoryItemGroup).
    SkuListedAlone,
    /// 25705: no inventory item group of that key (getInventoryItemGroup,
    /// deleteInventoryItemGroup, publishOfferByInventoryItemGroup).
    GroupNotFound,
    /// 25709: a field's value, such as a missing `Content-Language`.
    InvalidValue,
    /// 25713: the offer is not available.
    OfferNotAvailable,
    /// 25725: no offer found (withdrawOfferByInventoryItemGroup of a group with no live
    /// offer).
    NoOfferFound,
    /// Another id, as eBay sent it.
    Other(u32),
}

impl ErrorKind {
    /// The kind of eBay's `error`.
    pub fn of(error: &ServiceError) -> ErrorKind {
        match error.error_id {
            25001 => ErrorKind::System,
            25002 => ErrorKind::User {
                aspect: missing_aspect(error),
                offer_id: error
                    .parameters
                    .iter()
                    .find(|p| p.name == "offerId")
                    .map(|p| p.value.clone()),
            },
            25003 => ErrorKind::Price,
            25004 => ErrorKind::Quantity,
            25005 => ErrorKind::Category,
            25007 => ErrorKind::FulfillmentPolicy,
            25008 => ErrorKind::PaymentPolicy,
            25009 => ErrorKind::ReturnPolicy,
            25014 => ErrorKind::Pictures,
            25015 => ErrorKind::PictureUrl,
            25020 => ErrorKind::Package,
            25021 => ErrorKind::Condition,
            25025 => ErrorKind::ConcurrentAccess,
            25702 => ErrorKind::SkuNotFound,
            25703 => ErrorKind::SkuInAnotherGroup,
            25704 => ErrorKind::SkuListedAlone,
            25705 => ErrorKind::GroupNotFound,
            25709 => ErrorKind::InvalidValue,
            25713 => ErrorKind::OfferNotAvailable,
            25725 => ErrorKind::NoOfferFound,
            other => ErrorKind::Other(other),
        }
    }

    /// Whether eBay says to try again: 25001 (system error) and 25025 (concurrent access).
    pub fn is_retryable(&self) -> bool {
        matches!(self, ErrorKind::System | ErrorKind::ConcurrentAccess)
    }
}

/// The aspect of "The item specific Brand is missing", in the message, the long message or a
/// parameter.
fn missing_aspect(error: &ServiceError) -> Option<String> {
    let texts = std::iter::once(error.message.as_str())
        .chain(error.long_message.as_deref())
        .chain(error.parameters.iter().map(|p| p.value.as_str()));
    for text in texts {
        if let Some(rest) = text.split("item specific ").nth(1)
            && let Some(name) = rest.split(" is missing").next()
            && name.len() < rest.len()
        {
            return Some(name.trim().to_owned());
        }
    }
    None
}

/// One of eBay's errors, typed, with eBay's own error kept (its message, parameters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryError {
    /// What its id means.
    pub kind: ErrorKind,
    /// eBay's error as sent (the client's sanitizer has passed over it).
    pub error: ServiceError,
}

impl From<ServiceError> for InventoryError {
    fn from(error: ServiceError) -> Self {
        Self {
            kind: ErrorKind::of(&error),
            error,
        }
    }
}

/// The live offer of a SKU in the other format that [`ListingError::OtherFormatLive`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveInOtherFormat {
    /// The SKU.
    pub sku: String,
    /// The marketplace of both offers.
    pub marketplace_id: String,
    /// The live offer's format (`FIXED_PRICE` or `AUCTION`).
    pub format: String,
    /// The live offer's id.
    pub offer_id: String,
    /// The live offer's listing id, when getOffers gave it.
    pub listing_id: Option<String>,
    /// The format of the listing that was not published.
    pub wanted: String,
}

impl std::fmt::Display for LiveInOtherFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is live on {} as {} (offer {}, listing {}): publishing it as {} would put a \
             second listing of it live; withdraw that one or keep both, explicitly \
             (OtherFormat::Withdraw or OtherFormat::Keep; `listing publish --other-format \
             withdraw|keep`)",
            self.sku,
            self.marketplace_id,
            self.format,
            self.offer_id,
            self.listing_id.as_deref().unwrap_or("unknown"),
            self.wanted
        )
    }
}

/// Everything a listing call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListingError {
    /// The offline check refused the listing: nothing was sent.
    #[error("the listing was not sent: {0}")]
    Refused(#[from] Problems),
    /// eBay refused the call: its errors, typed, and the client's error (status, URL, message).
    #[error("{source}")]
    Inventory {
        /// eBay's errors, typed.
        errors: Vec<InventoryError>,
        /// The client's error.
        source: ApiError,
    },
    /// eBay refused one item of a bulk call (or the bulk call failed for it).
    #[error("refused: {message}")]
    Item {
        /// The item's status (0: the whole bulk call failed).
        status: u16,
        /// eBay's errors for the item, typed.
        errors: Vec<InventoryError>,
        /// What was refused, eBay's messages.
        message: String,
    },
    /// The SKU has a live listing on the marketplace in the other format (getOffers: a
    /// `PUBLISHED` offer whose listing has not ended), and publishing this one would put a
    /// second listing of the item live beside it; nothing was changed. The caller chooses:
    /// [`OtherFormat::Withdraw`](crate::OtherFormat::Withdraw) (withdrawOffer first) or
    /// [`OtherFormat::Keep`](crate::OtherFormat::Keep) (both live).
    #[error("{0}")]
    OtherFormatLive(Box<LiveInOtherFormat>),
    /// Listings of one `publish_many` would overwrite each other on eBay (the same offer: SKU,
    /// marketplace and format; or one SKU with two different inventory items): none of them
    /// was sent.
    #[error(
        "{sku}: the listing(s) at {others:?}{} of the same publish_many {what}; they would \
         overwrite each other on eBay, so none of them was sent",
        and_more(*.more)
    )]
    Conflicting {
        /// The SKU.
        sku: String,
        /// The positions of the other listings, in the slice given to `publish_many`: the
        /// first [`CONFLICTS_NAMED`](crate::aio::CONFLICTS_NAMED) of them.
        others: Vec<usize>,
        /// How many more listings clash with it than `others` names (10,000 listings of one
        /// SKU named each other in 100 million positions).
        more: usize,
        /// How they clash.
        what: &'static str,
    },
    /// Any other failure of the call (transport, token, an answer that is not eBay's shape).
    #[error(transparent)]
    Api(ApiError),
    /// A 2xx answer without what it must hold.
    #[error("{operation}: the answer lacks {what}")]
    Answer {
        /// The operation.
        operation: &'static str,
        /// What is missing.
        what: &'static str,
    },
}

impl From<ApiError> for ListingError {
    fn from(source: ApiError) -> Self {
        match &source {
            ApiError::Service { errors, .. } => ListingError::Inventory {
                errors: errors.iter().cloned().map(InventoryError::from).collect(),
                source,
            },
            _ => ListingError::Api(source),
        }
    }
}

impl ListingError {
    /// eBay's typed errors (empty for a failure that is not eBay's answer).
    pub fn errors(&self) -> &[InventoryError] {
        match self {
            ListingError::Inventory { errors, .. } | ListingError::Item { errors, .. } => errors,
            _ => &[],
        }
    }

    /// Whether eBay says to try again (25001, 25025; a 5xx the client has already retried).
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ListingError::Inventory { errors, source } => {
                errors.iter().any(|e| e.kind.is_retryable())
                    || matches!(source, ApiError::Service { status, .. } if *status >= 500)
            }
            _ => false,
        }
    }
}

/// `" and N more"` when `more` is not 0.
fn and_more(more: usize) -> String {
    if more == 0 {
        String::new()
    } else {
        format!(" and {more} more")
    }
}
