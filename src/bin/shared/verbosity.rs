//! `-v` and `RUST_LOG` for the commands: what the client tells `tracing` (one `http` span per
//! attempt, the token cache's events; never a secret) printed on standard error.

use tracing_subscriber::EnvFilter;

/// The long help of `-v/--verbose`.
pub const VERBOSE_HELP: &str = "Show the HTTP attempts and token events on standard error: -v for \
    debug, -vv for trace (targets marketplace_client::http and marketplace_client::token). \
    RUST_LOG (tracing-subscriber's EnvFilter syntax, e.g. marketplace_client=debug) is honoured \
    too; without either, only warnings are shown. No token or secret is ever printed.";

/// The filter: `RUST_LOG` when set (warnings only otherwise), with `marketplace_client` raised
/// to debug (`verbose` 1) or trace (2 and more).
fn filter(verbose: u8) -> EnvFilter {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .filter(|value| !value.trim().is_empty());
    let mut filter = match from_env.as_deref().map(EnvFilter::try_new) {
        Some(Ok(filter)) => filter,
        Some(Err(e)) => {
            errln!("warning: RUST_LOG ignored: {e}");
            EnvFilter::new("warn")
        }
        None => EnvFilter::new("warn"),
    };
    let level = match verbose {
        0 => None,
        1 => Some("debug"),
        _ => Some("trace"),
    };
    if let Some(level) = level
        && let Ok(directive) = format!("marketplace_client={level}").parse()
    {
        filter = filter.add_directive(directive);
    }
    filter
}

/// Installs the subscriber for the whole process: the events on standard error (each HTTP
/// answer is an event, `answered`, inside its `http` span, so it prints as one line with the
/// operation, URL, status and elapsed time; no span events, which would say it twice). Call it
/// first thing in `main`.
pub fn init(verbose: u8) {
    // Fails only when a subscriber is already installed, which then stays.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter(verbose))
        .with_writer(|| EscapingStderr)
        .try_init();
}

/// Standard error for the log: each event (tracing-subscriber writes one whole) has every
/// control character but its final newline escaped, as the commands escape what they print
/// (a field may hold a store's or a server's text), and a failed write is dropped rather than
/// reported (a closed standard error never stops a command).
struct EscapingStderr;

impl std::io::Write for EscapingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (body, end) = match text.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (&*text, ""),
        };
        crate::output::write_err(format_args!("{}{end}", crate::output::escaped(body)));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
