//! The state shared by all handlers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::{Mutex, OwnedMutexGuard};

use chrono::{DateTime, Utc};
use creditdata_client::types::Session;
use uuid::Uuid;

use crate::api_versions::ApiVersions;
use crate::config::MockConfig;
use crate::data::{Dossier, DossierCache};
use crate::described::Description;
use crate::idp::IdentityProvider;
use crate::idp::grants::IdentityState;
use crate::problem::Problem;
use crate::store::state_file::{STATE_VERSION, StateError, StateFile};
use crate::store::{Progress, SessionRecord, Store};
use crate::views::View;

/// Everything a request handler needs.
pub struct AppState {
    /// Configuration.
    pub config: MockConfig,
    /// The identity provider.
    pub idp: Arc<IdentityProvider>,
    store: RwLock<Store>,
    dossiers: DossierCache,
    /// Held by whoever is changing the sessions, from reading the record to be changed until
    /// the change is saved and in memory; so changes never interleave and saves never race.
    writer: Arc<Mutex<()>>,
    /// Whether the state file should carry the signing key (it was generated here).
    keep_key_in_state: bool,
    /// The effective description the mock serves.
    pub description: Description,
    /// What `api-version` each session's requests carried.
    pub api_versions: Arc<ApiVersions>,
    /// How many session ids this process has drawn since it started or was reset.
    sessions_drawn: AtomicU64,
}

/// A session settled to now, with its dossier.
pub struct Context {
    /// The settled record.
    pub record: SessionRecord,
    /// Its data.
    pub dossier: Arc<Dossier>,
    /// The moment it was settled to.
    pub now: DateTime<Utc>,
}

impl Context {
    /// The response builder for this session.
    pub fn view<'a>(&'a self, config: &'a MockConfig) -> View<'a> {
        View {
            record: &self.record,
            dossier: &self.dossier,
            config,
            now: self.now,
        }
    }
}

impl AppState {
    /// State with `store` loaded.
    pub fn new(
        config: MockConfig,
        idp: Arc<IdentityProvider>,
        store: Store,
        keep_key_in_state: bool,
        description: Description,
    ) -> Self {
        AppState {
            config,
            idp,
            store: RwLock::new(store),
            dossiers: DossierCache::default(),
            writer: Arc::new(Mutex::new(())),
            keep_key_in_state,
            description,
            api_versions: Arc::default(),
            sessions_drawn: AtomicU64::new(0),
        }
    }

    /// The id of a new session: the n-th drawn from the realism seed (`--seed`), so that a mock
    /// started with the same seed gives the same sessions the same ids, hence the same subjects
    /// and data, whatever else it serves (the release-day rehearsal runs one program against two
    /// mocks and compares its decisions). An id a loaded state file already holds is skipped.
    pub fn new_session_id(&self) -> Uuid {
        loop {
            let n = self.sessions_drawn.fetch_add(1, Ordering::Relaxed);
            let id = crate::realism::session_id(self.config.realism.seed, n);
            if !self.read_store().sessions.contains_key(&id) {
                return id;
            }
        }
    }

    /// Shared access to the sessions.
    pub fn read_store(&self) -> RwLockReadGuard<'_, Store> {
        self.store
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Exclusive access to the sessions. Only a committed change writes them.
    fn write_store(&self) -> RwLockWriteGuard<'_, Store> {
        self.store
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The dossier of `record`.
    pub fn dossier(&self, record: &SessionRecord) -> Arc<Dossier> {
        self.dossiers.get(record)
    }

    /// `subjectFullName`: known once the subject has identified themselves.
    pub fn full_name(&self, record: &SessionRecord) -> Option<String> {
        record
            .identified()
            .then(|| self.dossier(record).person.full_name())
    }

    /// The API view of a (settled) record.
    pub fn session_view(&self, record: &SessionRecord) -> Session {
        record.to_api(&self.config, self.full_name(record))
    }

    /// The API view of a (settled) record as JSON, with the members the description adds to
    /// the hand-written view.
    pub fn session_json(&self, record: &SessionRecord) -> serde_json::Value {
        let mut json = serde_json::to_value(self.session_view(record)).unwrap_or_default();
        self.description.members.add_to(
            &self.description.document,
            &mut json,
            &record.described_members,
        );
        json
    }

    /// `view` of a stored session as JSON, with the members the description adds to it.
    pub fn with_described_members(&self, view: Session) -> serde_json::Value {
        let stored = self
            .read_store()
            .sessions
            .get(&view.id)
            .map(|record| record.described_members.clone())
            .unwrap_or_default();
        let mut json = serde_json::to_value(view).unwrap_or_default();
        self.description
            .members
            .add_to(&self.description.document, &mut json, &stored);
        json
    }

