//! `cargo xtask`: runs the creditdata generation pipeline.

use clap::Parser;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "creditdata maintenance tasks")]
enum Command {}

fn main() -> std::process::ExitCode {
    let _ = Command::parse();
    std::process::ExitCode::SUCCESS
}
