//! Every command in the repository's documents runs as written.
//!
//! The commands are the lines of the fenced ```` ```sh ````, ```` ```bash ````,
//! ```` ```shell ```` and ```` ```console ```` blocks of every tracked `*.md` file
//! (`git ls-files '*.md'`): blank lines and `#` lines (comments, `# output`) are skipped, a line
//! ending in `\` is joined with the next (the `\` dropped, the next line's indentation reduced
//! to one space), and in a block where some line starts with `$ ` only those lines (and their
//! continuations, a leading `> ` dropped) are commands, the rest being their output.
//!
//! `tests/doc_commands.txt` says what is done with a command other than running it and
//! expecting exit status 0: `skip` (with the reason), `background` (a server, started in the
//! background and waited for on its address, stopped at the end of its document), `fails`
//! (must exit non-zero, with the given text in its output) and `output` (must exit 0 with that
//! text in its output). Entries name the document and the command's exact text, never a line
//! number, so sections may move.
//!
//! Two tests:
//!
//! - `the_command_list_matches_the_documents` (part of `cargo test --workspace`): every entry
//!   names a command its document has, so the list cannot rot; and no block of another
//!   language holds a `$ ` prompt (a session whose commands would go unseen).
//! - `documented_commands_run` (`#[ignore]`d; `.ci/run` runs it after the test command, when
//!   every build is warm and no other test uses the fixed ports the documents name): runs every
//!   command with `bash -c`, from the repository's root, one document after another and in the
//!   document's order. What a command exports or assigns carries over to the document's later
//!   commands (as in the one shell a reader types them into), a `cd` to the end of its block
//!   (each block starts at the root, so that sections may move); each document
//!   starts from the runner's environment without `MARKETPLACE_*` and `TAXONOMY_*` variables, so
//!   no credentials of the machine's reach a command. A command fails the run when it exits
//!   otherwise than its entry says, runs over 15 minutes, or changes a tracked file. With
//!   `DOC_COMMANDS_VERBOSE=1` it prints each command's output too (to compare with the
//!   document's).
//!
//! The `cargo` commands run as written, with the caller's `CARGO_TARGET_DIR` (or the default
//! `target/`), so they reuse what the test command built. `cargo test` releases the build
//! directory's lock once the test binaries are built, so a nested `cargo run` does not wait on
//! the outer `cargo test`.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The list of the commands that are not simply run.
const LIST: &str = "tests/doc_commands.txt";

/// The longest a command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The longest a background server (built first, when `cargo run` needs to) may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The fence languages whose blocks hold commands.
const SHELL_LANGUAGES: [&str; 4] = ["sh", "bash", "shell", "console"];

/// A command found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DocCommand {
    /// The command's text, continuation lines joined.
    text: String,
    /// The line (1-based) it starts on, for messages only.
    line: usize,
    /// The block it is in (0 for the document's first shell block): each block starts at the
    /// root, whatever an earlier block `cd`ed into.
    block: usize,
}

/// A fenced block of a Markdown document.
struct Fence<'a> {
    /// The info string's first word (`sh` of ```` ```sh,no_run ````).
    language: &'a str,
    /// The block's lines with their numbers (1-based), the fence's indentation removed.
    body: Vec<(usize, &'a str)>,
}

/// The fenced blocks of a Markdown document, in order.
fn fences(markdown: &str) -> Vec<Fence<'_>> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut fences = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let indent = lines[i].len() - trimmed.len();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        if ticks < 3 {
            i += 1;
            continue;
        }
        let language = trimmed[ticks..]
            .trim()
            .split(|c: char| c == ',' || c == '{' || c.is_whitespace())
            .next()
            .unwrap_or("");
        let start = i + 1;
        let mut end = start;
        while end < lines.len() {
            let t = lines[end].trim_start();
            let closing = t.chars().take_while(|&c| c == '`').count();
            if closing >= ticks && t[closing..].trim().is_empty() {
                break;
            }
            end += 1;
        }
        let body = (start..end)
            .map(|n| (n + 1, strip_indent(lines[n], indent)))
            .collect();
        fences.push(Fence { language, body });
        i = end + 1;
    }
    fences
}

