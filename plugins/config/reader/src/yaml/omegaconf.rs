//! What OmegaConf and Hydra do with a config's values beyond reading them: an interpolation
//! `${…}` in a string is resolved when the value is read, by a resolver when it names one
//! (`${name:args}`, OmegaConf 2.3 `grammar/OmegaConfGrammarParser.g4`: `interpolationResolver`,
//! whose `resolverName` is `ID (. ID)*` or itself an interpolation); a mapping with a
//! `_target_` key is turned by `hydra.utils.instantiate` (Hydra 1.3) into a call of the callable
//! it names (`hydra/_internal/instantiate/_instantiate2.py`, `_resolve_target` → `_locate`,
//! which imports the module the name starts with), and NeMo's `SaveRestoreConnector.restore_from`
//! imports the class a model config's `target` names (`import_class_by_path(conf.target)`,
//! `nemo/core/connectors/save_restore_connector.py`).

/// The resolvers OmegaConf 2.3 registers (`omegaconf/omegaconf.py`,
/// `register_default_resolvers`) and Hydra 1.3 adds (`hydra/core/utils.py`, `setup_globals`)
/// that read nothing but the config and the clock: `oc.env` is the one that reads outside it
/// (the environment), and any other name is a resolver the program registered, code that runs
/// with the interpolation's arguments.
const DATA_RESOLVERS: &[&str] = &[
    "oc.create",
    "oc.decode",
    "oc.deprecated",
    "oc.select",
    "oc.dict.keys",
    "oc.dict.values",
    "hydra",
    "now",
    "python_version",
];

/// The resolvers that read the process environment: OmegaConf 2.3's `oc.env`, and `env`,
/// OmegaConf 2.0's name for it.
const ENV_RESOLVERS: &[&str] = &["oc.env", "env"];

/// One interpolation found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpolation {
    /// Where `${` starts, in characters from the string's start.
    pub at: usize,
    /// What it is.
    pub kind: Resolution,
}

/// How an interpolation is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// A reference to another node of the config (`${model.dim}`, `${..x}`): data.
    Node,
    /// A resolver that reads only the config (or the clock).
    DataResolver(String),
    /// A resolver that reads the environment.
    Environment(String),
    /// A resolver the program registered: code.
    Custom(String),
    /// A resolver whose name is itself an interpolation: chosen when the value is read.
    Dynamic,
}

/// The longest resolver name kept for a finding.
const MAX_NAME: usize = 128;

fn is_id_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// Every `${` in `s` and how it resolves, at most `max` of them. Conservative: an escaped
/// `\${` (OmegaConf's `ESC_INTER`) is counted too, since what a string escapes depends on the
/// backslashes before it, and a LEAD on a escaped one is no harm.
pub fn interpolations(s: &str, max: usize) -> Vec<Interpolation> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < chars.len() && out.len() < max {
        if chars[i] != '$' || chars[i + 1] != '{' {
            i += 1;
            continue;
        }
        let at = i;
        // `INTER_OPEN: '${' WS?`
        let mut j = i + 2;
        while chars.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        let kind = if chars.get(j) == Some(&'$') && chars.get(j + 1) == Some(&'{') {
            // A name that is itself an interpolation: its own `${` is found next.
            Resolution::Dynamic
        } else {
            let start = j;
            while chars.get(j).is_some_and(|&c| is_id_char(c) || c == '.') {
                j += 1;
            }
            let name: String = chars[start..j].iter().take(MAX_NAME).collect();
            let mut k = j;
            while chars.get(k).is_some_and(|c| c.is_whitespace()) {
                k += 1;
            }
            let is_resolver = chars.get(k) == Some(&':')
                && !name.is_empty()
                && !name.starts_with('.')
                && name.split('.').all(|part| {
                    part.chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                });
            if !is_resolver {
                Resolution::Node
            } else if ENV_RESOLVERS.contains(&name.as_str()) {
                Resolution::Environment(name)
            } else if DATA_RESOLVERS.contains(&name.as_str()) {
                Resolution::DataResolver(name)
            } else {
                Resolution::Custom(name)
            }
        };
        out.push(Interpolation { at, kind });
        i += 2;
    }
    out
}

