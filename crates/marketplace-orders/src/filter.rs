//! getOrders' query built from types: the `filter` (creationdate and lastmodifieddate ranges,
//! orderfulfillmentstatus), `limit`, `offset`, `fieldGroups`, and the `orderIds` list, each
//! refused before sending where eBay would refuse it (eBay's getOrders reference: "Maximum:
//! 200" orders a page, "maximum 50" order ids, the two orderfulfillmentstatus combinations it
//! supports).

use std::time::SystemTime;

use crate::error::OrdersError;
use crate::time::format_timestamp;

/// The most orders a getOrders page holds (`limit`: "Maximum: 200"; more is error 31100).
pub const MAX_LIMIT: u32 = 200;

/// The most order ids one getOrders call takes (`orderIds`: "maximum 50"; more is error
/// 30900).
pub const MAX_ORDER_IDS: usize = 50;

/// A time range of the filter: from a start, inclusive, to an end, inclusive, or open-ended
/// (eBay's `[2016-03-21T08:25:43.511Z..]`). eBay needs the start (error 30820 "Start date is
/// missing"), so there is no range without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateRange {
    from: SystemTime,
    to: Option<SystemTime>,
}

impl DateRange {
    /// From `from` on, with no end.
    pub fn since(from: SystemTime) -> Self {
        Self { from, to: None }
    }

    /// From `from` to `to`, both inclusive. Refused when `to` is before `from` (eBay's 30840
    /// "Start date should be before end date").
    pub fn between(from: SystemTime, to: SystemTime) -> Result<Self, OrdersError> {
        if to < from {
            return Err(OrdersError::Invalid {
                what: "the date range",
                reason: format!(
                    "its end ({}) is before its start ({}); eBay answers 30840 \"Start date \
                     should be before end date\"",
                    describe(to),
                    describe(from)
                ),
            });
        }
        Ok(Self { from, to: Some(to) })
    }

    /// The start (inclusive).
    pub fn from(&self) -> SystemTime {
        self.from
    }

    /// The end (inclusive), if any.
    pub fn to(&self) -> Option<SystemTime> {
        self.to
    }

    /// `name:[start..end]` in eBay's format (UTC, milliseconds).
    fn text(&self, name: &'static str) -> Result<String, OrdersError> {
        let from = format_timestamp(self.from, name)?;
        let to = match self.to {
            Some(to) => format_timestamp(to, name)?,
            None => String::new(),
        };
        Ok(format!("{name}:[{from}..{to}]"))
    }
}

/// A time for an error message: eBay's format when it has one, else the seconds from 1970.
fn describe(time: SystemTime) -> String {
    format_timestamp(time, "").unwrap_or_else(|_| format!("{time:?}"))
}

/// The orderfulfillmentstatus combinations getOrders supports ("only the combinations shown
/// here are currently supported"): any other is not a value of this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FulfillmentStatuses {
    /// `{NOT_STARTED|IN_PROGRESS}`: orders not shipped, or partly shipped.
    NotStartedOrInProgress,
    /// `{FULFILLED|IN_PROGRESS}`: orders shipped, or partly shipped.
    FulfilledOrInProgress,
}

impl FulfillmentStatuses {
    /// The set as eBay writes it: `{NOT_STARTED|IN_PROGRESS}` or `{FULFILLED|IN_PROGRESS}`.
    pub fn as_str(self) -> &'static str {
        match self {
            FulfillmentStatuses::NotStartedOrInProgress => "{NOT_STARTED|IN_PROGRESS}",
            FulfillmentStatuses::FulfilledOrInProgress => "{FULFILLED|IN_PROGRESS}",
        }
    }
}

/// getOrders' `filter`: which orders, by creation or last modification time and by how far
/// they are shipped. Empty, it selects every order created in the last 90 days (getOrders:
/// "By default, when no filters are used this call returns all orders created within the last
/// 90 days").
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use marketplace_orders::{DateRange, FulfillmentStatuses, OrderFilter};
///
/// let since = UNIX_EPOCH + Duration::from_millis(1_463_300_743_511);
/// let filter = OrderFilter::new()
///     .last_modified(DateRange::since(since))
///     .fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress);
/// assert_eq!(
///     filter.text()?,
///     "lastmodifieddate:[2016-05-15T08:25:43.511Z..],orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}"
/// );
/// # Ok::<(), marketplace_orders::OrdersError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrderFilter {
    creation_date: Option<DateRange>,
    last_modified_date: Option<DateRange>,
    fulfillment_status: Option<FulfillmentStatuses>,
}

impl OrderFilter {
    /// No criterion: every order getOrders returns by default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Orders created in `range` (`creationdate`, the orders' `creationDate`).
    pub fn created(mut self, range: DateRange) -> Self {
        self.creation_date = Some(range);
        self
    }

