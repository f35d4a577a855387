//! Ops kept for the process, one per descriptor and types.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{LazyLock, Mutex};

/// Kept ops by the hash of their types and descriptor, each bucket holding the (rare) ones
/// whose hashes meet.
type Kept = HashMap<u64, Vec<&'static (dyn Any + Send + Sync)>>;

/// Ops one per descriptor and types, kept for the process (as CubeCL keeps their kernels):
/// those inside Burn's fusion stream (an operation in the stream owns what it runs) and those
/// another op runs for a part of its work (a chain's scatter stage). A new op per call would
/// wait on its first launch every time.
///
/// A `_` op keeps one op per count it was applied at (each is the op with its count written),
/// so a server that sees thousands of counts keeps thousands: they are found by their hash,
/// so a call costs the same whatever was kept before it.
pub(crate) fn shared<D, O>(desc: &D, make: impl FnOnce() -> O) -> &'static O
where
    D: PartialEq + Hash + Clone + Send + Sync + 'static,
    O: Send + Sync + 'static,
{
    static OPS: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);
    let mut hasher = DefaultHasher::new();
    (TypeId::of::<(D, O)>(), desc).hash(&mut hasher);
    let key = hasher.finish();
    let mut ops = OPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let bucket = ops.entry(key).or_default();
    let found = bucket.iter().find_map(|e| e.downcast_ref::<(D, O)>().filter(|(d, _)| d == desc));
    if let Some((_, op)) = found {
        return op;
    }
    let entry: &'static (D, O) = Box::leak(Box::new((desc.clone(), make())));
    bucket.push(entry);
    &entry.1
}
