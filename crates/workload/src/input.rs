//! Reading a file a user names (a property file, a field-length histogram,
//! an experiment file, a run to import): the crate's only file-system
//! access. Only a regular file is read, so a named pipe or a device can
//! neither hang kvbench before it listens for Ctrl-C nor feed it without
//! end; at most a bound of bytes, said in the error; and a UTF-8
//! byte-order mark (what some Windows editors write first) is dropped, so
//! it never becomes part of a first key.
//!
//! A secret's file (`--password-file`) may also be a pipe: only its first
//! line is read, to a bound ([`read_first_line`]).
//!
//! `-` names standard input, read when asked for (`-P -`, `experiment run
//! -`): to the same bound, on a thread of its own, so that a stop the user
//! asks for while it waits (Ctrl-C) is seen within 100 ms (see
//! [`on_interrupt`]).

use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

/// The path that names standard input.
pub const STDIN: &str = "-";

/// Asked every 100 ms while standard input is awaited: true to give up
/// (the binary's stop flag; it may also end the process itself).
static INTERRUPTED: OnceLock<fn() -> bool> = OnceLock::new();

/// Sets how a read of standard input learns that the user wants to stop.
pub fn on_interrupt(check: fn() -> bool) {
    let _ = INTERRUPTED.set(check);
}

/// Property files and histograms (YCSB's are a few KiB).
pub const PROPERTY_FILE_LIMIT: u64 = 1 << 20;
/// Experiment files.
pub const EXPERIMENT_FILE_LIMIT: u64 = 1 << 20;
/// A run kept as JSON when it could not be saved (its series and
/// histograms included).
pub const RUN_FILE_LIMIT: u64 = 256 << 20;

const BOM: &[u8] = b"\xef\xbb\xbf";

/// The bytes of the regular file at `path`, without a leading byte-order
/// mark, if it holds at most `limit` bytes.
///
/// # Errors
/// One line naming the path: it cannot be read, is not a regular file
/// (a directory, a named pipe, a device, a socket), or is over the limit.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    if path.as_os_str() == STDIN {
        return read_stdin(limit);
    }
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown}: not a regular file ({}); kvbench reads only regular files",
            kind(&meta.file_type())
        ));
    }
    let too_big = || {
        format!(
            "{shown}: over {} bytes, the most kvbench reads from a file of this kind",
            limit
        )
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read (or a /proc file that says it is
    // empty) stops at the bound too.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    drop_bom(&mut bytes);
    Ok(bytes)
}

/// Drops a leading UTF-8 byte-order mark.
fn drop_bom(bytes: &mut Vec<u8>) {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
}

/// Standard input, to `limit` bytes (one more is an error), without a
/// leading byte-order mark; empty input is an error (nothing was piped).
fn read_stdin(limit: u64) -> Result<Vec<u8>, String> {
    let mut bytes = on_reader_thread("standard input", "before it ended", move || {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    })?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "standard input: over {limit} bytes, the most kvbench reads of this kind"
        ));
    }
    if bytes.is_empty() {
        return Err("standard input: empty (nothing was piped to kvbench)".into());
    }
    drop_bom(&mut bytes);
    Ok(bytes)
}

/// The most a secret's line may hold (a password of `--password-file`,
/// `--password-env`).
pub const SECRET_LIMIT: usize = 4096;

/// The first line of `path`, for a secret: a regular file, or a named pipe
/// (`--password-file <(pass show redis)`), read on a thread of its own to
/// its first line end or [`SECRET_LIMIT`] bytes, whichever comes first, so
/// a pipe that never writes stops at Ctrl-C (see [`on_interrupt`]) and a
/// device that never ends (`/dev/zero`) is refused at once. The line end
/// (`\n` or `\r\n`) and a leading byte-order mark are dropped.
///
/// # Errors
/// One line naming the path (never the bytes read): it cannot be read, is
/// a directory, a device or a socket, has no line end within the limit, is
/// empty, or is not UTF-8.
pub fn read_first_line(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::FileTypeExt;
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let t = meta.file_type();
    if !(t.is_file() || t.is_fifo()) {
        return Err(format!(
            "{shown}: {}; a secret is read from a regular file or a pipe",
            kind(&t)
        ));
    }
    let owned = path.to_path_buf();
    // Opened on the reader's thread: opening a pipe waits for its writer.
    let mut line = on_reader_thread(&shown, "before a line came", move || {
        let file = std::fs::File::open(owned)?;
        let mut line = Vec::new();
        std::io::BufReader::new(file.take(SECRET_LIMIT as u64 + 1))
            .read_until(b'\n', &mut line)
            .map(|_| line)
    })?;
    if line.len() > SECRET_LIMIT && !line.ends_with(b"\n") {
        return Err(format!(
            "{shown}: no line end in its first {SECRET_LIMIT} bytes, the most kvbench reads for a secret"
        ));
    }
    drop_bom(&mut line);
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    if line.is_empty() {
        return Err(format!("{shown}: the first line is empty"));
    }
    String::from_utf8(line).map_err(|_| format!("{shown}: the first line is not UTF-8 text"))
}