/// The commands of a Markdown document's shell blocks, in order.
fn extract(markdown: &str) -> Vec<DocCommand> {
    fences(markdown)
        .iter()
        .filter(|f| SHELL_LANGUAGES.contains(&f.language))
        .enumerate()
        .flat_map(|(block, f)| {
            block_commands(&f.body)
                .into_iter()
                .map(move |c| DocCommand { block, ..c })
        })
        .collect()
}

/// The lines that start with a `$ ` prompt in a block of another language than the shell
/// ones (an untagged session, whose commands the runner would not see).
fn untagged_prompts(markdown: &str) -> Vec<usize> {
    fences(markdown)
        .iter()
        .filter(|f| !SHELL_LANGUAGES.contains(&f.language))
        .flat_map(|f| f.body.iter().filter(|(_, l)| l.starts_with("$ ")))
        .map(|(n, _)| *n)
        .collect()
}

/// `line` without up to `indent` leading spaces (those of its fence).
fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

/// The commands of one block's lines (numbered).
fn block_commands(body: &[(usize, &str)]) -> Vec<DocCommand> {
    let prompted = body
        .iter()
        .any(|(_, l)| l.starts_with("$ ") || l.trim_end() == "$");
    let mut commands = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let (line, text) = body[i];
        i += 1;
        let text = if prompted {
            match text.strip_prefix("$ ") {
                Some(rest) => rest,
                None => continue, // output
            }
        } else {
            text
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let mut joined = text.to_string();
        while joined.ends_with('\\') && i < body.len() {
            joined.pop();
            let next = body[i].1.trim();
            let next = next.strip_prefix("> ").unwrap_or(next);
            joined = format!("{} {}", joined.trim_end(), next);
            i += 1;
        }
        commands.push(DocCommand {
            text: joined,
            line,
            block: 0,
        });
    }
    commands
}

/// What is done with a listed command instead of running it and expecting exit status 0.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Not run, for this reason.
    Skip(String),
    /// A server: started in the background; the run goes on once this address accepts.
    Background(String),
    /// Must exit non-zero, with this text in its output.
    Fails(String),
    /// Must exit 0, with this text in its output.
    Output(String),
}

/// An entry of the list.
#[derive(Debug, Clone)]
struct Entry {
    document: String,
    command: String,
    action: Action,
}

/// The entries of the list's text: blocks of `key: value` lines separated by blank lines,
/// `#` lines being comments.
fn parse_list(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut fields: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    let lines: Vec<&str> = text.lines().chain(std::iter::once("")).collect();
    for (n, line) in lines.iter().enumerate() {
        let line = line.trim_end();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if fields.is_empty() {
                continue;
            }
            let first = fields.values().map(|(n, _)| *n).min().unwrap_or(0);
            let get = |key: &str| fields.get(key).map(|(_, v)| v.to_string());
            let (Some(document), Some(command)) = (get("document"), get("command")) else {
                return Err(format!(
                    "{LIST}:{first}: an entry needs a `document:` and a `command:` line"
                ));
            };
            let actions: Vec<Action> = [
                get("skip").map(Action::Skip),
                get("background").map(Action::Background),
                get("fails").map(Action::Fails),
                get("output").map(Action::Output),
            ]
            .into_iter()
            .flatten()
            .collect();
            let [action] = <[Action; 1]>::try_from(actions).map_err(|_| {
                format!("{LIST}:{first}: an entry needs exactly one of `skip:`, `background:`, `fails:`, `output:`")
            })?;
            if let Action::Skip(reason) = &action
                && reason.trim().is_empty()
            {
                return Err(format!("{LIST}:{first}: a skip needs its reason"));
            }
            entries.push(Entry {
                document,
                command,
                action,
            });
            fields.clear();
            continue;
        }
        let Some((key, value)) = line.split_once(": ") else {
            return Err(format!("{LIST}:{}: not `key: value`: {line}", n + 1));
        };
        if fields.insert(key, (n + 1, value)).is_some() {
            return Err(format!("{LIST}:{}: `{key}:` twice in one entry", n + 1));
        }
    }
    Ok(entries)
}

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The tracked Markdown documents, relative to the root.
fn documents() -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z", "*.md"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files failed");
    let mut docs: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8 paths")
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    docs.sort();
    docs
}

