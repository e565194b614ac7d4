//! No import circle inside any crate of the workspace (ARCHITECTURE.md, "The crates, as
//! layers"): within a crate, modules form layers too, and a module that imports a module
//! which imports it back can be neither read, tested nor moved without the other.
//!
//! For every package of the workspace (the `members` of the root `Cargo.toml`) and each of its
//! crate roots (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`), the modules are found from the
//! `mod` items (`name.rs` or `name/mod.rs`, `#[path]`, inline `mod name { … }`), and a graph
//! is made of what each module's code names of another: its `use crate::…`, `use super::…`,
//! `use self::…` and `use child::…` items, and the inline `crate::x::…`, `super::x::…`,
//! `self::x::…` and `child::…` paths. A path leads to the module that defines the name, through
//! the `use` items (re-exports included) of the modules it passes. Not imports:
//!
//! * comments (doc links included) and string literals;
//! * `#[cfg(test)]` items and modules (a file's tests import the file they test);
//! * a module's use of its own descendants: they are its parts (`lib.rs` naming `inventory`'s
//!   state, which names `lib.rs`'s, is one module in two files); a child's use of its parent,
//!   like any other, is an import;
//! * a re-export (`pub use`, `pub(crate) use`) that its own module's code does not use: it is
//!   a name the module lends, as `oauth/mod.rs` lends `FileStore`, not a dependency.
//!
//! The test fails naming each circle, module by module, with the line that makes each step.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// A module: its path from the crate root (`["oauth", "store"]`; the root is `[]`).
type ModPath = Vec<String>;

// ─── Lexing ──────────────────────────────────────────────────────────────────────────────────

