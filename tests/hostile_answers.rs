//! A hostile server's answers are refused within the time-out and in bounded memory, measured
//! on the `snapshot` command as a user runs it: a child process whose peak resident memory is
//! read from `getrusage(RUSAGE_CHILDREN)` once it has ended.
//!
//! This binary holds one test, so no other child of this process can be the one measured.
//! Linux counts in a child's peak the peak of the process it was spawned from (the memory
//! the child had until its `exec`), so the fake builds its answers only when asked, after the
//! spawn, and the test checks that its own peak was small then: the figure is an upper bound
//! of the command's own peak.

#![cfg(target_os = "linux")]

mod common;

use std::io::Read as _;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fake_marketplace::taxonomy::{DEFAULT_TREE_ID_PATH, tree_path};
use fake_marketplace::{FakeMarketplace, Response};

/// The most memory the command may use while refusing any answer (the issue's goal).
const MEMORY_LIMIT_KIB: u64 = 256 * 1024;
/// The request time-out of `snapshot refresh` (the client's default).
const TIMEOUT: Duration = Duration::from_secs(60);
/// A child still running after this, or past this resident size, is stopped: the bound
/// has failed, and the test need not wait for minutes or gigabytes to say so.
const GIVE_UP_AFTER: Duration = Duration::from_secs(30);
const GIVE_UP_ABOVE_KIB: u64 = 2 * 1024 * 1024;

