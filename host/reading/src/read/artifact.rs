//! An artifact on disk (a model file or a model directory), resolved to the files plugins
//! read, its subject digest, and what each reader made of each file. Shared by `tensors` and
//! `scan`, so both read an artifact the same way. Which reader reads each file is decided in
//! [`choose`].

use crate::read::hfcache::{self, HubError};
use crate::read::modeldir::{self, DirFile, FileHash, ModelDirError};
use crate::read::plugins::{LoadedPlugin, PluginSet};
use crate::read::remote_dir;
use crate::read::source::InputFile;
use crate::read::source::{hash_file, is_remote};
use socair_plugin_api::{
    abi_stable::{
        sabi_trait::TD_Opaque,
        sabi_types::RRef,
        std_types::{ROption, RString, RVec, Tuple2},
    },
    ByteSource_TO, Finding, FormatReaderBox, OpenedFile, ReadOptions, RowStatus, Severity,
    TensorDescriptor, Unread,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod choose;
mod dcp;
mod members;
mod stem;
use choose::{pick_reader, Pick, Purpose};
pub use choose::{reader_format, reader_names, Chosen, ReaderChoice, DETECT_HEAD};
use stem::expand_stem;
pub use stem::STEM;

/// Why an artifact cannot be read at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The path cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// What.
        source: std::io::Error,
    },
    /// The directory cannot be taken as a model directory.
    #[error(transparent)]
    ModelDir(#[from] ModelDirError),
    /// An `hf://` URI that names nothing in the Hugging Face cache.
    #[error(transparent)]
    Hub(#[from] HubError),
    /// Several plugins claim a file and nothing decides which reads it.
    #[error("{path}: {reason}")]
    Ambiguous {
        /// The file.
        path: PathBuf,
        /// Which plugins claim it.
        reason: String,
    },
    /// A plugin failed (not a finding about the file: an error or a panic in the plugin).
    #[error("{path}: plugin `{plugin}` failed: {message}")]
    Plugin {
        /// The file.
        path: PathBuf,
        /// The plugin.
        plugin: String,
        /// Its error.
        message: String,
    },
    /// The reader that claims the file refuses to read it (a version or variant of its format
    /// that the format's own library refuses too, such as a GGUF of version 1): nothing in it
    /// was checked, and it is no finding.
    #[error("{path}: plugin `{plugin}` does not read it: {message}")]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The plugin.
        plugin: String,
        /// Why, as the plugin says it.
        message: String,
    },
}

/// One file with the reader chosen for it.
pub struct FileJob<'p> {
    /// Its path relative to the artifact (the file's own name for a single file).
    pub rel: String,
    /// The open file.
    pub input: InputFile,
    /// The plugin and reader.
    pub reader: (&'p LoadedPlugin, &'p FormatReaderBox),
    /// Whether the reader was chosen by the file's extension (no reader claimed its content).
    pub by_extension: bool,
    /// Readers that claimed the file but were passed over, each with the reason.
    pub passed_over: Vec<String>,
    /// Readers of other plugins that claim the file too, when the artifact is resolved to be
    /// judged ([`Artifact::resolve_to_judge`]): each reads it as well and its verdict counts.
    pub also: Vec<(&'p LoadedPlugin, &'p FormatReaderBox)>,
}

/// What another plugin's reader made of a file the job's reader reads too.
pub struct AlsoRead<'a, 'p> {
    /// The file and its first reader.
    pub job: &'a FileJob<'p>,
    /// The other plugin.
    pub plugin: &'p LoadedPlugin,
    /// The format its reader reads.
    pub format: String,
    /// What it read.
    pub opened: OpenedFile,
}

/// A file no reader claimed.
pub struct Unclaimed {
    /// Its relative path.
    pub rel: String,
    /// Its first bytes.
    pub head: Vec<u8>,
    /// The open file (it may hold another file's tensor bytes: ONNX external data).
    pub input: InputFile,
}

