//! What a run produces: the per-worker `stats` every producer records
//! into, the `part` that carries them losslessly between machines, and the
//! merged `report`. Below everything that produces results; nothing here
//! knows how a run was planned or driven.

pub mod part;
pub mod report;
pub mod stats;
