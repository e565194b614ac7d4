//! getOrders' paging against a service that answers what eBay never would, over real HTTP on
//! loopback (a few lines of a server here, not the fake: the fake answers as eBay does): the
//! walk ends, with an error naming what was wrong, instead of asking for pages forever.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_client::oauth::AccessToken;
use marketplace_orders::blocking::Orders;
use marketplace_orders::{GetOrders, OrderFilter, OrdersError};

/// More pages than any of these walks may ask for: past it, the walk did not end.
const BOUND: usize = 200;

/// Serves every request with `answer(n)` (n: the request's number, from 0) as a 200 JSON
/// body; returns the base URL and the count of requests served.
fn serve(answer: impl Fn(u64) -> String + Send + 'static) -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let body = answer(count.fetch_add(1, Ordering::SeqCst));
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (base, served)
}

fn orders(base: &str) -> Orders {
    let config = ClientConfig::for_base_url(base)
        .unwrap()
        .with_max_retries(0);
    let api = ApiClient::new(config, Arc::new(AccessToken::new("v^1.1#test"))).unwrap();
    Orders::new(api)
}

fn page(total: &str, ids: &[String]) -> String {
    let orders: Vec<String> = ids
        .iter()
        .map(|id| format!(r#"{{"orderId":"{id}","lastModifiedDate":"2026-01-01T00:00:00.000Z"}}"#))
        .collect();
    format!(
        r#"{{"href":"x","total":{total},"limit":200,"offset":0,"next":"http://elsewhere.example/sell/fulfillment/v1/order?offset=1","orders":[{}],"warnings":[]}}"#,
        orders.join(",")
    )
}

#[test]
fn the_same_orders_on_every_page_under_a_total_of_u64_max_end_the_walk_with_an_error() {
    let (base, served) = serve(|_| page(&u64::MAX.to_string(), &["1-1".into(), "2-2".into()]));
    let orders = orders(&base);
    let mut handed = 0;
    let mut last = None;
    let mut pages = orders.pages(GetOrders::new(OrderFilter::new()));
    for _ in 0..BOUND {
        match pages.next() {
            Some(Ok(page)) => handed += page.len(),
            Some(Err(e)) => last = Some(e),
            None => break,
        }
    }
    assert!(
        pages.next().is_none(),
        "the walk did not end after {BOUND} pages ({} requests)",
        served.load(Ordering::SeqCst)
    );
    assert_eq!(handed, 2, "each order is handed once");
    let err = last.expect("the walk ends with an error, not as if it had read everything");
    assert!(matches!(err, OrdersError::Repeating { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("offset 2 ") && text.contains("18446744073709551615"),
        "{text}"
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        2,
        "one page of repeats is enough"
    );
}

#[test]
fn new_orders_without_end_past_the_last_offset_there_is_end_the_walk() {
    // Every page has fresh orders and the total says there are more: the offset reaches
    // u32::MAX, where it can go no further (it was asked again there forever).
    let (base, served) =
        serve(|n| page(&u64::MAX.to_string(), &[format!("{n}-a"), format!("{n}-b")]));
    let orders = orders(&base);
    let mut pages = orders.pages(GetOrders::new(OrderFilter::new()).offset(u32::MAX - 5));
    let mut walked = 0;
    while walked < BOUND && pages.next().is_some() {
        walked += 1;
    }
    assert!(
        pages.next().is_none(),
        "the walk did not end after {BOUND} pages ({} requests)",
        served.load(Ordering::SeqCst)
    );
    // Offsets u32::MAX - 5, - 3 and - 1: the next, u32::MAX + 1, is no offset to ask for.
    assert_eq!(walked, 3, "{walked} pages");
}

#[test]
fn a_page_of_a_million_orders_is_refused_naming_the_200_a_page_can_hold() {
    // 16 bytes an order on the wire (16 MB, under the client's 64 MB body limit), each a whole
    // `Order` once decoded: the page is refused past eBay's 200, not held in memory.
    let body = format!(
        r#"{{"total":1000000,"limit":200,"offset":0,"orders":[{}]}}"#,
        vec![r#"{"orderId":"1"}"#; 1_000_000].join(",")
    );
    let (base, served) = serve(move |_| body.clone());
    let orders = orders(&base);
    let mut pages = orders.pages(GetOrders::new(OrderFilter::new()));
    let error = match pages.next() {
        Some(Err(e)) => e.to_string(),
        Some(Ok(page)) => panic!(
            "the page was accepted ({} orders once repeats dropped)",
            page.len()
        ),
        None => panic!("the walk ended without a page"),
    };
    assert!(
        error.contains("200") && error.contains("orders"),
        "the error does not name the 200 orders a page holds: {error}"
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "asked again after a refused page"
    );
}
