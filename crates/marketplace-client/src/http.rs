//! What the OAuth and Taxonomy clients share about HTTP: one way to build a blocking client,
//! one way to put a transport error on a line.

use std::time::Duration;

use url::Url;

use crate::oauth::is_loopback;

/// A blocking client for requests to `base_url` that carry a credential: it never follows a
/// redirect (the credential would follow it), bypasses proxies on loopback, and names itself.
pub(crate) fn client(
    base_url: &Url,
    connect_timeout: Duration,
    timeout: Duration,
) -> reqwest::Result<reqwest::blocking::Client> {
    let mut builder = reqwest::blocking::Client::builder()
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("marketplace-toolkit/", env!("CARGO_PKG_VERSION")));
    if is_loopback(base_url) {
        builder = builder.no_proxy();
    }
    builder.build()
}

/// An error and its sources on one line, without repeating a source its parent already quotes.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}
