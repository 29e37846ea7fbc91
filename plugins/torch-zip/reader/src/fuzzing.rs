//! The properties the fuzz targets check, shared with the test that replays every saved
//! corpus entry and crash (`tests/fuzz_regressions.rs`).

use crate::checkpoint::AnalyzeOptions;
use crate::pickle;
use crate::zip;

/// The zip layer on arbitrary bytes: returns (never panics), and an accepted archive's records
/// lie inside the file, in order, without overlapping.
pub fn check_zip(data: &[u8]) {
    for torch_writer_options in [false, true] {
        let rules = zip::Rules {
            torch_writer_options,
        };
        let Ok(archive) = zip::read_archive_with(data, rules) else {
            continue;
        };
        let mut end = 0u64;
        for r in &archive.records {
            assert!(r.header_offset >= end, "records overlap");
            assert!(r.data_offset > r.header_offset);
            assert!(torch_writer_options || (r.stored() && r.compressed == r.len));
            end = r.data_offset + r.compressed;
            assert!(end <= data.len() as u64, "record past the end");
            assert!(r.name.starts_with(&format!("{}/", archive.prefix)));
            let _ = zip::bytes::verify_crc(data, r);
            let _ = zip::bytes::crc_state(data, r);
            // Inflation is bounded by the limit asked for, whatever the record declares.
            if let Ok(bytes) = zip::bytes::read_bytes(data, r, 1 << 20) {
                assert_eq!(bytes.len() as u64, r.len);
            }
            let _ = zip::bytes::read_head(data, r, 64);
        }
        assert!(end + archive.comment_len <= data.len() as u64);
    }
}

/// The pickle machine on arbitrary bytes: returns, with a bounded report (at most
/// `MAX_PER_KIND` findings of each kind and a summary each) and an end inside the data; the
/// state-dict walk terminates; every tensor it models lies inside its storage; deciding
/// whether the bytes are a pickle returns. Under every version of the grammar; and, with the
/// first byte choosing a library profile (`socair-data/1`, `socair-sklearn/1`) and joblib mode,
/// the rest run under them, every array it locates inside the data.
pub fn check_pickle(data: &[u8]) {
    let _ = pickle::looks_like_pickle(&data[..data.len().min(4096)], data.len() as u64);
    for grammar in pickle::Grammar::ALL {
        check_pickle_under(data, grammar);
    }
    if let Some((&choice, rest)) = data.split_first() {
        check_profiles(rest, choice);
    }
}

/// The pickle machine under the profile and joblib mode `choice` picks.
pub fn check_profiles(data: &[u8], choice: u8) {
    let profile = [
        pickle::Profile::Torch,
        pickle::Profile::Data,
        pickle::Profile::Sklearn,
    ][usize::from(choice % 3)];
    let options = pickle::Options {
        profile,
        joblib: choice & 4 != 0,
        python2_str: pickle::Python2Str::CallerChooses,
        ..pickle::Options::default()
    };
    check_pickle_with(data, &options);
    let outcome = pickle::run(data, &options);
    for a in &outcome.arrays {
        assert!(
            a.bytes.start <= a.bytes.end && a.bytes.end <= data.len(),
            "an array's bytes lie outside the data"
        );
    }
}

fn check_pickle_under(data: &[u8], grammar: pickle::Grammar) {
    for python2_str in [
        pickle::Python2Str::TorchUtf8,
        pickle::Python2Str::CallerChooses,
    ] {
        check_pickle_with(
            data,
            &pickle::Options {
                grammar,
                python2_str,
                ..pickle::Options::default()
            },
        );
    }
}

fn check_pickle_with(data: &[u8], options: &pickle::Options) {
    let grammar = options.grammar;
    let outcome = pickle::run(data, options);
    assert!(
        outcome.findings.len() <= 10 * (pickle::MAX_PER_KIND + 1),
        "the report outgrows its bound"
    );
    assert!(outcome.end.is_none_or(|e| e <= data.len()));
    for t in &outcome.tensors {
        assert_eq!(
            pickle::check_bounds(t),
            Ok(()),
            "a modeled tensor escapes its storage"
        );
    }
    if let Some(result) = &outcome.result {
        let _ = crate::checkpoint::read_state_dict_in(&outcome, result, grammar);
    }
}

/// The analysis options of each grammar version.
fn every_grammar() -> impl Iterator<Item = AnalyzeOptions> {
    pickle::Grammar::ALL
        .into_iter()
        .map(|grammar| AnalyzeOptions {
            grammar,
            ..AnalyzeOptions::default()
        })
}

/// A whole checkpoint on arbitrary bytes: returns, and what it locates lies inside the file.
pub fn check_checkpoint(data: &[u8]) {
    for options in every_grammar() {
        check_checkpoint_under(data, &options);
    }
}