/// What `read` reads from `shown`, run on a thread of its own and waited
/// for while asking every 100 ms whether the user wants to stop (then
/// `shown: interrupted {until}`): a read that blocks (a pipe nobody writes
/// to) never keeps Ctrl-C from ending kvbench.
fn on_reader_thread<T: Send + 'static>(
    shown: &str,
    until: &str,
    read: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("kvbench-input".into())
        .spawn(move || {
            let _ = tx.send(read());
        })
        .map_err(|e| format!("{shown}: cannot start a reader: {e}"))?;
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(read) => return read.map_err(|e| format!("{shown}: cannot read: {e}")),
            Err(RecvTimeoutError::Timeout) => {
                if INTERRUPTED.get().is_some_and(|stopped| stopped()) {
                    return Err(format!("{shown}: interrupted {until}"));
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(format!("{shown}: the reader ended without a word"))
            }
        }
    }
}

/// How `path` is named in messages: standard input by that name.
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == STDIN {
        "standard input".to_string()
    } else {
        path.display().to_string()
    }
}

/// [`read_file`] for a file that must be UTF-8 text (TOML, a report's
/// experiment file).
///
/// # Errors
/// As [`read_file`]; also bytes that are not UTF-8.
pub fn read_utf8(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_file(path, limit)?)
        .map_err(|e| format!("{}: not UTF-8 text: {e}", shown(path)))
}

fn kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A named pipe `pipe` in `dir`.
    fn named_pipe(dir: &Path) -> std::path::PathBuf {
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        fifo
    }

    #[test]
    fn regular_files_only_bounded_and_without_a_byte_order_mark() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("a.properties");
        std::fs::write(&p, b"\xef\xbb\xbfrecordcount=5\n").expect("write");
        assert_eq!(read_file(&p, 100).expect("read"), b"recordcount=5\n");
        let e = read_file(&p, 10).expect_err("over the bound");
        assert!(e.contains("over 10 bytes"), "{e}");
        let e = read_file(dir.path(), 100).expect_err("a directory");
        assert!(e.contains("not a regular file (a directory)"), "{e}");
        let fifo = named_pipe(dir.path());
        // Returns at once: a pipe nobody writes to would block a read.
        let e = read_file(&fifo, 100).expect_err("a named pipe");
        assert!(e.contains("not a regular file (a named pipe)"), "{e}");
        let e = read_file(Path::new("/dev/zero"), 100).expect_err("a device");
        assert!(e.contains("(a character device)"), "{e}");
        let e = read_file(&dir.path().join("missing"), 100).expect_err("missing");
        assert!(e.contains("missing: cannot read: "), "{e}");
    }

    #[test]
    fn a_secret_is_the_first_line_of_a_file_or_a_pipe_to_a_bound() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("pw");
        std::fs::write(&p, b"\xef\xbb\xbfs3cret\r\nnot this\n").expect("write");
        assert_eq!(read_first_line(&p).expect("read"), "s3cret");
        std::fs::write(&p, b"no line end at all").expect("write");
        assert_eq!(read_first_line(&p).expect("read"), "no line end at all");
        std::fs::write(&p, vec![b'a'; SECRET_LIMIT + 1]).expect("write");
        let e = read_first_line(&p).expect_err("no line end within the bound");
        assert!(e.contains("no line end in its first 4096 bytes"), "{e}");
        assert!(!e.contains("aaaa"), "the bytes are never shown: {e}");
        std::fs::write(&p, b"\nsecond\n").expect("write");
        let e = read_first_line(&p).expect_err("empty first line");
        assert!(e.contains("the first line is empty"), "{e}");
        let e = read_first_line(Path::new("/dev/zero")).expect_err("a device");
        assert!(e.contains("a character device; a secret is read"), "{e}");
        let e = read_first_line(dir.path()).expect_err("a directory");
        assert!(e.contains("a directory"), "{e}");
        let fifo = named_pipe(dir.path());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"from a pipe\nrest"))
        };
        assert_eq!(read_first_line(&fifo).expect("read"), "from a pipe");
        // The writer may see the reader go after the first line.
        let _ = writer.join();
    }
}
