//! `creditdata download ...` and `creditdata statement rows`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use creditdata_client::Client;
use creditdata_client::download::{Download, DownloadExt, sanitize_file_name};
use futures::{StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::cli::{DownloadCommand, StatementCommand, TargetArgs};
use crate::failure::Failure;
use crate::output::Output;
use crate::table::{Table, pairs};

/// Where a download is written.
enum Destination {
    /// Standard output.
    Stdout,
    /// This file.
    File(PathBuf),
}

/// The file a download goes to: `-o` as a file, `-o` as a directory plus the server's name (or
/// the fallback), or the current directory plus that name. Refuses an existing file unless
/// `--force` (early, before the body is fetched; [`Temporary::put_in_place`] makes sure).
fn destination(
    target: &TargetArgs,
    server_name: Option<&str>,
    fallback: &str,
) -> Result<Destination, Failure> {
    let name = || {
        server_name
            .map(str::to_string)
            .or_else(|| sanitize_file_name(fallback))
            .unwrap_or_else(|| "download".to_string())
    };
    let path = match &target.out {
        Some(out) if out.as_os_str() == "-" => return Ok(Destination::Stdout),
        Some(out) if out.is_dir() => out.join(name()),
        Some(out) if out.as_os_str().to_string_lossy().ends_with(['/', '\\']) => {
            return Err(Failure::Local(format!(
                "{}: no such directory",
                out.display()
            )));
        }
        Some(out) => out.clone(),
        None => PathBuf::from(name()),
    };
    if !target.force && path.exists() {
        return Err(Failure::Local(format!(
            "{} already exists; use --force to replace it",
            path.display()
        )));
    }
    Ok(Destination::File(path))
}

/// A progress bar on stderr, when stderr is a terminal.
fn progress_bar(total: Option<u64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    Some(bar)
}

/// What kind of file a download is: a response's `Content-Type`, or a source file's `type`
/// (`XML`, `JSON`, ...).
enum Kind<'a> {
    ContentType(Option<&'a str>),
    SourceFileType(Option<&'a str>),
}

/// What was saved, printed after a download.
fn report_saved(out: Output, path: &Path, bytes: u64, kind: Kind<'_>) -> Result<(), Failure> {
    let (json_key, label, value) = match kind {
        Kind::ContentType(v) => ("contentType", "content type", v),
        Kind::SourceFileType(v) => ("type", "type", v),
    };
    if out.is_json() {
        let mut document = Map::new();
        document.insert("path".into(), json!(path));
        document.insert("bytes".into(), json!(bytes));
        document.insert(json_key.into(), json!(value));
        return out.document(&document);
    }
    out.text(&pairs([
        ("saved", path.display().to_string()),
        ("bytes", bytes.to_string()),
        (label, value.unwrap_or("-").to_string()),
    ]))
}

/// Writes a streamed download where `target` says, with a progress bar.
async fn save(
    out: Output,
    download: Download,
    target: &TargetArgs,
    fallback: &str,
) -> Result<(), Failure> {
    let destination = destination(target, download.file_name(), fallback)?;
    let content_type = download.content_type().map(str::to_string);
    let bar = progress_bar(download.content_length());
    let download = match &bar {
        Some(bar) => {
            let bar = bar.clone();
            download.on_progress(move |p| bar.set_position(p.received))
        }
        None => download,
    };
    let result = match destination {
        Destination::Stdout => {
            let mut stdout = tokio::io::stdout();
            download
                .write_to(&mut stdout)
                .await
                .map(|_| None)
                .map_err(Failure::from)
        }
        Destination::File(path) => write_file(download, &path, target.force)
            .await
            .map(|bytes| Some((path, bytes))),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(Some((path, bytes))) => report_saved(
            out,
            &path,
            bytes,
            Kind::ContentType(content_type.as_deref()),
        ),
        Ok(None) => Ok(()),
        Err(Failure::Client {
            error: creditdata_client::Error::Io { source, .. },
            ..
        }) if source.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::BrokenPipe),
        Err(failure) => Err(failure),
    }
}

/// Streams the body into a [`Temporary`] next to `path`, then puts it in place.
async fn write_file(download: Download, path: &Path, force: bool) -> Result<u64, Failure> {
    let mut body = download.bytes_stream();
    let mut temporary = Temporary::next_to(path)?;
    let mut written: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        temporary.write(&chunk)?;
        written += chunk.len() as u64;
    }
    temporary.put_in_place(path, force)?;
    Ok(written)
}

/// A download being written: a temporary file next to its target, readable by the owner only,
/// removed if anything fails (or the command is interrupted) before it is put in place.
struct Temporary {
    file: tempfile::NamedTempFile,
    target: PathBuf,
}