fn read_list() -> Vec<Entry> {
    let text = fs::read_to_string(root().join(LIST)).unwrap_or_else(|e| panic!("{LIST}: {e}"));
    parse_list(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// The list's entries that match no command of their document.
fn stale_entries(entries: &[Entry], commands: &BTreeMap<String, Vec<DocCommand>>) -> Vec<String> {
    entries
        .iter()
        .filter(|e| {
            !commands
                .get(&e.document)
                .is_some_and(|cs| cs.iter().any(|c| c.text == e.command))
        })
        .map(|e| {
            format!(
                "{LIST}: {}: no command `{}` (changed or removed? fix or remove the entry)",
                e.document, e.command
            )
        })
        .collect()
}

#[test]
fn the_command_list_matches_the_documents() {
    let entries = read_list();
    let commands: BTreeMap<String, Vec<DocCommand>> = documents()
        .into_iter()
        .map(|d| {
            let text = fs::read_to_string(root().join(&d)).unwrap();
            (d, extract(&text))
        })
        .collect();
    let stale = stale_entries(&entries, &commands);
    assert!(stale.is_empty(), "{}", stale.join("\n"));
    for document in commands.keys() {
        let text = fs::read_to_string(root().join(document)).unwrap();
        let lines = untagged_prompts(&text);
        assert!(
            lines.is_empty(),
            "{document}: lines {lines:?} start with a `$ ` prompt in a block that is not \
             ```console/```sh: tag the block so that its commands run"
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for e in &entries {
        assert!(
            seen.insert((&e.document, &e.command)),
            "{LIST}: {}: `{}` is listed twice",
            e.document,
            e.command
        );
    }
}

/// A command that did not do what its document (and the list) says.
#[derive(Debug)]
struct Failure {
    document: String,
    command: DocCommand,
    what: String,
    output: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}: `{}`: {}",
            self.document, self.command.line, self.command.text, self.what
        )?;
        let lines: Vec<&str> = self.output.lines().collect();
        let tail = &lines[lines.len().saturating_sub(30)..];
        for line in tail {
            writeln!(f, "    | {line}")?;
        }
        Ok(())
    }
}

/// A background server, stopped (with its process group) when dropped.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        // The group this runner made for the server (`process_group(0)`: its id is the
        // child's), so that what `cargo run` or a shell started stops with it.
        let group = format!("-{}", self.child.id());
        let signal = |name: &str| {
            let _ = Command::new("kill")
                .args(["-s", name, "--", &group])
                .stderr(Stdio::null())
                .status();
        };
        signal("TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal("KILL");
        let _ = self.child.wait();
    }
}

