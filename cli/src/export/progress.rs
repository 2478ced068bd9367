//! How far the export has got, on stderr: a progress bar on a terminal (sessions, files, bytes,
//! rate and ETA), otherwise JSON lines a script or a log collector can read. Neither shows any
//! of the data: counts and session ids only.

use std::cell::{Cell, RefCell};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

/// At most one JSON progress line per this interval (plus the last one, `export-finished`).
const JSON_INTERVAL: Duration = Duration::from_secs(1);

/// The counters, shown as they change. Single-threaded (the command runs on one thread).
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    last_line: Cell<Option<Instant>>,
    state: RefCell<Counts>,
}

/// What has been done so far.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Sessions the search matched (once the first page has said).
    pub sessions_total: Option<u64>,
    /// Sessions done (complete or not).
    pub sessions_done: u64,
    /// Files fetched in this run.
    pub files_fetched: u64,
    /// Files kept because they verified against the manifest.
    pub files_kept: u64,
    /// Files that could not be exported.
    pub files_failed: u64,
    /// Bytes received in this run.
    pub bytes_fetched: u64,
}

impl Progress {
    /// A bar when stderr is a terminal, JSON lines otherwise.
    pub fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            // No length until the search's first page says how many sessions match.
            let bar = ProgressBar::no_length().with_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} sessions ({per_sec})  {msg}  eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            last_line: Cell::new(None),
            state: RefCell::new(Counts::default()),
        }
    }

    pub fn counts(&self) -> Counts {
        *self.state.borrow()
    }

    pub fn set_total(&self, total: u64) {
        self.state.borrow_mut().sessions_total = Some(total);
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
        self.show();
    }

    pub fn bytes(&self, received: u64) {
        self.state.borrow_mut().bytes_fetched += received;
        self.refresh_message();
    }

    pub fn file_fetched(&self) {
        self.state.borrow_mut().files_fetched += 1;
        self.refresh_message();
    }

    pub fn file_kept(&self) {
        self.state.borrow_mut().files_kept += 1;
        self.refresh_message();
    }

    pub fn file_failed(&self) {
        self.state.borrow_mut().files_failed += 1;
        self.refresh_message();
    }

    pub fn session_done(&self) {
        self.state.borrow_mut().sessions_done += 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.show();
    }

    /// Prints a line above the bar (or on stderr when there is none), through the terminal gate.
    pub fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::terminal::note(text)),
            None => crate::terminal::note(text),
        }
    }

    /// The bar cleared, and the last progress line: the run's own totals (`totals`, the
    /// summary's) and whether it was interrupted, so that the last line and the summary never
    /// disagree (the counters above also count downloads Ctrl-C dropped half-way, and an ETA
    /// means nothing once the run is over).
    pub fn finish(&self, totals: &serde_json::Value, interrupted: bool) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
            return;
        }
        let counts = self.counts();
        let mut line = json!({
            "event": "export-finished",
            "interrupted": interrupted,
            "sessionsDone": totals.get("sessions"),
            "sessionsTotal": counts.sessions_total,
        });
        if let (Some(line), Some(totals)) = (line.as_object_mut(), totals.as_object()) {
            line.extend(
                totals
                    .iter()
                    .map(|(key, value)| (key.clone(), value.clone())),
            );
            let elapsed = self.started.elapsed().as_secs_f64();
            line.insert(
                "elapsedSeconds".into(),
                json!((elapsed * 10.0).round() / 10.0),
            );
            line.insert("etaSeconds".into(), serde_json::Value::Null);
        }
        let _ = crate::terminal::write_json(&mut std::io::stderr().lock(), &line, false);
    }

    fn refresh_message(&self) {
        if let Some(bar) = &self.bar {
            let counts = self.counts();
            let seconds = self.started.elapsed().as_secs_f64().max(0.001);
            bar.set_message(format!(
                "files {} fetched, {} kept, {} failed  {} ({}/s)",
                counts.files_fetched,
                counts.files_kept,
                counts.files_failed,
                indicatif::HumanBytes(counts.bytes_fetched),
                indicatif::HumanBytes((counts.bytes_fetched as f64 / seconds) as u64)
            ));
        }
    }

    /// A JSON line when there is no bar, at most once a [`JSON_INTERVAL`].
    fn show(&self) {
        if self.bar.is_some() {
            return;
        }
        let now = Instant::now();
        if self
            .last_line
            .get()
            .is_some_and(|at| now.duration_since(at) < JSON_INTERVAL)
        {
            return;
        }
        self.last_line.set(Some(now));
        let counts = self.counts();
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let eta = match counts.sessions_total {
            Some(total) if counts.sessions_done > 0 && total >= counts.sessions_done => {
                let per_session = elapsed / counts.sessions_done as f64;
                Some((per_session * (total - counts.sessions_done) as f64).round())
            }
            _ => None,
        };
        let line = json!({
            "event": "export-progress",
            "sessionsDone": counts.sessions_done,
            "sessionsTotal": counts.sessions_total,
            "filesFetched": counts.files_fetched,
            "filesKept": counts.files_kept,
            "filesFailed": counts.files_failed,
            "bytesFetched": counts.bytes_fetched,
            "elapsedSeconds": (elapsed * 10.0).round() / 10.0,
            "etaSeconds": eta,
        });
        let _ = crate::terminal::write_json(&mut std::io::stderr().lock(), &line, false);
    }
}