    /// The session `id` settled to now; 404 when unknown.
    pub fn context(&self, id: Uuid) -> Result<Context, Problem> {
        let now = Utc::now();
        let record = self
            .read_store()
            .sessions
            .get(&id)
            .map(|record| record.settled(now, &self.config))
            .ok_or_else(|| not_found(id))?;
        let dossier = self.dossier(&record);
        Ok(Context {
            record,
            dossier,
            now,
        })
    }

    /// Settles session `id`, applies `change` (all or nothing), saves, and returns the new API
    /// view. Nothing changes, in memory or on disk, when `change` or the save fails.
    pub async fn mutate(
        self: &Arc<Self>,
        id: Uuid,
        change: impl FnOnce(&mut SessionRecord, &MockConfig) -> Result<(), Problem>,
    ) -> Result<Session, Problem> {
        let writer = Arc::clone(&self.writer).lock_owned().await;
        let now = Utc::now();
        let mut record = self
            .read_store()
            .sessions
            .get(&id)
            .cloned()
            .ok_or_else(|| not_found(id))?;
        record.settle(now, &self.config);
        change(&mut record, &self.config)?;
        let view = self.session_view(&record.settled(now, &self.config));
        self.commit(writer, Change::Put(Box::new(record))).await?;
        Ok(view)
    }

    /// Adds a new session, once it is saved.
    pub async fn insert(self: &Arc<Self>, record: SessionRecord) -> Result<(), Problem> {
        let writer = Arc::clone(&self.writer).lock_owned().await;
        self.commit(writer, Change::Put(Box::new(record))).await
    }

    /// Forgets every session, once that is saved, and what their requests carried; session
    /// ids are drawn from the seed's start again.
    pub async fn reset(self: &Arc<Self>) -> Result<(), Problem> {
        let writer = Arc::clone(&self.writer).lock_owned().await;
        self.commit(writer, Change::Clear).await?;
        self.api_versions.clear();
        self.sessions_drawn.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// Applies `change` to the identity provider's state (pruned of what has expired by `now`)
    /// and saves it, under the same writer lock as session changes: what the change saw is
    /// what it replaces, so two refreshes of one token cannot both rotate it. Nothing is
    /// written when nothing changed; nothing changes when the save fails.
    pub async fn update_identity<T>(
        self: &Arc<Self>,
        change: impl FnOnce(&mut IdentityState, DateTime<Utc>) -> T,
    ) -> Result<T, Problem> {
        let writer = Arc::clone(&self.writer).lock_owned().await;
        let now = Utc::now();
        let current = self.read_store().identity.clone();
        let mut updated = current.clone();
        updated.prune(now);
        let outcome = change(&mut updated, now);
        if updated != current {
            self.commit(writer, Change::Identity(updated)).await?;
        }
        Ok(outcome)
    }

    /// Writes the state file (when configured) with the current state.
    pub async fn persist(self: &Arc<Self>) -> Result<(), Problem> {
        let writer = Arc::clone(&self.writer).lock_owned().await;
        self.commit(writer, Change::Nothing).await
    }

    /// Saves the state with `change` applied, then applies it in memory.
    ///
    /// The save and the update of memory run on a blocking thread that owns `writer`: when the
    /// request that asked for the change is dropped mid-save (its client went away), the save
    /// still finishes or fails on its own, and the next change waits for it instead of racing
    /// it for the file.
    async fn commit(
        self: &Arc<Self>,
        writer: OwnedMutexGuard<()>,
        change: Change,
    ) -> Result<(), Problem> {
        let Some(path) = self.config.state_file.clone() else {
            change.apply(&mut self.write_store(), &self.dossiers);
            return Ok(());
        };
        let snapshot = self.snapshot_with(&change);
        let state = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _writer = writer;
            snapshot.save(&path)?;
            change.apply(&mut state.write_store(), &state.dossiers);
            Ok(())
        })
        .await
        .map_err(|error| Problem::internal(format!("Saving the state failed: {error}.")))?
        .map_err(|error: StateError| {
            Problem::internal(format!(
                "The change was not made because saving the state failed: {error}. Check that \
                 the state file's directory is writable."
            ))
        })
    }

    /// The state file's content once `change` is applied.
    fn snapshot_with(&self, change: &Change) -> StateFile {
        let store = self.read_store();
        let mut sessions: Vec<SessionRecord> = match change {
            Change::Clear => Vec::new(),
            Change::Nothing | Change::Identity(_) => store.sessions.values().cloned().collect(),
            Change::Put(changed) => store
                .sessions
                .values()
                .filter(|record| record.id != changed.id)
                .chain(std::iter::once(changed.as_ref()))
                .cloned()
                .collect(),
        };
        let identity = match change {
            Change::Identity(identity) => identity.clone(),
            _ => store.identity.clone(),
        };
        drop(store);
        sessions.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        StateFile {
            version: STATE_VERSION,
            signing_key_pem: self
                .keep_key_in_state
                .then(|| self.idp.key().pkcs8_pem().to_owned()),
            sessions,
            identity,
        }
    }
}

