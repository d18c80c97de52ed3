//! A private smbd on loopback for one test: its own config, state and share
//! in a fresh temporary directory, a free port, user `root` with a known
//! password. Dropping it kills smbd's whole process group (smbd forks one
//! child per connection) and removes the directory, also when a test panics.
//!
//! Also used by the `smb2_rate` example, through a `#[path]` include.
#![allow(dead_code)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const SMBD: &str = "/usr/sbin/smbd";
pub const USER: &str = "root";
pub const PASSWORD: &str = "crest-Pw1";
pub const SHARE: &str = "share";

/// How long smbd gets to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Smbd {
    pub dir: PathBuf,
    /// The shared directory on disk.
    pub share_dir: PathBuf,
    pub port: u16,
    child: Child,
}

/// Why the live tests cannot run here, if they cannot.
pub fn unavailable() -> Option<String> {
    if !Path::new(SMBD).exists() {
        return Some(format!("{SMBD} is missing (apt-get install samba)"));
    }
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if uid.ok().as_deref() != Some("0") {
        return Some("smbd needs root to serve a share as user root".into());
    }
    None
}

fn free_port() -> u16 {
    // smbd must bind the port itself; the gap between this listener closing
    // and smbd binding is covered by retrying the start.
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("bind a loopback port")
}

impl Smbd {
    /// Starts smbd, `extra` added to `[global]` (e.g. `server signing = mandatory`).
    /// `None` (with the reason printed) where smbd cannot run.
    pub fn start(extra: &str) -> Option<Smbd> {
        if let Some(why) = unavailable() {
            eprintln!("skipped: {why}");
            return None;
        }
        let mut last = String::new();
        for _ in 0..3 {
            match Smbd::try_start(extra) {
                Ok(s) => return Some(s),
                Err(e) => last = e,
            }
        }
        panic!("smbd did not start: {last}");
    }

    fn try_start(extra: &str) -> Result<Smbd, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "crest-smb2-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["private", "lock", "state", "cache", "pid", "ncalrpc", "share"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        let port = free_port();
        let d = dir.display();
        let conf = dir.join("smb.conf");
        std::fs::write(
            &conf,
            format!(
                "[global]\n  server role = standalone server\n  interfaces = 127.0.0.1\n  bind interfaces only = yes\n\
                 smb ports = {port}\n  disable netbios = yes\n  load printers = no\n  printing = bsd\n\
                 printcap name = /dev/null\n  disable spoolss = yes\n  private dir = {d}/private\n\
                 lock directory = {d}/lock\n  state directory = {d}/state\n  cache directory = {d}/cache\n\
                 pid directory = {d}/pid\n  ncalrpc dir = {d}/ncalrpc\n  log file = {d}/log.%m\n\
                 passdb backend = tdbsam:{d}/private/passdb.tdb\n  server min protocol = SMB2_02\n{extra}\n\
                 [{SHARE}]\n  path = {d}/share\n  read only = no\n"
            ),
        )
        .map_err(|e| e.to_string())?;
        let mut pdbedit = Command::new("pdbedit")
            .args(["-s", conf.to_str().unwrap(), "-a", "-u", USER, "-t"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("pdbedit: {e}"))?;
        pdbedit.stdin.take().unwrap().write_all(format!("{PASSWORD}\n{PASSWORD}\n").as_bytes()).unwrap();
        if !pdbedit.wait().map_err(|e| e.to_string())?.success() {
            return Err("pdbedit failed to add the user".into());
        }
        let log = std::fs::File::create(dir.join("smbd.out")).map_err(|e| e.to_string())?;
        let child = Command::new(SMBD)
            .args(["--foreground", "--no-process-group", "--debug-stdout", "-s", conf.to_str().unwrap()])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            // Its own process group, so Drop can kill smbd and its children at once.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("spawn smbd: {e}"))?;
        let mut smbd = Smbd { share_dir: dir.join("share"), dir, port, child };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(smbd);
            }
            if let Ok(Some(status)) = smbd.child.try_wait() {
                return Err(format!("smbd exited with {status}: {}", smbd.log()));
            }
            if Instant::now() > deadline {
                return Err(format!("smbd not listening after {START_TIMEOUT:?}: {}", smbd.log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("smbd.out")).unwrap_or_default()
    }

    /// smbd's process group id (the id of the smbd it started).
    pub fn pgid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Smbd {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
