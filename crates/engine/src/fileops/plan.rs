//! `FilePlan`: a file-operation run's `RunConfig` checked and resolved, the
//! file runs' gate for their input before any file is touched or byte sent:
//! the rules every run shares (`gate`), then the URL, the loadfile and what
//! a loadfile run cannot do. Reads the loadfile; opens no socket.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{ResolveNames, RunConfig, Secret};
use crate::error::ConfigError;
use crate::gate;

use super::loadfile::Loadfile;
use super::op::OpKind;

/// Where the operations go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A directory reached through the kernel (local or mounted): dbench's fileio.
    Fileio {
        /// The directory, without a trailing slash.
        dir: String,
    },
    /// An SMB2/3 server over TCP, spoken by crest itself.
    Smb {
        /// Host name or address.
        host: String,
        /// TCP port (445 unless given).
        port: u16,
        /// Share name.
        share: String,
        /// User name (`DOMAIN;user` or `DOMAIN\\user` gives the domain).
        user: String,
        /// Domain, empty if none.
        domain: String,
        /// The password (from `Loadfile::password`).
        password: Secret,
    },
}

/// A checked file-operation run.
#[derive(Debug, Clone)]
pub struct FilePlan {
    /// The target.
    pub backend: Backend,
    /// The loadfile, parsed.
    pub loadfile: Arc<Loadfile>,
    /// Clients (= connections: each connection is one dbench client).
    pub connections: u32,
    /// Connections per scored client.
    pub connections_per_client: u32,
    /// Event-loop threads (SMB); fileio runs a thread per client.
    pub threads: u32,
    /// Run length.
    pub duration: Option<Duration>,
    /// Operations at most, over all clients.
    pub max_operations: Option<u64>,
    /// Counting window.
    pub window: Option<(Duration, Duration)>,
    /// Pause after each pass of the loadfile (NetBench's think time between units of work).
    pub think_time: Duration,
    /// Each client waits a random time up to this before its first operation.
    pub client_start_delay: Duration,
    /// Per operation (SMB), from its start to its reply.
    pub timeout: Duration,
    /// Seed for the start delays.
    pub seed: u64,
    /// Delete each client's workspace at the end.
    pub cleanup: bool,
    /// Which fileio operations look their path up first.
    pub resolve_names: ResolveNames,
    /// dbench id of connection 0 (`Loadfile::first_client`): paths name
    /// `client<first_client + connection>`.
    pub first_client: u32,
    /// SMB connections are made from these addresses, round-robin by
    /// connection (a client subnet's lines); empty: the kernel's choice.
    pub source_addrs: Vec<IpAddr>,
    /// Start at this Unix time.
    pub start_at_unix_s: Option<f64>,
    /// Report a part.
    pub report_part: bool,
}

