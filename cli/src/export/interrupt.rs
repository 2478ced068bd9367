//! Ctrl-C during an export: the first stops it in good order, a second quits at once.

use tokio::sync::{oneshot, watch};

/// Ctrl-C, listened to from the moment this is called (`tokio::signal::ctrl_c` would listen only
/// once first polled, leaving a window in which Ctrl-C kills the process outright).
pub struct Interrupts {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    pub fn listen() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Interrupts {
                signal: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Interrupts {}
        }
    }

    /// The next Ctrl-C; `false` when none can be received.
    async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            match self.signal.as_mut() {
                Some(signal) => signal.recv().await.is_some(),
                None => false,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}

/// The first Ctrl-C stops the export: requests in flight are dropped (their temporary files
/// removed), each session's manifest records what is complete, the index is written; `noticed`
/// tells the run, which says so through its progress (above the bar, which a line written past
/// it would leave behind, stale, on the screen). A second Ctrl-C exits at once (hidden
/// `.creditdata-*.part` files may then remain; never a partial file under a final name).
pub async fn stop_on_interrupt(
    mut interrupts: Interrupts,
    stop: watch::Sender<bool>,
    noticed: oneshot::Sender<()>,
) {
    if !interrupts.next().await {
        return;
    }
    stop.send_replace(true);
    let _ = noticed.send(());
    if interrupts.next().await {
        // The trace's root span ends and what has ended is sent (sessions in flight are lost).
        crate::telemetry::finish(crate::failure::EXIT_INTERRUPTED);
        std::process::exit(i32::from(crate::failure::EXIT_INTERRUPTED));
    }
}

/// What the run says when it notices the first Ctrl-C.
pub const NOTICE: &str = "interrupted: recording what is complete (Ctrl-C again to quit at once); \
                          run the same command again to resume";