/// Runs one document's commands: `entries` are the list's entries for this document.
/// `dir` is where they run; `scratch` an empty directory for the shell's state and the output.
fn run_document(
    document: &str,
    commands: &[DocCommand],
    entries: &[Entry],
    dir: &Path,
    scratch: &Path,
    log: &mut dyn FnMut(&str),
) -> Vec<Failure> {
    let state = scratch.join("state.sh");
    let cwd = scratch.join("cwd");
    fs::write(&cwd, dir.as_os_str().as_encoded_bytes()).unwrap();
    let mut failures = Vec::new();
    let mut servers = Vec::new();
    let tracked_before = tracked_changes(dir);
    let mut block = None;
    for (n, command) in commands.iter().enumerate() {
        if block != Some(command.block) {
            // A new block starts at `dir` (a `cd` holds to the end of its block), so that a
            // section that moves does not run its commands where another one `cd`ed into.
            fs::write(&cwd, dir.as_os_str().as_encoded_bytes()).unwrap();
            block = Some(command.block);
        }
        let action = entries
            .iter()
            .find(|e| e.document == document && e.command == command.text)
            .map(|e| e.action.clone());
        let fail = |what: String, output: String| Failure {
            document: document.to_string(),
            command: command.clone(),
            what,
            output,
        };
        let prelude = format!(
            "set -a\n[ -f {state} ] && . {state}\ncd \"$(cat {cwd})\" || exit 97\n",
            state = quote(&state),
            cwd = quote(&cwd)
        );
        let out_path = scratch.join(format!("out-{n}"));
        let out = fs::File::create(&out_path).unwrap();
        let mut bash = Command::new("bash");
        bash.current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        for (name, _) in std::env::vars_os() {
            let text = name.to_string_lossy();
            if text.starts_with("MARKETPLACE_")
                || text.starts_with("TAXONOMY_")
                || text.starts_with("CARGO_PKG_")
                || text.starts_with("CARGO_MANIFEST_")
                || text.starts_with("CARGO_BIN_EXE_")
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "CARGO_TARGET_TMPDIR",
                ]
                .contains(&&*text)
            {
                bash.env_remove(&name);
            }
        }
        std::os::unix::process::CommandExt::process_group(&mut bash, 0);
        let started = Instant::now();
        match &action {
            Some(Action::Skip(reason)) => {
                log(&format!("skip {document}: {} ({reason})", command.text));
                continue;
            }
            Some(Action::Background(address)) => {
                if TcpStream::connect(address).is_ok() {
                    failures.push(fail(
                        format!("{address} is already taken, before the command started it"),
                        String::new(),
                    ));
                    continue;
                }
                bash.arg("-c")
                    .arg(format!("{prelude}exec {}\n", command.text));
                let mut server = Server {
                    child: bash.spawn().expect("bash starts"),
                };
                let listening = loop {
                    if TcpStream::connect(address).is_ok() {
                        break Ok(());
                    }
                    if let Ok(Some(status)) = server.child.try_wait() {
                        break Err(format!("exited ({status}) before listening on {address}"));
                    }
                    if started.elapsed() > LISTEN_TIMEOUT {
                        break Err(format!(
                            "not listening on {address} after {LISTEN_TIMEOUT:?}"
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                };
                match listening {
                    Ok(()) => {
                        log(&format!(
                            "background {document}: {} (listening on {address} after {:.1} s)",
                            command.text,
                            started.elapsed().as_secs_f64()
                        ));
                        servers.push(server);
                    }
                    Err(what) => {
                        drop(server);
                        failures.push(fail(what, read(&out_path)));
                    }
                }
                continue;
            }
            _ => {}
        }
        bash.arg("-c").arg(format!(
            "{prelude}{}\n__status=$?\nset +a\nexport -p > {state}\npwd > {cwd}\nexit $__status\n",
            command.text,
            state = quote(&state),
            cwd = quote(&cwd)
        ));
        let mut child = bash.spawn().expect("bash starts");
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > COMMAND_TIMEOUT {
                drop(Server { child });
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = read(&out_path);
        let seconds = started.elapsed().as_secs_f64();
        let Some(status) = status else {
            failures.push(fail(
                format!("still running after {COMMAND_TIMEOUT:?}"),
                output,
            ));
            continue;
        };
        let problem = match &action {
            Some(Action::Fails(text)) if status.success() => Some(format!(
                "exited 0; the document says it fails (with `{text}`)"
            )),
            Some(Action::Fails(text)) | Some(Action::Output(text)) if !output.contains(text) => {
                Some(format!("{status}, and its output lacks `{text}`"))
            }
            Some(Action::Fails(_)) => None,
            _ if !status.success() => Some(format!("{status}")),
            _ => None,
        };
        match problem {
            Some(what) => failures.push(fail(what, output)),
            None => {
                let verdict = match action {
                    Some(Action::Fails(_)) => "fails as documented",
                    _ => "ok",
                };
                log(&format!(
                    "{verdict} ({seconds:.1} s) {document}: {}",
                    command.text
                ));
                if std::env::var_os("DOC_COMMANDS_VERBOSE").is_some() {
                    for line in output.lines() {
                        log(&format!("    | {line}"));
                    }
                }
            }
        }
        let tracked = tracked_changes(dir);
        if tracked != tracked_before {
            failures.push(fail(
                format!("changed tracked files: {tracked:?} (before: {tracked_before:?})"),
                String::new(),
            ));
            break;
        }
    }
    drop(servers);
    failures
}

/// `git status --porcelain` of `dir` (empty outside a repository).
fn tracked_changes(dir: &Path) -> String {
    Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(dir)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&fs::read(path).unwrap_or_default()).into_owned()
}

/// `path` single-quoted for the shell.
fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[test]
#[ignore = "runs every documented command (minutes, fixed ports); .ci/run runs it"]
fn documented_commands_run() {
    let entries = read_list();
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut unlisted_docs = BTreeMap::new();
    for document in documents() {
        let text = fs::read_to_string(root().join(&document)).unwrap();
        let commands = extract(&text);
        if commands.is_empty() {
            continue;
        }
        unlisted_docs.insert(document.clone(), commands.clone());
        let scratch = tempfile::tempdir().unwrap();
        let mut log = |line: &str| eprintln!("doc_commands: {line}");
        failures.extend(run_document(
            &document,
            &commands,
            &entries,
            &root(),
            scratch.path(),
            &mut log,
        ));
    }
    let stale = stale_entries(&entries, &unlisted_docs);
    eprintln!(
        "doc_commands: {} failure(s) in {:.0} s",
        failures.len() + stale.len(),
        started.elapsed().as_secs_f64()
    );
    let mut report: Vec<String> = failures.iter().map(|f| f.to_string()).collect();
    report.extend(stale);
    assert!(
        report.is_empty(),
        "documented commands that do not run as written:\n{}",
        report.join("\n")
    );
}

#[test]
fn extracts_commands_prompts_continuations_and_skips_comments_and_output() {
    let doc = "\
Text.

```sh
cargo run --example listing   # a comment after the command
# a comment line

export A=1 \\
       B=2
```

```rust
let not_a_command = 1;
```

1. A list item:

   ```bash
   snapshot verify
   ```

```console
$ echo one \\
> two
one two
# output: not a command either
$ true
```

```text
echo not a command
```
";
    let commands: Vec<(usize, usize, String)> = extract(doc)
        .into_iter()
        .map(|c| (c.line, c.block, c.text))
        .collect();
    let listing = "cargo run --example listing   # a comment after the command";
    assert_eq!(
        commands,
        [
            (4, 0, listing.into()),
            (7, 0, "export A=1 B=2".into()),
            (18, 1, "snapshot verify".into()),
            (22, 2, "echo one two".into()),
            (26, 2, "true".into()),
        ]
    );
}

#[test]
fn an_untagged_session_is_found() {
    let doc = "```\n$ cargo run\noutput\n```\n\n```text\nno prompt\n```\n\n```console\n$ ok\n```\n";
    assert_eq!(untagged_prompts(doc), [2]);
}

#[test]
fn the_list_is_checked() {
    let entries = parse_list(
        "# comment\ndocument: README.md\ncommand: cargo install x\nskip: needs the network\n\n\
         document: a.md\ncommand: false\nfails: no\n",
    )
    .unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].action, Action::Skip("needs the network".into()));
    assert!(parse_list("document: a.md\ncommand: x\n").is_err());
    assert!(parse_list("document: a.md\ncommand: x\nskip: a\nfails: b\n").is_err());
    let commands = BTreeMap::from([("a.md".to_string(), extract("```sh\ntrue\n```\n"))]);
    let stale = stale_entries(&entries, &commands);
    assert_eq!(stale.len(), 2, "{stale:?}");
    assert!(stale[0].contains("README.md") && stale[0].contains("cargo install x"));
}

/// The runner names the document and the command that failed, and what it printed; state
/// (exports, variables, `cd`) carries from one command to the next.
#[test]
fn a_failing_command_is_named_with_its_document() {
    let doc = "```sh\nexport GREETING=hello\nWHO=world; cd /\necho \"$GREETING $WHO from $PWD\"\nls /no/such/dir\necho \\\n  done\n```\n\n```sh\npwd\n```\n";
    let commands = extract(doc);
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    let mut log = |line: &str| lines.push(line.to_string());
    let failures = run_document(
        "docs/demo.md",
        &commands,
        &[],
        dir.path(),
        scratch.path(),
        &mut log,
    );
    assert_eq!(failures.len(), 1, "{failures:?}");
    let message = failures[0].to_string();
    assert!(
        message.starts_with("docs/demo.md:5: `ls /no/such/dir`: exit status: "),
        "{message}"
    );
    assert!(message.contains("No such file"), "{message}");
    assert!(
        read(&scratch.path().join("out-2")).contains("hello world from /"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 5, "{lines:?}");
    // The second block starts at `dir` again, not where the first one `cd`ed into.
    let pwd = read(&scratch.path().join("out-5"));
    assert_eq!(
        Path::new(pwd.trim()).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}
