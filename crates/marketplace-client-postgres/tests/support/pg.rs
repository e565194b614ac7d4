//! A real PostgreSQL for the tests.
//!
//! [`TestDb::new`] gives each test a fresh, uniquely named database: on the server at
//! `DATABASE_URL` when that is set, otherwise on one throwaway server per test binary
//! (started on first use). [`TestDb::with_own_server`] starts a throwaway server for one test
//! alone, which the test may [`stop`](PgServer::stop) and [`start`](PgServer::start) again.
//!
//! A throwaway server is made with the `initdb`, `pg_ctl` and `postgres` binaries found on
//! `PATH` or in `/usr/lib/postgresql/*/bin` (the newest). `initdb` refuses to run as root, so
//! under root the server runs as the system user `marketplace-pg-test` (created when missing).
//! It listens on 127.0.0.1 only, on a free port, with trust authentication, and keeps its
//! socket, data and log in a temporary directory. Dropping a [`PgServer`] stops it
//! (`pg_ctl stop -m immediate`) and removes the directory; a watchdog process does the same
//! when the test binary exits without dropping it (the shared server lives in a static).

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgPool};

/// The unprivileged user a throwaway server runs as when the tests run as root.
const PG_USER: &str = "marketplace-pg-test";
/// The superuser `initdb` creates.
const SUPERUSER: &str = "postgres";

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The directory holding `initdb`, `pg_ctl`, `postgres` and `pg_dump`.
pub fn bin_dir() -> Result<PathBuf, String> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| dir.join(b).is_file())
    };
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if !initdb.is_file() {
                continue;
            }
            // Follow a symbolic link to the real directory (Debian links into
            // /usr/lib/postgresql/N/bin).
            if let Some(real) = initdb
                .canonicalize()
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .filter(|real| complete(real))
            {
                return Ok(real);
            }
            if complete(&dir) {
                return Ok(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            complete(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH or in \
         /usr/lib/postgresql/*/bin: install PostgreSQL (Debian: apt-get install postgresql) \
         or set DATABASE_URL"
            .to_owned()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn id_of(user: &str, flag: &str) -> Option<u32> {
    let out = Command::new("id").args([flag, user]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The unprivileged user to run as (created if missing) with its uid and gid.
fn ensure_user() -> Result<(u32, u32), String> {
    if id_of(PG_USER, "-u").is_none() {
        // Another test binary may create it at the same moment: only the outcome counts.
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_USER,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    match (id_of(PG_USER, "-u"), id_of(PG_USER, "-g")) {
        (Some(uid), Some(gid)) => Ok((uid, gid)),
        _ => Err(format!(
            "could not create the system user {PG_USER} (useradd)"
        )),
    }
}

/// A throwaway PostgreSQL server in a temporary directory.
pub struct PgServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    run_as: Option<String>,
    running: bool,
}

impl PgServer {
    /// Creates a cluster (`initdb`) and starts it.
    pub fn launch() -> Result<Self, String> {
        let bin = bin_dir()?;
        let run_as = if is_root() {
            ensure_user()?;
            Some(PG_USER.to_owned())
        } else {
            None
        };
        let dir = std::env::temp_dir().join(unique("marketplace-pg"));
        std::fs::create_dir(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let mut server = Self {
            bin,
            dir,
            port: 0,
            run_as,
            running: false,
        };
        // From here on, Drop removes the directory.
        server.prepare()?;
        server.watchdog();
        server.start_on_free_port()?;
        Ok(server)
    }

    fn prepare(&mut self) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("chmod {}: {e}", self.dir.display()))?;
        if self.run_as.is_some() {
            let (uid, gid) = ensure_user()?;
            std::os::unix::fs::chown(&self.dir, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", self.dir.display()))?;
        }
        let data = self.data();
        self.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                SUPERUSER.as_ref(),
                "--auth=trust".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
                "--no-sync".as_ref(),
            ],
        )?;
        Ok(())
    }

    /// A process that stops the server and removes its directory once this test binary has
    /// exited (for the shared server, which is never dropped, and after a crash).
    fn watchdog(&self) {
        let stop = self.command("pg_ctl");
        let mut stop_line: Vec<String> = std::iter::once(stop.get_program())
            .chain(stop.get_args())
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect();
        stop_line.extend(
            [
                "-D",
                &self.data().to_string_lossy(),
                "-m",
                "immediate",
                "stop",
            ]
            .iter()
            .map(|a| shell_quote(a)),
        );
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            stop = stop_line.join(" "),
            dir = shell_quote(&self.dir.to_string_lossy()),
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The command for binary `name` of the server, run as the server's user.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut command = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        command.current_dir(&self.dir).stdin(Stdio::null());
        command
    }

    fn run(&self, name: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let out = self
            .command(name)
            .args(args)
            .output()
            .map_err(|e| format!("run {name}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{name} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn start_on_free_port(&mut self) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..5 {
            self.port = free_port()?;
            let conf = format!(
                "\n# marketplace-client-postgres tests\nlisten_addresses = '127.0.0.1'\n\
                 port = {}\nunix_socket_directories = '{}'\nfsync = off\n\
                 full_page_writes = off\nshared_buffers = 16MB\n",
                self.port,
                self.dir.display()
            );
            let path = self.data().join("postgresql.conf");
            let mut text = std::fs::read_to_string(&path)
                .map_err(|e| format!("read {}: {e}", path.display()))?;
            text.push_str(&conf);
            std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
            match self.start() {
                Ok(()) => return Ok(()),
                // Another process may have taken the port meanwhile: try another.
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    pub fn start(&mut self) -> Result<(), String> {
        let data = self.data();
        let log = self.dir.join("server.log");
        let result = self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "start".as_ref(),
            ],
        );
        match result {
            Ok(()) => {
                self.running = true;
                Ok(())
            }
            Err(e) => {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                Err(format!("{e}\nserver log:\n{log}"))
            }
        }
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`).
    pub fn stop(&mut self) -> Result<(), String> {
        let data = self.data();
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        )?;
        self.running = false;
        Ok(())
    }

    /// The connection options of database `name` on this server.
    pub fn options(&self, name: &str) -> PgConnectOptions {
        PgConnectOptions::new()
            .host("127.0.0.1")
            .port(self.port)
            .username(SUPERUSER)
            .database(name)
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{name}", self.port)
    }

    /// The directory of the server's binaries.
    pub fn bin(&self) -> &Path {
        &self.bin
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.running {
            let _ = self.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("find a free port: {e}"))
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The server every [`TestDb::new`] of this test binary shares (when `DATABASE_URL` is unset).
fn shared_server() -> Result<&'static PgServer, String> {
    static SHARED: OnceLock<Result<PgServer, String>> = OnceLock::new();
    SHARED
        .get_or_init(PgServer::launch)
        .as_ref()
        .map_err(Clone::clone)
}

/// Where a test database lives.
enum Host {
    /// The server at `DATABASE_URL`.
    External(String),
    /// The test binary's shared throwaway server.
    Shared(&'static PgServer),
    /// A throwaway server of this test's own.
    Own(PgServer),
}

/// A fresh database for one test, dropped (with its server, if it has its own) afterwards.
pub struct TestDb {
    /// A pool on the database.
    pub pool: PgPool,
    name: String,
    host: Host,
}

impl TestDb {
    /// A fresh database on the server at `DATABASE_URL`, or on the test binary's throwaway
    /// server.
    pub async fn new() -> Self {
        let host = match std::env::var("DATABASE_URL") {
            Ok(url) if !url.trim().is_empty() => Host::External(url),
            _ => Host::Shared(shared_server().unwrap_or_else(|e| panic!("{e}"))),
        };
        Self::create(host).await
    }

    /// A fresh database on a throwaway server of this test's own, which the test may stop and
    /// start ([`TestDb::server`]).
    pub async fn with_own_server() -> Self {
        let server = PgServer::launch().unwrap_or_else(|e| panic!("{e}"));
        Self::create(Host::Own(server)).await
    }

    async fn create(host: Host) -> Self {
        let name = unique("mcp_test");
        let admin = admin_options(&host);
        let mut conn = connect_retrying(&admin).await;
        // `name` is made by `unique` (letters, digits, `_`), quoted.
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("create database {name}: {e}"));
        let _ = conn.close().await;
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(3))
            .connect_with(admin.database(&name))
            .await
            .unwrap_or_else(|e| panic!("connect to database {name}: {e}"));
        Self { pool, name, host }
    }

    /// The test's own server ([`TestDb::with_own_server`]).
    pub fn server(&mut self) -> &mut PgServer {
        match &mut self.host {
            Host::Own(server) => server,
            _ => panic!("this test database has no server of its own"),
        }
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A URL of the test database (for `pg_dump`).
    pub fn url(&self) -> String {
        match &self.host {
            Host::External(url) => with_database(url, &self.name),
            Host::Shared(server) => server.url(&self.name),
            Host::Own(server) => server.url(&self.name),
        }
    }

    /// `pg_dump` of the test database (schema and data), from the server's binaries.
    pub fn pg_dump(&self) -> String {
        let bin = match &self.host {
            Host::Shared(server) => server.bin().to_path_buf(),
            Host::Own(server) => server.bin().to_path_buf(),
            Host::External(_) => bin_dir().unwrap_or_else(|e| panic!("{e}")),
        };
        let out = Command::new(bin.join("pg_dump"))
            .arg("--no-owner")
            .arg(format!("--dbname={}", self.url()))
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run pg_dump: {e}"));
        assert!(
            out.status.success(),
            "pg_dump failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // An own server goes with its directory; on a shared one, drop the database.
        if matches!(self.host, Host::Own(_)) {
            return;
        }
        let admin = admin_options(&self.host);
        let name = self.name.clone();
        // Drop may run inside the test's runtime: use a runtime of its own on a thread.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async move {
                let mut conn = admin.connect().await.ok()?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await
                .ok()?;
                conn.close().await.ok()
            })
        })
        .join();
    }
}

/// Options for the maintenance database of `host`.
fn admin_options(host: &Host) -> PgConnectOptions {
    match host {
        Host::External(url) => PgConnectOptions::from_str(url)
            .unwrap_or_else(|e| panic!("DATABASE_URL is not a PostgreSQL URL: {e}")),
        Host::Shared(server) => server.options("postgres"),
        Host::Own(server) => server.options("postgres"),
    }
}

async fn connect_retrying(options: &PgConnectOptions) -> sqlx::PgConnection {
    let mut last = None;
    for _ in 0..50 {
        match options.connect().await {
            Ok(conn) => return conn,
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot connect to the test server: {last:?}");
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let path_start = base[authority_start..]
        .find('/')
        .map(|i| authority_start + i)
        .unwrap_or(base.len());
    let mut out = format!("{}/{name}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}
