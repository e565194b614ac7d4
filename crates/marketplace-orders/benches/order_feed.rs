//! Catching up 10,000 orders of one seller through [`OrderFeed::poll_once`] (the blocking
//! front) with a [`FileStore`], latency-bound: the fake on loopback answers every request
//! after 10 ms, as a distant service would.
//!
//! - `catch_up_10000`: a feed with no watermark yet (a fresh file store each iteration) reads
//!   the seller's 10,000 orders with getOrders, `lastmodifieddate` from before the first to
//!   now, pages of 200 to the end, each change handed to a handler that counts it. Every
//!   iteration counts the getOrders calls the fake received and fails above 60 (the issue's
//!   bound; none of the orders has a cancel request, so no getOrder call is made).
//! - `decode_one_order`: `serde_json::from_slice::<Order>` of one order as getOrder answers it
//!   (the baseline).
//! - then, once, in the same run: one catch-up timed, a bare walk of the same orders (getOrders
//!   pages to the end, no feed) timed, and the decoding of the same 10,000 orders (each as
//!   getOrder answers it) timed; the feed's own cost per order is the catch-up's time beyond
//!   the fake's 10 ms answers (`time - calls × 10 ms`: the in-process fake's selecting and
//!   encoding, loopback HTTP, decoding the pages, de-duplication, the file store's writes),
//!   divided by 10,000; it and the bare walk's are printed as ratios to one order's
//!   decoding.
//!
//! One run (`cargo bench -p marketplace-orders --profile dev --bench order_feed --
//! --sample-size 10`, unoptimized, on the 2-core machine shared with other builds,
//! 2026-11-29): `catch_up_10000` 3.05 s (criterion's mean of 10), 50 getOrders calls (at most
//! 60); `decode_one_order` 21.7 µs. Once: catch-up 3.21 s, 0.50 s of it the fake's answers;
//! decoding 22.0 µs an order; the feed's own cost 271 µs an order, **12.3×** decoding one; a
//! bare walk of the same pages 2.53 s, 203 µs an order, 9.2×: the feed adds 68 µs an order
//! (3.1× decoding) to reading the pages. An earlier run the same day on a busier machine:
//! 14.7× (524 µs against 35.5 µs). See docs/benchmarks.md.

#[path = "../../../tests/common/inventory.rs"]
mod fake_inventory;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, SamplingMode};
use fake_marketplace::{FakeMarketplace, Fault, FaultRule};
use marketplace_client::oauth::AccessTokenSource;
use marketplace_orders::Order;
use marketplace_orders::blocking::{OrderFeed, Orders};
use marketplace_orders::feed::{FileStore, OrderChange, Polled};

const DELAY: Duration = Duration::from_millis(10);
const ORDERS: usize = 10_000;
/// The bound on the getOrders calls of a catch-up of 10,000 orders (pages of 200).
const MAX_CALLS: usize = 60;
const GET_ORDERS: &str = "/sell/fulfillment/v1/order";

/// The fake with the seller's 10,000 orders (1 ms apart on its clock), the seller's token
/// (granting `sell.fulfillment`), the time before the first order and the orders' ids; every
/// answer comes after [`DELAY`] from then on.
struct Setup {
    fake: FakeMarketplace,
    tokens: Arc<dyn AccessTokenSource>,
    start: SystemTime,
    ids: Vec<String>,
}

fn setup() -> Setup {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(1);
    let listing = fake.add_listing("fake_seller", "BOLT-1", 2 * ORDERS as u32, "0.10");
    let ids = (0..ORDERS)
        .map(|_| {
            let id = fake.buy(&listing, 1).unwrap();
            fake.advance_clock(Duration::from_millis(1));
            id
        })
        .collect();
    fake.advance_clock(Duration::from_millis(5));
    let tokens = fake_inventory::seller_tokens(&fake, &["/sell.fulfillment"]);
    fake.inject(FaultRule {
        method: None,
        path: None,
        times: None,
        fault: Fault::Delay(DELAY),
    });
    Setup {
        fake,
        tokens,
        start,
        ids,
    }
}

