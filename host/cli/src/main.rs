//! The `socair` binary: parses the command line and hands it to the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match socair::cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with exit 0; usage errors exit 2 (clap's default).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                socair::cli::EXIT_ERROR
            } else {
                socair::cli::EXIT_OK
            });
        }
    };
    socair::cli::run(cli)
}
