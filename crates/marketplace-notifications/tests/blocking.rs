//! The blocking front (`marketplace_notifications::blocking`) served by a plain `std::net`
//! server, one thread per connection, driven by the fake marketplace as eBay drives it: the
//! challenge, signed account deletions (retried, tampered, a hundred from eight threads), the
//! keys from the fake's getPublicKey; called from inside tokio runtimes; its threads counted
//! in /proc/self/task.
//!
//! A test binary of its own (not a module of tests/it/): the thread counts are its process's,
//! which tests running beside it in one binary would change.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fake_marketplace::notify::PUBLIC_KEY_PATH;
use fake_marketplace::{AccountDeletionNotice, FakeMarketplace, FakeUser, Tamper};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_notifications::{Notification, VerificationToken, blocking};

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";
const URL: &str = "https://seller.example/ebay/notifications";

/// The tests run one at a time: the thread count is the process's.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A blocking key cache for `fake`: getPublicKey with an application token.
fn key_cache(fake: &FakeMarketplace) -> blocking::PublicKeyCache {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&oauth).unwrap(),
    ));
    let api = ApiClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        tokens,
    )
    .unwrap();
    blocking::PublicKeyCache::new(marketplace_notifications::PublicKeyCache::new(api)).unwrap()
}

/// An endpoint at `url` counting the notifications its callback receives.
fn endpoint(
    url: &str,
    keys: &blocking::PublicKeyCache,
) -> (
    blocking::NotificationEndpoint,
    Arc<Mutex<Vec<Notification>>>,
) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    let endpoint =
        blocking::NotificationEndpoint::new(url, VerificationToken::new(TOKEN).unwrap(), keys)
            .unwrap()
            .on_notification(move |n| {
                sink.lock().unwrap().push(n);
                Ok::<(), std::io::Error>(())
            });
    (endpoint, received)
}

/// Serves `endpoint` over loopback with std's TCP, one thread per connection (as a
/// thread-per-request server does), until the returned guard is dropped.
fn serve(listener: TcpListener, endpoint: Arc<blocking::NotificationEndpoint>) -> Server {
    let stop = Arc::new(AtomicBool::new(false));
    let addr = listener.local_addr().unwrap();
    let stopped = stop.clone();
    let thread = std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopped.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let endpoint = endpoint.clone();
            std::thread::spawn(move || answer(stream, &endpoint));
        }
    });
    Server {
        stop,
        addr,
        thread: Some(thread),
    }
}

/// Stops the server when dropped (so the endpoint, and the cache's runtime, go too).
struct Server {
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(stream: TcpStream, endpoint: &blocking::NotificationEndpoint) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap().to_owned();
    let target = parts.next().unwrap().to_owned();
    let (_, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target.as_str(), None),
    };
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = endpoint.handle(&method, query, &headers, &body);
    let mut head = format!(
        "HTTP/1.1 {} X\r\nConnection: close\r\nContent-Length: {}\r\n",
        answer.status,
        answer.body.len()
    );
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut writer = &stream;
    writer.write_all(head.as_bytes()).unwrap();
    writer.write_all(&answer.body).unwrap();
}

/// The library's own threads (the runtime's and its blocking pool's: named
/// `marketplace-notifications…`, cut to 15 bytes by Linux), from /proc/self/task.
fn library_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("marketplace-not"))
        .count()
}

fn thread_names() -> String {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .collect::<Vec<_>>()
        .join(",")
}

/// Waits (a while) for the library's threads to be `n`.
fn library_threads_settle_at(n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let count = library_threads();
        if count == n || Instant::now() > deadline {
            return count;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn from_a_plain_thread_a_signed_deletion_gets_204_and_reaches_the_application_once() {
    let _serial = serial();
    let fake = FakeMarketplace::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/ebay/notifications",
        listener.local_addr().unwrap()
    );
    let keys = key_cache(&fake);
    let (endpoint, received) = endpoint(&url, &keys);
    let server = serve(listener, Arc::new(endpoint));

    let challenge = fake.run_challenge(&url, TOKEN).unwrap();
    assert!(challenge.passed(), "{challenge:?}");

    let user = FakeUser {
        user_id: "seller42Id".into(),
        username: "seller_42".into(),
    };
    let notice = AccountDeletionNotice::new(&fake, &user);
    let first = fake.send_notification(&url, &notice).unwrap();
    let retry = fake.send_notification(&url, &notice.retry()).unwrap();
    assert_eq!(
        (first.status, retry.status),
        (204, 204),
        "{}",
        first.body_str()
    );
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 1, "the retry is not handled twice");
    let Notification::AccountDeletion(deletion) = &received[0] else {
        panic!("{:?}", received[0]);
    };
    assert_eq!(deletion.user_id, "seller42Id");
    assert_eq!(deletion.notification_id, notice.notification_id);
    assert_eq!(keys.len(), 1);
    // The server and the cache gone, the runtime's threads are gone.
    drop(server);
    drop(keys);
    assert_eq!(library_threads_settle_at(0), 0, "{}", thread_names());
}