fn check_checkpoint_under(data: &[u8], options: &AnalyzeOptions) {
    // The same bytes as a PT2 archive: returns, every range it hands the host inside the file.
    let _ = crate::pt2::looks_like_pt2(&data[..data.len().min(4096)], data.len() as u64);
    let opened = crate::pt2::open(data, options, crate::opened_file);
    for t in opened.tensors.iter() {
        for r in t.ranges.iter() {
            let end = r.offset.checked_add(r.len).expect("no overflow");
            assert!(
                end <= data.len() as u64,
                "pt2 tensor past the end of the file"
            );
        }
    }
    let analysis = crate::legacy::analyze_as_zip(data, options);
    for t in &analysis.tensors {
        let start = t.record_offset + t.model.storage_offset * t.model.dtype.size;
        let len = t.model.numel().expect("bounded") * t.model.dtype.size;
        assert!(
            start + len <= data.len() as u64,
            "tensor past the end of the file"
        );
    }
}

/// A legacy checkpoint on arbitrary bytes: returns, and every tensor it locates (a storage
/// view's too) lies inside the file, as does its strided span.
pub fn check_legacy(data: &[u8]) {
    for options in every_grammar() {
        check_legacy_under(data, &options);
    }
}

fn check_legacy_under(data: &[u8], options: &AnalyzeOptions) {
    let analysis = crate::legacy::analyze(data, options);
    for t in &analysis.tensors {
        let m = &t.model;
        let size = m.dtype.size;
        let furthest: u64 = m
            .shape
            .iter()
            .zip(&m.stride)
            .map(|(&d, &s)| d.saturating_sub(1) * s)
            .sum();
        let start = t.record_offset + m.storage_offset * size;
        let len = if m.numel() == Some(0) {
            0
        } else {
            (furthest + 1) * size
        };
        assert!(
            start + len <= data.len() as u64,
            "legacy tensor past the end of the file"
        );
    }
    // The descriptors the plugin hands the host are built from the same analysis.
    let _ = crate::opened_file(&analysis, false);
}

/// The hostile pickle shapes the machine's bounds are measured on (`tests/bounds.rs`,
/// `examples/pickle_scan.rs --flood`, and the `pickle_machine` fuzz corpus), each a few
/// opcodes repeated to about `size` bytes.
pub const FLOOD_SHAPES: &[&str] = &[
    "empty-list",
    "none-tuple",
    "proto",
    "unknown-globals",
    "unknown-calls",
    "marks",
    "memoize",
    "memo-sparse",
    "text-put",
    "long4",
    "tuples",
    "dup",
    "stack-globals",
    "appended",
    "frames-straddle",
    "state-dict",
];

/// A flood of `shape` (one of [`FLOOD_SHAPES`]) of about `size` bytes.
pub fn flood(shape: &str, size: usize) -> Vec<u8> {
    let mut p = b"\x80\x02".to_vec();
    let fill = |p: &mut Vec<u8>, unit: &[u8]| {
        while p.len() + unit.len() < size {
            p.extend_from_slice(unit);
        }
    };
    match shape {
        // EMPTY_LIST ×N: a container per byte.
        "empty-list" => fill(&mut p, b"]"),
        // NONE ×N then TUPLE: a value per byte, then one tuple of them all.
        "none-tuple" => {
            p.push(b'(');
            fill(&mut p, b"N");
            p.push(b't');
        }
        // PROTO out of place ×N: a finding per two bytes.
        "proto" => fill(&mut p, b"\x80\x02"),
        // GLOBAL of an unknown name ×N.
        "unknown-globals" => fill(&mut p, b"cfoo\nbar\n"),
        // One unknown global, memoized, then called ×N.
        "unknown-calls" => {
            p.extend_from_slice(b"cfoo\nbar\nq\x00");
            fill(&mut p, b"h\x00)R");
        }
        // MARK ×N.
        "marks" => fill(&mut p, b"("),
        // MEMOIZE ×N: a memo entry per byte.
        "memoize" => {
            p[1] = 4;
            p.push(b'N');
            fill(&mut p, b"\x94");
        }
        // LONG_BINPUT at scattered indices.
        "memo-sparse" => {
            p.push(b'N');
            let mut i: u32 = 1;
            while p.len() + 5 < size {
                i = i.wrapping_mul(2_654_435_761).wrapping_add(12345);
                p.push(b'r');
                p.extend_from_slice(&(i | 1).to_le_bytes());
            }
        }
        // Text PUT at growing indices, protocol 0.
        "text-put" => {
            p.clear();
            p.push(b'N');
            let mut i = 1u64;
            while p.len() + 24 < size {
                p.extend_from_slice(format!("p{i}\n").as_bytes());
                i += 2;
            }
        }
        // LONG4 of the whole size: one huge integer.
        "long4" => {
            p.push(0x8b);
            let n = size.saturating_sub(8);
            p.extend_from_slice(&(n as u32).to_le_bytes());
            p.resize(p.len() + n, 0x41);
        }
        // TUPLE1 ×N: tuples nested N deep.
        "tuples" => {
            p.push(b'N');
            fill(&mut p, b"\x85");
        }
        // DUP ×N: the abstract stack grows a slot per byte.
        "dup" => {
            p.push(b'N');
            fill(&mut p, b"2");
        }
        // STACK_GLOBAL ×N of two memoized names, each popped.
        "stack-globals" => {
            p[1] = 4;
            p.extend_from_slice(b"\x8c\x03foo\x94\x8c\x03bar\x94");
            fill(&mut p, b"h\x00h\x01\x930");
        }
        // Pickles appended after STOP ×N.
        "appended" => {
            p = b"\x80\x02N.".to_vec();
            fill(&mut p, b"\x80\x02N.");
            p.extend_from_slice(b"\x80\x02N");
        }
        // Frames each ending inside a BININT's argument: every frame is ambiguous.
        "frames-straddle" => {
            p[1] = 4;
            fill(
                &mut p,
                b"\x95\x02\x00\x00\x00\x00\x00\x00\x00J\x01\x00\x00\x000",
            );
        }
        // Not hostile: a state dict as torch.save writes it, for the legit side of the bounds.
        "state-dict" => return state_dict(size / 100),
        _ => {}
    }
    p.extend_from_slice(b"N.");
    p
}