/// The session a read (of the session, a dataset or a file) is about, settled to now. With
/// `complete_on_read`, a customer still waiting completes first, so the read sees delivered
/// data; whatever happened before the first read (a resend, an extension) met a waiting
/// customer.
pub(crate) async fn read(state: &Arc<AppState>, id: Uuid) -> Result<Context, Problem> {
    if state.config.complete_on_read
        && matches!(
            state.context(id)?.record.progress,
            Progress::WaitingForCustomer { .. }
        )
    {
        state
            .mutate(id, |record, _| {
                if matches!(record.progress, Progress::WaitingForCustomer { .. }) {
                    record.complete(Utc::now());
                }
                Ok(())
            })
            .await?;
    }
    state.context(id)
}

/// One change to the sessions.
enum Change {
    /// Adds or replaces a session.
    Put(Box<SessionRecord>),
    /// Forgets every session.
    Clear,
    /// Saves the state as it is.
    Nothing,
    /// Replaces the identity provider's state.
    Identity(IdentityState),
}

impl Change {
    fn apply(self, store: &mut Store, dossiers: &DossierCache) {
        match self {
            Change::Put(record) => {
                store.sessions.insert(record.id, *record);
            }
            Change::Clear => {
                store.sessions.clear();
                dossiers.clear();
            }
            Change::Nothing => {}
            Change::Identity(identity) => store.identity = identity,
        }
    }
}

fn not_found(id: Uuid) -> Problem {
    Problem::not_found(format!("There is no session with id {id}."))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use chrono::Duration as ChronoDuration;
    use creditdata_client::types::DataPackageInput;

    use super::*;
    use crate::idp::SigningKey;
    use crate::store::{CountryRequest, PackageRequest, Progress, SourceOverride};

    fn state_with_file(path: std::path::PathBuf) -> Arc<AppState> {
        let config = MockConfig {
            state_file: Some(path),
            ..MockConfig::default()
        };
        let idp = Arc::new(IdentityProvider::new(
            "http://127.0.0.1:1/realms/consumer".into(),
            config.audience.clone(),
            Duration::from_secs(300),
            config.client_id.clone(),
            config.client_secret.clone(),
            SigningKey::generate().expect("key"),
        ));
        let description = Description::load(None).expect("the embedded description");
        Arc::new(AppState::new(
            config,
            idp,
            Store::default(),
            true,
            description,
        ))
    }

    fn record() -> SessionRecord {
        let now = Utc::now();
        SessionRecord {
            id: Uuid::new_v4(),
            created_at: now,
            created_by_name: "me".into(),
            organizational_unit_name: None,
            subject_email: "a@example.com".into(),
            countries: vec![CountryRequest {
                country: "FIN".into(),
                packages: vec![PackageRequest {
                    package: DataPackageInput::Score,
                    requested_at: now,
                    consented_at: None,
                }],
            }],
            deadline: now + ChronoDuration::days(7),
            progress: Progress::WaitingForCustomer { since: now },
            notifications: vec![],
            source_overrides: BTreeMap::new(),
            described_members: Default::default(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the read guard is held on purpose, to keep a save in flight"
    )]
    async fn item_13_a_dropped_handler_leaves_no_second_writer() {
        let directory = tempfile::tempdir().expect("tempdir");
        let path = directory.path().join("state.json");
        let state = state_with_file(path.clone());
        let session = record();
        let id = session.id;
        state.insert(session).await.expect("insert");

        // While this reader holds the sessions, a save in flight cannot finish (it applies its
        // change after writing the file), so it is certainly mid-save when its handler goes.
        let reader = state.read_store();
        let mut first = Box::pin(state.mutate(id, |record, _| {
            record
                .source_overrides
                .insert("FIRST".into(), SourceOverride::Error);
            Ok(())
        }));
        assert!(futures::poll!(&mut first).is_pending());
        drop(first);
        assert!(
            state.writer.try_lock().is_err(),
            "the dropped handler's save no longer holds the writer lock: a second save could race it"
        );
        drop(reader);

        // The next change waits for that save, then builds on it.
        state
            .mutate(id, |record, _| {
                record
                    .source_overrides
                    .insert("SECOND".into(), SourceOverride::Success);
                Ok(())
            })
            .await
            .expect("second change");
        let in_memory: Vec<String> = state.read_store().sessions[&id]
            .source_overrides
            .keys()
            .cloned()
            .collect();
        assert_eq!(in_memory, ["FIRST", "SECOND"]);
        let saved = StateFile::load(&path).expect("load").expect("saved");
        let on_disk: Vec<String> = saved.sessions[0].source_overrides.keys().cloned().collect();
        assert_eq!(on_disk, in_memory);
        let files = std::fs::read_dir(directory.path()).expect("dir").count();
        assert_eq!(files, 1, "no temporary file is left behind");
    }
}
