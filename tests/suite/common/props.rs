//! What the property tests share: the device they run on, their case counts, the choices
//! proptest draws, and index values in any index type.

use proptest::prelude::*;
use stridex::{Device, IndexElement};

pub fn device() -> &'static Device {
    Device::default_device().expect("a device (scripts/install-vulkan.sh installs lavapipe)")
}

/// `PROPTEST_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A descriptor's choices: proptest draws them and shrinks a failure towards the smallest
/// descriptor that still fails (each choice towards 0); the data comes from the seed.
pub fn choices() -> impl Strategy<Value = (Vec<u64>, u64)> {
    (prop::collection::vec(any::<u64>(), 0..256), any::<u64>())
}

/// A generated index value in an index type (the generators keep it in range of the type).
pub trait FromI128: IndexElement {
    fn from_i128(v: i128) -> Self;
}

macro_rules! from_i128 {
    ($($t:ty),*) => {$(impl FromI128 for $t {
        fn from_i128(v: i128) -> Self {
            <$t>::try_from(v).expect("generated index fits its type")
        }
    })*};
}
from_i128!(i32, i64, u32, u64);
