//! The commands about socair itself: shell completions and the plugin listing.

use super::context::Context;
use crate::base::output::to_json_bytes;
use crate::cli::args::Cli;
use crate::cli::exit::{Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::cli::listing::PluginListing;
use crate::cli::output::emit;

/// `socair completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Result<u8, Fatal> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "socair", &mut out);
    emit(None, &out)?;
    Ok(EXIT_OK)
}

/// `socair plugins [--json]`: exit 1 when a plugin file was refused.
pub fn plugins(ctx: Context, json: bool) -> Result<u8, Fatal> {
    let set = ctx.plugins();
    let listing = PluginListing::of(&set);
    if json {
        emit(None, &to_json_bytes(&listing))?;
    } else {
        emit(None, listing.to_text().as_bytes())?;
    }
    Ok(if set.refused.is_empty() {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    })
}
