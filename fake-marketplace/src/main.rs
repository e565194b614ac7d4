//! `cargo run -p fake-marketplace -- [PORT] [--no-delay] [--trees DIR] [--expired FILE]… [-v]`:
//! starts the fake on 127.0.0.1 and prints its address and the environment a client needs,
//! then serves until killed; with `-v`, one line per request served on standard error
//! (method, path, status, a token request's `grant_type`; never a secret, code or token), so
//! that an operator sees how many token requests a fleet makes.
//!
//! The full category tree is answered after a random 2 to 5 s, like the real service; pass
//! `--no-delay` to answer at once. `--trees DIR` serves the trees of `DIR` (`EBAY_FR.json`,
//! … in the snapshot format, any marketplace of the table: `--help` lists the file names)
//! instead of the repository's snapshots and the fake's own eBay Motors tree; a marketplace
//! without a file is answered as eBay answers an unknown tree. `--expired FILE` (repeatable)
//! serves the expired categories of a file in the format `snapshot refresh` writes beside a
//! snapshot (`EBAY_US.expired.json`), over the defaults (a made-up set for EBAY_US and
//! EBAY_MOTORS_US) or the files beside `--trees`.
//!
//! `cargo run -p fake-marketplace -- notify ENDPOINT [--fake URL] [--user-id ID] [--username
//! NAME] [--notification-id ID] [--tampered[=body|signature]] [--repeat N]`: sends, as eBay
//! does, a signed Marketplace Account Deletion notification to `ENDPOINT` (an `http://` URL),
//! signed with the key the running fake at `URL` (default: `MARKETPLACE_BASE_URL`) serves on
//! getPublicKey; `--repeat N` sends it N times with the same `notificationId` (eBay's
//! retries), `--tampered` spoils its body (or its signature). Prints each answer's status.
//!
//! `cargo run -p fake-marketplace -- buy --listing ID [--quantity N] [--payment
//! PAID|FAILED|PENDING] [--buyer NAME] [--country CC] [--fake URL]`: a buyer buys a published
//! listing on the running fake at `URL` (default: `MARKETPLACE_BASE_URL`), through the fake's
//! own test route (`orders::BUY_PATH`, over loopback HTTP); prints the new order's id.

use std::path::PathBuf;
use std::time::Duration;

use fake_marketplace::{FakeConfig, FakeMarketplace};

const USAGE: &str = "usage: fake-marketplace [PORT] [--no-delay] [--trees DIR] [--expired FILE]... [-v]\n       fake-marketplace notify ENDPOINT [--fake URL] [--tampered] [--repeat N] ... (notify --help)\n       fake-marketplace buy --listing ID [--quantity N] [--fake URL] ... (buy --help)";

fn usage_error(problem: &str) -> ! {
    eprintln!("{problem}\n{USAGE}");
    std::process::exit(2);
}

const NOTIFY_USAGE: &str = "usage: fake-marketplace notify ENDPOINT [--fake URL] [--user-id ID] [--username NAME] [--notification-id ID] [--tampered[=body|signature]] [--repeat N]";

fn notify_usage_error(problem: &str) -> ! {
    eprintln!("{problem}\n{NOTIFY_USAGE}");
    std::process::exit(2);
}

