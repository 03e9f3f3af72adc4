//! Everything that leaves a run as files: the result folder's CSVs (docs/results.md), the charts
//! drawn from them and the HTML report.
//!
//! Every file is written whole to a temporary name in the same folder and renamed into place
//! ([`crate::atomic`]), so a crash never leaves half a file. Charts and the report read a
//! result folder only through its files ([`results`]), so they can be redrawn at any time
//! (`jitterlab plot DIR`) from the CSVs alone.
//!
//! - [`rows`]: one row type per CSV file, the one definition of its columns.
//! - [`csv`]: writes the tidy CSV files from a run's finished units (and `pareto.csv`).
//! - [`design`]: the reader's choices and the world's points, the success target.
//! - [`labels`]: sweep keys and values as a reader reads them.
//! - [`palette`]: the one palette (a colour per strategy name, viridis for heat maps) and
//!   `palette.json`.
//! - [`publish`]: a scenario's unit records written as a result folder (journal, CSV files,
//!   palette, `meta.json`) through its stage, for `run`, `merge` and `live`. The folder
//!   itself (file names, ownership, staging) is [`crate::folder`]'s.
//! - [`results`]: reads a result folder into typed rows, with errors that name the file and row.
//! - [`plot`]: the charts (PNG and SVG) and the jitter picture of `jitterlab delays --plot`.
//! - [`table`]: the headline table's columns and cells (`run` prints it, `serve` shows it).
//! - [`report`]: one self-contained `report.html` with the scenario, a summary table and every
//!   chart inline.

pub mod csv;
pub mod design;
pub mod labels;
pub mod palette;
pub mod plot;
pub(crate) mod publish;
pub mod report;
pub mod results;
pub mod rows;
pub mod table;