    /// Orders last modified in `range` (`lastmodifieddate`, the orders' `lastModifiedDate`).
    pub fn last_modified(mut self, range: DateRange) -> Self {
        self.last_modified_date = Some(range);
        self
    }

    /// Orders whose `orderFulfillmentStatus` is in `statuses` (`orderfulfillmentstatus`).
    pub fn fulfillment_status(mut self, statuses: FulfillmentStatuses) -> Self {
        self.fulfillment_status = Some(statuses);
        self
    }

    /// The `creationdate` range, if set.
    pub fn creation_date(&self) -> Option<DateRange> {
        self.creation_date
    }

    /// The `lastmodifieddate` range, if set.
    pub fn last_modified_date(&self) -> Option<DateRange> {
        self.last_modified_date
    }

    /// The `orderfulfillmentstatus` set, if set.
    pub fn fulfillment_statuses(&self) -> Option<FulfillmentStatuses> {
        self.fulfillment_status
    }

    /// The filter's text as getOrders takes it (before the URL's percent-encoding, which the
    /// client adds): the criteria joined by commas, `creationdate:[…..…]`,
    /// `lastmodifieddate:[…..…]`, `orderfulfillmentstatus:{…|…}`; empty without criteria.
    /// Refused when both date ranges are set (eBay then silently uses creationdate only) or
    /// a time cannot be written in eBay's format (before 1970, after 9999).
    pub fn text(&self) -> Result<String, OrdersError> {
        if self.creation_date.is_some() && self.last_modified_date.is_some() {
            return Err(OrdersError::Invalid {
                what: "filter",
                reason: "both creationdate and lastmodifieddate are set; eBay would use \
                         creationdate only and ignore lastmodifieddate (getOrders: \"If \
                         creationdate and lastmodifieddate are both included, only \
                         creationdate is used\"): set one"
                    .to_owned(),
            });
        }
        let mut parts = Vec::with_capacity(2);
        if let Some(range) = &self.creation_date {
            parts.push(range.text("creationdate")?);
        }
        if let Some(range) = &self.last_modified_date {
            parts.push(range.text("lastmodifieddate")?);
        }
        if let Some(statuses) = self.fulfillment_status {
            parts.push(format!("orderfulfillmentstatus:{}", statuses.as_str()));
        }
        Ok(parts.join(","))
    }
}

/// getOrders' `fieldGroups`: what the answer adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldGroup {
    /// `TAX_BREAKDOWN`: the breakdown of taxes and fees (the only value eBay supports).
    TaxBreakdown,
}

impl FieldGroup {
    /// The value as eBay writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldGroup::TaxBreakdown => "TAX_BREAKDOWN",
        }
    }
}

/// One getOrders call by filter: the filter, the page (`limit`, `offset`) and the field
/// groups. The page is 200 orders unless set (eBay's default is 50: the largest page makes
/// the fewest calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetOrders {
    filter: OrderFilter,
    limit: u32,
    offset: u32,
    field_group: Option<FieldGroup>,
}

impl GetOrders {
    /// The orders `filter` selects, from the first, [`MAX_LIMIT`] a page.
    pub fn new(filter: OrderFilter) -> Self {
        Self {
            filter,
            limit: MAX_LIMIT,
            offset: 0,
            field_group: None,
        }
    }

    /// At most `limit` orders a page: 1 to [`MAX_LIMIT`] (200), else refused (eBay: 31100
    /// "Invalid limit").
    pub fn limit(mut self, limit: u32) -> Result<Self, OrdersError> {
        if limit == 0 || limit > MAX_LIMIT {
            return Err(OrdersError::Invalid {
                what: "limit",
                reason: format!(
                    "{limit} orders a page; getOrders takes 1 to {MAX_LIMIT} (eBay answers \
                     31100 \"Invalid limit\")"
                ),
            });
        }
        self.limit = limit;
        Ok(self)
    }

    /// Skips the first `offset` orders (zero-based).
    pub fn offset(mut self, offset: u32) -> Self {
        self.offset = offset;
        self
    }

    /// Adds `group` to the answer (`fieldGroups`).
    pub fn field_group(mut self, group: FieldGroup) -> Self {
        self.field_group = Some(group);
        self
    }

    /// The filter.
    pub fn filter(&self) -> &OrderFilter {
        &self.filter
    }

    /// The page size.
    pub fn page_size(&self) -> u32 {
        self.limit
    }

    /// The offset.
    pub fn start(&self) -> u32 {
        self.offset
    }