/// A resolved artifact.
pub struct Artifact<'p> {
    /// Rule-set versions its files are read under (see [`ReaderChoice::rules`]).
    pub rules: std::collections::BTreeMap<String, String>,
    /// File or directory name.
    pub name: String,
    /// The path given.
    pub path: PathBuf,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// The directory's files (one entry, the file itself, for a file).
    pub files: Vec<DirFile>,
    /// Files with a reader.
    pub jobs: Vec<FileJob<'p>>,
    /// Files a reader should read but cannot (extension names a format no plugin reads, or
    /// the file cannot be opened).
    pub unreadable: Vec<(String, String)>,
    /// Files no reader claims.
    pub unclaimed: Vec<Unclaimed>,
    /// Symbolic links in the directory (not followed), when it is resolved to be judged; to
    /// be read, a directory holding one is refused ([`modeldir::list_files`]).
    pub links: Vec<modeldir::DirLink>,
    /// Tensors whose bytes a reader placed in another file that this artifact cannot read them
    /// from, set aside as unread by [`Artifact::open_all`] (a scan judges them).
    set_aside: std::sync::Mutex<Vec<SetAside>>,
    /// The plugins, the choice among them and what the artifact is resolved for: the members
    /// a container hands back are read by the same rules as its files ([`members`]).
    plugins: &'p PluginSet,
    choice: ReaderChoice,
    purpose: Purpose,
}

/// A tensor whose bytes lie in another file that the artifact does not hold as a readable
/// regular file (or cannot hold: a single file was given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// The file whose reader placed it there.
    pub rel: String,
    /// The tensor.
    pub tensor: String,
    /// The other file, as the reader named it (relative to `rel`'s directory).
    pub file: String,
    /// Why its bytes are not read.
    pub reason: String,
}

