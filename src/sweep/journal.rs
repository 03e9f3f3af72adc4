//! The journal: one JSON line per finished work unit, appended and flushed as units finish.
//!
//! It is what makes a run resumable (`--resume` skips the units already in it), shardable
//! (each shard writes its own) and mergeable (`jitterlab merge` reads several). Its first
//! line is a header with a fingerprint of the resolved scenario, so units of different
//! scenarios are never mixed. A line cut short by a crash is ignored on reading and cut off
//! before appending, so a run resumed twice still reads whole. When a run is complete, the
//! journal is rewritten in unit order, so its bytes too are independent of thread count and
//! sharding.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Unit;
use crate::atomic::write_atomic;
use crate::error::{Error, Result};
use crate::rng::mix_key;
use crate::sim::{Counts, RunResult, TimeSeries};

/// The journal's file name in a result folder.
pub const JOURNAL: &str = "units.jsonl";

/// The first line of a journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Format marker and version.
    pub jitterlab_journal: u32,
    /// Hash of the resolved scenario (with its sweep).
    pub fingerprint: String,
    /// Units in the whole run.
    pub units: usize,
}

/// Everything the output files need from one finished unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitRecord {
    /// Unit index.
    pub unit: usize,
    /// Point index.
    pub point: usize,
    /// Strategy index within the point.
    pub strategy: usize,
    /// Replication.
    pub replication: u32,
    /// Master seed.
    pub seed: u64,
    /// Request outcome counts (stored as the array `[requests, attempts, succeeded, failed,
    /// gave_up_attempts, gave_up_deadline, gave_up_budget, rejected_by_breaker, unfinished,
    /// throttled]`; a journal written before `throttled` existed has 9 and reads it as 0).
    #[serde(with = "counts_array")]
    pub counts: Counts,
    /// Peak attempts per bucket.
    pub peak_arrivals: u32,
    /// Peak retries per bucket.
    pub peak_retries: u32,
    /// Time of the last final outcome, ns.
    pub makespan_ns: u64,
    /// See [`RunResult::server_busy_share`].
    pub server_busy_share: f64,
    /// See [`RunResult::wasted_work_share`].
    pub wasted_work_share: f64,
    /// See [`RunResult::retry_after_share`].
    pub retry_after_share: f64,
    /// Events processed.
    pub events: u64,
    /// Successes by attempt number (index 0 = first attempt).
    pub by_attempt: Vec<u64>,
    /// Exact mean latency of succeeded requests in ms (none when nothing succeeded).
    pub latency_mean_ms: Option<f64>,
    /// Latency histogram of succeeded requests as `(microseconds, count)` pairs, ascending;
    /// the value is the highest equivalent of its HDR bucket.
    pub latency_us: Vec<(u64, u64)>,
    /// The time series (replication 0 only).
    pub series: Option<TimeSeries>,
}

impl UnitRecord {
    /// The record of a finished run.
    pub fn new(unit: Unit, seed: u64, r: &RunResult) -> UnitRecord {
        UnitRecord {
            unit: unit.index,
            point: unit.point,
            strategy: unit.strategy,
            replication: unit.replication,
            seed,
            counts: r.counts,
            peak_arrivals: r.peak_arrivals,
            peak_retries: r.peak_retries,
            makespan_ns: r.makespan.as_nanos(),
            server_busy_share: r.server_busy_share,
            wasted_work_share: r.wasted_work_share,
            retry_after_share: r.retry_after_share,
            events: r.events,
            by_attempt: r.by_attempt.clone(),
            latency_mean_ms: r.latency_mean_ms.is_finite().then_some(r.latency_mean_ms),
            latency_us: r
                .latency_us
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
            series: r.series.clone(),
        }
    }

    /// Events processed by the unit.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The latency at quantile `q` (0..=1) of the recorded histogram: the smallest recorded
    /// value with at least `ceil(q * n)` values at or below it (nearest rank), as HDR reports
    /// it (the highest value of its bucket); `None` when nothing succeeded.
    pub fn latency_quantile_us(&self, q: f64) -> Option<u64> {
        let total: u64 = self.latency_us.iter().map(|p| p.1).sum();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for &(value, count) in &self.latency_us {
            seen += count;
            if seen >= rank {
                return Some(value);
            }
        }
        self.latency_us.last().map(|p| p.0)
    }
}

/// The journal's form of [`Counts`]: a JSON array in a fixed order, as the first journals
/// wrote it, so those stay readable.
mod counts_array {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::sim::Counts;

    /// The counters in array order.
    const ORDER: [fn(&mut Counts) -> &mut u64; 10] = [
        |c| &mut c.requests,
        |c| &mut c.attempts,
        |c| &mut c.succeeded,
        |c| &mut c.failed,
        |c| &mut c.gave_up_attempts,
        |c| &mut c.gave_up_deadline,
        |c| &mut c.gave_up_budget,
        |c| &mut c.rejected_by_breaker,
        |c| &mut c.unfinished,
        |c| &mut c.throttled,
    ];

    pub fn serialize<S: Serializer>(c: &Counts, s: S) -> Result<S::Ok, S::Error> {
        let mut c = *c;
        ORDER.map(|field| *field(&mut c)).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Counts, D::Error> {
        let values = Vec::<u64>::deserialize(d)?;
        if !(ORDER.len() - 1..=ORDER.len()).contains(&values.len()) {
            return Err(serde::de::Error::invalid_length(
                values.len(),
                &"9 or 10 counts",
            ));
        }
        let mut c = Counts::default();
        for (field, value) in ORDER.iter().zip(values) {
            *field(&mut c) = value;
        }
        Ok(c)
    }
}

/// Hashes the resolved scenario text into the journal's fingerprint.
pub fn fingerprint(resolved: &str) -> String {
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for chunk in resolved.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = mix_key(h, &[u64::from_le_bytes(word)]);
    }
    format!("{h:016x}")
}

