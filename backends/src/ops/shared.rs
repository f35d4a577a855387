//! Ops kept for the process, one per descriptor and types.

use std::any::Any;
use std::sync::Mutex;

/// Ops one per descriptor and types, kept for the process (as CubeCL keeps their kernels):
/// those inside Burn's fusion stream (an operation in the stream owns what it runs) and those
/// another op runs for a part of its work (a chain's scatter stage). A new op per call would
/// wait on its first launch every time.
pub(crate) fn shared<D, O>(desc: &D, make: impl FnOnce() -> O) -> &'static O
where
    D: PartialEq + Clone + Send + Sync + 'static,
    O: Send + Sync + 'static,
{
    static OPS: Mutex<Vec<&'static (dyn Any + Send + Sync)>> = Mutex::new(Vec::new());
    let mut ops = OPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let found = ops.iter().find_map(|e| e.downcast_ref::<(D, O)>().filter(|(d, _)| d == desc));
    if let Some((_, op)) = found {
        return op;
    }
    let entry: &'static (D, O) = Box::leak(Box::new((desc.clone(), make())));
    ops.push(entry);
    &entry.1
}
