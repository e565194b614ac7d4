//! Atomic file replacement: the only way this crate writes files that matter.
//!
//! A snapshot or a stored refresh token is either the old file or the new one, never a torn
//! mixture: the bytes go to a temporary file in the same directory, are flushed to disk, and the
//! temporary file is renamed over the target. A crash or an error at any step leaves the target
//! untouched.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
/// file and leaves the target as it was. Staging several files and committing them only when
/// all were staged keeps a set of files all old or (barring a failed rename) all new.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    path: PathBuf,
    dir: PathBuf,
    committed: bool,
}

/// Writes `bytes` to a temporary file next to `path` and flushes it to disk.
pub fn stage(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<Staged> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    // Unique per process, thread and call, so concurrent writers never share a temporary file.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp.{}.{call}", std::process::id()));
    let tmp = dir.join(tmp_name);

    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&tmp)?;
    // From here on the temporary file is ours: `Staged`'s drop removes it on any error.
    let staged = Staged {
        tmp,
        path: path.to_path_buf(),
        dir,
        committed: false,
    };
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(staged)
}

impl Staged {
    /// The file this will replace.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the temporary file over the target and makes the rename durable.
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.tmp, &self.path)?;
        self.committed = true;
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}
