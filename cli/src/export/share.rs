//! `creditdata export` with a rate-limit store: the work shared by every worker started with the
//! same filters, through the same Redis that shares their rate limit (see `cli/README.md`,
//! "Many machines").
//!
//! Each worker writes its own tree (`--out` on its own disk; a tree names itself once, in
//! `.creditdata-export-id`). Workers that overlap in time with the same filters, the same
//! service and API client form one *run* (a random id in the store, kept while any of them
//! renews it): in a run each session is exported by one worker. A worker **claims** a session
//! before exporting it: a lease (`SET NX PX`) that it renews every third of `--lease-ttl` while
//! the session is exported and releases at its end, when it records the session as done in the
//! run. A worker killed with `kill -9` stops renewing: its leases lapse after `--lease-ttl` and
//! another worker takes their sessions. A session whose lease another worker holds, or whose
//! *home* tree (the one that exported it last, remembered for 30 days) belongs to a worker of
//! this run, is put aside (its id only) and tried again once the listing is through, until it
//! is done or its holder is gone: a rerun goes back to the tree that holds the session, whose
//! verified files it keeps.
//!
//! Every step is one Lua script (atomic in Redis); keys are `PREFIX:{hash}:export:FILTERS…`,
//! with the filters and session ids hashed: the store holds no id, filter, e-mail or name. A
//! store that stops answering is retried with backoff for [`STORE_PATIENCE`]; then the export
//! stops (exit 1), leaving a tree that a rerun resumes (sessions it was exporting are finished
//! first). The manifests are each tree's truth; the store only coordinates.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use creditdata_client::Client;
use creditdata_client::rate_limit::RateLimitStore;
use creditdata_client::rate_limit::store::store_error;
use creditdata_client::types::Session;
use futures::stream::{self, Stream, StreamExt};
use redis::aio::ConnectionManager;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use uuid::Uuid;

use super::store::Tree;
use crate::failure::Failure;

/// The file in which a tree keeps its own id (32 hex digits).
pub const TREE_ID_FILE: &str = ".creditdata-export-id";

/// How long a store that does not answer is retried before the export stops.
pub const STORE_PATIENCE: Duration = Duration::from_secs(60);

/// How long one command to the store may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the store remembers which tree exported a session (renewed at each claim).
const HOME_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// How long a run's record of its done sessions outlives its last worker.
const DONE_TTL: Duration = Duration::from_secs(24 * 3600);