#[test]
fn from_a_plain_thread_a_tampered_notification_gets_412_and_reaches_nobody() {
    let _serial = serial();
    let fake = FakeMarketplace::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/ebay/notifications",
        listener.local_addr().unwrap()
    );
    let keys = key_cache(&fake);
    let (endpoint, received) = endpoint(&url, &keys);
    let server = serve(listener, Arc::new(endpoint));

    let notice = AccountDeletionNotice::new(&fake, &FakeUser::default());
    for tamper in [Tamper::Body, Tamper::Signature] {
        let answer = fake
            .send_notification(&url, &notice.tampered(tamper))
            .unwrap();
        assert_eq!(answer.status, 412, "{tamper:?}: {}", answer.body_str());
        assert!(
            answer.body_str().contains("does not verify"),
            "{}",
            answer.body_str()
        );
    }
    assert!(received.lock().unwrap().is_empty());
    // The genuine one is still handled afterwards.
    assert_eq!(fake.send_notification(&url, &notice).unwrap().status, 204);
    assert_eq!(received.lock().unwrap().len(), 1);
    drop(server);
    drop(keys);
    assert_eq!(library_threads_settle_at(0), 0, "{}", thread_names());
}

#[test]
fn a_hundred_notifications_from_eight_threads_make_one_get_public_key_call() {
    let _serial = serial();
    let fake = FakeMarketplace::new();
    let keys = key_cache(&fake);
    let (endpoint, received) = endpoint(URL, &keys);
    let bodies: Vec<String> = (0..100)
        .map(|i| {
            let user = FakeUser {
                user_id: format!("user{i}"),
                username: format!("name{i}"),
            };
            AccountDeletionNotice::new(&fake, &user).body()
        })
        .collect();
    let next = AtomicUsize::new(0);
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let mut statuses = Vec::new();
                    while let Some(body) = bodies.get(next.fetch_add(1, Ordering::SeqCst)) {
                        let signature = fake.signature_header(body.as_bytes());
                        let headers = [
                            ("Content-Type", "application/json"),
                            ("X-EBAY-SIGNATURE", signature.as_str()),
                        ];
                        statuses.push(
                            endpoint
                                .handle("POST", None, &headers, body.as_bytes())
                                .status,
                        );
                    }
                    statuses
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    assert_eq!(statuses.len(), 100);
    assert!(statuses.iter().all(|&s| s == 204), "{statuses:?}");
    let kid = fake.notification_kid();
    let calls = fake.requests_to(&format!("{PUBLIC_KEY_PATH}{kid}"));
    assert_eq!(calls.len(), 1, "getPublicKey calls");
    assert_eq!(received.lock().unwrap().len(), 100);
}

/// A signed notification's (headers, body) for `fake`.
fn signed(fake: &FakeMarketplace) -> (String, String) {
    let body = AccountDeletionNotice::new(fake, &FakeUser::default()).body();
    (fake.signature_header(body.as_bytes()), body)
}