/// A line of /proc/PID/status in KiB: `VmRSS` (resident now) or `VmHWM` (peak).
fn status_kib(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The largest peak resident memory of this process's ended children, in KiB.
#[allow(unsafe_code)]
fn children_peak_kib() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`; getrusage only writes it.
    let done = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(done, 0, "getrusage failed");
    // SAFETY: getrusage succeeded, so it filled the struct (which was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    // Linux reports ru_maxrss in KiB.
    u64::try_from(usage.ru_maxrss).unwrap_or(0)
}

/// Waits for `child`, stopping it when it runs past [`GIVE_UP_AFTER`] or grows past
/// [`GIVE_UP_ABOVE_KIB`]. Returns how long it ran, its exit status and its output.
fn watch(mut child: Child) -> (Duration, std::process::ExitStatus, String) {
    let started = Instant::now();
    let pid = child.id();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let resident = status_kib(&pid.to_string(), "VmRSS:").unwrap_or(0);
        if started.elapsed() > GIVE_UP_AFTER || resident > GIVE_UP_ABOVE_KIB {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "stopped after {:?} at {} MiB resident: the hostile answer was not refused in time and memory",
                started.elapsed(),
                resident / 1024
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let mut output = String::new();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read>),
    ]
    .into_iter()
    .flatten()
    {
        let mut pipe = pipe;
        pipe.read_to_string(&mut output).unwrap();
    }
    (took, status, output)
}

/// Serves `body` as getDefaultCategoryTreeId's answer to `snapshot refresh` of the four
/// committed sites; the refresh must fail within the time-out and write nothing. Returns how
/// long it ran.
fn refresh_against(body: impl Fn() -> Vec<u8> + Send + Sync + 'static) -> Duration {
    let fake = FakeMarketplace::new();
    fake.route("GET", DEFAULT_TREE_ID_PATH, move |_, _| {
        Response::new(200, body()).with_header("Content-Type", "application/json")
    });
    let dir = common::copy_of_snapshots();
    assert_eq!(common::snapshot_sites().len(), 4);
    let before = common::dir_bytes(dir.path());
    let own_peak = status_kib("self", "VmHWM:").unwrap();
    assert!(
        own_peak < 64 * 1024,
        "this process's peak ({} MiB) would hide the command's",
        own_peak / 1024
    );

    let child = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .arg("refresh")
        .arg("--dir")
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (took, status, output) = watch(child);
    assert!(!status.success(), "{output}");
    assert_eq!(
        fake.requests_to(DEFAULT_TREE_ID_PATH).len(),
        4,
        "each site asked once: {output}"
    );
    assert!(took < TIMEOUT, "{took:?}");
    assert!(
        output.len() < 16 * 1024,
        "what the command printed is short"
    );
    assert!(common::dir_bytes(dir.path()) == before, "nothing written");
    took
}

/// `head`, then `count` elements `{}` (comma-separated), then `tail`, gzipped as it is
/// made (this process never holds the JSON): 60 MB of JSON for 20 million, 60 KB of gzip.
fn gzip_of_empty_objects(head: &str, count: usize, tail: &str) -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(head.as_bytes()).unwrap();
    let chunk = "{},".repeat(64 * 1024);
    let mut left = count - 1;
    while left > 0 {
        let n = left.min(64 * 1024);
        gz.write_all(&chunk.as_bytes()[..3 * n]).unwrap();
        left -= n;
    }
    gz.write_all(b"{}").unwrap();
    gz.write_all(tail.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// Twenty million `{}` elements: 60 MB of JSON, under every byte limit (64 MiB).
const EMPTY_OBJECTS: usize = 20_000_000;

/// Runs `snapshot ARGS` (with credentials for `fake`), which must fail within 10 s, without
/// writing to `dir`, saying which limit it hit. Returns its output.
fn refused(fake: &FakeMarketplace, dir: &std::path::Path, args: &[&str], limit: &str) -> String {
    let before = common::dir_bytes(dir);
    let own_peak = status_kib("self", "VmHWM:").unwrap();
    assert!(
        own_peak < 64 * 1024,
        "this process's peak ({} MiB) would hide the command's",
        own_peak / 1024
    );
    let child = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(args)
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (took, status, output) = watch(child);
    let peak = children_peak_kib();
    eprintln!(
        "snapshot {}: {took:?}; peak so far {} MiB",
        args[..2].join(" "),
        peak / 1024
    );
    assert!(!status.success(), "{output}");
    assert!(took < Duration::from_secs(10), "{took:?}: {output}");
    assert!(
        peak < MEMORY_LIMIT_KIB,
        "peak resident memory {} MiB",
        peak / 1024
    );
    assert!(output.contains(limit), "the limit is named: {output}");
    assert!(
        output.len() < 16 * 1024,
        "what the command printed is short"
    );
    assert!(common::dir_bytes(dir) == before, "nothing written");
    output
}

/// The issue's input: 60 KB of gzip holding 20 million `{}` elements. Each decoded into a
/// wire struct (a node, an aspect) took 3.2 GB (`snapshot refresh`, per site) to 5.4 GB
/// (`aspects check --offline`, `aspects diff`). Now each is refused once the count of
/// elements passes what a real answer holds, within 10 s and 256 MB.
fn empty_objects_are_refused_in_bounded_memory() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();

    // A fetchItemAspects file whose one category has 20 million aspects `{}`.
    let file = gzip_of_empty_objects(
        r#"{"categoryTreeId":"0","categoryTreeVersion":"134","categoryAspects":[{"category":{"categoryId":"27386","categoryName":"Graphics Cards"},"aspects":["#,
        EMPTY_OBJECTS,
        "]}]}",
    );
    eprintln!("the fetchItemAspects file: {} bytes of gzip", file.len());
    assert!(file.len() < 100_000);
    std::fs::write(dir.path().join("EBAY_US.json.gz"), &file).unwrap();
    std::fs::write(dir.path().join("listing.json"), br#"{"Brand":["Dell"]}"#).unwrap();
    drop(file);
    let (aspects_dir, listing, file) = (path("."), path("listing.json"), path("EBAY_US.json.gz"));
    let limit = "more than 100000 aspects in one category";
    let output = refused(
        &fake,
        dir.path(),
        &[
            "aspects",
            "check",
            "--offline",
            "--site",
            "EBAY_US",
            "--category",
            "27386",
            "--aspects-dir",
            &aspects_dir,
            "--dir",
            &aspects_dir,
            &listing,
        ],
        limit,
    );
    assert!(output.contains("categoryAspects[0]"), "{output}");
    refused(
        &fake,
        dir.path(),
        &["aspects", "diff", &file, &file, "--dir", &path(".")],
        limit,
    );

    // A getCategoryTree answer whose root has 20 million children `{}`, gzipped as eBay
    // sends it, for a new version of the US tree.
    let tree = std::sync::Arc::new(gzip_of_empty_objects(
        r#"{"categoryTreeId":"0","categoryTreeVersion":"999","applicableMarketplaceIds":["EBAY_US"],"rootCategoryNode":{"category":{"categoryId":"0","categoryName":"Root"},"categoryTreeNodeLevel":0,"childCategoryTreeNodes":["#,
        EMPTY_OBJECTS,
        "]}}",
    ));
    fake.route("GET", DEFAULT_TREE_ID_PATH, |_, _| {
        Response::new(
            200,
            br#"{"categoryTreeId":"0","categoryTreeVersion":"999"}"#.to_vec(),
        )
        .with_header("Content-Type", "application/json")
    });
    fake.route("GET", &tree_path(0), move |_, _| {
        Response::new(200, tree.to_vec())
            .with_header("Content-Type", "application/json")
            .with_header("Content-Encoding", "gzip")
    });
    let snapshots = common::copy_of_snapshots();
    let output = refused(
        &fake,
        snapshots.path(),
        &[
            "refresh",
            "--sites",
            "EBAY_US",
            "--dir",
            &snapshots.path().display().to_string(),
        ],
        "more than 300000 array elements in all in a getCategoryTree answer",
    );
    assert_eq!(fake.requests_to(&tree_path(0)).len(), 1, "{output}");
}

/// The issue's answer: a 200 to getDefaultCategoryTreeId with 60 MB of escapes that every
/// layer of the sanitizer's decoding changes. Four sites asked it at once made
/// `snapshot refresh` use 15.5 GB and run 199 s under a 60 s time-out. Then the largest such
/// answer the client reads whole (just under 1 MiB), which goes through the sanitizer.
/// (Largest last: serving it takes this process's memory past what a spawn inherits.)
fn a_huge_non_json_answer_is_refused_within_the_timeout_in_under_256_mb() {
    for size in [1_000_000, 60_000_000] {
        let took = refresh_against(move || br"%252525\u0025".repeat(size / 13));
        let peak = children_peak_kib();
        eprintln!(
            "snapshot refresh, four sites, {size}-byte hostile answers: {took:?}; peak so far {} MiB",
            peak / 1024
        );
        assert!(
            peak < MEMORY_LIMIT_KIB,
            "peak resident memory {} MiB",
            peak / 1024
        );
    }
}

/// The one test of this binary (see the module's documentation): the hostile answers in
/// turn, the largest to serve last.
#[test]
fn hostile_answers_are_refused_within_their_time_and_in_under_256_mb() {
    empty_objects_are_refused_in_bounded_memory();
    a_huge_non_json_answer_is_refused_within_the_timeout_in_under_256_mb();
}
