//! What the binary shows a person: the progress bar of a run and the text of its answers. The
//! library returns data; these modules only present it, and name the library's options by
//! their flags ([`flag`], the runner's).

pub mod args;
pub mod live;
pub mod progress;
pub mod recommend;
pub mod table;

pub use jitterlab::runner::flag;

#[cfg(test)]
mod tests {
    use super::*;
    use jitterlab::error::Setting;

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