impl<'p> Artifact<'p> {
    /// Resolves `path`, its files mapped.
    pub fn resolve(
        path: &Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
    ) -> Result<Artifact<'p>, ArtifactError> {
        Artifact::resolve_for(path, plugins, choice, true, Purpose::Read)
    }

    /// Resolves `path` to be judged (`scan`): a file several plugins claim is read by each of
    /// them (the first in search order, or the one `--reader` names, gives the report its
    /// format; see [`FileJob::also`]), and a directory's symbolic links are listed in
    /// [`Artifact::links`] rather than refused, so that the report can say who points at them.
    pub fn resolve_to_judge(
        path: &Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
    ) -> Result<Artifact<'p>, ArtifactError> {
        Artifact::resolve_for(path, plugins, choice, true, Purpose::Judge)
    }

    /// Resolves `path`; its files are mapped only when `map` is set.
    pub fn resolve_with(
        path: &Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
        map: bool,
    ) -> Result<Artifact<'p>, ArtifactError> {
        Artifact::resolve_for(path, plugins, choice, map, Purpose::Read)
    }

    fn resolve_for(
        path: &Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
        map: bool,
        purpose: Purpose,
    ) -> Result<Artifact<'p>, ArtifactError> {
        let io = |source| ArtifactError::Io {
            path: path.to_owned(),
            source,
        };
        if is_remote(path) {
            return Artifact::resolve_remote(path, plugins, choice, purpose);
        }
        // `hf://namespace/name[@revision]`: its snapshot in the Hugging Face cache, offline.
        let in_cache;
        let path = if hfcache::is_uri(path) {
            in_cache = hfcache::resolve(&path.to_string_lossy())?;
            in_cache.as_path()
        } else {
            path
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        let mut name = path
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| path.display().to_string());
        let is_dir = meta.is_dir();
        // A Hugging Face snapshot is named as the Hub names it (`namespace/name@commit`), and
        // a file of one given alone is read from its blob when its link leads to one.
        let snapshot = if is_dir {
            hfcache::Snapshot::of(path)
        } else {
            path.parent().and_then(hfcache::Snapshot::of)
        };
        let mut blob = None;
        if let Some(s) = &snapshot {
            let link = path.file_name().map(|f| s.dir.join(f));
            if is_dir {
                name = s.name();
            } else if let Some(link) = link.filter(|l| l.is_symlink()) {
                let file = link.file_name().unwrap_or_default().to_string_lossy();
                blob = Some(s.follow(&link).map_err(|why| {
                    io(std::io::Error::new(std::io::ErrorKind::InvalidData, why))
                })?);
                name = format!("{}/{file}", s.name());
            }
        }
        let mut links = Vec::new();
        let files = if is_dir && purpose == Purpose::Judge {
            let (files, found) = modeldir::list_entries(path)?;
            links = found;
            files
        } else if is_dir {
            modeldir::list_files(path)?
        } else {
            if !meta.is_file() {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file or a directory",
                )));
            }
            match blob {
                Some(blob) => vec![DirFile {
                    rel: name.rsplit('/').next().unwrap_or(&name).to_owned(),
                    path: blob.path.clone(),
                    size: blob.size,
                    blob: Some(blob),
                    links: 1,
                }],
                None => vec![DirFile {
                    rel: name.clone(),
                    path: path.to_owned(),
                    size: meta.len(),
                    blob: None,
                    links: modeldir::hard_links(&meta),
                }],
            }
        };
        let mut artifact =
            Artifact::claim(path, name, is_dir, files, plugins, choice, map, purpose)?;
        artifact.links = links;
        Ok(artifact)
    }

    /// Resolves the URL of one object (`s3://bucket/key`, `https://host/path`): its name is
    /// the key's last segment (never a query string or credentials: URLs holding them are
    /// refused), and its bytes are fetched only as the readers and the hashing ask for them.
    fn resolve_remote(
        path: &Path,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
        purpose: Purpose,
    ) -> Result<Artifact<'p>, ArtifactError> {
        let url = path.to_str().unwrap_or_default();
        // Errors name the URL without anything that can hold a credential.
        let shown = PathBuf::from(crate::base::cloud::redact(url));
        let io = |source| ArtifactError::Io {
            path: shown.clone(),
            source,
        };
        // The error names the URL already (`shown`): only why it is refused follows.
        let at = crate::base::cloud::parse(url).map_err(|e| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                e.reason(),
            ))
        })?;
        let name = at.name();
        let size = match name.is_empty() {
            true => None,
            false => match crate::base::cloud::size(&at) {
                Ok(size) => Some(size),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(io(std::io::Error::other(e.reason()))),
            },
        };
        // No object of that name: the objects under it (a prefix), read as a model directory;
        // a web server lists nothing, so there it is a missing object.
        let Some(size) = size else {
            if at.base.starts_with("http") {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such object",
                )));
            }
            let files = remote_dir::list(&at).map_err(|e| {
                io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    e.to_string(),
                ))
            })?;
            if files.is_empty() {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such object, and no objects under it",
                )));
            }
            let dir_name = at.key.as_ref().rsplit('/').next().unwrap_or_default();
            let dir_name = match dir_name.is_empty() {
                true => at.base.clone(),
                false => dir_name.to_owned(),
            };
            return Artifact::claim(
                &PathBuf::from(at.url()),
                dir_name,
                true,
                files,
                plugins,
                choice,
                false,
                purpose,
            );
        };
        let files = vec![DirFile {
            rel: name.clone(),
            path: PathBuf::from(at.url()),
            size,
            blob: None,
            links: 1,
        }];
        Artifact::claim(
            &PathBuf::from(at.url()),
            name,
            false,
            files,
            plugins,
            choice,
            false,
            purpose,
        )
    }

    /// Whether the artifact is an object in object storage.
    pub fn is_remote(&self) -> bool {
        is_remote(&self.path)
    }

    /// Opens each file and picks its reader.
    #[allow(clippy::too_many_arguments)]
    fn claim(
        path: &Path,
        name: String,
        is_dir: bool,
        files: Vec<DirFile>,
        plugins: &'p PluginSet,
        choice: &ReaderChoice,
        map: bool,
        purpose: Purpose,
    ) -> Result<Artifact<'p>, ArtifactError> {
        let io = |source| ArtifactError::Io {
            path: path.to_owned(),
            source,
        };
        let mut artifact = Artifact {
            rules: choice.rules.clone(),
            name,
            path: path.to_owned(),
            is_dir,
            files: Vec::new(),
            jobs: Vec::new(),
            unreadable: Vec::new(),
            unclaimed: Vec::new(),
            links: Vec::new(),
            set_aside: Default::default(),
            plugins,
            choice: choice.clone(),
            purpose,
        };
        for file in &files {
            // A remote object's size was just asked for: not asked again.
            let opened = match file.path.to_str() {
                Some(url) if is_remote(&file.path) => {
                    InputFile::open_remote_of_size(url, file.size)
                }
                _ => InputFile::open_with(&file.path, map),
            };
            let input = match opened {
                Ok(i) => i,
                Err(e) if !is_dir => return Err(io(e)),
                Err(e) => {
                    artifact
                        .unreadable
                        .push((file.rel.clone(), format!("cannot read it: {e}")));
                    continue;
                }
            };
            let mut head = vec![0u8; (input.len() as usize).min(DETECT_HEAD)];
            if let Err(e) = input.read_exact_at(0, &mut head) {
                if !is_dir {
                    return Err(io(e));
                }
                artifact
                    .unreadable
                    .push((file.rel.clone(), format!("cannot read it: {e}")));
                continue;
            }
            let pick = match pick_reader(&head, &input, &file.rel, plugins, choice, purpose) {
                // Judged, a file several plugins claim is read by each (the first, or the one
                // --reader names, first); read, it would need a choice nothing made.
                Pick::Several {
                    mut readers,
                    passed_over,
                    by_extension,
                    ..
                } if purpose == Purpose::Judge && !readers.is_empty() => {
                    let first = choice
                        .named
                        .as_ref()
                        .and_then(|n| readers.iter().position(|(p, _)| &p.manifest.name == n))
                        .unwrap_or(0);
                    let reader = readers.remove(first);
                    Pick::Chosen(Chosen {
                        reader,
                        by_extension,
                        passed_over,
                        also: readers,
                    })
                }
                other => other,
            };
            match pick {
                Pick::Chosen(chosen) => artifact.jobs.push(FileJob {
                    rel: file.rel.clone(),
                    input,
                    reader: chosen.reader,
                    by_extension: chosen.by_extension,
                    passed_over: chosen.passed_over,
                    also: chosen.also,
                }),
                Pick::Unclaimed => artifact.unclaimed.push(Unclaimed {
                    rel: file.rel.clone(),
                    head,
                    input,
                }),
                Pick::Unreadable(reason) => artifact.unreadable.push((file.rel.clone(), reason)),
                Pick::Several { reason, .. } => {
                    return Err(ArtifactError::Ambiguous {
                        path: file.path.clone(),
                        reason: format!(
                            "{reason}; this command reads a file with one reader (what it lists, fingerprints or converts must come from one reading of the bytes), and socair does not choose between readers: pick one with --reader NAME (see `socair plugins`); `socair scan` judges such a file with every reader that claims it"
                        ),
                    })
                }
            }
        }
        artifact.files = files;
        Ok(artifact)
    }

    /// Has every file a reader reads hash the bytes its reader reads
    /// ([`InputFile::start_digest`]), for [`Artifact::file_hashes_after_reads`].
    pub fn digest_as_read(&self) {
        for job in &self.jobs {
            job.input.start_digest();
        }
    }

    /// Each file's `(relative path, size, sha256)` and the subject digest, as
    /// [`Artifact::file_hashes`] gives them, each file's hash continued from where its reader's
    /// reads left it ([`Artifact::digest_as_read`]), the other files hashed whole: without
    /// reading again what the readers read.
    pub fn file_hashes_after_reads(&self) -> Result<(Vec<FileHash>, String), ArtifactError> {
        let partials: std::collections::HashMap<&str, _> = self
            .jobs
            .iter()
            .map(|job| (job.rel.as_str(), (&job.input, job.input.take_digest())))
            .collect();
        self.file_hashes_by(|rel| {
            let (input, partial) = partials.get(rel)?;
            Some(input.finish_digest(partial))
        })
    }

    /// The subject digest: a file's SHA-256, or a directory's `socair.modeldir/v1` digest.
    pub fn subject_digest(&self) -> Result<String, ArtifactError> {
        if self.is_dir {
            Ok(modeldir::digest(&self.files)?)
        } else {
            self.file_sha256()
        }
    }

    /// Each file's `(relative path, size, sha256)`, in [`Artifact::files`]' order, and the
    /// subject digest made of them (one pass over the bytes for both).
    pub fn file_hashes(&self) -> Result<(Vec<FileHash>, String), ArtifactError> {
        self.file_hashes_by(|_| None)
    }

    /// [`Artifact::file_hashes`], a file's SHA-256 taken from `known` (by relative path) where
    /// it gives one.
    pub fn file_hashes_by(
        &self,
        known: impl Fn(&str) -> Option<std::io::Result<String>> + Sync,
    ) -> Result<(Vec<FileHash>, String), ArtifactError> {
        if self.is_dir {
            let each = modeldir::hash_each_by(&self.files, |f| known(&f.rel))?;
            let digest = modeldir::digest_of(&each);
            return Ok((each, digest));
        }
        let given = self.jobs.first().and_then(|job| known(&job.rel));
        let sha = match given {
            Some(sha) => sha.map_err(|source| ArtifactError::Io {
                path: self.path.clone(),
                source,
            })?,
            None => self.file_sha256()?,
        };
        let each = self
            .files
            .iter()
            .map(|f| (f.rel.clone(), f.size, sha.clone()))
            .collect();
        Ok((each, sha))
    }

    /// A single file's SHA-256.
    fn file_sha256(&self) -> Result<String, ArtifactError> {
        let io = |source| ArtifactError::Io {
            path: self.path.clone(),
            source,
        };
        // The file a reader already opened is hashed through the same map or handle.
        match (self.jobs.first(), self.files.first()) {
            (Some(job), _) => hash_file(&job.input).map_err(io),
            (None, Some(f)) => hash_file(&InputFile::open(&f.path).map_err(io)?).map_err(io),
            (None, None) => hash_file(&InputFile::open(&self.path).map_err(io)?).map_err(io),
        }
    }

    /// Total size in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The format name reports give: `model directory`, the reader's format, or `unknown`.
    pub fn format(&self) -> String {
        if self.is_dir {
            "model directory".into()
        } else {
            self.jobs
                .first()
                .map_or_else(|| "unknown".into(), |j| j.reader.1.format().to_string())
        }
    }

    /// Opens every file with its reader. A file that holds another file's tensor bytes (ONNX
    /// external data) and that no reader claimed by its content is read as that data only,
    /// not also as a model file of its own (which its extension, such as `.bin`, suggests).
    pub fn open_all(
        &self,
        options: &ReadOptions,
    ) -> Result<Vec<(&FileJob<'p>, OpenedFile)>, ArtifactError> {
        // The files side by side across the cores (a sharded checkpoint's CRC-32 passes, each
        // shard's digest computed from them; a remote directory's headers fetched together);
        // the first failure in file order is the one reported, whichever finished first.
        use rayon::prelude::*;
        let opened: Vec<Result<(&FileJob<'p>, OpenedFile), ArtifactError>> = self
            .jobs
            .par_iter()
            .map(|job| {
                self.open_with(job, job.reader, options).map(|mut opened| {
                    self.set_aside_unsupported(job, &mut opened);
                    (job, opened)
                })
            })
            .collect();
        let mut all: Vec<(&FileJob<'p>, OpenedFile)> =
            opened.into_iter().collect::<Result<_, _>>()?;
        let data = data_files(&all);
        // A file another names as its data, claimed only by its extension, is data (its
        // reader's LEAD "not a checkpoint, whatever its name" says nothing more), unless that
        // reader found evidence against it: a FAIL row stays in the report.
        all.retain(|(job, opened)| {
            let found = opened.rows.iter().any(|r| r.status == RowStatus::Fail);
            !(job.by_extension && data.contains(&job.rel)) || found
        });
        name_by_program(&mut all);
        let mut dcp_options = options.clone();
        dcp_options.rules = self.rule_pairs();
        let dir = dcp::Directory {
            is_dir: self.is_dir,
            holds: &|rel| self.input_by_rel(rel).is_some(),
            data_path: &data_path,
        };
        dcp::read_items(&dir, &mut all, &dcp_options);
        if !self.is_dir && !self.is_remote() {
            for (job, opened) in all.iter_mut() {
                if let Some(names) = self.program_beside(job, opened, options) {
                    name_params(opened, &names);
                }
            }
        }
        Ok(all)
    }

    /// For a `.pdiparams` given alone, the parameter order of the program of the same stem
    /// beside it (`x.pdmodel`, else `x.json`), read by the paddle plugin's program readers
    /// (the plugin that read the parameters), as Paddle's loaders pair them: a directory's
    /// `.pdiparams` is named by [`name_by_program`]; alone, the program is read only for its
    /// names (its own verdict is that of a scan of it or of the directory).
    fn program_beside(
        &self,
        job: &FileJob<'p>,
        opened: &OpenedFile,
        options: &ReadOptions,
    ) -> Option<Vec<String>> {
        if opened.format.as_str() != "paddle-params" || !job.rel.ends_with(".pdiparams") {
            return None;
        }
        for (ext, format) in [("pdmodel", "paddle-program"), ("json", "paddle-pir")] {
            let path = self.path.with_extension(ext);
            // A regular file only (a link would be read as what it points at).
            if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let Some(reader) = job.reader.0.readers.iter().find(|r| r.format() == format) else {
                continue;
            };
            let Ok(input) = InputFile::open(&path) else {
                continue;
            };
            let mut head = vec![0u8; (input.len() as usize).min(DETECT_HEAD)];
            if input.read_exact_at(0, &mut head).is_err()
                || !reader.detect(head.as_slice().into(), input.len())
            {
                continue;
            }
            let source = ByteSource_TO::from_ptr(RRef::new(&input), TD_Opaque);
            let Ok(program) = reader.open(source, options.clone()).into_result() else {
                continue;
            };
            return parameter_order(&program);
        }
        None
    }

    /// Opens every file that other plugins claim too ([`FileJob::also`], judged artifacts only)
    /// with each of those readers, for their verdicts.
    pub fn open_also(&self, options: &ReadOptions) -> Result<Vec<AlsoRead<'_, 'p>>, ArtifactError> {
        let mut out = Vec::new();
        for job in &self.jobs {
            for &(plugin, reader) in &job.also {
                let opened = self.open_with(job, (plugin, reader), options)?;
                out.push(AlsoRead {
                    job,
                    plugin,
                    format: reader.format().to_string(),
                    opened,
                });
            }
        }
        Ok(out)
    }

    /// Opens `job`'s file with `reader`, under this artifact's rule-set versions.
    fn open_with(
        &self,
        job: &FileJob<'p>,
        (plugin, reader): (&'p LoadedPlugin, &'p FormatReaderBox),
        options: &ReadOptions,
    ) -> Result<OpenedFile, ArtifactError> {
        job.input.prefetch_zip_headers();
        let mut options = options.clone();
        options.rules = self.rule_pairs();
        // A container's members are read by the readers that claim them, under the memory
        // share every reader is held to: 32 MiB + 4x the file for what they decode.
        let members = members::Members {
            plugins: self.plugins,
            choice: &self.choice,
            purpose: self.purpose,
            options: &options,
            left: std::cell::Cell::new(socair_plugin_kit::model::memory_share(job.input.len(), 2)),
        };
        members
            .open(reader, members::Span::file(&job.input), &job.rel, 1)
            .map(|mut opened| {
                expand_stem(&job.rel, &mut opened);
                self.judge_other_files(job, &mut opened);
                opened
            })
            .map_err(|e| {
                let (path, plugin) = (job.input.path().to_owned(), plugin.manifest.name.clone());
                match e.kind {
                    socair_plugin_api::PluginErrorKind::Unsupported => ArtifactError::Unsupported {
                        path,
                        plugin,
                        message: e.message.to_string(),
                    },
                    _ => ArtifactError::Plugin {
                        path,
                        plugin,
                        message: e.to_string(),
                    },
                }
            })
    }

    /// The artifact's rule-set versions as a reader is asked for them.
    fn rule_pairs(&self) -> RVec<Tuple2<RString, RString>> {
        self.rules
            .iter()
            .map(|(k, v)| Tuple2(RString::from(k.as_str()), RString::from(v.as_str())))
            .collect()
    }

    /// The open file that holds a descriptor's bytes: the file it was read from, or, for a
    /// descriptor whose `file` names another one (ONNX external data), that file, which must
    /// be a regular file of this model directory (so that the directory's digest covers it).
    pub fn input_of<'a>(
        &'a self,
        job: &'a FileJob<'p>,
        t: &TensorDescriptor,
    ) -> Result<&'a InputFile, String> {
        let ROption::RSome(file) = &t.file else {
            return Ok(&job.input);
        };
        if !self.is_dir {
            return Err(format!(
                "its bytes lie in another file ({file:?}): scan or fingerprint the model's directory instead of the single file, so that the directory's digest covers that file"
            ));
        }
        let rel = data_path(&job.rel, file)?;
        self.input_by_rel(&rel).ok_or_else(|| {
            format!("its bytes lie in {rel:?}, which is not a readable regular file of the model directory")
        })
    }

    /// Judges the findings about another file the format's loader opens ([`Finding::file`]:
    /// an HDF5 external link's target), which a reader cannot: in a directory, a target that
    /// is one of its regular files socair reads is data socair read, and the finding becomes a
    /// note naming it (its row no worse than its other findings); any other target, or a
    /// single file scanned alone, leaves the finding as the reader wrote it.
    fn judge_other_files(&self, job: &FileJob<'p>, opened: &mut OpenedFile) {
        if !self.is_dir {
            return;
        }
        for row in opened.rows.iter_mut() {
            let worst = |findings: &[Finding]| findings.iter().map(|f| f.severity).max();
            // A row whose status its findings explain may follow them; any other keeps it.
            let explained = worst(&row.findings).map(Severity::row_status) == Some(row.status);
            let mut judged = false;
            for f in row.findings.iter_mut() {
                let ROption::RSome(file) = &f.file else {
                    continue;
                };
                let Ok(rel) = data_path(&job.rel, file) else {
                    continue;
                };
                if rel != job.rel && self.jobs.iter().any(|j| j.rel == rel) {
                    f.severity = Severity::Note;
                    f.reason = format!("{}; {rel:?} is a file of this directory, which socair reads: what is opened there is data socair read", f.reason).into();
                    judged = true;
                }
            }
            if judged && explained {
                row.status = worst(&row.findings).map_or(RowStatus::Pass, Severity::row_status);
            }
        }
    }

    /// The tensors [`Artifact::open_all`] set aside because their bytes lie in a file this
    /// artifact cannot read them from.
    pub fn set_aside(&self) -> Vec<SetAside> {
        self.set_aside
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The open file at `rel` (relative to the artifact).
    pub fn input_by_rel(&self, rel: &str) -> Option<&InputFile> {
        self.jobs
            .iter()
            .find(|j| j.rel == rel)
            .map(|j| &j.input)
            .or_else(|| {
                self.unclaimed
                    .iter()
                    .find(|u| u.rel == rel)
                    .map(|u| &u.input)
            })
    }

    /// Moves to `unread`, with the reason, every descriptor whose bytes this host cannot read
    /// as described: bytes in another file that is not one of this directory's files. Nothing
    /// downstream then reads them from the wrong file. (Strided views are read, gathered:
    /// see [`crate::read::layout`].)
    fn set_aside_unsupported(&self, job: &FileJob<'p>, opened: &mut OpenedFile) {
        let tensors = std::mem::take(&mut opened.tensors);
        for t in tensors {
            let why = if t.file.is_some() {
                self.input_of(job, &t).err()
            } else {
                None
            };
            match why {
                Some(reason) => {
                    if let ROption::RSome(file) = &t.file {
                        self.set_aside
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(SetAside {
                                rel: job.rel.clone(),
                                tensor: t.name.to_string(),
                                file: file.to_string(),
                                reason: reason.clone(),
                            });
                    }
                    opened.unread.push(Unread {
                        tensor: ROption::RSome(t.name.clone()),
                        reason: reason.into(),
                        outside_model: false,
                    })
                }
                None => opened.tensors.push(t),
            }
        }
    }
}

