//! `cargo run -p fake-marketplace -- [PORT] [--no-delay]`: starts the fake on 127.0.0.1 and
//! prints its address and the environment a client needs, then serves until killed.
//!
//! The full category tree is answered after a random 2 to 5 s, like the real service; pass
//! `--no-delay` to answer at once.

use std::time::Duration;

use fake_marketplace::{FakeConfig, FakeMarketplace};

fn main() {
    let mut port = 0;
    let mut delay = Some((Duration::from_secs(2), Duration::from_secs(5)));
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--no-delay" => delay = None,
            "-h" | "--help" => {
                println!("usage: fake-marketplace [PORT] [--no-delay]");
                return;
            }
            p => match p.parse::<u16>() {
                Ok(p) => port = p,
                Err(_) => {
                    eprintln!("usage: fake-marketplace [PORT] [--no-delay]");
                    std::process::exit(2);
                }
            },
        }
    }
    let config = FakeConfig {
        tree_delay: delay,
        ..FakeConfig::default()
    };
    let fake = match FakeMarketplace::start_on(port, config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot start the fake marketplace on port {port}: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", fake.base_url());
    eprintln!("fake marketplace on {}", fake.base_url());
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
    eprintln!("point the snapshot tool (or any client) at it with:");
    eprintln!(
        "export MARKETPLACE_BASE_URL={0} MARKETPLACE_AUTH_URL={0} MARKETPLACE_CLIENT_ID={1} MARKETPLACE_CLIENT_SECRET='{2}'",
        fake.base_url(),
        fake.client_id(),
        fake.client_secret()
    );
    loop {
        std::thread::park();
    }
}