/// The `data.pkl` torch.save (protocol 2) writes for an `OrderedDict` of `n` float32 tensors
/// of shape (4, 4) with one storage each, opcode for opcode as the fixtures' own (memo puts
/// for every new object, gets for repeated globals and strings).
pub fn state_dict(n: usize) -> Vec<u8> {
    let mut p = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01(".to_vec();
    let mut memo = 2u32;
    let put = |p: &mut Vec<u8>, memo: &mut u32| {
        if *memo < 256 {
            p.extend_from_slice(&[b'q', *memo as u8]);
        } else {
            p.push(b'r');
            p.extend_from_slice(&memo.to_le_bytes());
        }
        *memo += 1;
    };
    let get = |p: &mut Vec<u8>, i: u32| {
        if i < 256 {
            p.extend_from_slice(&[b'h', i as u8]);
        } else {
            p.push(b'j');
            p.extend_from_slice(&i.to_le_bytes());
        }
    };
    let string = |p: &mut Vec<u8>, s: &str| {
        p.push(b'X');
        p.extend_from_slice(&(s.len() as u32).to_le_bytes());
        p.extend_from_slice(s.as_bytes());
    };
    // Memo indices of the globals and strings every tensor after the first reuses.
    let (mut rebuild, mut storage, mut float, mut cpu) = (0, 0, 0, 0);
    for i in 0..n {
        if i > 0 && i % 1000 == 0 {
            // pickle batches SETITEMS by 1000.
            p.extend_from_slice(b"u(");
        }
        string(
            &mut p,
            &format!("encoder.layers.{i}.self_attn.in_proj_weight"),
        );
        put(&mut p, &mut memo);
        if i == 0 {
            p.extend_from_slice(b"ctorch._utils\n_rebuild_tensor_v2\n");
            rebuild = memo;
            put(&mut p, &mut memo);
            p.extend_from_slice(b"((");
            string(&mut p, "storage");
            storage = memo;
            put(&mut p, &mut memo);
            p.extend_from_slice(b"ctorch\nFloatStorage\n");
            float = memo;
            put(&mut p, &mut memo);
            string(&mut p, &i.to_string());
            put(&mut p, &mut memo);
            string(&mut p, "cpu");
            cpu = memo;
            put(&mut p, &mut memo);
        } else {
            get(&mut p, rebuild);
            p.extend_from_slice(b"((");
            get(&mut p, storage);
            get(&mut p, float);
            string(&mut p, &i.to_string());
            put(&mut p, &mut memo);
            get(&mut p, cpu);
        }
        p.extend_from_slice(b"K\x10t");
        put(&mut p, &mut memo);
        p.extend_from_slice(b"QK\x00K\x04K\x04\x86");
        put(&mut p, &mut memo);
        p.extend_from_slice(b"K\x04K\x01\x86");
        put(&mut p, &mut memo);
        p.push(0x89);
        get(&mut p, 0);
        p.extend_from_slice(b")R");
        put(&mut p, &mut memo);
        p.push(b't');
        put(&mut p, &mut memo);
        p.push(b'R');
        put(&mut p, &mut memo);
    }
    p.extend_from_slice(b"u}");
    put(&mut p, &mut memo);
    p.extend_from_slice(b"X\x09\x00\x00\x00_metadatah\x00)Rsb.");
    p
}