impl dcp::Job for &FileJob<'_> {
    fn rel(&self) -> &str {
        &self.rel
    }
    fn input(&self) -> &InputFile {
        &self.input
    }
    fn readers(&self) -> &[FormatReaderBox] {
        &self.reader.0.readers
    }
}

/// The metadata key under which a PaddlePaddle program (the paddle plugin's `paddle-program`
/// and `paddle-pir` readers) gives, as a JSON array, the names of the tensors of the
/// `.pdiparams` beside it in the file's order.
pub const PADDLE_PARAMETER_ORDER: &str = "paddle.parameter_order";

/// Names the tensors of each `.pdiparams` (`paddle-params`: the file names none, its reader
/// calls them `0`, `1`, ...) after the program of the same stem beside it (`model.pdmodel` or
/// `model.json` for `model.pdiparams`), as Paddle's loaders pair them: the program's
/// persistable tensors, sorted, which `save_combine` wrote in that order. Only when the
/// program names exactly as many tensors as the file holds; otherwise they keep their index.
fn name_by_program(all: &mut [(&FileJob<'_>, OpenedFile)]) {
    let stem = |rel: &str| rel.rsplit_once('.').map_or(rel, |(s, _)| s).to_owned();
    let mut orders = std::collections::BTreeMap::new();
    for (job, o) in all.iter() {
        if let Some(names) = parameter_order(o) {
            orders.insert(stem(&job.rel), names);
        }
    }
    for (job, o) in all.iter_mut() {
        if o.format.as_str() != "paddle-params" || !job.rel.ends_with(".pdiparams") {
            continue;
        }
        if let Some(names) = orders.get(&stem(&job.rel)) {
            name_params(o, names);
        }
    }
}

/// The parameter order a PaddlePaddle program gives ([`PADDLE_PARAMETER_ORDER`]).
fn parameter_order(o: &OpenedFile) -> Option<Vec<String>> {
    let format = o.format.as_str();
    if format != "paddle-program" && format != "paddle-pir" {
        return None;
    }
    let order = o.metadata.iter().find(|t| t.0 == PADDLE_PARAMETER_ORDER)?;
    serde_json::from_str::<Vec<String>>(order.1.as_str()).ok()
}

/// Names a `.pdiparams`' tensors (`0`, `1`, ... as its reader calls them) after `names`, only
/// when there are exactly as many.
fn name_params(o: &mut OpenedFile, names: &[String]) {
    let by_index = o
        .tensors
        .iter()
        .enumerate()
        .all(|(i, t)| t.name.as_str() == i.to_string());
    if names.len() == o.tensors.len() && by_index {
        for (t, name) in o.tensors.iter_mut().zip(names) {
            t.name = RString::from(name.as_str());
        }
    }
}

/// The path, relative to the artifact, of the file that a descriptor of the file at `job_rel`
/// names in `file` (relative to that file's directory): a plain relative path that cannot
/// leave the directory.
pub fn data_path(job_rel: &str, file: &str) -> Result<String, String> {
    if file.is_empty() || file.starts_with('/') || file.contains('\\') || file.contains('\0') {
        return Err(format!(
            "its bytes lie in {file:?}, which is not a relative `/`-separated path"
        ));
    }
    if file
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err(format!(
            "its bytes lie in {file:?}, which has an empty, `.` or `..` component: it could leave the model's directory"
        ));
    }
    Ok(match job_rel.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{file}"),
        None => file.to_owned(),
    })
}

/// The files (relative to the artifact) that hold tensor bytes for another file of it (ONNX
/// external data), as the opened files' descriptors name them.
pub fn data_files(opened: &[(&FileJob<'_>, OpenedFile)]) -> BTreeSet<String> {
    opened
        .iter()
        .flat_map(|(job, o)| {
            o.tensors.iter().filter_map(|t| {
                t.file
                    .as_ref()
                    .into_option()
                    .and_then(|f| data_path(&job.rel, f).ok())
            })
        })
        .collect()
}
