//! Runtime errors: a broken rule, a bad buffer, a bad index, or a device that cannot run.

use std::fmt;
use stridex_core::{Operand, RuleError};

#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The descriptor breaks a rule (only descriptors built at run time can).
    Rule(RuleError),
    /// A buffer holds fewer elements than its layout needs (`1 + sum((size - 1) * stride)`).
    BufferTooShort { tensor: Operand, needed: usize, given: usize },
    /// A host buffer for a packed tensor holds more elements than the tensor has (a longer
    /// buffer would be read only in part, hiding a batch-size mistake).
    BufferTooLong { tensor: Operand, expected: usize, given: usize },
    /// A device buffer given to `launch` has fewer bytes than the kernel touches
    /// (`op.buffer_bytes(tensor)`).
    HandleTooSmall { tensor: Operand, needed: usize, given: usize },
    /// A device buffer given to `launch` was made by another device's client.
    ForeignHandle { tensor: Operand },
    /// A device buffer given to `launch` starts `offset` bytes into its memory, not a multiple
    /// of the device's `alignment` (CubeCL's `Handle::offset_start`).
    HandleMisaligned { tensor: Operand, offset: u64, alignment: u64 },
    /// [`crate::buffers::upload`] asked for a buffer larger than any op's (`max` bytes).
    UploadTooLarge { bytes: usize, max: usize },
    /// Under the `error` policy: the first index (row-major over the indices tensor) outside
    /// `[-s, s-1]`.
    IndexOutOfRange { position: Vec<usize>, value: i128, axis_size: usize },
    /// Under a scatter's `duplicates: error`: two index positions (indices coordinates) that
    /// name one destination.
    DuplicateIndex { first: Vec<usize>, second: Vec<usize> },
    /// No device of the requested kind can run kernels here.
    NoDevice(String),
    /// The device failed to compile or run the kernel.
    Device(String),
    /// The element type of a runtime descriptor does not match the Rust type used with it.
    TypeMismatch { tensor: Operand, declared: stridex_core::DType, used: stridex_core::DType },
    /// A chain's gathers declare these index types (stage order), but the op is used with others.
    IndexTypes { declared: Vec<stridex_core::DType>, used: Vec<stridex_core::DType> },
    /// A chain's `launch` was given a different number of index buffers than it has gathers.
    IndexBufferCount { expected: usize, given: usize },
    /// A Burn tensor does not match the op's descriptor (feature `burn`).
    BurnTensor { tensor: Operand, mismatch: String },
    /// An error of one stage of a chain (1-based): a bad index buffer, or an index out of range.
    InStage { stage: usize, error: Box<Error> },
    /// A host buffer for a tensor whose leading size is `_` is not a whole number of rows of
    /// `row` elements (the count is its length divided by `row`).
    PartialRow { tensor: Operand, given: usize, row: usize },
    /// A call that needs the count of an op whose leading size is `_` was made without one
    /// (`output_shape`, `buffer_bytes`, `launch`): use its `_at(count, ..)` form.
    CountNeeded { call: &'static str },
    /// A Burn tensor that requires gradients was given to an op that has no backward pass
    /// (`op` names it; `why` is the rule its gradient would break).
    NoGradient { op: String, why: String },
    /// A chain that ends in a scatter writes into its destination (the stage's `into`), which
    /// `call` has no place for: `run_into` and `launch` take it.
    DestinationNeeded { call: &'static str },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rule(e) => e.fmt(f),
            Error::BufferTooShort { tensor, needed, given } => write!(
                f,
                "buffer too short: `{tensor}` needs at least {needed} elements for its layout, but {given} were given"
            ),
            Error::BufferTooLong { tensor, expected, given } => write!(
                f,
                "buffer too long: `{tensor}` is packed with {expected} elements, but {given} were given; pass exactly {expected} (a strided layout may take a longer buffer)"
            ),
            Error::HandleTooSmall { tensor, needed, given } => write!(
                f,
                "device buffer too small: `{tensor}` needs {needed} bytes (whole 32-bit words, see `buffer_bytes`), but its handle has {given}"
            ),
            Error::ForeignHandle { tensor } => write!(
                f,
                "device buffer of another device: `{tensor}` was made by another client than the one given to `launch`; make it with that client (or launch with its own)"
            ),
            Error::HandleMisaligned { tensor, offset, alignment } => write!(
                f,
                "device buffer misaligned: `{tensor}` starts {offset} bytes into its memory, which the device binds only at multiples of {alignment} bytes; give a handle whose `offset_start` is such a multiple"
            ),
            Error::UploadTooLarge { bytes, max } => write!(
                f,
                "upload of {bytes} bytes: no op's buffer is larger than {max} bytes; size it with `op.buffer_bytes(..)`"
            ),
            Error::IndexOutOfRange { position, value, axis_size } => write!(
                f,
                "index out of range: indices{} = {value} is outside [-{axis_size}, {}] (out_of_range: error)",
                stridex_core::dims::list(position),
                *axis_size as i128 - 1
            ),
            Error::DuplicateIndex { first, second } => write!(
                f,
                "duplicate index: indices{} and indices{} name the same destination (duplicates: error); remove one, or leave `duplicates` out to keep the last update",
                stridex_core::dims::list(first),
                stridex_core::dims::list(second)
            ),
            Error::NoDevice(why) => write!(f, "no device: {why}"),
            Error::Device(why) => write!(f, "device error: {why}"),
            Error::TypeMismatch { tensor, declared, used } => write!(
                f,
                "type mismatch: `{tensor}` is declared {declared} but used with {used}"
            ),
            Error::IndexTypes { declared, used } => write!(
                f,
                "type mismatch: the chain's gathers declare index types ({}) but the op names ({})",
                names(declared),
                names(used)
            ),
            Error::IndexBufferCount { expected, given } => write!(
                f,
                "the chain reads {expected} index tensor(s) (one per gather, then its scatter's), so it takes {expected} index buffer(s) in stage order, but {given} were given"
            ),
            Error::InStage { stage, error } => write!(f, "stage {stage}: {error}"),
            Error::BurnTensor { tensor, mismatch } => write!(f, "Burn tensor for `{tensor}`: {mismatch}"),
            Error::PartialRow { tensor, given, row } => write!(
                f,
                "buffer length: `{tensor}` has a `_` leading size, read from its length as whole rows of {row} elements, but {given} elements are {} rows and {} over; pass a multiple of {row}",
                given / row,
                given % row
            ),
            Error::CountNeeded { call } => write!(
                f,
                "the op's leading size is `_` (known at run time), so `{call}` needs the count: call `{call}_at(count, ..)`"
            ),
            Error::DestinationNeeded { call } => write!(
                f,
                "the chain ends in a scatter, which writes into its `into` tensor, and `{call}` has none: call `run_into` with the destination's values (updated in place) or `launch` with its device buffer as the output"
            ),
            Error::NoGradient { op, why } => write!(
                f,
                "no backward pass: the {op} is applied to a Burn tensor that requires gradients, but its gradient cannot be computed ({why}); apply it to a tensor that does not require gradients (`set_require_grad(false)`), or change the descriptor as the rule says"
            ),
        }
    }
}

fn names(types: &[stridex_core::DType]) -> String {
    types.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl std::error::Error for Error {}

impl From<RuleError> for Error {
    fn from(e: RuleError) -> Error {
        Error::Rule(e)
    }
}
