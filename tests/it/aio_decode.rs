//! The async front decodes a large answer off the runtime's threads: another task on the
//! same runtime keeps running while it decodes.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_marketplace::taxonomy::aspects_path;
use fake_marketplace::{FakeMarketplace, Response};
use marketplace_client::Marketplace;
use marketplace_client::aio::oauth::{
    ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_client::model::decode;

/// A getItemAspectsForCategory answer with one aspect of `values` values (500k: about 13 MB,
/// under the decoder's element limit).
fn large_answer(values: usize) -> Vec<u8> {
    let mut body = String::from(r#"{"aspects":[{"localizedAspectName":"Brand","aspectValues":["#);
    for i in 0..values {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&format!(r#"{{"localizedValue":"Brand {i}"}}"#));
    }
    body.push_str("]}]}");
    body.into_bytes()
}

/// The issue's case: `item_aspects` decoded on the runtime's thread, so an answer with 1.5 M
/// values stalled every other task of the runtime while it decoded (1.5 s). On a
/// current-thread runtime a decode on the runtime's thread stops a ticking task for the whole
/// decode; off it, the ticks keep coming. The longest pause of the ticks during the call must
/// be under half the time the decode takes on this machine, measured just before.
#[tokio::test(flavor = "current_thread")]
async fn a_large_answer_is_decoded_off_the_runtime_thread() {
    let body = large_answer(500_000);
    let started = Instant::now();
    let decoded = decode::item_aspects(9355, &body).unwrap();
    let decode_time = started.elapsed();
    assert_eq!(decoded.aspects[0].values.len(), 500_000);
    drop(decoded);
    assert!(
        decode_time > Duration::from_millis(100),
        "the decode ({decode_time:?}) is long enough to tell"
    );

    let fake = FakeMarketplace::new();
    let body = Arc::new(body);
    fake.route("GET", &aspects_path(0), move |_, _| {
        Response::new(200, body.to_vec()).with_header("Content-Type", "application/json")
    });
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let provider = Arc::new(ApplicationTokenProvider::new(oauth));
    let client = TaxonomyClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        provider,
    )
    .unwrap();

    let ticks = Arc::new(Mutex::new(Vec::new()));
    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            let mut interval = tokio::time::interval(Duration::from_millis(5));
            loop {
                interval.tick().await;
                ticks.lock().unwrap().push(Instant::now());
            }
        }
    });
    // Let the ticker start.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let call_started = Instant::now();
    let answer = client.item_aspects((Marketplace::Us, 9355)).await.unwrap();
    let call_ended = Instant::now();
    ticker.abort();
    assert_eq!(answer.aspects[0].values.len(), 500_000);

    let mut points = vec![call_started];
    points.extend(
        ticks
            .lock()
            .unwrap()
            .iter()
            .filter(|&&t| t > call_started && t < call_ended),
    );
    points.push(call_ended);
    let longest = points
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    eprintln!(
        "decode alone {decode_time:?}; the call {:?}; the longest pause of the ticks {longest:?}",
        call_ended - call_started
    );
    assert!(
        longest < decode_time / 2,
        "another task of the runtime stalled {longest:?} (the decode takes {decode_time:?})"
    );
}