#[test]
fn called_inside_a_tokio_runtime_it_neither_panics_nor_blocks_forever() {
    let _serial = serial();
    let fake = Arc::new(FakeMarketplace::new());
    let (done, outcome) = std::sync::mpsc::channel();
    let f = fake.clone();
    // A watchdog: the calls run on a thread of their own, the test waits a bounded time.
    std::thread::spawn(move || {
        let fake = f;
        let kid = fake.notification_kid();
        // A current-thread runtime's block_on: the only thread of that runtime waits.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let in_block_on = runtime.block_on(async {
            let keys = key_cache(&fake);
            let (endpoint, received) = endpoint(URL, &keys);
            let (signature, body) = signed(&fake);
            let headers = [("X-EBAY-SIGNATURE", signature.as_str())];
            let status = endpoint
                .handle("POST", None, &headers, body.as_bytes())
                .status;
            let key = keys.get(&kid).is_ok();
            let count = received.lock().unwrap().len();
            // Dropped inside the runtime: the runtime thread of the cache is joined, no panic.
            drop(endpoint);
            drop(keys);
            (status, key, count)
        });
        // A task of a multi-thread runtime.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let fake2 = fake.clone();
        let in_task = runtime
            .block_on(runtime.spawn(async move {
                let keys = key_cache(&fake2);
                let (endpoint, received) = endpoint(URL, &keys);
                let (signature, body) = signed(&fake2);
                let headers = [("X-EBAY-SIGNATURE", signature.as_str())];
                let status = endpoint
                    .handle("POST", None, &headers, body.as_bytes())
                    .status;
                let count = received.lock().unwrap().len();
                drop(endpoint);
                drop(keys);
                (status, count)
            }))
            .unwrap();
        let _ = done.send((in_block_on, in_task));
    });
    let (in_block_on, in_task) = outcome
        .recv_timeout(Duration::from_secs(60))
        .expect("a call from inside a tokio runtime did not return within 60 s");
    assert_eq!(in_block_on, (204, true, 1));
    assert_eq!(in_task, (204, 1));
    assert_eq!(library_threads_settle_at(0), 0);
}

/// A thread that ends a moment after the drop returns (a thread of the runtime's blocking
/// pool, ended by the runtime's shutdown but not yet gone from `/proc`) is not a leak; one still
/// there after [`library_threads_settle_at`]'s 5 s is.
#[test]
fn dropping_the_blocking_cache_on_any_thread_leaks_no_thread() {
    let _serial = serial();
    let fake = Arc::new(FakeMarketplace::new());
    let kid = fake.notification_kid();
    assert_eq!(
        library_threads_settle_at(0),
        0,
        "before: {}",
        thread_names()
    );

    // Created, used (getPublicKey through the runtime) and dropped on this thread.
    let keys = key_cache(&fake);
    keys.get(&kid).unwrap();
    assert!(library_threads() >= 1, "the runtime's thread runs");
    drop(keys);
    assert_eq!(library_threads_settle_at(0), 0, "dropped on a plain thread");

    // Created here, with an endpoint, dropped on another thread (the endpoint last).
    let keys = key_cache(&fake);
    let (endpoint, received) = endpoint(URL, &keys);
    let (signature, body) = signed(&fake);
    let headers = [("X-EBAY-SIGNATURE", signature.as_str())];
    assert_eq!(
        endpoint
            .handle("POST", None, &headers, body.as_bytes())
            .status,
        204
    );
    assert_eq!(received.lock().unwrap().len(), 1);
    std::thread::spawn(move || {
        drop(keys);
        drop(endpoint);
    })
    .join()
    .unwrap();
    assert_eq!(library_threads_settle_at(0), 0, "dropped on another thread");

    // Dropped inside a task of a tokio runtime.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let keys = key_cache(&fake);
    keys.get(&kid).unwrap();
    runtime
        .block_on(runtime.spawn(async move { drop(keys) }))
        .unwrap();
    assert_eq!(library_threads_settle_at(0), 0, "dropped in a tokio task");
}

#[test]
fn a_failing_or_panicking_callback_answers_500_and_the_retry_is_handled() {
    let _serial = serial();
    let fake = FakeMarketplace::new();
    let keys = key_cache(&fake);
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let endpoint =
        blocking::NotificationEndpoint::new(URL, VerificationToken::new(TOKEN).unwrap(), &keys)
            .unwrap()
            .on_notification(move |_| match counted.fetch_add(1, Ordering::SeqCst) {
                0 => Err(std::io::Error::other("the database is down")),
                1 => panic!("a callback's own bug"),
                _ => Ok(()),
            });
    let (signature, body) = signed(&fake);
    let headers = [("X-EBAY-SIGNATURE", signature.as_str())];
    let statuses: Vec<u16> = (0..4)
        .map(|_| {
            endpoint
                .handle("POST", None, &headers, body.as_bytes())
                .status
        })
        .collect();
    // Failed, panicked (both: eBay sends it again), handled, then known as handled.
    assert_eq!(statuses, [500, 500, 204, 204]);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

/// The blocking `NotificationEndpoint::new` takes the URL as an owned `String` too.
#[test]
fn a_blocking_endpoint_takes_its_url_as_a_string() {
    let _serial = serial();
    let fake = FakeMarketplace::new();
    let keys = key_cache(&fake);
    let url: String = URL.to_owned();
    let endpoint =
        blocking::NotificationEndpoint::new(url, VerificationToken::new(TOKEN).unwrap(), &keys)
            .unwrap();
    assert_eq!(endpoint.endpoint(), URL);
}
