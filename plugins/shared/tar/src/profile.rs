//! The behaviours of CPython's tarfile across the releases torch runs on, one [`Profile`]
//! each, and which release behaves which way. Apart from the model, which only reads a
//! profile's flags.

/// One behaviour of CPython's tarfile, as its code changed across the versions torch supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The CPython releases that behave this way.
    pub name: &'static str,
    /// `_proc_pax` parses records with the framing checks of gh-121285 (CVE-2024-6232) rather
    /// than with the old regular expression.
    pub framed_pax: bool,
    /// `TarInfo._block` raises `InvalidHeaderError("invalid offset")` for a negative count
    /// (gh-130577, CVE-2025-8194).
    pub negative_block_raises: bool,
    /// Follow-up headers of GNU long names and pax headers are read without the V7 directory
    /// rule, which is re-applied with the long name (gh-141707 / gh-143933).
    pub follow_up_dircheck_off: bool,
    /// `int()` of a decimal string refuses more digits than this (gh-95778, CVE-2020-10735).
    pub int_max_str_digits: Option<usize>,
}

/// Every behaviour of the CPython releases torch 2.x runs on (3.8 to 3.14), oldest first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "3.8.0-3.8.13, 3.9.0-3.9.13, 3.10.0-3.10.6",
        framed_pax: false,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: None,
    },
    Profile {
        name: "3.8.14-3.8.19, 3.9.14-3.9.19, 3.10.7-3.10.14, 3.11.0-3.11.9, 3.12.0-3.12.5",
        framed_pax: false,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name:
            "3.8.20, 3.9.20-3.9.23, 3.10.15-3.10.18, 3.11.10-3.11.13, 3.12.6-3.12.11, 3.13.0-3.13.5",
        framed_pax: true,
        negative_block_raises: false,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name: "3.9.24+, 3.10.19+, 3.11.14+, 3.12.12+, 3.13.6+, 3.14.0+",
        framed_pax: true,
        negative_block_raises: true,
        follow_up_dircheck_off: false,
        int_max_str_digits: Some(4300),
    },
    Profile {
        name: "CPython main after gh-143933",
        framed_pax: true,
        negative_block_raises: true,
        follow_up_dircheck_off: true,
        int_max_str_digits: Some(4300),
    },
];

/// The profile of CPython `3.minor.micro` (for the differential test; the last profile is not
/// in a release this code knows the number of).
pub fn profile_for(minor: u32, micro: u32) -> Profile {
    let int_limit = match minor {
        0..=7 => false,
        8 | 9 => micro >= 14,
        10 => micro >= 7,
        _ => true,
    };
    let framed = match minor {
        0..=7 => false,
        8 | 9 => micro >= 20,
        10 => micro >= 15,
        11 => micro >= 10,
        12 => micro >= 6,
        _ => true,
    };
    let negative = match minor {
        0..=8 => false,
        9 => micro >= 24,
        10 => micro >= 19,
        11 => micro >= 14,
        12 => micro >= 12,
        13 => micro >= 6,
        _ => true,
    };
    match (int_limit, framed, negative) {
        (false, ..) => PROFILES[0],
        (true, false, _) => PROFILES[1],
        (true, true, false) => PROFILES[2],
        (true, true, true) => PROFILES[3],
    }
}