/// Callables that run code, start processes, load code or serialized objects, or touch the
/// file system or the network when called, by exact name: from Hydra 1.3.8's own lists of
/// targets it refuses (`hydra/_internal/target_policy.py`, `DEFAULT_BLOCKLISTED_MODULES` and
/// `UNCONTROLLED_EXECUTION_TARGETS`), which older Hydra releases (1.3.2, the one NeMo pins) do
/// not have: they call any target.
const CODE_TARGETS: &[&str] = &[
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "builtins.__import__",
    "builtins.__build_class__",
    "builtins.open",
    "builtins.breakpoint",
    "builtins.input",
    "builtins.help",
    "builtins.exit",
    "builtins.quit",
    "builtins.getattr",
    "builtins.setattr",
    "builtins.delattr",
    "builtins.globals",
    "builtins.locals",
    "builtins.vars",
    "builtins.map",
    "builtins.filter",
    "os.system",
    "os.popen",
    "os.posix_spawn",
    "os.posix_spawnp",
    "os.startfile",
    "os.putenv",
    "os.unsetenv",
    "os.kill",
    "os.killpg",
    "os.fork",
    "os.forkpty",
    "os.setuid",
    "os.remove",
    "os.removedirs",
    "os.rmdir",
    "os.unlink",
    "os.rename",
    "os.renames",
    "os.replace",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.fchmod",
    "os.fchown",
    "os.lchmod",
    "os.lchown",
    "os.lchflags",
    "os.chroot",
    "os.chdir",
    "os.fchdir",
    "os.open",
    "os.write",
    "os.mkdir",
    "os.makedirs",
    "os.symlink",
    "os.link",
    "io.open",
    "io.FileIO",
    "operator.attrgetter",
    "operator.methodcaller",
    "operator.itemgetter",
    "operator.call",
    "operator.getitem",
    "operator.setitem",
    "operator.delitem",
    "functools.reduce",
    "itertools.starmap",
    "dataclasses.make_dataclass",
    "types.new_class",
    "torch.load",
    "numpy.load",
    "pandas.read_pickle",
    "joblib.load",
    "hydra.utils.call",
    "hydra.utils.instantiate",
    "hydra.utils.get_method",
    "hydra.utils.get_object",
    "hydra.utils.get_class",
    "hydra._internal.utils._locate",
];

/// Modules (and name prefixes) every callable of which runs code, starts a process, loads
/// code or serialized objects, or does file or network I/O: Hydra 1.3.8's
/// `UNCONTROLLED_EXECUTION_TARGET_PREFIXES` (`os.exec`, `os.spawn`, `inspect.`, `gc.`,
/// `logging.config.`, `doctest.`, `shelve.`, `trace.`, `yaml.`, `pydoc.`, `pdb.`, `bdb.`), the
/// modules its exact names come from, and the network and file modules.
const CODE_PREFIXES: &[&str] = &[
    "os.exec",
    "os.spawn",
    "subprocess.",
    "pty.",
    "runpy.",
    "ctypes.",
    "importlib.",
    "pickle.",
    "marshal.",
    "dill.",
    "cloudpickle.",
    "shelve.",
    "code.",
    "codeop.",
    "pdb.",
    "bdb.",
    "pydoc.",
    "timeit.",
    "cProfile.",
    "profile.",
    "trace.",
    "doctest.",
    "inspect.",
    "gc.",
    "logging.config.",
    "yaml.",
    "shutil.",
    "tempfile.",
    "socket.",
    "ssl.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "telnetlib.",
    "webbrowser.",
    "requests.",
    "multiprocessing.",
    "concurrent.futures.",
    "signal.",
    "sys.",
    "torch.hub.",
    "unittest.mock.",
];

/// The module names that stand for others (`posix.system` is `os.system`: Hydra 1.3.8
/// `_get_os_alias_target`; the C modules behind `pickle` and `operator`).
const ALIASES: &[(&str, &str)] = &[
    ("posix.", "os."),
    ("nt.", "os."),
    ("posixpath.", "os.path."),
    ("ntpath.", "os.path."),
    ("_pickle.", "pickle."),
    ("_operator.", "operator."),
    ("_io.", "io."),
    ("__builtin__.", "builtins."),
];

