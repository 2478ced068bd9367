//! Authorization requests waiting for a person: what the client asked for, how far the person
//! got (sign-in, then consent), and the browser and form each request is bound to. They last
//! minutes, so they are kept in memory, bounded.
//!
//! A request is bound twice: to a cookie that names the browser that started it (another
//! browser cannot finish it) and to a CSRF token in its form (another site cannot post it);
//! both are compared in constant time.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Duration, Utc};

use super::grants::{digest, random_token};
use super::users::{ClientKind, TestUser, constant_time_eq};

/// How long a person has to sign in and answer the consent question.
const PENDING_LIFETIME: Duration = Duration::minutes(10);
/// Most authorization requests pending at once (anyone can start one).
const MOST_PENDING: usize = 1000;
/// Wrong passwords accepted for one request before it is abandoned.
const MOST_FAILED_SIGN_INS: u8 = 5;

/// What the client asked for, once checked.
#[derive(Clone)]
pub struct AuthorizationRequest {
    /// The client.
    pub client_id: String,
    /// Whether it holds a secret.
    pub kind: ClientKind,
    /// Where the answer goes.
    pub redirect_uri: String,
    /// The requested scopes.
    pub scopes: Vec<String>,
    /// The client's `state`, echoed back.
    pub state: Option<String>,
    /// The `nonce` for the ID token.
    pub nonce: Option<String>,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
}

#[derive(Clone)]
enum Stage {
    SignIn {
        failures: u8,
    },
    Consent {
        username: String,
        auth_time: DateTime<Utc>,
    },
}

struct Pending {
    request: AuthorizationRequest,
    browser_digest: String,
    csrf: String,
    started_at: DateTime<Utc>,
    stage: Stage,
}

/// Why a form posted for a pending request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormRefusal {
    /// The request expired, was finished, or never existed.
    Ended,
    /// The browser cookie is missing or names another browser.
    OtherBrowser,
    /// The form carries no CSRF token.
    NoCsrf,
    /// The form's CSRF token is not the request's.
    WrongCsrf,
}

/// What a sign-in attempt led to.
pub enum SignInOutcome<'u> {
    /// The request expired or was finished.
    Ended,
    /// The person already signed in for this request; consent is awaited.
    AlreadySignedIn,
    /// A wrong user name or password: the form is shown again.
    Retry {
        /// The form's CSRF token.
        csrf: String,
        /// The client asking.
        client_id: String,
    },
    /// Too many wrong passwords: the request is gone.
    Abandoned(AuthorizationRequest),
    /// Signed in: consent is next, with a new CSRF token (one seen before signing in is worth
    /// nothing after).
    SignedIn {
        /// The consent form's CSRF token.
        csrf: String,
        /// What the client asked for.
        request: AuthorizationRequest,
        /// Who signed in.
        user: &'u TestUser,
    },
}

/// The authorization requests waiting for the person.
#[derive(Default)]
pub struct PendingRequests {
    requests: Mutex<HashMap<String, Pending>>,
}

impl PendingRequests {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `request`, started in the browser named by the cookie value `browser`, waiting
    /// for sign-in; the answer is the request's id and its form's CSRF token.
    pub fn start(&self, request: AuthorizationRequest, browser: &str) -> (String, String) {
        self.start_at(request, browser, Utc::now())
    }

    fn start_at(
        &self,
        request: AuthorizationRequest,
        browser: &str,
        started_at: DateTime<Utc>,
    ) -> (String, String) {
        let id = random_token();
        let csrf = random_token();
        let pending = Pending {
            request,
            browser_digest: digest(browser),
            csrf: csrf.clone(),
            started_at,
            stage: Stage::SignIn { failures: 0 },
        };
        let now = Utc::now();
        let mut requests = self.lock();
        requests.retain(|_, pending| pending.started_at + PENDING_LIFETIME > now);
        if requests.len() >= MOST_PENDING
            && let Some(oldest) = requests
                .iter()
                .min_by_key(|(_, pending)| pending.started_at)
                .map(|(id, _)| id.clone())
        {
            requests.remove(&oldest);
        }
        requests.insert(id.clone(), pending);
        (id, csrf)
    }