    /// The query parameters, in the order they are sent: `filter` (when not empty), `limit`,
    /// `offset`, `fieldGroups` (when set).
    pub fn query(&self) -> Result<Vec<(&'static str, String)>, OrdersError> {
        let mut query = Vec::with_capacity(4);
        let filter = self.filter.text()?;
        if !filter.is_empty() {
            query.push(("filter", filter));
        }
        query.push(("limit", self.limit.to_string()));
        query.push(("offset", self.offset.to_string()));
        if let Some(group) = self.field_group {
            query.push(("fieldGroups", group.as_str().to_owned()));
        }
        Ok(query)
    }
}

/// getOrders' `orderIds`: 1 to [`MAX_ORDER_IDS`] (50) order ids, each checked before sending.
/// eBay ignores every other parameter of a call with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderIds(Vec<String>);

impl OrderIds {
    /// The ids, in order. Refused: none, more than 50 (eBay's 30900), an empty id, or one with
    /// a comma (the list's separator), a space or a control character.
    pub fn new<S: AsRef<str>>(ids: impl IntoIterator<Item = S>) -> Result<Self, OrdersError> {
        let ids: Vec<String> = ids.into_iter().map(|s| s.as_ref().to_owned()).collect();
        if ids.is_empty() {
            return Err(OrdersError::Invalid {
                what: "orderIds",
                reason: "no order id; getOrders takes 1 to 50".to_owned(),
            });
        }
        if ids.len() > MAX_ORDER_IDS {
            return Err(OrdersError::Invalid {
                what: "orderIds",
                reason: format!(
                    "{} order ids; getOrders takes at most {MAX_ORDER_IDS} a call (eBay \
                     answers 30900 \"Exceeded maximum number of order IDs\"): split them",
                    ids.len()
                ),
            });
        }
        for (i, id) in ids.iter().enumerate() {
            check_order_id(id).map_err(|reason| OrdersError::Invalid {
                what: "orderIds",
                reason: format!("the order id at {i}, {id:?}, {reason}"),
            })?;
        }
        Ok(Self(ids))
    }

    /// The ids.
    pub fn ids(&self) -> &[String] {
        &self.0
    }

    /// The parameter's value: the ids joined by commas.
    pub fn text(&self) -> String {
        self.0.join(",")
    }
}

