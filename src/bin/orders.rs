//! `cargo run --bin orders -- sync --account NAME [--dir DIR]` and `orders show ORDER
//! --account NAME`: a seller's orders from eBay's Fulfillment API (getOrders, getOrder).
//!
//! `sync` polls the seller's order feed once (marketplace-orders' `OrderFeed` over a
//! `FileStore` in the state directory): every order new or changed since the last run
//! (getOrders' `lastmodifieddate` from the feed's watermark, less its overlap window, pages of
//! 200 to the end; getOrder for an order with a cancellation requested, whose cancel requests
//! getOrders leaves out) is printed as one JSON line on standard output, eBay's order as it
//! answered it, or written to `DIR/ORDERID.json` (a temporary file renamed over it) with
//! `--dir`. A summary goes to standard error. A rerun hands over only what changed since:
//! the feed records, after each page, the changes it handed over (`orderId`,
//! `lastModifiedDate`). That record is written after the page is printed, so a run killed
//! between the two prints those orders again next time: at least once; a consumer
//! de-duplicates by (`orderId`, `lastModifiedDate`), and `--dir` overwrites the same file.
//!
//! `show` prints one order as getOrder answers it (with its cancel requests).
//!
//! `ship ORDER --tracking NUMBER --carrier CODE [--line-item ID[:QUANTITY]]...
//! [--shipped-date TIME]` marks the line items shipped (createShippingFulfillment) once:
//! it reads getShippingFulfillments first and prints the fulfillment already there when one
//! with that tracking number ships those line items; after an unclear answer it reads again
//! before it sends again. Run again after a crash, it creates nothing more. It needs the
//! consent's `sell.fulfillment` itself (not the read-only form).
//!
//! The seller's user token comes from the refresh token `consent` stored for `--account` (the
//! same store as `listing publish`: a file or the PostgreSQL store), which must grant
//! `https://api.ebay.com/oauth/api_scope/sell.fulfillment` (or its `.readonly` form): checked
//! before anything is sent. No token is ever printed. An error (no consent, the scope missing,
//! the service unreachable, eBay's error) is printed once, and the exit code is 1.

// Before the modules that print: `outln!`, `errln!` (escaped, never a panic).
#[path = "shared/output.rs"]
#[macro_use]
#[allow(dead_code, unused_macros)]
mod output;
#[path = "shared/seller.rs"]
mod seller;
#[path = "shared/verbosity.rs"]
mod verbosity;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use clap::{Parser, Subcommand};
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_client::oauth::{OAuthConfig, RefreshTokenStore};
use marketplace_orders::blocking::{OrderFeed, Orders};
use marketplace_orders::feed::{self, BoxError, OrderChange};
use marketplace_orders::{LineItemReference, Order, Shipment};
use marketplace_toolkit::token_store;
use seller::Seller;

use crate::output::escaped;

#[derive(Parser)]
#[command(
    name = "orders",
    about = "A seller's orders from eBay's Fulfillment API: new and changed ones since the last run, or one",
    long_about = "A seller's orders from eBay's Fulfillment API (getOrders, getOrder), with the \
        refresh token `consent` stored for --account (its consent must grant \
        https://api.ebay.com/oauth/api_scope/sell.fulfillment: `consent --account NAME --for \
        orders`).\n\n\
        `sync` prints each order new or changed since the last sync as one JSON line (eBay's \
        order as getOrders or getOrder answered it), or writes it to DIR/ORDERID.json with \
        --dir; a rerun prints only what changed since. At least once: a run killed after \
        printing an order and before recording it prints it again next time; de-duplicate by \
        (orderId, lastModifiedDate). `show ORDER` prints one order (getOrder). `ship ORDER \
        --tracking NUMBER --carrier CODE` marks its line items shipped once \
        (createShippingFulfillment after getShippingFulfillments: a rerun creates nothing \
        more) and prints the fulfillment id.\n\n\
        Settings: MARKETPLACE_CLIENT_ID, MARKETPLACE_CLIENT_SECRET, MARKETPLACE_ENV \
        (production|sandbox), MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL, MARKETPLACE_CONFIG \
        (SDK file), MARKETPLACE_TOKEN_STORE; the flags override them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Show the HTTP attempts and token events on standard error (-vv: more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, long_help = verbosity::VERBOSE_HELP)]
    verbose: u8,
}