impl Temporary {
    fn next_to(target: &Path) -> Result<Self, Failure> {
        let file = tempfile::Builder::new()
            .prefix(".creditdata-")
            .suffix(".part")
            .tempfile_in(directory_of(target))
            .map_err(|e| file_failure(target, e))?;
        Ok(Temporary {
            file,
            target: target.to_path_buf(),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.file
            .write_all(bytes)
            .map_err(|e| file_failure(&self.target, e))
    }

    /// Syncs the file and moves it to `path`. Without `force` the move fails if `path` exists
    /// at that moment (even if it appeared after [`destination`] looked): the existing file is
    /// kept and the download discarded.
    fn put_in_place(self, path: &Path, force: bool) -> Result<(), Failure> {
        self.file
            .as_file()
            .sync_all()
            .map_err(|e| file_failure(path, e))?;
        let placed = if force {
            self.file.persist(path).map(drop)
        } else {
            self.file.persist_noclobber(path).map(drop)
        };
        placed.map_err(|error| {
            if error.error.kind() == std::io::ErrorKind::AlreadyExists {
                Failure::Local(format!(
                    "{} appeared while the download was in progress; it was kept and the \
                     download discarded (use --force to replace it)",
                    path.display()
                ))
            } else {
                file_failure(path, error.error)
            }
        })?;
        // Makes the new name durable; the file is complete and in place whatever happens.
        #[cfg(unix)]
        let _ = std::fs::File::open(directory_of(path)).and_then(|d| d.sync_all());
        Ok(())
    }
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

fn file_failure(path: &Path, error: std::io::Error) -> Failure {
    Failure::Local(format!("{}: {error}", path.display()))
}

/// Refuses `-o -` when stdout is a terminal: a file's bytes are not text for people, and a
/// server's bytes must not drive the terminal. Checked before anything is requested.
fn refuse_raw_bytes_on_a_terminal(target: &TargetArgs) -> Result<(), Failure> {
    let to_stdout = target
        .out
        .as_ref()
        .is_some_and(|out| out.as_os_str() == "-");
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(Failure::Usage(
            "-o - writes the file's raw bytes, which must not go to a terminal; redirect \
             standard output (`> FILE`, `| less`) or give -o a path"
                .to_string(),
        ));
    }
    Ok(())
}

/// Runs a `download` command.
pub async fn run(client: &Client, out: Output, command: DownloadCommand) -> Result<(), Failure> {
    refuse_raw_bytes_on_a_terminal(command.target())?;
    match command {
        DownloadCommand::Pdf { id, target } => {
            let download = client.get_pdf_report().session_id(id).download().await?;
            save(
                out,
                download,
                &target,
                &format!("creditdata-{id}-report.pdf"),
            )
            .await
        }
        DownloadCommand::TransactionsExcel { id, target } => {
            let download = client
                .get_account_statement_transactions_excel()
                .session_id(id)
                .download()
                .await?;
            let fallback = format!("creditdata-{id}-transactions.xlsx");
            save(out, download, &target, &fallback).await
        }
        DownloadCommand::StatementExcel {
            id,
            statement_id,
            target,
        } => {
            let download = client
                .get_account_statement_excel()
                .session_id(id)
                .account_statement_id(statement_id.as_str())
                .download()
                .await?;
            let fallback = format!("creditdata-{id}-statement-{statement_id}.xlsx");
            save(out, download, &target, &fallback).await
        }
        DownloadCommand::StatementTsv {
            id,
            statement_id,
            target,
        } => {
            let download = client
                .get_account_statement_tsv()
                .session_id(id)
                .account_statement_id(statement_id.as_str())
                .download()
                .await?;
            let fallback = format!("creditdata-{id}-statement-{statement_id}.tsv");
            save(out, download, &target, &fallback).await
        }
        DownloadCommand::Attachment {
            id,
            attachment_id,
            target,
        } => {
            let download = client
                .get_attachment_content()
                .session_id(id)
                .attachment_id(attachment_id.as_str())
                .download()
                .await?;
            let fallback = format!("creditdata-{id}-attachment-{attachment_id}");
            save(out, download, &target, &fallback).await
        }
        DownloadCommand::Image {
            id,
            verification_id,
            image_id,
            target,
        } => {
            let download = client
                .get_identity_verification_image_content()
                .session_id(id)
                .verification_id(verification_id.as_str())
                .image_id(image_id.as_str())
                .download()
                .await?;
            let fallback = format!("creditdata-{id}-image-{image_id}");
            save(out, download, &target, &fallback).await
        }
        DownloadCommand::SourceFile {
            id,
            source_file_id,
            target,
        } => {
            let decoded = client.source_file_bytes(id, source_file_id).await?;
            let fallback = format!("creditdata-{id}-source-file-{source_file_id}");
            match destination(&target, decoded.safe_file_name().as_deref(), &fallback)? {
                Destination::Stdout => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&decoded.bytes).map_err(Failure::output)?;
                    stdout.flush().map_err(Failure::output)
                }
                Destination::File(path) => {
                    let mut temporary = Temporary::next_to(&path)?;
                    temporary.write(&decoded.bytes)?;
                    temporary.put_in_place(&path, target.force)?;
                    report_saved(
                        out,
                        &path,
                        decoded.bytes.len() as u64,
                        Kind::SourceFileType(decoded.file_type.as_deref()),
                    )
                }
            }
        }
    }
}

/// Runs a `statement` command.
pub async fn statement(
    client: &Client,
    out: Output,
    command: StatementCommand,
) -> Result<(), Failure> {
    let StatementCommand::Rows { id, statement_id } = command;
    let mut rows = client.account_statement_rows(id, &statement_id);
    let mut table: Option<Table> = None;
    let mut bad_rows = 0u64;
    loop {
        let row = match rows.try_next().await {
            Ok(Some(row)) => row,
            Ok(None) => break,
            // A malformed row does not end the stream: report it and go on.
            Err(creditdata_client::Error::Decode(error)) if error.path.is_some() => {
                crate::terminal::note(&format!("warning: {error}"));
                bad_rows += 1;
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        if out.is_json() {
            let object: Map<String, Value> = row
                .iter()
                .map(|(column, value)| (column.to_string(), Value::String(value.to_string())))
                .collect();
            out.json_line(&object)?;
        } else {
            table
                .get_or_insert_with(|| Table::new(row.columns().iter().cloned()))
                .row(row.values());
        }
    }
    if let Some(table) = table {
        out.text(&table.render())?;
    } else if !out.is_json() {
        crate::terminal::note("the statement has no rows");
    }
    if bad_rows > 0 {
        return Err(Failure::Partial(format!(
            "{bad_rows} row(s) of statement {statement_id} could not be read (see the warnings above)"
        )));
    }
    Ok(())
}
