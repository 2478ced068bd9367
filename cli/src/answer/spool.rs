//! An answer's bytes taken as they arrive into an unnamed temporary file, never memory.

use std::io::{self, Seek, Write};

use creditdata_client::Error;
use creditdata_client::download::BodyStream;
use futures::StreamExt;

/// An answer's bytes in an unnamed temporary file (removed by the system when closed, or when
/// the process ends however it ends), rewound, and how many there are.
pub struct Spooled {
    pub file: std::fs::File,
    pub bytes: u64,
}

/// Why an answer could not be taken.
#[derive(Debug)]
pub enum SpoolError {
    /// The service or the network failed (the client's error, with its status).
    Client(Error),
    /// More than the bound: the limit.
    TooLarge(u64),
    /// The temporary file could not be written.
    Local(String),
}

/// Writes `body` to an unnamed temporary file, at most `max_bytes` of it, and rewinds it:
/// memory holds one chunk at a time, whatever the answer's size.
pub async fn spool(mut body: BodyStream, max_bytes: u64) -> Result<Spooled, SpoolError> {
    let local = |e: io::Error| SpoolError::Local(format!("a temporary file: {e}"));
    let mut file = tempfile::tempfile().map_err(local)?;
    let mut bytes: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(SpoolError::Client)?;
        bytes += chunk.len() as u64;
        if bytes > max_bytes {
            return Err(SpoolError::TooLarge(max_bytes));
        }
        file.write_all(&chunk).map_err(local)?;
    }
    file.rewind().map_err(local)?;
    Ok(Spooled { file, bytes })
}
