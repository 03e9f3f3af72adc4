//! jitterlab's one integration-test binary; each module tests one area.

mod charts;