    /// Whether a form posted for request `id` from the browser named `browser`, carrying
    /// `csrf`, belongs to a live request.
    pub fn check_form(
        &self,
        id: &str,
        browser: Option<&str>,
        csrf: Option<&str>,
    ) -> Result<(), FormRefusal> {
        let requests = self.lock();
        let now = Utc::now();
        let Some(pending) = requests
            .get(id)
            .filter(|pending| pending.started_at + PENDING_LIFETIME > now)
        else {
            return Err(FormRefusal::Ended);
        };
        let same_browser = browser.is_some_and(|browser| {
            constant_time_eq(
                digest(browser).as_bytes(),
                pending.browser_digest.as_bytes(),
            )
        });
        if !same_browser {
            return Err(FormRefusal::OtherBrowser);
        }
        match csrf {
            None => Err(FormRefusal::NoCsrf),
            Some(token) if !constant_time_eq(token.as_bytes(), pending.csrf.as_bytes()) => {
                Err(FormRefusal::WrongCsrf)
            }
            Some(_) => Ok(()),
        }
    }

    /// Records a sign-in attempt for request `id`: `user` is the user whose password matched,
    /// `None` after a wrong user name or password.
    pub fn sign_in<'u>(&self, id: &str, user: Option<&'u TestUser>) -> SignInOutcome<'u> {
        let now = Utc::now();
        let mut requests = self.lock();
        let Some(pending) = requests.get_mut(id) else {
            return SignInOutcome::Ended;
        };
        let Stage::SignIn { failures } = pending.stage else {
            return SignInOutcome::AlreadySignedIn;
        };
        let Some(user) = user else {
            let failures = failures.saturating_add(1);
            if failures >= MOST_FAILED_SIGN_INS {
                let request = pending.request.clone();
                requests.remove(id);
                return SignInOutcome::Abandoned(request);
            }
            pending.stage = Stage::SignIn { failures };
            return SignInOutcome::Retry {
                csrf: pending.csrf.clone(),
                client_id: pending.request.client_id.clone(),
            };
        };
        pending.csrf = random_token();
        pending.stage = Stage::Consent {
            username: user.username.clone(),
            auth_time: now,
        };
        SignInOutcome::SignedIn {
            csrf: pending.csrf.clone(),
            request: pending.request.clone(),
            user,
        }
    }

    /// Ends request `id` once the person has signed in for it: what the client asked for, who
    /// signed in and when. `None` (and the request kept) before sign-in.
    pub fn take_consented(
        &self,
        id: &str,
    ) -> Option<(AuthorizationRequest, String, DateTime<Utc>)> {
        let mut requests = self.lock();
        match requests.get(id).map(|pending| pending.stage.clone()) {
            Some(Stage::Consent {
                username,
                auth_time,
            }) => requests
                .remove(id)
                .map(|pending| (pending.request, username, auth_time)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> AuthorizationRequest {
        AuthorizationRequest {
            client_id: "creditdata-cli".into(),
            kind: ClientKind::Public,
            redirect_uri: "http://127.0.0.1:1/cb".into(),
            scopes: vec!["openid".into()],
            state: None,
            nonce: None,
            code_challenge: "c".repeat(43),
        }
    }

    #[test]
    fn a_pending_request_past_its_lifetime_cannot_be_finished() {
        let pending = PendingRequests::default();
        let browser = random_token();
        let (fresh, csrf) = pending.start(request(), &browser);
        assert_eq!(
            pending.check_form(&fresh, Some(&browser), Some(&csrf)),
            Ok(())
        );
        // Started last, so nothing pruned it: only the lookup can tell it is too old.
        let (stale, csrf) = pending.start_at(
            request(),
            &browser,
            Utc::now() - PENDING_LIFETIME - Duration::seconds(1),
        );
        assert_eq!(
            pending.check_form(&stale, Some(&browser), Some(&csrf)),
            Err(FormRefusal::Ended)
        );
    }
}