/// One catch-up of every order by a feed without a watermark: its time, what it did and the
/// getOrders calls the fake received; fails unless every order was handed over once within
/// [`MAX_CALLS`] calls.
fn catch_up(setup: &Setup) -> (Duration, Polled, usize) {
    let dir = tempfile::tempdir().unwrap();
    let orders = Orders::new(fake_inventory::api_with(&setup.fake, setup.tokens.clone()))
        .with_retries(0, Duration::ZERO);
    let clock = setup.fake.state().clone();
    let mut feed = OrderFeed::new(orders, FileStore::new(dir.path()), "fake_seller")
        .starting_at(setup.start)
        .with_clock(move || clock.now());
    let mut handed = 0usize;
    let mut handler = |_: &OrderChange, _: &mut ()| {
        handed += 1;
        Ok(())
    };
    setup.fake.clear_requests();
    let began = Instant::now();
    let polled = feed.poll_once(&mut handler).unwrap();
    let time = began.elapsed();
    let calls = setup.fake.requests_to(GET_ORDERS).len();
    assert_eq!((polled.handed_over, handed), (ORDERS, ORDERS));
    assert!(
        calls <= MAX_CALLS,
        "catching up {ORDERS} orders took {calls} getOrders calls (at most {MAX_CALLS})"
    );
    (time, polled, calls)
}

/// Each order as getOrder answers it, encoded.
fn encoded(setup: &Setup) -> Vec<Vec<u8>> {
    setup
        .ids
        .iter()
        .map(|id| serde_json::to_vec(&setup.fake.order(id).unwrap()).unwrap())
        .collect()
}

fn benches(c: &mut Criterion, setup: &Setup) {
    let one = encoded(setup).swap_remove(0);

    let mut group = c.benchmark_group("order_feed");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("catch_up_10000", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| catch_up(setup).0).sum())
    });
    group.finish();
    c.bench_function("order_feed/decode_one_order", |b| {
        b.iter(|| serde_json::from_slice::<Order>(std::hint::black_box(&one)).unwrap())
    });
}

/// The same orders read by a bare walk (getOrders over the same range, pages of 200 to the
/// end, no feed): its time and calls.
fn walk(setup: &Setup) -> (Duration, usize) {
    let orders = Orders::new(fake_inventory::api_with(&setup.fake, setup.tokens.clone()))
        .with_retries(0, Duration::ZERO);
    setup.fake.clear_requests();
    let began = Instant::now();
    let read = orders
        .modified_between(setup.start, setup.fake.now())
        .unwrap()
        .all()
        .unwrap();
    let time = began.elapsed();
    assert_eq!(read.len(), ORDERS);
    (time, setup.fake.requests_to(GET_ORDERS).len())
}

/// One catch-up, one bare walk and the decoding of the 10,000 orders, once: the calls, and
/// the ratios of the feed's own cost per order (and of the bare walk's) to decoding one,
/// printed.
fn ratio(setup: &Setup) {
    let (time, polled, calls) = catch_up(setup);
    let (walk_time, walk_calls) = walk(setup);
    let orders = encoded(setup);
    let began = Instant::now();
    for bytes in &orders {
        std::hint::black_box(serde_json::from_slice::<Order>(bytes).unwrap());
    }
    let decode = began.elapsed() / ORDERS as u32;
    let per_order = |time: Duration, calls: usize| {
        let own = time.saturating_sub(DELAY * calls as u32) / ORDERS as u32;
        (own, own.as_secs_f64() / decode.as_secs_f64())
    };
    let (own, ratio) = per_order(time, calls);
    let (walk_own, walk_ratio) = per_order(walk_time, walk_calls);
    println!(
        "order_feed/catch_up_10000: {time:.2?}, {calls} getOrders calls ({} calls counted by \
         the feed; at most {MAX_CALLS}), {:.2?} of it the fake's 10 ms answers; decoding one \
         order {decode:.2?}; the feed's own cost {own:.2?} an order: {ratio:.1}x decoding one; \
         a bare walk of the same orders ({walk_calls} calls, {walk_time:.2?}): {walk_own:.2?} an \
         order, {walk_ratio:.1}x",
        polled.calls,
        DELAY * calls as u32,
    );
}

/// Whether the command line names a benchmark (a filter): `cargo bench -- decode`.
fn filtered(args: &[String]) -> bool {
    // Criterion's options that take a value as the next argument.
    const VALUED: &[&str] = &[
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--profile-time",
        "--plotting-backend",
        "--output-format",
        "--color",
        "--format",
        "-s",
        "-b",
        "-c",
    ];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if VALUED.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return true;
        }
    }
    false
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut criterion = Criterion::default().configure_from_args();
    // `cargo test --benches` and `--list`: nothing to measure.
    let test_mode = args.iter().any(|a| a == "--test" || a == "--list");
    if test_mode {
        criterion.final_summary();
        return;
    }
    let setup = setup();
    // The token, before measuring.
    catch_up(&setup);
    benches(&mut criterion, &setup);
    // The ratio only when the whole bench runs.
    if !filtered(&args) {
        ratio(&setup);
    }
    criterion.final_summary();
}