impl FilePlan {
    /// Checks `config` (which has a `loadfile`) and resolves it.
    pub fn new(config: &RunConfig) -> Result<Self, ConfigError> {
        let spec = config.loadfile.as_ref().expect("invariant: called for a loadfile run");
        if config.replay.is_some() {
            return Err(ConfigError::new(
                "loadfile",
                "{replay} and {loadfile} conflict: a loadfile run sends file operations; drop {loadfile}",
            ));
        }
        let shared = gate::check(config)?;
        let backend = backend(&config.url, spec.password.as_ref())?;
        let source_addrs = gate::source_addrs(config)?;
        if matches!(backend, Backend::Fileio { .. }) && !source_addrs.is_empty() {
            return Err(ConfigError::new(
                "source_addrs",
                "a file:// run makes this machine's file calls, not connections: drop {source_addrs} (an SMB \
                 share over a client network is smb://USER@HOST/SHARE)",
            ));
        }
        let text = std::fs::read(&spec.path).map_err(|e| {
            ConfigError::new(
                "loadfile",
                format!(
                    "cannot read loadfile {}: {}: install dbench (apt-get install dbench) for \
                     /usr/share/dbench/client.txt, or give the path of a dbench loadfile",
                    spec.path,
                    crate::fileops::fileio::io_reason(&e)
                ),
            )
        })?;
        let text = String::from_utf8(text)
            .map_err(|_| ConfigError::new("loadfile", format!("loadfile {} is not text (UTF-8)", spec.path)))?;
        let loadfile =
            Loadfile::parse(&text).map_err(|e| ConfigError::new("loadfile", format!("loadfile {}: {e}", spec.path)))?;
        // A file run scores whole clients only (NetBench's clients are all alike).
        if config.connections % config.connections_per_client != 0 {
            return Err(ConfigError::new(
                "connections_per_client",
                format!(
                    "{{connections_per_client}} ({}) must divide {{connections}} ({}) evenly",
                    config.connections_per_client, config.connections
                ),
            ));
        }
        if spec.resolve_names != ResolveNames::Queries && matches!(backend, Backend::Smb { .. }) {
            return Err(ConfigError::new(
                "resolve_names",
                "an SMB server resolves the names it is sent itself: resolve_names \"every-path\" is for \
                 file:///DIR targets (dbench's fileio simulates that lookup); drop it for an smb:// target",
            ));
        }
        if config.rate_rps.is_some() {
            return Err(ConfigError::new(
                "rate_rps",
                "a loadfile run is a closed loop (each client replays its loadfile); drop the rate",
            ));
        }
        Ok(Self {
            backend,
            loadfile: Arc::new(loadfile),
            connections: config.connections,
            connections_per_client: config.connections_per_client,
            threads: config.threads,
            duration: shared.duration,
            max_operations: config.max_requests,
            window: shared.window,
            think_time: shared.think_time,
            client_start_delay: shared.client_start_delay,
            timeout: shared.timeout,
            seed: config.seed,
            cleanup: spec.cleanup,
            resolve_names: spec.resolve_names,
            first_client: spec.first_client,
            source_addrs,
            start_at_unix_s: config.start_at_unix_s,
            report_part: config.report_part,
        })
    }

    /// Scored clients.
    pub fn clients(&self) -> u32 {
        self.connections / self.connections_per_client
    }

    /// The class names: every operation kind.
    pub fn classes() -> Vec<String> {
        OpKind::ALL.iter().map(|k| k.name().to_string()).collect()
    }
}