/// Joins the run (creating it when no worker of it is alive). KEYS: run. ARGV: a new run id,
/// the lease TTL (ms). Answers the run id.
const JOIN: &str = r"
local run = redis.call('GET', KEYS[1])
if not run then
  run = ARGV[1]
  redis.call('SET', KEYS[1], run, 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return run
";

/// Says this worker's tree is alive in the run, and keeps the run. KEYS: run, trees, done.
/// ARGV: run id, tree, lease TTL (ms), done TTL (ms).
const HEARTBEAT: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
elseif current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
return 1
";

/// Claims a session. KEYS: lease, done, home, trees. ARGV: session field, worker, tree, lease
/// TTL (ms), alive window (ms), home TTL (ms). Answers `done`, `held`, `home` (its home tree's
/// worker is alive in the run), `claimed` or `moved` (claimed from a tree no longer there).
const CLAIM: &str = r"
if redis.call('HGET', KEYS[2], ARGV[1]) then return 'done' end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[2] then return 'held' end
local home = redis.call('HGET', KEYS[3], ARGV[1])
local moved = false
if home and home ~= ARGV[3] then
  local beat = redis.call('ZSCORE', KEYS[4], home)
  local clock = redis.call('TIME')
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  if beat and tonumber(beat) >= now - tonumber(ARGV[5]) then return 'home' end
  moved = true
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
if moved then return 'moved' end
return 'claimed'
";

/// Keeps a lease: renews it while this worker holds it, takes it back if it lapsed and nobody
/// took or finished the session meanwhile. KEYS: lease, done. ARGV: field, worker, TTL (ms).
/// Answers 1 (held) or 0 (lost).
const RENEW: &str = r"
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
if not holder and not redis.call('HGET', KEYS[2], ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
";

/// Records a session as done in the run and drops the lease. KEYS: lease, done. ARGV: field,
/// worker, what is recorded (tree and state), done TTL (ms).
const FINISH: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[2] then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

/// Drops a lease without recording the session as done (interrupted). KEYS: lease. ARGV:
/// worker.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
";

/// Says this tree has left the run, and ends the run when no tree is left in it (trees
/// silent for a lease TTL count as gone), so that the next export of these filters is a new
/// run. KEYS: trees, run. ARGV: tree, run id, lease TTL (ms).
const LEAVE: &str = r"
redis.call('ZREM', KEYS[1], ARGV[1])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) == 0 and redis.call('GET', KEYS[2]) == ARGV[2] then
  redis.call('DEL', KEYS[2])
end
return 1
";

/// The shared work of one export.
pub struct WorkShare {
    inner: Arc<Inner>,
    heartbeat: tokio::task::JoinHandle<()>,
}

struct Inner {
    connection: ConnectionManager,
    shown: String,
    /// `PREFIX:{hash}:export:FILTERS`: every key of this group of workers starts with it.
    group: String,
    run: String,
    worker: String,
    tree: String,
    ttl: Duration,
    /// Leases held, each with the signal that it was lost.
    held: Mutex<HashMap<String, watch::Sender<bool>>>,
    claimed: AtomicU64,
    taken_over: AtomicU64,
    by_others: AtomicU64,
    lost: AtomicU64,
}

/// A session this worker claimed.
pub struct Lease {
    field: String,
    /// Turns `true` when the lease was lost (another worker holds it now).
    lost: watch::Receiver<bool>,
}

/// A session to export, with its lease when the work is shared.
pub struct Work {
    pub session: Session,
    pub lease: Option<Lease>,
}

enum Claimed {
    Mine(Lease),
    Done,
    Later,
}

impl WorkShare {
    /// Joins (or starts) the run of the workers with these `filters` under `namespace` (the
    /// shared rate limit's), for the tree `tree`; starts renewing its presence.
    pub async fn join(
        store: &RateLimitStore,
        namespace: &str,
        filters: &Value,
        tree: &Tree,
        ttl: Duration,
    ) -> Result<WorkShare, Failure> {
        let shown = store.shown_url().to_string();
        let unreachable = |e: String| {
            Failure::Local(format!(
                "the export's store {shown} does not answer ({e}): the work cannot be shared; \
                 export when it answers, or with --no-share-work to export every matching \
                 session from this worker alone"
            ))
        };
        let connection = store.connect(STEP_TIMEOUT).await.map_err(unreachable)?;
        let filters_hash = hex(&Sha256::digest(filters.to_string().as_bytes()))[..32].to_string();
        let group = format!("{namespace}:export:{filters_hash}");
        let tree_id = tree_id(tree).await?;
        let mut inner = Inner {
            connection,
            shown: shown.clone(),
            run: String::new(),
            worker: random_id(),
            tree: tree_id,
            group,
            ttl,
            held: Mutex::new(HashMap::new()),
            claimed: AtomicU64::new(0),
            taken_over: AtomicU64::new(0),
            by_others: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        };
        let run_key = inner.key("run");
        let new_run = random_id();
        let run: String = inner
            .script(JOIN, &[&run_key], &[&new_run, &millis(ttl)])
            .await
            .map_err(unreachable)?;
        inner.run = run;
        inner.heartbeat().await.map_err(unreachable)?;
        let inner = Arc::new(inner);
        let heartbeat = tokio::spawn(keep_alive(Arc::clone(&inner)));
        tracing::info!(
            store = %inner.shown,
            tree = %inner.tree,
            "export: sharing the work with the other workers of these filters"
        );
        Ok(WorkShare { inner, heartbeat })
    }

    /// The sessions of `listed` this worker exports: each claimed before it is handed out; those
    /// held by other workers (or at home in another worker's tree) tried again after the
    /// listing, until done or free. Ends early when `stopped` resolves.
    pub fn claimed<'a>(
        &'a self,
        client: &'a Client,
        listed: impl Stream<Item = Result<Session, creditdata_client::Error>> + Unpin + 'a,
        stop: watch::Receiver<bool>,
    ) -> impl Stream<Item = Result<Work, Failure>> + 'a {
        let state = Pass {
            listed: Some(listed),
            later: VecDeque::new(),
            again: VecDeque::new(),
        };
        stream::unfold(state, move |mut pass| {
            let stop = stop.clone();
            async move {
                loop {
                    if *stop.borrow() {
                        return None;
                    }
                    if let Some(listed) = pass.listed.as_mut() {
                        match listed.next().await {
                            Some(Ok(session)) => match self.inner.claim(session.id).await {
                                Ok(Claimed::Mine(lease)) => {
                                    let work = Work {
                                        session,
                                        lease: Some(lease),
                                    };
                                    return Some((Ok(work), pass));
                                }
                                Ok(Claimed::Done) => continue,
                                Ok(Claimed::Later) => {
                                    pass.later.push_back(session.id);
                                    continue;
                                }
                                Err(failure) => return Some((Err(failure), pass)),
                            },
                            Some(Err(error)) => return Some((Err(Failure::from(error)), pass)),
                            None => {
                                pass.listed = None;
                                continue;
                            }
                        }
                    }
                    // The listing is through: the sessions put aside, round after round.
                    let Some(id) = pass.later.pop_front() else {
                        if pass.again.is_empty() {
                            return None;
                        }
                        std::mem::swap(&mut pass.later, &mut pass.again);
                        self.inner.pause_between_rounds(&stop).await;
                        continue;
                    };
                    match self.inner.claim(id).await {
                        Ok(Claimed::Mine(lease)) => {
                            self.inner.taken_over.fetch_add(1, Ordering::Relaxed);
                            match client.get_session().session_id(id).call().await {
                                Ok(session) => {
                                    let work = Work {
                                        session,
                                        lease: Some(lease),
                                    };
                                    return Some((Ok(work), pass));
                                }
                                Err(error) => {
                                    self.release(lease).await;
                                    return Some((Err(Failure::from(error)), pass));
                                }
                            }
                        }
                        Ok(Claimed::Done) => continue,
                        Ok(Claimed::Later) => pass.again.push_back(id),
                        Err(failure) => return Some((Err(failure), pass)),
                    }
                }
            }
        })
    }

    /// Exports a claimed session: `export` runs while the lease is renewed; the session is
    /// recorded as done with its state at the end (`interrupted`: released, not done). `None`
    /// when the lease was lost (this worker stalled past its TTL and another took the session):
    /// the export is dropped, and this tree's manifests keep what they said before.
    pub async fn run<F, R>(
        &self,
        lease: Lease,
        export: F,
        outcome: impl FnOnce(&R) -> Outcome,
    ) -> Option<R>
    where
        F: Future<Output = R>,
    {
        let mut lost = lease.lost.clone();
        let result = tokio::select! {
            result = export => Some(result),
            _ = lost.wait_for(|lost| *lost) => None,
        };
        match &result {
            Some(report) => match outcome(report) {
                Outcome::Done(state) => self.finish(lease, state).await,
                Outcome::Interrupted => self.release(lease).await,
            },
            None => {
                self.inner.lost.fetch_add(1, Ordering::Relaxed);
                self.inner.forget(&lease.field);
                tracing::warn!(
                    "export: another worker took over a session whose lease this worker could \
                     not renew in time; it is left to that worker"
                );
            }
        }
        result
    }

    async fn finish(&self, lease: Lease, state: &str) {
        let inner = &self.inner;
        inner.forget(&lease.field);
        let value = format!("{} {state}", inner.tree);
        let keys = [inner.lease_key(&lease.field), inner.run_key("done")];
        let keys = [keys[0].as_str(), keys[1].as_str()];
        let args = [
            lease.field.as_str(),
            inner.worker.as_str(),
            value.as_str(),
            &millis(DONE_TTL),
        ];
        if let Err(e) = inner
            .patiently(|| inner.script::<i64>(FINISH, &keys, &args))
            .await
        {
            // The session is in this tree as its manifest says; another worker may export it
            // again into its own (a duplicate, never a loss).
            tracing::warn!(reason = %e, "export: could not record a session as done in the store");
        }
    }

    async fn release(&self, lease: Lease) {
        let inner = &self.inner;
        inner.forget(&lease.field);
        let key = inner.lease_key(&lease.field);
        let _ = inner
            .script::<i64>(RELEASE, &[&key], &[&inner.worker])
            .await;
    }

    /// What the summary shows of the shared work.
    pub fn summary(&self) -> Value {
        let inner = &self.inner;
        json!({
            "store": inner.shown,
            "tree": inner.tree,
            "claimed": inner.claimed.load(Ordering::Relaxed),
            "takenOver": inner.taken_over.load(Ordering::Relaxed),
            "exportedByOthers": inner.by_others.load(Ordering::Relaxed),
            "leasesLost": inner.lost.load(Ordering::Relaxed),
        })
    }

    /// Leaves the run: other workers stop waiting for this tree at once.
    pub async fn leave(self) {
        self.heartbeat.abort();
        let inner = &self.inner;
        let trees = inner.run_key("trees");
        let run = inner.key("run");
        let ttl = millis(inner.ttl);
        let _ = inner
            .script::<i64>(LEAVE, &[&trees, &run], &[&inner.tree, &inner.run, &ttl])
            .await;
    }
}

