//! The journal: one JSON line per finished work unit, appended and flushed as units finish.
//!
//! It is what makes a run resumable (`--resume` skips the units already in it), shardable
//! (each shard writes its own) and mergeable (`jitterlab merge` reads several). Its first
//! line is a header with a fingerprint of the resolved scenario, so units of different
//! scenarios are never mixed. A line cut short by a crash is ignored on reading and cut off
//! before appending, so a run resumed twice still reads whole. When a run is complete, the
//! journal is rewritten in unit order, so its bytes too are independent of thread count and
//! sharding.

use crate::sim::hedge::HedgeCounts;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Plan, Shard, Unit, checks};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::folder::names::JOURNAL;
use crate::rng::mix_key;
use crate::sim::passage::Passage;
use crate::sim::recovery::Recovery;
use crate::sim::{Counts, LayerResult, LayerSeries, RunResult, TimeSeries};

/// The first line of a journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Format marker and version.
    pub jitterlab_journal: u32,
    /// Hash of the resolved scenario (with its sweep).
    pub fingerprint: String,
    /// Units in the whole run.
    pub units: usize,
    /// The shard whose units the journal holds (`"I/N"`); absent for the whole run, so that a
    /// complete run's journal is the same whether it was sharded and merged or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

impl Header {
    /// The header of the journal of `shard`'s units of the work `self` names.
    pub fn for_shard(&self, shard: Shard) -> Header {
        Header {
            shard: (!shard.is_all()).then(|| format!("{}/{}", shard.index, shard.count)),
            ..self.clone()
        }
    }

    /// The shard whose units the journal holds.
    pub fn shard(&self) -> Result<Shard, String> {
        match &self.shard {
            None => Ok(Shard::ALL),
            Some(text) => Shard::parse(text).map_err(|_| {
                format!("`shard` is {text:?}: a shard I/N with 0 <= I < N, as `run --shard` writes")
            }),
        }
    }

    /// True when both name the same work (scenario, options, units), whatever their shards.
    fn same_work(&self, other: &Header) -> bool {
        (self.jitterlab_journal, &self.fingerprint, self.units)
            == (other.jitterlab_journal, &other.fingerprint, other.units)
    }
}

/// Everything the output files need from one finished unit. A line with a key it does not
/// know is refused (a renamed `layers` would otherwise read as a unit of no layers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Recovery from the trigger, for runs with one (absent from the line otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// The server's state and first passages (absent from the line in a run without them:
    /// live mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage: Option<Passage>,
    /// The time series (replication 0 only).
    pub series: Option<TimeSeries>,
    /// Each layer of a chain of services, layer 1 first (absent from the line for one
    /// server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerRecord>,
    /// What hedged requests measured (absent from the line for a run that retries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hedging: Option<HedgeCounts>,
}

/// What one layer of a chain measured in one unit (see [`LayerResult`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerRecord {
    /// The requests into the layer and their outcomes, as [`UnitRecord::counts`].
    #[serde(with = "counts_array")]
    pub counts: Counts,
    /// Attempts that reached the layer.
    pub arrivals: u64,
    /// See [`LayerResult::busy_share`].
    pub busy_share: f64,
    /// See [`LayerResult::wasted_work_share`].
    pub wasted_work_share: f64,
    /// See [`LayerResult::latency_mean_ms`] (none when nothing succeeded).
    pub latency_mean_ms: Option<f64>,
    /// Attempts reaching the layer per bucket (replication 0 only, as [`UnitRecord::series`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<LayerSeries>,
}

impl From<&LayerResult> for LayerRecord {
    fn from(l: &LayerResult) -> LayerRecord {
        LayerRecord {
            counts: l.counts,
            arrivals: l.arrivals,
            busy_share: l.busy_share,
            wasted_work_share: l.wasted_work_share,
            latency_mean_ms: l.latency_mean_ms.is_finite().then_some(l.latency_mean_ms),
            series: l.series.clone(),
        }
    }
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
            latency_us: r.latency_buckets(),
            recovery: r.recovery,
            passage: r.passage,
            series: r.series.clone(),
            layers: r.layers.iter().map(LayerRecord::from).collect(),
            hedging: r.hedging,
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
    /// What this writer wrote, for [`finalize`] to reuse instead of encoding it again.
    written: Written,
}

/// The lines a [`JournalWriter`] appended: the unit of each and its JSON text, and whether the
/// file held nothing else (it began with this writer's header).
#[derive(Debug, Default)]
pub struct Written {
    alone: bool,
    lines: Vec<(usize, String)>,
}

/// One record as its journal line, encoded ahead of [`JournalWriter::append_line`].
pub struct JournalLine {
    unit: usize,
    text: String,
}

impl JournalLine {
    /// `record` encoded as a journal line.
    pub fn of(record: &UnitRecord) -> Result<JournalLine> {
        let text =
            serde_json::to_string(record).map_err(|e| Error::io(Path::new(JOURNAL), e.into()))?;
        Ok(JournalLine {
            unit: record.unit,
            text,
        })
    }
}