/// Why `id` cannot be an order id, if it cannot.
pub(crate) fn check_order_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() {
        Err("is empty")
    } else if id.contains(',') {
        Err("has a comma, which separates order ids")
    } else if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err("has a space or a control character; eBay's order ids have none")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    fn ms(millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(millis)
    }

    // The timestamps of eBay's getOrders filter examples.
    const T_2016_02_21: u64 = 1_456_043_143_511; // 2016-02-21T08:25:43.511Z
    const T_2016_03_21: u64 = 1_458_548_743_511; // 2016-03-21T08:25:43.511Z
    const T_2016_04_21: u64 = 1_461_227_143_511; // 2016-04-21T08:25:43.511Z
    const T_2016_05_15: u64 = 1_463_300_743_511; // 2016-05-15T08:25:43.511Z
    const T_2016_05_31: u64 = 1_464_683_143_511; // 2016-05-31T08:25:43.511Z

    #[test]
    fn each_form_of_the_filter_reads_as_ebays_documented_examples() {
        let text = |f: OrderFilter| f.text().unwrap();
        assert_eq!(
            text(OrderFilter::new().created(DateRange::since(ms(T_2016_02_21)))),
            "creationdate:[2016-02-21T08:25:43.511Z..]"
        );
        assert_eq!(
            text(
                OrderFilter::new()
                    .created(DateRange::between(ms(T_2016_02_21), ms(T_2016_04_21)).unwrap())
            ),
            "creationdate:[2016-02-21T08:25:43.511Z..2016-04-21T08:25:43.511Z]"
        );
        assert_eq!(
            text(OrderFilter::new().last_modified(DateRange::since(ms(T_2016_05_15)))),
            "lastmodifieddate:[2016-05-15T08:25:43.511Z..]"
        );
        assert_eq!(
            text(
                OrderFilter::new()
                    .last_modified(DateRange::between(ms(T_2016_05_15), ms(T_2016_05_31)).unwrap())
            ),
            "lastmodifieddate:[2016-05-15T08:25:43.511Z..2016-05-31T08:25:43.511Z]"
        );
        assert_eq!(
            text(
                OrderFilter::new().fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress)
            ),
            "orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}"
        );
        assert_eq!(
            text(OrderFilter::new().fulfillment_status(FulfillmentStatuses::FulfilledOrInProgress)),
            "orderfulfillmentstatus:{FULFILLED|IN_PROGRESS}"
        );
        assert_eq!(text(OrderFilter::new()), "");
        // eBay's example of a call with every filter (its creationdate with
        // orderfulfillmentstatus; lastmodifieddate is refused beside creationdate, below).
        assert_eq!(
            text(
                OrderFilter::new()
                    .created(DateRange::between(ms(T_2016_03_21), ms(T_2016_04_21)).unwrap())
                    .fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress)
            ),
            "creationdate:[2016-03-21T08:25:43.511Z..2016-04-21T08:25:43.511Z],\
             orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}"
        );
    }

    #[test]
    fn the_filter_every_order_of_ebays_example_call_is_written_as_ebay_encodes_it() {
        // eBay: "filter=creationdate:%5B2016-03-21T08:25:43.511Z..2016-04-21T08:25:43.511Z%5D,
        // …,orderfulfillmentstatus:%7BNOT_STARTED%7CIN_PROGRESS%7D": the brackets, braces and
        // bar are what eBay percent-encodes; the client form-encodes the value, which encodes
        // them (and the colons and commas, which eBay decodes alike).
        let query = GetOrders::new(
            OrderFilter::new()
                .created(DateRange::between(ms(T_2016_03_21), ms(T_2016_04_21)).unwrap())
                .fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress),
        )
        .query()
        .unwrap();
        assert_eq!(query[0].0, "filter");
        for special in ['[', ']', '{', '}', '|'] {
            assert!(query[0].1.contains(special), "{}", query[0].1);
        }
        assert_eq!(
            query[1..],
            [("limit", "200".to_owned()), ("offset", "0".to_owned())]
        );
    }

    #[test]
    fn both_date_ranges_are_refused_as_ebay_would_ignore_one() {
        let err = OrderFilter::new()
            .created(DateRange::since(ms(T_2016_03_21)))
            .last_modified(DateRange::since(ms(T_2016_05_15)))
            .text()
            .unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("filter: both creationdate and lastmodifieddate"),
            "{message}"
        );
        assert!(message.contains("nothing was sent"), "{message}");
    }

    #[test]
    fn a_range_ending_before_it_starts_is_refused_naming_both_ends() {
        let err = DateRange::between(ms(T_2016_04_21), ms(T_2016_03_21)).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("2016-03-21T08:25:43.511Z"), "{message}");
        assert!(message.contains("2016-04-21T08:25:43.511Z"), "{message}");
        assert!(message.contains("30840"), "{message}");
        // A range of one instant is eBay's "inclusive" both ends.
        assert!(DateRange::between(ms(T_2016_03_21), ms(T_2016_03_21)).is_ok());
    }

    #[test]
    fn a_time_before_1970_is_refused_when_the_filter_is_written() {
        let before = UNIX_EPOCH - Duration::from_secs(60);
        let err = OrderFilter::new()
            .last_modified(DateRange::since(before))
            .text()
            .unwrap_err();
        assert!(err.to_string().starts_with("lastmodifieddate: "), "{err}");
    }

    #[test]
    fn a_limit_outside_1_to_200_is_refused_and_200_is_the_default() {
        let query = GetOrders::new(OrderFilter::new());
        assert_eq!(query.page_size(), 200);
        for bad in [0, 201, u32::MAX] {
            let err = query.clone().limit(bad).unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("limit: {bad} orders a page")),
                "{message}"
            );
            assert!(message.contains("1 to 200"), "{message}");
        }
        for good in [1, 50, 200] {
            assert_eq!(query.clone().limit(good).unwrap().page_size(), good);
        }
        let query = query
            .limit(10)
            .unwrap()
            .offset(30)
            .field_group(FieldGroup::TaxBreakdown)
            .query()
            .unwrap();
        assert_eq!(
            query,
            [
                ("limit", "10".to_owned()),
                ("offset", "30".to_owned()),
                ("fieldGroups", "TAX_BREAKDOWN".to_owned())
            ]
        );
    }

    #[test]
    fn more_than_50_order_ids_or_a_malformed_one_are_refused() {
        let ids: Vec<String> = (0..50).map(|i| format!("12-34567-{i:05}")).collect();
        let ok = OrderIds::new(&ids).unwrap();
        assert_eq!(ok.ids().len(), 50);
        assert!(ok.text().starts_with("12-34567-00000,12-34567-00001,"));

        let mut more = ids.clone();
        more.push("12-34567-99999".to_owned());
        let message = OrderIds::new(&more).unwrap_err().to_string();
        assert!(message.starts_with("orderIds: 51 order ids"), "{message}");
        assert!(message.contains("at most 50"), "{message}");

        assert!(OrderIds::new(Vec::<String>::new()).is_err());
        for (bad, why) in [("", "is empty"), ("1,2", "comma"), ("1 2", "space")] {
            let message = OrderIds::new(["12-34567-00000", bad])
                .unwrap_err()
                .to_string();
            assert!(message.contains("the order id at 1"), "{message}");
            assert!(message.contains(why), "{message}");
        }
    }
}