impl Drop for WorkShare {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

/// How a claimed session's export ended, for the store.
pub enum Outcome {
    /// Done in this run, in this state (`complete`, `partial`, `failed`).
    Done(&'static str),
    /// Interrupted: another worker may take it in this run.
    Interrupted,
}

/// The listing, then the sessions put aside, round after round.
struct Pass<S> {
    listed: Option<S>,
    later: VecDeque<Uuid>,
    again: VecDeque<Uuid>,
}

impl Inner {
    fn key(&self, what: &str) -> String {
        format!("{}:{what}", self.group)
    }

    fn run_key(&self, what: &str) -> String {
        format!("{}:run:{}:{what}", self.group, self.run)
    }

    fn lease_key(&self, field: &str) -> String {
        format!("{}:lease:{field}", self.group)
    }

    /// A session's name in the store: a hash of the group and its id.
    fn field(&self, id: Uuid) -> String {
        let mut hash = Sha256::new();
        hash.update(self.group.as_bytes());
        hash.update(id.as_bytes());
        hex(&hash.finalize())[..32].to_string()
    }

    async fn script<T: redis::FromRedisValue>(
        &self,
        code: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        let script = redis::Script::new(code);
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut connection = self.connection.clone();
        match tokio::time::timeout(STEP_TIMEOUT, invocation.invoke_async(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(store_error(&e)),
            Err(_) => Err(format!("no answer within {STEP_TIMEOUT:?}")),
        }
    }

    /// `step` until it succeeds, with backoff, for at most [`STORE_PATIENCE`].
    async fn patiently<T, F, Fut>(&self, mut step: F) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let started = tokio::time::Instant::now();
        let mut backoff = Duration::from_millis(500);
        let mut warned = false;
        loop {
            match step().await {
                Ok(value) => return Ok(value),
                Err(e) if started.elapsed() + backoff > STORE_PATIENCE => return Err(e),
                Err(e) => {
                    if !warned {
                        warned = true;
                        tracing::warn!(
                            store = %self.shown,
                            reason = %e,
                            "export: the store does not answer; trying again for {}s",
                            STORE_PATIENCE.as_secs()
                        );
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = backoff.saturating_mul(2).min(Duration::from_secs(10));
                }
            }
        }
    }

    async fn claim(&self, id: Uuid) -> Result<Claimed, Failure> {
        let field = self.field(id);
        let keys = [
            self.lease_key(&field),
            self.run_key("done"),
            self.key("home"),
            self.run_key("trees"),
        ];
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let alive = millis(self.ttl);
        let ttl = millis(self.ttl);
        let home_ttl = millis(HOME_TTL);
        let args = [
            field.as_str(),
            self.worker.as_str(),
            self.tree.as_str(),
            &ttl,
            &alive,
            &home_ttl,
        ];
        let answer: String = self
            .patiently(|| self.script(CLAIM, &keys, &args))
            .await
            .map_err(|e| {
                Failure::Local(format!(
                    "the export's store {} did not answer for {} s ({e}): the sessions left were \
                     not claimed; export again when it answers (this tree resumes)",
                    self.shown,
                    STORE_PATIENCE.as_secs()
                ))
            })?;
        Ok(match answer.as_str() {
            "claimed" | "moved" => {
                self.claimed.fetch_add(1, Ordering::Relaxed);
                let (sender, lost) = watch::channel(false);
                self.held
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(field.clone(), sender);
                Claimed::Mine(Lease { field, lost })
            }
            "done" => {
                self.by_others.fetch_add(1, Ordering::Relaxed);
                Claimed::Done
            }
            _ => Claimed::Later,
        })
    }

    fn forget(&self, field: &str) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(field);
    }

