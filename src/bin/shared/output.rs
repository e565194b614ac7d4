//! Standard output for the commands: a reader that leaves early (`snapshot verify | head`)
//! ends the command quietly, as a process killed by SIGPIPE would end, instead of the panic
//! `println!` raises on a closed pipe.

/// Writes `args` to standard output and flushes it. When the reader has gone (a broken pipe),
/// exits at once with status 141 (128 + SIGPIPE) and no message: nobody wants the rest. On any
/// other write failure, says so on standard error and exits with status 1.
pub fn write(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `println!` that ends the command quietly on a closed pipe ([`write()`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that ends the command quietly on a closed pipe ([`write()`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}
