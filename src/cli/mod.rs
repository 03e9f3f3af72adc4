//! What the binary shows a person: the progress bar of a run and the text of its answers. The
//! library returns data; these modules only present it.

pub mod live;
pub mod progress;
pub mod recommend;
pub mod table;