impl JournalWriter {
    /// Opens `dir/units.jsonl` for appending; a new (or `fresh`) journal starts with `header`.
    pub fn open(dir: &Path, header: &Header, fresh: bool) -> Result<JournalWriter> {
        let path = dir.join(JOURNAL);
        // Only ever a regular file of its own: never a link followed, never a FIFO that
        // would block the open.
        if let Ok(meta) = path.symlink_metadata()
            && !meta.is_file()
        {
            return Err(Error::ResultFolder {
                path,
                message: "is not a regular file (a link, a FIFO, a folder); jitterlab writes its journal only as a file of its own: remove it".into(),
            });
        }
        // A run killed mid-write leaves its last line cut short (`read` skips it): appending
        // starts after the last complete line, or the next record would be glued to it.
        let keep = if path.exists() && !fresh {
            let text = crate::input::read(&path, crate::input::JOURNAL)?;
            text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
        } else {
            0
        };
        let exists = keep > 0;
        let mut options = OpenOptions::new();
        options
            .create(true)
            .append(exists)
            .write(true)
            .truncate(!exists);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options.open(&path).map_err(|e| Error::io(&path, e))?;
        if exists {
            file.set_len(keep as u64).map_err(|e| Error::io(&path, e))?;
        }
        let mut writer = JournalWriter {
            out: BufWriter::new(file),
            path,
            written: Written {
                alone: !exists,
                lines: Vec::new(),
            },
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
        let line = JournalLine::of(record)?;
        self.append_line(line)
    }

    /// Appends one record encoded beforehand and flushes it: threads that share the writer
    /// encode their records before taking its lock, and hold it only for the write.
    pub fn append_line(&mut self, line: JournalLine) -> Result<()> {
        self.write_line(&line.text)?;
        self.written.lines.push((line.unit, line.text));
        Ok(())
    }

    /// The lines written, once the writer is done.
    pub fn into_written(self) -> Written {
        self.written
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
/// The file is refused above [`crate::input::JOURNAL`].
pub fn read(dir: &Path) -> Result<(Header, Vec<UnitRecord>)> {
    let journal = Journal::read(dir)?;
    Ok((
        journal.header,
        journal.records.into_iter().map(|r| r.2).collect(),
    ))
}

/// Reads the journal of the work `expected` names (any shard of it) and checks every record
/// against `plan` (its unit, shard, point, strategy, replication, seed, counts,
/// layers, time series), so that a damaged or edited line is refused with its line and
/// column, never trusted. Returns the shard it holds with its records; `None` when the
/// journal is a jitterlab journal of other work (another scenario, other options).
pub fn read_checked(
    dir: &Path,
    expected: &Header,
    plan: &Plan,
) -> Result<Option<(Shard, Vec<UnitRecord>)>> {
    let journal = Journal::read(dir)?;
    if !journal.header.same_work(expected) {
        return Ok(None);
    }
    let shard = journal
        .header
        .shard()
        .map_err(|message| Error::ResultFolder {
            path: journal.path.clone(),
            message: format!("line 1: {message}"),
        })?;
    let units = plan.units();
    // The line of each unit's record: a unit is run once, so it is recorded once.
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for (line, span, r) in &journal.records {
        let text = &journal.text[span.clone()];
        journal.check(*line, text, r, plan, &units, shard)?;
        if let Some(first) = seen.insert(r.unit, *line) {
            return Err(journal.refusal(
                *line,
                text,
                "unit",
                format!(
                    "is {} again: line {first} holds that unit already, and a unit is run once",
                    r.unit
                ),
            ));
        }
    }
    Ok(Some((
        shard,
        journal.records.into_iter().map(|r| r.2).collect(),
    )))
}

/// True when `dir` holds a journal whose first line is a jitterlab journal header: the mark of
/// a result folder (every `run` and `merge` writes it before anything else runs).
pub fn is_journal(dir: &Path) -> bool {
    let path = dir.join(JOURNAL);
    // The header is one short line: read no more than a few of its size. A FIFO or a device
    // in its place is no journal, and is never opened (`input::open`).
    let Ok(file) = crate::input::open(&path) else {
        return false;
    };
    let mut first = String::new();
    let read = BufReader::new(file.take(4096)).read_line(&mut first);
    read.is_ok() && serde_json::from_str::<Header>(first.trim_end()).is_ok()
}

/// A journal as read: its text, header and records, each with its line number and span.
struct Journal {
    path: PathBuf,
    text: String,
    header: Header,
    records: Vec<(usize, std::ops::Range<usize>, UnitRecord)>,
}

impl Journal {
    fn read(dir: &Path) -> Result<Journal> {
        let path = dir.join(JOURNAL);
        let bad = |message: String| Error::ResultFolder {
            path: path.clone(),
            message,
        };
        let text = crate::input::read_text(&path, crate::input::JOURNAL).map_err(|e| match e {
            Error::Io { source, .. } => bad(format!(
                "no journal of finished units ({source}); is this a jitterlab result folder?"
            )),
            other => other,
        })?;
        let mut lines = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let end = start + line.trim_end_matches(['\n', '\r']).len();
            lines.push(start..end);
            start += line.len();
        }
        let first = lines.first().ok_or_else(|| {
            bad("is empty (0 bytes): a journal starts with its header line".into())
        })?;
        let header: Header = serde_json::from_str(&text[first.clone()]).map_err(|e| {
            // Say what the line holds when it is not JSON at all.
            let why = if first.is_empty() {
                "it is blank".to_string()
            } else if text.starts_with('\u{feff}') {
                "it starts with a byte-order mark (U+FEFF), which jitterlab never writes"
                    .to_string()
            } else if text[first.clone()].contains('\r') {
                "its lines end in a carriage return alone (CR); a journal's lines end in LF or CRLF"
                    .to_string()
            } else {
                json_message(&e)
            };
            bad(format!("line 1 is not a jitterlab journal header: {why}"))
        })?;
        let mut records = Vec::new();
        let count = lines.len();
        for (i, span) in lines.into_iter().enumerate().skip(1) {
            match serde_json::from_str::<UnitRecord>(&text[span.clone()]) {
                Ok(r) => records.push((i + 1, span, r)),
                // Only the last line may be cut short (a crash mid-write); anything else is
                // damage.
                Err(_) if i + 1 == count && !text.ends_with('\n') => {}
                Err(e) => {
                    return Err(bad(format!(
                        "line {}, column {}: {}",
                        i + 1,
                        e.column(),
                        json_message(&e)
                    )));
                }
            }
        }
        Ok(Journal {
            path,
            text,
            header,
            records,
        })
    }

    /// The refusal of the record on `line` (whose text is `text`) for its `field`, at the
    /// column where the field is written.
    fn refusal(&self, line: usize, text: &str, field: &str, message: String) -> Error {
        let column = text
            .find(&format!("\"{field}\""))
            .map_or(1, |b| text[..b].chars().count() + 1);
        Error::ResultFolder {
            path: self.path.clone(),
            message: format!("line {line}, column {column}: `{field}` {message}"),
        }
    }

    /// Checks one record (written on `line`, whose text is `text`) against the plan and the
    /// journal's `shard`.
    fn check(
        &self,
        line: usize,
        text: &str,
        r: &UnitRecord,
        plan: &Plan,
        units: &[Unit],
        shard: Shard,
    ) -> Result<()> {
        let refuse = |field: &str, message: String| Err(self.refusal(line, text, field, message));
        let Some(unit) = units.get(r.unit) else {
            return refuse(
                "unit",
                format!(
                    "is {}, but the scenario has {} units (0 to {})",
                    r.unit,
                    units.len(),
                    units.len().saturating_sub(1)
                ),
            );
        };
        let expected = [
            ("point", r.point as u64, unit.point as u64),
            ("strategy", r.strategy as u64, unit.strategy as u64),
            ("replication", r.replication.into(), unit.replication.into()),
            ("seed", r.seed, plan.seed),
        ];
        for (field, found, want) in expected {
            if found != want {
                return refuse(
                    field,
                    format!(
                        "is {found}, but unit {} of the scenario has {field} {want}",
                        r.unit
                    ),
                );
            }
        }
        if !shard.owns(r.unit) {
            return refuse(
                "unit",
                format!(
                    "is {}, which is not a unit of shard {}/{} (the journal's header says it holds that shard's units)",
                    r.unit, shard.index, shard.count
                ),
            );
        }
        let scenario = &plan.points[unit.point].scenario;
        if let Err((field, message)) = checks::record(r, unit, scenario) {
            return refuse(field, message);
        }
        Ok(())
    }
}

/// serde_json's message without its ` at line L column C` (the caller names the place).
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Rewrites the journal of a complete run in unit order (atomically).
///
/// `written` is what this run's [`JournalWriter`] appended: its lines are reused rather than
/// encoded again (a long run's journal is megabytes of JSON), and when they are the whole file
/// and already in unit order (one thread, no resume), the file is left as it is.
pub fn finalize(
    dir: &Path,
    header: &Header,
    records: &[UnitRecord],
    written: &Written,
) -> Result<()> {
    let path = dir.join(JOURNAL);
    if written.alone
        && written.lines.len() == records.len()
        && written
            .lines
            .iter()
            .zip(records)
            .all(|(w, r)| w.0 == r.unit)
    {
        return Ok(());
    }
    let lines: HashMap<usize, &str> = written
        .lines
        .iter()
        .map(|(unit, line)| (*unit, line.as_str()))
        .collect();
    // Streamed to the file: the journal of a large sweep is tens of megabytes, which built in
    // memory first cost more in fresh pages than the copying.
    let mut out = BufWriter::with_capacity(1 << 16, AtomicFile::create(&path)?);
    let io = |e: std::io::Error| Error::io(&path, e);
    serde_json::to_writer(&mut out, header).map_err(|e| io(e.into()))?;
    out.write_all(b"\n").map_err(io)?;
    for r in records {
        match lines.get(&r.unit) {
            Some(line) => out.write_all(line.as_bytes()).map_err(io)?,
            None => serde_json::to_writer(&mut out, r).map_err(|e| io(e.into()))?,
        }
        out.write_all(b"\n").map_err(io)?;
    }
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.commit().map(|_| ())
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
