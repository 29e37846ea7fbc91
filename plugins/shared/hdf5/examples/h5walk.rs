//! Prints what socair's HDF5 reader finds in a file: `cargo run -p socair-hdf5 --example
//! h5walk FILE`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: h5walk FILE");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    match socair_hdf5::read(
        &bytes[..],
        socair_hdf5::Options {
            read_data: true,
            ..Default::default()
        },
    ) {
        Err(e) => println!("refused: {e}"),
        Ok(f) => {
            println!(
                "superblock v{} at {}",
                f.superblock_version, f.superblock_at
            );
            for o in &f.objects {
                println!("/{} {:?}", o.path, o.kind);
                for a in &o.attributes {
                    let v = format!("{:?}", a.value);
                    println!("  @{} = {}", a.name, &v[..v.len().min(200)]);
                }
            }
            for x in &f.findings.shown {
                println!("{:?} {}: {}", x.severity, x.place, x.reason);
            }
            println!("metadata read: {}", f.metadata_read);
        }
    }
}
