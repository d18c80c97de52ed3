//! `crest._engine`: the thin binding between Python and the Rust crates.
//! JSON in (a `RunConfig`, `ServeConfig` or parts), JSON out (a `RunReport`); each
//! function converts, releases the GIL, calls the crate and maps errors.
//! No logic lives here.
//!
//! Errors have explicit kinds: `ConfigError` (a ValueError; bad input, with
//! the `RunConfig` key in `field` and the message with `{key}` placeholders in
//! `template`) and `MachineError` (a RuntimeError; the operating system
//! refused something or a worker panicked).

use std::sync::Mutex;
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _engine,
    ConfigError,
    PyValueError,
    "Bad input the engine refuses before any traffic: `field` is the RunConfig key, `template` the message with {key} placeholders."
);
create_exception!(
    _engine,
    MachineError,
    PyRuntimeError,
    "The machine failed the run: an event loop, a thread or TLS setup refused, or a worker panicked."
);

fn config_error(py: Python<'_>, e: &crest_engine::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    let value = err.value(py);
    if let Err(set) = value.setattr("field", e.field).and_then(|()| value.setattr("template", e.template.as_str())) {
        return set;
    }
    err
}

fn parse_config(py: Python<'_>, config_json: &str) -> PyResult<crest_engine::RunConfig> {
    serde_json::from_str(config_json).map_err(|e| {
        config_error(py, &crest_engine::ConfigError { field: "", template: format!("invalid run config: {e}") })
    })
}

/// Checks a RunConfig (JSON) against every rule but name resolution: no DNS,
/// no socket. Raises ConfigError.
#[pyfunction]
fn validate(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let config = parse_config(py, config_json)?;
    crest_engine::validate(&config).map_err(|e| config_error(py, &e))
}

/// Checks a file-operation RunConfig (JSON) as a run would before any load:
/// the input, and for an smb:// target the login and the share (one session
/// set up and dropped), GIL released. Raises ConfigError.
#[pyfunction]
fn probe_file_target(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let config = parse_config(py, config_json)?;
    py.detach(|| crest_engine::probe_file_target(&config)).map_err(|e| config_error(py, &e))
}

/// The live latency histogram's bucket lower bounds in µs (`Run.live()["latency_buckets"]`).
#[pyfunction]
fn live_latency_lower_us() -> Vec<u64> {
    crest_engine::stats::live_latency_lower_us().to_vec()
}

/// The engine's version (the workspace version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Validates a RunConfig (JSON) and starts the run.
#[pyfunction]
fn start_run(py: Python<'_>, config_json: &str) -> PyResult<Run> {
    let config = parse_config(py, config_json)?;
    let handle = crest_engine::start(&config).map_err(|e| match e {
        crest_engine::StartError::Config(e) => config_error(py, &e),
        crest_engine::StartError::Machine(why) => MachineError::new_err(why),
    })?;
    Ok(Run { handle: Mutex::new(handle) })
}

/// A run in progress.
#[pyclass(module = "crest._engine")]
struct Run {
    handle: Mutex<crest_engine::RunHandle>,
}

#[pymethods]
impl Run {
    /// Totals so far, as a dict.
    fn live<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = lock(&self.handle)?.live();
        let d = PyDict::new(py);
        d.set_item("elapsed_s", s.elapsed_s)?;
        d.set_item("requests", s.requests)?;
        d.set_item("errors", s.errors)?;
        d.set_item("bytes", s.bytes)?;
        d.set_item("connections_opened", s.connections_opened)?;
        d.set_item("completed", s.completed)?;
        d.set_item("received", s.received)?;
        let failed = PyDict::new(py);
        for kind in crest_engine::ErrorKind::ALL {
            failed.set_item(kind.name(), s.failed[kind.index()])?;
        }
        d.set_item("failed", failed)?;
        d.set_item("latency_buckets", s.latency.to_vec())?;
        Ok(d)
    }

    /// Stops the run promptly; `wait` then returns the partial report.
    fn cancel(&self) -> PyResult<()> {
        lock(&self.handle)?.cancel();
        Ok(())
    }

    /// The report as JSON once the run has ended, else None after `timeout_s`.
    fn wait(&self, py: Python<'_>, timeout_s: f64) -> PyResult<Option<String>> {
        let timeout = Duration::try_from_secs_f64(timeout_s.max(0.0)).unwrap_or(Duration::MAX);
        py.detach(|| {
            let mut handle = lock(&self.handle)?;
            match handle.wait(timeout) {
                Ok(Some(report)) => {
                    serde_json::to_string(report).map(Some).map_err(|e| PyRuntimeError::new_err(e.to_string()))
                }
                Ok(None) => Ok(None),
                Err(why) => Err(MachineError::new_err(why)),
            }
        })
    }
}