/// The backend a URL names.
fn backend(url: &str, password: Option<&Secret>) -> Result<Backend, ConfigError> {
    let bad = |why: String| ConfigError::new("url", why);
    let parsed = url::Url::parse(url).map_err(|e| {
        bad(format!("invalid URL '{url}' ({e}): a file run needs file:///DIR or smb://USER@HOST[:PORT]/SHARE"))
    })?;
    match parsed.scheme() {
        "file" => {
            let dir = parsed
                .to_file_path()
                .map_err(|()| bad(format!("'{url}' is not a local path: write file:///absolute/dir")))?;
            let meta = std::fs::metadata(&dir).map_err(|e| {
                bad(format!(
                    "cannot use {} as the file target: {}",
                    dir.display(),
                    crate::fileops::fileio::io_reason(&e)
                ))
            })?;
            if !meta.is_dir() {
                return Err(bad(format!(
                    "{} is not a directory: give the directory the clients work in",
                    dir.display()
                )));
            }
            let dir = dir.to_string_lossy().trim_end_matches('/').to_string();
            Ok(Backend::Fileio { dir: if dir.is_empty() { "/".into() } else { dir } })
        }
        "smb" => {
            let host = parsed
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| bad(format!("'{url}' has no host: write smb://USER@HOST[:PORT]/SHARE")))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let share = parsed.path().trim_matches('/');
            if share.is_empty() || share.contains('/') {
                return Err(bad(format!("'{url}' must name one share: smb://USER@HOST[:PORT]/SHARE")));
            }
            let user = percent_decode(parsed.username());
            if user.is_empty() {
                return Err(bad(format!("'{url}' names no user: smb://USER@HOST[:PORT]/SHARE")));
            }
            if parsed.password().is_some() {
                return Err(bad(
                    "a password in the URL would be seen by everyone on the machine: give it through the \
                     environment or a 0600 file instead"
                        .into(),
                ));
            }
            let password = password.ok_or_else(|| {
                ConfigError::new(
                    "password",
                    format!(
                        "the SMB user {user} needs a password (none was given): set CREST_SMB_PASSWORD or give \
                         --password-file FILE (mode 0600)"
                    ),
                )
            })?;
            let (domain, user) = match user.split_once([';', '\\']) {
                Some((d, u)) => (d.to_string(), u.to_string()),
                None => (String::new(), user),
            };
            Ok(Backend::Smb {
                host,
                port: parsed.port().unwrap_or(445),
                share: percent_decode(share),
                user,
                domain,
                password: password.clone(),
            })
        }
        other => Err(bad(format!(
            "unsupported URL scheme '{other}' for a loadfile run: use file:///DIR or smb://USER@HOST[:PORT]/SHARE"
        ))),
    }
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map_or_else(|| s.to_string(), |(_, v)| v.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smb_urls_name_user_host_port_and_share() {
        let b = backend("smb://crest@127.0.0.1:4455/crest", Some(&Secret::from("pw"))).expect("ok");
        assert_eq!(
            b,
            Backend::Smb {
                host: "127.0.0.1".into(),
                port: 4455,
                share: "crest".into(),
                user: "crest".into(),
                domain: String::new(),
                password: Secret::from("pw")
            }
        );
        let b = backend("smb://WORK%3Bbob@host/share", Some(&Secret::from("pw"))).expect("ok");
        assert!(matches!(b, Backend::Smb { ref domain, ref user, port: 445, .. } if domain == "WORK" && user == "bob"));
        for (url, want) in [
            ("smb://host/share", "names no user"),
            ("smb://u:secret@host/share", "password in the URL"),
            ("smb://u@host/", "one share"),
            ("smb://u@host/a/b", "one share"),
            ("ftp://u@host/a", "unsupported URL scheme 'ftp'"),
        ] {
            let e = backend(url, Some(&Secret::from("pw"))).expect_err(url);
            assert!(e.template.contains(want), "{url}: {}", e.template);
        }
        assert_eq!(backend("smb://u@h/s", None).unwrap_err().field, "password");
    }

    #[test]
    fn file_urls_need_an_existing_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("file://{}/", dir.path().display());
        assert_eq!(backend(&url, None).unwrap(), Backend::Fileio { dir: dir.path().display().to_string() });
        let missing = format!("file://{}/nope", dir.path().display());
        assert!(backend(&missing, None).unwrap_err().template.contains("No such file"));
    }

    #[test]
    fn dbench_lookups_are_for_file_targets_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let loadfile = dir.path().join("client.txt");
        std::fs::write(&loadfile, "Close 1 NT_STATUS_OK\n").expect("loadfile");
        let config = |url: String| RunConfig {
            url,
            connections: 1,
            duration_s: Some(1.0),
            loadfile: Some(crate::config::Loadfile {
                path: loadfile.display().to_string(),
                password: Some(Secret::from("pw")),
                cleanup: false,
                first_client: 0,
                resolve_names: ResolveNames::EveryPath,
            }),
            ..RunConfig::default()
        };
        let plan = FilePlan::new(&config(format!("file://{}", dir.path().display()))).expect("a file target");
        assert_eq!(plan.resolve_names, ResolveNames::EveryPath);
        let e = FilePlan::new(&config("smb://u@127.0.0.1/s".into())).expect_err("an SMB target");
        assert_eq!(e.field, "resolve_names");
        assert!(e.template.contains("drop it for an smb:// target"), "{}", e.template);
    }

    #[test]
    fn a_debug_print_of_the_backend_or_credentials_never_shows_the_password() {
        let b = backend("smb://crest@127.0.0.1/crest", Some(&Secret::from("marker-4d1c"))).expect("ok");
        let shown = format!("{b:?}");
        assert!(shown.contains("crest") && shown.contains("hidden") && !shown.contains("marker-4d1c"), "{shown}");
        let c = crest_smb2::Credentials { user: "u".into(), password: "marker-4d1c".into(), domain: String::new() };
        assert!(!format!("{c:?}").contains("marker-4d1c"));
    }
}
