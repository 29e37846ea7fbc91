//! Native code recognized by its first bytes, whatever the file is named: an ELF object, a
//! PE image (Windows `.exe`/`.dll`), a Mach-O file or a Mach-O universal ("fat") binary. No
//! model format starts so, and such a file is code that runs when it is executed or loaded as
//! a library (`dlopen`, `ctypes.CDLL`, `torch.ops.load_library`), so it is claimed by its
//! content before any reader claims it by its name (`cp /bin/true model.bin`).
//!
//! The headers are validated as strictly as `file(1)`'s magic tells them apart (file 5.44,
//! `magic/Magdir/elf`, `msdos`, `mach`, `cafebabe`), so that random bytes are not claimed:
//!
//! * ELF (`\x7fELF`): the class (1 or 2), data encoding (1 or 2) and identification version (1)
//!   bytes of `e_ident`, as glibc's `dl-load.c` checks them before it maps a library.
//! * PE: `MZ`, then `e_lfanew` (the 32-bit little-endian value at 0x3c) pointing inside the
//!   file at `PE\0\0` and a whole COFF file header, `file`'s `(0x3c.l) string PE\0\0`.
//! * Mach-O (0xfeedface, 0xfeedfacf, and their byte-swapped 0xcefaedfe, 0xcffaedfe): a known CPU
//!   type, a known file type, and load commands that fit in the file.
//! * 0xcafebabe is both a Mach-O universal binary's magic and a Java class file's. As `file`'s
//!   `magic/Magdir/cafebabe` does, the big-endian 32-bit value at offset 4 tells them apart: a
//!   class file's minor and major version (major 45 and up) make it more than 30, a universal
//!   binary's architecture count is below 20. A universal binary is claimed only when that
//!   count is from 1 to 19 and every `fat_arch` entry is sane (a known CPU type, its slice
//!   inside the file, past the entries and aligned as it says); a class file is not claimed
//!   (it is bytecode, not native code). 0xcafebabf, the 64-bit universal header, likewise.

use socair_plugin_api::ReadAt;

/// The bytes read to identify a file: the host's detection head.
pub const HEAD: usize = 4096;

/// A native executable or library, as its header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Native {
    /// What it is, in words: `an ELF 64-bit LSB shared object for x86-64`.
    pub what: String,
    /// The format's short name: `ELF`, `PE`, `Mach-O`, `Mach-O universal`.
    pub kind: &'static str,
    /// Why its header is not whole, when it is cut short (no loader starts it as it is).
    pub cut_short: Option<String>,
}

/// The native file `head` (the file's first bytes) starts, judged from the head alone;
/// `pe_header` holds the bytes at `e_lfanew` when they lie past the head (read by
/// [`identify`]).
fn identify_parts(head: &[u8], file_len: u64, pe_header: Option<&[u8]>) -> Option<Native> {
    elf(head, file_len)
        .or_else(|| pe(head, file_len, pe_header))
        .or_else(|| mach_o(head, file_len))
        .or_else(|| universal(head, file_len))
}

/// What [`identify`] says from the first bytes alone (the host's `detect`): a PE whose
/// signature lies past them is not seen here ([`pe_signature_past`] says where to look).
pub fn identify_head(head: &[u8], file_len: u64) -> Option<Native> {
    identify_parts(head, file_len, None)
}

/// The native file `source` is, if it is one: its first [`HEAD`] bytes, and a PE's header
/// where `e_lfanew` points past them.
pub fn identify<S: ReadAt + ?Sized>(source: &S) -> Option<Native> {
    let len = source.size();
    let n = usize::try_from(len.min(HEAD as u64)).ok()?;
    let mut head = vec![0u8; n];
    source.read_exact_at(0, &mut head).ok()?;
    let mut pe_header = Vec::new();
    if let Some(at) = pe_signature_past(&head, len) {
        let want = len.saturating_sub(at).min(PE_HEADER_READ as u64) as usize;
        pe_header.resize(want, 0);
        source.read_exact_at(at, &mut pe_header).ok()?;
    }
    identify_parts(
        &head,
        len,
        Some(&pe_header).filter(|b| !b.is_empty()).map(|b| &b[..]),
    )
}

fn u16_at(b: &[u8], at: usize, big: bool) -> Option<u16> {
    let bytes: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(if big {
        u16::from_be_bytes(bytes)
    } else {
        u16::from_le_bytes(bytes)
    })
}

fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let bytes: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(bytes)
    } else {
        u32::from_le_bytes(bytes)
    })
}

fn u64_at(b: &[u8], at: usize, big: bool) -> Option<u64> {
    let bytes: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if big {
        u64::from_be_bytes(bytes)
    } else {
        u64::from_le_bytes(bytes)
    })
}

/// An ELF file: `e_ident`'s class, data encoding and version bytes valid (file's
/// `magic/Magdir/elf` names 0 "invalid class" and "invalid byte order"; glibc refuses a
/// library whose `EI_VERSION` is not `EV_CURRENT`).
fn elf(head: &[u8], file_len: u64) -> Option<Native> {
    let ident = head.get(..7)?;
    if &ident[..4] != b"\x7fELF" {
        return None;
    }
    let (class, data, version) = (ident[4], ident[5], ident[6]);
    let bits = match class {
        1 => 32,
        2 => 64,
        _ => return None,
    };
    let big = match data {
        1 => false,
        2 => true,
        _ => return None,
    };
    if version != 1 {
        return None;
    }
    let header_len: u64 = if bits == 32 { 52 } else { 64 };
    let order = if big { "MSB" } else { "LSB" };
    let (Some(e_type), Some(e_machine)) = (u16_at(head, 16, big), u16_at(head, 18, big)) else {
        return Some(Native {
            what: format!("an ELF {bits}-bit {order} file"),
            kind: "ELF",
            cut_short: Some(format!(
                "its {header_len}-byte ELF header is cut short at {file_len} bytes"
            )),
        });
    };
    let type_name = match e_type {
        0 => "file of no type".to_owned(),
        1 => "relocatable object".to_owned(),
        2 => "executable".to_owned(),
        3 => "shared object (a library or a position-independent executable)".to_owned(),
        4 => "core file".to_owned(),
        t => format!("file of type {t:#x}"),
    };
    let cut_short = (file_len < header_len)
        .then(|| format!("its {header_len}-byte ELF header is cut short at {file_len} bytes"));
    Some(Native {
        what: format!(
            "an ELF {bits}-bit {order} {type_name} for {}",
            elf_machine(e_machine)
        ),
        kind: "ELF",
        cut_short,
    })
}

/// `e_machine` in `file(1)`'s words (`magic/Magdir/elf`), for the machines code is built for.
fn elf_machine(m: u16) -> String {
    match m {
        2 => "SPARC".into(),
        3 => "Intel 80386".into(),
        8 => "MIPS".into(),
        20 => "PowerPC".into(),
        21 => "64-bit PowerPC".into(),
        22 => "IBM S/390".into(),
        40 => "ARM".into(),
        43 => "SPARC V9".into(),
        50 => "IA-64".into(),
        62 => "x86-64".into(),
        183 => "ARM aarch64".into(),
        190 => "NVIDIA CUDA".into(),
        243 => "RISC-V".into(),
        258 => "LoongArch".into(),
        m => format!("machine {m}"),
    }
}

/// How many bytes of a PE's header are read at `e_lfanew`: the signature, the COFF file
/// header (20 bytes) and the optional header's magic.
const PE_HEADER_READ: usize = 4 + 20 + 2;

/// `e_lfanew` when the file starts `MZ` and the PE header it points at lies inside the file
/// but not whole in `head`.
pub fn pe_signature_past(head: &[u8], file_len: u64) -> Option<u64> {
    if !head.starts_with(b"MZ") {
        return None;
    }
    let at = u64::from(u32_at(head, 0x3c, false)?);
    (at.checked_add(24)? > head.len() as u64 && at.checked_add(24)? <= file_len).then_some(at)
}