    async fn heartbeat(&self) -> Result<(), String> {
        let keys = [self.key("run"), self.run_key("trees"), self.run_key("done")];
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let ttl = millis(self.ttl);
        let done_ttl = millis(DONE_TTL + self.ttl);
        let args = [self.run.as_str(), self.tree.as_str(), &ttl, &done_ttl];
        self.script::<i64>(HEARTBEAT, &keys, &args).await.map(drop)
    }

    /// Renews every lease held; signals those lost.
    async fn renew(&self) {
        let fields: Vec<String> = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        let done = self.run_key("done");
        let ttl = millis(self.ttl);
        for field in fields {
            let lease = self.lease_key(&field);
            let held = self
                .script::<i64>(RENEW, &[&lease, &done], &[&field, &self.worker, &ttl])
                .await;
            // A store that does not answer takes nothing away: nobody can claim meanwhile.
            if held == Ok(0)
                && let Some(sender) = self
                    .held
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&field)
            {
                sender.send_replace(true);
            }
        }
    }

    /// Between two rounds over the sessions put aside: a third of the lease TTL (a lapsed
    /// lease is seen within that), or less when the export stops.
    async fn pause_between_rounds(&self, stop: &watch::Receiver<bool>) {
        let pause = self.ttl / 3;
        let step = Duration::from_millis(100).min(pause);
        let until = tokio::time::Instant::now() + pause;
        while tokio::time::Instant::now() < until && !*stop.borrow() {
            tokio::time::sleep(step).await;
        }
    }
}

/// Renews the tree's presence and the leases every third of the TTL.
async fn keep_alive(inner: Arc<Inner>) {
    let mut ticks = tokio::time::interval(inner.ttl / 3);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let _ = inner.heartbeat().await;
        inner.renew().await;
    }
}

/// The tree's id, from its [`TREE_ID_FILE`], made and written (atomically) the first time.
async fn tree_id(tree: &Tree) -> Result<String, Failure> {
    let path = tree.root().join(TREE_ID_FILE);
    let kept = std::fs::read(&path)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|text| text.trim().to_string())
        .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()));
    if let Some(id) = kept {
        return Ok(id);
    }
    let id = random_id();
    tree.write_bytes(std::path::Path::new(TREE_ID_FILE), id.as_bytes())
        .await
        .map_err(|e| Failure::Local(e.0))?;
    Ok(id)
}

fn random_id() -> String {
    Uuid::new_v4().simple().to_string()
}

fn millis(duration: Duration) -> String {
    duration.as_millis().max(1).to_string()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}