/// `fake-marketplace notify …`: a signed account deletion notification sent to an endpoint.
fn notify(mut args: impl Iterator<Item = String>) -> std::process::ExitCode {
    use fake_marketplace::{AccountDeletionNotice, FakeUser, NotificationSigner, Tamper};

    let mut endpoint: Option<String> = None;
    let mut fake_url = std::env::var("MARKETPLACE_BASE_URL").ok();
    let mut user = FakeUser::default();
    let mut notification_id: Option<String> = None;
    let mut tamper = Tamper::None;
    let mut repeat: u32 = 1;
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .unwrap_or_else(|| notify_usage_error(&format!("{name} needs {what}")))
        };
        match name.as_str() {
            "-h" | "--help" => {
                println!("{NOTIFY_USAGE}");
                println!(
                    "  ENDPOINT              the endpoint's http:// URL (e.g. http://127.0.0.1:3000/ebay/notifications)\n  \
                     --fake URL            the running fake whose getPublicKey key signs (default: MARKETPLACE_BASE_URL)\n  \
                     --user-id ID          data.userId (default: the fake's getUser user, fakeSeller0001)\n  \
                     --username NAME       data.username (default: fake_seller)\n  \
                     --notification-id ID  notificationId (default: a new one)\n  \
                     --tampered[=WHAT]     spoil the body (default) or the signature: the endpoint must answer 412\n  \
                     --repeat N            send it N times with the same notificationId, as eBay retries (default 1)"
                );
                return std::process::ExitCode::SUCCESS;
            }
            "--fake" => fake_url = Some(value("the fake's URL")),
            "--user-id" => user.user_id = value("an id"),
            "--username" => user.username = value("a name"),
            "--notification-id" => notification_id = Some(value("an id")),
            "--tampered" => {
                tamper = match inline.as_deref() {
                    None | Some("body") => Tamper::Body,
                    Some("signature") => Tamper::Signature,
                    Some(other) => {
                        notify_usage_error(&format!("--tampered={other}: say body or signature"))
                    }
                }
            }
            "--repeat" => {
                repeat = value("a count")
                    .parse()
                    .ok()
                    .filter(|n| *n >= 1)
                    .unwrap_or_else(|| notify_usage_error("--repeat needs a count of 1 or more"))
            }
            other if other.starts_with('-') => {
                notify_usage_error(&format!("unknown argument {other:?}"))
            }
            _ if endpoint.is_none() => endpoint = Some(arg),
            _ => notify_usage_error(&format!("one endpoint only: {arg:?}")),
        }
    }
    let Some(endpoint) = endpoint else {
        notify_usage_error("the endpoint's URL is missing");
    };
    let Some(fake_url) = fake_url else {
        notify_usage_error(
            "which fake signs? --fake URL (the address the running fake printed), or MARKETPLACE_BASE_URL",
        );
    };
    let signer = NotificationSigner::of_fake(&fake_url);
    let id = notification_id.unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!(
            "{:08x}-fake-cli0-{:04x}-{nanos:x}",
            std::process::id(),
            repeat
        )
    });
    let mut notice = AccountDeletionNotice::with_id(id, &user).tampered(tamper);
    for attempt in 1..=repeat {
        match signer.send(&endpoint, &notice) {
            Ok(delivery) => {
                let body = delivery.body_str();
                println!(
                    "attempt {attempt} of notification {}: {}{}{}",
                    notice.notification_id,
                    delivery.status,
                    if body.is_empty() { "" } else { " " },
                    body.escape_debug()
                );
            }
            Err(e) => {
                eprintln!("attempt {attempt}: cannot deliver to {endpoint}: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
        notice = notice.retry();
    }
    std::process::ExitCode::SUCCESS
}

const BUY_USAGE: &str = "usage: fake-marketplace buy --listing ID [--quantity N] [--payment PAID|FAILED|PENDING] [--buyer NAME] [--country CC] [--fake URL]";

fn buy_usage_error(problem: &str) -> ! {
    eprintln!("{problem}\n{BUY_USAGE}");
    std::process::exit(2);
}

/// `fake-marketplace buy …`: a buyer buys a published listing on a running fake.
fn buy(mut args: impl Iterator<Item = String>) -> std::process::ExitCode {
    let mut fake_url = std::env::var("MARKETPLACE_BASE_URL").ok();
    let mut body = serde_json::Map::new();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .unwrap_or_else(|| buy_usage_error(&format!("{name} needs {what}")))
        };
        let (field, text) = match name.as_str() {
            "-h" | "--help" => {
                println!("{BUY_USAGE}");
                println!(
                    "  --listing ID     the published listing (publishOffer's listingId)\n  \
                     --quantity N     how many (default 1); a listing at 0 ends\n  \
                     --payment WHAT   PAID (default), FAILED, or PENDING (getOrders shows it once paid)\n  \
                     --buyer NAME     the buyer's username (default fake_buyer)\n  \
                     --country CC     the buyer's country (default US)\n  \
                     --fake URL       the running fake (default: MARKETPLACE_BASE_URL)"
                );
                return std::process::ExitCode::SUCCESS;
            }
            "--fake" => {
                fake_url = Some(value("the fake's URL"));
                continue;
            }
            "--listing" => ("listingId", value("a listing id")),
            "--payment" => ("payment", value("PAID, FAILED or PENDING")),
            "--buyer" => ("buyerUsername", value("a username")),
            "--country" => ("buyerCountry", value("a country code")),
            "--quantity" => {
                let n: u32 = value("a count")
                    .parse()
                    .ok()
                    .filter(|n| *n >= 1)
                    .unwrap_or_else(|| buy_usage_error("--quantity needs a count of 1 or more"));
                body.insert("quantity".into(), n.into());
                continue;
            }
            other => buy_usage_error(&format!("unknown argument {other:?}")),
        };
        body.insert(field.into(), text.into());
    }
    if !body.contains_key("listingId") {
        buy_usage_error("--listing ID is missing");
    }
    let Some(fake_url) = fake_url else {
        buy_usage_error(
            "which fake? --fake URL (the address the running fake printed), or MARKETPLACE_BASE_URL",
        );
    };
    let body = serde_json::Value::Object(body).to_string();
    match post(&fake_url, fake_marketplace::orders::BUY_PATH, &body) {
        Ok((201, answer)) => {
            let id = serde_json::from_str::<serde_json::Value>(&answer)
                .ok()
                .and_then(|v| v["orderId"].as_str().map(str::to_owned));
            match id {
                Some(id) => {
                    println!("{id}");
                    std::process::ExitCode::SUCCESS
                }
                None => {
                    eprintln!(
                        "the fake at {fake_url} answered 201 without an orderId: {}",
                        answer.escape_debug()
                    );
                    std::process::ExitCode::FAILURE
                }
            }
        }
        Ok((status, answer)) => {
            let why = serde_json::from_str::<serde_json::Value>(&answer)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_owned))
                .unwrap_or(answer);
            eprintln!(
                "the fake at {fake_url} refused the purchase ({status}): {}",
                why.escape_debug()
            );
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cannot reach the fake at {fake_url}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// POSTs `body` (JSON) to `path` of the fake at `base` (`http://HOST:PORT`) over plain
/// HTTP/1.1: the answer's status and body.
fn post(base: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read as _, Write as _};
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
    let host = base
        .strip_prefix("http://")
        .ok_or_else(|| invalid(format!("not an http:// URL: {base}")))?
        .trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or_else(|| invalid("an answer without a head".into()))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("no status in {head:?}")))?;
    Ok((status, body.to_owned()))
}