/// `text` with every comment and the contents of every string and character literal replaced
/// by spaces (newlines kept), so byte offsets and line numbers stay those of `text`. String
/// quotes are kept, so an attribute's string (`#[path = "…"]`) is read from `text` at the same
/// place.
fn blank(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let erase = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            erase(&mut out, i, end);
            i = end;
        } else if c == b'/' && next == Some(b'*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < b.len() && depth > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            erase(&mut out, i, j);
            i = j;
        } else if c == b'r'
            && (i == 0 || !ident(b[i - 1]) || (i >= 1 && matches!(b[i - 1], b'b' | b'c')))
            && {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                b.get(i + 1 + hashes) == Some(&b'"')
            }
        {
            // A raw string: r"…", r#"…"#, br"…".
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let start = i + 2 + hashes;
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[start..]
                .windows(closing.len())
                .position(|w| w == closing.as_slice())
                .map_or(b.len(), |p| start + p);
            erase(&mut out, start, end);
            i = end + closing.len();
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            erase(&mut out, i + 1, j);
            i = j + 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', 'é'), else a lifetime or a label.
            let end = if next == Some(b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                text[i + 1..]
                    .chars()
                    .next()
                    .map(|ch| i + 1 + ch.len_utf8())
                    .filter(|&j| b.get(j) == Some(&b'\''))
            };
            match end {
                Some(end) => {
                    erase(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(u8),
    /// A string literal: the byte range of its contents.
    Str(usize, usize),
}

/// The tokens of blanked code, each with its line (1-based).
fn tokens(code: &[u8]) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < code.len() {
        let c = code[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < code.len()
                && (code[i].is_ascii_alphanumeric() || code[i] == b'_' || code[i] >= 0x80)
            {
                i += 1;
            }
            let word = String::from_utf8_lossy(&code[start..i]).into_owned();
            // A raw identifier (`r#type`) is the identifier.
            let word = word.strip_prefix("r#").unwrap_or(&word).to_owned();
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_') {
                i += 1;
            }
        } else if c == b':' && code.get(i + 1) == Some(&b':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else if c == b'"' {
            let start = i + 1;
            let end = code[start..]
                .iter()
                .position(|&c| c == b'"')
                .map_or(code.len(), |p| start + p);
            line += code[start..end].iter().filter(|&&c| c == b'\n').count();
            out.push((Tok::Str(start, end), line));
            i = end + 1;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

// ─── Parsing a crate's modules ───────────────────────────────────────────────────────────────

/// A name a `use` item binds in a module.
#[derive(Debug)]
struct Binding {
    /// The bound name (the alias, or the last segment; `*` for a glob).
    name: String,
    /// The path, from the crate root; `None`: another crate's.
    target: Option<ModPath>,
    public: bool,
    line: usize,
}

/// A path the module's code names (outside `use` items), from the crate root.
#[derive(Debug)]
struct Reference {
    target: ModPath,
    line: usize,
}

#[derive(Debug, Default)]
struct Module {
    /// The file, relative to the workspace.
    shown: String,
    /// The module of the file: an inline module's imports are its file's.
    owner: ModPath,
    /// The file's text, for the lines quoted in a failure.
    file: PathBuf,
    children: BTreeSet<String>,
    /// Items the module defines (functions, types, constants, macros).
    defines: BTreeSet<String>,
    bindings: Vec<Binding>,
    references: Vec<Reference>,
    /// Every identifier of the module's code outside `use` items: whether a re-export is used.
    words: BTreeSet<String>,
}

/// A crate: every module from its root.
struct Crate {
    modules: BTreeMap<ModPath, Module>,
    /// Files read, for the check that every source file was reached.
    files: BTreeSet<PathBuf>,
}

/// What a `use` item's text holds: each leaf as (path, bound name).
fn use_leaves(toks: &[Tok], prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Sep => i += 1,
            Tok::Ident(w) if w == "as" => {
                if let Some(Tok::Ident(alias)) = toks.get(i + 1) {
                    out.push((path.clone(), alias.clone()));
                }
                return;
            }
            Tok::Ident(w) => {
                path.push(w.clone());
                i += 1;
            }
            Tok::Punct(b'*') => {
                out.push((path.clone(), "*".to_owned()));
                return;
            }
            Tok::Punct(b'{') => {
                // A group: split at the top-level commas up to the matching brace.
                let mut depth = 0;
                let mut start = i + 1;
                for j in i..toks.len() {
                    match toks[j] {
                        Tok::Punct(b'{') => depth += 1,
                        Tok::Punct(b'}') => {
                            depth -= 1;
                            if depth == 0 {
                                use_leaves(&toks[start..j], &path, out);
                                return;
                            }
                        }
                        Tok::Punct(b',') if depth == 1 => {
                            use_leaves(&toks[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => return,
        }
    }
    if let Some(last) = path.last() {
        let name = if last == "self" {
            // `use a::b::{self}` binds `b`.
            path.pop();
            path.last().cloned().unwrap_or_default()
        } else {
            last.clone()
        };
        if !name.is_empty() {
            out.push((path, name));
        }
    }
}

/// `path` as the module `at` names it, from the crate root; `None` for another crate's path.
fn absolute(at: &[String], path: &[String], children: &BTreeSet<String>) -> Option<ModPath> {
    let first = path.first()?;
    let mut out: ModPath;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            out = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            out = at.to_vec();
            rest = &path[1..];
        }
        "super" => {
            out = at.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                out.pop()?;
                rest = &rest[1..];
            }
        }
        child if children.contains(child) => out = at.to_vec(),
        _ => return None,
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// Keywords after which an identifier is an item the module defines.
const DEFINING: [&str; 9] = [
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "union",
    "macro_rules",
];

/// Whether the attribute tokens (inside `#[…]`) make their item test-only.
fn is_test_cfg(attr: &[Tok]) -> bool {
    let word = |w: &str| attr.iter().any(|t| *t == Tok::Ident(w.to_owned()));
    word("cfg") && word("test") && !word("not")
}

/// The index just past the bracket that closes the one at `open`.
fn matching(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, (tok, _)) in toks.iter().enumerate().skip(open) {
        match tok {
            Tok::Punct(b'{') | Tok::Punct(b'(') | Tok::Punct(b'[') => depth += 1,
            Tok::Punct(b'}') | Tok::Punct(b')') | Tok::Punct(b']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The index just past the block or item starting at `i` (skips to the `;` or the matching
/// `}` of its first `{`, whichever comes first).
fn skip_item(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct(b'{') | Tok::Punct(b'(') | Tok::Punct(b'[') => depth += 1,
            Tok::Punct(b'}') | Tok::Punct(b')') | Tok::Punct(b']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 && toks[i].0 == Tok::Punct(b'}') {
                    return i + 1;
                }
            }
            Tok::Punct(b';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The sources a crate is read from: the real files, or (in this test's own checks) a map.
trait Sources {
    fn read(&self, path: &Path) -> Option<String>;
}

struct Disk;

impl Sources for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }
}

impl Sources for HashMap<PathBuf, String> {
    fn read(&self, path: &Path) -> Option<String> {
        self.get(path).cloned()
    }
}

struct Reader<'a> {
    sources: &'a dyn Sources,
    workspace: &'a Path,
    krate: Crate,
    /// Files whose `mod` item was found but not the file (reported by the test).
    missing: Vec<String>,
}

impl Reader<'_> {
    fn shown(&self, file: &Path) -> String {
        file.strip_prefix(self.workspace)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Reads the module `at` from `file`; `dir` is where its child modules' files are.
    fn file_module(&mut self, at: ModPath, file: &Path, dir: &Path) {
        let Some(text) = self.sources.read(file) else {
            self.missing
                .push(format!("{} (module {})", self.shown(file), at.join("::")));
            return;
        };
        self.krate.files.insert(file.to_path_buf());
        let code = blank(&text);
        let toks = tokens(&code);
        let shown = self.shown(file);
        let module = self.krate.modules.entry(at.clone()).or_default();
        module.shown = shown;
        module.owner = at.clone();
        module.file = file.to_path_buf();
        self.items(&text, &toks, 0, toks.len(), &at, file, dir);
    }

    /// Reads the items of the module `at` in `toks[from..to]`.
    #[allow(clippy::too_many_arguments)]
    fn items(
        &mut self,
        text: &str,
        toks: &[(Tok, usize)],
        from: usize,
        to: usize,
        at: &ModPath,
        file: &Path,
        dir: &Path,
    ) {
        let mut test_only = false;
        let mut path_attr: Option<String> = None;
        // Whether the last tokens were `pub` or `pub(…)`.
        let mut public = false;
        let mut depth = 0usize;
        let mut i = from;
        while i < to {
            let (tok, line) = &toks[i];
            match tok {
                Tok::Punct(b'#')
                    if toks[i + 1..]
                        .iter()
                        .take(2)
                        .any(|t| t.0 == Tok::Punct(b'[')) =>
                {
                    // An attribute: `#[…]` or `#![…]`.
                    let inner = toks.get(i + 1).is_some_and(|t| t.0 == Tok::Punct(b'!'));
                    let open = i + 1 + usize::from(inner);
                    let end = matching(toks, open);
                    let attr: Vec<Tok> = toks[open..end].iter().map(|t| t.0.clone()).collect();
                    if is_test_cfg(&attr) {
                        if inner {
                            // The whole module is test-only.
                            return;
                        }
                        test_only = true;
                    }
                    if let [_, Tok::Ident(p), Tok::Punct(b'='), Tok::Str(s, e), ..] =
                        attr.as_slice()
                        && p == "path"
                    {
                        path_attr = Some(text[*s..*e].to_owned());
                    }
                    i = end;
                    continue;
                }
                _ if test_only => {
                    i = skip_item(toks, i);
                    test_only = false;
                    path_attr = None;
                    public = false;
                    continue;
                }
                Tok::Ident(w) if w == "pub" => {
                    public = true;
                    i += 1;
                    if toks.get(i).is_some_and(|t| t.0 == Tok::Punct(b'(')) {
                        i = matching(toks, i);
                    }
                    continue;
                }
                Tok::Ident(w) if w == "mod" && depth == 0 => {
                    if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                        let mut child = at.clone();
                        child.push(name.clone());
                        let module = self.krate.modules.entry(at.clone()).or_default();
                        module.children.insert(name.clone());
                        match toks.get(i + 2).map(|t| &t.0) {
                            Some(Tok::Punct(b'{')) => {
                                let end = matching(toks, i + 2);
                                let shown = self.shown(file);
                                let owner = self.krate.modules[at].owner.clone();
                                let m = self.krate.modules.entry(child.clone()).or_default();
                                m.shown = shown;
                                m.owner = owner;
                                m.file = file.to_path_buf();
                                let child_dir = match &path_attr {
                                    Some(p) => dir.join(p),
                                    None => dir.join(name),
                                };
                                self.items(text, toks, i + 3, end - 1, &child, file, &child_dir);
                                i = end;
                            }
                            _ => {
                                let (child_file, child_dir) = match &path_attr {
                                    Some(p) => {
                                        // In a file (not an inline module), `#[path]` is
                                        // relative to the file's directory.
                                        let base = if self.krate.modules[at].owner == *at {
                                            file.parent().unwrap_or(dir)
                                        } else {
                                            dir
                                        };
                                        let f = base.join(p);
                                        let d = f.with_extension("");
                                        (f, d)
                                    }
                                    None => {
                                        let flat = dir.join(format!("{name}.rs"));
                                        if self.sources.read(&flat).is_some() {
                                            (flat, dir.join(name))
                                        } else {
                                            (dir.join(name).join("mod.rs"), dir.join(name))
                                        }
                                    }
                                };
                                self.file_module(child, &child_file, &child_dir);
                                i += 3;
                            }
                        }
                    } else {
                        i += 1;
                    }
                    path_attr = None;
                    public = false;
                    continue;
                }
                Tok::Ident(w) if w == "use" && depth == 0 => {
                    let end = skip_item(toks, i);
                    let body: Vec<Tok> = toks[i + 1..end.saturating_sub(1)]
                        .iter()
                        .map(|t| t.0.clone())
                        .collect();
                    let mut leaves = Vec::new();
                    if body.first() != Some(&Tok::Sep) {
                        use_leaves(&body, &[], &mut leaves);
                    }
                    let children = self.children_of(at);
                    let module = self.krate.modules.entry(at.clone()).or_default();
                    for (path, name) in leaves {
                        module.bindings.push(Binding {
                            target: absolute(at, &path, &children),
                            name,
                            public,
                            line: *line,
                        });
                    }
                    i = end;
                    public = false;
                    path_attr = None;
                    continue;
                }
                Tok::Ident(w) if depth == 0 && DEFINING.contains(&w.as_str()) => {
                    let mut j = i + 1;
                    if toks.get(j).is_some_and(|t| t.0 == Tok::Punct(b'!')) {
                        j += 1;
                    }
                    if let Some((Tok::Ident(name), _)) = toks.get(j) {
                        let module = self.krate.modules.entry(at.clone()).or_default();
                        module.defines.insert(name.clone());
                    }
                }
                Tok::Punct(b'{') => depth += 1,
                Tok::Punct(b'}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            // Code: a path that starts here, and its words.
            if let Tok::Ident(first) = tok {
                let after_sep = i > from
                    && matches!(
                        toks[i - 1].0,
                        Tok::Sep | Tok::Punct(b'$') | Tok::Punct(b'.')
                    );
                if !after_sep && toks.get(i + 1).is_some_and(|t| t.0 == Tok::Sep) {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j).is_some_and(|t| t.0 == Tok::Sep) {
                        match toks.get(j + 1) {
                            Some((Tok::Ident(w), _)) => path.push(w.clone()),
                            _ => break,
                        }
                        j += 2;
                    }
                    let children = self.children_of(at);
                    if let Some(target) = absolute(at, &path, &children) {
                        let module = self.krate.modules.entry(at.clone()).or_default();
                        module.references.push(Reference {
                            target,
                            line: *line,
                        });
                    }
                }
                let module = self.krate.modules.entry(at.clone()).or_default();
                module.words.insert(first.clone());
            }
            if !matches!(tok, Tok::Ident(_)) || DEFINING.contains(&tok_word(tok)) {
                public = false;
                path_attr = None;
            }
            i += 1;
        }
    }

    fn children_of(&self, at: &ModPath) -> BTreeSet<String> {
        self.krate
            .modules
            .get(at)
            .map(|m| m.children.clone())
            .unwrap_or_default()
    }
}

fn tok_word(tok: &Tok) -> &str {
    match tok {
        Tok::Ident(w) => w,
        _ => "",
    }
}

/// Reads the crate whose root file is `root`.
fn read_crate(sources: &dyn Sources, workspace: &Path, root: &Path) -> (Crate, Vec<String>) {
    let mut reader = Reader {
        sources,
        workspace,
        krate: Crate {
            modules: BTreeMap::new(),
            files: BTreeSet::new(),
        },
        missing: Vec::new(),
    };
    let dir = root.parent().unwrap().to_path_buf();
    // A root's child modules sit beside it (`src/lib.rs`: `src/x.rs`), as `mod.rs`'s do.
    reader.file_module(Vec::new(), root, &dir);
    (reader.krate, reader.missing)
}

// ─── The graph ───────────────────────────────────────────────────────────────────────────────

impl Crate {
    /// The module that defines what `path` (from the crate root) names, through the `use`
    /// items of the modules on the way; `None`: another crate's.
    fn resolve(&self, path: &[String], hops: usize) -> Option<ModPath> {
        if hops > 32 {
            return None;
        }
        let mut at: ModPath = Vec::new();
        for (n, seg) in path.iter().enumerate() {
            let module = self.modules.get(&at)?;
            if module.children.contains(seg) {
                at.push(seg.clone());
                continue;
            }
            let rest = &path[n + 1..];
            if let Some(binding) = module.bindings.iter().find(|b| &b.name == seg) {
                let mut next = binding.target.clone()?;
                next.extend(rest.iter().cloned());
                return self.resolve(&next, hops + 1);
            }
            if module.defines.contains(seg) {
                return Some(at);
            }
            for glob in module.bindings.iter().filter(|b| b.name == "*") {
                let Some(target) = &glob.target else { continue };
                let Some(there) = self.resolve(target, hops + 1) else {
                    continue;
                };
                let Some(m) = self.modules.get(&there) else {
                    continue;
                };
                if m.defines.contains(seg)
                    || m.children.contains(seg)
                    || m.bindings.iter().any(|b| &b.name == seg)
                {
                    let mut next = there.clone();
                    next.extend(path[n..].iter().cloned());
                    return self.resolve(&next, hops + 1);
                }
            }
            return Some(at);
        }
        Some(at)
    }

    /// Each module's imports: (from, to) -> the first line that makes it.
    fn edges(&self) -> BTreeMap<(ModPath, ModPath), usize> {
        let mut edges = BTreeMap::new();
        let mut add = |from: &ModPath, to: Option<ModPath>, line: usize| {
            let from = &self.modules[from].owner;
            if let Some(to) = to.and_then(|to| self.modules.get(&to))
                && !to.owner.starts_with(from)
            {
                let first = edges
                    .entry((from.clone(), to.owner.clone()))
                    .or_insert(line);
                *first = (*first).min(line);
            }
        };
        for (at, module) in &self.modules {
            for b in &module.bindings {
                // A re-export its module's code does not use lends a name; it imports nothing.
                if b.public && b.name != "*" && !module.words.contains(&b.name) {
                    continue;
                }
                if let Some(target) = &b.target {
                    add(at, self.resolve(target, 0), b.line);
                }
            }
            for r in &module.references {
                add(at, self.resolve(&r.target, 0), r.line);
            }
        }
        edges
    }
}

/// Every elementary circle through an edge of a strongly connected component, shortest
/// first: for each edge (a, b) inside one, the shortest way back from b to a.
fn circles(edges: &BTreeMap<(ModPath, ModPath), usize>) -> Vec<Vec<ModPath>> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let mut found = BTreeSet::new();
    for (a, b) in edges.keys() {
        // Breadth first from b back to a.
        let mut came: HashMap<&ModPath, &ModPath> = HashMap::new();
        let mut queue = VecDeque::from([b]);
        let mut reached = b == a;
        while let Some(m) = queue.pop_front() {
            if m == a {
                reached = true;
                break;
            }
            for n in next.get(m).into_iter().flatten() {
                if *n != b && !came.contains_key(n) {
                    came.insert(n, m);
                    queue.push_back(n);
                }
            }
        }
        if !reached {
            continue;
        }
        let mut way = vec![a.clone()];
        let mut m = a;
        while m != b {
            m = came[m];
            way.push(m.clone());
        }
        way.reverse();
        // way: b … a; the circle a -> b -> … -> a, started at its smallest module.
        let mut circle: Vec<ModPath> = std::iter::once(a.clone())
            .chain(way.into_iter().take_while(|m| m != a))
            .collect();
        let min = (0..circle.len()).min_by_key(|&k| &circle[k]).unwrap();
        circle.rotate_left(min);
        found.insert(circle);
    }
    let mut found: Vec<_> = found.into_iter().collect();
    found.sort_by_key(|c| (c.len(), c.clone()));
    found
}

/// Each circle of the crate, written module by module with the line of each step.
fn describe(krate: &Crate, sources: &dyn Sources) -> Vec<String> {
    let edges = krate.edges();
    circles(&edges)
        .into_iter()
        .map(|circle| {
            let mut out = String::new();
            for (k, from) in circle.iter().enumerate() {
                let to = &circle[(k + 1) % circle.len()];
                let module = &krate.modules[from];
                let line = edges[&(from.clone(), to.clone())];
                let quoted = sources
                    .read(&module.file)
                    .and_then(|t| t.lines().nth(line - 1).map(|l| l.trim().to_owned()))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "  {} -> {}\n      ({}:{line}: {quoted})\n",
                    module.shown, krate.modules[to].shown, module.shown
                ));
            }
            out
        })
        .collect()
}

// ─── The workspace ───────────────────────────────────────────────────────────────────────────

/// The packages of the workspace: the root `Cargo.toml`'s `members` (`dir/*` expanded).
pub(crate) fn packages(workspace: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let start = manifest
        .find("members = [")
        .expect("the workspace's members");
    let list = &manifest[start + "members = [".len()..];
    let list = &list[..list.find(']').unwrap()];
    let mut out = Vec::new();
    for member in list.split(',').map(|m| m.trim().trim_matches('"')) {
        if member.is_empty() {
            continue;
        }
        if let Some(dir) = member.strip_suffix("/*") {
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect();
            dirs.sort();
            out.extend(dirs);
        } else {
            out.push(workspace.join(member));
        }
    }
    out
}

/// A package's crate roots below `src/`.
fn roots(package: &Path) -> Vec<PathBuf> {
    let src = package.join("src");
    let mut out: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = bins
            .map(|e| e.unwrap().path())
            .filter_map(|p| {
                if p.extension().is_some_and(|e| e == "rs") {
                    Some(p)
                } else {
                    Some(p.join("main.rs")).filter(|m| m.is_file())
                }
            })
            .collect();
        bins.sort();
        out.extend(bins);
    }
    out
}

fn rust_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
}

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let packages = packages(workspace);
    assert!(
        packages.len() >= 15,
        "the workspace's packages were found: {packages:?}"
    );
    let mut failures = Vec::new();
    let mut unread = Vec::new();
    let mut modules = 0;
    for package in &packages {
        let mut reached = BTreeSet::new();
        let mut seen = BTreeSet::new();
        for root in roots(package) {
            let (krate, missing) = read_crate(&Disk, workspace, &root);
            unread.extend(missing);
            modules += krate.modules.len();
            reached.extend(krate.files.iter().cloned());
            for circle in describe(&krate, &Disk) {
                // A file shared by two roots (`src/bin/shared/`) shows its circle once.
                if seen.insert(circle.clone()) {
                    failures.push(circle);
                }
            }
        }
        let mut all = BTreeSet::new();
        rust_files(&package.join("src"), &mut all);
        for file in all.difference(&reached) {
            unread.push(format!("{} (no `mod` item reaches it)", file.display()));
        }
    }
    assert!(modules > 150, "the modules were found: {modules}");
    assert!(
        unread.is_empty(),
        "files the check did not read:\n{}",
        unread.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} import circle(s) between modules (move what both sides share into a module \
         below them both):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ─── The check's own checks, on small crates ─────────────────────────────────────────────────

fn small_crate(files: &[(&str, &str)]) -> Vec<String> {
    let root = Path::new("/ws/src");
    let sources: HashMap<PathBuf, String> = files
        .iter()
        .map(|(name, text)| (root.join(name), (*text).to_owned()))
        .collect();
    let (krate, missing) = read_crate(&sources, Path::new("/ws"), &root.join("lib.rs"));
    assert!(missing.is_empty(), "{missing:?}");
    describe(&krate, &sources)
}

#[test]
fn a_circle_through_super_and_a_facade_re_export_is_named_module_by_module() {
    let found = small_crate(&[
        ("lib.rs", "mod oauth;\nmod core;\n"),
        (
            "oauth/mod.rs",
            "mod error;\nmod redact;\npub use error::OAuthError;\npub(crate) use redact::Redactor;\n",
        ),
        (
            "oauth/error.rs",
            "use super::Redactor;\npub const MAX: usize = 1;\npub struct OAuthError;\n",
        ),
        (
            "oauth/redact.rs",
            "pub struct Redactor;\nfn cut() -> usize {\n    super::error::MAX\n}\n",
        ),
        (
            "core.rs",
            "/// Not an import: [`crate::oauth::OAuthError`].\nconst X: &str = \"crate::oauth::OAuthError\";\n",
        ),
    ]);
    assert_eq!(
        found,
        [
            "  src/oauth/error.rs -> src/oauth/redact.rs\n      (src/oauth/error.rs:1: use super::Redactor;)\n  \
          src/oauth/redact.rs -> src/oauth/error.rs\n      (src/oauth/redact.rs:3: super::error::MAX)\n"
        ],
    );
}

#[test]
fn re_exports_tests_comments_and_other_crates_make_no_circle() {
    let found = small_crate(&[
        (
            "lib.rs",
            "pub mod oauth;\nmod core;\npub use oauth::Token;\npub use core::Cache;\n",
        ),
        (
            "oauth/mod.rs",
            "mod store;\npub use store::Token;\npub use crate::core::Cache;\n\
             pub fn lock() {}\n",
        ),
        (
            "oauth/store.rs",
            "use crate::Cache;\npub struct Token;\nfn f() { super::lock(); core::mem::drop(1); }\n",
        ),
        (
            "core.rs",
            "use crate::oauth::Token as Tok;\n#[path = \"cache.rs\"]\nmod cache;\npub use cache::Cache;\n\
             fn g(_: Tok) {}\n\
             #[cfg(test)]\nmod tests {\n    use crate::oauth::lock;\n    use crate::Cache;\n}\n\
             // crate::oauth::lock\n/* crate::oauth::lock */\n",
        ),
        ("cache.rs", "pub struct Cache;\nconst C: char = '{';\n"),
    ]);
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn a_re_export_its_module_uses_and_an_inline_module_take_part_in_a_circle() {
    let found = small_crate(&[
        ("lib.rs", "mod aio;\n"),
        ("aio/mod.rs", "mod oauth;\nmod store;\n"),
        (
            "aio/oauth.rs",
            "pub use super::store::Store;\npub type Boxed = ();\nfn f(_: &dyn Store) {}\n",
        ),
        (
            "aio/store.rs",
            "pub trait Store {}\nmod inner {\n    fn g(_: super::super::oauth::Boxed) {}\n}\n",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("src/aio/oauth.rs -> src/aio/store.rs")
            && found[0].contains("src/aio/store.rs -> src/aio/oauth.rs"),
        "{}",
        found[0]
    );
}
