//! The state shared by all handlers.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use chrono::{DateTime, Utc};
use creditdata_client::types::Session;
use uuid::Uuid;

use crate::auth::IdentityProvider;
use crate::config::MockConfig;
use crate::data::{Dossier, DossierCache};
use crate::problem::Problem;
use crate::store::{STATE_VERSION, SessionRecord, StateFile, Store};
use crate::views::View;

/// Everything a request handler needs.
pub struct AppState {
    /// Configuration.
    pub config: MockConfig,
    /// The identity provider.
    pub idp: Arc<IdentityProvider>,
    store: RwLock<Store>,
    dossiers: DossierCache,
    persist_lock: tokio::sync::Mutex<()>,
    /// Whether the state file should carry the signing key (it was generated here).
    keep_key_in_state: bool,
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
    ) -> Self {
        AppState {
            config,
            idp,
            store: RwLock::new(store),
            dossiers: DossierCache::default(),
            persist_lock: tokio::sync::Mutex::new(()),
            keep_key_in_state,
        }
    }

    /// Shared access to the sessions.
    pub fn read_store(&self) -> RwLockReadGuard<'_, Store> {
        self.store
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Exclusive access to the sessions.
    pub fn write_store(&self) -> RwLockWriteGuard<'_, Store> {
        self.store
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets every session.
    pub fn clear(&self) {
        self.write_store().sessions.clear();
        self.dossiers.clear();
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

    /// Settles session `id`, applies `change` (all or nothing), persists, and returns the new
    /// API view.
    pub async fn mutate(
        &self,
        id: Uuid,
        change: impl FnOnce(&mut SessionRecord, &MockConfig) -> Result<(), Problem>,
    ) -> Result<Session, Problem> {
        let now = Utc::now();
        let record = {
            let mut store = self.write_store();
            let stored = store.sessions.get_mut(&id).ok_or_else(|| not_found(id))?;
            stored.settle(now, &self.config);
            let mut changed = stored.clone();
            change(&mut changed, &self.config)?;
            *stored = changed.clone();
            changed
        };
        self.persist().await?;
        Ok(self.session_view(&record.settled(now, &self.config)))
    }

    /// Writes the state file (when configured), atomically; writes are serialized so the file
    /// always holds the latest state.
    pub async fn persist(&self) -> Result<(), Problem> {
        let Some(path) = self.config.state_file.clone() else {
            return Ok(());
        };
        let _guard = self.persist_lock.lock().await;
        let mut sessions: Vec<SessionRecord> =
            self.read_store().sessions.values().cloned().collect();
        sessions.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        let snapshot = StateFile {
            version: STATE_VERSION,
            signing_key_pem: self
                .keep_key_in_state
                .then(|| self.idp.key().pkcs8_pem().to_owned()),
            sessions,
        };
        tokio::task::spawn_blocking(move || snapshot.save(&path))
            .await
            .map_err(|error| Problem::internal(format!("saving the state failed: {error}")))?
            .map_err(|error| Problem::internal(format!("saving the state failed: {error}")))
    }
}

fn not_found(id: Uuid) -> Problem {
    Problem::not_found(format!("There is no session with id {id}."))
}