/// Whether `target` (a dotted name, as `_locate` reads it) is a callable that runs code or
/// does I/O: the name it was matched by, when it is.
pub fn code_target(target: &str) -> Option<String> {
    let target = target.trim();
    let canonical = ALIASES
        .iter()
        .find_map(|(alias, public)| {
            target
                .strip_prefix(alias)
                .map(|rest| format!("{public}{rest}"))
        })
        .unwrap_or_else(|| target.to_owned());
    if let Some(exact) = CODE_TARGETS.iter().find(|t| **t == canonical) {
        return Some((*exact).to_owned());
    }
    CODE_PREFIXES
        .iter()
        .find(|p| canonical.starts_with(**p) || canonical == p.trim_end_matches('.'))
        .map(|p| format!("{}*", p.trim_end_matches('.')))
}

/// Whether `s` is a dotted Python name (`a.b.C`, at least one dot): what NeMo's
/// `import_class_by_path` takes.
pub fn is_dotted_name(s: &str) -> bool {
    let mut parts = 0;
    for part in s.split('.') {
        let mut chars = part.chars();
        let Some(first) = chars.next() else {
            return false;
        };
        if !(first.is_alphabetic() || first == '_')
            || !chars.all(|c| c.is_alphanumeric() || c == '_')
        {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Resolution> {
        interpolations(s, 100).into_iter().map(|i| i.kind).collect()
    }

    #[test]
    fn interpolations_and_their_resolvers() {
        assert_eq!(kinds("plain"), vec![]);
        assert_eq!(kinds("$x {y}"), vec![]);
        assert_eq!(kinds("${model.dim}"), vec![Resolution::Node]);
        assert_eq!(
            kinds("${..x}/${.y}"),
            vec![Resolution::Node, Resolution::Node]
        );
        assert_eq!(
            kinds("${oc.env:HOME,/tmp}"),
            vec![Resolution::Environment("oc.env".into())]
        );
        assert_eq!(
            kinds("${ env : USER}"),
            vec![Resolution::Environment("env".into())]
        );
        assert_eq!(
            kinds("${now:%Y-%m-%d}_${oc.select:a.b,1}"),
            vec![
                Resolution::DataResolver("now".into()),
                Resolution::DataResolver("oc.select".into())
            ]
        );
        assert_eq!(
            kinds("${multiply:${model.d},2}"),
            vec![Resolution::Custom("multiply".into()), Resolution::Node]
        );
        assert_eq!(
            kinds("${${name}:x}"),
            vec![Resolution::Dynamic, Resolution::Node]
        );
        assert_eq!(
            kinds("${oc.select:${oc.env:X}}"),
            vec![
                Resolution::DataResolver("oc.select".into()),
                Resolution::Environment("oc.env".into())
            ]
        );
        assert_eq!(interpolations("${a}${b}${c}", 2).len(), 2);
        assert_eq!(interpolations("x${a}", 5)[0].at, 1);
    }

    #[test]
    fn targets_that_run_code_or_do_io() {
        for t in [
            "os.system",
            "posix.system",
            "subprocess.Popen",
            "subprocess.run",
            "builtins.eval",
            "builtins.exec",
            "nt.spawnv",
            "os.execvp",
            "shutil.rmtree",
            "importlib.import_module",
            "_pickle.loads",
            "yaml.unsafe_load",
            "subprocess",
        ] {
            assert!(code_target(t).is_some(), "{t}");
        }
        for t in [
            "torch.nn.Linear",
            "nemo.collections.asr.modules.ConvASREncoder",
            "builtins.dict",
            "os.path.join",
            "osx.system",
            "subprocessing.x",
        ] {
            assert_eq!(code_target(t), None, "{t}");
        }
        assert!(is_dotted_name("nemo.collections.asr.models.EncDecCTCModel"));
        assert!(!is_dotted_name("main"));
        assert!(!is_dotted_name("0.5"));
        assert!(!is_dotted_name("a..b"));
        assert!(!is_dotted_name("a.b c"));
    }
}
