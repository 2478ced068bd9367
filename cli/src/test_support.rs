//! Helpers the unit tests of several modules share.

use std::collections::HashMap;

use clap::Parser;

use crate::cli::{Cli, GlobalArgs};

/// The global options of `creditdata <args> operations`: the subcommand only completes the
/// command line, as the global options parse the same before any of them.
pub(crate) fn global(args: &[&str]) -> GlobalArgs {
    let mut argv = vec!["creditdata"];
    argv.extend_from_slice(args);
    argv.push("operations");
    Cli::try_parse_from(argv).unwrap().global
}

/// An environment holding exactly `vars`.
pub(crate) fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

/// The unit tests' allocator: the system's, counting the bytes each thread holds, so that a test
/// can assert how much one call needed at its peak ([`peak_during`]) without timing anything.
pub(crate) struct Counting;

thread_local! {
    static LIVE: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
    static PEAK: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

fn counted(change: isize) {
    // `try_with`: nothing is counted while the thread's locals are being torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + change;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// Peak memory can only be observed from inside the allocator (see this crate's `[lints.rust]`).
// SAFETY: every call is forwarded to the system allocator unchanged; the counting touches only
// const-initialised thread locals, which never allocate.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded as it came.
        let pointer = unsafe { std::alloc::System.alloc(layout) };
        if !pointer.is_null() {
            counted(layout.size() as isize);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded as it came.
        unsafe { std::alloc::System.dealloc(pointer, layout) };
        counted(-(layout.size() as isize));
    }

    unsafe fn realloc(
        &self,
        pointer: *mut u8,
        layout: std::alloc::Layout,
        new_size: usize,
    ) -> *mut u8 {
        // SAFETY: forwarded as it came.
        let moved = unsafe { std::alloc::System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            counted(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

/// What `run` returns, and the most bytes this thread held at once while it ran beyond what it
/// held before (what `run` allocated and freed on other threads is not seen: call it on one).
pub(crate) fn peak_during<T>(run: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(std::cell::Cell::get);
    PEAK.with(|peak| peak.set(before));
    let value = run();
    let peak = PEAK.with(std::cell::Cell::get);
    (value, usize::try_from(peak - before).unwrap_or(0))
}
