//! `socair serve`: the store's promoted repositories as a Hugging Face Hub endpoint. The
//! server is the serve crate's; this prints the address it listens on (standard output, for
//! a script or a test to read) and returns the exit code.

use crate::cli::exit::{Fatal, EXIT_OK};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `socair serve [--listen ADDR] [--tokens FILE] [--header-timeout SECS] [--quiet]
/// [--upstream URL --key K] [--store S]`.
pub fn serve(
    ctx: super::context::Context,
    store: &Path,
    listen: String,
    tokens: Option<PathBuf>,
    header_timeout: u64,
    quiet: bool,
    upstream: Option<(String, PathBuf)>,
) -> Result<u8, Fatal> {
    // The key and the readers are loaded before the server listens: a key that cannot be
    // read stops it there.
    let upstream = match upstream {
        Some((url, key)) => {
            let key = socair_signing::signing::load_signing_key(&key)
                .map_err(|e| Fatal(e.to_string()))?;
            Some((url, key, ctx.plugins_warned()))
        }
        None => None,
    };
    let options = socair_serve::Options {
        upstream,
        store: store.to_owned(),
        listen,
        tokens,
        access_log: (!quiet).then(|| {
            std::sync::Arc::new(|line: &str| eprintln!("socair serve: {line}"))
                as socair_serve::AccessLog
        }),
        header_timeout: std::time::Duration::from_secs(header_timeout),
    };
    let shown = store.display().to_string();
    socair_serve::serve(options, |addr| {
        println!("http://{addr}");
        let _ = std::io::stdout().flush();
        eprintln!("socair: serving the promoted repositories of {shown} at http://{addr} (HF_ENDPOINT=http://{addr})");
    })
    .map_err(Fatal)?;
    eprintln!("socair: stopped serving {shown}");
    Ok(EXIT_OK)
}
