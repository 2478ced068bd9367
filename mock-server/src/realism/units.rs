//! Durations as the command line writes them, and the seeded random streams every realism
//! layer (and the session ids) draw from.

use rand::{RngCore as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

/// Session id number `n` under `seed`: random-looking (a version 4 UUID, as the service's), the
/// same for the same seed and `n`.
pub(crate) fn session_id(seed: u64, n: u64) -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    keyed_rng(seed, b"sessions", 0, n).fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// An independent random stream for draw number `index` of `domain`/`stream` under `seed`: the
/// key of a ChaCha generator, so that one draw never depends on how many others were made.
pub(crate) fn keyed_rng(seed: u64, domain: &[u8; 8], stream: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(domain);
    key[16..24].copy_from_slice(&stream.to_le_bytes());
    key[24..].copy_from_slice(&index.to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// A duration written `250ms`, `2s`, `1m` or `500us` (a unit is required: a bare number is ambiguous
/// between the mock's other options, which count seconds, and latencies, usually milliseconds).
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "`{text}` is not a duration such as 250ms, 2s or 1m"
        ));
    }
    let too_long = || format!("`{text}` is too long");
    let number: u64 = number.parse().map_err(|_| too_long())?;
    let micros_per_unit: u64 = match unit {
        "us" => 1,
        "ms" => 1_000,
        "s" => 1_000_000,
        "m" | "min" => 60_000_000,
        "" => {
            return Err(format!("`{text}` has no unit; write {text}ms or {text}s"));
        }
        _ => return Err(format!("`{text}` has an unknown unit; use ms, s or m")),
    };
    let micros = number.checked_mul(micros_per_unit).ok_or_else(too_long)?;
    Ok(std::time::Duration::from_micros(micros))
}

/// `d` as the command line writes it: `250ms`, `2s`, `1m`.
pub(crate) fn format_duration(d: std::time::Duration) -> String {
    let nanos = d.subsec_nanos();
    let millis = d.as_millis();
    if !nanos.is_multiple_of(1_000) {
        format!("{}ns", d.as_nanos())
    } else if !nanos.is_multiple_of(1_000_000) {
        format!("{}us", d.as_micros())
    } else if millis == 0 || !millis.is_multiple_of(1_000) {
        format!("{millis}ms")
    } else if millis.is_multiple_of(60_000) {
        format!("{}m", millis / 60_000)
    } else {
        format!("{}s", millis / 1_000)
    }
}