#[derive(Subcommand)]
enum Command {
    /// Print every order new or changed since the last sync of --account (a JSON line each),
    /// or write them into --dir; the feed's state is kept in --state.
    Sync {
        #[command(flatten)]
        seller: Seller,
        /// Write each order to DIR/ORDERID.json (created; a changed order replaces its file,
        /// atomically) instead of printing it.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Where the feed records its watermark and what it handed over, a file per account.
        /// Default: $XDG_STATE_HOME/marketplace-toolkit/orders, else
        /// ~/.local/state/marketplace-toolkit/orders.
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
    },
    /// Print the order ORDER (its orderId) as getOrder answers it, cancel requests included.
    Show {
        /// The order's orderId.
        order: String,
        #[command(flatten)]
        seller: Seller,
    },
    /// Mark line items of ORDER shipped with a tracking number, once: a run again (after a
    /// crash, a time-out) finds the fulfillment already there and creates none.
    Ship {
        /// The order's orderId.
        order: String,
        #[command(flatten)]
        seller: Seller,
        /// The carrier's tracking number (letters and digits only, as eBay takes it).
        #[arg(long, value_name = "NUMBER")]
        tracking: String,
        /// The carrier's eBay code (USPS, UPS, FedEx, …: eBay's ShippingCarrierCodeType).
        #[arg(long, value_name = "CODE")]
        carrier: String,
        /// A line item in the package (its lineItemId) and how many of it (default 1, as
        /// eBay's); repeat it for each. None: every line item, all that is left to ship.
        #[arg(long = "line-item", value_name = "ID[:QUANTITY]", value_parser = line_item)]
        line_items: Vec<LineItemReference>,
        /// When the package was shipped, in UTC (2026-11-29T08:00:00Z or
        /// 2026-11-29T08:00:00.000Z). Default: when eBay receives the call.
        #[arg(long, value_name = "RFC3339", value_parser = shipped_date)]
        shipped_date: Option<SystemTime>,
    },
}

/// `--line-item ID[:QUANTITY]`.
fn line_item(text: &str) -> Result<LineItemReference, String> {
    let (id, quantity) = match text.split_once(':') {
        Some((id, q)) => {
            let q: u32 = q
                .parse()
                .ok()
                .filter(|q| *q > 0)
                .ok_or_else(|| format!("{q:?} is not a quantity above 0"))?;
            (id, q)
        }
        None => (text, 1),
    };
    if id.is_empty() {
        return Err("the line item id is empty".into());
    }
    Ok(LineItemReference::new(id, quantity))
}

