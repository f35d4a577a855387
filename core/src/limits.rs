//! The limits every layer shares: how many dimensions, words, index reads a descriptor or a
//! kernel may have, and the stand-in a `_` count is planned with. Plain constants, imported by
//! the rules, the messages and the kernels alike.

/// The most index reads one kernel makes per output element: one per gather of a fused chain,
/// one per component of a GatherND tuple (at most the data's rank).
pub const MAX_READS: usize = 8;

/// The most gathers a chain has: its fused kernel binds one index buffer per gather.
pub const MAX_GATHERS: usize = 4;

/// The most 32-bit words a buffer may span: kernels address buffers with 32-bit offsets and
/// round a buffer up to whole vectors of up to four words.
pub const MAX_WORDS: usize = u32::MAX as usize - 3;

/// The count a `_` descriptor is checked and planned with: not 1 (size-1 dimensions drop out
/// of a plan), and checked against a second count, so the value plays no part in the kernel.
pub const PLACEHOLDER: usize = 2;

/// A chain stage's received size that is the `_` count, in [`crate::RuleError::Stage`]'s `input`:
/// shown as `_`.
pub const COUNT_SHOWN: usize = usize::MAX;