/// A PE image: `MZ`, `e_lfanew` past the `MZ` and inside the file, `PE\0\0` there, and the
/// COFF file header whole after it.
fn pe(head: &[u8], file_len: u64, past_head: Option<&[u8]>) -> Option<Native> {
    if !head.starts_with(b"MZ") {
        return None;
    }
    let at = u32_at(head, 0x3c, false)?;
    if at < 4 || u64::from(at).checked_add(24)? > file_len {
        return None;
    }
    let header = match head.get(at as usize..) {
        Some(h) if h.len() >= 24 => h,
        _ => past_head?,
    };
    if !header.starts_with(b"PE\0\0") {
        return None;
    }
    let machine = u16_at(header, 4, false)?;
    let characteristics = u16_at(header, 22, false)?;
    let flavour = match u16_at(header, 24, false) {
        Some(0x10b) => "PE32",
        Some(0x20b) => "PE32+",
        _ => "PE",
    };
    let role = if characteristics & 0x2000 != 0 {
        "library (DLL)"
    } else {
        "executable"
    };
    let machine = match machine {
        0x14c => "Intel 80386".to_owned(),
        0x8664 => "x86-64".to_owned(),
        0xaa64 => "ARM64".to_owned(),
        0x1c0 | 0x1c4 => "ARM".to_owned(),
        0x200 => "IA-64".to_owned(),
        0xebc => "EFI byte code".to_owned(),
        0x5032 | 0x5064 => "RISC-V".to_owned(),
        m => format!("machine {m:#x}"),
    };
    Some(Native {
        what: format!("a {flavour} {role} for {machine} (Windows PE, `PE\\0\\0` at byte {at})"),
        kind: "PE",
        cut_short: None,
    })
}

/// A Mach-O CPU type's name, when it is one `<mach/machine.h>` defines: the base type in the
/// low 24 bits, the ABI (none, 64-bit, 64-bit with 32-bit pointers) in the top byte.
fn mach_cpu(cputype: u32) -> Option<String> {
    let abi = cputype >> 24;
    let base = cputype & 0x00ff_ffff;
    let name = match (base, abi) {
        (7, 0) => "i386",
        (7, 1) => "x86_64",
        (12, 0) => "arm",
        (12, 1) => "arm64",
        (12, 2) => "arm64_32",
        (18, 0) => "ppc",
        (18, 1) => "ppc64",
        (1, 0) => "vax",
        (6, 0) => "mc680x0",
        (8, 0) => "mips",
        (10, 0) => "mc98000",
        (11, 0) => "hppa",
        (13, 0) => "mc88000",
        (14, 0) => "sparc",
        (15, 0) => "i860",
        _ => return None,
    };
    Some(name.to_owned())
}

/// A thin Mach-O file: its magic in either byte order, a known CPU type and file type, and
/// load commands that fit in the file after the header.
fn mach_o(head: &[u8], file_len: u64) -> Option<Native> {
    let (bits, big) = match head.get(..4)? {
        [0xfe, 0xed, 0xfa, 0xce] => (32, true),
        [0xfe, 0xed, 0xfa, 0xcf] => (64, true),
        [0xce, 0xfa, 0xed, 0xfe] => (32, false),
        [0xcf, 0xfa, 0xed, 0xfe] => (64, false),
        _ => return None,
    };
    let header_len: u64 = if bits == 32 { 28 } else { 32 };
    let cpu = mach_cpu(u32_at(head, 4, big)?)?;
    let filetype = u32_at(head, 12, big)?;
    let ncmds = u64::from(u32_at(head, 16, big)?);
    let sizeofcmds = u64::from(u32_at(head, 20, big)?);
    let role = match filetype {
        1 => "object",
        2 => "executable",
        3 => "fixed VM shared library",
        4 => "core file",
        5 => "preloaded executable",
        6 => "dynamically linked shared library (dylib)",
        7 => "dynamic linker",
        8 => "bundle",
        9 => "dylib stub",
        10 => "debug companion (dSYM)",
        11 => "kernel extension",
        12 => "file set",
        _ => return None,
    };
    if (head.len() as u64) < header_len
        || sizeofcmds > file_len.saturating_sub(header_len)
        || ncmds > sizeofcmds / 8
    {
        return None;
    }
    Some(Native {
        what: format!("a Mach-O {bits}-bit {role} for {cpu}"),
        kind: "Mach-O",
        cut_short: None,
    })
}

/// The largest architecture count of a universal binary `file(1)` accepts
/// (`magic/Magdir/cafebabe`: `>4 belong <20`); a Java class file's version makes the same
/// field more than 30.
const MAX_ARCHITECTURES: u32 = 19;

