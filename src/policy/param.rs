//! A parameter refused by a constructor: which field, its value, and what is allowed.
//!
//! The retry-storm mechanisms ([`super::throttle`], [`super::adaptive`] and
//! [`crate::sim::profile`]) validate their parameters with this small error rather than the
//! crate's scenario error, so that they stay self-contained; whoever reads them from a scenario
//! maps it there, prefixing the scenario key (`client.throttle.` + [`ParamError::field`]).

use std::fmt;

/// A parameter outside its allowed range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's name, as a scenario key would end: `k`, `size`, `rate[2]`.
    pub field: String,
    /// The refused value, as written.
    pub value: String,
    /// What is allowed, as a phrase: "a number of at least 1".
    pub allowed: String,
}

impl ParamError {
    /// `field` = `value` is refused; `allowed` says what would be accepted.
    pub fn new(
        field: impl Into<String>,
        value: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> ParamError {
        ParamError {
            field: field.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid `{}` = {}: expected {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ParamError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_field_value_and_range() {
        let e = ParamError::new("k", 0.5, "a number of at least 1");
        assert_eq!(
            e.to_string(),
            "invalid `k` = 0.5: expected a number of at least 1"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().contains("`k`"));
    }
}
