//! Atomic file replacement: the only way this crate writes files that matter.
//!
//! A snapshot or a stored refresh token is either the old file or the new one, never a torn
//! mixture: the bytes go to a temporary file in the same directory, are flushed to disk, and the
//! temporary file is renamed over the target. A crash or an error at any step leaves the target
//! untouched. A set of files is replaced all or nothing with [`commit_all`].
//!
//! Temporary files are named `.NAME.tmp.` plus twelve random characters, created exclusively
//! and retried on a clash, so a file left by a crashed run never blocks a later write,
//! whatever its process id, and another process cannot practically predict a name. Such
//! leftovers are removed by the next write of the same target once they are older than
//! [`STALE_AFTER`]; see there why that cannot remove a concurrent writer's live file. A
//! writer that holds a lock every writer of a directory takes ([`lock_dir`]) may remove them
//! at once ([`remove_leftovers`]), as the snapshot commit does.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How old a leftover temporary file of a target must be before a write of that target
/// removes it.
///
/// A live temporary file exists only between staging and committing, and its modification
/// time is that of its last write. [`stage`] writes its bytes at once and its callers commit
/// within seconds; a streaming writer ([`stage_file`], a download) writes as data arrives.
/// Ten minutes without a write is far beyond either, so only leftovers of crashed or killed
/// runs qualify. Were a writer ever stalled that long (a stopped process, a download that
/// received nothing for ten minutes), removing its file makes its own rename fail with an
/// error: the target is never torn, it keeps its previous content.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Replaces `path` with `bytes` atomically (temporary file, fsync, rename, fsync of the directory).
///
/// On Unix the new file gets the permission bits `mode` (for example `0o600` for secrets);
/// `None` keeps the default of the process umask. The temporary file is removed when any step
/// fails, so an error leaves the directory as it was.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("state.json");
/// taxonomy_tree::atomic::write_atomic(&path, b"{}", None).unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"{}");
/// ```
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    stage(path, bytes, mode)?.commit()
}

/// New content for a file, written and flushed to a temporary file beside it, not yet in
/// place. [`Staged::commit`] renames it over the target; dropping it removes the temporary
/// file and leaves the target as it was. [`commit_all`] commits several, all or nothing.
#[derive(Debug)]
pub struct Staged {
    tmp: TempPath,
    path: PathBuf,
    dir: PathBuf,
}

/// A temporary file that is removed when this is dropped, unless [`TempPath::persist`] renamed
/// it into place first.
#[derive(Debug)]
struct TempPath {
    path: PathBuf,
    /// Set once the file was renamed into place: nothing left to remove.
    persisted: bool,
}

/// How many random names [`TempPath::create`] tries before it gives up.
const NAME_ATTEMPTS: usize = 64;

/// How many random characters follow a temporary file's prefix: 62^12, about 71 bits.
const RANDOM_CHARS: usize = 12;

impl TempPath {
    /// Creates a new file in `dir` named `prefix` plus [`RANDOM_CHARS`] random characters,
    /// with `create`, which must fail with `AlreadyExists` when the name is taken (as
    /// `create_new` and `hard_link` do); another name is then tried.
    fn create<T>(
        dir: &Path,
        prefix: &OsStr,
        mut create: impl FnMut(&Path) -> io::Result<T>,
    ) -> io::Result<(TempPath, T)> {
        for _ in 0..NAME_ATTEMPTS {
            let mut name = prefix.to_os_string();
            name.push(random_chars());
            let path = dir.join(name);
            match create(&path) {
                Ok(made) => {
                    let tmp = TempPath {
                        path,
                        persisted: false,
                    };
                    return Ok((tmp, made));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "no free temporary file name in {} after {NAME_ATTEMPTS} attempts",
                dir.display()
            ),
        ))
    }

    /// Renames the temporary file to `to` (replacing it); on failure the temporary file stays
    /// ours and is removed on drop.
    fn persist(mut self, to: &Path) -> io::Result<()> {
        fs::rename(&self.path, to)?;
        self.persisted = true;
        Ok(())
    }