/// A Mach-O universal binary (`fat_header` then `fat_arch` entries, big-endian): 1 to 19
/// architectures, each a known CPU type whose slice lies inside the file, after the entries,
/// at an offset aligned to its `align` (a power of two no larger than 2^15).
fn universal(head: &[u8], file_len: u64) -> Option<Native> {
    let entry_len: usize = match u32_at(head, 0, true)? {
        0xcafe_babe => 20,
        0xcafe_babf => 32,
        _ => return None,
    };
    let count = u32_at(head, 4, true)?;
    if !(1..=MAX_ARCHITECTURES).contains(&count) {
        return None;
    }
    let entries_end = 8 + entry_len * count as usize;
    let mut cpus = Vec::new();
    for i in 0..count as usize {
        let at = 8 + i * entry_len;
        let cpu = mach_cpu(u32_at(head, at, true)?)?;
        let (offset, size, align) = if entry_len == 20 {
            (
                u64::from(u32_at(head, at + 8, true)?),
                u64::from(u32_at(head, at + 12, true)?),
                u32_at(head, at + 16, true)?,
            )
        } else {
            (
                u64_at(head, at + 8, true)?,
                u64_at(head, at + 16, true)?,
                u32_at(head, at + 24, true)?,
            )
        };
        if align > 15
            || offset < entries_end as u64
            || offset % (1u64 << align) != 0
            || offset.checked_add(size)? > file_len
        {
            return None;
        }
        cpus.push(cpu);
    }
    Some(Native {
        what: format!(
            "a Mach-O universal binary with {count} architecture{} ({})",
            if count == 1 { "" } else { "s" },
            cpus.join(", ")
        ),
        kind: "Mach-O universal",
        cut_short: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf64_header() -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        h[16] = 3; // ET_DYN
        h[18] = 62; // EM_X86_64
        h[20] = 1; // e_version
        h
    }

    #[test]
    fn elf_needs_valid_identification_bytes() {
        let h = elf64_header();
        let n = identify_head(&h, h.len() as u64).unwrap();
        assert_eq!(n.kind, "ELF");
        assert!(n.what.contains("64-bit LSB shared object"), "{}", n.what);
        assert!(n.what.contains("x86-64"));
        assert_eq!(n.cut_short, None);
        for (at, bad) in [(4, 0u8), (4, 3), (5, 0), (5, 3), (6, 0), (6, 2)] {
            let mut b = h.clone();
            b[at] = bad;
            assert_eq!(identify_head(&b, b.len() as u64), None, "byte {at} = {bad}");
        }
        // Cut short: still named, but no loader starts it.
        let n = identify_head(&h[..10], 10).unwrap();
        assert!(n.cut_short.is_some());
        let n = identify_head(&h[..40], 40).unwrap();
        assert!(n.cut_short.unwrap().contains("cut short at 40"));
        assert_eq!(identify_head(b"\x7fEL", 3), None);
    }

    fn pe_file(e_lfanew: u32, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[..2].copy_from_slice(b"MZ");
        f[0x3c..0x40].copy_from_slice(&e_lfanew.to_le_bytes());
        let at = e_lfanew as usize;
        if at + 26 <= len {
            f[at..at + 4].copy_from_slice(b"PE\0\0");
            f[at + 4..at + 6].copy_from_slice(&0x8664u16.to_le_bytes());
            f[at + 22..at + 24].copy_from_slice(&0x2022u16.to_le_bytes());
            f[at + 24..at + 26].copy_from_slice(&0x20bu16.to_le_bytes());
        }
        f
    }

    #[test]
    fn pe_needs_e_lfanew_inside_the_file_at_the_signature() {
        let f = pe_file(0x80, 0x200);
        let n = identify_head(&f, f.len() as u64).unwrap();
        assert_eq!(n.kind, "PE");
        assert!(
            n.what.contains("PE32+ library (DLL) for x86-64"),
            "{}",
            n.what
        );
        // e_lfanew past the file, into the MZ, or at something else: not claimed.
        let mut past = f.clone();
        past[0x3c..0x40].copy_from_slice(&0x1000u32.to_le_bytes());
        assert_eq!(identify_head(&past, past.len() as u64), None);
        let mut zero = f.clone();
        zero[0x3c..0x40].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(identify_head(&zero, zero.len() as u64), None);
        let mut other = f.clone();
        other[0x80] = b'N';
        assert_eq!(identify_head(&other, other.len() as u64), None);
        assert_eq!(identify_head(b"MZ", 2), None);
        // A signature past the head is found by reading it.
        let far = pe_file(5000, 6000);
        assert_eq!(identify_head(&far[..HEAD], far.len() as u64), None);
        assert_eq!(
            pe_signature_past(&far[..HEAD], far.len() as u64),
            Some(5000)
        );
        assert_eq!(identify(&far[..]).unwrap().kind, "PE");
    }

    fn mach(magic: [u8; 4], big: bool, cputype: u32, filetype: u32) -> Vec<u8> {
        let w = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut f = magic.to_vec();
        f.extend(w(cputype));
        f.extend(w(3)); // cpusubtype
        f.extend(w(filetype));
        f.extend(w(1)); // ncmds
        f.extend(w(16)); // sizeofcmds
        f.extend(w(0)); // flags
        f.extend(w(0)); // reserved (64-bit)
        f.resize(64, 0);
        f
    }

    #[test]
    fn mach_o_in_both_byte_orders_with_known_fields() {
        let le64 = mach([0xcf, 0xfa, 0xed, 0xfe], false, 0x0100_000c, 6);
        let n = identify_head(&le64, 64).unwrap();
        assert_eq!(
            n.what,
            "a Mach-O 64-bit dynamically linked shared library (dylib) for arm64"
        );
        let be32 = mach([0xfe, 0xed, 0xfa, 0xce], true, 18, 2);
        assert_eq!(
            identify_head(&be32, 64).unwrap().what,
            "a Mach-O 32-bit executable for ppc"
        );
        assert!(identify_head(&mach([0xce, 0xfa, 0xed, 0xfe], false, 7, 2), 64).is_some());
        assert!(identify_head(&mach([0xfe, 0xed, 0xfa, 0xcf], true, 0x0100_0007, 8), 64).is_some());
        // Unknown CPU or file type, or load commands past the file: not claimed.
        assert_eq!(
            identify_head(&mach([0xcf, 0xfa, 0xed, 0xfe], false, 99, 6), 64),
            None
        );
        assert_eq!(
            identify_head(&mach([0xcf, 0xfa, 0xed, 0xfe], false, 7, 0), 64),
            None
        );
        assert_eq!(
            identify_head(&mach([0xcf, 0xfa, 0xed, 0xfe], false, 7, 13), 64),
            None
        );
        assert_eq!(identify_head(&le64, 40), None);
    }

    fn fat(count: u32, entries: &[(u32, u32, u32, u32)], len: usize) -> Vec<u8> {
        let mut f = 0xcafe_babeu32.to_be_bytes().to_vec();
        f.extend(count.to_be_bytes());
        for &(cpu, offset, size, align) in entries {
            for v in [cpu, 0, offset, size, align] {
                f.extend(v.to_be_bytes());
            }
        }
        f.resize(len, 0);
        f
    }

    #[test]
    fn cafebabe_is_a_universal_binary_only_when_file_would_say_so() {
        let two = fat(
            2,
            &[(0x0100_0007, 4096, 100, 12), (0x0100_000c, 16384, 100, 14)],
            16484,
        );
        let n = identify_head(&two, two.len() as u64).unwrap();
        assert_eq!(
            n.what,
            "a Mach-O universal binary with 2 architectures (x86_64, arm64)"
        );
        // A Java class file: minor 0, major 52 (Java 8) make the count 52.
        let mut class = 0xcafe_babeu32.to_be_bytes().to_vec();
        class.extend([0, 0, 0, 52, 0, 0x1d]);
        assert_eq!(identify_head(&class, class.len() as u64), None);
        // Counts between 20 and 30, zero, a slice past the file, misaligned, or an unknown CPU.
        assert_eq!(identify_head(&fat(25, &[], 2000), 2000), None);
        assert_eq!(identify_head(&fat(0, &[], 64), 64), None);
        assert_eq!(
            identify_head(&fat(1, &[(7, 4096, 100_000, 12)], 5000), 5000),
            None
        );
        assert_eq!(
            identify_head(&fat(1, &[(7, 4000, 10, 12)], 5000), 5000),
            None
        );
        assert_eq!(
            identify_head(&fat(1, &[(99, 4096, 10, 12)], 5000), 5000),
            None
        );
        assert_eq!(
            identify_head(&fat(1, &[(7, 4096, 10, 40)], 5000), 5000),
            None
        );
        assert!(identify_head(&fat(1, &[(7, 4096, 10, 12)], 5000), 5000).is_some());
    }

    #[test]
    fn text_and_model_formats_are_not_native() {
        for head in [
            &b"a: 1\n"[..],
            b"PK\x03\x04",
            b"\x80\x02}q\x00.",
            b"GGUF\x03\x00\x00\x00",
            b"\x89HDF\r\n\x1a\n",
            b"",
        ] {
            assert_eq!(identify_head(head, head.len() as u64), None);
        }
    }
}
