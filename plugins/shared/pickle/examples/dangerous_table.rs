//! Prints the rows `GRAMMAR.md`'s table of dangerous modules and members carries, from the
//! tables the machine judges by (a test keeps the two equal). Usage:
//! `cargo run -p socair-pickle --example dangerous_table`

use socair_pickle::globals::{DANGEROUS_MEMBERS, DANGEROUS_MODULES};

fn main() {
    for e in DANGEROUS_MODULES.iter().chain(DANGEROUS_MEMBERS) {
        println!("| `{}` | {} | {} |", e.path, e.does, e.source);
    }
}