    /// Leaves the file on disk for good and returns its path.
    fn keep(mut self) -> PathBuf {
        self.persisted = true;
        std::mem::take(&mut self.path)
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if !self.persisted {
            // Best effort: a leftover is for `remove_stale` to find later.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// [`RANDOM_CHARS`] characters from `[0-9A-Za-z]` that another process cannot practically
/// predict: SipHash of the time and process id under the keys of a new std `RandomState`,
/// which std draws from the operating system's randomness (today: once per thread, then
/// stepped per instance). Exclusive creation, not the randomness, is what keeps two writers
/// apart.
fn random_chars() -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let keyed = RandomState::new();
    let mut bits = [
        keyed.hash_one((now, std::process::id(), 0u8)),
        keyed.hash_one((now, std::process::id(), 1u8)),
    ];
    (0..RANDOM_CHARS)
        .map(|i| {
            let word = &mut bits[i % 2];
            let c = ALPHABET[(*word % 62) as usize];
            *word /= 62;
            char::from(c)
        })
        .collect()
}

/// The prefix of every temporary file of the target named `file_name`: `.NAME.tmp.`.
fn temp_prefix(file_name: &OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(file_name);
    prefix.push(".tmp.");
    prefix
}

/// Removes the temporary files of the target named `file_name` in `dir` that are older than
/// [`STALE_AFTER`]: leftovers of crashed runs. Best effort: a file that cannot be inspected
/// or removed is left alone.
fn remove_stale(dir: &Path, file_name: &OsStr) {
    remove_older(dir, file_name, STALE_AFTER);
}

/// Removes the temporary files (staged and kept ones) that writes of `target` left behind:
/// those older than `older_than`, or all of them when it is zero, which is only safe while
/// the caller holds a lock that every writer of `target` takes (a live writer's file would
/// go, and its commit fail). Best effort, like the removal of stale files before each write.
pub fn remove_leftovers(target: &Path, older_than: Duration) {
    let (Some(dir), Some(file_name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    remove_older(dir, file_name, older_than);
}

/// An exclusive lock on a directory (on Unix, `flock` of the directory itself, so nothing is
/// added to it), released when dropped or when the process dies, however it dies. Where
/// directories cannot be locked (not Unix, or a file system without `flock`) it holds
/// nothing: see [`DirLock::is_held`].
#[derive(Debug)]
pub struct DirLock {
    held: Option<File>,
}

impl DirLock {
    /// Whether the lock is held, so that no other writer that takes it is at work in the
    /// directory.
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }
}

/// Takes the exclusive lock of `dir`, waiting while another process or thread holds it. A
/// directory that cannot be opened is an error; one that cannot be locked gives a lock that
/// holds nothing.
pub fn lock_dir(dir: &Path) -> io::Result<DirLock> {
    #[cfg(unix)]
    {
        let file = File::open(dir)?;
        Ok(DirLock {
            held: file.lock().is_ok().then_some(file),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(DirLock { held: None })
    }
}

/// Removes the temporary files of `file_name` in `dir` older than `older_than` (all of them
/// when it is zero).
fn remove_older(dir: &Path, file_name: &OsStr, older_than: Duration) {
    let prefix = temp_prefix(file_name);
    let Some(prefix) = prefix.to_str() else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(prefix)) {
            continue;
        }
        let stale = entry
            .metadata()
            .ok()
            .filter(fs::Metadata::is_file)
            .is_some_and(|m| {
                older_than.is_zero()
                    || m.modified()
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > older_than)
            });
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `bytes` to a temporary file next to `path` and flushes it to disk.
pub fn stage(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<Staged> {
    let mut staging = stage_file(path, mode)?;
    staging.write_all(bytes)?;
    staging.finish()
}

/// New content for a file that is still being written: a temporary file beside `path`, named
/// and created as [`stage`]'s are (and old leftovers of `path` removed first), that takes the
/// bytes through [`Write`] as they come, for content that streams in rather than sits in
/// memory (a download). [`Staging::finish`] flushes it to disk and gives the [`Staged`] file
/// to commit; dropping it before that removes the temporary file.
///
/// ```
/// use std::io::Write;
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("download.gz");
/// let mut staging = taxonomy_tree::atomic::stage_file(&path, None).unwrap();
/// staging.write_all(b"first part, ").unwrap();
/// staging.write_all(b"second part").unwrap();
/// assert!(!path.exists(), "nothing in place before the commit");
/// staging.finish().unwrap().commit().unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"first part, second part");
/// ```
pub fn stage_file(path: &Path, mode: Option<u32>) -> io::Result<Staging> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    remove_stale(&dir, file_name);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // 0o666 is what `File::create` asks for; the umask applies to both.
        options.mode(mode.unwrap_or(0o666));
    }
    #[cfg(not(unix))]
    let _ = mode;
    // From here on the temporary file is ours: `TempPath`'s drop removes it on any error.
    let (tmp, file) = TempPath::create(&dir, &temp_prefix(file_name), |candidate| {
        options.open(candidate)
    })?;
    let staged = Staged {
        tmp,
        path: path.to_path_buf(),
        dir,
    };
    Ok(Staging { staged, file })
}

/// A temporary file being written; see [`stage_file`].
#[derive(Debug)]
pub struct Staging {
    staged: Staged,
    file: File,
}

impl Staging {
    /// How many bytes were written so far.
    pub fn bytes_written(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Flushes the content to disk: ready to [`commit`](Staged::commit).
    pub fn finish(self) -> io::Result<Staged> {
        self.file.sync_all()?;
        Ok(self.staged)
    }
}

impl Write for Staging {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Staged {
    /// The file this will replace.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the temporary file over the target and makes the rename durable.
    pub fn commit(self) -> io::Result<()> {
        commit_all(vec![self]).map_err(|e| e.source)
    }
}

/// Why [`commit_all`] failed; every target is back to its previous content.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}{}", path.display(), not_restored_text(not_restored))]
pub struct CommitError {
    /// The target that could not be replaced.
    pub path: PathBuf,
    /// The I/O error.
    pub source: io::Error,
    /// Targets already replaced whose previous content could not be put back (rare: the
    /// rename back failed too), each with the file that still holds that content.
    pub not_restored: Vec<(PathBuf, PathBuf)>,
}

impl CommitError {
    fn new(path: PathBuf, source: io::Error) -> CommitError {
        CommitError {
            path,
            source,
            not_restored: Vec::new(),
        }
    }
}

/// The part of [`CommitError`]'s message about targets that could not be put back.
fn not_restored_text(not_restored: &[(PathBuf, PathBuf)]) -> String {
    not_restored
        .iter()
        .map(|(target, kept)| {
            format!(
                "; {} could not be put back: its previous content is in {}",
                target.display(),
                kept.display()
            )
        })
        .collect()
}

/// What a target held before [`commit_all`] replaced it, until every target is replaced.
enum Previous {
    /// The target did not exist: rolling back removes the new file.
    Absent,
    /// A second name (hard link or copy) of the previous file: rolling back renames it back.
    Kept(TempPath),
}

/// Keeps the previous content of `target` under a temporary name beside it, without
/// touching the target itself: a hard link, or a flushed copy where links are not supported.
fn keep_previous(staged: &Staged) -> io::Result<Previous> {
    match fs::symlink_metadata(&staged.path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Previous::Absent),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let file_name = staged.path.file_name().unwrap_or_default();
    let mut prefix = temp_prefix(file_name);
    prefix.push("old.");
    let (kept, ()) = TempPath::create(&staged.dir, &prefix, |backup| {
        fs::hard_link(&staged.path, backup).or_else(|link_error| {
            if link_error.kind() == io::ErrorKind::AlreadyExists {
                return Err(link_error);
            }
            copy_to_new(&staged.path, backup)
        })
    })?;
    Ok(Previous::Kept(kept))
}

/// Copies `from` to `to`, which must not exist yet (`AlreadyExists` otherwise, so that
/// [`TempPath::create`] tries another name), with `from`'s permissions, flushed to disk. A
/// copy that fails half-way is removed.
fn copy_to_new(from: &Path, to: &Path) -> io::Result<()> {
    let mut source = File::open(from)?;
    let mut copy = OpenOptions::new().write(true).create_new(true).open(to)?;
    let copied = (|| {
        copy.set_permissions(source.metadata()?.permissions())?;
        io::copy(&mut source, &mut copy)?;
        copy.sync_all()
    })();
    if copied.is_err() {
        let _ = fs::remove_file(to);
    }
    copied
}

/// Renames every staged file over its target, all or nothing: before a target is replaced,
/// its previous file is kept under a second name, and when a later rename fails, every target
/// already replaced gets its previous file back (or is removed, if it did not exist) before
/// the error is returned. The kept files are removed once every rename succeeded. (The last
/// target needs none: a failed last rename changed nothing.)
///
/// A crash in the middle can still leave some targets new and some old (each one whole), in
/// the order of `staged`; the kept files are then removed by a later write, after
/// [`STALE_AFTER`] (or at once by [`remove_leftovers`] under a lock).
pub fn commit_all(staged: Vec<Staged>) -> Result<(), CommitError> {
    commit_all_observed(staged, |_| {})
}

/// [`commit_all`], calling `at_rename(n)` when `n` renames are done: before each rename, and
/// once more after the last one (before the kept files are removed). Not called when there
/// is nothing to commit. For a test hook that stops the process there (see
/// `pipeline::STOP_AFTER_RENAMES_ENV`).
pub fn commit_all_observed(
    staged: Vec<Staged>,
    mut at_rename: impl FnMut(usize),
) -> Result<(), CommitError> {
    let mut done: Vec<(PathBuf, PathBuf, Previous)> = Vec::with_capacity(staged.len());
    let mut failure = None;
    let count = staged.len();
    for (i, s) in staged.into_iter().enumerate() {
        at_rename(i);
        // The last rename needs no way back: if it fails, it changed nothing.
        let previous = if i + 1 == count {
            Ok(Previous::Absent)
        } else {
            keep_previous(&s)
        };
        let previous = match previous {
            Ok(p) => p,
            Err(source) => {
                failure = Some(CommitError::new(s.path.clone(), source));
                break;
            }
        };
        let Staged { tmp, path, dir } = s;
        match tmp.persist(&path) {
            Ok(()) => done.push((path, dir, previous)),
            Err(source) => {
                failure = Some(CommitError::new(path, source));
                break;
            }
        }
    }
    if failure.is_none() && count > 0 {
        at_rename(count);
    }
    if let Some(failure) = &mut failure {
        for (path, _, previous) in done.iter_mut().rev() {
            match std::mem::replace(previous, Previous::Absent) {
                Previous::Absent => {
                    // Best effort: the new file is whole, and the error says what failed.
                    let _ = fs::remove_file(path);
                }
                Previous::Kept(kept) => {
                    if fs::rename(&kept.path, &*path).is_ok() {
                        kept.keep();
                    } else {
                        // The only copy of the previous content: it stays, and the error
                        // says where.
                        failure.not_restored.push((path.clone(), kept.keep()));
                    }
                }
            }
        }
    }
    let mut dirs: Vec<&PathBuf> = done.iter().map(|(_, dir, _)| dir).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    match failure {
        Some(e) => Err(e),
        // Dropping `done` removes the kept previous files.
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_random_alphanumerics() {
        let names: std::collections::HashSet<String> = (0..1000).map(|_| random_chars()).collect();
        assert_eq!(names.len(), 1000, "no two of 1,000 names alike");
        for name in &names {
            assert_eq!(name.len(), RANDOM_CHARS);
            assert!(name.bytes().all(|b| b.is_ascii_alphanumeric()), "{name}");
        }
    }

    #[test]
    fn the_copy_of_a_previous_file_is_new_whole_and_keeps_the_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("token.json");
        fs::write(&from, b"secret").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&from, fs::Permissions::from_mode(0o600)).unwrap();
        }
        let to = dir.path().join(".token.json.tmp.old.x");
        copy_to_new(&from, &to).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"secret");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&to).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        let taken = copy_to_new(&from, &to).unwrap_err();
        assert_eq!(
            taken.kind(),
            io::ErrorKind::AlreadyExists,
            "an existing file is not truncated"
        );
        assert_eq!(fs::read(&to).unwrap(), b"secret");
        let missing = dir.path().join("missing");
        assert!(copy_to_new(&missing, &dir.path().join("y")).is_err());
        assert!(
            !dir.path().join("y").exists(),
            "nothing is left by a failed copy"
        );
    }

    #[test]
    fn a_staging_file_dropped_before_its_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("download.gz");
        fs::write(&path, b"old").unwrap();
        let mut staging = stage_file(&path, None).unwrap();
        staging.write_all(b"half of it").unwrap();
        assert_eq!(staging.bytes_written().unwrap(), 10);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
        drop(staging);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_taken_name_is_retried_and_a_dropped_file_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut attempts = 0;
        let (tmp, ()) = TempPath::create(dir.path(), OsStr::new(".x.tmp."), |path| {
            attempts += 1;
            if attempts < 3 {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            fs::write(path, b"x")
        })
        .unwrap();
        assert_eq!(attempts, 3);
        let path = tmp.path.clone();
        assert!(path.exists());
        drop(tmp);
        assert!(!path.exists(), "dropping removes the temporary file");

        let taken = TempPath::create(dir.path(), OsStr::new(".x.tmp."), |_| {
            Err::<(), _>(io::ErrorKind::AlreadyExists.into())
        })
        .unwrap_err();
        assert!(
            taken.to_string().contains("no free temporary file name"),
            "{taken}"
        );
        let other = TempPath::create(dir.path(), OsStr::new(".x.tmp."), |_| {
            Err::<(), _>(io::ErrorKind::PermissionDenied.into())
        })
        .unwrap_err();
        assert_eq!(
            other.kind(),
            io::ErrorKind::PermissionDenied,
            "other errors are not retried"
        );
    }
}
