//! What the binary shows a person: the progress bar of a run and the text of its answers. The
//! library returns data; these modules only present it, and name the library's options by
//! their flags ([`flag`]).

pub mod live;
pub mod progress;
pub mod recommend;
pub mod table;

use jitterlab::error::Setting;

/// The command line's name of a library option that an error names ([`Setting`]): the
/// messages the binary prints say what to type.
pub fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::ResumeRun => "`jitterlab run ... --resume`",
        Setting::Out => "--out",
        Setting::Threads => "--threads",
        Setting::Shard => "--shard",
        Setting::Resume => "--resume",
        Setting::Force | Setting::ReplacePlot => "--force",
        Setting::DelaysPlot => "--plot",
        // A setting of a later library: named by its field until it has a flag here.
        other => other.field(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_flag() {
        for setting in Setting::ALL {
            assert_ne!(flag(setting), setting.field(), "{setting:?}");
        }
    }

    #[test]
    fn errors_name_flags_where_the_library_names_fields() {
        let e = jitterlab::Error::Interrupted;
        assert_eq!(
            e.to_string(),
            "interrupted; finished work is kept, continue with RunOptions::resume"
        );
        assert_eq!(
            e.naming(flag),
            "interrupted; finished work is kept, continue with --resume"
        );
    }
}
