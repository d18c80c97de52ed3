//! Running workers, whatever they run: the `RunHandle` a caller holds,
//! the live counters it polls, the thread helpers every worker shares and
//! how an event-loop worker waits (`nap`). Below both kinds of run (`http`
//! and `fileops`), above `results`: nothing here draws a request, opens a
//! connection or reads a file.

pub(crate) mod fine_timer;
mod handle;
pub(crate) mod live;
pub(crate) mod nap;
mod thread;

pub use handle::RunHandle;
pub use live::LiveSnapshot;
pub(crate) use thread::{start_instant, thread_cpu_time, Outcome, WAKE_TOKEN};
