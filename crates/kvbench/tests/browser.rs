//! A harness that loads an HTML file in a real headless Chromium and reports
//! what a test asserts on: console errors, every network request the page
//! made, element counts for CSS selectors, and a screenshot.
//!
//! ```ignore
//! let page = browser::check_page(&report, &["svg", "figure > img"], Some(&png));
//! assert!(page.console_errors.is_empty(), "{:?}", page.console_errors);
//! assert!(page.network_requests.is_empty(), "{:?}", page.network_requests);
//! assert_eq!(page.counts[0], ("svg".to_string(), 4));
//! ```
//!
//! How it works: [`check_page`] starts `chromedriver` (from the Debian
//! package `chromium-driver`, installed by `scripts/setup`) on a free
//! loopback port, as a child in its own process group whose parent-death
//! signal is SIGKILL; a guard kills that whole group (chromedriver and every
//! Chromium process it started) when `check_page` returns or panics. It
//! drives Chromium through the W3C WebDriver protocol with the `fantoccini`
//! client on a current-thread tokio runtime; the one command the client has
//! no method for, chromedriver's legacy log endpoint, is sent as a custom
//! command (`BrowserLog`). (fantoccini, rather than a hand-written client
//! over a blocking HTTP crate, because it does the session handshake, error
//! decoding and screenshot decoding for us and the workspace already uses
//! tokio; its `webdriver` dependency makes it a large dev-dependency tree.)
//!
//! Nothing leaves the machine: Chromium is told to send every http, https
//! and ws request, loopback ones included (`--proxy-bypass-list=<-loopback>`),
//! to a proxy the harness runs on 127.0.0.1. The proxy records each
//! connection and its first request line (`GET http://… HTTP/1.1`, or
//! `CONNECT host:443 HTTP/1.1` for TLS) and answers 403 without ever
//! connecting anywhere. What could go around a proxy is shut off too: every
//! host name resolves to nothing (`--host-resolver-rules`), so no DNS query
//! is sent; WebRTC may not use UDP that is not proxied; QUIC is off. Chromium
//! still makes a few requests of its own, whatever the page (sign-in,
//! component updater, network time, search-engine preconnect): they go to
//! the proxy too, are refused, and are left out of the result (see
//! `CHROMIUM_OWN`; printed to stderr).
//!
//! Browser tests load the machine, so [`check_page`] holds
//! [`util::timing_sensitive`] while Chromium runs: never call it while
//! already holding that lock (it is not reentrant).

use crate::util;
use fantoccini::wd::WebDriverCompatibleCommand;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What [`check_page`] saw.
#[derive(Debug)]
pub struct PageCheck {
    /// The browser log's SEVERE entries, as Chromium words them: console
    /// errors (`file:///…/report.html 12:9 "boom"`), uncaught exceptions
    /// (`… Uncaught ReferenceError: f is not defined`), and failed loads
    /// (`http://x/y.png - Failed to load resource: net::ERR_…`).
    pub console_errors: Vec<String>,
    /// Every request other than the page itself, from two independent
    /// sources: `resource <url>` for each Resource Timing entry of the page,
    /// and `proxy <request line>` for each connection the harness's proxy
    /// received (`proxy CONNECT example.com:443 HTTP/1.1`). Empty for a
    /// self-contained page.
    pub network_requests: Vec<String>,
    /// Each selector passed to [`check_page`], in order, with the number of
    /// elements `document.querySelectorAll` finds for it.
    pub counts: Vec<(String, usize)>,
    /// A PNG of the viewport: [`WINDOW`] pixels, or for a page taller than
    /// that, as tall as the page (at most [`MAX_HEIGHT`]); the window is
    /// grown after the page was examined, just before the screenshot.
    pub screenshot_png: Vec<u8>,
}

/// The viewport the page is laid out in, in CSS pixels (device scale factor
/// 1, so also the screenshot's size for a page that fits): wide enough for a
/// desktop layout, tall enough to hold a few figures.
pub const WINDOW: (u32, u32) = (1280, 2000);

/// The tallest screenshot: a longer page is cut off there.
pub const MAX_HEIGHT: u32 = 12_000;

