//! The token cache over any way of obtaining tokens ([`FetchToken`]): a token reused until a
//! margin before its expiry, and one token request in flight however many calls wait for it.
//! It knows no grant: the grants (client credentials, a person's sign-in) plug in from above.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

use super::access_token::AccessToken;
use super::error::AuthError;
use super::limits::MAX_TOKEN_LIFETIME;

/// Tokens are replaced this long before the provider says they expire, or a fifth of their
/// lifetime before if that is shorter, so a call never leaves with a token about to lapse.
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// When a token obtained at `obtained` with `lifetime` (`expires_in`) should be replaced:
/// `obtained` itself for a token without a lifetime or with a lifetime of zero (use once).
pub(crate) fn refresh_deadline(obtained: Instant, lifetime: Option<Duration>) -> Instant {
    let lifetime = lifetime.unwrap_or(Duration::ZERO).min(MAX_TOKEN_LIFETIME);
    let usable = lifetime.saturating_sub(REFRESH_MARGIN.min(lifetime / 5));
    obtained.checked_add(usable).unwrap_or(obtained)
}

/// A new token and its lifetime (`expires_in`, when the answer has one).
pub(crate) type Fetched = (AccessToken, Option<Duration>);

/// What [`FetchToken::fetch`] returns: boxed, because the cache holds its grant as a trait
/// object, and a token request's future is large (every call's future would otherwise carry
/// its size for a path taken once every few minutes).
pub(crate) type FetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Fetched, AuthError>> + Send + 'a>>;

/// A way of obtaining access tokens (a grant). The cache calls it with its single-flight lock
/// held, so one grant never has two requests in flight.
pub(crate) trait FetchToken: fmt::Debug + Send + Sync {
    /// A new token and its lifetime. `after_rejection`: the service refused the current token,
    /// which must not be handed out again.
    fn fetch(&self, after_rejection: bool) -> FetchFuture<'_>;
}

/// Tokens of one grant, cached and fetched by one request at a time.
pub(crate) struct TokenCache {
    grant: Box<dyn FetchToken>,
    /// The current token; read without waiting by every call.
    current: RwLock<Option<Cached>>,
    /// Held across a token request (single flight).
    refresh: Mutex<RefreshState>,
    /// Completed token requests, successful or not: a waiter that sees it change shares the
    /// outcome instead of asking again.
    completed: AtomicU64,
}

#[derive(Clone)]
struct Cached {
    token: AccessToken,
    refresh_at: Instant,
}

#[derive(Default)]
struct RefreshState {
    /// The outcome of the last token request, for the calls that waited for it.
    last_outcome: Option<Result<AccessToken, AuthError>>,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.grant.fmt(f)
    }
}

impl TokenCache {
    pub(crate) fn new(grant: Box<dyn FetchToken>) -> Self {
        TokenCache {
            grant,
            current: RwLock::new(None),
            refresh: Mutex::new(RefreshState::default()),
            completed: AtomicU64::new(0),
        }
    }

    /// A token valid for a while yet: the cached one, or a new one.
    pub(crate) async fn token(&self) -> Result<AccessToken, AuthError> {
        // Read before the cache: any token request completing after this point was made for a
        // call in this one's situation, and its token is good for it too.
        let seen = self.completed.load(Ordering::Acquire);
        match self.fresh() {
            Some(token) => Ok(token),
            // Boxed: the token request's future is large, and every call's future would carry
            // (and move) its size for a path taken once every few minutes.
            None => Box::pin(self.refresh(None, seen)).await,
        }
    }

    /// A replacement for `rejected`, which the service refused (401). When another call
    /// already replaced it, that token is returned without a new request.
    pub(crate) async fn replace(&self, rejected: &AccessToken) -> Result<AccessToken, AuthError> {
        let seen = self.completed.load(Ordering::Acquire);
        Box::pin(self.refresh(Some(rejected), seen)).await
    }

    fn fresh(&self) -> Option<AccessToken> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        current
            .as_ref()
            .filter(|cached| Instant::now() < cached.refresh_at)
            .map(|cached| cached.token.clone())
    }

    fn store(&self, cached: Option<Cached>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = cached;
    }

    /// A new token, or the outcome of a token request that completed after `seen` (the count
    /// of completed requests when this call found no usable token). Sharing that outcome,
    /// rather than looking at the cache again, is what keeps waiting calls from each asking for
    /// a token of their own when it is already stale on arrival (use-once tokens, lifetimes
    /// shorter than the request took).
    async fn refresh(
        &self,
        rejected: Option<&AccessToken>,
        seen: u64,
    ) -> Result<AccessToken, AuthError> {
        let mut state = self.refresh.lock().await;
        if self.completed.load(Ordering::Acquire) != seen {
            match &state.last_outcome {
                Some(Ok(token)) if !rejected.is_some_and(|r| r.same_as(token)) => {
                    return Ok(token.clone());
                }
                Some(Err(failure)) => return Err(failure.clone()),
                _ => {}
            }
        }
        if let Some(token) = self.fresh() {
            if !rejected.is_some_and(|r| r.same_as(&token)) {
                return Ok(token);
            }
            // Known to be refused: no other call should send it while a new one is fetched.
            self.store(None);
        }
        let started = Instant::now();
        let outcome = match self.grant.fetch(rejected.is_some()).await {
            Ok((token, lifetime)) => {
                self.store(Some(Cached {
                    token: token.clone(),
                    refresh_at: refresh_deadline(started, lifetime),
                }));
                Ok(token)
            }
            Err(error) => {
                tracing::debug!(
                    error = &error as &dyn std::error::Error,
                    "token request failed"
                );
                Err(error)
            }
        };
        state.last_outcome = Some(outcome.clone());
        self.completed.fetch_add(1, Ordering::AcqRel);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grant that must not be asked: the tests below look at the cache alone.
    #[derive(Debug)]
    struct NeverAsked;

    impl FetchToken for NeverAsked {
        fn fetch(&self, _: bool) -> FetchFuture<'_> {
            panic!("the cache asked its grant although it held a fresh token")
        }
    }

    #[test]
    fn tokens_are_replaced_a_margin_before_expiry() {
        let t0 = Instant::now();
        // Production's five-minute tokens: 30 s early.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::from_secs(300))),
            t0 + Duration::from_secs(270)
        );
        // Short-lived tokens: a fifth of their lifetime early.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::from_secs(10))),
            t0 + Duration::from_secs(8)
        );
        // No lifetime, or zero: use once.
        assert_eq!(refresh_deadline(t0, Some(Duration::ZERO)), t0);
        assert_eq!(refresh_deadline(t0, None), t0);
        // Any lifetime is clamped, never an overflow.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::MAX)),
            t0 + MAX_TOKEN_LIFETIME - REFRESH_MARGIN
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_cached_token_goes_stale_at_its_deadline_not_at_expiry() {
        let cache = TokenCache::new(Box::new(NeverAsked));
        let token = AccessToken::new("abc").unwrap();
        cache.store(Some(Cached {
            token: token.clone(),
            refresh_at: refresh_deadline(Instant::now(), Some(Duration::from_secs(300))),
        }));
        tokio::time::advance(Duration::from_secs(269)).await;
        assert!(cache.token().await.is_ok_and(|t| t.same_as(&token)));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(
            cache.fresh().is_none(),
            "30 s before expiry the token must be replaced"
        );
    }
}
