//! Server lifecycle: validate the config, bind every listener, start the
//! worker threads, report addresses, and stop everything promptly.
//!
//! `start` returns only once every worker is accepting, and fails without
//! leaving threads or sockets behind. Request handling lives elsewhere.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::access_log::{self, LogWriter};
use crate::cgi::Cgi;
use crate::config::ServeConfig;
use crate::error::ServeError;
use crate::handler::Site;
use crate::listener::{self, Endpoint};
use crate::service_queue::ServiceQueue;
use crate::specweb99::Specweb99;
use crate::static_files::StaticFiles;
use crate::{h3, tls};

/// A running target server. Dropping it stops it, like `stop()`.
pub struct Server {
    /// (address, speaks TLS), the main listener first.
    endpoints: Vec<(SocketAddr, bool)>,
    shutdown: watch::Sender<bool>,
    workers: Vec<JoinHandle<()>>,
    log: Option<LogWriter>,
}

impl Server {
    /// Binds, spawns the worker threads and returns once they are listening.
    pub fn start(config: ServeConfig) -> Result<Server, ServeError> {
        let resolved = config.resolve()?;
        // The certificate is only generated (and `tls_dir` only written) when
        // some listener actually speaks TLS.
        let tls_configs = match config.tls || config.tls_port.is_some() {
            true => Some(tls::server_configs(config.tls_dir.as_deref())?),
            false => None,
        };
        let acceptor = tls_configs.as_ref().map(|c| TlsAcceptor::from(c.tcp.clone()));
        let mut endpoints = vec![Endpoint::bind(
            SocketAddr::new(config.host, config.port),
            if config.tls { acceptor.clone() } else { None },
        )?];
        if let Some(port) = config.tls_port {
            endpoints.push(Endpoint::bind(SocketAddr::new(config.host, port), acceptor)?);
        }
        // HTTP/3 on the TLS listener's UDP twin (its port once bound: 0 picks one for both).
        let quic_socket = match config.http3 {
            true => {
                let tls_addr = endpoints.iter().find(|ep| ep.tls.is_some()).map(|ep| ep.addr);
                let addr = tls_addr.ok_or_else(|| ServeError::Config("HTTP/3 needs a TLS listener".into()))?;
                Some(h3::bind(addr)?)
            }
            false => None,
        };
        let (log, log_writer) = match &config.access_log {
            Some(path) => access_log::open(path).map(|(log, writer)| (Some(log), Some(writer)))?,
            None => (None, None),
        };
        let site = Arc::new(Site {
            files: StaticFiles::new(resolved.docroot.clone(), config.memory_cache_max_file_bytes),
            specweb99: Specweb99::new(resolved.specweb99_dir, resolved.docroot.clone()),
            cgi: Cgi::new(resolved.cgi_dir, resolved.docroot),
            log,
            queue: (config.service_time_us > 0)
                .then(|| ServiceQueue::new(std::time::Duration::from_micros(config.service_time_us))),
        });

        let (shutdown, shutdown_rx) = watch::channel(false);
        // From here on, an early return drops `server`, which stops whatever
        // was already started.
        let mut server = Server {
            endpoints: endpoints.iter().map(|ep| (ep.addr, ep.tls.is_some())).collect(),
            shutdown,
            workers: Vec::with_capacity(resolved.threads),
            log: log_writer,
        };
        if let (Some(socket), Some(configs)) = (quic_socket, &tls_configs) {
            let quic = configs.quic.clone();
            let worker = h3::spawn(socket, quic, site.clone(), resolved.threads, shutdown_rx.clone())?;
            server.workers.push(worker);
        }
        let (ready_tx, ready_rx) = mpsc::channel();
        for i in 0..resolved.threads {
            let eps = endpoints.iter().map(Endpoint::try_clone).collect::<Result<Vec<_>, _>>();
            let eps = eps.map_err(ServeError::Threads)?;
            let (site, shutdown_rx, ready) = (site.clone(), shutdown_rx.clone(), ready_tx.clone());
            let worker = std::thread::Builder::new()
                .name(format!("crest-target-{i}"))
                .spawn(move || listener::run_worker(eps, site, shutdown_rx, ready))
                .map_err(ServeError::Threads)?;
            server.workers.push(worker);
        }
        drop(ready_tx);
        for _ in 0..resolved.threads {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(ServeError::Threads(e)),
                Err(_) => {
                    return Err(ServeError::Threads(std::io::Error::other("a worker thread died while starting")))
                }
            }
        }
        // The workers hold their own duplicates of the listening sockets; once
        // they exit nothing keeps the ports open.
        drop(endpoints);
        Ok(server)
    }

    /// One URL per listener, main listener first, e.g. `http://127.0.0.1:41234/`.
    /// A wildcard bind is reported as loopback, which is what a local
    /// client can connect to.
    pub fn urls(&self) -> Vec<String> {
        self.endpoints
            .iter()
            .map(|&(addr, tls)| {
                let ip = match addr.ip() {
                    IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
                    ip => ip,
                };
                let scheme = if tls { "https" } else { "http" };
                format!("{scheme}://{}/", SocketAddr::new(ip, addr.port()))
            })
            .collect()
    }

    /// The bound addresses, in the same order as `urls()`.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.endpoints.iter().map(|&(addr, _)| addr).collect()
    }

    /// Stops accepting, lets in-flight requests finish for up to a second,
    /// closes every connection and joins the worker threads.
    pub fn stop(self) {
        drop(self);
    }

    fn shutdown(&mut self) {
        self.shutdown.send_replace(true);
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        if let Some(log) = self.log.take() {
            log.finish();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

// The Python binding keeps a `Server` in an object that may move between
// threads; losing `Send + Sync` must be a compile error here, not there.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Server>();
};