/// What `scripts/setup` installs: the Debian launcher, the browser binary it
/// runs, and chromedriver. chromedriver starts the binary itself: the
/// launcher (a shell script) sources /etc/chromium.d, which adds Google API
/// keys and `--enable-remote-extensions`, and on a machine where findmnt
/// lists /dev/shm twice it prints a shell error on every start.
const CHROMIUM_LAUNCHER: &str = "/usr/bin/chromium";
const CHROMIUM: &str = "/usr/lib/chromium/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Requests Chromium 156 makes on its own, whatever the page, that neither
/// the switches in `chromium_args` nor others tried stop
/// (`--disable-features=PreconnectToSearch,PreconnectToSearchNonGoogle,`
/// `OptimizationGuideOnDeviceModel,...`; the preferences `signin.allowed`,
/// `net.network_prediction_options`, `default_search_provider.enabled`).
/// They reach the proxy like the page's own and are refused like them; the
/// proxy's list leaves out request lines that start with one of these and
/// prints them to stderr instead. A page's own request to one of these
/// hosts still shows as a Resource Timing entry. A newer Chromium may add
/// others: they then show up as `proxy …` entries for every page.
const CHROMIUM_OWN: &[(&str, &str)] = &[
    // Sign-in: the cookie manager's ListAccounts, retried with backoff.
    ("CONNECT accounts.google.com:443 ", "sign-in (ListAccounts)"),
    // The component updater's on-demand install of the Optimization Guide
    // model manifest (appid ceofaddefefcbblgcgnibnonglccbfja), over https
    // and then over http; --disable-component-update does not stop it.
    ("CONNECT update.googleapis.com:443 ", "component updater"),
    (
        "POST http://update.googleapis.com/service/update2/json?",
        "component updater",
    ),
    // Network time (--disable-features=NetworkTimeServiceQuerying stops it).
    (
        "GET http://clients2.google.com/time/1/current?",
        "network time",
    ),
    // Preconnects to the default search engine (Debian's Chromium:
    // DuckDuckGo); seen with chromedriver, not with Chromium started alone.
    (
        "CONNECT start.duckduckgo.com:443 ",
        "search engine preconnect",
    ),
    // A socket to the proxy closed (or idle for 2 s) without a byte: a
    // preconnect Chromium opened and never used. It names no host and
    // carries no request, so nothing could have left the machine; a page's
    // own request is in its Resource Timing entries anyway.
    (NO_REQUEST_LINE, "unused preconnect"),
];

const NO_REQUEST_LINE: &str = "(a connection that sent no request line)";