/// Merges the parts of one run's nodes (each the `part` of a RunReport made
/// with `report_part`), part i's clients from `first_clients[i]`, into one
/// RunReport (JSON), GIL released. Raises ConfigError (field "") for a
/// malformed part or parts of different runs.
#[pyfunction]
fn merge_parts(py: Python<'_>, parts: Vec<String>, first_clients: Vec<u32>) -> PyResult<String> {
    let refused = |template: String| config_error(py, &crest_engine::ConfigError { field: "", template });
    if parts.len() != first_clients.len() {
        return Err(refused(format!("{} parts but {} first clients", parts.len(), first_clients.len())));
    }
    let report = py.detach(|| {
        let parts: Vec<(&str, u32)> = parts.iter().map(String::as_str).zip(first_clients).collect();
        crest_engine::merge_parts(&parts).map(|report| serde_json::to_string(&report))
    });
    report.map_err(|e| refused(e.0))?.map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Reads the access log at `path` with the reader's options (JSON: crest_replay's
/// `Options`) and returns its `Summary` (JSON), GIL released; the table is kept
/// in the reader's cache for the engine's `load` of the same file. Raises
/// ConfigError (field "replay") for bad options or a log that cannot be read,
/// its message one line; where its fix names a reader option it says `{format}`
/// or `{max_bad_lines}`, which crest.replay.scan words as its caller's user gives it.
#[pyfunction]
fn scan_log(py: Python<'_>, path: &str, options_json: &str) -> PyResult<String> {
    let refused = |message: String| {
        let err = ConfigError::new_err(message.clone());
        let value = err.value(py);
        match value.setattr("field", "replay").and_then(|()| value.setattr("template", message)) {
            Ok(()) => err,
            Err(set) => set,
        }
    };
    let options: crest_replay::Options =
        serde_json::from_str(options_json).map_err(|e| refused(format!("invalid log reader options: {e}")))?;
    let summary = py.detach(|| crest_replay::load(std::path::Path::new(path), &options).map(|table| table.summary()));
    let summary = summary.map_err(|e| refused(e.to_string()))?;
    serde_json::to_string(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Starts the built-in target from a ServeConfig (JSON).
#[pyfunction]
fn start_server(py: Python<'_>, config_json: &str) -> PyResult<Server> {
    let config: crest_target::ServeConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("invalid server config: {e}")))?;
    let server = py.detach(|| crest_target::Server::start(config)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let urls = server.urls();
    Ok(Server { server: Mutex::new(Some(server)), urls })
}

/// A running built-in target.
#[pyclass(module = "crest._engine")]
struct Server {
    server: Mutex<Option<crest_target::Server>>,
    #[pyo3(get)]
    urls: Vec<String>,
}

#[pymethods]
impl Server {
    /// Stops serving and joins the server's threads.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let server = lock(&self.server)?.take();
        if let Some(server) = server {
            py.detach(|| server.stop());
        }
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> PyResult<std::sync::MutexGuard<'_, T>> {
    m.lock().map_err(|_| MachineError::new_err("engine handle poisoned by an earlier panic"))
}

/// A worker's panic is caught and becomes the run's `MachineError`, one line;
/// the default hook would also print a multi-line report, so it is kept for
/// every other thread only.
fn quiet_worker_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !std::thread::current().name().is_some_and(|n| n.starts_with("crest-worker-")) {
            default(info);
        }
    }));
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_worker_panics();
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(live_latency_lower_us, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(probe_file_target, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("MachineError", m.py().get_type::<MachineError>())?;
    m.add_function(wrap_pyfunction!(start_run, m)?)?;
    m.add_function(wrap_pyfunction!(merge_parts, m)?)?;
    m.add_function(wrap_pyfunction!(start_server, m)?)?;
    m.add_function(wrap_pyfunction!(scan_log, m)?)?;
    m.add_class::<Run>()?;
    m.add_class::<Server>()?;
    Ok(())
}