/// Appends records to a journal, flushing each line.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl JournalWriter {
    /// Opens `dir/units.jsonl` for appending; a new (or `fresh`) journal starts with `header`.
    pub fn open(dir: &Path, header: &Header, fresh: bool) -> Result<JournalWriter> {
        let path = dir.join(JOURNAL);
        // A run killed mid-write leaves its last line cut short (`read` skips it): appending
        // starts after the last complete line, or the next record would be glued to it.
        let keep = if path.exists() && !fresh {
            let text = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
        } else {
            0
        };
        let exists = keep > 0;
        let file = OpenOptions::new()
            .create(true)
            .append(exists)
            .write(true)
            .truncate(!exists)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        if exists {
            file.set_len(keep as u64).map_err(|e| Error::io(&path, e))?;
        }
        let mut writer = JournalWriter {
            out: BufWriter::new(file),
            path,
        };
        if !exists {
            let line =
                serde_json::to_string(header).map_err(|e| Error::io(&writer.path, e.into()))?;
            writer.write_line(&line)?;
        }
        Ok(writer)
    }

    /// Appends one record and flushes it.
    pub fn append(&mut self, record: &UnitRecord) -> Result<()> {
        let line = serde_json::to_string(record).map_err(|e| Error::io(&self.path, e.into()))?;
        self.write_line(&line)
    }

    fn write_line(&mut self, line: &str) -> Result<()> {
        let path = &self.path;
        self.out
            .write_all(line.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        self.out.write_all(b"\n").map_err(|e| Error::io(path, e))?;
        self.out.flush().map_err(|e| Error::io(path, e))
    }
}

/// Reads a journal: its header and every complete record (a cut-short last line is skipped).
pub fn read(dir: &Path) -> Result<(Header, Vec<UnitRecord>)> {
    let path = dir.join(JOURNAL);
    let file = File::open(&path).map_err(|e| Error::ResultFolder {
        path: path.clone(),
        message: format!("no journal of finished units ({e}); is this a jitterlab result folder?"),
    })?;
    let mut lines = BufReader::new(file).lines();
    let bad = |message: String| Error::ResultFolder {
        path: path.clone(),
        message,
    };
    let first = lines
        .next()
        .ok_or_else(|| bad("empty journal".into()))?
        .map_err(|e| Error::io(&path, e))?;
    let header: Header = serde_json::from_str(&first)
        .map_err(|e| bad(format!("line 1 is not a journal header: {e}")))?;
    let mut records = Vec::new();
    let mut lines = lines.peekable();
    let mut number = 1;
    while let Some(line) = lines.next() {
        number += 1;
        let line = line.map_err(|e| Error::io(&path, e))?;
        match serde_json::from_str::<UnitRecord>(&line) {
            Ok(r) => records.push(r),
            // Only the last line may be cut short (a crash mid-write); anything else is damage.
            Err(_) if lines.peek().is_none() => {}
            Err(e) => return Err(bad(format!("line {number}: {e}"))),
        }
    }
    Ok((header, records))
}

/// Rewrites the journal of a complete run in unit order (atomically).
pub fn finalize(dir: &Path, header: &Header, records: &[UnitRecord]) -> Result<()> {
    let path = dir.join(JOURNAL);
    let mut text = serde_json::to_string(header).map_err(|e| Error::io(&path, e.into()))?;
    text.push('\n');
    for r in records {
        text.push_str(&serde_json::to_string(r).map_err(|e| Error::io(&path, e.into()))?);
        text.push('\n');
    }
    write_atomic(&path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the first journals wrote it, counts as a plain array.
    const LINE: &str = r#"{"unit":3,"point":0,"strategy":1,"replication":1,"seed":11,"counts":[10,25,8,1,0,0,0,0,1,2],"peak_arrivals":7,"peak_retries":4,"makespan_ns":2500000,"server_busy_share":0.5,"wasted_work_share":0.0,"retry_after_share":0.0,"events":99,"by_attempt":[5,3],"latency_mean_ms":2.5,"latency_us":[[1000,4],[3000,4]],"series":null}"#;

    #[test]
    fn counts_are_named_in_memory_and_an_array_on_disk() {
        let r: UnitRecord = serde_json::from_str(LINE).unwrap();
        assert_eq!(
            r.counts,
            Counts {
                requests: 10,
                attempts: 25,
                succeeded: 8,
                failed: 1,
                unfinished: 1,
                throttled: 2,
                ..Counts::default()
            }
        );
        assert_eq!(serde_json::to_string(&r).unwrap(), LINE);
        // A journal from before `throttled` (9 counts) reads it as 0; fewer is an error.
        let old: UnitRecord = serde_json::from_str(&LINE.replace("0,0,1,2]", "0,0,1]")).unwrap();
        assert_eq!(old.counts.throttled, 0);
        assert_eq!(old.counts.unfinished, 1);
        assert!(serde_json::from_str::<UnitRecord>(&LINE.replace("0,0,1,2]", "0,1]")).is_err());
        assert!(serde_json::from_str::<UnitRecord>(&LINE.replace("1,2]", "1,2,3]")).is_err());
    }
}