/// Loads `html` (a file path, opened as file://) in headless Chromium driven
/// through chromedriver, waits for it to finish loading, and returns what the
/// test asserts on. `selectors` are CSS selectors to count.
///
/// "Finished" is the load event (WebDriver's normal page-load strategy)
/// followed by a quiet period: the Resource Timing entries and the proxy's
/// connections (less Chromium's own) are polled every 100 ms until neither
/// has changed for 300 ms (at most 5 s), so requests that scripts start
/// after load are seen.
/// The screenshot is also written to `screenshot_to` when given.
///
/// Panics with a one-line message when chromium or chromedriver is missing
/// (run `scripts/setup`), and with chromedriver's log when the browser fails.
pub fn check_page(html: &Path, selectors: &[&str], screenshot_to: Option<&Path>) -> PageCheck {
    for path in [CHROMIUM_LAUNCHER, CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(path).exists(),
            "{path} is missing: the browser tests need chromium and chromedriver; run scripts/setup"
        );
    }
    let html =
        std::fs::canonicalize(html).unwrap_or_else(|e| panic!("page {}: {e}", html.display()));
    let url = file_url(&html);

    let _machine = util::timing_sensitive();
    let scratch = tempfile::tempdir().expect("temp dir");
    let proxy = Proxy::start();
    let driver = Driver::start(scratch.path());

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let fail = |what: &str, e: &dyn std::fmt::Display| -> ! {
        panic!("browser: {what}: {e}\n{}", driver.log_tail())
    };
    let check = runtime.block_on(async {
        let mut capabilities = fantoccini::wd::Capabilities::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": chromium_args(proxy.port, &scratch.path().join("profile")),
            }),
        );
        capabilities.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        capabilities.insert("pageLoadStrategy".into(), json!("normal"));
        capabilities.insert(
            "timeouts".into(),
            json!({"pageLoad": 30_000, "script": 10_000}),
        );
        let client = fantoccini::ClientBuilder::new(
            hyper_util::client::legacy::connect::HttpConnector::new(),
        )
        .capabilities(capabilities)
        .connect(&driver.url())
        .await
        .unwrap_or_else(|e| fail("starting a session", &e));

        set_viewport(&client, WINDOW.0, WINDOW.1)
            .await
            .unwrap_or_else(|e| fail("sizing the window", &e));

        client
            .goto(&url)
            .await
            .unwrap_or_else(|e| fail(&format!("loading {url}"), &e));

        // The quiet period: requests a script starts after load.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut last = (usize::MAX, usize::MAX);
        let mut quiet_since = Instant::now();
        let resources = loop {
            let resources = strings(
                client
                    .execute(
                        "return performance.getEntriesByType('resource').map(e => e.name);",
                        vec![],
                    )
                    .await
                    .unwrap_or_else(|e| fail("reading Resource Timing", &e)),
            );
            let now = (resources.len(), split_own(&proxy.seen()).0.len());
            if now != last {
                last = now;
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= Duration::from_millis(300)
                || Instant::now() >= deadline
            {
                break resources;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };

        let found = client
            .execute(
                "return arguments[0].map(s => document.querySelectorAll(s).length);",
                vec![json!(selectors)],
            )
            .await
            .unwrap_or_else(|e| fail("counting selectors", &e));
        let counts = selectors
            .iter()
            .zip(found.as_array().expect("an array of counts"))
            .map(|(s, n)| (s.to_string(), n.as_u64().expect("a count") as usize))
            .collect();

        // Full-page-ish: a page taller than the window gets a taller window.
        let page_height = client
            .execute(
                "return Math.ceil(document.documentElement.scrollHeight);",
                vec![],
            )
            .await
            .unwrap_or_else(|e| fail("measuring the page", &e))
            .as_u64()
            .unwrap_or(0) as u32;
        if page_height > WINDOW.1 {
            set_viewport(&client, WINDOW.0, page_height.min(MAX_HEIGHT))
                .await
                .unwrap_or_else(|e| fail("growing the window", &e));
        }
        let screenshot_png = client
            .screenshot()
            .await
            .unwrap_or_else(|e| fail("taking a screenshot", &e));

        let log = client
            .issue_cmd(BrowserLog)
            .await
            .unwrap_or_else(|e| fail("reading the browser log", &e));
        let console_errors = log
            .as_array()
            .expect("the browser log is an array")
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| entry["message"].as_str().unwrap_or_default().to_string())
            .collect();

        let _ = client.close().await;

        let mut network_requests: Vec<String> = resources
            .into_iter()
            .map(|r| format!("resource {r}"))
            .collect();
        let (page, own) = split_own(&proxy.seen());
        for line in own {
            eprintln!("browser: left out Chromium's own request, {line}");
        }
        network_requests.extend(page.into_iter().map(|line| format!("proxy {line}")));
        PageCheck {
            console_errors,
            network_requests,
            counts,
            screenshot_png,
        }
    });
    if let Some(path) = screenshot_to {
        std::fs::write(path, &check.screenshot_png)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
    check
}

/// The proxy's request lines split into the page's and Chromium's own
/// ([`CHROMIUM_OWN`], each with what sends it).
fn split_own(lines: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut page, mut own) = (Vec::new(), Vec::new());
    for line in lines {
        match CHROMIUM_OWN
            .iter()
            .find(|(start, _)| line.starts_with(start))
        {
            Some((_, what)) => own.push(format!("{what}: {line}")),
            None => page.push(line.clone()),
        }
    }
    (page, own)
}

/// Resizes the window until the viewport (`innerWidth` x `innerHeight`) is
/// `width` x `height` CSS pixels: in headless Chromium the window keeps room
/// for a (hidden) browser UI, so the window is made larger by that much.
async fn set_viewport(
    client: &fantoccini::Client,
    width: u32,
    height: u32,
) -> Result<(), fantoccini::error::CmdError> {
    for _ in 0..3 {
        let (outer_width, outer_height) = client.get_window_size().await?;
        let inner = client
            .execute("return [window.innerWidth, window.innerHeight];", vec![])
            .await?;
        let inner_width = inner[0].as_u64().unwrap_or(0);
        let inner_height = inner[1].as_u64().unwrap_or(0);
        if (inner_width, inner_height) == (u64::from(width), u64::from(height)) {
            break;
        }
        client
            .set_window_size(
                width + outer_width.saturating_sub(inner_width) as u32,
                height + outer_height.saturating_sub(inner_height) as u32,
            )
            .await?;
    }
    Ok(())
}

