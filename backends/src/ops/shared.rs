//! Ops kept for reuse, one per descriptor and types, up to [`KEPT_MAX`] of them.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

/// The most ops kept at once. The backward pass of a `_` op applied to Burn tensors keeps one
/// op per count it sees (each is the gradient's op with its count written), and Burn tensors
/// of a new layout one copy op each: past this many, the one used longest ago is let go (an
/// operation in Burn's stream that still holds it keeps it alive until it has run). Made
/// again, it waits on its first launch once more.
pub(crate) const KEPT_MAX: usize = 1024;

/// One kept op, with its descriptor and when it was last asked for.
struct Entry {
    desc: Box<dyn Any + Send + Sync>,
    op: Arc<dyn Any + Send + Sync>,
    used: u64,
}

/// Kept ops by the hash of their types and descriptor, each bucket holding the (rare) ones
/// whose hashes meet.
#[derive(Default)]
struct Kept {
    buckets: HashMap<u64, Vec<Entry>>,
    len: usize,
    clock: u64,
}

impl Kept {
    /// Lets go of the entry used longest ago.
    fn evict_oldest(&mut self) {
        let oldest = self
            .buckets
            .iter()
            .flat_map(|(&key, bucket)| bucket.iter().enumerate().map(move |(i, e)| (e.used, key, i)))
            .min();
        if let Some((_, key, i)) = oldest {
            let bucket = self.buckets.get_mut(&key).expect("the key was just found");
            bucket.swap_remove(i);
            if bucket.is_empty() {
                self.buckets.remove(&key);
            }
            self.len -= 1;
        }
    }
}

impl Kept {
    /// The op kept for `desc` (of type `O`), or the one `make` makes, kept; past `max` kept
    /// ops, the one used longest ago is let go.
    fn get<D, O>(&mut self, desc: &D, make: impl FnOnce() -> O, max: usize) -> Arc<O>
    where
        D: PartialEq + Hash + Clone + Send + Sync + 'static,
        O: Send + Sync + 'static,
    {
        let mut hasher = DefaultHasher::new();
        (TypeId::of::<(D, O)>(), desc).hash(&mut hasher);
        let key = hasher.finish();
        self.clock += 1;
        let now = self.clock;
        let bucket = self.buckets.entry(key).or_default();
        let found = bucket.iter_mut().find(|e| e.op.is::<O>() && e.desc.downcast_ref::<D>() == Some(desc));
        if let Some(op) = found.and_then(|e| {
            e.used = now;
            Arc::clone(&e.op).downcast::<O>().ok()
        }) {
            return op;
        }
        let op = Arc::new(make());
        bucket.push(Entry { desc: Box::new(desc.clone()), op: op.clone(), used: now });
        self.len += 1;
        if self.len > max {
            self.evict_oldest();
        }
        op
    }
}

/// The op for `desc`, made by `make` on first use and kept for the next call: those inside
/// Burn's fusion stream (an operation in the stream owns what it runs) and those another op
/// runs for a part of its work (a chain's scatter stage). A new op per call would wait on its
/// first launch every time. Found by hash, so finding one costs the same whatever was kept
/// before it; at most [`KEPT_MAX`] are kept, and making one past that many also scans them
/// for the one to let go (about a microsecond, next to the op's planning).
pub(crate) fn shared<D, O>(desc: &D, make: impl FnOnce() -> O) -> Arc<O>
where
    D: PartialEq + Hash + Clone + Send + Sync + 'static,
    O: Send + Sync + 'static,
{
    static OPS: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);
    OPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(desc, make, KEPT_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_op_used_longest_ago_is_let_go_past_the_limit() {
        let mut kept = Kept::default();
        let made = Cell::new(0);
        let mut get = |desc: u64| {
            kept.get(
                &desc,
                || {
                    made.set(made.get() + 1);
                    desc * 10
                },
                4,
            )
        };
        let first = get(0);
        assert!(Arc::ptr_eq(&first, &get(0)), "found again, not made again");
        for desc in 1..4 {
            assert_eq!(*get(desc), desc * 10);
        }
        assert_eq!(made.get(), 4);
        // 0 is used again, so 1 is now the oldest: the next new one lets it go.
        get(0);
        get(4);
        get(0);
        assert_eq!(made.get(), 5, "0 was kept");
        get(1);
        assert_eq!(made.get(), 6, "1 was let go and made again");
        // A let-go op still held elsewhere lives on: 2 goes next, `held` keeps its value.
        let held = get(3);
        get(5);
        get(6);
        assert_eq!(*held, 30);
        // Another type of op under an equal descriptor is another op.
        let other: Arc<&str> = kept.get(&0u64, || "zero", 4);
        assert_eq!(*other, "zero");
    }
}