fn main() -> std::process::ExitCode {
    let mut strings = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .peekable();
    if strings.peek().map(String::as_str) == Some("notify") {
        strings.next();
        return notify(strings);
    }
    if strings.peek().map(String::as_str) == Some("buy") {
        strings.next();
        return buy(strings);
    }
    serve()
}

fn serve() -> std::process::ExitCode {
    let mut port = 0;
    let mut delay = Some((Duration::from_secs(2), Duration::from_secs(5)));
    let mut trees: Option<PathBuf> = None;
    let mut expired: Vec<PathBuf> = Vec::new();
    let mut verbose = false;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "--no-delay" => delay = None,
            "-v" | "--verbose" => verbose = true,
            "--trees" => match args.next() {
                Some(dir) => trees = Some(dir.into()),
                None => usage_error("--trees needs a directory"),
            },
            "--expired" => match args.next() {
                Some(file) => expired.push(file.into()),
                None => usage_error("--expired needs a file"),
            },
            "-h" | "--help" => {
                use fake_marketplace::taxonomy::{
                    ERROR_TREE_NOT_FOUND, ERROR_UNKNOWN_MARKETPLACE, tree_file_names,
                };
                const INDENT: &str = "\n               ";
                let names: Vec<String> = tree_file_names()
                    .chunks(5)
                    .map(|line| line.join(" "))
                    .collect();
                println!("{USAGE}");
                println!(
                    "  PORT         the loopback port (default: any free one)\n  \
                     --no-delay   answer the full tree at once (default: after 2 to 5 s)\n  \
                     --trees DIR  serve the trees in DIR instead of the repository's snapshots:\
                     {INDENT}one file per marketplace in the snapshot format (what `snapshot\
                     {INDENT}refresh` writes), named one of:{INDENT}{}\
                     {INDENT}a marketplace without a file: 400 errorId {ERROR_TREE_NOT_FOUND} (tree not found),\
                     {INDENT}getDefaultCategoryTreeId 204; an unknown marketplace id: 400\
                     {INDENT}errorId {ERROR_UNKNOWN_MARKETPLACE}; with it, the EBAY_*.expired.json files\
                     {INDENT}beside the trees are served (getExpiredCategories)\n  \
                     --expired FILE  serve the expired categories of FILE (the format `snapshot\
                     {INDENT}refresh` writes beside a snapshot, e.g. EBAY_US.expired.json), checked\
                     {INDENT}against the tree served for its marketplace; repeatable. Default:\
                     {INDENT}a made-up set for EBAY_US and EBAY_MOTORS_US\n  \
                     -v, --verbose  print one line per request served on standard error: method,\
                     {INDENT}path, status, and a token request's grant_type (never a secret,\
                     {INDENT}code or token)",
                    names.join(INDENT)
                );
                return std::process::ExitCode::SUCCESS;
            }
            p => match (
                p.strip_prefix("--trees="),
                p.strip_prefix("--expired="),
                p.parse::<u16>(),
            ) {
                (Some(dir), _, _) => trees = Some(dir.into()),
                (None, Some(file), _) => expired.push(file.into()),
                (None, None, Ok(p)) => port = p,
                (None, None, Err(_)) => usage_error(&format!("unknown argument {p:?}")),
            },
        }
    }
    let mut config = FakeConfig {
        tree_delay: delay,
        log_requests: verbose,
        ..FakeConfig::default()
    };
    if let Some(dir) = &trees {
        config = config.with_trees(dir);
    }
    config.expired_files.extend(expired);
    let mut served = taxonomy_tree::snapshot::sites_in(&config.snapshots_dir);
    if let Some(defaults) = &config.defaults_dir {
        for site in taxonomy_tree::snapshot::sites_in(defaults) {
            if !served.contains(&site) {
                served.push(site);
            }
        }
    }
    let expired_files = config.expired_files.clone();
    let fake = match FakeMarketplace::start_on(port, config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot start the fake marketplace on port {port}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("fake marketplace on {}", fake.base_url());
    let names: Vec<&str> = served.iter().map(|m| m.marketplace_id()).collect();
    eprintln!(
        "  trees: {} from {} (other marketplaces: tree not found, as eBay answers)",
        names.join(", "),
        match &trees {
            Some(dir) => dir.display().to_string(),
            None => "the repository's snapshots and the fake's eBay Motors tree (--trees DIR for your own)".into(),
        }
    );
    let expired_names: Vec<String> = expired_files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    eprintln!(
        "  expired categories: {}",
        if expired_names.is_empty() {
            "none (getExpiredCategories: 204; --expired FILE)".to_owned()
        } else {
            expired_names.join(", ")
        }
    );
    eprintln!(
        "  taxonomy: getCategoryTree at {0}/commerce/taxonomy/v1/category_tree/0 (eBay's path \
         form), getDefaultCategoryTreeId, getCategorySuggestions, getCategorySubtree, \
         getItemAspectsForCategory, fetchItemAspects, getExpiredCategories, \
         getCompatibilityProperties and getCompatibilityPropertyValues; full tree delay: {1}",
        fake.base_url(),
        match delay {
            Some(_) => "2-5 s (--no-delay to turn off)",
            None => "none",
        }
    );
    eprintln!(
        "  listings: the Metadata API's getItemConditionPolicies (condition policies made up for \
         every leaf: never the marketplace's rules) and the Inventory API (items, offers, \
         publishOffer, the bulk calls), per seller"
    );
    eprintln!(
        "  notifications: getPublicKey and getUser; send a signed account deletion to an endpoint \
         with `fake-marketplace notify ENDPOINT --fake {}` (--repeat N, --tampered)",
        fake.base_url()
    );
    eprintln!(
        "  orders: getOrders and getOrder (the Fulfillment API) of what buyers bought; buy a \
         published listing with `fake-marketplace buy --listing ID --quantity N --fake {}`",
        fake.base_url()
    );
    eprintln!("point the snapshot tool (or any client) at it with:");
    eprintln!(
        "export MARKETPLACE_BASE_URL={0} MARKETPLACE_AUTH_URL={0} MARKETPLACE_CLIENT_ID={1} MARKETPLACE_CLIENT_SECRET={2}",
        fake.base_url(),
        fake.client_id(),
        fake.client_secret()
    );
    // The address on stdout comes last: whoever waits for it (a script, a test) then knows the
    // fake is serving and its banner is written.
    println!("{}", fake.base_url());
    loop {
        std::thread::park();
    }
}