/// Chromium's command line: headless, no sandbox (tests may run as root),
/// nothing in the background, a fresh profile, and the network only through
/// the harness's proxy.
fn chromium_args(proxy_port: u16, profile: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--no-pings",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--proxy-server=http://127.0.0.1:{proxy_port}"));
    args.push(format!("--window-size={},{}", WINDOW.0, WINDOW.1));
    args.push(format!("--user-data-dir={}", profile.display()));
    args
}

/// `file://` URL of an absolute path, percent-encoding what a URL path
/// cannot hold literally.
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

fn strings(v: Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// chromedriver's legacy `POST /session/{id}/se/log` (not in W3C
/// WebDriver): returns and clears the browser log entries that the
/// `goog:loggingPrefs` capability asked it to keep.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}

/// chromedriver on a free loopback port. Dropping it kills its process group
/// (chromedriver and the Chromium it started), reaps chromedriver, and kills
/// and waits for whatever is left (crash handlers leave the group; they are
/// found by the scratch directory on their command lines).
struct Driver {
    child: Child,
    port: u16,
    log: PathBuf,
    scratch: PathBuf,
}

impl Driver {
    fn start(scratch: &Path) -> Driver {
        let log = scratch.join("chromedriver.log");
        let port = free_port();
        // chromedriver's own output and Chromium's stderr, apart from the
        // log chromedriver writes itself.
        let out = std::fs::File::create(scratch.join("chromedriver.out"))
            .expect("chromedriver output file");
        let mut command = Command::new(CHROMEDRIVER);
        command
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .current_dir(scratch)
            .env("HOME", scratch)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log file"))
            .stderr(out)
            .process_group(0);
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec, only async-signal-safe calls
        // (prctl, getppid), no allocation. The signal fires when this
        // thread ends, which is after the guard has already killed it.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {CHROMEDRIVER}: {e}"));
        let mut driver = Driver {
            child,
            port,
            log,
            scratch: scratch.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = driver.child.try_wait() {
                panic!("chromedriver exited ({status})\n{}", driver.log_tail());
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not listen on port {port} within 20 s\n{}",
                driver.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        driver
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// The ends of chromedriver's log and of its (and Chromium's) output,
    /// for failure messages.
    fn log_tail(&self) -> String {
        let mut text = String::new();
        for (name, path) in [
            ("chromedriver log", self.log.clone()),
            (
                "chromedriver and chromium output",
                self.scratch.join("chromedriver.out"),
            ),
        ] {
            let all = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = all.lines().collect();
            text.push_str(&format!("{name} (last lines):\n"));
            for line in &lines[lines.len().saturating_sub(30)..] {
                // A screenshot is one long base64 line.
                let short: String = line.chars().take(300).collect();
                text.push_str(&short);
                text.push('\n');
            }
        }
        text
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // The group is signalled before chromedriver is reaped, so its id
        // cannot have been given to anyone else.
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.child.wait();
        // Chromium's processes, now orphans, are reaped by init. Chromium's
        // crash handlers put themselves in process groups of their own; they
        // are found by the scratch directory on their command lines.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = leftovers(group as u32, &self.scratch);
            if left.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                eprintln!("browser: processes still alive after 10 s: {left:?}");
                break;
            }
            for pid in left {
                // SAFETY: as above.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Live (not zombie) processes in process group `group`, or whose command
/// line names `scratch`.
fn leftovers(group: u32, scratch: &Path) -> Vec<u32> {
    let scratch = scratch.to_string_lossy();
    util::processes()
        .into_iter()
        .filter(|p| p.state != 'Z')
        .filter(|p| {
            p.pgrp == group
                || std::fs::read(format!("/proc/{}/cmdline", p.pid))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(scratch.as_ref()))
        })
        .map(|p| p.pid)
        .collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The proxy Chromium must use for every request: it records each
/// connection's first line and answers 403, never connecting anywhere.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy listener");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let port = listener.local_addr().expect("proxy address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let seen = seen.clone();
                            // One thread per connection: a connection that
                            // never sends a line (a preconnect) blocks no other.
                            std::thread::spawn(move || refuse(stream, &seen));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        Proxy {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Records the connection's first line (or that it sent none within 2 s)
/// and answers 403.
fn refuse(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.contains(&b'\n') && head.len() < 8192 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next().unwrap_or("").trim();
    let entry = if line.is_empty() {
        NO_REQUEST_LINE.to_string()
    } else {
        line.to_string()
    };
    seen.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
    let _ = stream
        .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

// The harness's own tests: each detection can fail.

/// Writes `body` as page.html in a fresh temp dir.
fn page(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("page.html");
    std::fs::write(
        &path,
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
                 <title>browser harness test</title></head>\n<body>\n{body}\n</body></html>\n"
        ),
    )
    .expect("write page");
    (dir, path)
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.len() > 33, "PNG of {} bytes", png.len());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&png[12..16], b"IHDR", "first chunk is IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
fn self_contained_page_is_clean() {
    let (dir, path) = page(
        r##"<h1>Two figures</h1>
<figure><svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
  <rect x="10" y="10" width="380" height="180" fill="#4477aa"/>
  <text x="200" y="110" text-anchor="middle" fill="white">first</text></svg></figure>
<figure><svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">
  <circle cx="200" cy="100" r="90" fill="#ee6677"/></svg></figure>"##,
    );
    let shot = dir.path().join("shot.png");
    let check = check_page(&path, &["svg", "figure", "script"], Some(&shot));
    assert!(
        check.console_errors.is_empty(),
        "{:?}",
        check.console_errors
    );
    assert!(
        check.network_requests.is_empty(),
        "{:?}",
        check.network_requests
    );
    assert_eq!(
        check.counts,
        vec![
            ("svg".to_string(), 2),
            ("figure".to_string(), 2),
            ("script".to_string(), 0)
        ]
    );
    assert_eq!(png_size(&check.screenshot_png), WINDOW);
    assert_eq!(
        std::fs::read(&shot).expect("screenshot file"),
        check.screenshot_png
    );
}

#[test]
fn requests_are_seen_and_stay_on_the_machine() {
    let (_dir, path) = page(
        r#"<img src="http://example.invalid/x.png" alt="">
<script>fetch('https://example.com/').catch(() => {});</script>"#,
    );
    let check = check_page(&path, &["img"], None);
    let seen = |prefix: &str, what: &str| {
        check
            .network_requests
            .iter()
            .any(|r| r.starts_with(prefix) && r.contains(what))
    };
    // Resource Timing has both, failed as they are.
    assert!(
        seen("resource ", "http://example.invalid/x.png"),
        "{:?}",
        check.network_requests
    );
    assert!(
        seen("resource ", "https://example.com/"),
        "{:?}",
        check.network_requests
    );
    // The proxy got both, and refused them: nothing left the machine.
    assert!(
        seen("proxy ", "GET http://example.invalid/x.png "),
        "{:?}",
        check.network_requests
    );
    assert!(
        seen("proxy ", "CONNECT example.com:443 "),
        "{:?}",
        check.network_requests
    );
    assert_eq!(check.counts, vec![("img".to_string(), 1)]);
}

#[test]
fn console_errors_and_exceptions_are_seen() {
    let (_dir, path) = page("<script>console.error('boom'); undefined_function();</script>");
    let check = check_page(&path, &[], None);
    assert!(
        check.console_errors.iter().any(|e| e.contains("\"boom\"")),
        "{:?}",
        check.console_errors
    );
    assert!(
        check
            .console_errors
            .iter()
            .any(|e| e.contains("Uncaught ReferenceError: undefined_function is not defined")),
        "{:?}",
        check.console_errors
    );
    assert!(
        check.network_requests.is_empty(),
        "{:?}",
        check.network_requests
    );
    assert!(check.counts.is_empty());
}

#[test]
fn a_tall_page_gets_a_tall_screenshot() {
    let (_dir, path) = page(
        r#"<style>body { margin: 0 }</style>
<div id="tall" style="height: 3000px; background: #ccddaa"></div>"#,
    );
    let check = check_page(&path, &["#tall", "svg"], None);
    assert_eq!(png_size(&check.screenshot_png), (WINDOW.0, 3000));
    assert_eq!(
        check.counts,
        vec![("#tall".to_string(), 1), ("svg".to_string(), 0)]
    );
}
