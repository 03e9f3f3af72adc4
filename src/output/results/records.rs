//! A CSV file of a result folder held as records, its columns found by header name, with
//! errors that name the file, the line and the column.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::metric::{Metric, PerMetric};
use crate::output::rows::{METRICS, MetricColumns, Row, SWEEP, fields};

/// A CSV file held as records, with errors that name the file, line and column.
pub(super) struct Table {
    pub(super) path: PathBuf,
    pub(super) headers: csv::StringRecord,
    pub(super) records: Vec<csv::StringRecord>,
}

impl Table {
    pub(super) fn read(path: &Path) -> Result<Table> {
        let bytes = crate::input::read(path, crate::input::RESULT_CSV).map_err(|e| match e {
            Error::Io { source, .. } => Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read: {source}"),
            },
            other => other,
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(bytes.as_slice());
        let headers = reader
            .headers()
            .map_err(|e| Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read the header: {e}"),
            })?
            .clone();
        let records = reader
            .records()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                Error::ResultFolder {
                    path: path.to_path_buf(),
                    message: format!("line {line}: malformed row: {e}"),
                }
            })?;
        Ok(Table {
            path: path.to_path_buf(),
            headers,
            records,
        })
    }

    pub(super) fn error(&self, message: String) -> Error {
        Error::ResultFolder {
            path: self.path.clone(),
            message,
        }
    }

    pub(super) fn record_error(&self, record: &csv::StringRecord, message: &str) -> Error {
        let line = record.position().map_or(0, |p| p.line());
        // `line 3, column 5 (...)` when the message names a column, else `line 3: ...`.
        let sep = if message.starts_with("column ") {
            ", "
        } else {
            ": "
        };
        self.error(format!("line {line}{sep}{message}"))
    }

    pub(super) fn col(&self, name: &str) -> Result<usize> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            self.error(format!(
                "no column `{name}` (the header is: {})",
                self.headers.iter().collect::<Vec<_>>().join(",")
            ))
        })
    }

    /// Every record as a row `R`, its sweep values taken from the columns named `sweep_keys`
    /// (left empty when the file does not repeat them).
    pub(super) fn rows<R: Row>(&self, sweep_keys: &[String]) -> Result<Vec<R>> {
        let mut metric_columns = false;
        for &field in fields::<R>() {
            match field {
                SWEEP => {}
                METRICS => metric_columns = true,
                name if R::ADDED_LATER.contains(&name) => {}
                name => {
                    self.col(name)?;
                }
            }
        }
        if metric_columns {
            for m in Metric::ALL.into_iter().filter(|m| !m.added_later()) {
                self.col(m.name())?;
            }
        }
        let sweep_cols: Option<Vec<usize>> = sweep_keys
            .iter()
            .map(|k| self.headers.iter().position(|h| h == k))
            .collect();
        self.records
            .iter()
            .map(|record| {
                let mut row: R = self.deserialize(record, &|name| {
                    fields::<R>().contains(&name)
                        || (metric_columns && Metric::ALL.iter().any(|m| m.name() == name))
                })?;
                if let Some(cols) = &sweep_cols {
                    *row.sweep_mut() = cols.iter().map(|&c| record[c].to_string()).collect();
                }
                Ok(row)
            })
            .collect()
    }

    /// The metric columns of every record, in record order (NaN for an empty cell).
    pub(super) fn metric_columns(&self) -> Result<Vec<PerMetric<f64>>> {
        self.records
            .iter()
            .map(|record| {
                let MetricColumns(values) =
                    self.deserialize(record, &|name| Metric::ALL.iter().any(|m| m.name() == name))?;
                Ok(PerMetric::from_fn(|m| values[m].unwrap_or(f64::NAN)))
            })
            .collect()
    }

    /// One record through serde, by header names; a bad cell names its line and column.
    /// `reads` tells the columns that the type reads, to name the cell of a refusal that serde
    /// does not place (a number that is not finite, a layer number out of range).
    pub(super) fn deserialize<T: serde::de::DeserializeOwned>(
        &self,
        record: &csv::StringRecord,
        reads: &dyn Fn(&str) -> bool,
    ) -> Result<T> {
        record.deserialize(Some(&self.headers)).map_err(|e| {
            let not_finite = || {
                (0..record.len()).find(|&c| {
                    reads(self.headers.get(c).unwrap_or(""))
                        && record[c].parse::<f64>().is_ok_and(|x| !x.is_finite())
                })
            };
            // Nor does it place a layer number out of range (`rows::layer_number`).
            let not_a_layer = || {
                let c = self.headers.iter().position(|h| h == "layer")?;
                let n = record.get(c)?.parse::<u32>().ok()?;
                (!(1..=crate::sim::MAX_LAYERS as u32).contains(&n)).then_some(c)
            };
            let message = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => {
                    match (err.field().map(|c| c as usize))
                        .or_else(not_finite)
                        .or_else(not_a_layer)
                    {
                        Some(c) => {
                            format!(
                                "column {} (`{}`): cannot read {:?}: {}",
                                c + 1,
                                self.headers.get(c).unwrap_or("?"),
                                record.get(c).unwrap_or(""),
                                err.kind()
                            )
                        }
                        None => err.kind().to_string(),
                    }
                }
                _ => e.to_string(),
            };
            self.record_error(record, &message)
        })
    }
}