/// `--shipped-date`: a UTC timestamp.
fn shipped_date(text: &str) -> Result<SystemTime, String> {
    marketplace_orders::parse_timestamp(text)
        .ok_or_else(|| format!("{text:?} is not a UTC timestamp such as 2026-11-29T08:00:00Z"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    verbosity::init(cli.verbose);
    let result = match cli.command {
        Command::Sync { seller, dir, state } => sync(&seller, dir, state),
        Command::Show { order, seller } => show(&seller, &order),
        Command::Ship {
            order,
            seller,
            tracking,
            carrier,
            line_items,
            shipped_date,
        } => {
            let shipment = Shipment {
                order_id: order,
                line_items,
                carrier,
                tracking_number: tracking,
                shipped_date,
            };
            ship(&seller, &shipment)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The Fulfillment API of the seller: its stored refresh token, as `consent` keeps it,
/// refused before anything is sent when the consent does not grant sell.fulfillment.
fn orders_of(seller: &Seller) -> Result<Orders, String> {
    orders_checked(seller, require_fulfillment_scope)
}

/// The Fulfillment API of the seller, after `check` of its stored consent.
fn orders_checked(
    seller: &Seller,
    check: fn(&dyn RefreshTokenStore, &str, &OAuthConfig) -> Result<(), String>,
) -> Result<Orders, String> {
    let (config, provider) = seller.provider(check).map_err(|e| e.to_string())?;
    let base = config.endpoints.base_url().as_str();
    let config = ClientConfig::for_base_url(base).map_err(|e| e.to_string())?;
    let api = ApiClient::new(config, provider).map_err(|e| e.to_string())?;
    Ok(Orders::new(api))
}

/// Refuses, before anything is sent, an account with no stored consent, or whose consent
/// grants neither `https://api.ebay.com/oauth/api_scope/sell.fulfillment` nor its
/// `.readonly` form (the scopes eBay's Fulfillment API reference gives getOrders and getOrder;
/// without them eBay answers 403, errorId 1100): the error names the scope and the `consent`
/// command that grants it.
fn require_fulfillment_scope(
    tokens: &dyn RefreshTokenStore,
    account: &str,
    config: &OAuthConfig,
) -> Result<(), String> {
    let grant = format!("consent --account {} --for orders", escaped(account));
    match tokens.load(account) {
        Err(e) => Err(format!(
            "cannot read the stored consent of account {:?}: {}",
            escaped(account),
            escaped(&e.to_string())
        )),
        Ok(None) => Err(format!(
            "no consent is stored for account {:?}: reading its orders needs the seller's \
             consent to {} (run `{grant}`; nothing was sent)",
            escaped(account),
            token_store::FULFILLMENT_SCOPE
        )),
        Ok(Some(stored)) if token_store::grants_fulfillment(stored.scopes.iter(), config) => Ok(()),
        Ok(Some(stored)) => Err(format!(
            "the consent stored for account {:?} does not grant {} (or {}), which getOrders \
             and getOrder need (eBay refuses them without it: errorId 1100); it grants: {}. \
             Run `{grant}` and try again; nothing was sent",
            escaped(account),
            token_store::FULFILLMENT_SCOPE,
            token_store::FULFILLMENT_READ_SCOPE,
            escaped(&stored.scopes.to_string())
        )),
    }
}

/// The feed's state directory when --state is not given.
fn default_state_dir() -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .ok_or("cannot find a home directory for the feed's state: pass --state")?;
    Ok(base.join("marketplace-toolkit").join("orders"))
}

/// `orders sync`: one poll of the seller's feed, each change printed (or written) as it is
/// handed over, then a summary on standard error.
fn sync(seller: &Seller, dir: Option<PathBuf>, state: Option<PathBuf>) -> Result<(), String> {
    let state = match state {
        Some(state) => state,
        None => default_state_dir()?,
    };
    let orders = orders_of(seller)?;
    if let Some(dir) = &dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", escaped(&dir.display().to_string())))?;
    }
    let mut feed = OrderFeed::new(
        orders,
        feed::FileStore::new(&state),
        seller.account.as_str(),
    );
    let mut handler = |change: &OrderChange, _: &mut ()| -> Result<(), BoxError> {
        match &dir {
            Some(dir) => write_order(dir, &change.order),
            None => {
                let line = serde_json::to_string(&change.order)?;
                outln!("{}", output::json_for_terminal(&line));
                Ok(())
            }
        }
    };
    let polled = feed.poll_once(&mut handler).map_err(|e| e.to_string())?;
    let whereto = match &dir {
        Some(dir) => format!(" into {}", dir.display()),
        None => String::new(),
    };
    errln!(
        "orders of {}: {} new or changed order(s) handed over{whereto} ({} call(s)); the feed's state is in {}",
        escaped(&seller.account),
        polled.handed_over,
        polled.calls,
        state.display()
    );
    Ok(())
}

/// Writes `order` to `dir/ORDERID.json`: a temporary file, synced, renamed over it (a reader
/// sees the old order or the new, never half of one). An orderId that is not a plain file
/// name is refused, naming it.
fn write_order(dir: &Path, order: &Order) -> Result<(), BoxError> {
    use std::io::Write;
    let id = &order.order_id;
    let plain = !id.is_empty()
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(format!(
            "the orderId {:?} is not a plain file name; not written into {}",
            escaped(id),
            dir.display()
        )
        .into());
    }
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let path = dir.join(format!("{id}.json"));
    // A temporary file of this write alone: two `orders sync --dir` at once each rename a
    // whole order into place (a shared name let one rename the other's half-written file).
    let temp = dir.join(format!(
        ".{id}.json.{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let named = |e: std::io::Error, p: &Path| format!("{}: {e}", p.display());
    let mut bytes = serde_json::to_vec_pretty(order)?;
    bytes.push(b'\n');
    let written = (|| {
        let mut file = std::fs::File::create(&temp).map_err(|e| named(e, &temp))?;
        file.write_all(&bytes).map_err(|e| named(e, &temp))?;
        file.sync_all().map_err(|e| named(e, &temp))?;
        std::fs::rename(&temp, &path).map_err(|e| named(e, &path))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(Into::into)
}

/// Refuses, before anything is sent, an account whose consent does not grant
/// `https://api.ebay.com/oauth/api_scope/sell.fulfillment` itself (createShippingFulfillment
/// takes no read-only scope: eBay answers 403, errorId 1100).
fn require_fulfillment_write_scope(
    tokens: &dyn RefreshTokenStore,
    account: &str,
    config: &OAuthConfig,
) -> Result<(), String> {
    require_fulfillment_scope(tokens, account, config)?;
    match tokens.load(account) {
        Ok(Some(stored)) if token_store::grants_fulfillment_write(stored.scopes.iter(), config) => {
            Ok(())
        }
        _ => Err(format!(
            "the consent stored for account {:?} does not grant {}, which \
             createShippingFulfillment needs (the read-only scope is not enough). Run `consent \
             --account {} --for orders` and try again; nothing was sent",
            escaped(account),
            token_store::FULFILLMENT_SCOPE,
            escaped(account),
        )),
    }
}

/// `orders ship ORDER`: the shipment made once (getShippingFulfillments first), its
/// fulfillment id printed, and whether this run created it.
fn ship(seller: &Seller, shipment: &Shipment) -> Result<(), String> {
    let orders = orders_checked(seller, require_fulfillment_write_scope)?;
    let shipped = orders.ship(shipment).map_err(|e| e.to_string())?;
    let what = if shipped.created {
        "created"
    } else {
        "already there (nothing created)"
    };
    outln!(
        "order {}: fulfillment {} {what}",
        escaped(&shipment.order_id),
        escaped(&shipped.fulfillment_id)
    );
    Ok(())
}

/// `orders show ORDER`: getOrder's answer, as JSON.
fn show(seller: &Seller, order_id: &str) -> Result<(), String> {
    let orders = orders_of(seller)?;
    let order = orders.get_order(order_id).map_err(|e| e.to_string())?;
    let text = serde_json::to_string_pretty(&order).map_err(|e| e.to_string())?;
    outln!("{}", output::json_for_terminal(&text));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_syncs_writing_one_order_into_one_dir_at_once_each_write_whole_and_none_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let writers: Vec<_> = (1..=2)
            .map(|writer| {
                let dir = dir.path().to_owned();
                std::thread::spawn(move || {
                    (0..300)
                        .filter_map(|round| {
                            let order = Order {
                                order_id: "12-34567-89012".to_owned(),
                                last_modified_date: Some(format!("w{writer} r{round}")),
                                ..Order::default()
                            };
                            write_order(&dir, &order).err()
                        })
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut refused = Vec::new();
        for writer in writers {
            refused.extend(writer.join().expect("a writer ran"));
        }
        assert!(
            refused.is_empty(),
            "writes refused: {:?}",
            &refused[..refused.len().min(3)]
        );
        let text = std::fs::read_to_string(dir.path().join("12-34567-89012.json"))
            .expect("the order's file");
        let order: Order = serde_json::from_str(&text).expect("one writer's whole order");
        let last = order.last_modified_date.unwrap_or_default();
        assert!(
            last == "w1 r299" || last == "w2 r299",
            "neither writer's last: {last}"
        );
    }
}
