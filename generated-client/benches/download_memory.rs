//! Peak memory while downloading a 1 GiB body: the generated client's download path
//! (`get_pdf_report().download()` then `Download::save` to a file, and `Download::write_to` a
//! sink) against a baseline that drains the same response with plain `reqwest`, keeping
//! nothing. Same loopback server, same run.
//!
//! ```text
//! cargo bench -p creditdata-client --bench download_memory
//! ```
//!
//! Two measures per case: the peak of live heap bytes above the level before the download (a
//! counting global allocator: exact, and independent of what the allocator keeps cached), and
//! the process's resident-set high-water mark (`VmHWM` from `/proc/self/status`, reset before
//! each case through `/proc/self/clear_refs`; Linux only, `n/a` elsewhere). The server runs in
//! this process on its own thread and writes the body from one static 64 KiB buffer, so it adds
//! the same small constant to every case. Set `DOWNLOAD_MIB` to change the size (default
//! 1024).

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use creditdata_client::Client;
use creditdata_client::download::DownloadExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// Peak memory can only be observed from inside the allocator: the one place of the workspace
// that needs unsafe code (see the `[lints.rust]` of this crate's Cargo.toml).
// SAFETY: every call is forwarded to the system allocator unchanged; the counters only observe.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's pointer, layout and size.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            if new_size >= layout.size() {
                let grown = new_size - layout.size();
                let live = LIVE.fetch_add(grown, Ordering::Relaxed) + grown;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const CHUNK: usize = 64 * 1024;
static ZEROS: [u8; CHUNK] = [0u8; CHUNK];

fn session_id() -> Uuid {
    Uuid::parse_str("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e").unwrap()
}

/// A server on its own thread that answers every request with `size` bytes of
/// `application/pdf`, written from one static buffer.
fn start_server(size: u64) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve(socket, size));
            }
        });
    });
    address
}

async fn serve(mut socket: tokio::net::TcpStream, size: u64) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            buffer.drain(..end + 4);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/pdf\r\ncontent-disposition: attachment; filename=\"report.pdf\"\r\ncontent-length: {size}\r\n\r\n"
            );
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let mut left = size;
            while left > 0 {
                let n = left.min(CHUNK as u64) as usize;
                if socket.write_all(&ZEROS[..n]).await.is_err() {
                    return;
                }
                left -= n as u64;
            }
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

/// The resident-set high-water mark in KiB, when the platform reports it.
fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn reset_vm_hwm() {
    // "5" resets the peak RSS to the current RSS (Linux ≥ 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Measure {
    name: &'static str,
    bytes: u64,
    heap_peak: usize,
    hwm_kib: Option<u64>,
    seconds: f64,
}

async fn measure<F, Fut>(name: &'static str, run: F) -> Measure
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    reset_vm_hwm();
    let started = Instant::now();
    let bytes = run().await;
    let seconds = started.elapsed().as_secs_f64();
    Measure {
        name,
        bytes,
        heap_peak: PEAK.load(Ordering::Relaxed).saturating_sub(before),
        hwm_kib: vm_hwm_kib(),
        seconds,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing of the kind and
    // must not download a gigabyte.
    if !std::env::args().any(|a| a == "--bench") {
        println!("download_memory: run with `cargo bench --bench download_memory`");
        return;
    }
    let mib: u64 = std::env::var("DOWNLOAD_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let size = mib * 1024 * 1024;
    let address = start_server(size);
    let base = format!("http://{address}");
    let url = format!("{base}/v1/sessions/{}/pdf-report", session_id());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let client = Client::builder()
        .base_url(&base)
        .bearer_token("bench-token")
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.pdf");

    let results = runtime.block_on(async {
        // Warm both connection pools and the runtime with a small first request each.
        let _ = http.get(&url).send().await.unwrap().chunk().await;
        let _ = client
            .get_pdf_report()
            .session_id(session_id())
            .download()
            .await
            .unwrap();

        let baseline = measure("baseline: reqwest, body drained", || async {
            let mut response = http
                .get(&url)
                .send()
                .await
                .unwrap()
                .error_for_status()
                .unwrap();
            let mut total = 0u64;
            while let Some(chunk) = response.chunk().await.unwrap() {
                total += chunk.len() as u64;
            }
            total
        })
        .await;
        let sink = measure("generated: download().write_to(sink)", || async {
            let download = client
                .get_pdf_report()
                .session_id(session_id())
                .download()
                .await
                .unwrap();
            download.write_to(&mut tokio::io::sink()).await.unwrap()
        })
        .await;
        let saved = measure("generated: download().save(file)", || async {
            let saved = client
                .get_pdf_report()
                .session_id(session_id())
                .download()
                .await
                .unwrap()
                .save(&target)
                .await
                .unwrap();
            saved.bytes
        })
        .await;
        [baseline, sink, saved]
    });

    println!("download of {mib} MiB ({size} bytes) over loopback");
    println!(
        "{:<42} {:>14} {:>12} {:>10} {:>9}",
        "case", "heap peak", "VmHWM", "MiB/s", "ratio"
    );
    let base_heap = results[0].heap_peak.max(1) as f64;
    for m in &results {
        assert_eq!(m.bytes, size, "{} read the whole body", m.name);
        println!(
            "{:<42} {:>10} KiB {:>8} KiB {:>10.0} {:>8.2}x",
            m.name,
            m.heap_peak / 1024,
            m.hwm_kib.map_or("n/a".to_string(), |k| k.to_string()),
            mib as f64 / m.seconds,
            m.heap_peak as f64 / base_heap,
        );
    }
}
