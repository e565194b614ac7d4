//! `cargo run -p fake-marketplace -- [PORT]`: starts the fake on 127.0.0.1 and prints its
//! address and credentials, then serves until killed.

use fake_marketplace::{FakeConfig, FakeMarketplace};

fn main() {
    let port = match std::env::args().nth(1).map(|p| p.parse::<u16>()) {
        None => 0,
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            eprintln!("usage: fake-marketplace [PORT]");
            std::process::exit(2);
        }
    };
    let fake = match FakeMarketplace::start_on(port, FakeConfig::default()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot start the fake marketplace on port {port}: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", fake.base_url());
    eprintln!(
        "MARKETPLACE_BASE_URL={0} MARKETPLACE_AUTH_URL={0} MARKETPLACE_CLIENT_ID={1} MARKETPLACE_CLIENT_SECRET='{2}'",
        fake.base_url(),
        fake.client_id(),
        fake.client_secret()
    );
    loop {
        std::thread::park();
    }
}
