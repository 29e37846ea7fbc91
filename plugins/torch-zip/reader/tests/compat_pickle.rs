//! The fix_imports tables socair applies are exactly the running python3's
//! (`_compat_pickle.NAME_MAPPING` and `IMPORT_MAPPING`), entry for entry. Skips cleanly when
//! python3 is absent.

use socair_torch_zip::globals::compat::{IMPORT_MAPPING, NAME_MAPPING};
use socair_torch_zip::globals::fix_imports;
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn fix_imports_tables_are_cpythons() {
    let Ok(out) = Command::new("python3")
        .args([
            "-c",
            "import _compat_pickle as c\n\
             for (m, n), (m3, n3) in sorted(c.NAME_MAPPING.items()): print('N', m, n, m3, n3)\n\
             for m, m3 in sorted(c.IMPORT_MAPPING.items()): print('I', m, m3)",
        ])
        .output()
    else {
        eprintln!("skipped: python3 is not available");
        return;
    };
    if !out.status.success() {
        eprintln!("skipped: python3 could not run");
        return;
    }
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names = BTreeSet::new();
    let mut imports = BTreeSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["N", m, n, m3, n3] => {
                names.insert((m.to_string(), n.to_string(), m3.to_string(), n3.to_string()));
            }
            ["I", m, m3] => {
                imports.insert((m.to_string(), m3.to_string()));
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    let ours_names: BTreeSet<_> = NAME_MAPPING
        .iter()
        .map(|((m, n), (m3, n3))| (m.to_string(), n.to_string(), m3.to_string(), n3.to_string()))
        .collect();
    let ours_imports: BTreeSet<_> = IMPORT_MAPPING
        .iter()
        .map(|(m, m3)| (m.to_string(), m3.to_string()))
        .collect();
    assert_eq!(ours_names, names);
    assert_eq!(ours_imports, imports);
    // And they are applied as find_class applies them: the pair first, then the module,
    // below protocol 3 only.
    for (m, n, m3, n3) in &names {
        assert_eq!(fix_imports(m, n, 2), Some((m3.as_str(), n3.clone())));
        assert_eq!(fix_imports(m, n, 3), None);
    }
    for (m, m3) in &imports {
        if !names
            .iter()
            .any(|(nm, nn, ..)| nm == m && nn == "an_attribute")
        {
            assert_eq!(
                fix_imports(m, "an_attribute", 0),
                Some((m3.as_str(), "an_attribute".to_owned()))
            );
        }
    }
}
