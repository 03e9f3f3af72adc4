//! Warnings: a scenario that is valid but surely not what was meant. A fault window that
//! begins at or after the horizon never acts, and a `recovery.trigger` the run cannot measure
//! leaves the recovery columns empty; each is run as written, with a word on stderr.

use super::table::recovery::named_trigger;
use super::{Point, Scenario, ScenarioDoc, describe};
use crate::error::Result;
use crate::sim::recovery::measurable;

impl Scenario {
    /// What in this checked scenario can never have an effect.
    pub fn warnings(&self) -> Vec<String> {
        let horizon = self.model.horizon;
        let faults = self.model.faults.iter().enumerate();
        faults
            .filter(|(_, f)| f.start.as_nanos() >= horizon.as_nanos())
            .map(|(i, f)| {
                format!(
                    "faults[{i}] starts at {}, at or after the horizon ({horizon}): it never acts",
                    f.start
                )
            })
            .chain(self.unmeasured_trigger())
            .collect()
    }

    /// A trigger named by `recovery.trigger` (not one found from the faults or the load) from
    /// which no recovery can be measured: it starts in the first output bucket, or no whole
    /// `recovery.window` fits between its end and the horizon.
    fn unmeasured_trigger(&self) -> Option<String> {
        let m = &self.model;
        let (start, end) = named_trigger(m)?;
        if measurable(m.bucket, m.horizon, (start, end), m.recovery.window) {
            return None;
        }
        let why = match start.as_nanos() < m.bucket.as_nanos() {
            true => format!(
                "starts in the first output.bucket ({}), with nothing before it",
                m.bucket
            ),
            false => format!(
                "leaves fewer than two whole recovery.windows ({}) between its end and the horizon ({}), \
                 one to judge and the last, which is not judged",
                m.recovery.window, m.horizon
            ),
        };
        Some(format!(
            "recovery.trigger [{start}, {end}) {why}: no recovery is measured"
        ))
    }
}

impl ScenarioDoc {
    /// The warnings of every point, each once; with a sweep, the points it holds at when not
    /// all of them.
    pub fn warnings(&self) -> Result<Vec<String>> {
        Ok(Self::warnings_of(&self.points()?))
    }

    /// [`ScenarioDoc::warnings`] of points already checked ([`ScenarioDoc::points_until`]): a
    /// sweep of 100000 points takes seconds to check, once.
    pub fn warnings_of(points: &[Point]) -> Vec<String> {
        // Each warning with the points it holds at, in order of first appearance.
        let mut found: Vec<(String, Vec<usize>)> = Vec::new();
        for (p, point) in points.iter().enumerate() {
            for w in point.scenario.warnings() {
                match found.iter_mut().find(|(text, _)| *text == w) {
                    Some((_, at)) => at.push(p),
                    None => found.push((w, vec![p])),
                }
            }
        }
        found
            .into_iter()
            .map(|(w, at)| {
                if at.len() == points.len() {
                    return w;
                }
                let first = &points[at[0]];
                format!(
                    "{w} (at {} of {} sweep points, first at point {}: {})",
                    at.len(),
                    points.len(),
                    first.index,
                    describe(&first.values)
                )
            })
            .collect()
    }
}
