//! `socair convert SRC DST --from F --to T [--rules R]`.

use super::context::Context;
use crate::cli::exit::{Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::convert::convert_path;
use crate::convert::rules::Rules;
use std::path::Path;

/// `socair convert`: writes the converted model and says what it carried; a refusal exits 1.
pub fn convert(
    ctx: Context,
    src: &Path,
    dst: &Path,
    from: &str,
    to: &str,
    rules: Option<&str>,
) -> Result<u8, Fatal> {
    let rules = Rules::select(rules, None).map_err(Fatal)?;
    let set = ctx.plugins_warned();
    match convert_path(src, dst, from, to, &set, &ctx.readers, rules).map_err(Fatal)? {
        Ok(done) => {
            eprintln!(
                "socair: converted {} ({from}) to {} ({to}) under {}: {} {}, {} {}, sha256 {}",
                src.display(),
                dst.display(),
                done.rules.id(),
                done.conversion.tensors.len(),
                if done.conversion.tensors.len() == 1 {
                    "tensor"
                } else {
                    "tensors"
                },
                done.conversion.aliases.len(),
                if done.conversion.aliases.len() == 1 {
                    "alias"
                } else {
                    "aliases"
                },
                done.sha256
            );
            for n in &done.conversion.not_carried {
                eprintln!("socair: not carried: {n}");
            }
            Ok(EXIT_OK)
        }
        Err(refusal) => {
            eprintln!("socair: refused: {refusal}");
            Ok(EXIT_NEGATIVE)
        }
    }
}
